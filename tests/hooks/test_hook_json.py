"""hooks/hook_json.py reads and writes exactly what `json` does with its defaults, over
generated values and texts, without importing `json` (the point of it: docs/design.md "Guard
speed")."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hooks import hook_json

REPO = Path(__file__).resolve().parents[2]
SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def same(a: object, b: object) -> bool:
    """Equal, NaN equal to NaN (json gives NaN for NaN)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@given(VALUES)
def test_dumps_is_json_dumps(value: object) -> None:
    assert hook_json.dumps(value) == json.dumps(value)


@given(VALUES, st.sampled_from(["", " ", "\n\t ", "\r\n"]))
def test_loads_reads_what_json_reads(value: object, pad: str) -> None:
    text = pad + json.dumps(value) + pad
    assert same(hook_json.loads(text), json.loads(text))


@given(st.text(max_size=40))
def test_loads_refuses_what_json_refuses(text: str) -> None:
    try:
        expected: object = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            hook_json.loads(text)
    else:
        assert same(hook_json.loads(text), expected)


def test_circular_and_unknown_values_are_refused_as_json_refuses() -> None:
    loop: list[object] = []
    loop.append(loop)
    for bad, error in ((loop, ValueError), ({"a": object()}, TypeError)):
        with pytest.raises(error):
            json.dumps(bad)
        with pytest.raises(error):
            hook_json.dumps(bad)


def test_a_guard_call_imports_neither_json_nor_re() -> None:
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); from hooks import guard_hook, hookstate;"
        "print(sorted({'json', 're'} & set(sys.modules)))"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-I", "-c", probe, str(REPO)], capture_output=True, text=True
    )
    assert done.stdout.strip() == "[]", done.stderr
