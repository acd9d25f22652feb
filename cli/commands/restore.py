"""`plan restore`: plan.json put back as the last `plan` command wrote it
(state/ops/restore_ops.py)."""

from __future__ import annotations

import click

from cli.base import Operation
from state.ops import restore_ops


@click.command("restore", cls=Operation, op=restore_ops.plan_restore)
def restore_command() -> None:
    """Put plan.json back as the last plan command wrote it, after an edit made outside plan
    commands: once approved, the approved plan (from history/, else the copy HEAD holds).
    To change an approved plan: plan restore, then plan amend."""
