"""Unified diffs: parse them, apply them exactly (as `git apply` does, offsets but no fuzz),
and check that a plan's diff applies to the files under a project root.
"""

from __future__ import annotations

import json
import os
import re

TYPE_CHECKING = False

_HUNK_HEADER = re.compile(r"@@ -([0-9]{1,9})(?:,([0-9]{1,9}))? \+([0-9]{1,9})(?:,([0-9]{1,9}))? @@")
_BODY = ("", " ", "-", "+")  # how the lines of a hunk's body start


class DiffError(Exception):
    """A diff that does not parse or does not apply; str() is one line naming the hunk and line."""


# Typed NamedTuples for mypy; at run time the same fields as plain namedtuples, because
# importing typing or dataclasses would cost 0.3x-0.8x `python -c pass` on every validation.
if TYPE_CHECKING:
    from typing import NamedTuple

    class Hunk(NamedTuple):
        old_start: int
        old_len: int
        new_start: int
        new_len: int
        lines: tuple[str, ...]  # ' x', '-x', '+x', or a '\ No newline at end of file' marker

    class FilePatch(NamedTuple):
        old_path: str | None  # None: /dev/null, the diff creates the file
        new_path: str | None  # None: /dev/null, the diff deletes the file
        hunks: tuple[Hunk, ...]

else:
    from collections import namedtuple

    Hunk = namedtuple("Hunk", "old_start old_len new_start new_len lines")
    FilePatch = namedtuple("FilePatch", "old_path new_path hunks")


class _Draft:
    """A file patch while its headers are read; a name of "" is not known yet."""

    def __init__(self, git: bool = False, old_path: str | None = "", new_path: str | None = ""):
        self.git = git  # began with 'diff --git'
        self.old_path, self.new_path = old_path, new_path
        self.named = False  # saw the ---/+++ pair
        self.extended = False  # saw a git line (new file, rename, mode) that needs no hunks
        self.hunks: list[Hunk] = []


def parse(diff_text: str) -> list[FilePatch]:
    """Every file patch in diff_text, in order; raises DiffError naming what is wrong."""
    lines = _split_diff(diff_text)
    patches: list[FilePatch] = []
    draft: _Draft | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            _finish(draft, patches)
            draft = _Draft(True, *_git_names(line[len("diff --git ") :]))
        elif _is_file_header(lines, i):
            if draft is None or not draft.git or draft.named or draft.hunks:
                _finish(draft, patches)
                draft = _Draft()
            draft.old_path, draft.new_path = _strip_prefixes(
                _path(line[4:]), _path(lines[i + 1][4:])
            )
            draft.named, i = True, i + 1
        elif line.startswith("@@"):
            if draft is None or "" in (draft.old_path, draft.new_path):
                raise DiffError(f"line {i + 1}: hunk without a ---/+++ header before it")
            hunk, i = _read_hunk(lines, i, f"hunk {len(draft.hunks) + 1} of {_name(draft)}")
            draft.hunks.append(hunk)
            continue
        elif draft is not None and draft.git and not draft.named:
            _git_extended(draft, line)
        i += 1
    _finish(draft, patches)
    if not patches:
        raise DiffError("not a unified diff: no hunk header found")
    return patches


def _split_diff(text: str) -> list[str]:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    complete = lines if text.endswith("\n") else lines[:-1]
    if complete and all(line.endswith("\r") for line in complete):  # the whole diff is CRLF
        lines = [line.removesuffix("\r") for line in lines]
    return lines


def _is_file_header(lines: list[str], i: int) -> bool:
    return lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")


def _name(patch: _Draft | FilePatch) -> str | None:
    return patch.new_path or patch.old_path


def _git_extended(draft: _Draft, line: str) -> None:
    if line.startswith(("Binary files ", "GIT binary patch")):
        raise DiffError(f"{_name(draft) or 'a file'}: binary patches are not supported")
    if line.startswith("new file mode"):
        draft.old_path = None
    elif line.startswith("deleted file mode"):
        draft.new_path = None
    elif line.startswith("rename from "):
        draft.old_path = _unquote(line[len("rename from ") :])
    elif line.startswith("rename to "):
        draft.new_path = _unquote(line[len("rename to ") :])
    elif not line.startswith(("old mode", "new mode")):
        return
    draft.extended = True


def _finish(draft: _Draft | None, patches: list[FilePatch]) -> None:
    if draft is None:
        return
    if "" in (draft.old_path, draft.new_path) or draft.old_path is draft.new_path is None:
        raise DiffError("cannot tell which file a 'diff --git' header is about")
    if not draft.hunks and not draft.extended:
        raise DiffError(f"{_name(draft)}: no hunk header found")
    end = 0
    for n, hunk in enumerate(draft.hunks, 1):
        if _start(hunk) < end:
            raise DiffError(f"hunk {n} ({_header(hunk)}) of {_name(draft)} overlaps hunk {n - 1}")
        end = _start(hunk) + hunk.old_len
    patches.append(FilePatch(draft.old_path, draft.new_path, tuple(draft.hunks)))


def _path(raw: str) -> str | None:
    name = _unquote(raw.split("\t", 1)[0].rstrip())  # a tab starts a timestamp
    if not name:
        raise DiffError(f"empty file name in {raw!r}")
    return None if name == "/dev/null" else name


def _strip_prefixes(old: str | None, new: str | None) -> tuple[str | None, str | None]:
    if (old or "a/").startswith("a/") and (new or "b/").startswith("b/"):
        old, new = old and old[2:], new and new[2:]
        if old == "" or new == "":
            raise DiffError("empty file name after the a/ b/ prefix")
    return old, new


def _git_names(rest: str) -> tuple[str | None, str | None]:
    """Names from 'diff --git a/x b/x'; ("", "") when they differ (renames say them later)."""
    half = len(rest) // 2
    if len(rest) % 2 == 1 and rest[half] == " ":
        old, new = _strip_prefixes(_unquote(rest[:half]), _unquote(rest[half + 1 :]))
        if old == new and old:
            return old, new
    return "", ""


def _unquote(name: str) -> str:
    """Undo git's C-style quoting of unusual file names ("caf\\303\\251.py")."""
    if len(name) < 2 or name[0] != '"' or name[-1] != '"':
        return name
    try:
        text = name[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
        return text.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return name


def _read_hunk(lines: list[str], i: int, label: str) -> tuple[Hunk, int]:
    m = _HUNK_HEADER.match(lines[i])
    if m is None:
        raise DiffError(f"{label}: malformed hunk header {lines[i]!r}")
    old_len, new_len = int(m[2] or "1"), int(m[4] or "1")
    body: list[str] = []
    old = new = 0
    i += 1
    while True:
        line = lines[i] if i < len(lines) else "@@"  # the end of the text ends the hunk
        full = old >= old_len and new >= new_len
        if line.startswith("\\") and body and not body[-1].startswith("\\"):
            body.append(line)
        elif full or line[:1] not in _BODY or _ends_body(lines, i, old_len - old, new_len - new):
            break
        else:
            body.append(line or " ")  # an empty line is a context line whose space was lost
            old, new = old + (line[:1] != "+"), new + (line[:1] != "-")
        i += 1
    while full and i < len(lines) and lines[i][:1] in _BODY[1:] and lines[i] != "-- ":
        if _is_file_header(lines, i):  # lines past the counts, unless the next file starts
            break
        old, new, i = old + (lines[i][0] != "+"), new + (lines[i][0] != "-"), i + 1
    if old != old_len or new != new_len:
        side, said, got = ("old", old_len, old) if old != old_len else ("new", new_len, new)
        raise DiffError(f"{label}: header says {said} {side} lines, body has {got}")
    return Hunk(int(m[1]), old_len, int(m[3]), new_len, tuple(body)), i


def _ends_body(lines: list[str], i: int, old_left: int, new_left: int) -> bool:
    """A '--- x', '+++ y', '@@' run is the next file's header unless it exactly ends this hunk."""
    header = _is_file_header(lines, i) and i + 2 < len(lines) and lines[i + 2].startswith("@@")
    return header and (old_left, new_left) != (1, 1)


def _start(hunk: Hunk) -> int:
    """Index of the first old line the hunk covers (for a pure insertion: where it inserts)."""
    return max(hunk.old_start - 1, 0) if hunk.old_len else hunk.old_start


def _header(hunk: Hunk) -> str:
    return f"@@ -{hunk.old_start},{hunk.old_len} +{hunk.new_start},{hunk.new_len} @@"


def apply(patch: FilePatch, original: str | None) -> str | None:
    """The text after the patch (None: the file is deleted); original None means absent."""
    name = _name(patch)
    if patch.old_path is None and original is not None:
        raise DiffError(f"{name}: file already exists (the diff creates it)")
    if patch.old_path is not None and original is None:
        verb = "deletes" if patch.new_path is None else "modifies"
        raise DiffError(f"{patch.old_path}: file not found (the diff {verb} it)")
    lines = re.findall(r"[^\n]*\n|[^\n]+\Z", original or "")
    out: list[str] = []
    pos = offset = 0
    for n, hunk in enumerate(patch.hunks, 1):
        entries = hunk_entries(hunk)
        old = [line for kind, line in entries if kind != "+"]
        want = max(_start(hunk) + offset, pos)  # carry the last hunk's offset, as patch does
        at = _find(lines, old, want, pos, _pins(entries, hunk)) if old else want
        if at is None or at > len(lines):
            why = _mismatch(lines, old, want)
            raise DiffError(f"hunk {n} ({_header(hunk)}) of {name} does not apply: {why}")
        out += lines[pos:at] + _new_lines(entries, lines, at)
        pos, offset = at + len(old), at - _start(hunk)
    out += lines[pos:]
    if patch.new_path is None and out:
        left = _show(out[0])
        raise DiffError(f"{name}: the diff deletes the file but leaves lines in it, like {left}")
    return None if patch.new_path is None else "".join(out)


def _pins(entries: list[tuple[str, str]], hunk: Hunk) -> tuple[bool, bool]:
    """(at the start, at the end): as git pins hunks, one starting at line 1 matches only at
    the file's start and one without trailing context only at its end, so that applying a
    diff twice fails instead of adding its lines twice. A hunk without any context (diff
    -U0, which git applies only with --unidiff-zero) is not pinned."""
    if all(kind != " " for kind, _ in entries):
        return False, False
    return hunk.old_start <= 1, entries[-1][0] != " "


def hunk_entries(hunk: Hunk) -> list[tuple[str, str]]:
    """(kind, line with its newline unless a marker says it has none) for each hunk line."""
    entries: list[tuple[str, str]] = []
    for line in hunk.lines:
        if line.startswith("\\"):
            entries[-1] = (entries[-1][0], entries[-1][1].removesuffix("\n"))
        else:
            entries.append((line[:1], line[1:] + "\n"))
    return entries


def _same(line: str, expected: str) -> bool:
    """Exact match, except that CRLF and LF line ends are equal (the file keeps its own)."""
    return line == expected or line.replace("\r\n", "\n") == expected.replace("\r\n", "\n")


def _find(
    lines: list[str], old: list[str], want: int, lo: int, pins: tuple[bool, bool] = (False, False)
) -> int | None:
    """The start nearest to want, not before lo, where the old lines match exactly (at the
    file's start or end only, when the hunk is pinned there)."""
    hi = len(lines) - len(old)
    if pins[1]:
        lo = max(lo, hi)
    if pins[0]:
        hi = min(hi, 0)
    for distance in range(max(want - lo, hi - want) + 1 if hi >= lo else 0):
        for at in (want - distance, want + distance):
            if lo <= at <= hi and all(_same(lines[at + j], o) for j, o in enumerate(old)):
                return at
    return None


def _mismatch(lines: list[str], old: list[str], want: int) -> str:
    for k, expected in enumerate(old, want):
        found = "the end of the file" if k >= len(lines) else _show(lines[k])
        if k >= len(lines) or not _same(lines[k], expected):
            return f"line {k + 1} expected {_show(expected)} but found {found}"
    return f"it inserts after line {want} but the file has {len(lines)} lines"


def _show(line: str) -> str:
    text = line.removesuffix("\n").removesuffix("\r") if line.endswith("\n") else line
    shown = json.dumps(text, ensure_ascii=False).encode("utf-8", "backslashreplace").decode()
    return shown + ("" if line.endswith("\n") else " (no newline at end of file)")


def _new_lines(entries: list[tuple[str, str]], lines: list[str], at: int) -> list[str]:
    """The new side: context lines as the file has them; added lines end in CRLF when the
    hunk does not spell out its CRs and most of the lines it touches use CRLF."""
    touched = lines[at : at + sum(kind != "+" for kind, _ in entries)] or lines
    crlf = not any(line.endswith("\r\n") for _, line in entries) and 2 * sum(
        line.endswith("\r\n") for line in touched
    ) > len(touched)
    out: list[str] = []
    for kind, line in entries:
        if kind == " ":
            out.append(lines[at])
        elif kind == "+":
            out.append(line[:-1] + "\r\n" if crlf and line.endswith("\n") else line)
        at += kind != "+"
    return out


def reverse(patch: FilePatch) -> FilePatch:
    """The patch that undoes `patch`."""
    flip = {"+": "-", "-": "+"}
    hunks = tuple(
        Hunk(
            h.new_start,
            h.new_len,
            h.old_start,
            h.old_len,
            tuple(flip.get(line[:1], line[:1]) + line[1:] for line in h.lines),
        )
        for h in patch.hunks
    )
    return FilePatch(patch.new_path, patch.old_path, hunks)


def touched_files(diff_text: str) -> list[str]:
    """Paths the diff touches: the new path, the old one for a deletion, both for a rename."""
    return list(dict.fromkeys(p for patch in parse(diff_text) for p in _paths(patch)))


def _paths(patch: FilePatch) -> list[str]:
    return [p for p in dict.fromkeys((patch.old_path, patch.new_path)) if p is not None]


def check(
    diff_text: str,
    root: str,
    expected_file: str | None = None,
    applied: dict[str, str | None] | None = None,
) -> list[str]:
    """One line per problem; [] when every file patch parses and applies under root.

    `applied` holds files as earlier patches left them; pass the same dict to check a
    sequence of diffs, each against the result of the ones before it.
    """
    try:
        patches = parse(diff_text)
    except DiffError as exc:
        return [str(exc)]
    applied = {} if applied is None else applied
    return [problem for patch in patches for problem in _check(patch, root, expected_file, applied)]


def _check(
    patch: FilePatch, root: str, expected: str | None, applied: dict[str, str | None]
) -> list[str]:
    paths = _paths(patch)
    problems = [problem for path in paths if (problem := unsafe(path, root))]
    if expected is not None:
        wanted = os.path.normpath(expected)
        problems += [
            f"{path}: the diff touches this file but the change is for {expected}"
            for path in paths
            if os.path.normpath(path) != wanted
        ]
    if problems:
        return problems
    old, new = patch.old_path, patch.new_path
    try:
        if old and new and old != new and _read(root, new, applied) is not None:
            return [f"{new}: file already exists (the diff renames {old} to it)"]
        result = apply(patch, _read(root, old or paths[0], applied))
    except DiffError as exc:
        return [str(exc)]
    except OSError as exc:
        return [f"{old or new}: cannot read the file ({exc.strerror})"]
    applied.update(dict.fromkeys(paths))
    if new is not None:
        applied[new] = result
    return []


def unsafe(path: str, root: str) -> str | None:
    """Why `path` may not be written under root (absolute, '..', leaves it), or None."""
    if path.startswith(("/", "\\")) or re.match(r"[A-Za-z]:[\\/]", path):
        return f"{path}: absolute paths are not allowed"
    if ".." in re.split(r"[\\/]", path):
        return f"{path}: '..' is not allowed in paths"
    top = os.path.realpath(root)
    if os.path.commonpath([top, os.path.realpath(os.path.join(root, path))]) != top:
        return f"{path}: resolves outside the project root"
    return None


def _read(root: str, path: str, applied: dict[str, str | None]) -> str | None:
    if path in applied:
        return applied[path]
    full = os.path.join(root, path)
    if not os.path.lexists(full):
        return None
    with open(full, "rb") as handle:
        return handle.read().decode("utf-8", "surrogateescape")
