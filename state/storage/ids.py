"""Ids are assigned here, never by the caller: max + 1 within a prefix, zero-padded to three."""

from __future__ import annotations

from typing import TypedDict

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable


class Identified(TypedDict):
    """What an id is read from: any document item with an `id` (Decision, Milestone, …)."""

    id: str


def highest(items: Iterable[Identified], prefix: str) -> int:
    """The largest number among ids `prefix-NNN` in items (0 when there is none)."""
    top = 0
    start = len(prefix) + 1
    for item in items:
        tail = item["id"][start:]
        if tail.isdecimal() and int(tail) > top:  # isdigit() would let "²" reach int()
            top = int(tail)
    return top


def format_id(prefix: str, number: int) -> str:
    return f"{prefix}-{number:03d}"


def next_id(items: Iterable[Identified], prefix: str) -> str:
    return format_id(prefix, highest(items, prefix) + 1)


def option_letter(index: int) -> str:
    """0 → A, 25 → Z, 26 → AA: option ids OPT-A, OPT-B, …"""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters
