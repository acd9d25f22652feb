"""The user's words in the prompts (answers and review feedback): whole once in a session and
where they changed since the step that last showed them, elsewhere named in one line
(docs/design.md, "The user's words once")."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, TypedDict

from shared.kinds import Execute
from shared.qr import loop_of
from shared.workflow import Context, Kind
from state.vocab import LoopState, ResultVerdict

if TYPE_CHECKING:
    from state.storage.documents import Amendment, Question, ResultReview, Review, Session
    from state.storage.documents import Context as ContextDoc


class Words(TypedDict):
    """The user's words a prompt shows (its template's variables of these names)."""

    answers: list[Question]
    feedback: list[Review]
    results: list[ResultReview]
    amendments: list[Amendment]


def user_words(session: Session, context: ContextDoc | None) -> Words:
    """What the user said, for every prompt after discovery: answers, review feedback and
    the amendments' reasons (and the person's words that asked for them)."""
    questions = context["questions"] if context else []
    return {
        "answers": [q for q in questions if q["answer"] is not None],
        "feedback": [r for r in session["reviews"] if r["feedback"] or r["comments"]],
        "results": [
            r for r in session["result_reviews"] if r["verdict"] == ResultVerdict.CHANGES_REQUESTED
        ],
        "amendments": session["amendments"],
    }


def words_digest(words: Words) -> str:
    """16 hex digits: 8 for the answers, 8 for the rest (feedback, results, amendments)."""
    answers = [[q["id"], q["answer"], q["condition"]] for q in words["answers"]]
    said: list[list[object]] = [
        [r["round"], r["feedback"], r["comments"]] for r in words["feedback"]
    ]
    said += [["result", r["round"], r["feedback"], r["comments"]] for r in words["results"]]
    said += [["amend", a["round"], a["reason"], a["task"]] for a in words["amendments"]]
    return "".join(
        hashlib.sha256(json.dumps(part, sort_keys=True).encode()).hexdigest()[:8]
        for part in (answers, said)
    )


def shown(session: Session) -> tuple[str, str, bool]:
    """words_shown as ("workflow:step", digest, whether that step named the answers in one
    line): "workflow:step:digest", and ":a" after it when it did."""
    parts = (session["words_shown"] or "").split(":")
    if len(parts) >= 3:
        return f"{parts[0]}:{parts[1]}", parts[2], parts[3:] == ["a"]
    return "", "", False


def words_in_full(ctx: Context, step_kind: Kind, words: Words) -> bool:
    """Whether this step shows the user's words whole: the first step that has any, then
    wherever they changed since the step that showed them last, and again on that step (not
    an execute step's fix round); elsewhere one line names them (docs/design.md, "The user's
    words once")."""
    where, digest, _ = shown(ctx.session)
    again = not (isinstance(step_kind, Execute) and fixing(ctx))
    here = where == f"{ctx.workflow.name}:{ctx.step.number}" and again
    return digest != words_digest(words) or here


def answers_known(ctx: Context, words: Words) -> bool:
    """Whether a step that shows the words whole names the answers in one line instead: they
    were shown whole before and only the rest changed since (a rejection, an amendment). On
    the step that showed them, what its arrival showed."""
    where, digest, as_line = shown(ctx.session)
    now = words_digest(words)
    if where == f"{ctx.workflow.name}:{ctx.step.number}" and digest == now:
        return as_line  # a re-render
    return bool(words["answers"]) and len(digest) == 16 and digest[:8] == now[:8]


def fixing(ctx: Context) -> bool:
    """Whether an execute step is back in fix mode (its words were shown on its first run)."""
    return loop_of(ctx.session, ctx.step.phase or "")["state"] in (
        LoopState.RETRY,
        LoopState.ESCALATED,
    )


def _ids(words: Words) -> list[str]:
    ids = [q["id"] for q in words["answers"]]
    return [f"{ids[0]}…{ids[-1]}" if len(ids) > 2 else ", ".join(ids)] if ids else []


def answers_line(ctx: Context, words: Words) -> str:
    """`Q-001…Q-005 unchanged: plan show --answers`, where the words are shown whole but the
    answers were shown before and did not change; else ""."""
    if not answers_known(ctx, words):
        return ""
    return f"{_ids(words)[0]} unchanged: plan show --answers"


def words_line(ctx: Context, words: Words) -> str:
    """`Q-001…Q-005 unchanged since step 3: plan show --answers`."""
    named = _ids(words)
    rounds = [str(r["round"]) for r in words["feedback"]]
    if rounds:
        named.append(f"review round{'s' if len(rounds) > 1 else ''} {', '.join(rounds)}")
    if words["amendments"]:
        named.append(f"amendment round {words['amendments'][-1]['round']}")
    workflow, _, number = shown(ctx.session)[0].partition(":")
    since = ""
    if number:
        since = f" since {'' if workflow == ctx.workflow.name else workflow + ' '}step {number}"
    return f"The user's words ({' and '.join(named)}) unchanged{since}: plan show --answers"


def note_words(ctx: Context, step_kind: Kind, session: Session) -> None:
    """On arrival: remember that this step shows the user's words whole, and which words."""
    words = user_words(session, ctx.doc_or_none("context"))
    said = words["answers"] or words["feedback"] or words["amendments"]
    if said and step_kind.shows_words and words_in_full(ctx, step_kind, words):
        line = ":a" if answers_known(ctx, words) else ""
        where = f"{ctx.workflow.name}:{ctx.step.number}"
        session["words_shown"] = f"{where}:{words_digest(words)}{line}"
