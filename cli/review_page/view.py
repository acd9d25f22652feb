"""What the review page shows, read from a session in one pass: the plan with its hash, the
context, QR reports, history and audit trail, and what changed since the last review round."""

from __future__ import annotations

import json
import os
from typing import TypedDict

from state.ops import drafts
from state.ops.qr_ops import PHASES
from state.ops.result_view import Result, result_of
from state.repo.numbered import Line, numbered
from state.rules.approval import plan_hash
from state.storage.documents import CodeChange, CodeIntent, Milestone  # bases of the views
from state.storage.store import AUDIT_FILE, report_name
from state.validation.diff import Change
from state.validation.diff import diff as semantic_diff
from state.vocab import ReviewVerdict
from state.vocab import SessionStatus as S

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from state.ops.drafts import Draft
    from state.rules.session_store import Store
    from state.storage.documents import (
        Context,
        Plan,
        QRReport,
        Question,
        ResultReview,
        Review,
        Session,
        TaskSpec,
    )
    from state.storage.history import Entry

AUDIT_LIMIT = 500  # the newest lines; `plan log` has them all


class SaidOn(TypedDict):
    """Earlier rounds' comments on one anchor as (round, text): on the item, by line, and by
    a result commit's file and its new-file line."""

    item: list[tuple[int, str]]
    lines: dict[int, list[tuple[int, str]]]
    files: dict[str, dict[int, list[tuple[int, str]]]]


class ChangeView(CodeChange):
    lines: list[Line]


class IntentView(CodeIntent):
    changes: list[ChangeView]
    shared: list[str]  # the changes of other intents that serve this one too


class MilestoneView(Milestone):
    intents: list[IntentView]


class AuditRow(TypedDict):
    at: str
    event: str
    details: list[tuple[str, str]]


class Since(TypedDict):
    """What changed since the last review round the person decided (since_last_round)."""

    round: int
    approved: bool
    revision: str
    changes: list[Change]
    ids: set[str]


class ResultPart(TypedDict):
    """The result view's part of the page: `result` None while it is not shown."""

    result: Result | None
    in_result_review: bool
    result_rounds: list[ResultReview]
    result_round: int
    result_said: dict[str, SaidOn]


class PageModel(ResultPart):
    """Everything the page's templates render."""

    session: Session
    plan: Plan
    sha256: str
    context: Context | None
    task_spec: TaskSpec | None
    questions: list[Question]
    milestones: list[MilestoneView]
    qr: list[tuple[str, QRReport | None]]
    history: list[Entry]
    rounds: list[Review]
    round: int
    said: dict[str, SaidOn]
    audit: list[AuditRow]
    since: Since | None
    in_review: bool
    draft: Draft | None  # the companion's, filling the form


def page_model(store: Store) -> PageModel:
    """Everything the page renders; `sha256` is the hash of exactly the plan shown."""
    session, plan = store.read("session"), store.read("plan")
    context = store.read_or_none("context")
    reviews, in_review = session["reviews"], session["status"] == S.REVIEW
    amending = session["approval"] is None and bool(session["amendments"])
    return {
        "session": session,
        "plan": plan,
        "sha256": plan_hash(plan),
        "context": context,
        "task_spec": context["task_spec"] if context else None,
        "questions": context["questions"] if context else [],
        "milestones": [milestone_view(m) for m in plan["milestones"]],
        "qr": [(phase, store.read_or_none(report_name(phase))) for phase in PHASES],
        "history": store.history(),
        "rounds": [r for r in reviews if r["revision"]],
        "round": reviews[-1]["round"] if reviews else 0,
        "said": said(reviews),
        "audit": audit(store),
        "since": since_last_round(store, plan, reviews, amending),
        "in_review": in_review,
        "draft": drafts.latest(store.dir, session) if in_review else None,
        **result_model(store, session),
    }


def result_model(store: Store, session: Session) -> ResultPart:
    """The result view's part of the page (state/ops/result_view.py, what `plan result show`
    prints too): while the result is in review, and once it was accepted."""
    rounds = session["result_reviews"]
    shown = session["status"] == S.RESULT_REVIEW or (
        session["status"] == S.COMPLETED and bool(rounds)
    )
    if not shown:
        rounds = []  # none of its parts shows
    return {
        "result": result_of(store) if shown else None,
        "in_result_review": session["status"] == S.RESULT_REVIEW,
        "result_rounds": rounds,
        "result_round": rounds[-1]["round"] if rounds else 0,
        "result_said": said(rounds),
    }


def milestone_view(milestone: Milestone) -> MilestoneView:
    """A milestone with each intent's code changes and their diff lines classified."""
    intents: list[IntentView] = []
    for intent in milestone["code_intents"]:
        changes: list[ChangeView] = [
            {**c, "lines": numbered(c["diff"])}
            for c in milestone["code_changes"]
            if c["intent_ref"] == intent["id"]
        ]
        shared = [
            c["id"] for c in milestone["code_changes"] if intent["id"] in c["shared_intents"]
        ]  # one change serving several intents of a file is shown once, under its first
        intents.append({**intent, "changes": changes, "shared": shared})
    return {**milestone, "intents": intents}


def said(rounds: Sequence[Review | ResultReview]) -> dict[str, SaidOn]:
    """Earlier rounds' comments by anchor, to show on their item, line and (a result's)
    milestone file: {"M-001": {"item": [(round, text)], "lines": {7: [(round, text)]},
    "files": {"src/app.py": {5: [(round, text)]}}}}."""
    found: dict[str, SaidOn] = {}
    for r in rounds:
        for c in r["comments"]:
            place = found.setdefault(c["anchor"], {"item": [], "lines": {}, "files": {}})
            said_at = (r["round"], c["text"])
            file = c.get("file")
            if isinstance(file, str) and file and c["line"]:
                place["files"].setdefault(file, {}).setdefault(c["line"], []).append(said_at)
            elif c["line"]:
                place["lines"].setdefault(c["line"], []).append(said_at)
            else:
                place["item"].append(said_at)
    return found


def audit(store: Store) -> list[AuditRow]:
    try:
        with open(os.path.join(store.dir, AUDIT_FILE), encoding="utf-8") as f:
            lines = f.readlines()[-AUDIT_LIMIT:]
    except FileNotFoundError:
        return []
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(audit_row(record))
    return records[::-1]


def audit_row(record: dict[str, object]) -> AuditRow:
    """An audit line as a table row: when, what, and the rest as short "key: value" pairs.
    An audit record's keys depend on its event: any JSON object is shown."""
    at = str(record.get("at") or record.get("ts") or "")
    event = str(record.get("command") or record.get("event") or "")  # a mutation: its command
    rest = []
    for key, value in record.items():
        if key in ("at", "ts", "event", "command") or value in (None, "", [], {}):
            continue
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        rest.append((key, text if len(text) <= 200 else text[:200] + "…"))
    return {"at": at, "event": event, "details": rest}


def since_last_round(
    store: Store, plan: Plan, reviews: list[Review], amending: bool = False
) -> Since | None:
    """The semantic diff from what the last rejected review round saw to the plan now: what
    the agent changed for the person (the freeze itself is not news). While an amendment is
    open (`amending`) the approved round counts too: the person sees the changes since the
    last approval, as step 11 prints them."""
    verdicts = (
        (ReviewVerdict.REJECTED, ReviewVerdict.APPROVED) if amending else (ReviewVerdict.REJECTED,)
    )
    seen = [(r, rev) for r in reviews if r["verdict"] in verdicts and (rev := r["revision"])]
    if not seen:
        return None
    last, revision = seen[-1]
    changes = [c for c in semantic_diff(store.revision(revision), plan) if c.what != "frozen_at"]
    return {
        "round": last["round"],
        "approved": last["verdict"] == ReviewVerdict.APPROVED,
        "revision": revision,
        "changes": changes,
        "ids": {c.what for c in changes},
    }


def signature(store: Store) -> tuple[tuple[str, int, int], ...]:
    """Modification times and sizes of the session's files: a change means "reload"."""
    names = ["session.json", "plan.json", "context.json", "execution.json", AUDIT_FILE]
    names += [f"{report_name(p)}.json" for p in PHASES]
    found = []
    for name in names:
        try:
            st = os.stat(os.path.join(store.dir, name))
        except OSError:
            continue
        found.append((name, st.st_mtime_ns, st.st_size))
    return tuple(found)
