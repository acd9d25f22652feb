"""plan.md: the plan rendered for people from plan.json (never edited by hand), with what a
person approving it needs beside it: the task, the user's answers, the reviews, the approval.

render_plan() takes the documents; for_session() binds the session's other files so that a
caller holding only plan.json (plan verify, state/rules/approval.py) renders the same text.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Literal, Protocol, overload

from shared.render import render
from state.ops.question_ops import state_of
from state.rules.amendments import approved_since, open_amendment, rejected_since
from state.storage.store import report_name
from state.vocab import PLANNING_PHASES, Phase, ReviewVerdict
from state.vocab import SessionStatus as S

if TYPE_CHECKING:
    from state.rules.session_store import Store, Transaction
    from state.storage.documents import (
        Context,
        Milestone,
        Plan,
        QRReport,
        RejectedAlternative,
        Session,
    )
    from state.storage.store import QRName

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")


class Reader(Protocol):
    """Reads the session's other documents by name: a store's or a transaction's read_or_none."""

    @overload
    def __call__(self, name: Literal["context"]) -> Context | None: ...
    @overload
    def __call__(self, name: Literal["session"]) -> Session | None: ...
    @overload
    def __call__(self, name: QRName) -> QRReport | None: ...


def render_plan(
    plan: Plan,
    context: Context | None = None,
    session: Session | None = None,
    reports: dict[Phase, QRReport] | None = None,
    compact: bool = False,
) -> str:
    """plan.md for `plan`; the approval shows only on a frozen plan (else "not approved yet").
    compact: each diff summarised as its file, +/- line counts and intent (what an agent
    reads; the person's plan.md is whole)."""
    questions = {q["id"]: q for q in context["questions"]} if context else {}
    variables = {
        "plan": plan,
        "task": session["task"] if session else "",
        "context": context,
        "questions": questions,
        "milestones": in_apply_order(plan),
        "alternatives": _by_decision(plan["planning_context"]["rejected_alternatives"]),
        "loose_constraints": loose_constraints(plan, context),
        "reports": [(p, reports[p]) for p in PLANNING_PHASES if reports and p in reports],
        "rejections": [r for r in session["reviews"] if r["verdict"] == ReviewVerdict.REJECTED]
        if session
        else [],
        "approval": session["approval"] if session and plan["frozen_at"] else None,
        "amendments": session["amendments"] if session else [],
        "picked_as": {c["decision_ref"] for c in plan["planning_context"]["choices"]} - {None},
        "superseded": superseded_by(plan),
        "compact": compact,
        "counts": diff_counts,
    }
    return render("plan.md.j2", variables, [TEMPLATES]).strip() + "\n"


def summary(plan: Plan, diffs: bool = False, only: Collection[str] | None = None) -> list[str]:
    """The plan in a few lines, for the agent to tell the person what they approve (step 11,
    `plan render --summary`): the approach, the decisions in force and the choices picked,
    each milestone in apply order with its files' +/- lines and what accepts it (with diffs:
    each of its changes whole, as `plan review show` prints them), the risks. `only`: just
    these milestones' lines (an amendment's, whose rest the person approved)."""
    if only is not None:
        return [line for m in in_apply_order(plan) if m["id"] in only for line in _lines(m, diffs)]
    overview = plan["overview"]
    ctx = plan["planning_context"]
    lines = [f"{overview['title'] or 'The plan'}: {overview['approach'] or overview['problem']}"]
    by_choice = {c["decision_ref"] for c in ctx["choices"]}
    lines += [
        f"  {d['id']} {d['decision']}"
        for d in ctx["decision_log"]
        if not d["superseded_by"] and d["id"] not in by_choice
    ]
    for c in ctx["choices"]:
        picked = next((o["name"] for o in c["options"] if o["id"] == c["picked"]), "not picked")
        lines.append(f"  {c['id']} {c['topic']}: {picked}")
    for m in in_apply_order(plan):
        lines += _lines(m, diffs)
    lines += [f"  {r['id']} risk: {r['risk']} ({r['mitigation']})" for r in ctx["known_risks"]]
    return lines


def _lines(m: Milestone, diffs: bool) -> list[str]:
    """A milestone's lines in the summary."""
    files: dict[str, list[str]] = {}  # a file's changes, counted together
    for change in m["code_changes"]:
        files.setdefault(change["file"], []).append(change["diff"])
    changed = ", ".join(f"{f} {diff_counts(*d)}" for f, d in files.items())
    changed = changed or ", ".join(m["files"])
    lines = [f"  {m['id']} {m['name']}: {changed or 'no files'}"]
    if m["acceptance_criteria"]:
        lines.append(f"    accepts: {'; '.join(m['acceptance_criteria'])}")
    for change in m["code_changes"] if diffs else []:
        intents = ",".join([change["intent_ref"], *change["shared_intents"]])
        lines.append(f"    {change['id']} {change['file']} ({intents}):")
        lines += [f"      {t}" for t in change["diff"].splitlines()]
    return lines


def review_view(store: Store) -> list[str]:
    """What the person judges at step 11, in their terminal (`plan review show`): the round,
    what changed since the last one they judged, the plan with every change's diff, the open
    questions and assumptions, and the commands that give the verdict."""
    session, plan = store.read("session"), store.read("plan")
    context, amendment = store.read_or_none("context"), open_amendment(session)
    rounds, in_review = len(session["reviews"]), session["status"] == S.REVIEW
    head = f"Review round {rounds}" if in_review else f"Not in review ({session['status']})"
    if amendment:
        head += f", amendment round {amendment['round']} ({amendment['reason']})"
    lines = [f"{head}."]
    find = approved_since if amendment else rejected_since
    if since := find(store, session, plan):
        rev, changes = since
        what = "the approval it amends" if amendment else f"review round {rounds - 1}"
        whole = f" (each whole: plan diff {rev})" if rev else ""
        lines += [f"Changed since {what}{whole}:", *(f"  {c}" for c in changes or ["nothing"])]
    lines += summary(plan, diffs=True)
    questions = context["questions"] if context else []
    left = [
        f"  {q['id']} ({state_of(q)}) {q['text']}"
        + (f" -> {q['answer'] or 'no answer'}" if q["assumed"] else "")
        for q in questions
        if state_of(q) != "answered"
    ]
    own = tuple(f"{q['id']} {q['text']}: " for q in questions)  # assume_answer's, shown above
    left += [f"  {a}" for a in (context["assumptions"] if context else []) if not a.startswith(own)]
    lines += ["Open questions and assumptions:", *left] if left else []
    if in_review:
        lines.append(
            'Your verdict: plan review approve, or plan review reject --feedback "…"\n'
            "  [--comment 'CC-001:3: …' on a line of a change]; on a page: plan review open"
        )
    return lines


def superseded_by(plan: Plan) -> dict[str, str]:
    """Each superseded decision's last successor (DL-005 -> DL-006 -> DL-007 gives DL-007), so
    an intent that still cites DL-005 says what now decides it."""
    successor = {
        d["id"]: d["superseded_by"]
        for d in plan["planning_context"]["decision_log"]
        if d["superseded_by"]
    }
    found = {}
    for start, nxt in successor.items():
        seen = {start}
        while nxt in successor and nxt not in seen:
            seen.add(nxt)
            nxt = successor[nxt]
        found[start] = nxt
    return found


def diff_counts(*diffs: str) -> str:
    """ "+3 -1": the lines unified diffs add and remove, together."""
    lines = [line for diff in diffs for line in diff.splitlines()]
    added = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
    removed = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
    return f"+{added} -{removed}"


def in_apply_order(plan: Plan) -> list[Milestone]:
    """Milestones by wave (plan order within one), the order `plan validate` applies their
    diffs in: a diff that applies on top of another comes after it."""
    wave_of = {
        mid: w["wave"] for w in plan["milestone_dependencies"]["waves"] for mid in w["milestones"]
    }
    return sorted(plan["milestones"], key=lambda m: wave_of.get(m["id"], 0))


def loose_constraints(plan: Plan, context: Context | None) -> list[str]:
    """context.json's constraints that the plan does not already hold with an id: one
    recorded both ways (discovery's words, then C-001) is shown once."""
    held = {_words(c["description"]) for c in plan["planning_context"]["constraints"]}
    return [c for c in context["constraints"] if _words(c) not in held] if context else []


def _words(text: str) -> str:
    return " ".join(text.lower().replace(".", " ").replace(":", " ").split())


def _by_decision(alternatives: list[RejectedAlternative]) -> dict[str, list[RejectedAlternative]]:
    found: dict[str, list[RejectedAlternative]] = {}
    for r in alternatives:
        found.setdefault(r["decision_ref"], []).append(r)
    return found


def for_session(read: Reader, compact: bool = False) -> Callable[[Plan], str]:
    """A renderer of plan.json bound to the session's context, session and planning reviews,
    read through `read` (a store's or a transaction's read_or_none)."""
    context, session = read("context"), read("session")
    reports = {p: r for p in PLANNING_PHASES if (r := read(report_name(p))) is not None}
    return lambda plan: render_plan(plan, context, session, reports, compact)


def put_plan_md(tx: Transaction) -> None:
    """Render plan.md into the open transaction: it lands with the change or not at all."""
    tx.put("plan.md", for_session(tx.read_or_none)(tx.read("plan")).encode())
