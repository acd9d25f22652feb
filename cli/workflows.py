"""The workflows the entry points hand the engine (the layers, docs/design.md: shared/ never imports
skills/). Each is loaded when first used, so `plan status` loads only the session's table."""

from __future__ import annotations

from shared.registry import register

TYPE_CHECKING = False
if TYPE_CHECKING:
    from shared.workflow import Workflow


def planner() -> Workflow:
    from skills.planner.steps import PLANNER

    return PLANNER


def executor() -> Workflow:
    from skills.executor.steps import EXECUTOR

    return EXECUTOR


def register_all() -> None:
    register("planner", planner)
    register("executor", executor)
