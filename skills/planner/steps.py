"""The planner: eleven steps from a task to an approved, frozen plan.

Read the table to read the workflow. Kinds Execute / Review / Gate come from shared/kinds.py;
the planner's own kinds, requirements, actions and skip rules from kinds.py beside this.
"""

from __future__ import annotations

import os

from shared import config, engine, paths
from shared.engine import SHARED_TEMPLATES
from shared.kinds import Gate, Review
from shared.paths import PLANNER_DIR, project_root
from shared.workflow import Flags, Step, Workflow
from skills.planner.kinds import (
    DesignExecute,
    Discovery,
    DocsExecute,
    FinalGate,
    Init,
    WorktreeExecute,
    answer_by_policy,
    choices,
    docs_only,
    goal,
    pick_by_policy,
    questions,
    quick,
    validator_findings,
)
from state.errors import UsageError
from state.ops import session
from state.vocab import Phase, WorkflowName
from state.vocab import SessionStatus as S

HERE = os.path.dirname(os.path.abspath(__file__))

# A rejection reopens the smallest phase it touches (state/ops/review_ops.rejected_phase): the
# step that does that phase's work; a phase this depth skips falls back to the design.
REWORK = {
    Phase.PLAN_DESIGN: "plan-design-execute",
    Phase.PLAN_CODE: "plan-code-execute",
    Phase.PLAN_DOCS: "plan-docs-execute",
}

# fmt: off
STEPS = (
    #    n   name                   kind         template                        role
    Step(1,  "plan-init",           Init,        "01-plan-init.j2",              status=S.DISCOVERY),
    Step(2,  "context-verify",      Discovery,   "02-context-verify.j2",         status=S.DISCOVERY),
    Step(3,  "plan-design-execute", DesignExecute, "03-plan-design-execute.j2",  role="architect",
         phase=Phase.PLAN_DESIGN, status=S.DESIGN, requires=(goal, questions),
         on_arrive=(answer_by_policy,)),
    Step(4,  "plan-design-qr",      Review,      "04-plan-design-qr.j2",         role="quality-reviewer",
         phase=Phase.PLAN_DESIGN, requires=(choices,), on_arrive=(pick_by_policy,)),
    Step(5,  "plan-design-qr-gate", Gate,        "05-plan-design-qr-gate.j2",
         phase=Phase.PLAN_DESIGN, on_fail="plan-design-execute"),
    Step(6,  "plan-code-execute",   WorktreeExecute, "06-plan-code-execute.j2",  role="developer",
         phase=Phase.PLAN_CODE, status=S.DETAILING, skip=(quick, docs_only)),
    Step(7,  "plan-code-qr",        Review,      "07-plan-code-qr.j2",           role="quality-reviewer",
         phase=Phase.PLAN_CODE, skip=(quick, docs_only)),
    Step(8,  "plan-code-qr-gate",   Gate,        "08-plan-code-qr-gate.j2",
         phase=Phase.PLAN_CODE, on_fail="plan-code-execute", skip=(quick, docs_only)),
    Step(9,  "plan-docs-execute",   DocsExecute, "09-plan-docs-execute.j2",      role="technical-writer",
         phase=Phase.PLAN_DOCS, status=S.DETAILING, skip=(quick,)),
    Step(10, "plan-docs-qr",        Review,      "10-plan-docs-qr.j2",           role="quality-reviewer",
         phase=Phase.PLAN_DOCS, skip=(quick,)),
    Step(11, "plan-docs-qr-gate",   FinalGate,   "11-plan-docs-qr-gate.j2",
         phase=Phase.PLAN_DOCS, on_fail="plan-docs-execute", on_reject=REWORK),
)
# fmt: on


def start(workflow: Workflow, flags: Flags) -> str:
    """Step 1 with --task: a new session under .planner/ of the project, made ACTIVE; the
    step as printed."""
    if flags.get("state_dir"):
        raise UsageError("--task starts a new session under .planner/: drop --state-dir")
    task = flags.get("task") or ""
    if not task.strip():
        raise UsageError("--task: describe what to plan")
    try:
        task.encode()
    except UnicodeEncodeError:
        raise UsageError("--task: not valid Unicode (bytes that are not UTF-8)") from None
    refuse_gutted(task)
    root = project_root()
    settings = config.load(root)
    depth = flags.get("depth")
    if depth:
        settings["depth"] = depth
    home = os.path.join(root, PLANNER_DIR)
    paths.recover_starts(home)  # what killed starts left (none under way: they hold `starting`)
    policy = config.policy(root, settings, bool(flags.get("non_interactive")))
    with session.starting(home):
        store = session.create(
            root, task.strip(), settings, non_interactive=False, activate=False, policy=policy
        )
        try:
            printed = engine.run(workflow, 1, {**flags, "new_session": True}, store=store)
        except BaseException:
            session.discard(store)  # a failed step 1 leaves no orphan session
            raise
        session.make_active(root, os.path.basename(store.dir))
    return printed


def refuse_gutted(task: str) -> None:
    """Refuse (exit 2, nothing written) a task the shell gutted: `--task "add `foo` command"`
    runs foo and stores "add  command". The rule: what `…` or $… in double quotes leave, two
    spaces between words (not after . ! ? :, where some type two), a space before a
    word-ending , or ., a space at either end. Single quotes keep the task whole."""
    import re

    found = re.search(r"(?<=[^\s.!?:])  +(?=\S)| [,.](?=\s|\Z)|\A | \Z", task)
    if found:
        near = task[max(0, found.start() - 20) : found.end() + 20]
        raise UsageError(
            f"--task: {near!r} looks cut by the shell (`…` or $… in double quotes are replaced); "
            "quote the task in single quotes: planner --step 1 --task '…'"
        )


PLANNER = Workflow(
    WorkflowName.PLANNER,
    "PLANNER",
    STEPS,
    [os.path.join(HERE, "templates"), SHARED_TEMPLATES],
    checks={
        Phase.PLAN_DESIGN: validator_findings("design"),
        Phase.PLAN_CODE: validator_findings("code"),
        Phase.PLAN_DOCS: validator_findings("docs"),
    },
    start=start,
)
