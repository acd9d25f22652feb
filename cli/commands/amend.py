"""`plan amend`: reopen an approved plan for one round of changes (state/ops/amend_ops.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from cli.base import TEXT, Operation
from state.ops import amend_ops

if TYPE_CHECKING:
    from state.storage.store import Transaction


@click.command("amend", cls=Operation)
@click.option("--reason", required=True, type=TEXT, help="Why the approved plan must change.")
@click.option(
    "--milestone",
    multiple=True,
    metavar="M-n",
    help="A milestone not yet committed to reopen (repeatable); new milestones are open anyway.",
)
def amend_command(tx: Transaction, a: dict[str, Any]) -> None:
    """Open an amendment round on an approved, executing or result-review plan: new milestones
    and the named ones not yet committed become editable, the planner reworks them through its
    gates, and the person re-approves (committed milestones stay done)."""
    amend_ops.plan_amend(tx, a)
