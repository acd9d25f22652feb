"""The planner's own parts: skip rules, what steps require, what arriving records, and the
kinds of steps 1, 2, 9 and 11 (session start, discovery, docs, review and approval)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, TypedDict

from shared.kinds import Execute, ExecuteVariables, Gate, GateVariables
from shared.paths import project_root
from shared.routing import Routing
from shared.workflow import Context, Kind, Step, step_ref
from state import clock
from state.errors import Finding, PlannerError
from state.ops.choice_ops import pick, unpicked
from state.ops.question_ops import assume_answer, state_of
from state.repo.scan import scan
from state.routes import EXECUTE
from state.rules.amendments import (
    approved_since,
    frozen_milestones,
    open_amendment,
    rejected_since,
    worktree_round,
)
from state.rules.approval import approve, plan_hash
from state.rules.lifecycle import transition
from state.storage.store import write_atomic
from state.validation.validate import validate
from state.vocab import Phase, ReviewVerdict
from state.vocab import SessionStatus as S

if TYPE_CHECKING:
    from collections.abc import Callable

    from state.rules.session_store import Transaction
    from state.storage.documents import Amendment, Approval, Config, Question

    class ShownQuestion(Question):  # typing only: documents.py is ~11 M to import
        state: str  # open, answered, skipped or assumed (question_ops.state_of)


# ---------------------------------------------------------------- skip rules


def quick(ctx: Context) -> bool:
    return bool(ctx.session["config"]["depth"] == "quick")


def docs_only(ctx: Context) -> bool:
    milestones = ctx.doc("plan")["milestones"]
    return bool(milestones) and all(m["is_documentation_only"] for m in milestones)


# ---------------------------------------------------------------- requirements


def goal(ctx: Context) -> list[Finding]:
    if ctx.doc("context")["task_spec"]["goal"].strip():
        return []
    return [Finding("context.json:task_spec.goal", "empty", "plan context set --goal G")]


def questions_waiting(ctx: Context) -> int:
    """How many more questions must be answered or skipped before design (0 once enough)."""
    if ctx.non_interactive:
        return 0
    resolved = [q for q in ctx.doc("context")["questions"] if q["answer"] or q["skipped"]]
    wanted: int = ctx.config["questions_min"]
    return max(0, wanted - len(resolved))


def questions(ctx: Context) -> list[Finding]:
    waiting = questions_waiting(ctx)
    if not waiting:
        return []
    return [
        Finding(
            "context.json:questions",
            f"{waiting} more question(s) must be answered "
            f"or skipped (questions_min {ctx.config['questions_min']})",
            "plan question import FILE, ask the user, plan question answer Q-n TEXT",
        )
    ]


def choices(ctx: Context) -> list[Finding]:
    if ctx.non_interactive:
        return []
    return [
        Finding(
            f"plan.json:{c['id']}",
            f"choice {c['topic']!r} is not picked",
            f"ask the user, then plan choice pick {c['id']} OPT-X --rationale R",
        )
        for c in unpicked(ctx.doc("plan"))
    ]


# ---------------------------------------------------------------- actions on arrival


def answer_by_policy(ctx: Context, tx: Transaction) -> None:
    """Leaving discovery non-interactively: open questions take their recommended option."""
    if not ctx.non_interactive:
        return
    context = tx.edit("context")
    answered = []
    for q in context["questions"]:
        if q["answer"] is None and not q["skipped"]:
            assume_answer(context, q, f"non-interactive: {ctx.policy}")
            answered.append(q["id"])
    tx.note(policy=ctx.policy, assumed=answered)


def pick_by_policy(ctx: Context, tx: Transaction) -> None:
    """Leaving design non-interactively: choices take their recommended option, "auto"."""
    if not ctx.non_interactive:
        return
    picked = []
    for choice in unpicked(tx.edit("plan")):
        option = next(o["id"] for o in choice["options"] if o["recommended"])
        pick(tx, choice, option, "auto")
        picked.append(f"{choice['id']} {option}")
    tx.note(policy=ctx.policy, picked=picked)


# ---------------------------------------------------------------- mechanical checks


def validator_findings(phase: str) -> Callable[[Context], list[Finding]]:
    """The mechanical checks of a planning phase: `plan validate --phase …`."""

    def findings(ctx: Context) -> list[Finding]:
        context = ctx.doc_or_none("context")
        known = {q["id"] for q in context["questions"]} if context else None
        base = ctx.session["base_commit"]
        return validate(ctx.doc("plan"), phase, project_root(ctx.state_dir), known, base)

    return findings


def render_plan_md(ctx: Context) -> None:
    """plan.md beside plan.json, rendered from it and the session's other files."""
    from shared.plan_md import for_session  # jinja2, not needed to find a session's routing

    data = for_session(ctx.doc_or_none)(ctx.doc("plan")).encode()
    if ctx.tx is not None:  # in the arrival's transaction: it lands with the rest or not
        ctx.tx.put("plan.md", data)
    else:
        write_atomic(os.path.join(ctx.state_dir, "plan.md"), data)


def rework_step(ctx: Context) -> Step:
    """Where the last rejection sends the session: the step the table's on_reject names for
    the smallest phase it touches, or the design's when this depth skips that step. An
    amendment opened since the last rejection starts at the design (its reason is words)."""
    from state.ops.review_ops import rejected_phase  # ~4 ms, only after a rejection

    table = ctx.step.on_reject or {}
    rejected = [r for r in ctx.session["reviews"] if r["verdict"] == ReviewVerdict.REJECTED]
    amended = [a["opened_at"] for a in ctx.session.get("amendments") or []]
    phase = Phase.PLAN_DESIGN
    if rejected and not (amended and amended[-1] >= rejected[-1]["at"]):
        phase = rejected_phase(ctx.doc("plan"), rejected[-1])
    step = ctx.workflow.named(table.get(phase) or table[Phase.PLAN_DESIGN])
    if ctx.workflow.skipped(step, ctx):
        return ctx.workflow.named(table[Phase.PLAN_DESIGN])
    return step


# ---------------------------------------------------------------- kinds


class Init(Kind):
    """Step 1: the session was just created (see steps.start()); say where it lives."""

    shows_words = False

    def arrive(self, ctx: Context, tx: Transaction) -> None:
        if ctx.policy:
            tx.note(policy=ctx.policy, interactive=False)  # the policy is on record

    def chains(self, ctx: Context) -> bool:
        return True  # nothing to do before discovery: its prompt comes in the same call

    def context(self, ctx: Context) -> Overlaps:
        return overlaps(ctx)


class Overlap(TypedDict):
    sessions: list[str]  # the other session of the pair, or both when this one is in neither
    mine: bool
    files: list[str]


class OtherSession(TypedDict):
    session: str
    status: str
    task: str
    files: list[str]  # the files its plan changes so far


class Overlaps(TypedDict):
    """Step 1's template variables."""

    overlaps: list[Overlap]
    skipped: list[str]
    others: list[OtherSession]


def overlaps(ctx: Context) -> Overlaps:
    """Open sessions of the repository (any work tree) planning the same files, a pair each:
    the other session when this one is in it; and the sessions skipped as damaged."""
    from state.validation.overlap import find  # ~6 ms, and only step 1 looks

    this = os.path.basename(ctx.state_dir)
    found = find(project_root(ctx.state_dir))
    pairs: dict[tuple[str, str], list[str]] = {}
    for o in found.overlaps:
        pairs.setdefault((o.first.session, o.second.session), []).append(o.what())
    shown: list[Overlap] = [
        {"sessions": [s for s in pair if s != this], "mine": this in pair, "files": files}
        for pair, files in pairs.items()
    ]
    shown.sort(key=lambda p: not p["mine"])  # this session's own first
    others: list[OtherSession] = [  # named now: an overlap shows only once both plan files
        {"session": s.session, "status": s.status, "task": s.task, "files": sorted(s.files)}
        for s in found.sessions
        if s.session != this
    ]
    return {"overlaps": shown, "skipped": [n.session for n in found.notes], "others": others}


class Discovery(Kind):
    """Step 2: the scan, the task spec, and questions; it repeats until enough are answered."""

    shows_words = False

    def arrive(self, ctx: Context, tx: Transaction) -> None:
        if not ctx.doc("context")["gathered"]["scanned_at"]:
            tx.edit("context")["gathered"] = scan(
                project_root(ctx.state_dir), None, ctx.session["task"]
            )

    def context(self, ctx: Context) -> DiscoveryVariables:
        context = ctx.doc("context")
        return {
            "gathered": context["gathered"]["summary"],
            "questions": [{**q, "state": state_of(q)} for q in context["questions"]],
            "waiting": questions_waiting(ctx),
            "config": ctx.config,
        }

    def routing(self, ctx: Context) -> Routing:
        if questions_waiting(ctx):  # design refuses to start until they are answered
            note = "With the answers recorded, run NEXT (not step 2 again)."
            return Routing(next=ctx.to("plan-design-execute"), note=note)
        return super().routing(ctx)


class DiscoveryVariables(TypedDict):
    """Step 2's template variables."""

    gathered: str
    questions: list[ShownQuestion]
    waiting: int
    config: Config


class WorktreeVariables(ExecuteVariables):
    worktree: str


class WorktreeExecute(Execute):
    """Step 6: the developer edits real files in the session's worktree, which the step makes
    (once) and names, so that no call is spent asking for it."""

    def ready(self, ctx: Context) -> None:
        ctx.worktree = ensure_worktree(ctx)

    def context(self, ctx: Context) -> WorktreeVariables:
        return {**super().context(ctx), "worktree": ctx.worktree}


def ensure_worktree(ctx: Context) -> str:
    """Where the worktree is (STATE_DIR/worktree), made now if it is not there (what `plan
    worktree` does), or how to get one when it cannot be made here (no git commit)."""
    from state.repo import worktree  # ~5 ms, and only the developer's step makes one

    if not ctx.session["approval"]:
        try:
            execution = ctx.store.read_or_none("execution")
            worktree.ensure(ctx.store, ctx.session, *worktree_round(ctx.session, execution))
        except PlannerError as e:
            return f"(not made: {e.message}; then plan worktree)"
    return "STATE_DIR/worktree"  # the state dir is printed once, at the top of the step


class DesignVariables(ExecuteVariables):
    known_constraints: list[str]


class DesignExecute(Execute):
    """Step 3: the design; discovery's constraints are shown, for the design to add only new
    ones (plan.md lists both once: shared/plan_md.loose_constraints)."""

    def context(self, ctx: Context) -> DesignVariables:
        found = ctx.doc_or_none("context")
        return {**super().context(ctx), "known_constraints": found["constraints"] if found else []}


class DocsExecute(WorktreeExecute):
    """Step 9: the technical writer documents each milestone; plan.md is rendered on arrival."""

    def arrive(self, ctx: Context, tx: Transaction) -> None:
        render_plan_md(ctx)


class AmendedSince(TypedDict, total=False):
    """What an amendment's review shows (nothing outside one)."""

    amendment: Amendment
    approved_rev: str
    amended: list[str]


def amended_since(ctx: Context) -> AmendedSince:
    """In an amendment's review: the round, and what changed since the approval it amends,
    by meaning (state/validation/diff.py), against the revision in history/ that approval bound."""
    amendment = open_amendment(ctx.session)
    found = approved_since(ctx.store, ctx.session, ctx.doc("plan"))
    if amendment is None or found is None:
        return {}
    return {"amendment": amendment, "approved_rev": found[0], "amended": found[1]}


class FinalGateVariables(GateVariables, AmendedSince):
    """Step 11's template variables."""

    approval: Approval | None
    quick: bool
    short_sha: str
    in_review: bool
    round: int
    rejects: int
    summary: list[str]
    since_rev: str
    since: list[str]


class FinalGate(Gate):
    """Step 11: the docs gate; on pass the plan must be valid, then the user reviews it (or,
    non-interactively, it is approved as "auto") and it is frozen."""

    shows_words = True

    def needs_verdict(self, ctx: Context) -> bool:
        return not quick(ctx)  # quick depth comes from step 5, with no docs review

    def check(self, ctx: Context) -> list[Finding]:
        if ctx.flags.get("qr_status") == "fail":
            return []
        scope = "design" if quick(ctx) else "final"  # plan validate --phase
        return [f for f in validator_findings(scope)(ctx) if f.level == "error"]

    def arrive(self, ctx: Context, tx: Transaction) -> None:
        if not quick(ctx):
            super().arrive(ctx, tx)
            if self.outcome(ctx) == "fail":
                return
        session = tx.edit("session")
        transition(session, S.REVIEW)
        render_plan_md(ctx)
        session["reviews"].append(
            {
                "round": len(session["reviews"]) + 1,
                "verdict": ReviewVerdict.SUBMITTED,
                "at": clock.now(),
                "by": None,
                "feedback": None,
                "comments": [],
                "revision": tx.plan_revision(),
                "sha256": plan_hash(tx.read("plan")),  # the content this round shows
            }
        )
        session["review_started_at"] = clock.now()
        if ctx.non_interactive:
            approval = approve(tx, "auto")
            session["reviews"][-1].update(
                {"verdict": ReviewVerdict.APPROVED, "by": "auto", "sha256": approval["sha256"]}
            )
            tx.note(policy=ctx.policy)
            render_plan_md(ctx)  # again: plan.md shows the approval it was frozen with

    def outcome(self, ctx: Context) -> str:
        if quick(ctx):
            return "pass" if ctx.session["status"] != S.DESIGN else "none"
        return super().outcome(ctx)

    def context(self, ctx: Context) -> FinalGateVariables:
        # jinja2: the prompt's rendering needs it anyway
        from shared.plan_md import summary

        approval = ctx.session["approval"]
        in_review = ctx.session["status"] == S.REVIEW
        plan = ctx.doc("plan")
        changed = (
            None if open_amendment(ctx.session) else rejected_since(ctx.store, ctx.session, plan)
        )
        amended, only = amended_since(ctx), None
        if amended:  # the person approved the rest: what changed, and the milestones still open
            frozen = frozen_milestones(ctx.session, ctx.store.read_or_none("execution"))
            only = [m["id"] for m in plan["milestones"] if m["id"] not in frozen]
        return {
            **super().context(ctx),
            "approval": approval,
            "quick": quick(ctx),
            "short_sha": approval["sha256"][:12] if approval else "",
            "in_review": in_review,
            "round": len(ctx.session["reviews"]),
            "rejects": ctx.session["rejects"],
            "summary": [] if not in_review or changed else summary(plan, only=only),
            "since_rev": changed[0] if changed else "",
            "since": changed[1] if changed else [],
            **amended,
        }

    def routing(self, ctx: Context) -> Routing:
        if ctx.session["approval"]:
            return Routing(next=step_ref(EXECUTE, ctx.state_dir))
        if ctx.session["status"] == S.DESIGN:  # rejected: to the phase the feedback touches
            return Routing(next=ctx.to(rework_step(ctx)))
        if ctx.session["status"] == S.REVIEW:
            at = ["--state-dir", ctx.state_dir]
            return Routing(
                if_pass=["plan", "review", "approve", *at],
                if_fail=["plan", "review", "reject", *at, "--feedback", "<the user's words>"],
            )
        return super().routing(ctx)
