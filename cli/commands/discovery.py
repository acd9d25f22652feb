"""`plan context | question | choice | ask`: what discovery learns and what the user decides,
recorded through state/context_ops.py, question_ops.py and choice_ops.py."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from cli.base import FILE_TEXT, TEXT, Operation, PlanCommand, PlanGroup, dump, open_store, out
from state import choice_ops, context_ops, question_ops

if TYPE_CHECKING:
    from state.store import Store, Transaction


@click.group("context", cls=PlanGroup)
def context_command() -> None:
    """The task's context: goal, scope, and what discovery found (context.json)."""


@context_command.command("set", cls=Operation)
@click.option("--goal", help="What the task must achieve.")
@click.option("--scope", help="What is in scope.")
@click.option("--out-of-scope", help="What is explicitly out of scope.")
def context_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Set the task's goal, scope and what is out of scope."""
    context_ops.context_set(tx, a)


@context_command.command("add", cls=Operation)
@click.argument("field", type=click.Choice(context_ops.LISTS))
@click.argument("text", type=TEXT)
def context_add(tx: Transaction, a: dict[str, Any]) -> None:
    """Add a line to a context list: constraints (MUST/SHOULD …), entry_points, assumptions, …"""
    context_ops.context_add(tx, a)


@context_command.command("scan", cls=Operation)
@click.option(
    "--base", metavar="REF", help="Compare with this commit, branch or tag (default HEAD)."
)
def context_scan(tx: Transaction, a: dict[str, Any]) -> None:
    """Find the project's documents, the files changed since REF and the kinds of change."""
    context_ops.context_scan(tx, a)


@click.group("question", cls=PlanGroup)
def question_command() -> None:
    """Questions for the user (Q-NNN): add, import, answer, list."""


@question_command.command("add", cls=Operation)
@click.option(
    "--category",
    required=True,
    type=click.Choice(question_ops.CATEGORIES),
    help="What kind of question it is.",
)
@click.option(
    "--kind", required=True, type=click.Choice(question_ops.KINDS), help="How it is answered."
)
@click.option("--text", required=True, type=TEXT, help="The question itself.")
@click.option("--why", help="Why the answer matters.")
@click.option("--option", multiple=True, help="An option to pick from (repeatable).")
@click.option("--recommended", metavar="N", help="The recommended option, 1-based.")
def question_add(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Add a question for the user (Q-NNN)."""
    return question_ops.question_add(tx, a)


@question_command.command("import", cls=Operation)
@click.argument("source", type=FILE_TEXT, metavar="FILE|-")
def question_import(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Add the questions an LLM wrote as JSON (a list, or {"questions": [...]}, fenced or not)."""
    return question_ops.question_import(tx, a)


@question_command.command("answer", cls=Operation)
@click.argument("id", metavar="Q-n")
@click.argument("text", required=False, metavar="TEXT")
@click.option("--skip", is_flag=True, help="Record that the user skipped it.")
def question_answer(tx: Transaction, a: dict[str, Any]) -> None:
    """Record the user's answer (a choice by number or label; y/n), or --skip."""
    question_ops.question_answer(tx, a)


@question_command.command("list")
def question_list(state_dir: str | None, as_json: bool) -> None:
    """The questions: id, state (open, answered, skipped, assumed), text and answer."""
    questions = open_store(state_dir).read("context")["questions"]
    if as_json:
        dump(questions)
        return
    lines = [
        f"{q['id']} [{question_ops.state_of(q)}] {q['text']}"
        + (f" -> {q['answer']}" if q["answer"] else "")
        for q in questions
    ]
    out("\n".join(lines) or "No questions yet.")


@click.group("choice", cls=PlanGroup)
def choice_command() -> None:
    """Design choices (D-NNN): options with pros and cons, for the user to pick from."""


@choice_command.command("add", cls=Operation)
@click.option("--topic", required=True, type=TEXT, help="What the choice is about.")
@click.option(
    "--option-json",
    multiple=True,
    required=True,
    metavar="JSON",
    help='An option: {"name", "description", "pros": [], "cons": [], "recommended": bool} '
    "(repeatable).",
)
def choice_add(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Record a design choice (D-NNN) for the user to pick from.

    Prints the choice id, then one line per option as D-NNN/OPT-X (`plan choice pick` and
    `plan show` take that form); --json gives the same list under "ids"."""
    return choice_ops.choice_add(tx, a)


@choice_command.command("import", cls=Operation)
@click.argument("source", type=FILE_TEXT, metavar="FILE|-")
def choice_import(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Record the choices an LLM wrote as JSON (a list, or {"choices": [...]}, fenced or not).

    Prints each choice id followed by its options as D-NNN/OPT-X, as `choice add` does."""
    return choice_ops.choice_import(tx, a)


@choice_command.command("pick", cls=Operation)
@click.argument("id", metavar="D-n")
@click.argument("option", metavar="OPT-X", required=False)
@click.option("--rationale", required=True, type=TEXT, help="Why this option, in the user's terms.")
def choice_pick(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Pick an option (D-001 OPT-B, or D-001/OPT-B): writes the decision and the other
    options as rejected alternatives."""
    return choice_ops.choice_pick(tx, a)


# --- plan ask ------------------------------------------------------------------------------


def open_questions(store: Store) -> list[dict[str, Any]]:
    context = store.read("context")
    return [q for q in context["questions"] if q["answer"] is None and not q["skipped"]]


def prompt(q: dict[str, Any]) -> str:
    lines = [f"{q['id']} ({q['category']}) {q['text']}"]
    if q["why"]:
        lines.append(f"   why it matters: {q['why']}")
    if q["kind"] == "choice":
        for n, option in enumerate(q["options"], 1):
            mark = "  (recommended)" if option["label"] == q["recommended"] else ""
            extra = f": {option['description']}" if option["description"] else ""
            lines.append(f"   {n}) {option['label']}{extra}{mark}")
    hint = {"choice": "number or text", "yes_no": "y/n", "text": "your answer"}[q["kind"]]
    if q["recommended"]:
        hint += f", recommended: {q['recommended']}"
    return "\n".join(lines) + f"\n   [{hint}; Enter skips] > "


def record_answer(store: Store, qid: str, text: str | None) -> None:
    """One answer (or a skip, for None) in its own transaction, so Ctrl-C keeps it."""
    with store.transaction("question answer") as tx:
        question_ops.question_answer(tx, {"id": qid, "text": text, "skip": text is None})


def answer_one(store: Store, q: dict[str, Any]) -> str:
    """Ask until the answer is acceptable; returns "answered" or "skipped"."""
    from state.errors import UsageError

    while True:
        text = input(prompt(q)).strip()
        if not text:
            record_answer(store, q["id"], None)
            return "skipped"
        try:
            question_ops.normal_answer(q, text)
        except UsageError as e:
            sys.stdout.write(f"   {e.message.split(': ', 1)[-1]}\n")
            continue
        record_answer(store, q["id"], text)
        return "answered"


@click.command("ask", cls=PlanCommand)
def ask_command(state_dir: str | None, as_json: bool) -> None:
    """Ask the open questions at this terminal; Enter skips, Ctrl-C stops and keeps answers."""
    store = open_store(state_dir)
    waiting = open_questions(store)
    if not waiting:
        out("No open questions.")
        return
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        listed = "\n".join(f"  {q['id']} {q['text']}" for q in waiting)
        out(
            f"No terminal here to ask on. Ask the user, then record each answer:\n"
            f'  plan question answer Q-n "answer"   or   plan question answer Q-n --skip\n'
            f"Open questions:\n{listed}"
        )
        return
    counts = {"answered": 0, "skipped": 0}
    try:
        for q in waiting:
            counts[answer_one(store, q)] += 1
            sys.stdout.write("\n")
    except (KeyboardInterrupt, EOFError):
        sys.stdout.write("\nStopped; the answers given so far are saved.\n")
    left = len(open_questions(store))
    out(f"{counts['answered']} answered, {counts['skipped']} skipped, {left} still open.")
