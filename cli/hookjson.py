"""JSON for the hooks, without `import json`: that module compiles regular expressions at
import (json.decoder, json.encoder) and costs the guard ~8 ms of its ~25 ms budget per call.

`loads` drives CPython's own C scanner (`_json.make_scanner`, what json.loads runs) and `dumps`
writes the few shapes the hooks print with `_json`'s string encoder; where `_json` is missing
(another Python), and to report a broken text, the json module is used. Errors are json's
(ValueError, RecursionError).
"""

from __future__ import annotations

try:
    import _json
except ImportError:  # pragma: no cover - every CPython has it
    _json = None  # type: ignore[assignment]

_SPACE = " \t\n\r"


class _Context:
    """What the C scanner reads from a JSONDecoder: plain values, no hooks."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return float(name.replace("Infinity", "inf"))


def loads(text: str):
    if _json is None:  # pragma: no cover
        from json import loads as json_loads

        return json_loads(text)
    scan = _json.make_scanner(_Context())  # type: ignore[arg-type]
    start = _skip_space(text, 0)
    try:
        value, stop = scan(text, start)
    except (StopIteration, SystemError):
        # the scanner reports errors through json.decoder, which must be imported for that
        # (else SystemError): let json itself read the broken text and say what is wrong
        from json import loads as json_loads

        return json_loads(text)
    if _skip_space(text, stop) != len(text):
        raise ValueError(f"Extra data at {stop}")
    return value


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in _SPACE:
        i += 1
    return i


def dumps(value) -> str:
    """ASCII JSON with json.dumps's separators, for dicts, lists, strings, numbers, bools."""
    if isinstance(value, str):
        return _string(value)
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        special = {"inf": "Infinity", "-inf": "-Infinity", "nan": "NaN"}
        return special.get(repr(value), float.__repr__(value))
    if isinstance(value, dict):
        items = (f"{_string(str(k))}: {dumps(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(map(dumps, value)) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def _string(text: str) -> str:
    if _json is None:  # pragma: no cover
        from json import dumps as json_dumps

        return json_dumps(text)
    return _json.encode_basestring_ascii(text)
