"""json.loads and json.dumps for the hot paths, without `import json`.

`import json` compiles six regular expressions and pulls in `re`: about half of
`python -c pass`, on every step and every guard call. The C `_json` module that json
itself uses does the scanning and escaping; this module only wires it up. The output is
byte-identical to json's (tests compare them with hypothesis); whatever falls outside
plain JSON values (another type, a non-string key, a decode error and its message) is
handed to json itself, imported then.
"""

from __future__ import annotations

import _json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class _Context:
    """What `_json.make_scanner` reads off `json.JSONDecoder` (CPython 3.11 json/scanner.py)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float  # NaN, Infinity, -Infinity, as json.loads reads them


_scan = _json.make_scanner(_Context)  # type: ignore[arg-type]  # it reads only these attributes


def loads(data: str | bytes) -> Any:
    """json.loads(data); whatever the fast path cannot read goes to json.loads, which reads it
    or raises its own error (JSONDecodeError with line and column, UnicodeDecodeError)."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
        text = text.strip(" \t\n\r")
        value, end = _scan(text, 0)
        if end == len(text):
            return value
    except Exception:  # StopIteration, or an error only json.decoder knows how to spell
        pass
    import json

    return json.loads(data)


class _NotPlain(Exception):
    """A value json.dumps would handle differently (or refuse); let it."""


def _float(value: float) -> str:
    if value != value or value in (float("inf"), float("-inf")):
        raise _NotPlain
    return float.__repr__(value)


def _fail(value: Any) -> Any:
    raise _NotPlain


def dumps(
    value: Any,
    *,
    indent: int | None = None,
    ensure_ascii: bool = True,
    sort_keys: bool = False,
    separators: tuple[str, str] | None = None,
) -> str:
    """json.dumps(value, …) for these keyword arguments."""
    item_sep, key_sep = separators or ((", " if indent is None else ","), ": ")
    quote = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring
    try:
        if indent is None:  # the C encoder, as json.dumps uses it
            encode = _json.make_encoder(
                {}, _fail, quote, None, key_sep, item_sep, sort_keys, False, False
            )
            return "".join(encode(value, 0))
        out: list[str] = []
        _indented(value, out, quote, " " * indent, "\n", item_sep, key_sep, sort_keys)
        return "".join(out)
    except Exception:  # _NotPlain, NaN or a cycle, or another Python's _json: json decides
        import json

        return json.dumps(
            value,
            indent=indent,
            ensure_ascii=ensure_ascii,
            sort_keys=sort_keys,
            separators=separators,
        )


def _indented(value, out, quote, step, newline, item_sep, key_sep, sort_keys) -> None:
    """json.encoder's _iterencode with indent, for dicts with str keys, lists and scalars."""
    if isinstance(value, str):
        out.append(quote(value))
    elif value is None or value is True or value is False:
        out.append("null" if value is None else "true" if value else "false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, list | tuple | dict):
        if not value:
            out.append("{}" if isinstance(value, dict) else "[]")
            return
        inner = newline + step
        out.append("{" if isinstance(value, dict) else "[")
        if isinstance(value, dict):
            items = sorted(value.items()) if sort_keys else value.items()
            for i, (key, item) in enumerate(items):
                if not isinstance(key, str):
                    raise _NotPlain
                out.append((item_sep + inner if i else inner) + quote(key) + key_sep)
                _indented(item, out, quote, step, inner, item_sep, key_sep, sort_keys)
            out.append(newline + "}")
        else:
            for i, item in enumerate(value):
                out.append(item_sep + inner if i else inner)
                _indented(item, out, quote, step, inner, item_sep, key_sep, sort_keys)
            out.append(newline + "]")
    else:
        raise _NotPlain
