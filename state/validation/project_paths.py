"""Paths a plan stores (milestone files, intents, changes and every path in their diffs) are
verified, not trusted: when recorded and again when applied (docs/design.md, "Stored paths").

One rule: a relative path inside the project, with no `.git` or `.planner` component (any
case), also once symlinks in the project are resolved.
"""

from __future__ import annotations

import contextlib
import os
import re

from state.errors import PlannerError, PreconditionFailed
from state.project import session_project
from state.repo import unidiff

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from state.storage.documents import Milestone

FORBIDDEN = (".git", ".planner")
# git's own .git protection also ignores these: trailing dots and spaces (Windows), the 8.3
# short name, and code points HFS+ drops when it compares names.
_IGNORABLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")
_SHORT = ("git~1",)


def unsafe_component(part: str) -> bool:
    """Whether one path component names the project's git dir or planner dir, in any spelling
    a case-insensitive or normalising file system takes for it."""
    plain = _IGNORABLE.sub("", part).rstrip(". ").casefold()
    return plain in FORBIDDEN or plain in _SHORT


def why_unsafe(project: str | None, rel: str) -> str:
    """Why `rel` may not be planned or written under `project` ("" when it may). With no
    project (a session outside a git work tree) only the spelling is judged."""
    if not rel or "\0" in rel:
        return "an empty path or a NUL byte"
    if rel.startswith(("/", "\\")) or re.match(r"[A-Za-z]:[\\/]", rel):
        return "an absolute path; plan paths are relative to the project root"
    parts = re.split(r"[\\/]", rel)
    if ".." in parts:
        return "'..' leaves the project"
    if any(unsafe_component(p) for p in parts):
        return "inside .git/ or .planner/, which a plan never writes"
    if project is None:
        return ""
    try:
        top = os.path.realpath(project)
        real = os.path.realpath(os.path.join(project, rel))
    except (UnicodeError, ValueError, OSError):
        return "not a file name this system can use"
    if os.path.commonpath([top, real]) != top:
        return "outside the project once its symlinks are resolved"
    inside = os.path.relpath(real, top)
    if inside == ".":
        return "the project root itself, not a file in it"
    if any(unsafe_component(p) for p in inside.split(os.sep)):
        return "inside .git/ or .planner/ once its symlinks are resolved"
    return ""


def recorded_project(state_dir: str) -> str | None:
    """The project whose paths a session's plan names, or None for a session outside a git
    work tree's .planner/ (then only the spelling of a path is judged when it is recorded)."""
    try:
        return session_project(state_dir)
    except PreconditionFailed:
        return None


def check_project_path(
    project: str | None, rel: str, where: str = "", error: type[PlannerError] = PreconditionFailed
) -> None:
    """Raise `error` naming `rel` (and `where`: an option or an id) unless it is a safe path.

    Exit 2 (UsageError) for a value given on the command line; exit 3 for one read from the
    plan or produced by a capture: the stored plan is what is wrong."""
    reason = why_unsafe(project, rel)
    if reason:
        prefix = f"{where}: " if where else ""
        raise error(f"{prefix}{rel!r}: {reason}; nothing was written")


def diff_paths(diff: str) -> list[str]:
    """Every path a diff's headers name: ---/+++ and `diff --git` names, renames and copies.

    Headers are read line by line, also those our parser does not apply (a copy, names
    that differ): what git would read from the same text must be as safe as what we apply."""
    paths = []
    lines = [line.rstrip("\r") for line in diff.split("\n")]
    for line in lines:
        if line.startswith("diff --git "):
            paths += _git_header_names(line[len("diff --git ") :])
        for head in ("rename from ", "rename to ", "copy from ", "copy to "):
            if line.startswith(head):
                paths.append(unidiff._unquote(line[len(head) :]))
    with contextlib.suppress(unidiff.DiffError):
        paths += unidiff.touched_files(diff)
    return list(dict.fromkeys(paths))


def _git_header_names(rest: str) -> list[str]:
    """Both names of 'diff --git a/x b/y', also when they differ (split at " b/")."""
    same = [p for p in unidiff._git_names(rest) if p]
    if same:
        return same
    old, sep, new = rest.partition(" b/")
    names = [unidiff._unquote(old).removeprefix("a/"), unidiff._unquote("b/" + new)[2:]]
    return [n for n in names if n] if sep else []


def check_diff(project: str | None, diff: str, where: str = "") -> None:
    """Every path a planned diff names is safe (whether it parses is judged elsewhere)."""
    for path in diff_paths(diff):
        check_project_path(project, path, where)


def milestone_paths(milestone: Milestone) -> Iterable[tuple[str, str]]:
    """(where, path) for every path a milestone stores, diffs apart: files, intents, tests."""
    for path in milestone["files"]:
        yield f"{milestone['id']} files", path
    for intent in milestone["code_intents"]:
        if intent["file"]:
            yield intent["id"], intent["file"]
    for path in milestone["tests"]["files"]:
        yield f"{milestone['id']} tests", path
    for change in milestone["code_changes"]:
        if change["file"]:
            yield change["id"], change["file"]


def check_milestone(project: str, milestone: Milestone) -> None:
    """Before a milestone is applied or committed: every path it stores, and every path of
    its diffs, is safe in the project (exit 3 naming the id and the path, nothing written)."""
    for where, path in milestone_paths(milestone):
        check_project_path(project, path, where)
    for change in milestone["code_changes"]:
        check_diff(project, change["diff"], change["id"])
