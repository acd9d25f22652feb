"""Ids are assigned here, never by the caller: max + 1 within a prefix, zero-padded to three."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any


def next_id(items: Iterable[dict[str, Any]], prefix: str) -> str:
    highest = 0
    start = len(prefix) + 1
    for item in items:
        tail = item["id"][start:]
        if tail.isdigit():
            highest = max(highest, int(tail))
    return f"{prefix}-{highest + 1:03d}"


def option_letter(index: int) -> str:
    """0 → A, 25 → Z, 26 → AA: option ids OPT-A, OPT-B, …"""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters
