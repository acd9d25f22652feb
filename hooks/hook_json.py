"""JSON for the hooks through CPython's own C codec (`_json`, which `json` itself calls), without
importing `json`: that import loads `re` and compiles seven regular expressions, a sixth of
every guard call (docs/design.md "Guard speed"). Same parser, same encoder, same output as
`json.loads` / `json.dumps` with their defaults (tests/hooks/test_hook_json.py checks it over
generated values).
"""

from __future__ import annotations

from _json import encode_basestring_ascii, make_encoder, make_scanner

WHITESPACE = " \t\n\r"
CONSTANTS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


class _Decoder:
    """The attributes `make_scanner` reads from a json.JSONDecoder (its defaults)."""

    strict = True
    object_hook = object_pairs_hook = None
    parse_float, parse_int = float, int
    parse_constant = staticmethod(CONSTANTS.__getitem__)


_scan = make_scanner(_Decoder())  # type: ignore[arg-type]  # typeshed: any object with these


def loads(text: str) -> object:
    """json.loads(text) for a str; ValueError on anything but one JSON value."""
    start = len(text) - len(text.lstrip(WHITESPACE))
    try:
        value, end = _scan(text, start)
    except StopIteration:
        raise ValueError("Expecting value") from None
    except SystemError:  # a syntax error: _json raises json.decoder's class, found only once
        import json  # json is imported; json then says what is wrong

        return json.loads(text)
    if text[end:].strip(WHITESPACE):
        raise ValueError("Extra data")
    return value


def _refuse(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dumps(value: object) -> str:
    """json.dumps(value) with its defaults (ASCII, ', ' and ': ', circular check)."""
    encode = make_encoder(
        {}, _refuse, encode_basestring_ascii, None, ": ", ", ", False, False, True
    )
    return "".join(encode(value, 0))
