"""Amendments: reopen an approved plan for what the amendment touches (a living plan).

stand-in: replaced by branch amend. Only `open_amendment`'s signature and record are kept
here, so that a request for changes on the result (state/result_ops.py) can open one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from state import clock
from state.lifecycle import transition

if TYPE_CHECKING:
    from state.store import Transaction


def open_amendment(
    tx: Transaction, *, reason: str, task: str | None = None, milestones: Sequence[str] = ()
) -> dict[str, Any]:
    """Record amendment round N and send the session back to planning (design)."""
    session = tx.edit("session")
    record = {
        "round": len(session["amendments"]) + 1,
        "reason": reason,
        "task": task,
        "opened_at": clock.now(),
        "from_status": session["status"],
        "milestones": list(milestones),
        "approval": session["approval"],
    }
    session["amendments"].append(record)
    transition(session, "design")
    session.update(workflow="planner", step=2)  # its routing names step 3, the design
    return record
