"""Where an operation in state/ sends a session, by workflow and step *name*, and the step a
routing leads to once the tables named its number (`StepRef`), which state/ holds and stores.

state/ knows no step numbers and renders no command lines: the engine resolves these names
through the workflow tables (shared/status.py settle), so renumbering a table cannot break a
route, and shared/routing.py renders a StepRef's command line where it is printed (docs/
design.md, "Routes by name"). tests/shared/test_routes.py resolves every one of them.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from state.vocab import WorkflowName


class Route(NamedTuple):
    workflow: str
    step: str


class StepRef(NamedTuple):
    """A step a routing leads to: its workflow and step name, the number its table gives that
    name, and the options it runs with. session.json stores it as a StepRecord (models.py),
    without the directory, which is the session's own."""

    workflow: str
    name: str
    number: int
    state_dir: str
    qr_status: Literal["pass", "fail"] | None = None


# Where a routing leads: a step, or another command (`plan review approve …`), never parsed.
Target = StepRef | list[str]

# An approved plan is executed from the executor's first step.
EXECUTE = Route(WorkflowName.EXECUTOR.value, "init")
# An amendment plans again where a rejection would: the planner's final gate routes the rework.
AMEND = Route(WorkflowName.PLANNER.value, "plan-docs-qr-gate")

ALL = (EXECUTE, AMEND)


def upgrade(session: Any) -> None:
    """session.json as an older planner wrote it, its routes as command lines (`routing`, a
    QR loop's `gate`), in the form it has now: the one place a stored command line is read,
    before the schema check (state/storage/store.py parse)."""
    if isinstance(session, dict) and isinstance(session.get("routing"), dict):
        routing = session["routing"]
        session["routing"] = {k: _record(v) for k, v in routing.items()}
    loops = session.get("qr") if isinstance(session, dict) else None
    for loop in loops.values() if isinstance(loops, dict) else ():
        if isinstance(loop, dict):
            loop["gate"] = _record(loop.get("gate"))


def _record(value: Any) -> Any:
    """`[workflow, "--step", N, "--state-dir", D, ("--qr-status", V)]` as a StepRecord; None
    for another command (`plan review approve …`: no reader runs it) or none ([])."""
    if not isinstance(value, list):
        return value
    if len(value) < 3 or value[1] != "--step" or not str(value[2]).isdigit():
        return None
    status = value[value.index("--qr-status") + 1] if "--qr-status" in value[3:-1] else None
    return {"workflow": value[0], "name": None, "number": int(value[2]), "qr_status": status}
