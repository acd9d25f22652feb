"""`plan rebase`: carry the session onto HEAD after the history it relied on was rewritten
(state/ops/rebase_ops.py)."""

from __future__ import annotations

import click

from cli.base import Operation
from state.ops import rebase_ops


@click.command("rebase", cls=Operation, op=rebase_ops.plan_rebase)
@click.option(
    "--drop-worktree",
    is_flag=True,
    help="While planning: remove the scratch worktree made from the old base (capture first).",
)
def rebase_command() -> None:
    """Carry the plan onto HEAD: the base commit becomes HEAD (or, once milestones are
    committed, the parent of the oldest), milestone commits rewritten by an amend or a rebase
    are found again by their trailers and recorded, and every planned diff not yet committed
    is checked against the new base. A diff that no longer applies is named with the
    amendment that changes it (the person approves it again); rebase changes no planned
    diff. Refused (exit 3) during a merge or rebase, or when HEAD does not resolve."""
