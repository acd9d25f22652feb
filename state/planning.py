"""Nothing executes while a plan is being made: `plan exec …` is refused while any session of
the project is planning, whichever session its --state-dir names (docs/design.md).

A session counts as settled only when its status says so; an unknown status or a
session.json that cannot be read counts as planning (damage never lowers protection).
"""

from __future__ import annotations

import json
import os

from state.errors import Refused
from state.lifecycle import TRANSITIONS
from state.store import APPROVED_STATUSES, CLOSED_STATUSES

SETTLED = APPROVED_STATUSES | CLOSED_STATUSES


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
    if known in SETTLED:
        return ""
    if known in TRANSITIONS:
        return f"is planning (status {status})"
    return f"has a status this version does not know ({json.dumps(status)[:40]})"


def homes(state_dir: str, cwd: str | None = None) -> list[str]:
    """The `.planner/` directories whose sessions count: the one holding the session, and the
    one of the project the command runs in (a session copied elsewhere names another)."""
    from state.project import project_root

    found = []
    parent = os.path.dirname(os.path.abspath(state_dir))
    if os.path.basename(parent) == ".planner":
        found.append(parent)
    here = os.path.join(project_root(cwd), ".planner")
    if os.path.realpath(here) not in {os.path.realpath(p) for p in found}:
        found.append(here)
    return found


def refuse_while_planning(state_dir: str, cwd: str | None = None) -> None:
    """Refused (exit 4) naming a session of the project that is planning, or may be."""
    for home in homes(state_dir, cwd):
        for name, why in unsettled(home):
            raise Refused(
                f"session {name} {why}; nothing is applied while a plan is being made in "
                f"this project ({home}; finish or cancel that session first: plan list)"
            )
