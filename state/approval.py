"""Approval: the sha256 of the canonical plan content, the freeze, and `plan verify`.

Canonical content is plan.json without frozen_at, keys sorted, no whitespace, UTF-8.
"""

from __future__ import annotations

import json

from state import clock
from state.errors import Finding
from state.lifecycle import transition

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from state.store import Transaction


def plan_hash(plan: dict[str, Any]) -> str:
    import hashlib  # loads OpenSSL: ~0.2x `python -c pass` that most commands never need

    content = {k: v for k, v in plan.items() if k != "frozen_at"}
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def approve(tx: Transaction, by: str) -> dict[str, Any]:
    """Record who approved the exact content, then freeze it: status approved."""
    session, plan = tx.edit("session"), tx.edit("plan")
    at = clock.now()
    approval = {"by": by, "at": at, "sha256": plan_hash(plan)}
    plan["frozen_at"] = at
    transition(session, "approved")
    session.update(approval=approval, updated_at=at)
    tx.note(approved_by=by, sha256=approval["sha256"])
    return approval


def verify(plan: dict[str, Any], session: dict[str, Any] | None) -> list[Finding]:
    """Why a plan is not the frozen, approved plan it should be ([] when it is)."""
    if not plan["frozen_at"]:
        return [
            Finding(
                "plan.json:frozen_at", "the plan is not frozen (not approved yet)", "planner next"
            )
        ]
    approval = (session or {}).get("approval")
    if not approval:
        return [Finding("session.json:approval", "no approval on record", "planner status")]
    actual = plan_hash(plan)
    if actual != approval["sha256"]:
        return [
            Finding(
                "plan.json",
                f"content changed after approval: sha256 {actual[:12]}… "
                f"is not the approved {approval['sha256'][:12]}…",
                "restore plan.json from history/ (plan history)",
            )
        ]
    return []
