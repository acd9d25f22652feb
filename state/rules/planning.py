"""Nothing executes while a plan is being made: `plan exec …` is refused while any session of
the project is planning, whichever session its --state-dir names (docs/design.md).

A session counts as settled only when its status says so; an unknown status or a
session.json that cannot be read counts as planning (damage never lowers protection).
"""

from __future__ import annotations

import json
import os

from state.errors import Refused
from state.project import project_root
from state.rules.lifecycle import TRANSITIONS
from state.vocab import APPROVED, CLOSED


def unsettled(home: str) -> list[tuple[str, str]]:
    """(session id, why it may be planning) for each session under a `.planner/` directory."""
    try:
        names = sorted(os.listdir(home))
    except OSError:
        return []
    found = []
    for name in names:
        path = os.path.join(home, name, "session.json")
        if name.startswith(".") or not os.path.lexists(path):
            continue  # ACTIVE, .gitignore, a session still being built
        why = _why_planning(path)
        if why:
            found.append((name, why))
    return found


def _why_planning(path: str) -> str:
    try:
        with open(path, "rb") as f:
            status = json.loads(f.read(1 << 24)).get("status")
    except (OSError, ValueError, RecursionError, AttributeError) as e:
        return f"cannot be read (session.json: {type(e).__name__})"
    known = status if isinstance(status, str) else None  # a list or an object is no status
    if known in APPROVED | CLOSED:  # result_review too: nothing is being planned
        return ""
    if known in TRANSITIONS:
        return f"is planning (status {status})"
    return f"has a status this version does not know ({json.dumps(status)[:40]})"


def homes(state_dir: str, cwd: str | None = None) -> list[str]:
    """The `.planner/` directories whose sessions count: the one holding the session, the one
    of the project the command runs in (a session copied elsewhere names another), and those
    of every worktree of their git repository — a project planted anywhere whose `.git`
    points at the repository (a gitfile, a linked worktree) still meets its planning session.
    """
    projects = []
    parent = os.path.dirname(os.path.abspath(state_dir))
    if os.path.basename(parent) == ".planner":
        projects.append(os.path.dirname(parent))
    projects.append(project_root(cwd))
    found: list[str] = []
    for project in projects:
        for root in (project, *repository_roots(project)):
            home = os.path.join(root, ".planner")
            if os.path.realpath(home) not in {os.path.realpath(p) for p in found}:
                found.append(home)
    return found


def repository_roots(project: str) -> list[str]:
    """The work trees of the git repository `project/.git` belongs to (its main one and the
    linked ones), read from git's files: no git process, nothing planted can run."""
    dot = os.path.join(project, ".git")
    try:
        if os.path.isfile(dot):
            common = _gitfile_target(project, dot)
            commondir = os.path.join(common, "commondir")
            if os.path.isfile(commondir):
                common = os.path.normpath(os.path.join(common, _read_line(commondir)))
        elif os.path.isdir(dot):
            common = dot
        else:
            return []
        roots = [os.path.dirname(common)] if os.path.basename(common) == ".git" else []
        linked = os.path.join(common, "worktrees")
        for name in sorted(os.listdir(linked)) if os.path.isdir(linked) else ():
            gitdir = os.path.join(linked, name, "gitdir")
            if os.path.isfile(gitdir):
                roots.append(os.path.dirname(os.path.normpath(_read_line(gitdir))))
    except (OSError, ValueError):
        return []
    return roots


def _gitfile_target(project: str, path: str) -> str:
    return os.path.normpath(os.path.join(project, _read_line(path).partition(":")[2].strip()))


def _read_line(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read(4096).strip()


def refuse_while_planning(state_dir: str, cwd: str | None = None) -> None:
    """Refused (exit 4) naming a session of the project that is planning, or may be."""
    for home in homes(state_dir, cwd):
        for name, why in unsettled(home):
            raise Refused(
                f"session {name} {why}; nothing is applied while a plan is being made in "
                f"this project ({home}; finish or cancel that session first: plan list)"
            )
