"""`plan restore`: plan.json put back as the last `plan` command wrote it (once approved, the
approved content), from history/ or HEAD's copy, after an edit made outside `plan` commands
(docs/design.md, "The world moves": plan.json edited by hand).
"""

from __future__ import annotations

import os

from state.errors import PlannerError, PreconditionFailed, Refused
from state.project import session_project
from state.rules.amendments import open_amendment
from state.storage.content import plan_hash
from state.vocab import CLOSED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.rules.session_store import Transaction
    from state.storage.documents import Plan


def plan_restore(tx: Transaction) -> None:
    """Put back plan.json as recorded; see the module."""
    from state.storage.store import dumps, read_bytes

    session = tx.read("session")
    if session["status"] in CLOSED:
        raise Refused(
            f"{tx.store.path('session')}: the session is {session['status']}; nothing to restore"
        )
    path = tx.store.path("plan")
    current = read_bytes(path)
    approval = session["approval"]
    want = approval["sha256"] if approval and open_amendment(session) is None else None
    found = _from_history(tx, want) or _from_head(tx, want)
    if found is None:
        what = "the approved plan.json" if want else "a recorded plan.json"
        raise PreconditionFailed(
            f"{path}: no copy of {what}: history/ has none and HEAD does not hold it "
            "(fix: put the file back from a copy of your own, or plan cancel)"
        )
    where, plan = found
    if want and approval and not plan["frozen_at"]:
        plan["frozen_at"] = approval["at"]  # the approval froze it (not in the hash)
    if dumps(plan) == current:
        tx.tell(f"{path}: as {where} holds it; nothing to restore")
        return
    tx.restore("plan", plan, current)
    tx.note(restored_from=where)
    tx.tell(f"{path}: restored from {where}" + (" (the approved plan)" if want else ""))
    if want:
        tx.tell("to change the approved plan: plan amend --reason '…' (the person approves)")


def _from_history(tx: Transaction, want: str | None) -> tuple[str, Plan] | None:
    try:
        for entry in reversed(tx.store.history()):  # the newest: the approval's freeze
            plan = tx.store.revision(entry["rev"])
            if want is None or plan_hash(plan) == want:
                return f"history/{entry['rev']}", plan
    except PlannerError:  # missing or damaged: HEAD's copy may serve
        pass
    return None


def _from_head(tx: Transaction, want: str | None) -> tuple[str, Plan] | None:
    from state.repo import git
    from state.storage.store import load

    project = session_project(tx.store.dir)
    rel = os.path.relpath(tx.store.path("plan"), project).replace(os.sep, "/")
    done = git.run(project, "show", f"HEAD:{rel}")
    if done.returncode != 0:
        return None
    try:
        plan = load(f"HEAD:{rel}", "plan", done.stdout)
    except PlannerError:
        return None
    if want and plan_hash(plan) != want:
        return None
    return f"HEAD:{rel}", plan
