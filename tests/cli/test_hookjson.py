"""The hooks' JSON (cli/hookjson.py) reads and writes exactly what the json module does."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli import hookjson

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=VALUES)
def test_values_round_trip_as_json_writes_them(value):
    assert hookjson.dumps(value) == json.dumps(value)
    assert hookjson.loads(json.dumps(value)) == value
    assert hookjson.loads(" \n" + json.dumps(value, indent=1) + "\t") == value


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet='{}[]",:0123456789.eE+-truefalsn \t\n\\u"x', max_size=30))
def test_any_text_is_read_or_refused_as_json_does(text):
    def outcome(loads):
        try:
            return ("value", json.dumps(loads(text)))
        except ValueError:
            return ("error",)

    assert outcome(hookjson.loads) == outcome(json.loads)


@pytest.mark.parametrize("text", ["", "{} x", "[1,]", '{"a" 1}', "\ufeff{}", "[" * 100_000])
def test_broken_text_raises_what_json_raises(text):
    with pytest.raises((ValueError, RecursionError)):
        hookjson.loads(text)
