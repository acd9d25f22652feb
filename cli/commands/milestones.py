"""`plan milestone | intent | change | doc`: what gets built, file by file, recorded through
state/ops/plan_ops.py. A repeatable option given replaces its list; given as '' it clears it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from cli.base import FILE_TEXT, KEY_VALUE, POSITION, TEXT, Operation, PlanGroup, options, target_id
from state.ops import capture_ops, plan_ops

if TYPE_CHECKING:
    from collections.abc import Callable

ID = click.argument("id")


# the options `milestone add` and `milestone set` share
MILESTONE_OPTIONS = options(
    click.option("--file", multiple=True, help="A file the milestone changes (repeatable)."),
    click.option("--requirement", multiple=True, help="A requirement (repeatable)."),
    click.option("--acceptance", multiple=True, help="An acceptance criterion (repeatable)."),
    click.option("--risk", type=click.Choice(plan_ops.RISKS), help="How risky it is."),
    click.option(
        "--depends",
        multiple=True,
        metavar="M-n",
        help="A milestone that must be done first (repeatable).",
    ),
    click.option(
        "--doc-only/--no-doc-only", default=None, help="The milestone changes documentation only."
    ),
    click.option("--flag", multiple=True, help="A free-form flag (repeatable)."),
    click.option("--delegated-to", help="Who carries it out, if not the executor."),
)


@click.group("milestone", cls=PlanGroup)
def milestone_command() -> None:
    """Milestones (M-NNN): what gets built, in which order, and how it is tested."""


@milestone_command.command("add", cls=Operation, op=plan_ops.milestone_add)
@click.option("--name", required=True, type=TEXT, help="The milestone's name.")
@MILESTONE_OPTIONS
def milestone_add() -> None:
    """Add a milestone (M-NNN)."""


def item_edits(f: Callable[..., Any]) -> Callable[..., Any]:
    """--add-X TEXT and --remove-X N|TEXT for requirements, acceptance criteria, files."""
    for name, _, what in reversed(plan_ops.ITEM_EDITS):
        f = click.option(
            f"--remove-{name}",
            multiple=True,
            type=POSITION,
            metavar="N|TEXT",
            help=f"Remove a {what}: its position N (counting from 1) or its "
            "exact text (repeatable).",
        )(f)
        f = click.option(
            f"--add-{name}",
            multiple=True,
            help=f"Append a {what}, keeping the others (repeatable).",
        )(f)
    return f


@milestone_command.command("set", cls=Operation, op=plan_ops.milestone_set)
@ID
@click.option("--name", help="The milestone's new name.")
@MILESTONE_OPTIONS
@item_edits
def milestone_set() -> None:
    """Change a milestone. A repeatable option (--requirement …) replaces its whole list
    (given as '' it clears it); --add-requirement T appends and --remove-requirement N|T
    drops one, by its position (from 1) or its exact text; the same for --*-acceptance and
    --*-file."""


@milestone_command.command("tests", cls=Operation, op=plan_ops.milestone_tests)
@ID
@click.option("--file", multiple=True, help="A test file (repeatable).")
@click.option("--type", help="The kind of tests (unit, integration, e2e, …).")
@click.option("--backing", help="What the tests run against (real git repo, fixtures, …).")
@click.option("--normal", multiple=True, help="A normal-case scenario (repeatable).")
@click.option("--edge", multiple=True, help="An edge-case scenario (repeatable).")
@click.option("--error", multiple=True, help="An error-case scenario (repeatable).")
@click.option("--skip-reason", help="Why the milestone needs no tests.")
def milestone_tests() -> None:
    """Set the tests a milestone needs: files, type, backing, scenarios, or why none."""


INTENT_OPTIONS = options(
    click.option(
        "--decision",
        multiple=True,
        metavar="DL-n",
        help="A decision the intent carries out (repeatable).",
    ),
    click.option(
        "--param",
        multiple=True,
        type=KEY_VALUE,
        metavar="KEY=VALUE",
        help="A parameter of the intent (repeatable).",
    ),
)


@click.group("intent", cls=PlanGroup)
def intent_command() -> None:
    """Code intents (CI-NNN): what a function in a file must do, and why."""


@intent_command.command("add", cls=Operation, op=plan_ops.intent_add)
@click.option(
    "--milestone", required=True, type=TEXT, metavar="M-n", help="The milestone it belongs to."
)
@click.option("--file", required=True, type=TEXT, help="The file it changes.")
@click.option("--function", help="The function or class it changes.")
@click.option("--behavior", required=True, type=TEXT, help="What the code must do.")
@INTENT_OPTIONS
def intent_add() -> None:
    """Add a code intent (CI-NNN): what a function in a file must do, and why."""


@intent_command.command("set", cls=Operation, op=plan_ops.intent_set)
@ID
@click.option("--file", help="The new file.")
@click.option("--function", help="The new function or class.")
@click.option("--behavior", help="The new behaviour.")
@INTENT_OPTIONS
def intent_set() -> None:
    """Change a code intent."""


@intent_command.command("remove", cls=Operation, op=plan_ops.intent_remove)
@ID
def intent_remove() -> None:
    """Remove a code intent no change points at (move or re-point its changes first)."""


CHANGE_OPTIONS = options(
    click.option("--why", multiple=True, help="A WHY comment the change carries (repeatable)."),
    click.option("--context-lines", type=int, help="Lines of context the diff was made with."),
)


@click.group("change", cls=PlanGroup)
def change_command() -> None:
    """Code changes (CC-NNN): the unified diff that realises an intent."""


@change_command.command("add", cls=Operation, op=plan_ops.change_add)
@click.option("--intent", required=True, type=TEXT, metavar="CI-n", help="The intent it realises.")
@click.option("--file", required=True, type=TEXT, help="The one file the diff touches.")
@click.option(
    "--diff",
    required=True,
    type=FILE_TEXT,
    metavar="FILE|-",
    help="The unified diff (a file, or - for stdin).",
)
@CHANGE_OPTIONS
def change_add() -> None:
    """Add a code change (CC-NNN): a unified diff for one file, realising an intent."""


@change_command.command("set", cls=Operation, op=plan_ops.change_set)
@ID
@click.option("--intent", metavar="CI-n", help="Move it to this intent (and its milestone).")
@click.option("--file", help="The new file.")
@click.option(
    "--diff", type=FILE_TEXT, metavar="FILE|-", help="The new diff (a file, or - for stdin)."
)
@CHANGE_OPTIONS
def change_set() -> None:
    """Change a code change; a new --intent moves it to that intent's milestone."""


@change_command.command("capture", cls=Operation, op=capture_ops.change_capture)
@click.option(
    "--intent",
    multiple=True,
    metavar="CI-n",
    help="Capture this intent's edits (repeatable); without it, every intent whose file changed.",
)
@click.argument("file", nargs=-1)
def change_capture() -> None:
    """Record the scratch worktree's edits as code changes: [--intent CI-n] [FILE]...

    Changes sharing a file are captured in plan order, each diff applying on the one
    before; capturing again replaces the change. Intents of one milestone on one file
    share one change; a milestone's test files go to its intents. FILE limits the files
    (with --intent: the files it takes, default the intent's file). It names, in one line,
    the files the worktree changed that no intent names.
    """


@click.group("doc", cls=PlanGroup)
def doc_command() -> None:
    """Documentation a milestone adds that lives in no file of its own."""


@doc_command.command("set", cls=Operation, op=plan_ops.doc_set)
@target_id("M-n", "--milestone")
@click.option("--module-comment", help="The module's opening comment.")
@click.option("--docstring", multiple=True, help="A docstring (repeatable).")
@click.option("--algorithm", multiple=True, help="An algorithm block (repeatable).")
@click.option("--inline", multiple=True, help="An inline comment (repeatable).")
def doc_set() -> None:
    """Set milestone M-n's documentation: module comment, docstrings, algorithm blocks, inline."""
