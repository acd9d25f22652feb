"""`plan cancel | fail`: end a session (state/ops/review_ops.py); a module of their own, so
that `plan status` and `plan list` do not load the review operations."""

from __future__ import annotations

import click

from cli.base import TEXT, Operation
from state.ops import review_ops


@click.command("cancel", cls=Operation, op=review_ops.cancel)
@click.option("--reason", help="Why the session is cancelled (kept on record).")
def cancel_command() -> None:
    """Cancel the session (from any status that is not final)."""


@click.command("fail", cls=Operation, op=review_ops.fail)
@click.option("--error", required=True, type=TEXT, help="What went wrong.")
def fail_command() -> None:
    """Mark the session failed, with the error."""
