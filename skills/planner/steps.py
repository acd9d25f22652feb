"""The planner: eleven steps from a task to an approved, frozen plan (PRODUCT.md §5).

Read the table to read the workflow. Kinds execute / qr / gate come from shared/kinds.py;
the three below are the planner's own: starting the session, discovery, and the last gate
that renders plan.md, has the plan approved and freezes it.
"""

from __future__ import annotations

import os

from shared import kinds as _shared_kinds  # noqa: F401  (registers execute, qr, gate)
from shared.engine import SHARED_TEMPLATES
from shared.kinds import Execute, Gate
from shared.workflow import Context, Kind, Step, Workflow, kind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from shared.routing import Routing
    from state.errors import Finding
    from state.store import Transaction

HERE = os.path.dirname(os.path.abspath(__file__))

STEPS = (
    #    n  name                   kind         template                      role / phase
    Step(1, "plan-init", "init", "01-plan-init.j2", status="discovery"),
    Step(2, "context-verify", "discovery", "02-context-verify.j2", status="discovery"),
    Step(
        3,
        "plan-design-execute",
        "execute",
        "03-plan-design-execute.j2",
        role="architect",
        phase="plan-design",
        status="design",
        requires=("goal",),
    ),
    Step(
        4,
        "plan-design-qr",
        "qr",
        "04-plan-design-qr.j2",
        role="quality-reviewer",
        phase="plan-design",
    ),
    Step(
        5,
        "plan-design-qr-gate",
        "gate",
        "05-plan-design-qr-gate.j2",
        phase="plan-design",
        on_fail=3,
    ),
    Step(
        6,
        "plan-code-execute",
        "execute",
        "06-plan-code-execute.j2",
        role="developer",
        phase="plan-code",
        skip=("quick", "docs_only"),
        status="detailing",
    ),
    Step(
        7,
        "plan-code-qr",
        "qr",
        "07-plan-code-qr.j2",
        role="quality-reviewer",
        phase="plan-code",
        skip=("quick", "docs_only"),
    ),
    Step(
        8,
        "plan-code-qr-gate",
        "gate",
        "08-plan-code-qr-gate.j2",
        phase="plan-code",
        on_fail=6,
        skip=("quick", "docs_only"),
    ),
    Step(
        9,
        "plan-docs-execute",
        "docs-execute",
        "09-plan-docs-execute.j2",
        role="technical-writer",
        phase="plan-docs",
        skip=("quick",),
        status="detailing",
    ),
    Step(
        10,
        "plan-docs-qr",
        "qr",
        "10-plan-docs-qr.j2",
        role="quality-reviewer",
        phase="plan-docs",
        skip=("quick",),
    ),
    Step(
        11,
        "plan-docs-qr-gate",
        "final-gate",
        "11-plan-docs-qr-gate.j2",
        phase="plan-docs",
        on_fail=9,
    ),
)


def quick(ctx: Context) -> bool:
    return bool(ctx.session["config"]["depth"] == "quick")


def docs_only(ctx: Context) -> bool:
    milestones = ctx.doc("plan")["milestones"]
    return bool(milestones) and all(m["is_documentation_only"] for m in milestones)


def goal(ctx: Context) -> list[Finding]:
    from state.errors import Finding

    if ctx.doc("context")["task_spec"]["goal"].strip():
        return []
    return [Finding("context.json:task_spec.goal", "empty", "plan context set --goal G")]


def validator_findings(phase: str) -> Any:
    """The mechanical checks of a planning phase: `plan validate --phase …`."""

    def findings(ctx: Context) -> list[Finding]:
        from shared.paths import project_root
        from state.validate import validate

        context = ctx.doc_or_none("context")
        questions = {q["id"] for q in context["questions"]} if context else None
        return validate(ctx.doc("plan"), phase, project_root(ctx.state_dir), questions)

    return findings


def render_plan_md(ctx: Context) -> str:
    """plan.md beside plan.json, rendered from it; returns its path."""
    from shared.plan_md import render_plan
    from state.store import write_atomic

    path = os.path.join(ctx.state_dir, "plan.md")
    write_atomic(path, render_plan(ctx.doc("plan")).encode())
    return path


@kind
class Init(Kind):
    """Step 1: the session was just created (see start()); say where it lives."""

    name = "init"


@kind
class Discovery(Kind):
    """Step 2: understand the task; what the user was asked and answered is on record."""

    name = "discovery"

    def context(self, ctx: Context) -> dict[str, Any]:
        return {"context": ctx.doc("context")}


@kind
class DocsExecute(Execute):
    """Step 9: the technical writer documents each milestone; plan.md is rendered on arrival."""

    name = "docs-execute"

    def arrive(self, ctx: Context, tx: Transaction) -> None:
        render_plan_md(ctx)


@kind
class FinalGate(Gate):
    """Step 11: the docs gate; on pass the plan must be valid, then it is approved and frozen."""

    name = "final-gate"

    def needs_verdict(self, ctx: Context) -> bool:
        return not quick(ctx)  # quick depth reaches step 11 from step 5, with no docs review

    def check(self, ctx: Context) -> list[Finding]:
        if ctx.flags.get("qr_status") == "fail":
            return []
        phase = "design" if quick(ctx) else "final"
        return [f for f in validator_findings(phase)(ctx) if f.level == "error"]

    def arrive(self, ctx: Context, tx: Transaction) -> None:
        from state.approval import approve
        from state.lifecycle import transition

        if not quick(ctx):
            super().arrive(ctx, tx)
            if self.outcome(ctx) == "fail":
                return
        transition(tx.edit("session"), "review")
        render_plan_md(ctx)
        approve(tx, "auto")

    def outcome(self, ctx: Context) -> str:
        if quick(ctx):
            return "pass" if ctx.session.get("approval") else "none"
        return super().outcome(ctx)

    def context(self, ctx: Context) -> dict[str, Any]:
        approval = ctx.session.get("approval")
        return {
            **super().context(ctx),
            "approval": approval,
            "quick": quick(ctx),
            "short_sha": approval["sha256"][:12] if approval else "",
        }

    def routing(self, ctx: Context) -> Routing:
        from shared.routing import Routing, step_argv

        if ctx.session.get("approval"):
            return Routing(next=step_argv("executor", 1, ctx.state_dir))
        return super().routing(ctx)


WORKFLOW = Workflow(
    "planner",
    "PLANNER",
    STEPS,
    [os.path.join(HERE, "templates"), SHARED_TEMPLATES],
    skip_rules={"quick": quick, "docs_only": docs_only},
    checks={
        "plan-design": validator_findings("design"),
        "plan-code": validator_findings("code"),
        "plan-docs": validator_findings("docs"),
    },
    requirements={"goal": goal},
)


def load() -> Workflow:
    return WORKFLOW


def start(workflow: Workflow, flags: dict[str, Any]) -> int:
    """Step 1 with --task: a new session under .planner/ of the project, made ACTIVE."""
    from shared import config, engine
    from shared.paths import project_root
    from state import session
    from state.errors import UsageError

    if flags.get("state_dir"):
        raise UsageError("--task starts a new session under .planner/: drop --state-dir")
    if not flags["task"].strip():
        raise UsageError("--task: describe what to plan")
    root = project_root()
    settings = config.load(root)
    if flags.get("depth"):
        settings["depth"] = flags["depth"]
    store = session.create(
        root, flags["task"].strip(), settings, non_interactive=bool(flags.get("non_interactive"))
    )
    return engine.run(workflow, 1, {**flags, "new_session": True}, store=store)
