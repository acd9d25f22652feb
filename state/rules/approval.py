"""Approval: the sha256 of the canonical plan content, the freeze, and `plan verify`.

Canonical content is plan.json without frozen_at, keys sorted, no whitespace, UTF-8.
"""

from __future__ import annotations

import os

from state import clock
from state.errors import Finding
from state.rules.amendments import chain_findings, open_amendment, revision_hash, revision_hashes
from state.rules.lifecycle import transition
from state.rules.session_store import Store
from state.storage.content import plan_hash as plan_hash  # part of what approval offers
from state.vocab import ReviewVerdict
from state.vocab import SessionStatus as S

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from state.rules.session_store import Transaction
    from state.storage.documents import Approval, Plan, Session


def approve(tx: Transaction, by: str) -> Approval:
    """Record who approved the exact content, then freeze it: status approved."""
    tx.verdict = True  # the freeze is the one write a plan in review takes
    session, plan = tx.edit("session"), tx.edit("plan")
    at = clock.now()
    approval: Approval = {"by": by, "at": at, "sha256": plan_hash(plan), "signature": None}
    plan["frozen_at"] = at
    transition(session, S.APPROVED)
    amendment = open_amendment(session)
    if amendment is not None:  # a re-approval: the round's own link in the chain
        amendment["approved"] = approval
        tx.note(amendment=amendment["round"])
    session["approval"], session["updated_at"] = approval, at
    tx.note(approved_by=by, sha256=approval["sha256"])
    return approval


def verify(
    plan: Plan,
    session: Session | None,
    state_dir: str | None = None,
    render: Callable[[Plan], str] | None = None,
) -> list[Finding]:
    """Why a plan is not the frozen, approved plan it should be ([] when it is).

    The approval record is the reference (frozen means approved): plan.json's
    hash, the last review round and, given the session directory and the plan.md renderer
    (shared/plan_md.py, passed in: state/ does not import shared/), plan.md agree with it.
    """
    approval = session["approval"] if session else None
    if session is None or approval is None:
        if not plan["frozen_at"]:
            message = "the plan is not frozen (not approved yet)"
            return [Finding("plan.json:frozen_at", message, "planner next", rule="no-approval")]
        message = "no approval on record"
        return [Finding("session.json:approval", message, "planner status", rule="no-approval")]
    # history/ is local (.planner/.gitignore): a clone has none, and then no check needs it
    history = state_dir is not None and bool(Store(state_dir).history())
    restore = "restore plan.json from git" + (" or from history/ (plan history)" if history else "")
    actual = plan_hash(plan)
    findings = []
    if actual != approval["sha256"]:
        message = (
            f"content changed after approval: sha256 {actual[:12]}… "
            f"is not the approved {approval['sha256'][:12]}…"
        )
        findings.append(Finding("plan.json", message, restore, rule="content-changed"))
    elif not plan["frozen_at"]:
        message = "changed after approval: frozen_at cleared"
        findings.append(Finding("plan.json:frozen_at", message, restore, rule="content-changed"))
    findings += _review_findings(session, approval)
    hashes = None if not history else (lambda: revision_hashes(Store(str(state_dir))))
    held = None if not history else (lambda rev: revision_hash(Store(str(state_dir)), rev))
    findings += chain_findings(session, hashes, held)
    if state_dir is not None and render is not None:
        findings += _plan_md_findings(plan, state_dir, render)
    return findings


def _review_findings(session: Session, approval: Approval) -> list[Finding]:
    """The last review round is the approval: verdict approved, the same hash."""
    rounds = session["reviews"]
    last = rounds[-1] if rounds else None
    if not last or last["verdict"] != ReviewVerdict.APPROVED:
        message = "the last review round is not the approval"
        return [Finding("session.json:reviews", message, rule="review-mismatch")]
    if last["sha256"] != approval["sha256"]:
        message = (
            f"review round {last['round']} approved sha256 {str(last['sha256'])[:12]}…, the "
            f"approval record says {approval['sha256'][:12]}…"
        )
        return [Finding("session.json:reviews", message, rule="review-mismatch")]
    if last["by"] != approval["by"]:
        message = (
            f"the approval says it was given by {approval['by']!r}, review round "
            f"{last['round']} by {last['by']!r}: session.json changed outside plan commands"
        )
        fix = "restore session.json from git"
        return [Finding("session.json:approval.by", message, fix, rule="review-mismatch")]
    return []


def _plan_md_findings(plan: Plan, state_dir: str, render: Callable[[Plan], str]) -> list[Finding]:
    """plan.md, when there is one, is plan.json rendered (before or after the freeze) with
    the session's other files (`render` is bound to them: shared/plan_md.for_session)."""
    path = os.path.join(state_dir, "plan.md")
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as e:
        return [Finding("plan.md", f"cannot be read ({e})", rule="damaged-file")]
    if text not in (render(plan), render({**plan, "frozen_at": None})):
        message = (
            "does not match plan.json and session.json (plan.md is rendered from them, never "
            "edited): one of the three changed outside plan commands"
        )
        return [
            Finding(
                "plan.md",
                message,
                "restore the one that changed from git (git diff names it; another finding "
                "may name plan.json or session.json)",
                rule="plan-md-mismatch",
                line_no=_first_difference(text, render(plan)),
            )
        ]
    return []


def _first_difference(text: str, expected: str) -> int | None:
    """The 1-based line where `text` first differs from `expected` (None: it is a prefix)."""
    for n, (a, b) in enumerate(zip(text.splitlines(), expected.splitlines(), strict=False), 1):
        if a != b:
            return n
    return None
