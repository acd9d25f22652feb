"""`plan ask`: the open questions at a terminal (PRODUCT.md §6.1).

Numbered options, y/n, free text; Enter skips; Ctrl-C or Ctrl-D stops and keeps what was
answered (each answer is saved as it is given). Without a terminal it says how to answer.
"""

from __future__ import annotations

import sys

from cli.commands import reader
from cli.main import open_store, out

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from state.store import Store


def open_questions(store: Store) -> list[dict[str, Any]]:
    context = store.read("context")
    return [q for q in context["questions"] if q["answer"] is None and not q["skipped"]]


def show(q: dict[str, Any]) -> str:
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


def answer_one(store: Store, q: dict[str, Any]) -> str:
    """Ask until the answer is acceptable; returns "answered" or "skipped"."""
    from state.errors import UsageError
    from state.ops import run_op
    from state.question_ops import normal_answer

    while True:
        text = input(show(q)).strip()
        if not text:
            run_op(store, "question answer", {"id": q["id"], "skip": True})
            return "skipped"
        try:
            normal_answer(q, text)
        except UsageError as e:
            sys.stdout.write(f"   {e.message.split(': ', 1)[-1]}\n")
            continue
        run_op(store, "question answer", {"id": q["id"], "text": text})
        return "answered"


@reader("ask")
def ask(a: dict[str, Any]) -> None:
    """Ask the open questions at this terminal; Enter skips, Ctrl-C stops and keeps answers."""
    from state.ops import load_all

    store = open_store(a["state_dir"])
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
    load_all()
    counts = {"answered": 0, "skipped": 0}
    try:
        for q in waiting:
            counts[answer_one(store, q)] += 1
            sys.stdout.write("\n")
    except (KeyboardInterrupt, EOFError):
        sys.stdout.write("\nStopped; the answers given so far are saved.\n")
    left = len(open_questions(store))
    out(f"{counts['answered']} answered, {counts['skipped']} skipped, {left} still open.")
