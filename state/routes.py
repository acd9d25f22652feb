"""Where an operation in state/ sends a session, by workflow and step *name*.

state/ knows no step numbers and no command lines: the engine resolves these names through
the workflow tables (shared/status.py settle), so renumbering a table cannot break a route
(docs/design.md, "Routes by name"). tests/shared/test_routes.py resolves every one of them.
"""

from __future__ import annotations

from typing import NamedTuple

from state.vocab import WorkflowName


class Route(NamedTuple):
    workflow: str
    step: str


# An approved plan is executed from the executor's first step.
EXECUTE = Route(WorkflowName.EXECUTOR.value, "init")
# An amendment plans again where a rejection would: the planner's final gate routes the rework.
AMEND = Route(WorkflowName.PLANNER.value, "plan-docs-qr-gate")

ALL = (EXECUTE, AMEND)
