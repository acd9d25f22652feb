"""`plan result`: the person's review of what execution did (show, accept, request changes),
recorded through state/ops/result_ops.py, the functions the review page calls too."""

from __future__ import annotations

import click

from cli.base import Operation, PlanGroup, dump, open_store, out
from cli.comments import RESULT_COMMENT
from cli.result_text import text
from state.ops import result_ops
from state.ops.result_view import result_of, since_review

EXPECT = click.option(
    "--expect-sha256",
    metavar="SHA256",
    help="Refuse unless the result still has this hash (what `plan result show` printed).",
)


@click.group("result", cls=PlanGroup)
def result_command() -> None:
    """The person's review of the result after executor step 9: show, accept, request changes."""


@result_command.command("show")
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="After a round that asked for changes: every milestone, not only those since.",
)
def result_show(show_all: bool, state_dir: str | None, as_json: bool) -> None:
    """Per milestone the planned diff beside its commits' diffs, the tests that ran, the
    deviations with their reasons, and the reconcile table; the sha256 a verdict binds.
    After a round that asked for changes, the milestones carried out since (--all: all)."""
    store = open_store(state_dir)
    result = result_of(store)
    session = store.read("session")
    if as_json:
        dump({"status": session["status"], "rounds": session["result_reviews"], **result})
        return
    out(text(result, session, None if show_all else since_review(store)))


@result_command.command("accept", cls=Operation, op=result_ops.result_accept)
@click.option("--by", help="Who accepts (default: $USER).")
@EXPECT
def result_accept() -> None:
    """The person accepts the result: recorded with the hash of what was shown; the session
    is completed."""


@result_command.command("request-changes", cls=Operation, op=result_ops.result_request_changes)
@click.option(
    "--feedback", required=True, help="What must change: it becomes the amendment's task."
)
@click.option(
    "--comment",
    multiple=True,
    type=RESULT_COMMENT,
    metavar="ID[:LINE]=TEXT",
    help="A comment: 'M-001=…', on a commit's line 'M-001:src/app.py:7=…', on a planned "
    "change's line 'CC-004:7=…', or on a deviation 'DV-001=…'.",
)
@click.option("--by", help="Who asks.")
@EXPECT
def result_request_changes() -> None:
    """The person asks for changes: the round records them and an amendment opens with the
    feedback as its task (the planner takes it from there)."""
