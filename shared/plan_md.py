"""plan.md: the plan rendered for people from plan.json (never edited by hand), with what a
person approving it needs beside it: the task, the user's answers, the reviews, the approval.

render_plan() takes the documents; for_session() binds the session's other files so that a
caller holding only plan.json (plan verify, state/validation/approval.py) renders the same text.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from shared.render import render

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
PLANNING_PHASES = ("plan-design", "plan-code", "plan-docs")

Reader = Callable[[str], "dict[str, Any] | None"]


def render_plan(
    plan: dict[str, Any],
    context: dict[str, Any] | None = None,
    session: dict[str, Any] | None = None,
    reports: dict[str, dict[str, Any]] | None = None,
    compact: bool = False,
) -> str:
    """plan.md for `plan`; the approval shows only on a frozen plan (else "not approved yet").
    compact: each diff summarised as its file, +/- line counts and intent (what an agent
    reads; the person's plan.md is whole)."""
    questions = {q["id"]: q for q in (context or {}).get("questions", [])}
    variables = {
        "plan": plan,
        "task": (session or {}).get("task", ""),
        "context": context,
        "questions": questions,
        "milestones": in_apply_order(plan),
        "alternatives": _by_decision(plan["planning_context"]["rejected_alternatives"]),
        "loose_constraints": loose_constraints(plan, context),
        "reports": [(p, reports[p]) for p in PLANNING_PHASES if reports and p in reports],
        "rejections": [r for r in (session or {}).get("reviews", []) if r["verdict"] == "rejected"],
        "approval": (session or {}).get("approval") if plan.get("frozen_at") else None,
        "amendments": (session or {}).get("amendments") or [],
        "compact": compact,
        "counts": diff_counts,
    }
    return render("plan.md.j2", variables, [TEMPLATES]).strip() + "\n"


def diff_counts(diff: str) -> str:
    """ "+3 -1": the lines a unified diff adds and removes."""
    lines = diff.splitlines()
    added = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
    removed = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
    return f"+{added} -{removed}"


def in_apply_order(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """Milestones by wave (plan order within one), the order `plan validate` applies their
    diffs in: a diff that applies on top of another comes after it."""
    wave_of = {
        mid: w["wave"] for w in plan["milestone_dependencies"]["waves"] for mid in w["milestones"]
    }
    return sorted(plan["milestones"], key=lambda m: wave_of.get(m["id"], 0))


def loose_constraints(plan: dict[str, Any], context: dict[str, Any] | None) -> list[str]:
    """context.json's constraints that the plan does not already hold with an id: one
    recorded both ways (discovery's words, then C-001) is shown once."""
    held = {_words(c["description"]) for c in plan["planning_context"]["constraints"]}
    return [c for c in (context or {}).get("constraints", []) if _words(c) not in held]


def _words(text: str) -> str:
    return " ".join(text.lower().replace(".", " ").replace(":", " ").split())


def _by_decision(alternatives: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for r in alternatives:
        found.setdefault(r["decision_ref"], []).append(r)
    return found


def for_session(read: Reader, compact: bool = False) -> Callable[[dict[str, Any]], str]:
    """A renderer of plan.json bound to the session's context, session and planning reviews,
    read through `read` (a store's or a transaction's read_or_none)."""
    context, session = read("context"), read("session")
    reports = {p: r for p in PLANNING_PHASES if (r := read(f"qr-{p}")) is not None}
    return lambda plan: render_plan(plan, context, session, reports, compact)


def put_plan_md(tx: Any) -> None:
    """Render plan.md into the open transaction: it lands with the change or not at all."""
    tx.put("plan.md", for_session(tx.read_or_none)(tx.read("plan")).encode())
