"""What the review companion (`plan mcp`) reads from a session, as plain records: search over
the plan and its questions, the questions and answers, the review rounds with their drafts,
revisions and review rounds compared by meaning, and the audit trail filtered.

Read-only: every function takes the open Store and writes nothing (docs/design.md, "The
review companion").
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, NotRequired, TypedDict

from state.errors import UsageError
from state.ops.qr_ops import PHASES
from state.repo.numbered import numbered
from state.storage.store import report_name
from state.validation.diff import diff as semantic_diff

if TYPE_CHECKING:
    from state.ops.drafts import Draft
    from state.rules.session_store import Store
    from state.storage.documents import Acceptance, Approval, Plan, QRItem, QuestionOption, Review
    from state.validation.diff import Change, ChangeRecord

SEARCH_HITS_MAX = 100  # matches returned by one search; the rest are counted
QUERY_MAX = 200  # characters of a search query
SNIPPET = 160  # characters of a matching line shown


class Hit(TypedDict):
    """A line that holds the words looked for: the item, its field and the line."""

    id: str
    field: str
    line: NotRequired[int | None]  # in a diff: the new-file line a comment anchors to
    text: str


class SearchResult(TypedDict):
    query: str
    matches: int
    shown: list[Hit]


class AskedQuestion(TypedDict):
    id: str
    category: str
    kind: str
    text: str
    why: str
    options: list[QuestionOption]
    recommended: str | None
    answer: str | None
    condition: str | None
    answered_at: str | None
    skipped: bool
    assumed: bool


class Findings(TypedDict):
    iteration: int
    items: list[QRItem]
    accepted: Acceptance | None


class Reviews(TypedDict):
    status: str
    rounds: list[Review]
    approval: Approval | None
    findings: dict[str, Findings]
    drafts: list[Draft]
    draft_round: int


# "from" is a keyword: the functional form, its types quoted (they exist for type checking only)
Comparison = TypedDict("Comparison", {"from": "str", "to": "str", "changes": "list[ChangeRecord]"})


class AuditPage(TypedDict):
    total: int
    records: list[object]  # each audit line's JSON (its keys depend on the event), or text


def search(store: Store, query: str) -> SearchResult:
    """Every item (by id) whose text holds `query` (case-insensitive): titles, descriptions,
    behaviours, diffs (with the new-file line a comment would anchor to), questions, answers."""
    wanted = query.strip().casefold()
    if not wanted:
        raise UsageError("query: give the words to look for")
    if len(wanted) > QUERY_MAX:
        raise UsageError(f"query: {len(wanted)} characters is over the limit of {QUERY_MAX}")
    plan = store.read("plan")
    context = store.read_or_none("context")
    places: list[tuple[str, object]] = [
        ("overview", plan["overview"]),
        ("knowledge", plan["invisible_knowledge"]),
        *items(plan),
    ]
    if context:
        places += [(q["id"], q) for q in context["questions"]]
        places.append(("context", context["task_spec"]))
    hits: list[Hit] = []
    total = 0
    for item_id, value in places:
        for found in matches(item_id, value, wanted):
            total += 1
            if len(hits) < SEARCH_HITS_MAX:
                hits.append(found)
    return {"query": query, "matches": total, "shown": hits}


def items(plan: Plan) -> list[tuple[str, object]]:
    """The plan's items by id: decisions … choices, milestones (without their intents and
    changes), intents, changes."""
    ctx = plan["planning_context"]
    found: list[tuple[str, object]] = []
    found += [(i["id"], i) for i in ctx["decision_log"]]
    found += [(i["id"], i) for i in ctx["rejected_alternatives"]]
    found += [(i["id"], i) for i in ctx["constraints"]]
    found += [(i["id"], i) for i in ctx["known_risks"]]
    found += [(i["id"], i) for i in ctx["choices"]]
    for m in plan["milestones"]:
        found.append(
            (m["id"], {k: v for k, v in m.items() if k not in ("code_intents", "code_changes")})
        )
        found += [(i["id"], i) for i in m["code_intents"]]
        found += [(c["id"], c) for c in m["code_changes"]]
    return found


def matches(item_id: str, value: object, wanted: str, field: str = "") -> list[Hit]:
    """The lines of `value`'s strings (walked through dicts and lists) that hold `wanted`."""
    if isinstance(value, dict):
        return [
            hit
            for key, inner in value.items()
            for hit in matches(item_id, inner, wanted, f"{field}.{key}" if field else key)
        ]
    if isinstance(value, list):
        return [
            hit
            for i, inner in enumerate(value)
            for hit in matches(item_id, inner, wanted, f"{field}[{i}]")
        ]
    if not isinstance(value, str) or wanted not in value.casefold():
        return []
    if field == "diff":
        return [
            {"id": item_id, "field": field, "line": line.new, "text": clip(line.text)}
            for line in numbered(value)
            if wanted in line.text.casefold()
        ]
    return [
        {"id": item_id, "field": field, "text": clip(line)}
        for line in value.splitlines()
        if wanted in line.casefold()
    ]


def clip(text: str) -> str:
    return text if len(text) <= SNIPPET else text[: SNIPPET - 1] + "…"


def questions(store: Store) -> list[AskedQuestion]:
    """The questions with their answers, conditions, and whether skipped or assumed."""
    context = store.read_or_none("context")
    return [
        {
            "id": q["id"],
            "category": q["category"],
            "kind": q["kind"],
            "text": q["text"],
            "why": q["why"],
            "options": q["options"],
            "recommended": q["recommended"],
            "answer": q["answer"],
            "condition": q["condition"],
            "answered_at": q["answered_at"],
            "skipped": q["skipped"],
            "assumed": q["assumed"],
        }
        for q in (context["questions"] if context else [])
    ]


def reviews(store: Store) -> Reviews:
    """The review rounds (verdict, who, feedback, comments, the revision and hash each saw),
    the gates' findings per phase, and the drafts waiting to be sent."""
    from state.ops import drafts  # pydantic's adapters (~200 ms): not for `plan diff`'s between

    session = store.read("session")
    findings: dict[str, Findings] = {}
    for phase in PHASES:
        report = store.read_or_none(report_name(phase))
        if report is not None:
            findings[phase] = {
                "iteration": report["iteration"],
                "items": report["items"],
                "accepted": report["accepted"],
            }
    return {
        "status": session["status"],
        "rounds": session["reviews"],
        "approval": session["approval"],
        "findings": findings,
        "drafts": [d for d in drafts.load(store.dir)["drafts"] if not d["sent"]],
        "draft_round": drafts.feedback_round(session),
    }


def revision_of(store: Store, name: str) -> str:
    """A revision name from what a caller gives: r7, current, or a review round (round 2)."""
    given = name.strip().lower()
    if given.startswith("round"):
        number = given[len("round") :].strip()
        seen = [
            r["revision"] for r in store.read("session")["reviews"] if str(r["round"]) == number
        ]
        if not seen or not seen[0]:
            raise UsageError(f"{name!r}: no review round {number} on record (see review_rounds)")
        return seen[0]
    return given


def compare(store: Store, a: str | None, b: str | None) -> Comparison:
    """The plan compared by meaning between two revisions or review rounds (as `plan diff`):
    by default the previous revision and now."""
    if a is None:
        revisions = store.history()
        rev_a = revisions[-2]["rev"] if len(revisions) > 1 else "r1"
    else:
        rev_a = revision_of(store, a)
    rev_b = revision_of(store, b or "current")
    changes = between(store, rev_a, rev_b)
    return {"from": rev_a, "to": rev_b, "changes": [c.as_dict() for c in changes]}


def between(store: Store, rev_a: str, rev_b: str) -> list[Change]:
    """The semantic diff between two revisions (r3, or "current"), as the page shows it."""

    def load(rev: str) -> Plan:
        return store.read("plan") if rev == "current" else store.revision(rev)

    return semantic_diff(load(rev_a), load(rev_b))


def audit(store: Store, limit: int, contains: str | None) -> AuditPage:
    """The newest `limit` audit records (oldest first), those holding `contains` only when
    given; a line that is not JSON is kept as text."""
    if limit < 1:
        raise UsageError("limit: must be at least 1")
    lines = store.audit_lines()
    if contains:
        lines = [line for line in lines if contains.casefold() in line.casefold()]
    records: list[object] = []
    for line in lines[-limit:]:
        try:
            records.append(json.loads(line))
        except ValueError:
            records.append({"unreadable": line})
    return {"total": len(lines), "records": records}
