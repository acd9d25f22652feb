"""Discovery questions: add, import the JSON an LLM writes, answer, skip.

A question whose normalised text matches one on record is refused as a duplicate; answers
are normalised too (a choice by number or label, yes/no from y/n).
"""

from __future__ import annotations

import json
import re
from typing import Literal, get_args

from state import clock
from state.errors import UsageError
from state.validation.limits import ANSWER_MAX, check_text
from state.vocab import QuestionKind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from state.rules.session_store import Transaction
    from state.storage.documents import Context, Question, QuestionOption

    Allowed = TypeVar("Allowed", bound=str)

Category = Literal["clarification", "scope", "technical", "priority", "constraint"]
CATEGORIES: tuple[Category, ...] = get_args(Category)
KINDS = tuple(QuestionKind)
FIELDS = ("category", "kind", "text", "why", "options", "recommended")
YES, NO = ("y", "yes", "true"), ("n", "no", "false")


def normalised(text: str) -> str:
    """Lowercase words only: "Which DB?" and "which  db" are the same question."""
    kept = "".join(c if c.isalnum() else " " for c in text.lower())
    return " ".join(kept.split())


def state_of(q: Question) -> str:
    if q["assumed"]:
        return "assumed"
    if q["skipped"]:
        return "skipped"
    return "open" if q["answer"] is None else "answered"


def _text(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{where}: required text is missing")
    return value


def _one_of(value: str, allowed: tuple[Allowed, ...], where: str) -> Allowed:
    """The word of `allowed` that `value` is."""
    if value in allowed:
        return allowed[allowed.index(value)]
    raise UsageError(f"{where}: {value!r} is not one of {', '.join(allowed)}")


def _options(raw: object, where: str) -> list[QuestionOption]:
    if not isinstance(raw, list):
        raise UsageError(f"{where}.options: expected a list, got {type(raw).__name__}")
    options: list[QuestionOption] = []
    for n, option in enumerate(raw):
        if isinstance(option, str):
            option = {"label": option}
        if (
            not isinstance(option, dict)
            or not isinstance(option.get("label"), str)
            or not option["label"].strip()
        ):
            raise UsageError(
                f'{where}.options[{n}]: expected a string or {{"label": …, "description": …}}'
            )
        extra = set(option) - {"label", "description"}
        if extra:
            raise UsageError(f"{where}.options[{n}]: unknown key {sorted(extra)[0]!r}")
        options.append(
            {"label": option["label"].strip(), "description": str(option.get("description", ""))}
        )
    return options


def _recommended(raw: object, options: list[QuestionOption], where: str) -> str | None:
    """The recommended option's label, from a label or a 1-based index."""
    if raw is None or raw == "":
        return None
    labels = [o["label"] for o in options]
    text = str(raw).strip()
    if text.isdecimal() and not isinstance(raw, bool):
        if not 1 <= int(text) <= len(labels):
            raise UsageError(
                f"{where}.recommended: {text} is not an option number (1 to {len(labels)})"
            )
        return labels[int(text) - 1]
    for label in labels:
        if label.lower() == text.lower():
            return label
    raise UsageError(
        f"{where}.recommended: {text!r} is not one of the options ({', '.join(labels) or 'none'})"
    )


def make_question(
    where: str,
    *,
    category: object = None,
    kind: object = None,
    text: object = None,
    why: object = None,
    options: object = None,
    recommended: object = None,
) -> Question:
    """A question from loose input (CLI options or imported JSON), checked field by field; its
    id is given when it is recorded."""
    category_word = _text(category, f"{where}.category")
    kind_word = _text(kind, f"{where}.kind")
    question = _text(text, f"{where}.text")
    checked_category = _one_of(category_word, CATEGORIES, f"{where}.category")
    checked_kind = _one_of(kind_word, KINDS, f"{where}.kind")
    choices = _options(options or [], where)
    if checked_kind == QuestionKind.YES_NO and not choices:
        choices = [{"label": "yes", "description": ""}, {"label": "no", "description": ""}]
    if checked_kind == QuestionKind.CHOICE and len(choices) < 2:
        raise UsageError(f"{where}.options: a choice question needs at least two options")
    if checked_kind == QuestionKind.TEXT and choices:
        raise UsageError(f"{where}.options: a text question takes no options")
    return new_question(
        "",
        checked_category,
        checked_kind,
        question.strip(),
        str(why or ""),
        choices,
        _recommended(recommended, choices, where),
    )


def new_question(
    id: str,
    category: Category,
    kind: QuestionKind,
    text: str,
    why: str,
    options: list[QuestionOption],
    recommended: str | None = None,
    about: str = "",
) -> Question:
    """A question asked now, not yet answered: discovery's and the executor's alike."""
    return {
        "id": id,
        "category": category,
        "kind": kind,
        "text": text,
        "why": why,
        "options": options,
        "recommended": recommended,
        "asked_at": clock.now(),
        "answer": None,
        "condition": None,
        "answered_at": None,
        "skipped": False,
        "assumed": False,
        "about": about,
    }


def record(tx: Transaction, questions: list[Question], where: str) -> list[str]:
    """Add questions to context.json with new ids; a duplicate of one on record is refused."""
    context = tx.edit("context")
    seen = {normalised(q["text"]): q["id"] for q in context["questions"]}
    ids = []
    for n, q in enumerate(questions):
        key = normalised(q["text"])
        if key in seen:
            label = where if len(questions) == 1 else f"{where}[{n}]"
            raise UsageError(f"{label}: {seen[key]} already asks this: {q['text']!r}")
        q["id"] = tx.new_id("context", "Q", context["questions"])
        seen[key] = q["id"]
        context["questions"].append(q)
        ids.append(q["id"])
    return ids


def question_add(
    tx: Transaction,
    *,
    category: str,
    kind: str,
    text: str,
    why: str | None,
    option: list[str],
    recommended: str | None,
) -> list[str]:
    """Add a question for the user (Q-NNN)."""
    q = make_question(
        "question add",
        category=category,
        kind=kind,
        text=text,
        why=why,
        options=option,
        recommended=recommended,
    )
    return record(tx, [q], "question add")


def extract_json(text: str, what: str, field: str | None = None) -> Any:
    """The JSON in `text`, also inside a markdown fence; errors say where (`what`, which
    starts with `field`, the argument's) and what is wrong."""
    body = text.strip()
    if "```" in body:
        inside = body.split("```", 2)[1]
        first, _, rest = inside.partition("\n")
        body = rest if first.strip().lower() in ("", "json", "jsonc") else inside
    try:
        return json.loads(body)
    except json.JSONDecodeError as e:
        lines = body.splitlines()
        near = lines[e.lineno - 1].strip()[:60] if 0 < e.lineno <= len(lines) else ""
        raise UsageError(
            f"{what}: not valid JSON: {e.msg.removesuffix(' at')} at line {e.lineno} column "
            f"{e.colno}" + (f" (near {near!r})" if near else ""),
            field=field,
        ) from None


def items_of(data: Any, key: str, what: str) -> list[Any]:
    """A list, or an object holding it under `key`."""
    if isinstance(data, dict) and key in data:
        data = data[key]
    if not isinstance(data, list) or not data:
        raise UsageError(f'{what}: expected a non-empty list of {key}, or {{"{key}": [...]}}')
    return data


def question_import(tx: Transaction, *, source: str) -> list[str]:
    """Add the questions an LLM wrote as JSON (a list, or {"questions": [...]}, fenced or not);
    a question the person has answered already (asked in the chat first) may carry its
    "answer", recorded as `question answer` records it."""
    questions, answers = [], []
    for n, raw in enumerate(
        items_of(extract_json(source, "question import"), "questions", "question import")
    ):
        where = f"questions[{n}]"
        if not isinstance(raw, dict):
            raise UsageError(f"{where}: expected an object, got {type(raw).__name__}")
        unknown = set(raw) - set(FIELDS) - {"id", "answer"}  # an id the LLM made up is ignored
        if unknown:
            raise UsageError(
                f"{where}: unknown key {sorted(unknown)[0]!r} (keys: {', '.join(FIELDS)}, answer)"
            )
        answer = raw.get("answer")
        if answer is not None and not isinstance(answer, (str, int)):
            raise UsageError(f"{where}.answer: expected text, got {type(answer).__name__}")
        answers.append(None if answer is None else str(answer))
        fields = {k: v for k, v in raw.items() if k not in ("id", "answer")}
        questions.append(make_question(where, **fields))
    ids = record(tx, questions, "questions")
    for q, answer in zip(questions, answers, strict=True):
        if answer is not None:
            check_text("the answer", answer, ANSWER_MAX)
            set_answer(q, *normal_answer(q, answer))
    return ids


def find_question(context: Context, qid: str) -> Question:
    for q in context["questions"]:
        if q["id"] == qid:
            return q
    raise UsageError(f"context.json: no question {qid}")


def words_after(rest: str) -> str:
    """The person's words after an option or yes/no: `rest` without what joins them to it
    (" - ", ": ", ", ", ") "), every other character kept ("(round 1)" keeps its ")")."""
    return re.sub(r"^\s*[-–—:;,.)]*\s*", "", rest).rstrip()


def normal_answer(q: Question, text: str) -> tuple[str, str | None]:
    """The answer as recorded and its condition: a choice's option label (from a number,
    a letter, OPT-X or the label, with the words after it, as written, as the condition),
    yes/no (likewise: "yes, but only for admins"), or a text answer's text. A choice none
    of whose options fits takes "other: TEXT" (TEXT recorded), as a question tool's "Other"
    does; not the executor's questions to the person, whose answers route the session."""
    text = text.strip()
    if not text:
        raise UsageError(f"{q['id']}: the answer is empty (or skip the question)")
    if q["kind"] == QuestionKind.TEXT:
        return text, None
    labels = [o["label"] for o in q["options"]]
    found = pick_option(q["id"], q["kind"], labels, text)
    other = re.match(r"other\s*[-–—:;,.)]\s*(\S.*)$", text, re.S | re.I)
    if found is None and other and q["kind"] == QuestionKind.CHOICE and not q["about"]:
        return other.group(1).rstrip(), None  # an answer none of the options gives
    if found is None:
        numbered = ", ".join(f"{n}) {label}" for n, label in enumerate(labels, 1))
        if q["kind"] == QuestionKind.YES_NO:
            raise UsageError(f"{q['id']}: answer yes or no, not {text!r}")
        raise UsageError(
            f"{q['id']}: {text!r} is not one of the options: {numbered} (answer with a "
            "number, a letter, OPT-X or the label; words after it are kept as a condition"
            + ("" if q["about"] else '; none fits: "other: THE ANSWER"')
            + ")"
        )
    label, rest = found
    return label, words_after(rest) or None


def pick_option(item_id: str, kind: str, labels: list[str], text: str) -> tuple[str, str] | None:
    """(option label, the text after it), or None when the text names no option; `kind` is a
    question's kind ("choice" for a design choice), `item_id` names it in errors."""
    lowered = text.lower()
    for label in sorted(labels, key=len, reverse=True):  # the label itself, then words
        if lowered.startswith(label.lower()) and (
            len(text) == len(label) or not text[len(label)].isalnum()
        ):
            return label, text[len(label) :]
    if kind == QuestionKind.YES_NO:  # a number is its option's, as the prompts say
        word = re.match(r"(\w+)(.*)$", text, re.S)
        if word and word.group(1).lower() in YES + NO:
            return ("yes" if word.group(1).lower() in YES else "no"), word.group(2)
    number = re.match(r"(\d+)(?![\w])(.*)$", text, re.S)
    if number:
        n = int(number.group(1))
        if not 1 <= n <= len(labels):
            raise UsageError(f"{item_id}: {n} is not an option number (1 to {len(labels)})")
        return labels[n - 1], number.group(2)
    if kind == QuestionKind.YES_NO:
        return None
    # a letter (b, B), OPT-B: alone, or followed by a separator such as "b) …" or "B - …"
    letter = re.match(r"(?:OPT-)?([A-Za-z])(?:$|[\s]*[-–—:;,.)](.*)$)", text, re.S | re.I)
    if letter:
        n = ord(letter.group(1).upper()) - ord("A")
        if n < len(labels):
            return labels[n], letter.group(2) or ""
    return None


def set_answer(
    q: Question,
    answer: str | None,
    condition: str | None = None,
    skipped: bool = False,
    assumed: bool = False,
) -> None:
    q["answer"], q["condition"] = answer, condition
    q["skipped"], q["assumed"] = skipped, assumed
    q["answered_at"] = clock.now()


def question_answer(
    tx: Transaction, *, id: str, text: str | None, skip: bool, assume: bool = False
) -> None:
    """Record the user's answer (a choice by number, letter or label; y/n; words after it
    are the answer's condition), or --skip, or --assume when nobody can answer: the
    recommended option as an assumption on record, as non-interactive mode records it."""
    check_text("the answer", text, ANSWER_MAX)
    # the executor's questions to the person (state/ops/asks.py) may be answered
    # after approval
    tx.asks = bool(find_question(tx.read("context"), id)["about"])
    context = tx.edit("context")
    q = find_question(context, id)
    if [skip, assume, text is not None].count(True) != 1:
        raise UsageError("question answer: give the answer, or skip or assume it: one of them")
    if (skip or assume) and q["about"]:
        raise UsageError(
            f"{q['id']}: the executor waits for the person's answer about {q['about']}; "
            "it cannot be skipped or assumed"
        )
    if assume:
        assume_answer(context, q, "nobody to answer")
    elif text is None:
        set_answer(q, None, skipped=True)
    else:
        set_answer(q, *normal_answer(q, text))


def assume_answer(context: Context, q: Question, why: str) -> None:
    """Answer with the recommended option as an assumption on record (or skip if none)."""
    if q["recommended"] is not None:
        set_answer(q, q["recommended"], assumed=True)
        context["assumptions"].append(
            f"{q['id']} {q['text']}: assumed {q['recommended']!r} ({why})"
        )
    else:
        set_answer(q, None, skipped=True, assumed=True)
        context["assumptions"].append(f"{q['id']} {q['text']}: no answer: {why}")
