"""Amendments: a living plan. `plan amend` reopens an approved plan for one round of changes;
what an open round may change (checked by the store on every commit of plan.json), and the
chain of approvals `plan verify` checks (docs/design.md, "Amendments")."""

from __future__ import annotations

from state import clock
from state.errors import Finding, PreconditionFailed, Refused, UsageError
from state.lifecycle import check_amendable, reopen
from state.limits import FEEDBACK_MAX, REASON_MAX, check_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from state.store import Transaction

# planning_context lists: items already there stay as they are; new ones may be added.
CONTEXT_GROUPS = ("decision_log", "rejected_alternatives", "constraints", "known_risks", "choices")
# A decision already there may only be superseded (by a new one), never rewritten.
SUPERSEDE_FIELDS = ("superseded_by", "superseded_reason")
NEW_MILESTONE = "a correction is a new milestone (plan milestone add)"
IMPL_PHASES = ("impl-code", "impl-docs")


def open_amendment(
    tx: Transaction,
    *,
    reason: str,
    task: str | None = None,
    milestones: Sequence[str] = (),
) -> dict[str, Any]:
    """Open amendment round N on an approved, executing or result-review session: the plan is
    unfrozen for what the round touches (new milestones and `milestones`, none committed), the
    session goes back to design, and the approval it amends is kept in the record."""
    check_text("--reason", reason, REASON_MAX)
    if not (reason or "").strip():
        raise UsageError("--reason: may not be empty (why the approved plan must change)")
    check_text("the task", task, FEEDBACK_MAX)
    session = tx.edit("session")
    status = session["status"]
    reopened = _reopenable(tx, status, milestones)
    approval = session["approval"]
    if approval is None:
        raise PreconditionFailed(
            f"{tx.store.path('session')}: status {status} but no approval on record "
            "(damaged? see plan verify)"
        )
    from_status = reopen(session, "design")
    record: dict[str, Any] = {
        "round": len(session["amendments"]) + 1,
        "reason": reason.strip(),
        "task": task.strip() if task and task.strip() else None,
        "opened_at": clock.now(),
        "from_status": from_status,
        "milestones": reopened,
        "approval": approval,
        "approved": None,
    }
    session["amendments"].append(record)
    # The session plans again: no approval until the person re-approves (the record above
    # keeps the one amended); the planner's step 11 routes the rework like a rejection.
    session.update(approval=None, workflow="planner", step=11, updated_at=record["opened_at"])
    tx.edit("plan")["frozen_at"] = None
    _reopen_loops(tx, session)
    _reset_runs(tx, reopened)
    tx.note(
        amendment=record["round"], reason=record["reason"], milestones=reopened, from_status=status
    )
    named = f", reopening {', '.join(reopened)}" if reopened else ""
    tx.tell(f"amendment round {record['round']} opened{named}: back to planning")
    tx.routed = True
    return record


def plan_amend(tx: Transaction, a: dict[str, Any]) -> None:
    """`plan amend --reason R [--milestone M-n]...` (the operation the CLI and plan apply run)."""
    open_amendment(tx, reason=a["reason"], milestones=a.get("milestone") or ())


def _reopenable(tx: Transaction, status: str, milestones: Sequence[str]) -> list[str]:
    """The named milestones, once each exists and none is committed (or applied)."""
    check_amendable(status)
    plan = tx.read("plan")
    known = {m["id"] for m in plan["milestones"]}
    runs = runs_by_id(tx.read_or_none("execution"))
    reopened: list[str] = []
    for name in milestones:
        mid = name.strip().upper()
        if mid not in known:
            raise UsageError(
                f"--milestone {name}: plan.json has no such milestone "
                f"({', '.join(sorted(known)) or 'none'})"
            )
        run = runs.get(mid, {})
        if committed(run):
            raise Refused(f"{mid} is committed: {NEW_MILESTONE}")
        if run.get("applied_at"):
            raise Refused(
                f"{mid} is applied to the project but not committed: commit it (plan exec "
                "commit) and correct it in a new milestone, or revert its files first"
            )
        if mid not in reopened:
            reopened.append(mid)
    return reopened


def runs_by_id(execution: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in (execution or {}).get("milestones", [])}


def committed(run: dict[str, Any]) -> bool:
    """Whether execution.json says the milestone is carried out (done, or committed)."""
    return run.get("status") == "done" or bool(run.get("commit"))


def _reopen_loops(tx: Transaction, session: dict[str, Any]) -> None:
    """The planning reviews run again from design (state/review_ops.reopen_reviews: PASS
    verdicts on unchanged items stand), and so do the executor's, which judge the new work."""
    from state.review_ops import reopen_reviews

    reopen_reviews(tx, session, "plan-design")
    for phase in IMPL_PHASES:
        if phase in session["qr"]:
            session["qr"][phase].update(state="initial", iteration=1, gate=[])


def _reset_runs(tx: Transaction, reopened: list[str]) -> None:
    """A reopened milestone starts over in execution.json (its plan changes)."""
    execution = tx.read_or_none("execution")
    if execution is None or not reopened:
        return
    for run in tx.edit("execution")["milestones"]:
        if run["id"] in reopened:
            run.update(status="pending", started_at=None, done_at=None, evidence=[], tests_run=[])


def open_round(session: dict[str, Any] | None) -> dict[str, Any] | None:
    """The amendment round that is open (not re-approved yet), or None."""
    rounds = (session or {}).get("amendments") or []
    if rounds and rounds[-1].get("approved") is None and not (session or {}).get("approval"):
        return rounds[-1]
    return None


def scope_refusal(
    amendment: dict[str, Any],
    old: dict[str, Any],
    new: dict[str, Any],
    execution: dict[str, Any] | None,
) -> str:
    """Why `new` changes more than the open amendment round allows ("" when it does not):
    new milestones and the reopened ones may change; a milestone already there and not
    reopened, the overview and the invisible knowledge stay; planning_context items may be
    added, and a decision already there may only be superseded."""
    n = amendment["round"]
    reopened = set(amendment["milestones"])
    runs = runs_by_id(execution)
    after = {m["id"]: m for m in new["milestones"]}
    for was in old["milestones"]:
        mid = was["id"]
        if mid in reopened:
            if mid not in after:
                return f"{mid} is reopened by amendment round {n}: it may change, not go"
            continue
        if after.get(mid) == was:
            continue
        if committed(runs.get(mid, {})):
            return f"{mid} is committed: {NEW_MILESTONE}"
        return (
            f"{mid} is not open in amendment round {n} (open: new milestones"
            f"{''.join(', ' + m for m in sorted(reopened))}): a correction is a new milestone"
        )
    for section in ("overview", "invisible_knowledge"):
        if old[section] != new[section]:
            return f"{section} is not open in amendment round {n} (new milestones, decisions are)"
    for group in CONTEXT_GROUPS:
        now = {i["id"]: i for i in new["planning_context"][group]}
        for item in old["planning_context"][group]:
            changed = now.get(item["id"])
            if changed is None:
                return f"{item['id']} stays in amendment round {n}: supersede it by a new one"
            if group == "decision_log" and not item["superseded_by"]:
                changed = {k: v for k, v in changed.items() if k not in SUPERSEDE_FIELDS}
                item = {k: v for k, v in item.items() if k not in SUPERSEDE_FIELDS}
            if changed != item:
                return (
                    f"{item['id']} is not open in amendment round {n}: add a new one "
                    "(a decision may be superseded)"
                )
    return ""


def revision_hashes(state_dir: str) -> set[str]:
    """The content hash of every plan revision in history/."""
    from state.content import plan_hash
    from state.store import Store

    store = Store(state_dir)
    return {plan_hash(store.revision(e["rev"])) for e in store.history()}


def approved_revision(
    state_dir: str, sha256: str, session: dict[str, Any] | None = None
) -> tuple[str, dict[str, Any]] | None:
    """The revision in history/ with the approved content `sha256` (its name and plan): the
    one the approved review round saw, else the newest with that content."""
    from state.content import plan_hash
    from state.store import Store

    store = Store(state_dir)
    seen = [
        r["revision"]
        for r in (session or {}).get("reviews", [])
        if r["verdict"] == "approved" and r.get("sha256") == sha256 and r.get("revision")
    ]
    names = [*seen[-1:], *(e["rev"] for e in reversed(store.history()))]
    for rev in names:
        plan = store.revision(rev)
        if plan_hash(plan) == sha256:
            return rev, plan
    return None


def chain_findings(
    session: dict[str, Any], revision_hashes: Callable[[], set[str]] | None = None
) -> list[Finding]:
    """The chain of approvals: each amendment amends the approval before it (the first, the
    original one), each re-approval is the approval of a revision in history/, and the
    session's approval is the last link; the approved review rounds say the same."""
    rounds = session.get("amendments") or []
    if not rounds:
        return []
    findings: list[Finding] = []

    def broken(where: str, message: str, rule: str = "amendment-chain") -> None:
        fix = "restore session.json from git, or cancel the session"
        findings.append(Finding(f"session.json:{where}", message, fix, rule=rule))

    approved_rounds = [r.get("sha256") for r in session["reviews"] if r["verdict"] == "approved"]
    links = [rounds[0]["approval"]["sha256"]] + [
        a["approved"]["sha256"] for a in rounds if a.get("approved")
    ]
    if approved_rounds != links:
        broken(
            "amendments",
            "the approved review rounds are not the chain of approvals the amendments record "
            "(the original approval, then each round's re-approval)",
        )
    for index, amendment in enumerate(rounds):
        where = f"amendments[{index}]"
        if amendment["round"] != index + 1:
            broken(f"{where}.round", f"round {amendment['round']} is amendment {index + 1}")
        if index and amendment["approval"] != rounds[index - 1].get("approved"):
            broken(
                f"{where}.approval",
                f"round {amendment['round']} amends an approval that is not the re-approval "
                f"of round {rounds[index - 1]['round']}",
            )
        if amendment.get("approved") is None and index + 1 < len(rounds):
            broken(f"{where}.approved", f"round {amendment['round']} was never re-approved")
    last = rounds[-1].get("approved")
    if last is not None and session.get("approval") != last:
        broken("approval", "the approval is not the last amendment round's re-approval")
    if revision_hashes is not None:
        known = revision_hashes()
        for index, amendment in enumerate(rounds):
            sha = (amendment.get("approved") or {}).get("sha256")
            if sha and sha not in known:
                broken(
                    f"amendments[{index}].approved.sha256",
                    f"round {amendment['round']} approved sha256 {sha[:12]}…, which no "
                    "revision in history/ has",
                    rule="amendment-hash",
                )
    return findings
