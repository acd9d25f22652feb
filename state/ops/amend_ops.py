"""Amendments: a living plan. `plan amend` reopens an approved plan for one round of changes
(what a round may change, and the chain of approvals: state/rules/amendments.py;
docs/design.md, "Amendments")."""

from __future__ import annotations

from state import clock, routes
from state.errors import PreconditionFailed, Refused, UsageError
from state.ops.review_ops import reopen_reviews
from state.rules.amendments import NEW_MILESTONE, committed, runs_by_id
from state.rules.lifecycle import check_amendable, reopen
from state.validation.limits import FEEDBACK_MAX, REASON_MAX, check_text
from state.vocab import LoopState, Phase, RunStatus
from state.vocab import SessionStatus as S

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from state.rules.session_store import Transaction
    from state.storage.documents import Amendment, Session

IMPL_PHASES = (Phase.IMPL_CODE, Phase.IMPL_DOCS)


def open_amendment(
    tx: Transaction, *, reason: str, task: str | None = None, milestones: Sequence[str] = ()
) -> Amendment:
    """Open amendment round N on an approved, executing or result-review session: the plan is
    unfrozen for what the round touches (new milestones and `milestones`, none committed), the
    session goes back to design, and the approval it amends is kept in the record."""
    check_text("reason", reason, REASON_MAX, field=True)
    if not (reason or "").strip():
        raise UsageError(
            "reason: may not be empty (why the approved plan must change)", field="reason"
        )
    check_text("the task", task, FEEDBACK_MAX)
    session = tx.edit("session")
    status = session["status"]
    reopened = _reopenable(tx, status, milestones)
    approval = session["approval"]
    if approval is None:
        raise PreconditionFailed(
            f"{tx.store.path('session')}: status {status} but no approval on record "
            "(damaged? see plan verify)"
        )
    from_status = reopen(session, S.DESIGN)
    record: Amendment = {
        "round": len(session["amendments"]) + 1,
        "reason": reason.strip(),
        "task": task.strip() if task and task.strip() else None,
        "opened_at": clock.now(),
        "from_status": from_status,
        "milestones": reopened,
        "approval": approval,
        "approved": None,
    }
    session["amendments"].append(record)
    # The session plans again: no approval until the person re-approves (the record above
    # keeps the one amended); the planner's final gate routes the rework like a rejection.
    session.update({"approval": None, "updated_at": record["opened_at"]})
    tx.move_to = routes.AMEND
    tx.edit("plan")["frozen_at"] = None
    _reopen_loops(tx, session, reopened)
    _reset_runs(tx, reopened)
    tx.note(
        amendment=record["round"], reason=record["reason"], milestones=reopened, from_status=status
    )
    named = f", reopening {', '.join(reopened)}" if reopened else ""
    tx.tell(
        f"amendment round {record['round']} opened{named}: back to planning; the person "
        "approves the amended plan before it is carried out"
    )
    tx.routed = True
    return record


def plan_amend(tx: Transaction, *, reason: str, milestone: list[str]) -> None:
    """`plan amend --reason R [--milestone M-n]...` (the operation the CLI and plan apply run)."""
    open_amendment(tx, reason=reason, milestones=milestone)


def _reopenable(tx: Transaction, status: str, milestones: Sequence[str]) -> list[str]:
    """The named milestones, once each exists and none is committed (or applied)."""
    check_amendable(status)
    plan = tx.read("plan")
    known = {m["id"] for m in plan["milestones"]}
    runs = runs_by_id(tx.read_or_none("execution"))
    reopened: list[str] = []
    for name in milestones:
        mid = name.strip().upper()
        if mid not in known:
            raise UsageError(
                f"milestone {name}: plan.json has no such milestone "
                f"({', '.join(sorted(known)) or 'none'})",
                field="milestone",
            )
        run = runs.get(mid)
        if run and committed(run):
            raise Refused(f"{mid} is committed: {NEW_MILESTONE}")
        if run and run["applied_at"]:
            raise Refused(
                f"{mid} is applied to the project but not committed: commit it (plan exec "
                "commit) and correct it in a new milestone, or revert its files first"
            )
        if mid not in reopened:
            reopened.append(mid)
    return reopened


def _reopen_loops(tx: Transaction, session: Session, reopened: list[str]) -> None:
    """The planning reviews run again from design (state/ops/review_ops.reopen_reviews: PASS
    verdicts stand but on the reopened milestones; new and reopened milestones need items of
    their own), and so do the executor's, which judge the new work."""
    reopen_reviews(tx, session, Phase.PLAN_DESIGN, reopened, reopened)
    for phase in IMPL_PHASES:
        if phase in session["qr"]:
            session["qr"][phase].update({"state": LoopState.INITIAL, "iteration": 1, "gate": None})


def _reset_runs(tx: Transaction, reopened: list[str]) -> None:
    """A reopened milestone starts over in execution.json (its plan changes)."""
    execution = tx.read_or_none("execution")
    if execution is None or not reopened:
        return
    for run in tx.edit("execution")["milestones"]:
        if run["id"] in reopened:
            run.update(
                {
                    "status": RunStatus.PENDING,
                    "started_at": None,
                    "done_at": None,
                    "evidence": [],
                    "tests_run": [],
                }
            )
