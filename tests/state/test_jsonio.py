"""state.jsonio against json itself: the same text out, the same values and errors in."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from state import jsonio

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),  # NaN and the infinities included: they go to json
    st.text(),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=5), inner, max_size=4),
        # keys json converts (numbers, booleans, None) go to json too
        st.dictionaries(st.one_of(st.integers(), st.booleans(), st.none()), inner, max_size=2),
    ),
    max_leaves=12,
)
options = st.fixed_dictionaries(
    {},
    optional={
        "indent": st.sampled_from([None, 0, 1, 2]),
        "ensure_ascii": st.booleans(),
        "sort_keys": st.booleans(),
        "separators": st.sampled_from([None, (",", ":"), (", ", ": ")]),
    },
)


def outcome(function, *args, **kwargs):
    try:
        return function(*args, **kwargs)
    except Exception as e:
        return type(e)


@given(values, options)
def test_dumps_is_json_dumps(value, kwargs):
    assert outcome(jsonio.dumps, value, **kwargs) == outcome(json.dumps, value, **kwargs)


@given(values, options)
def test_loads_reads_what_json_writes(value, kwargs):
    text = outcome(json.dumps, value, **kwargs)
    assume(isinstance(text, str))
    # compared as text: NaN is not equal to itself
    assert json.dumps(jsonio.loads(text)) == json.dumps(json.loads(text))


@given(st.one_of(st.text(), st.binary()))
def test_loads_of_anything_is_json_loads(data):
    theirs = outcome(json.loads, data)
    ours = outcome(jsonio.loads, data)
    if isinstance(theirs, type):
        assert ours is theirs
    else:
        assert json.dumps(ours) == json.dumps(theirs)


@pytest.mark.parametrize(
    "data",
    ['{"a": 1', "[1] [2]", "", "\ufeff{}", b"\xef\xbb\xbf{}", b"\xff", "{'a': 1}", "[1,]"],
)
def test_errors_and_oddities_are_json_s(data):
    theirs, ours = outcome(json.loads, data), outcome(jsonio.loads, data)
    assert (theirs == ours) if not isinstance(theirs, type) else (ours is theirs)
    if isinstance(theirs, type) and issubclass(theirs, json.JSONDecodeError):
        with pytest.raises(json.JSONDecodeError) as info:
            jsonio.loads(data)
        assert str(info.value) == str(outcome_message(data))


def outcome_message(data):
    try:
        json.loads(data)
    except Exception as e:
        return e
    raise AssertionError("json.loads accepted it")


def test_cycles_are_refused_like_json():
    cycle: list = []
    cycle.append(cycle)
    for indent in (None, 2):
        with pytest.raises(ValueError, match="Circular reference"):
            jsonio.dumps(cycle, indent=indent)


def test_plain_documents_never_import_json():
    code = (
        "import sys\nfrom state import jsonio\n"
        'doc = jsonio.loads(b\'{"a": [1, 2.5, null, true, "\\\\u00e9"], "b": {}}\')\n'
        "jsonio.dumps(doc, indent=2, ensure_ascii=False)\n"
        "jsonio.dumps(doc, sort_keys=True, separators=(',', ':'))\n"
        "assert 'json' not in sys.modules and 're' not in sys.modules, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
