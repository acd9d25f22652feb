"""What template values do in the Jinja2 subset shared/render.py runs: strict undefined
values, attribute and item lookup, and the filters, tests and comparisons, as jinja2 3.1 has them.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class UndefinedError(Exception):
    """What using an undefined value raises, before render() adds the template and line."""


class Undefined:
    """jinja2's StrictUndefined: every use raises, except `is defined`, `is none` and `default`."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message

    def _fail(self, *args: object) -> Any:
        raise UndefinedError(self.message)

    def __getattr__(self, name: str) -> Any:
        if name[:2] == "__" and name[-2:] == "__":
            raise AttributeError(name)  # Python probing an optional protocol, as in jinja2
        return self._fail()

    def __repr__(self) -> str:
        return "Undefined"

    __str__ = __bool__ = __len__ = __iter__ = __contains__ = __hash__ = _fail
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __neg__ = __pos__ = _fail
    __getitem__ = __call__ = __int__ = __float__ = _fail


def undefined_attribute(obj: Any, name: Any) -> Undefined:
    """The undefined value jinja2 returns for a missing `obj.name` or `obj[name]`."""
    kind = "None" if obj is None else f"{type(obj).__name__} object"
    if isinstance(name, str):
        return Undefined(f"{kind!r} has no attribute {name!r}")
    return Undefined(f"{kind} has no element {name!r}")


def get_attribute(obj: Any, name: str) -> Any:
    """`obj.name`: the attribute if there is one, else the item (jinja2's Environment.getattr)."""
    try:
        return getattr(obj, name)
    except AttributeError:
        pass
    try:
        return obj[name]
    except (TypeError, LookupError, AttributeError):
        return undefined_attribute(obj, name)


def get_item(obj: Any, key: Any) -> Any:
    """`obj[key]`: the item if there is one, else the attribute (jinja2's Environment.getitem)."""
    try:
        return obj[key]
    except (AttributeError, TypeError, LookupError):
        if isinstance(key, str):
            try:
                return getattr(obj, key)
            except AttributeError:
                pass
        return undefined_attribute(obj, key)


# Filters, each a copy of jinja2 3.1's (autoescape off): name -> (function, min args, max args).
def _soft_str(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _default(value: Any, default: Any = "", boolean: Any = False) -> Any:
    return default if isinstance(value, Undefined) or (boolean and not value) else value


def _replace(s: Any, old: Any, new: Any, count: Any = None) -> str:
    return str(s).replace(str(old), str(new), -1 if count is None else count)


def _first(seq: Any) -> Any:
    for item in seq:
        return item
    return Undefined("No first item, sequence was empty.")


def _last(seq: Any) -> Any:
    for item in reversed(seq):
        return item
    return Undefined("No last item, sequence was empty.")


def _sort(value: Any, reverse: bool = False, case_sensitive: bool = False) -> list[Any]:
    def key(item: Any) -> list[Any]:  # a one-item list, exactly like jinja2's attrgetter
        return [item if case_sensitive or not isinstance(item, str) else item.lower()]

    return sorted(value, key=key, reverse=reverse)


def _int(value: Any, default: Any = 0, base: Any = 10) -> Any:
    try:
        return int(value, base) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        try:
            return int(float(value))
        except (TypeError, ValueError, OverflowError):
            return default


def _indent(s: Any, width: Any = 4, first: Any = False, blank: Any = False) -> str:
    indention = width if isinstance(width, str) else " " * width
    s += "\n"  # the quirk jinja2 needs for splitlines
    if blank:
        rv = ("\n" + indention).join(s.splitlines())
    else:
        lines = s.splitlines()
        rv = lines.pop(0)
        if lines:
            rv += "\n" + "\n".join(indention + line if line else line for line in lines)
    return indention + rv if first else rv


_SHELL_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")


def _quote(s: Any) -> Any:
    """shlex.quote, without importing shlex (and its re) on the hot path."""
    if not s:
        return "''"
    if not isinstance(s, str):
        raise TypeError(f"expected string or bytes-like object, got {type(s).__name__!r}")
    if all(c in _SHELL_SAFE for c in s):
        return s
    return "'" + s.replace("'", "'\"'\"'") + "'"


FILTERS: dict[str, tuple[Callable[..., Any], int, int]] = {
    "length": (len, 0, 0),
    "count": (len, 0, 0),
    "join": (lambda value, d="": str(d).join(map(str, value)), 0, 1),
    "default": (_default, 0, 2),
    "upper": (lambda s: _soft_str(s).upper(), 0, 0),
    "lower": (lambda s: _soft_str(s).lower(), 0, 0),
    "trim": (lambda s, chars=None: _soft_str(s).strip(chars), 0, 1),
    "first": (_first, 0, 0),
    "last": (_last, 0, 0),
    "sort": (_sort, 0, 2),
    "list": (list, 0, 0),
    "string": (_soft_str, 0, 0),
    "int": (_int, 0, 2),
    "replace": (_replace, 2, 3),
    "indent": (_indent, 0, 3),
    "quote": (_quote, 0, 0),
}
FILTERS["d"] = FILTERS["default"]
TESTS: dict[str, Callable[[Any], bool]] = {
    "defined": lambda v: not isinstance(v, Undefined),
    "undefined": lambda v: isinstance(v, Undefined),
    "none": lambda v: v is None,
}
COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b,
    "in": lambda a, b: a in b,
    "not in": lambda a, b: a not in b,
}
