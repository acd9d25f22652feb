"""The executor: nine steps that carry a frozen plan out, wave by wave, and reconcile it
against git (PRODUCT.md §5, §5.2). Read the table to read the workflow."""

from __future__ import annotations

import os

from shared import kinds as _shared_kinds  # noqa: F401  (registers execute, qr, gate)
from shared.engine import SHARED_TEMPLATES
from shared.kinds import Execute
from shared.routing import Routing
from shared.workflow import Context, Kind, Step, Workflow, kind
from skills.executor import reconcile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from state.errors import Finding
    from state.store import Transaction

HERE = os.path.dirname(os.path.abspath(__file__))

STEPS = (
    #    n  name                 kind        template                    role / phase
    Step(1, "init", "exec-init", "01-init.j2", status="executing"),
    Step(2, "load-verify", "load", "02-load-verify.j2"),
    Step(3, "impl-execute", "impl", "03-impl-execute.j2", role="developer", phase="impl-code"),
    Step(
        4,
        "impl-code-qr",
        "qr",
        "04-impl-code-qr.j2",
        role="quality-reviewer",
        phase="impl-code",
        requires=("all_done",),
    ),
    Step(5, "impl-code-qr-gate", "gate", "05-impl-code-qr-gate.j2", phase="impl-code", on_fail=3),
    Step(
        6,
        "impl-docs-execute",
        "execute",
        "06-impl-docs-execute.j2",
        role="technical-writer",
        phase="impl-docs",
    ),
    Step(7, "impl-docs-qr", "qr", "07-impl-docs-qr.j2", role="quality-reviewer", phase="impl-docs"),
    Step(8, "impl-docs-qr-gate", "gate", "08-impl-docs-qr-gate.j2", phase="impl-docs", on_fail=6),
    Step(9, "reconcile", "reconcile", "09-reconcile.j2"),
)


def root(ctx: Context) -> str:
    from shared.paths import project_root

    return project_root(ctx.state_dir)


def all_done(ctx: Context) -> list[Finding]:
    from state.errors import Finding

    return [
        Finding(
            f"execution.json:{m['id']}",
            f"milestone is {m['status']}",
            f"plan exec done {m['id']} --evidence E",
        )
        for m in ctx.doc("execution")["milestones"]
        if m["status"] != "done"
    ]


def record(ctx: Context) -> dict[str, Any]:
    return reconcile.build(ctx.doc("plan"), ctx.doc("execution"), root(ctx))


def review_findings(docs: bool) -> Any:
    def findings(ctx: Context) -> list[Finding]:
        return reconcile.findings(record(ctx), ctx.doc("plan"), docs)

    return findings


@kind
class ExecInit(Kind):
    """Step 1: the plan is frozen and approved as is; record the base commit and any drift."""

    name = "exec-init"

    def check(self, ctx: Context) -> list[Finding]:
        from state.approval import verify
        from state.errors import Finding
        from state.gitinfo import head_commit

        problems = verify(ctx.doc("plan"), ctx.session)
        if not problems and head_commit(root(ctx)) is None:
            problems.append(
                Finding(
                    root(ctx),
                    "not a git repository with a commit: the executor reconciles against git",
                    "git init && git commit",
                )
            )
        return problems

    def arrive(self, ctx: Context, tx: Transaction) -> None:
        from state import clock, gitinfo, schema

        plan, project = ctx.doc("plan"), root(ctx)
        planned = {f for m in plan["milestones"] for f in reconcile.planned_files(m)}
        since = ctx.session["base_commit"]
        where = f"{ctx.store.path('session')}:base_commit"
        changed = gitinfo.changed_files(project, since, where) if since else []
        drift = sorted(planned & set(changed))
        runs = [
            {**schema.defaults("execution", "MilestoneRun"), "id": m["id"]}
            for m in plan["milestones"]
        ]
        tx.edit_or_create(
            "execution",
            {
                **schema.defaults("execution"),
                "base_commit": gitinfo.head_commit(project),
                "started_at": clock.now(),
                "drift": drift,
                "stale_diffs": stale_diffs(plan, project),
                "milestones": runs,
            },
        )

    def context(self, ctx: Context) -> dict[str, Any]:
        execution = ctx.doc("execution")
        approval = ctx.session["approval"] or {"sha256": ""}
        return {
            "title": ctx.doc("plan")["overview"]["title"],
            "base": execution["base_commit"],
            "drift": execution["drift"],
            "short_sha": approval["sha256"][:12],
        }


def stale_diffs(plan: dict[str, Any], project: str) -> list[str]:
    """Planned diffs that no longer apply to the files as they are now."""
    from state.validate import completeness

    return [f.line() for f in completeness(plan, "code", project) if ".diff" in f.path]


@kind
class Load(Kind):
    """Step 2: read the plan; the waves, and the diffs step 1 found no longer apply."""

    name = "load"

    def context(self, ctx: Context) -> dict[str, Any]:
        return {
            "diagram": ctx.doc("plan")["milestone_dependencies"]["diagram_ascii"],
            "problems": ctx.doc("execution")["stale_diffs"],
        }


@kind
class Implement(Execute):
    """Step 3: the developer implements the first wave that is not done; it repeats per wave."""

    name = "impl"

    def current(self, ctx: Context) -> tuple[int, list[str], bool]:
        """(wave number, its milestone ids, whether later waves still wait); (0, [], False) at
        the end."""
        status = {m["id"]: m["status"] for m in ctx.doc("execution")["milestones"]}
        waves = ctx.doc("plan")["milestone_dependencies"]["waves"]
        for index, wave in enumerate(waves):
            if any(status.get(mid) != "done" for mid in wave["milestones"]):
                return wave["wave"], wave["milestones"], index + 1 < len(waves)
        return 0, [], False

    def context(self, ctx: Context) -> dict[str, Any]:
        from state.plan_ops import find

        number, ids, _ = self.current(ctx)
        plan = ctx.doc("plan")
        status = {m["id"]: m["status"] for m in ctx.doc("execution")["milestones"]}
        milestones = []
        for mid in ids:
            m = find(plan, mid)
            milestones.append(
                {
                    "id": mid,
                    "name": m["name"],
                    "status": status.get(mid),
                    "changes": [c["id"] for c in m["code_changes"]],
                    "tests": m["tests"]["files"],
                }
            )
        return {**super().context(ctx), "wave": number, "milestones": milestones}

    def routing(self, ctx: Context) -> Routing:
        _, _, later = self.current(ctx)
        return Routing(next=ctx.argv(3)) if later else super().routing(ctx)


@kind
class Reconcile(Kind):
    """Step 9: reconcile.json from git and execution.json; the session is completed."""

    name = "reconcile"

    def arrive(self, ctx: Context, tx: Transaction) -> None:
        import json

        from state.lifecycle import transition

        data = json.dumps(record(ctx), indent=2, ensure_ascii=False) + "\n"
        tx.put("reconcile.json", data.encode())
        transition(tx.edit("session"), "completed")

    def context(self, ctx: Context) -> dict[str, Any]:
        import json

        path = os.path.join(ctx.state_dir, "reconcile.json")
        with open(path, encoding="utf-8") as f:
            return {"path": path, "table": reconcile.table(json.load(f))}


WORKFLOW = Workflow(
    "executor",
    "EXECUTOR",
    STEPS,
    [os.path.join(HERE, "templates"), SHARED_TEMPLATES],
    skip_rules={},
    checks={"impl-code": review_findings(docs=False), "impl-docs": review_findings(docs=True)},
    requirements={"all_done": all_done},
)


def load() -> Workflow:
    return WORKFLOW
