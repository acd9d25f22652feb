"""Checks documents against the JSON Schemas exported from state/storage/models.py, fast.

It understands exactly the keywords pydantic emits for our models; missing fields with a
default are filled in. Tests prove it agrees with pydantic and with `jsonschema`.
"""

from __future__ import annotations

import json
import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    # (value, path, problems) -> value, defaults filled
    Check = Callable[[Any, list[str | int], list[str]], Any]

SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemas")

_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}
_compiled: dict[str, Check] = {}
_members: dict[tuple[str, str], Check] = {}
_schemas: dict[str, dict[str, Any]] = {}
_prints: dict[str, str] = {}
_filled = [0]  # defaults filled so far: a check that filled one tells its caller to re-encode


def load_schema(name: str) -> dict[str, Any]:
    if name not in _schemas:
        with open(os.path.join(SCHEMA_DIR, f"{name}.json"), "rb") as f:
            _schemas[name] = json.loads(f.read())
    return _schemas[name]


def fingerprint(name: str) -> str:
    """The sha256 of schema `name` and of this checker: what a document was checked against."""
    if name not in _prints:
        import hashlib

        try:
            with (
                open(os.path.join(SCHEMA_DIR, f"{name}.json"), "rb") as f,
                open(__file__, "rb") as g,
            ):
                _prints[name] = hashlib.sha256(f.read() + g.read()).hexdigest()
        except OSError:  # no source to hash (a bytecode-only install): one no file matches
            _prints[name] = os.urandom(32).hex()
    return _prints[name]


def format_path(path: list[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "(document)"


def type_name(value: Any) -> str:
    for name, test in _TYPES.items():
        if test(value):
            return name
    return type(value).__name__


def check(name: str, doc: Any) -> list[str]:
    """Problems of `doc` against schema `name` as "path: message"; fills missing defaults."""
    return check_filled(name, doc)[0]


def check_filled(name: str, doc: Any, keys: Iterable[str] | None = None) -> tuple[list[str], bool]:
    """check(), and whether it filled a default. With `keys`: only those top-level members of
    `doc` (an object whose other members are known valid), with the same messages."""
    schema = load_schema(name)
    if keys is not None and not set(keys) <= schema.get("properties", {}).keys():
        keys = None  # a member the schema does not name: the whole check says so
    checks: list[tuple[Check, Any, list[str | int]]]
    if keys is None:
        if name not in _compiled:
            _compiled[name] = _Compiler(schema.get("$defs", {})).compile(schema)
        checks = [(_compiled[name], doc, [])]
    else:
        for key in keys:
            if (name, key) not in _members:
                compiler = _Compiler(schema.get("$defs", {}))
                _members[name, key] = compiler.compile(schema["properties"][key])
        checks = [(_members[name, key], doc[key], [key]) for key in keys]
    problems: list[str] = []
    before = _filled[0]
    for one, value, path in checks:
        one(value, path, problems)
    return problems, _filled[0] != before


def defaults(name: str, definition: str | None = None) -> dict[str, Any]:
    """A fresh object holding the defaults of schema `name` (or of one of its $defs)."""
    schema = load_schema(name)
    node = schema["$defs"][definition] if definition else schema
    return {
        key: _copy(prop["default"]) for key, prop in node["properties"].items() if "default" in prop
    }


def blank(name: str, definition: str) -> dict[str, Any]:
    """A new object of one of schema `name`'s $defs: its defaults, None where a field has none
    (the command fills it), in the model's field order, which the schema files keep (as `plan
    show` prints an item)."""
    node = load_schema(name)["$defs"][definition]["properties"]
    return {
        key: _copy(prop["default"]) if "default" in prop else None for key, prop in node.items()
    }


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


class _Compiler:
    """Turns a schema node into a closure once, so checking a big plan is one pass of calls."""

    def __init__(self, defs: dict[str, Any]):
        self.defs = defs
        self.refs: dict[str, Check] = {}

    def compile(self, node: dict[str, Any]) -> Check:
        if "$ref" in node:
            return self._ref(node["$ref"].rsplit("/", 1)[-1])
        if "anyOf" in node:
            nullable = {"type": "null"} in node["anyOf"]
            return self._any_of([self.compile(n) for n in node["anyOf"]], nullable)
        checks: list[Check] = []
        if "type" in node:
            checks.append(self._type(node["type"]))
        if "enum" in node:
            checks.append(self._enum(node["enum"]))
        if "const" in node:
            checks.append(self._enum([node["const"]]))
        if "pattern" in node:
            checks.append(self._pattern(node["pattern"]))
        if "minimum" in node:
            checks.append(self._minimum(node["minimum"]))
        if "items" in node:
            checks.append(self._items(self.compile(node["items"])))
        if "properties" in node or "additionalProperties" in node:
            checks.append(self._object(node))
        return self._all(checks)

    def _ref(self, name: str) -> Check:
        if name not in self.refs:
            self.refs[name] = lambda v, p, e: target(v, p, e)  # placeholder for recursion
            target = self.compile(self.defs[name])
            self.refs[name] = target
        return self.refs[name]

    @staticmethod
    def _all(checks: list[Check]) -> Check:
        def run(value: Any, path: list[str | int], problems: list[str]) -> Any:
            for one in checks:
                if one(value, path, problems) is _BAD:
                    return _BAD
            return value

        return checks[0] if len(checks) == 1 else run

    @staticmethod
    def _any_of(options: list[Check], nullable: bool) -> Check:
        def run(value: Any, path: list[str | int], problems: list[str]) -> Any:
            if value is None and nullable:  # the common optional field: no failed option first
                return value
            first: list[str] = []
            for option in options:
                found: list[str] = []
                option(value, path, found)
                if not found:
                    return value
                first = first or found
            problems.extend(first)
            return _BAD

        return run

    @staticmethod
    def _type(expected: str) -> Check:
        test = _TYPES[expected]

        def run(value: Any, path: list[str | int], problems: list[str]) -> Any:
            if test(value):
                return value
            problems.append(f"{format_path(path)}: expected {expected}, got {type_name(value)}")
            return _BAD

        return run

    @staticmethod
    def _enum(allowed: list[Any]) -> Check:
        shown = ", ".join(str(a) for a in allowed)
        types = {type(a) for a in allowed}  # 1 is not True; a word of state/vocab.py is a str

        def run(value: Any, path: list[str | int], problems: list[str]) -> Any:
            if value in allowed and (
                type(value) in types or (isinstance(value, str) and str in types)
            ):
                return value
            problems.append(f"{format_path(path)}: {value!r} is not one of {shown}")
            return _BAD

        return run

    @staticmethod
    def _pattern(pattern: str) -> Check:
        # pydantic and JSON Schema (ECMA-262) read a final `$` as the end of the text; Python's
        # `$` also matches before a trailing newline, which would let "DL-001\n" pass.
        anchored = pattern
        if pattern.endswith("$") and not pattern.endswith("\\$"):
            anchored = pattern[:-1] + r"\Z"
        search = None  # compiled on first use: most patterns of a session file never run

        def run(value: Any, path: list[str | int], problems: list[str]) -> Any:
            nonlocal search
            if search is None:
                search = re.compile(anchored).search
            if search(value):
                return value
            problems.append(f"{format_path(path)}: {value!r} does not match {pattern}")
            return _BAD

        return run

    @staticmethod
    def _minimum(minimum: float) -> Check:
        def run(value: Any, path: list[str | int], problems: list[str]) -> Any:
            if value >= minimum:
                return value
            problems.append(f"{format_path(path)}: {value!r} is less than {minimum}")
            return _BAD

        return run

    @staticmethod
    def _items(item: Check) -> Check:
        def run(value: list[Any], path: list[str | int], problems: list[str]) -> Any:
            for index, element in enumerate(value):
                path.append(index)
                item(element, path, problems)
                path.pop()
            return value

        return run

    def _object(self, node: dict[str, Any]) -> Check:
        props = {k: self.compile(v) for k, v in node.get("properties", {}).items()}
        # Fields whose whole check is a type test (most strings, flags, nullable strings,
        # lists of plain strings) are tested here, without a call or a path entry: a big
        # plan is mostly these. Anything else, or a value that fails, takes the full check.
        quick = {k: t for k, v in node.get("properties", {}).items() if (t := _quick(v))}
        fill = {k: v["default"] for k, v in node.get("properties", {}).items() if "default" in v}
        required = [k for k in node.get("required", []) if k not in fill]
        extra = node.get("additionalProperties", True)
        extra_check = self.compile(extra) if isinstance(extra, dict) else None

        needed = fill.keys() | required

        def run(value: dict[str, Any], path: list[str | int], problems: list[str]) -> Any:
            if not needed <= value.keys():  # one set test for the usual object, whole
                for key in required:
                    if key not in value:
                        problems.append(f"{format_path([*path, key])}: missing")
                for key, default in fill.items():
                    if key not in value:
                        value[key] = _copy(default)
                        _filled[0] += 1
            for key, element in value.items():
                kind = quick.get(key)
                if kind is _STRINGS:
                    if isinstance(element, list) and all(isinstance(e, str) for e in element):
                        continue
                elif kind is not None and isinstance(element, kind):
                    continue
                path.append(key)
                one = props.get(key, extra_check)
                if one is not None:
                    one(element, path, problems)
                elif extra is False:
                    problems.append(f"{format_path(path)}: unknown field")
                path.pop()
            return value

        return run


_BAD = object()
_STRINGS = object()  # _quick's answer for a list of plain strings
_PLAIN = {"string": str, "boolean": bool, "null": type(None)}
_NOTES = ("title", "description", "default")


def _quick(node: dict[str, Any]) -> Any:
    """What passes `node` by an isinstance() test alone (a type, a tuple of types, or
    _STRINGS), or None when its check is more than that."""
    keys = set(node) - set(_NOTES)
    if keys == {"type"}:
        return _PLAIN.get(node["type"])
    if keys == {"type", "items"} and node["type"] == "array":
        return _STRINGS if _quick(node["items"]) is str else None
    if keys == {"anyOf"}:
        kinds = [_quick(option) for option in node["anyOf"]]
        if all(isinstance(k, type) for k in kinds):
            return tuple(kinds)
    return None
