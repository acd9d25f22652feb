"""What an open amendment round may change in plan.json, and the chain of approvals the
rounds make: pure functions of the documents (the store and `plan verify` call them; the
operation that opens a round is state/ops/amend_ops.py). See docs/design.md, "Amendments"."""

from __future__ import annotations

from state.errors import Finding, PlannerError
from state.storage.content import plan_hash
from state.validation.diff import diff
from state.vocab import CLOSED, ReviewVerdict, RunStatus, SessionStatus

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Literal, Protocol

    from state.storage.documents import Amendment, Execution, MilestoneRun, Plan, Session
    from state.storage.history import Entry

    class History(Protocol):
        """What of a session's store these functions read (state/storage/store.Store has it)."""

        def history(self) -> list[Entry]: ...
        def revision(self, rev: str) -> Plan: ...


NEW_MILESTONE = "a correction is a new milestone (plan milestone add)"
# planning_context lists: items already there stay as they are; new ones may be added.
CONTEXT_GROUPS: tuple[
    Literal["decision_log", "rejected_alternatives", "constraints", "known_risks", "choices"], ...
] = ("decision_log", "rejected_alternatives", "constraints", "known_risks", "choices")
# A decision already there may only be superseded (by a new one), never rewritten.
SUPERSEDE_FIELDS = ("superseded_by", "superseded_reason")
# history/ is local (.planner/.gitignore leaves it out): a fix about it names no git file.
HISTORY_FIX = (
    "history/ is this machine's record, not committed: restore it from a copy, or move "
    "history/ aside (verify checks the approvals without it)"
)


def runs_by_id(execution: Execution | None) -> dict[str, MilestoneRun]:
    return {r["id"]: r for r in (execution["milestones"] if execution else [])}


def committed(run: Mapping[str, object]) -> bool:
    """Whether execution.json says the milestone is carried out (done, or committed); `run`
    is its MilestoneRun, or {} when execution.json has none."""
    return run.get("status") == RunStatus.DONE or bool(run.get("commit"))


def open_amendment(session: Session | None) -> Amendment | None:
    """The amendment round that is open (not re-approved yet), or None."""
    rounds = session["amendments"] if session else []
    if rounds and rounds[-1]["approved"] is None and session and not session["approval"]:
        return rounds[-1]
    return None


def frozen_milestones(session: Session | None, execution: Execution | None) -> set[str]:
    """While an amendment round is open, the milestones it cannot change (the committed
    ones): no review item needs to judge them again (qr_ops.unjudged)."""
    if open_amendment(session) is None:
        return set()
    return {mid for mid, run in runs_by_id(execution).items() if committed(run)}


def worktree_round(session: Session, execution: Execution | None) -> tuple[int, set[str]]:
    """What the session's worktree is made for (state/repo/worktree.ensure): round 0 while
    planning; in an open amendment round, its number and the milestones execution.json says
    are committed (HEAD holds their changes)."""
    amendment = open_amendment(session)
    return (amendment["round"], frozen_milestones(session, execution)) if amendment else (0, set())


def scope_refusal(amendment: Amendment, old: Plan, new: Plan, execution: Execution | None) -> str:
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
            if not _kept(group, item, changed):
                return (
                    f"{item['id']} is not open in amendment round {n}: add a new one "
                    "(a decision may be superseded)"
                )
    return ""


def _kept(group: str, was: Mapping[str, object], now: Mapping[str, object]) -> bool:
    """Whether a planning_context item is as it was (a decision not yet superseded may be)."""
    if group == "decision_log" and not was["superseded_by"]:
        was, now = ({k: v for k, v in d.items() if k not in SUPERSEDE_FIELDS} for d in (was, now))
    return was == now


def revision_hashes(store: History) -> set[str]:
    """The content hash of every plan revision in history/."""
    return {plan_hash(store.revision(e["rev"])) for e in store.history()}


def approved_revision(
    store: History, sha256: str, session: Session | None = None
) -> tuple[str, Plan] | None:
    """The revision in history/ with the approved content `sha256` (its name and plan): the
    one the approved review round saw, else the newest with that content."""
    seen = [
        r["revision"]
        for r in (session["reviews"] if session else [])
        if r["verdict"] == ReviewVerdict.APPROVED and r["sha256"] == sha256 and r["revision"]
    ]
    for rev in [*seen[-1:], *(e["rev"] for e in reversed(store.history()))]:
        try:
            plan = store.revision(rev)
        except PlannerError:  # history/ is local: a clone lacks it, or has its own
            continue
        if plan_hash(plan) == sha256:
            return rev, plan
    return None


def rejected_since(store: History, session: Session, plan: Plan) -> tuple[str, list[str]] | None:
    """After a rejection, review round N > 1: the revision round N-1 showed and what changed
    since, by meaning; None when there was no such round, or history/ lacks its revision."""
    reviews = session["reviews"]
    if session["status"] != SessionStatus.REVIEW or len(reviews) < 2 or not reviews[-2]["revision"]:
        return None
    rev = reviews[-2]["revision"]
    try:
        before = store.revision(rev)
    except PlannerError:  # history/ is local: a clone lacks it
        return None
    return rev, [c.line() for c in diff(before, plan) if c.what != "frozen_at"]


def approved_since(store: History, session: Session, plan: Plan) -> tuple[str, list[str]] | None:
    """In an amendment's review: the revision the approval it amends bound and what changed
    since, by meaning ("", [] when history/ lacks it); None outside one."""
    amendment = open_amendment(session)
    if amendment is None or session["status"] != SessionStatus.REVIEW:
        return None
    found = approved_revision(store, amendment["approval"]["sha256"], session)
    if found is None:
        return "", []
    rev, before = found
    return rev, [c.line() for c in diff(before, plan) if c.what != "frozen_at"]


def revision_hash(store: History, rev: str) -> str | None:
    """The content hash of revision `rev` in history/; None when it is missing or damaged."""
    try:
        return plan_hash(store.revision(rev))
    except PlannerError:
        return None


def chain_findings(
    session: Session,
    revision_hashes: Callable[[], set[str]] | None = None,
    revision_hash: Callable[[str], str | None] | None = None,
) -> list[Finding]:
    """The chain of approvals: each amendment amends the approval before it (the first, the
    original one), and the session's approval is the last link; the approved review rounds
    say the same. session.json alone carries it (the hash of each approved content), so it
    verifies in a clone. Where history/ is present (the machine the session was made on;
    the callers pass the two readers only then), each re-approval is also the approval of a
    revision in it, and the revision each approved round saw still holds that content."""
    rounds = session["amendments"]
    if not rounds:
        return []
    findings: list[Finding] = []
    fix = "restore session.json from git" + (
        "" if session.get("status") in CLOSED else ", or cancel the session"
    )

    def broken(where: str, message: str, rule: str = "amendment-chain") -> None:
        findings.append(Finding(f"session.json:{where}", message, fix, rule=rule))

    approved_rounds = [
        r["sha256"] for r in session["reviews"] if r["verdict"] == ReviewVerdict.APPROVED
    ]
    links = [rounds[0]["approval"]["sha256"]] + [
        a["approved"]["sha256"] for a in rounds if a["approved"]
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
        if index and amendment["approval"] != rounds[index - 1]["approved"]:
            broken(
                f"{where}.approval",
                f"round {amendment['round']} amends an approval that is not the re-approval "
                f"of round {rounds[index - 1]['round']}",
            )
        if amendment["approved"] is None and index + 1 < len(rounds):
            broken(f"{where}.approved", f"round {amendment['round']} was never re-approved")
    last = rounds[-1]["approved"]
    if last is not None and session["approval"] != last:
        broken("approval", "the approval is not the last amendment round's re-approval")
    if revision_hashes is not None:
        known = revision_hashes()
        for index, amendment in enumerate(rounds):
            sha = amendment["approved"]["sha256"] if amendment["approved"] else None
            if sha and sha not in known:
                broken(
                    f"amendments[{index}].approved.sha256",
                    f"round {amendment['round']} approved sha256 {sha[:12]}…, which no "
                    "revision in history/ has",
                    rule="amendment-hash",
                )
    if revision_hash is not None:  # a revision edited after its approval breaks the chain
        for review in session["reviews"]:
            rev, sha = review["revision"], review["sha256"]
            if review["verdict"] != ReviewVerdict.APPROVED or not rev or not sha:
                continue
            held = revision_hash(rev)
            if held != sha:
                now = f"{rev} now holds {held[:12]}…" if held else f"{rev} is missing or damaged"
                message = f"review round {review['round']} approved sha256 {sha[:12]}…; {now}"
                findings.append(
                    Finding(f"history/{rev}", message, HISTORY_FIX, rule="amendment-hash")
                )
    return findings
