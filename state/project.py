"""The project a session belongs to: the git root above a directory, or the one holding its
store.

Standard library only: the guard hook finds sessions through shared/paths.py, which uses it.
"""

from __future__ import annotations

import os

from state.errors import PreconditionFailed, Refused

PLANNER_DIR = ".planner"


def project_root(cwd: str | None = None) -> str:
    """The git root above cwd (a `.git` entry, directory or file), else cwd itself; never a
    repository inside a `.planner/` (Refused, exit 4)."""
    start = os.path.abspath(cwd or os.getcwd())
    root = git_root(start)
    if root is None:
        return start
    refuse_agent_written(root)
    return root


def refuse_agent_written(root: str) -> None:
    """Refused when `root` is inside a `.planner/`: a session's worktree and scratch dir are
    written by the agent while it plans, so a repository there is the agent's, and its config
    (filters, fsmonitor, hooks) would run outside the sandbox with the person's rights
    (docs/design.md, "Agent-written data is never code")."""
    parts = os.path.realpath(root).split(os.sep)
    if PLANNER_DIR in parts:
        inside = os.sep.join(parts[: parts.index(PLANNER_DIR) + 1])
        raise Refused(
            f"{root}: inside {inside}/, where the agent writes; planner never takes a"
            " repository there for a project (run it from the project's own directory)"
        )


def git_root(start: str) -> str | None:
    """The nearest directory from `start` up holding a `.git` entry, or None."""
    here = os.path.abspath(start)
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def session_project(state_dir: str) -> str:
    """The project a session belongs to: the git work tree whose `.planner/` holds the session
    directory. Never session.json's `project_root`, which is data a copy or an edit carries
    along: a copied project's session applies into the copy."""
    session = os.path.abspath(state_dir)
    home = os.path.dirname(session)
    project = os.path.dirname(home)
    if os.path.basename(home) != ".planner" or not os.path.lexists(os.path.join(project, ".git")):
        raise PreconditionFailed(
            f"{session}: the session is not inside a project's .planner/ (a git work tree's "
            "<root>/.planner/<id>/); it applies only into the project that holds it"
        )
    refuse_agent_written(project)  # a "session" inside another session's worktree
    return project
