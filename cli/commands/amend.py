"""`plan amend`: reopen an approved plan for one round of changes (state/ops/amend_ops.py)."""

from __future__ import annotations

import click

from cli.base import TEXT, Operation
from state.ops import amend_ops


class Amend(Operation):
    runs_next = True  # the rework's first step follows in the same call


@click.command("amend", cls=Amend, op=amend_ops.plan_amend)
@click.option("--reason", required=True, type=TEXT, help="Why the approved plan must change.")
@click.option(
    "--milestone",
    multiple=True,
    metavar="M-n",
    help="A milestone not yet committed to reopen (repeatable); new milestones are open anyway.",
)
def amend_command() -> None:
    """Open an amendment round on an approved, executing or result-review plan: new milestones
    and the named ones not yet committed become editable, the planner reworks them through its
    gates, and the person re-approves (committed milestones stay done). The rework's first
    step follows in the same call (with --json: its NEXT line only)."""
