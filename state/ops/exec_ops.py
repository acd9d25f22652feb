"""Operations on execution.json: milestones started and done, evidence, tests run, deviations."""

from __future__ import annotations

from state import clock
from state.errors import PreconditionFailed, UsageError
from state.vocab import RunStatus

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.rules.session_store import Transaction
    from state.storage.documents import Deviation, MilestoneRun


def commits_of(run: MilestoneRun | None) -> list[str]:
    """The milestone's commits as execution.json records them: its own, then its fix commits."""
    return [s for s in (run["commit"], *run["fix_commits"]) if s] if run else []


def new_run(milestone: str) -> MilestoneRun:
    """A milestone's record in execution.json before anything happened to it."""
    return {
        "id": milestone,
        "status": RunStatus.PENDING,
        "started_at": None,
        "done_at": None,
        "evidence": [],
        "tests_run": [],
        "applied_at": None,
        "commit": None,
        "fix_commits": [],
        "dirty_at_apply": [],
        "overlap_question": None,
    }


def run_of(tx: Transaction, milestone: str) -> MilestoneRun:
    """The milestone's record in execution.json, which executor step 1 created."""
    if not tx.store.exists("execution"):
        raise PreconditionFailed(
            f"{tx.store.path('execution')}: not found (execution starts with executor --step 1)"
        )
    for run in tx.edit("execution")["milestones"]:
        if run["id"] == milestone:
            return run
    raise UsageError(f"{tx.store.path('execution')}: no milestone {milestone} in the plan")


def exec_start(tx: Transaction, *, id: str) -> None:
    """Mark a milestone in progress."""
    run = run_of(tx, id)
    if run["status"] == RunStatus.DONE:
        raise UsageError(f"exec start: {id} is already done")
    run["status"] = RunStatus.IN_PROGRESS
    run["started_at"] = run["started_at"] or clock.now()


def exec_done(tx: Transaction, *, id: str, evidence: list[str], ran: list[str]) -> None:
    """Mark a milestone done, with the evidence and the tests that were run."""
    run = run_of(tx, id)
    run["status"] = RunStatus.DONE
    run["started_at"] = run["started_at"] or clock.now()
    run["done_at"] = clock.now()
    run["evidence"] += evidence
    run["tests_run"] += [t for t in ran if t not in run["tests_run"]]
    everything = tx.edit("execution")["tests_run"]
    everything += [t for t in ran if t not in everything]
    tests = f"; tests run: {', '.join(run['tests_run'])}" if run["tests_run"] else ""
    tx.tell(f"{id} done{tests}")


def exec_deviation(tx: Transaction, *, milestone: str, description: str) -> list[str]:
    """Record where the implementation departs from the plan, and why."""
    run_of(tx, milestone)
    return [add_deviation(tx, milestone, description)["id"]]


def add_deviation(
    tx: Transaction, milestone: str, description: str, commit: str | None = None
) -> Deviation:
    """A new deviation of `milestone` in execution.json (declared, or found in its commit)."""
    deviations = tx.edit("execution")["deviations"]
    item: Deviation = {
        "id": tx.new_id("execution", "DV", deviations),
        "milestone": milestone,
        "description": description,
        "at": clock.now(),
        "commit": commit,
        "significant": [],
        "question": None,
    }
    deviations.append(item)
    return item
