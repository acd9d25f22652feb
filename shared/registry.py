"""The workflows by name, as the entry points in cli/ register them: a function that returns
the workflow, so a process loads only the tables it uses, and a `plan` command that moves no
session never loads shared/workflow.py (docs/design.md, "Process time"), which reads them
(`registered`, `workflow_named`)."""

from __future__ import annotations

from collections.abc import Callable

LOADERS: dict[str, Callable[[], object]] = {}


def register(name: str, load: Callable[[], object]) -> None:
    """Make workflow `name` known to the engine: `load` returns its Workflow."""
    LOADERS[name] = load
