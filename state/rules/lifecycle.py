"""Session statuses and the only transitions between them.

discovery → design → detailing → review → approved → executing → completed; an interactive
session passes through result_review before completed (a request for changes opens an
amendment: back to design); a rejection sends review back to design; quick depth goes
from design straight to review; cancelled and failed are reachable from every status that
is not final.
"""

from __future__ import annotations

from state.errors import Refused
from state.vocab import CLOSED, ENDED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.storage.documents import Session
    from state.storage.models import SessionStatus

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
FINAL = CLOSED
# The statuses an amendment may be opened from: a plan the person approved and that is not
# closed. result_review: the person asked for changes after execution (plan result).
AMENDABLE = frozenset({"approved", "executing", "result_review"})


def allowed(old: str, new: str) -> bool:
    if old in FINAL:
        return False
    if old == new:
        return True
    if new in ENDED:
        return old not in FINAL
    return new in TRANSITIONS[old]


def transition(session: Session, new: SessionStatus) -> None:
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


def reopen(session: Session, new: SessionStatus = "design") -> SessionStatus:
    """Move an approved session back to planning for an amendment, or refuse (exit 4) when
    its status is not one an amendment may start from; the status it had."""
    old = session["status"]
    check_amendable(old)
    session["status"] = new
    return old


def check_amendable(status: str) -> None:
    """Refused (exit 4) unless an amendment may start from `status`."""
    if status not in AMENDABLE:
        raise Refused(
            f"session.json: status {status}: only an approved plan can be amended "
            f"(status {', '.join(sorted(AMENDABLE))})"
        )
