"""What commands print, in one place: results (ids, JSON, reports) on stdout, everything
said to the person (what was recorded, NEXT, warnings) on stderr."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, TypedDict

from shared.routing import argv_of, command

if TYPE_CHECKING:
    from typing import NotRequired

    from state.routes import Target


class IdsRecord(TypedDict):
    """What an operation prints with --json."""

    ids: list[str]
    changed: NotRequired[list[str]]
    next: NotRequired[str]


def out(text: str) -> None:
    """A result on stdout, ending in one newline."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def line(text: str) -> None:
    """A result on stdout as given, then a newline (a rendered text keeps its own ending)."""
    sys.stdout.write(text + "\n")


def tell(text: str) -> None:
    """One line for the person, on stderr."""
    sys.stderr.write(text + "\n")


def dump(value: Any) -> None:  # any JSON value: a record, a list, a document
    out(json.dumps(value, indent=2, ensure_ascii=False))


def emit_ids(
    ids: list[str],
    as_json: bool,
    nxt: Target | None = None,
    changed: list[str] | None = None,
) -> None:
    """Created ids on stdout (else the id a `set` changed); the next command (when there is
    one, rendered here) on stderr, or in the JSON."""
    if as_json:
        record: IdsRecord = {"ids": ids}
        if changed:
            record["changed"] = changed
        if nxt:
            record["next"] = command(argv_of(nxt))
        out(json.dumps(record))
        return
    if ids or changed:
        out("\n".join(ids or changed or []))
    if nxt:
        tell(f"NEXT: {command(argv_of(nxt))}")
