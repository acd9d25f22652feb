"""`plan review | qr`: the user's verdict on the plan, and the quality-review items of each
phase, recorded through state/review_ops.py and state/qr_ops.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from cli.base import TEXT, Operation, PlanGroup, dump, open_store, out
from state import qr_ops, review_ops
from state.errors import UsageError

if TYPE_CHECKING:
    from state.store import Transaction

PHASE = click.option(
    "--phase", required=True, type=click.Choice(qr_ops.PHASES), help="The review phase."
)


@click.group("review", cls=PlanGroup)
def review_command() -> None:
    """The user's verdict on the plan in review: approve (freeze) or reject (back to design)."""


@review_command.command("approve", cls=Operation)
@click.option("--by", help="Who approves (default: $USER).")
@click.option(
    "--sign", is_flag=True, help="Sign the approved sha256 with your git signing key (ssh or gpg)."
)
def review_approve(tx: Transaction, a: dict[str, Any]) -> None:
    """The user approves the plan in review: record who, when and its sha256, then freeze."""
    from shared.plan_md import put_plan_md  # cli/ may reach shared/; state/ may not

    review_ops.review_approve(tx, a)
    put_plan_md(tx)  # plan.md shows the approval, in the same commit as the freeze


@review_command.command("reject", cls=Operation)
@click.option("--feedback", required=True, type=TEXT, help="The user's words.")
def review_reject(tx: Transaction, a: dict[str, Any]) -> None:
    """The user rejects the plan: back to design with the feedback; max_rejects cancels."""
    review_ops.review_reject(tx, a)


@click.group("qr", cls=PlanGroup)
def qr_command() -> None:
    """Quality-review items (qa-NNN) of a phase: add, judge, show, accept."""


@qr_command.command("add", cls=Operation)
@PHASE
@click.option("--check", required=True, type=TEXT, help="What the reviewer checks.")
@click.option(
    "--scope", default="*", show_default=True, help="What it applies to: an id, a file, or *."
)
@click.option(
    "--severity",
    type=click.Choice(qr_ops.SEVERITIES),
    default="MUST",
    show_default=True,
    help="How much a failure blocks the gate.",
)
def qr_add(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Record a review item (qa-NNN, status TODO) for a phase."""
    return qr_ops.qr_add(tx, a)


@qr_command.command("set", cls=Operation)
@click.argument("id", metavar="qa-NNN")
@PHASE
@click.option(
    "--status", required=True, type=click.Choice(["PASS", "FAIL", "TODO"]), help="The verdict."
)
@click.option("--finding", help="What is wrong (required with FAIL).")
def qr_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Judge a review item: PASS, or FAIL with the finding."""
    qr_ops.qr_set(tx, a)


@qr_command.command("show")
@PHASE
def qr_show(phase: str, state_dir: str | None, as_json: bool) -> None:
    """A phase's review items: id, severity, status, check, finding."""
    store = open_store(state_dir)
    name = f"qr-{phase}"
    if not store.exists(name):
        raise UsageError(f"{store.path(name)}: not found (no item recorded for {phase})")
    report = store.read(name)
    if as_json:
        dump(report)
        return
    lines = [f"qr {phase}: iteration {report['iteration']}, {len(report['items'])} item(s)"]
    for i in report["items"]:
        finding = f" -- {i['finding']}" if i["finding"] else ""
        lines.append(
            f"{i['id']} {i['severity']:<6} {i['status']:<4} [{i['scope']}] {i['check']}{finding}"
        )
    out("\n".join(lines))


@qr_command.command("accept", cls=Operation)
@PHASE
@click.option("--by", required=True, type=TEXT, help="Who accepts the open findings.")
@click.option("--reason", required=True, type=TEXT, help="Why they are accepted.")
def qr_accept(tx: Transaction, a: dict[str, Any]) -> None:
    """Accept a stopped review loop's open findings on record; the gate may then pass."""
    qr_ops.qr_accept(tx, a)
