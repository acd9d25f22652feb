"""Session statuses and the only transitions between them.

discovery → design → detailing → review → approved → executing → completed; an interactive
session passes through result_review before completed (a request for changes opens an
amendment: back to design); a rejection sends review back to design; quick depth goes
from design straight to review; cancelled and failed are reachable from every status that
is not final.
"""

from __future__ import annotations

from state.errors import Refused

TRANSITIONS: dict[str, frozenset[str]] = {
    "discovery": frozenset({"design"}),
    "design": frozenset({"detailing", "review"}),
    "detailing": frozenset({"review"}),
    "review": frozenset({"approved", "design"}),
    "approved": frozenset({"executing"}),
    "executing": frozenset({"completed", "result_review"}),
    # The person accepts the result, or asks for changes: an amendment reopens planning.
    "result_review": frozenset({"completed", "design"}),
    "completed": frozenset(),
    "cancelled": frozenset(),
    "failed": frozenset(),
}
FINAL = frozenset({"completed", "cancelled", "failed"})


def allowed(old: str, new: str) -> bool:
    if old in FINAL:
        return False
    if old == new:
        return True
    if new in ("cancelled", "failed"):
        return old not in FINAL
    return new in TRANSITIONS[old]


def transition(session: dict, new: str) -> None:
    """Move the session to status `new`, or refuse (exit 4) when the lifecycle does not allow it."""
    old = session["status"]
    if not allowed(old, new):
        nexts = ", ".join(
            sorted(
                TRANSITIONS[old] | ({"cancelled", "failed"} - FINAL if old not in FINAL else set())
            )
        )
        raise Refused(
            f"session.json: status {old} cannot become {new} "
            f"(from {old}: {nexts or 'nothing, it is final'})"
        )
    session["status"] = new
