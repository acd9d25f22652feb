"""Operations on execution.json: milestones started and done, evidence, tests run, deviations.

Each operation is a function (tx, a): the open transaction and the arguments by name
(repeatable ones as lists); it returns the ids it created. cli/commands/ declares the
arguments; state/ parses none.
"""

from __future__ import annotations

from state import clock
from state.errors import PreconditionFailed, UsageError
from state.storage import schema

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from state.storage.store import Transaction


def run_of(tx: Transaction, milestone: str) -> dict[str, Any]:
    """The milestone's record in execution.json, which executor step 1 created."""
    if not tx.store.exists("execution"):
        raise PreconditionFailed(
            f"{tx.store.path('execution')}: not found (execution starts with executor --step 1)"
        )
    runs: list[dict[str, Any]] = tx.edit("execution")["milestones"]
    for run in runs:
        if run["id"] == milestone:
            return run
    raise UsageError(f"{tx.store.path('execution')}: no milestone {milestone} in the plan")


def exec_start(tx: Transaction, a: dict[str, Any]) -> None:
    """Mark a milestone in progress."""
    run = run_of(tx, a["id"])
    if run["status"] == "done":
        raise UsageError(f"exec start: {a['id']} is already done")
    run.update(status="in_progress", started_at=run["started_at"] or clock.now())


def exec_done(tx: Transaction, a: dict[str, Any]) -> None:
    """Mark a milestone done, with the evidence and the tests that were run."""
    run = run_of(tx, a["id"])
    run.update(status="done", started_at=run["started_at"] or clock.now(), done_at=clock.now())
    run["evidence"] += a["evidence"]
    run["tests_run"] += [t for t in a["ran"] if t not in run["tests_run"]]
    ran = tx.docs["execution"]["tests_run"]
    ran += [t for t in a["ran"] if t not in ran]
    tests = f"; tests run: {', '.join(run['tests_run'])}" if run["tests_run"] else ""
    tx.tell(f"{a['id']} done{tests}")


def exec_deviation(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Record where the implementation departs from the plan, and why."""
    run_of(tx, a["milestone"])
    deviations = tx.docs["execution"]["deviations"]
    item = {
        **schema.defaults("execution", "Deviation"),
        "id": tx.new_id("execution", "DV", deviations),
        "milestone": a["milestone"],
        "description": a["description"],
        "at": clock.now(),
    }
    deviations.append(item)
    return [item["id"]]
