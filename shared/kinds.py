"""The step kinds every workflow shares: execute (a role does the work), qr (a reviewer records
items), gate (the verdict is checked against the record and routes the loop)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from shared import qr
from shared.routing import Routing
from shared.workflow import Context, Kind
from state.errors import PreconditionFailed
from state.ops import qr_ops
from state.rules.amendments import frozen_milestones
from state.storage.store import report_name
from state.vocab import ItemStatus, LoopState

if TYPE_CHECKING:
    from state.rules.session_store import Transaction
    from state.storage.documents import QRItem, QRLoop


def loop(ctx: Context) -> QRLoop:
    return qr.loop_of(ctx.session, ctx.step.phase or "")


def items(ctx: Context) -> list[QRItem]:
    """The items of the step's phase's QR report (none before the report exists)."""
    report = ctx.report()
    return report["items"] if report else []


class ExecuteVariables(TypedDict):
    iteration: int
    fix_items: list[QRItem]
    recheck: bool
    recheck_items: list[QRItem]
    unjudged: list[str]
    amending: bool
    review_command: str


class ReviewVariables(TypedDict):
    iteration: int
    items: list[QRItem]
    blocking: str
    rechecking: bool


class GateVariables(TypedDict):
    loop_state: str
    open_items: list[QRItem]
    max_iterations: int


class Execute(Kind):
    """A role does the phase's work; after a failed gate the prompt lists what to fix. Where
    the reviewer judged the phase before (a fix round, or the rework after a rejection), the
    prompt names the items to re-check and routes to the gate: the gate runs the mechanical
    checks again itself, so the review step need not be re-run to re-judge a few items."""

    def context(self, ctx: Context) -> ExecuteVariables:
        state = loop(ctx)
        fix = []
        if state["state"] in (LoopState.RETRY, LoopState.ESCALATED):
            fix = [i for i in items(ctx) if i["status"] == ItemStatus.FAIL]
        recheck, unjudged = [], []
        if self.rechecking(ctx):
            recheck = [
                i for i in items(ctx) if i["source"] == "reviewer" and i["status"] in qr.OPEN
            ]
            plan = ctx.doc_or_none("plan")
            if plan is not None and (ctx.step.phase or "").startswith("plan-"):
                frozen = frozen_milestones(ctx.session, ctx.doc_or_none("execution"))
                unjudged = qr_ops.unjudged(plan, items(ctx), ctx.step.phase or "", frozen)
        rounds = ctx.session["amendments"]
        return {
            "iteration": state["iteration"],
            "fix_items": fix,
            "recheck": self.rechecking(ctx),
            "recheck_items": recheck,
            "unjudged": unjudged,
            "amending": bool(rounds) and rounds[-1]["approved"] is None,
            "review_command": f"{ctx.workflow.name} --step {ctx.step.number + 1}",
        }

    def rechecking(self, ctx: Context) -> bool:
        """Whether the reviewer judged this phase before and its loop is open again: a failed
        gate's fix round, or the rework a rejection reopened."""
        if loop(ctx)["state"] not in (LoopState.RETRY, LoopState.INITIAL):
            return False
        return any(i["source"] == "reviewer" for i in items(ctx))

    def routing(self, ctx: Context) -> Routing:
        following = super().routing(ctx)
        review = ctx.workflow.step(ctx.step.number + 1)
        if not self.rechecking(ctx) or following.next != ctx.to(review):
            return following
        gate = ctx.workflow.step(review.number + 1)  # the review step's gate
        return Routing(if_pass=ctx.to(gate, "pass"), if_fail=ctx.to(gate, "fail"))


class Review(Kind):
    """The reviewer judges the phase; what the validator can check is recorded first."""

    def arrive(self, ctx: Context, tx: Transaction) -> None:
        state = loop(ctx)
        findings = ctx.workflow.mechanical_checks(ctx)
        qr.record_mechanical_items(tx, ctx.step.phase or "", findings, state["iteration"])

    def context(self, ctx: Context) -> ReviewVariables:
        state = loop(ctx)
        found = items(ctx)
        return {
            "iteration": state["iteration"],
            "items": found,
            "blocking": ", ".join(qr.blocking_severities(state["iteration"])),
            # the reviewer has judged this phase before: re-checking needs `qr set`, not the
            # skeleton that records new checks
            "rechecking": any(i["source"] == "reviewer" for i in found),
        }

    def routing(self, ctx: Context) -> Routing:
        gate = ctx.workflow.step(ctx.step.number + 1)
        return Routing(if_pass=ctx.to(gate, "pass"), if_fail=ctx.to(gate, "fail"))


class Gate(Kind):
    """Checks the verdict against qr-{phase}.json and moves the loop on, back, or to the user."""

    shows_words = False

    def needs_verdict(self, ctx: Context) -> bool:
        return True

    def chains(self, ctx: Context) -> bool:
        return True  # the verdict is the agent's work; the next step's prompt comes with it

    def arrive(self, ctx: Context, tx: Transaction) -> None:
        phase = ctx.step.phase or ""
        verdict = ctx.flags.get("qr_status") or ""
        findings = None
        if tx.read_or_none(report_name(phase)) is not None:
            # what the validator checks is checked again here, as the review step does: the
            # agent may come from a fix round without re-running that step
            findings = ctx.workflow.mechanical_checks(ctx)
            qr.refresh_mechanical_items(tx, phase, findings)
        try:
            qr.judge(tx, phase, verdict, ctx.config["qr_max_iterations"], ctx.to(ctx.step, "pass"))
        except PreconditionFailed as refused:
            if findings is not None and refused.then_record is None:
                # the refusal names the items the check found: they are recorded, as named
                refused.then_record = lambda t: qr.refresh_mechanical_items(t, phase, findings)
            raise

    def outcome(self, ctx: Context) -> str:
        """The verdict the record holds: pass, fail, or none yet."""
        state = loop(ctx)["state"]
        return {
            LoopState.COMPLETE: "pass",
            LoopState.ACCEPTED: "pass",
            LoopState.RETRY: "fail",
            LoopState.ESCALATED: "fail",
        }.get(state, "none")

    def context(self, ctx: Context) -> GateVariables:
        state = loop(ctx)
        report = ctx.report()
        return {
            "loop_state": state["state"],
            "open_items": qr.open_items(report, state["iteration"]) if report else [],
            "max_iterations": ctx.config["qr_max_iterations"],
        }

    def routing(self, ctx: Context) -> Routing:
        state = loop(ctx)
        if state["state"] == LoopState.RETRY:
            return Routing(next=ctx.to(ctx.step.on_fail or ctx.workflow.steps[0]))
        if state["state"] == LoopState.ESCALATED:
            accept = ["plan", "qr", "accept", "--phase", ctx.step.phase or "", "--by", "<user>"]
            at = ["--state-dir", ctx.state_dir]
            return Routing(next=[*accept, "--reason", "<why the user accepts>", *at])
        return super().routing(ctx)
