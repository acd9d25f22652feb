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
from state.vocab import SessionStatus as S

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.storage.documents import Session

_FORWARD: dict[S, set[S]] = {
    S.DISCOVERY: {S.DESIGN},
    S.DESIGN: {S.DETAILING, S.REVIEW},
    S.DETAILING: {S.REVIEW},
    S.REVIEW: {S.APPROVED, S.DESIGN},
    S.APPROVED: {S.EXECUTING},
    # The person accepts the result, or asks for changes: an amendment reopens planning.
    S.EXECUTING: {S.COMPLETED, S.RESULT_REVIEW},
    S.RESULT_REVIEW: {S.COMPLETED, S.DESIGN},
}
# Where each status may go; cancelled and failed from every status that is not closed.
TRANSITIONS: dict[S, frozenset[S]] = {
    old: frozenset() if old in CLOSED else frozenset(_FORWARD[old] | ENDED) for old in S
}
# The statuses an amendment may be opened from: a plan the person approved and that is not
# closed. result_review: the person asked for changes after execution (plan result).
AMENDABLE = frozenset({S.APPROVED, S.EXECUTING, S.RESULT_REVIEW})


def allowed(old: S, new: S) -> bool:
    return old not in CLOSED and (old == new or new in TRANSITIONS[old])


def listed(statuses: frozenset[S]) -> str:
    """The statuses in lifecycle order, as a message names them."""
    return ", ".join(s for s in S if s in statuses)


def transition(session: Session, new: S) -> None:
    """Move the session to status `new`, or refuse (exit 4) when the lifecycle does not allow it."""
    old = session["status"]
    if not allowed(old, new):
        raise Refused(
            f"session.json: status {old} cannot become {new} "
            f"(from {old}: {listed(TRANSITIONS[old]) or 'nothing, it is final'})"
        )
    session["status"] = new


def reopen(session: Session, new: S = S.DESIGN) -> S:
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
            f"(status {listed(AMENDABLE)})"
        )
