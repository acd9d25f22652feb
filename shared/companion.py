"""What the review companion (`plan mcp`) reads from a session, as plain records: search over
the plan and its questions, the questions and answers, the review rounds with their drafts,
revisions and review rounds compared by meaning, and the audit trail filtered.

Read-only: every function takes the open Store and writes nothing (docs/design.md, "The
review companion").
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from state.errors import UsageError
from state.repo.numbered import numbered
from state.validation.diff import diff as semantic_diff

if TYPE_CHECKING:
    from state.storage.store import Store

SEARCH_HITS_MAX = 100  # matches returned by one search; the rest are counted
QUERY_MAX = 200  # characters of a search query
SNIPPET = 160  # characters of a matching line shown


def search(store: Store, query: str) -> dict[str, Any]:
    """Every item (by id) whose text holds `query` (case-insensitive): titles, descriptions,
    behaviours, diffs (with the new-file line a comment would anchor to), questions, answers."""
    wanted = query.strip().casefold()
    if not wanted:
        raise UsageError("query: give the words to look for")
    if len(wanted) > QUERY_MAX:
        raise UsageError(f"query: {len(wanted)} characters is over the limit of {QUERY_MAX}")
    plan = store.read("plan")
    context = store.read_or_none("context") or {}
    places: list[tuple[str, Any]] = [
        ("overview", plan["overview"]),
        ("knowledge", plan["invisible_knowledge"]),
    ]
    for item in items(plan):
        places.append((item["id"], item))
    for q in context.get("questions") or []:
        places.append((q["id"], q))
    if context.get("task_spec"):
        places.append(("context", context["task_spec"]))
    hits: list[dict[str, Any]] = []
    total = 0
    for item_id, value in places:
        for found in matches(item_id, value, wanted):
            total += 1
            if len(hits) < SEARCH_HITS_MAX:
                hits.append(found)
    return {"query": query, "matches": total, "shown": hits}


def items(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """The plan's items with ids: decisions … choices, milestones (without their intents and
    changes), intents, changes."""
    ctx = plan["planning_context"]
    found: list[dict[str, Any]] = []
    for group in ("decision_log", "rejected_alternatives", "constraints", "known_risks", "choices"):
        found += ctx[group]
    for m in plan["milestones"]:
        found.append({k: v for k, v in m.items() if k not in ("code_intents", "code_changes")})
        found += m["code_intents"] + m["code_changes"]
    return found


def matches(item_id: str, value: Any, wanted: str, field: str = "") -> list[dict[str, Any]]:
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


def questions(store: Store) -> list[dict[str, Any]]:
    """The questions with their answers, conditions, and whether skipped or assumed."""
    context = store.read_or_none("context") or {}
    keys = "id category kind text why options recommended answer condition answered_at skipped"
    keys += " assumed"
    return [{k: q.get(k) for k in keys.split()} for q in context.get("questions") or []]


def reviews(store: Store) -> dict[str, Any]:
    """The review rounds (verdict, who, feedback, comments, the revision and hash each saw),
    the gates' findings per phase, and the drafts waiting to be sent."""
    from state.ops import drafts
    from state.ops.qr_ops import PHASES
    from state.storage.store import report_name

    session = store.read("session")
    findings = {}
    for phase in PHASES:
        report = store.read_or_none(report_name(phase))
        if report is not None:
            findings[phase] = {
                "iteration": report["iteration"],
                "items": report["items"],
                "accepted": report.get("accepted"),
            }
    waiting = [d for d in drafts.load(store.dir)["drafts"] if not d["sent"]]
    return {
        "status": session["status"],
        "rounds": session["reviews"],
        "approval": session.get("approval"),
        "findings": findings,
        "drafts": waiting,
        "draft_round": drafts.feedback_round(session),
    }


def revision_of(store: Store, name: str) -> str:
    """A revision name from what a caller gives: r7, current, or a review round (round 2)."""
    given = name.strip().lower()
    if given.startswith("round"):
        number = given[len("round") :].strip()
        rounds = [r for r in store.read("session")["reviews"] if str(r["round"]) == number]
        if not rounds or not rounds[0].get("revision"):
            raise UsageError(f"{name!r}: no review round {number} on record (see review_rounds)")
        return str(rounds[0]["revision"])
    return given


def compare(store: Store, a: str | None, b: str | None) -> dict[str, Any]:
    """The plan compared by meaning between two revisions or review rounds (as `plan diff`):
    by default the previous revision and now."""
    if a is None:
        revisions = store.history()
        rev_a = revisions[-2]["rev"] if len(revisions) > 1 else "r1"
    else:
        rev_a = revision_of(store, a)
    rev_b = revision_of(store, b or "current")

    def load(rev: str) -> dict[str, Any]:
        return store.read("plan") if rev == "current" else store.revision(rev)

    changes = semantic_diff(load(rev_a), load(rev_b))
    return {"from": rev_a, "to": rev_b, "changes": [c.as_dict() for c in changes]}


def audit(store: Store, limit: int, contains: str | None) -> dict[str, Any]:
    """The newest `limit` audit records (oldest first), those holding `contains` only when
    given; a line that is not JSON is kept as text."""
    if limit < 1:
        raise UsageError("limit: must be at least 1")
    lines = store.audit_lines()
    if contains:
        lines = [line for line in lines if contains.casefold() in line.casefold()]
    records: list[Any] = []
    for line in lines[-limit:]:
        try:
            records.append(json.loads(line))
        except ValueError:
            records.append({"unreadable": line})
    return {"total": len(lines), "records": records}
