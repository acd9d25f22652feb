"""`plan review | qr`: the user's verdict on the plan, and the quality-review items of each
phase, recorded through state/ops/review_ops.py and state/ops/qr_ops.py."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from cli.base import TEXT, Operation, PlanGroup, QRPhase, dump, open_store, out
from cli.comments import REVIEW_COMMENT
from shared.config import duration
from shared.routing import argv_of, command
from state.errors import PlannerError, UsageError
from state.ops import qr_ops, review_ops
from state.routes import EXECUTE, StepRef
from state.storage.store import report_name
from state.vocab import ItemStatus, Severity, WorkflowName

if TYPE_CHECKING:
    from shared.workflow import Flags
    from state.routes import Target
    from state.rules.session_store import Store

PHASE = click.option(
    "--phase",
    required=True,
    type=QRPhase(),
    help="The review phase (design, code, docs stand for plan-design, plan-code, plan-docs).",
)


@click.group("review", cls=PlanGroup)
def review_command() -> None:
    """The user's verdict on the plan in review: approve (freeze) or reject (back to design).
    In a terminal the person reads the plan with `plan review show`; open serves the page."""


@review_command.command("show")
def review_show(state_dir: str | None, as_json: bool) -> None:
    """The plan for the person to judge, in a terminal. The round and what changed since the
    last one (after a rejection, or since the approval an amendment amends), the plan (approach,
    decisions, milestones with each change's diff), the open questions and assumptions, and
    the commands that give the verdict (--json: those lines as a list)."""
    from shared.plan_md import review_view  # jinja2 loads with it: only this command pays

    lines = review_view(open_store(state_dir))
    if as_json:
        dump(lines)
    else:
        out("\n".join(lines))


@review_command.command("approve", cls=Operation, op=review_ops.review_approve)
@click.option("--by", help="Who approves (default: $USER).")
@click.option(
    "--sign", is_flag=True, help="Sign the approved sha256 with your git signing key (ssh or gpg)."
)
@click.option(
    "--expect-sha256",
    metavar="SHA256",
    help="Refuse unless the plan still has this hash (the content the person saw).",
)
def review_approve() -> None:
    """The user approves the plan in review: record who, when and its sha256, then freeze
    (plan.md is re-rendered in the same commit: shared/status.py settle)."""


@review_command.command("reject", cls=Operation, op=review_ops.review_reject)
@click.option("--feedback", help="The user's words (this, --comment or --draft is required).")
@click.option(
    "--comment",
    multiple=True,
    type=REVIEW_COMMENT,
    metavar="'ID: TEXT'",
    help="A comment on one item, 'DL-003: why?', or on a line of a change, 'CC-004:7: …'.",
)
@click.option(
    "--draft",
    is_flag=True,
    help="Send the review companion's latest draft (plan mcp: draft_feedback) for this round; "
    "--feedback and --comment add to it.",
)
def review_reject() -> None:
    """The user rejects the plan: back to design with the feedback and the comments;
    max_rejects cancels."""


@review_command.command("open")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port on 127.0.0.1 (0: any free one).",
)
@click.option("--no-browser", is_flag=True, help="Print the URL only; do not open a browser.")
@click.option("--verbose", is_flag=True, help="Log every request and server warning to stderr.")
@click.option(
    "--wait",
    is_flag=True,
    help="Serve until the person decides, then stop and print what is next (as review wait; "
    "decided already: print it, serve nothing).",
)
def review_open(
    port: int, no_browser: bool, verbose: bool, wait: bool, state_dir: str | None, as_json: bool
) -> None:
    """Serve the plan's review page on 127.0.0.1 (a new secret URL each run) until Ctrl-C, or
    with --wait until the person's verdict; after execution it shows the result (result view)."""
    # the page's server (sockets, secrets) loads here: `plan qr add|set`, in this module, is an
    # agent's call many times a session and serves nothing
    from cli.review_page.serve import open_page

    def say(url: str) -> None:
        out(json.dumps({"url": url}) if as_json else url)
        sys.stdout.flush()

    store = open_store(state_dir)
    target = open_page(store, port, not no_browser, say, verbose, wait=wait)
    if target is not None:
        say_next(store, target, as_json)


@review_command.command("wait")
@click.option(
    "--timeout",
    default="0",
    show_default=True,
    metavar="DURATION",
    help='How long to wait, e.g. "90s", "30m"; 0: no limit.',
)
@click.option(
    "--round",
    "number",
    type=click.IntRange(1),
    metavar="N",
    help="The round to report: N of the review the session is in or was last in.",
)
def review_wait(timeout: str, number: int | None, state_dir: str | None, as_json: bool) -> None:
    """Block until the person decides on the review page; print what is next: after a
    rejection the rework step's prompt (that step has run: do not run it again), after an
    approval executor step 1; for a result in review, DONE once it is accepted, or the
    planning step an amendment leads to (exit 3 when the time runs out with the plan or the
    result still in review).

    The round: the one in review; with none open, the latest round of the review the session
    was last in (the plan's or the result's), reported at once if decided: a wait that starts
    after the verdict says what a running one would have. --round N names the round."""
    from cli.review_page.serve import wait_for_verdict  # as in review_open

    store = open_store(state_dir)
    say_next(store, wait_for_verdict(store, duration(timeout, "--timeout"), number=number), as_json)


def say_next(store: Store, target: Target, as_json: bool) -> None:
    """The verdict's next step: a planner step (the rework) runs here and prints its prompt,
    as a gate prints the step it leads to, and so does executor step 1 after an approval
    (step 11 has the agent run it once the person approved: the page's wait is that moment);
    anything else is printed as the NEXT line. --json prints {"next": …} only."""
    if not target:  # the result was accepted: nothing follows
        out(json.dumps({"next": "", "done": True}) if as_json else "DONE: the result is accepted")
        return
    if as_json:
        out(json.dumps({"next": command(argv_of(target))}))
        return
    flags: Flags = {"state_dir": store.dir}
    rework = isinstance(target, StepRef) and target.workflow == WorkflowName.PLANNER
    if isinstance(target, StepRef) and (rework or (target.workflow, target.name) == EXECUTE):
        # the step engine and its tables load here: `plan qr add|set`, in this module, is an
        # agent's call many times a session and never runs a step
        from shared import engine
        from shared.workflow import workflow_named

        try:  # executor step 1 that is not ready refuses before it writes: its command is NEXT
            chain = engine.decide(
                workflow_named(target.workflow), target.number, flags, store, True
            )
        except PlannerError:
            if rework:
                raise
            chain = []
        if chain:
            said = "Sent back: planner" if rework else "Approved: executor"
            out(f"{said} step {target.number} follows (run here: do not run it again).")
            out(engine.show(chain, flags))
            return
    out(f"NEXT: {command(argv_of(target))}")


@click.group("qr", cls=PlanGroup)
def qr_command() -> None:
    """Quality-review items (qa-NNN) of a phase: add, judge, show, accept."""


@qr_command.command("add", cls=Operation, op=qr_ops.qr_add)
@PHASE
@click.option("--check", required=True, type=TEXT, help="What the reviewer checks.")
@click.option(
    "--scope", default="*", show_default=True, help="What it applies to: an id, a file, or *."
)
@click.option(
    "--severity",
    type=click.Choice(qr_ops.SEVERITIES),
    default=Severity.MUST,
    show_default=True,
    help="How much a failure blocks the gate.",
)
@click.option(
    "--status",
    type=click.Choice(tuple(ItemStatus)),
    default=ItemStatus.TODO,
    show_default=True,
    help="The verdict, when the item is judged as it is recorded.",
)
@click.option("--finding", help="What is wrong (required with FAIL).")
def qr_add() -> None:
    """Record a review item (qa-NNN) for a phase, and with --status its verdict at once.

    --scope names what the item judges: an id (CC-004, CI-002, M-001, DL-003) or a file
    (src/app.py). A PASS goes back to TODO when that content changes later; items scoped
    * are not tracked."""


@qr_command.command("set", cls=Operation, op=qr_ops.qr_set)
@click.argument("id", metavar="qa-NNN")
@PHASE
@click.option(
    "--status",
    required=True,
    type=click.Choice((ItemStatus.PASS, ItemStatus.FAIL, ItemStatus.TODO)),
    help="The verdict.",
)
@click.option("--finding", help="What is wrong (required with FAIL).")
def qr_set() -> None:
    """Judge a review item: PASS, or FAIL with the finding.

    A PASS records a hash of what the item's scope holds; when a later change edits that
    (an id, or a file's intents and changes), the item is TODO again."""


@qr_command.command("show")
@PHASE
def qr_show(phase: str, state_dir: str | None, as_json: bool) -> None:
    """A phase's review items: id, severity, status, check, finding."""
    store = open_store(state_dir)
    name = report_name(phase)
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


@qr_command.command("accept", cls=Operation, op=qr_ops.qr_accept)
@PHASE
@click.option("--by", required=True, type=TEXT, help="Who accepts the open findings.")
@click.option("--reason", required=True, type=TEXT, help="Why they are accepted.")
def qr_accept() -> None:
    """Accept a stopped review loop's open findings on record; the gate may then pass."""
