"""A unified diff's lines numbered as in the files (old and new line numbers), the way a
code review shows them: comments anchor to a change and a new-file line, which stays put
when the diff around it is edited between review rounds."""

from __future__ import annotations

import re
from typing import NamedTuple

HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class Line(NamedTuple):
    old: int | None
    """The line's number in the old file (None: added, or a header)."""
    new: int | None
    """The line's number in the new file (None: removed, or a header)."""
    kind: str
    """add, del, ctx, hunk or file (the ---, +++ and diff --git headers)."""
    text: str


def numbered(diff: str) -> list[Line]:
    """Every line of `diff` with its file line numbers. A hunk's header says how many old
    and new lines it holds, so a removed "-- x" line is never taken for a "--- " header."""
    out: list[Line] = []
    old = new = old_left = new_left = 0
    for text in diff.splitlines():
        match = HUNK.match(text) if not (old_left or new_left) else None
        if match:
            old, new = int(match[1]), int(match[3])
            old_left = 1 if match[2] is None else int(match[2])
            new_left = 1 if match[4] is None else int(match[4])
            out.append(Line(None, None, "hunk", text))
        elif not (old_left or new_left) or text.startswith("\\"):
            out.append(Line(None, None, "file", text))  # headers, and "\ No newline at end of file"
        elif text.startswith("+"):
            out.append(Line(None, new, "add", text))
            new, new_left = new + 1, new_left - 1
        elif text.startswith("-"):
            out.append(Line(old, None, "del", text))
            old, old_left = old + 1, old_left - 1
        else:
            out.append(Line(old, new, "ctx", text))
            old, new, old_left, new_left = old + 1, new + 1, old_left - 1, new_left - 1
    return out


def new_lines(diff: str) -> list[int]:
    """The new-file line numbers the diff shows (added and context lines), in order."""
    return [line.new for line in numbered(diff) if line.new is not None]


def spans(numbers: list[int]) -> str:
    """ "1-4, 9-12": the numbers as ranges."""
    runs: list[list[int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)
