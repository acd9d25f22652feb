"""The two workflows, by the name their console script has."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def workflows(name: str) -> tuple[Callable[[], Any], Callable[..., int] | None]:
    """(load the workflow, start a session at step 1 or None) for "planner" or "executor"."""
    if name == "planner":
        from skills.planner.steps import load, start

        return load, start
    from skills.executor.steps import load as load_executor

    return load_executor, None
