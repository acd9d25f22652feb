"""Where an operation in state/ sends a session, by workflow and step *name*, and the step a
routing leads to once the tables gave its number (`StepRef`), which state/ holds and stores;
the tables resolve the names (docs/design.md, "Routes by name").
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from state.vocab import WorkflowName


class Route(NamedTuple):
    workflow: str
    step: str


class StepRef(NamedTuple):
    """A step a routing leads to: its workflow, its name and the number its table gives it,
    and the options it runs with (session.json stores it without the directory: StoredStep)."""

    workflow: str
    name: str
    number: int
    state_dir: str
    qr_status: Literal["pass", "fail"] | None = None


Target = StepRef | list[str]  # a step, or another command (`plan review approve …`)

# An approved plan is executed from the executor's first step.
EXECUTE = Route(WorkflowName.EXECUTOR.value, "init")
# An amendment plans again where a rejection would: the planner's final gate routes the rework.
AMEND = Route(WorkflowName.PLANNER.value, "plan-docs-qr-gate")

ALL = (EXECUTE, AMEND)


def upgrade(session: Any) -> None:
    """session.json as an older planner wrote it, as it is now: the last routing's command
    lines (the tables give it live) go, a QR loop's gate becomes a StoredStep. The one place a
    stored command line is read (state/storage/store.py parse, before the schema check)."""
    if not isinstance(session, dict):
        return  # not a document: the schema check says so
    session.pop("routing", None)
    loops = session.get("qr")
    for loop in loops.values() if isinstance(loops, dict) else ():
        gate = loop.get("gate") if isinstance(loop, dict) else None
        if isinstance(gate, list):  # [workflow, "--step", N, "--state-dir", D, "--qr-status", V]
            step = len(gate) == 7 and gate[1] == "--step" and str(gate[2]).isdigit()
            number = int(gate[2]) if step else 0
            record = {"workflow": gate[0] if step else "", "name": None, "number": number}
            loop["gate"] = {**record, "qr_status": gate[6]} if step else None
