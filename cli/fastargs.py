"""Parses a well-formed `plan` command line from the command table, without importing click.

click costs ~4x `python -c pass` to import, the whole budget of a `plan` call. This parser
takes only what it can read unambiguously (long options, switches, positionals) and returns
None for anything else (help, short or unknown options, odd values), which click then
handles. tests/cli/test_fastargs.py checks that it agrees with click wherever it answers.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DIGITS = frozenset("0123456789")


def find_command(argv: list[str], table: dict[str, Any]) -> tuple[Any, list[str]] | None:
    """The longest run of leading words naming a command, and the arguments after it."""
    words = []
    for arg in argv:
        if arg.startswith("-"):
            break
        words.append(arg)
    for n in range(len(words), 0, -1):
        command = table.get(" ".join(words[:n]))
        if command is not None:
            return command, argv[n:]
    return None


def _convert(param: Any, raw: str) -> Any:
    if isinstance(param.type, tuple):
        return raw if raw in param.type else None
    if param.type is int:
        return int(raw) if raw and set(raw) <= DIGITS else None
    return raw


def parse(argv: list[str], table: dict[str, Any]) -> tuple[Any, dict[str, Any]] | None:
    """(command, {param name: value}) or None when click should parse this command line."""
    found = find_command(argv, table)
    if found is None:
        return None
    command, rest = found
    options, negations = {}, {}
    for p in command.params:
        if not p.positional:
            options[p.option] = p
            if p.flag:
                negations["--no-" + p.option[2:]] = p
    positionals = [p for p in command.params if p.positional]
    values: dict[str, Any] = {p.name: p.empty() for p in command.params}
    seen: set[str] = set()
    i = 0
    while i < len(rest):
        arg = rest[i]
        i += 1
        if arg.startswith("--"):
            key, eq, raw = arg.partition("=")
            p = options.get(key) or negations.get(key)
            if p is None or (p.name in seen and not p.multiple):
                return None
            seen.add(p.name)
            if p.flag or p.switch:
                if eq:
                    return None
                values[p.name] = key not in negations
                continue
            if not eq:
                if i >= len(rest) or (rest[i].startswith("-") and rest[i] != "-"):
                    return None
                raw, i = rest[i], i + 1
            value = _convert(p, raw)
            if value is None:
                return None
            if p.multiple:
                values[p.name].append(value)
            else:
                values[p.name] = value
        elif arg.startswith("-") and arg != "-":
            return None
        else:
            if not positionals:
                return None
            p = positionals[0] if positionals[0].multiple else positionals.pop(0)
            value = _convert(p, arg)
            if value is None:
                return None
            if p.multiple:
                values[p.name].append(value)
            else:
                values[p.name] = value
    if any(p.required and values[p.name] in (None, []) for p in command.params):
        return None
    return command, values
