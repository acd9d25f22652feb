"""Where sessions live: the project root, .planner/, ACTIVE and the state-dir lookup.

Standard library only and no pathlib (its import costs more than this whole module): the
guard hook imports it without the package's dependencies.
"""

from __future__ import annotations

import os

PLANNER_DIR = ".planner"
ACTIVE_FILE = "ACTIVE"
STATE_DIR_ENV = "PLANNER_STATE_DIR"

# Session statuses during which planning is read-only (PRODUCT.md §6.5, §7).
PLANNING_STATUSES = frozenset({"discovery", "design", "detailing", "review"})


def project_root(cwd: str | None = None) -> str:
    """The git root above cwd (a `.git` entry, directory or file), else cwd itself."""
    start = os.path.abspath(cwd or os.getcwd())
    here = start
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return start
        here = parent


def planner_home(cwd: str | None = None) -> str:
    """The `.planner/` directory of the project that holds cwd."""
    return os.path.join(project_root(cwd), PLANNER_DIR)


def active_session_dir(cwd: str | None = None) -> str | None:
    """The session `.planner/ACTIVE` names, or None when there is no ACTIVE file."""
    home = planner_home(cwd)
    try:
        with open(os.path.join(home, ACTIVE_FILE), encoding="utf-8") as f:
            name = f.read().strip()
    except OSError:
        return None
    if not name:
        return None
    return name if os.path.isabs(name) else os.path.join(home, name)


def resolve_state_dir(
    explicit: str | None = None,
    cwd: str | None = None,
    env: dict[str, str] | os._Environ[str] | None = None,
) -> str | None:
    """`--state-dir`, else `$PLANNER_STATE_DIR`, else `.planner/ACTIVE`; None if none is set."""
    base = os.path.abspath(cwd or os.getcwd())
    if explicit:
        return os.path.normpath(os.path.join(base, explicit))
    from_env = (os.environ if env is None else env).get(STATE_DIR_ENV)
    if from_env:
        return os.path.normpath(os.path.join(base, from_env))
    return active_session_dir(base)
