"""`plan context | question | choice | ask`: what discovery learns and what the user decides,
recorded through state/ops/context_ops.py, question_ops.py and choice_ops.py."""

from __future__ import annotations

import contextlib
import shutil
import signal
import sys
import textwrap
from typing import TYPE_CHECKING

import click

from cli.base import FILE_TEXT, TEXT, Operation, PlanCommand, PlanGroup, dump, open_store, out
from state.errors import PreconditionFailed, UsageError
from state.ops import choice_ops, context_ops, question_ops
from state.vocab import QuestionKind

if TYPE_CHECKING:
    from state.rules.session_store import Store
    from state.storage.documents import Choice, Question


@click.group("context", cls=PlanGroup)
def context_command() -> None:
    """The task's context: goal, scope, and what discovery found (context.json)."""


@context_command.command("set", cls=Operation, op=context_ops.context_set)
@click.option("--goal", help="What the task must achieve.")
@click.option("--scope", help="What is in scope.")
@click.option("--out-of-scope", help="What is explicitly out of scope.")
def context_set() -> None:
    """Set the task's goal, scope and what is out of scope."""


@context_command.command("add", cls=Operation, op=context_ops.context_add)
@click.argument("field", type=click.Choice(context_ops.LISTS))
@click.argument("text", type=TEXT)
def context_add() -> None:
    """Add a line to a context list: constraints (MUST/SHOULD …), entry_points, assumptions, …"""


@context_command.command("scan", cls=Operation, op=context_ops.context_scan)
@click.option(
    "--base", metavar="REF", help="Compare with this commit, branch or tag (default HEAD)."
)
def context_scan() -> None:
    """Find the project's documents, the files changed since REF and the kinds of change."""


@click.group("question", cls=PlanGroup)
def question_command() -> None:
    """Questions for the user (Q-NNN): add, import, answer, list."""


@question_command.command("add", cls=Operation, op=question_ops.question_add)
@click.option(
    "--category",
    required=True,
    type=click.Choice(question_ops.CATEGORIES),
    help="What kind of question it is.",
)
@click.option(
    "--kind",
    required=True,
    type=click.Choice([k.value for k in question_ops.KINDS]),
    help="How it is answered.",
)
@click.option("--text", required=True, type=TEXT, help="The question itself.")
@click.option("--why", help="Why the answer matters.")
@click.option("--option", multiple=True, help="An option to pick from (repeatable).")
@click.option("--recommended", metavar="N", help="The recommended option, 1-based.")
def question_add() -> None:
    """Add a question for the user (Q-NNN)."""


@question_command.command("import", cls=Operation, op=question_ops.question_import)
@click.argument("source", type=FILE_TEXT, metavar="FILE|-")
def question_import() -> None:
    """Add the questions an LLM wrote as JSON (a list, or {"questions": [...]}, fenced or not)."""


@question_command.command("answer", cls=Operation, op=question_ops.question_answer)
@click.argument("id", metavar="Q-n")
@click.argument("text", required=False, metavar="TEXT")
@click.option("--skip", is_flag=True, help="Record that the user skipped it.")
@click.option("--assume", is_flag=True, help="Nobody can answer: the recommended option, assumed.")
def question_answer() -> None:
    """Record the user's answer (a choice by number or label, or "other: TEXT"; y/n), or
    --skip, or --assume."""


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
        + (f" (condition: {q['condition']})" if q.get("condition") else "")
        for q in questions
    ]
    out("\n".join(lines) or "No questions yet.")


@click.group("choice", cls=PlanGroup)
def choice_command() -> None:
    """Design choices (D-NNN): options with pros and cons, for the user to pick from."""


@choice_command.command("add", cls=Operation, op=choice_ops.choice_add)
@click.option("--topic", required=True, type=TEXT, help="What the choice is about.")
@click.option(
    "--option-json",
    multiple=True,
    required=True,
    metavar="JSON",
    help='An option: {"name", "description", "pros": [], "cons": [], "recommended": bool} '
    "(repeatable).",
)
def choice_add() -> None:
    """Record a design choice (D-NNN) for the user to pick from.

    Prints the choice id, then one line per option as D-NNN/OPT-X (`plan choice pick` and
    `plan show` take that form); --json gives the same list under "ids"."""


@choice_command.command("import", cls=Operation, op=choice_ops.choice_import)
@click.argument("source", type=FILE_TEXT, metavar="FILE|-")
def choice_import() -> None:
    """Record the choices an LLM wrote as JSON (a list, or {"choices": [...]}, fenced or not).

    Prints each choice id followed by its options as D-NNN/OPT-X, as `choice add` does."""


@choice_command.command("pick", cls=Operation, op=choice_ops.choice_pick)
@click.argument("id", metavar="D-n")
@click.argument("option", metavar="OPT-X", required=False)
@click.option("--rationale", required=True, type=TEXT, help="Why this option, in the user's terms.")
def choice_pick() -> None:
    """Pick an option (D-001 OPT-B, or D-001/OPT-B): writes the decision and the other
    options as rejected alternatives."""


# --- plan ask ------------------------------------------------------------------------------


def open_questions(store: Store) -> list[Question]:
    context = store.read("context")
    return [q for q in context["questions"] if q["answer"] is None and not q["skipped"]]


def open_choices(store: Store) -> list[Choice]:
    plan = store.read_or_none("plan")
    return choice_ops.unpicked(plan) if plan else []


def wrapped(text: str, indent: str = "", hang: str = "   ") -> str:
    """`text` broken at word boundaries to the terminal's width (a narrow terminal would
    break it mid-word), continuation lines indented by `indent` + `hang`."""
    width = max(shutil.get_terminal_size().columns, 30)
    return textwrap.fill(
        text,
        width,
        initial_indent=indent,
        subsequent_indent=indent + hang,
        break_long_words=False,
        break_on_hyphens=False,
    )


def prompt(q: Question, progress: str) -> tuple[str, str]:
    """The question's lines, and the input line: the recommended option is Enter's default."""
    lines = [wrapped(f"({progress}) {q['id']} ({q['category']}) {q['text']}")]
    if q["why"]:
        lines.append(wrapped(f"why it matters: {q['why']}", "   "))
    default = ""
    if q["kind"] == QuestionKind.CHOICE or q["recommended"]:
        for n, option in enumerate(q["options"], 1):
            mark = "  (recommended)" if option["label"] == q["recommended"] else ""
            extra = f": {option['description']}" if option["description"] else ""
            lines.append(wrapped(f"{n}) {option['label']}{extra}{mark}", "   "))
            default = f" [{n}]" if mark else default
    hint = {
        QuestionKind.CHOICE: "number or text",
        QuestionKind.YES_NO: "y/n",
        QuestionKind.TEXT: "your answer",
    }[q["kind"]]
    if q["about"]:  # the executor waits for this answer: Enter neither skips nor picks
        return "\n".join(lines) + "\n", f"   {hint} > "
    enter = "Enter takes" if default else "Enter skips"
    return "\n".join(lines) + "\n", f"   {hint}; {enter}{default} > "


def ask(first: str, line: str) -> str:
    """One answer read with line editing (arrow keys move, never become the answer).

    A Ctrl-C that lands while input() is entering its wait is marked but not acted on, and
    input() waits for a key (python/cpython#112585): a timer interrupts the wait five times a
    second, and at each interruption Python acts on a marked Ctrl-C."""
    sys.stdout.write(first)
    sys.stdout.flush()
    previous = signal.signal(signal.SIGALRM, lambda *_: None)
    signal.setitimer(signal.ITIMER_REAL, 0.2, 0.2)
    try:
        return input(line).strip()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def record_answer(store: Store, qid: str, text: str | None) -> Question:
    """One answer (or a skip, for None) in its own transaction, so Ctrl-C keeps it."""
    with store.transaction("question answer") as tx:
        question_ops.question_answer(tx, id=qid, text=text, skip=text is None)
        return question_ops.find_question(tx.read("context"), qid).copy()


def answer_one(store: Store, q: Question, progress: str) -> str:
    """Ask until the answer is acceptable; Enter takes the recommended option, if any, else
    skips. Returns "answered" or "skipped"."""
    first, line = prompt(q, progress)
    while True:
        text = ask(first, line)
        first = ""
        if not text and q["recommended"]:
            text = q["recommended"]
        if not text and q["about"]:
            sys.stdout.write(f"   the executor waits for your answer about {q['about']}\n")
            continue
        if not text:
            record_answer(store, q["id"], None)
            sys.stdout.write("   recorded: skipped\n")
            return "skipped"
        try:
            question_ops.normal_answer(q, text)
        except UsageError as e:
            sys.stdout.write(f"   {e.message.split(': ', 1)[-1]}\n")
            continue
        done = record_answer(store, q["id"], text)
        condition = f" (condition: {done['condition']})" if done["condition"] else ""
        sys.stdout.write(f"   recorded: {done['answer']}{condition}\n")
        return "answered"


def pick_one(store: Store, choice: Choice, progress: str) -> str:
    """A design choice: an option (Enter takes the recommended one), then the rationale."""
    lines = [wrapped(f"({progress}) {choice['id']} design choice: {choice['topic']}")]
    default = 1
    for n, o in enumerate(choice["options"], 1):
        mark = "  (recommended)" if o["recommended"] else ""
        default = n if o["recommended"] else default
        extra = f": {o['description']}" if o["description"] else ""
        lines.append(wrapped(f"{n}) {o['id']} {o['name']}{extra}{mark}", "   "))
        lines += [wrapped(f"+ {pro}", "        ", "  ") for pro in o["pros"]]
        lines += [wrapped(f"- {con}", "        ", "  ") for con in o["cons"]]
    first = "\n".join(lines) + "\n"
    names = [o["name"] for o in choice["options"]]
    while True:
        text = ask(first, f"   option; Enter takes [{default}] > ") or str(default)
        first = ""
        try:
            found = question_ops.pick_option(choice["id"], "choice", names, text)
        except UsageError as e:
            found, text = None, e.message.split(": ", 1)[-1]
        if found:
            break
        sys.stdout.write(f"   not an option: {text} (1 to {len(names)}, a letter or the name)\n")
    option = choice["options"][names.index(found[0])]
    rationale = (  # "1 because it is simpler": the option and its rationale
        reason(found[1])
        or ask("", "   why this option (Enter: the user's pick at plan ask) > ")
        or "the user's pick at plan ask"
    )
    with store.transaction("choice pick") as tx:
        choice_ops.choice_pick(tx, id=choice["id"], option=option["id"], rationale=rationale)
    sys.stdout.write(f"   recorded: {choice['id']} {option['id']} {option['name']}\n")
    return "answered"


def reason(rest: str) -> str:
    """The rationale in what followed the option: "because it is simpler" -> "it is simpler"."""
    text = question_ops.words_after(rest)
    if text.lower().startswith("because"):
        text = question_ops.words_after(text[len("because") :])
    return text


def no_terminal(waiting: list[Question], choices: list[Choice]) -> str:
    listed = [wrapped(f"{q['id']} {q['text']}", "  ") for q in waiting]
    listed += [wrapped(f"{c['id']} {c['topic']}", "  ") for c in choices]
    return (
        "plan ask: no terminal here to ask on; nothing was asked. Ask the user, then record "
        "each answer:\n"
        '  plan question answer Q-n "answer"   or   plan question answer Q-n --skip\n'
        "  nobody to answer: plan question answer Q-n --assume (the recommended option)\n"
        '  plan choice pick D-n OPT-X --rationale "the user\'s reason"\n'
        "Open questions and choices:\n" + "\n".join(listed)
    )


@click.command("ask", cls=PlanCommand)
def ask_command(state_dir: str | None, as_json: bool) -> int:
    """Ask the open questions, then the design choices, at this terminal.

    Arrow keys edit the line; Enter takes the recommended option (shown as [N]) or skips a
    question without one; words after an option are kept as its condition. Ctrl-C stops,
    keeps what was answered and exits 130; so does Ctrl-D (end of input) with questions open.
    Without a terminal it asks nothing and exits 3 naming the commands that record answers."""
    store = open_store(state_dir)
    waiting, choices = open_questions(store), open_choices(store)
    if not waiting and not choices:
        out("No open questions.")
        return 0
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        # exit 3: an agent running it learns that nothing was asked, and how to ask instead
        raise PreconditionFailed(no_terminal(waiting, choices))
    with contextlib.suppress(ImportError):  # without readline (some platforms): plain input()
        import readline  # noqa: F401  (input() then edits the line: arrows, history)
    # Ctrl-C is how the person stops, even when this process was started with SIGINT ignored
    # (a background job's child, a runner's): as bin/'s launchers do (bootstrap.interruptible)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    total, counts, code = len(waiting) + len(choices), {"answered": 0, "skipped": 0}, 0
    try:
        for n, q in enumerate(waiting, 1):
            counts[answer_one(store, q, f"{n}/{total}")] += 1
            sys.stdout.write("\n")
        for n, choice in enumerate(choices, len(waiting) + 1):
            counts[pick_one(store, choice, f"{n}/{total}")] += 1
            sys.stdout.write("\n")
    except (KeyboardInterrupt, EOFError):
        sys.stdout.write("\nStopped; the answers given so far are saved.\n")
        code = 130
    left = len(open_questions(store)) + len(open_choices(store))
    code = code if left else 0  # Ctrl-D, like Ctrl-C, is a stop while something is open
    out(f"{counts['answered']} answered, {counts['skipped']} skipped, {left} still open.")
    return code
