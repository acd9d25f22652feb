"""Where sessions live: the project root, .planner/, ACTIVE and the state-dir lookup.

No pathlib: its import costs more than this whole module.
"""

from __future__ import annotations

import os

from state.errors import DamagedFile, UsageError
from state.project import project_root as project_root  # part of this module's interface

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.rules.session_store import Store

PLANNER_DIR = ".planner"
ACTIVE_FILE = "ACTIVE"
STATE_DIR_ENV = "PLANNER_STATE_DIR"


def planner_home(cwd: str | None = None) -> str:
    """The `.planner/` directory of the project that holds cwd."""
    return os.path.join(project_root(cwd), PLANNER_DIR)


def active_session_dir(cwd: str | None = None) -> str | None:
    """The session `.planner/ACTIVE` names, or None when there is no ACTIVE file. An ACTIVE
    that cannot be read, is not UTF-8, or names a directory outside this project's .planner/
    raises DamagedFile (exit 3). The hooks, standard library only and failing closed, read it
    their own way (hooks/hookstate.py find_session; docs/design.md, "Layers")."""
    home = planner_home(cwd)
    active = os.path.join(home, ACTIVE_FILE)
    name = _read_active(active)
    if not name:
        return None
    found = name if os.path.isabs(name) else os.path.join(home, name)
    if os.path.realpath(os.path.dirname(os.path.normpath(found))) != os.path.realpath(home):
        raise DamagedFile(
            f"{active}: names {found!r}, not a session of this project's {home}; fix or "
            "remove ACTIVE (plan resume ID)"
        )
    return found


def _read_active(active: str) -> str:
    try:
        with open(active, "rb") as f:
            raw = f.read(4096)
    except FileNotFoundError:
        return ""
    except OSError as e:
        raise DamagedFile(f"{active}: cannot be read ({e.strerror})") from None
    try:
        return raw.decode("utf-8").strip()
    except UnicodeDecodeError as e:
        raise DamagedFile(
            f"{active}: not valid UTF-8 ({e.reason} at byte {e.start}); fix or remove it "
            "(plan resume ID)"
        ) from None


def resolve_state_dir(explicit: str | None = None) -> str | None:
    """`--state-dir`, else `$PLANNER_STATE_DIR`, else `.planner/ACTIVE`; None if none is set."""
    base = os.path.abspath(os.getcwd())
    if explicit:
        return os.path.normpath(os.path.join(base, explicit))
    from_env = os.environ.get(STATE_DIR_ENV)
    if from_env:
        return os.path.normpath(os.path.join(base, from_env))
    return active_session_dir(base)


def open_session(state_dir: str | None = None) -> Store:
    """The session's Store, with anything that timed out applied.

    UsageError (exit 2) when no session is found.
    """
    # the store, the workflows (settle) and the timeouts: only opening a session needs them,
    # not `plan list` or CI's lookup of ACTIVE, which import this module too
    from shared.status import settle
    from state.ops.timeouts import expire
    from state.rules.session_store import Store

    found = resolve_state_dir(state_dir)
    if not found:
        raise UsageError(
            "no session found: start one with `planner --step 1 --task TEXT` "
            "or pass --state-dir DIR"
        )
    store = Store(found)
    store.before_commit = settle
    home = os.path.dirname(os.path.normpath(found))
    if os.path.basename(home) == PLANNER_DIR:
        recover_starts(home)
    if not store.exists("session"):
        raise UsageError(f"{found}: no session here (session.json not found)")
    store.recover()
    expire(store)
    return store


SAID = {
    "removed": "a session start killed before the session was made: removed",
    "finished": "a killed command's committed write: finished",
    "discarded": "a killed command's unfinished write: discarded (the session is as before it)",
}


def recover_starts(home: str) -> None:
    """Finish or discard what killed commands left in any session of the project (a start
    nobody resumes: state/ops/session.py recover_starts); one line on stderr for each."""
    import sys

    from state.ops.session import recover_starts as recover

    for path, what in recover(home):
        sys.stderr.write(f"planner: {path}: {SAID[what]}\n")
