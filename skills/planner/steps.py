"""The planner: eleven steps from a task to an approved, frozen plan (PRODUCT.md §5).

Read the table to read the workflow. Kinds execute / qr / gate come from shared/kinds.py,
the planner's own (init, discovery, docs-execute, final-gate) from kinds.py beside this.
"""

from __future__ import annotations

import os

from shared import kinds as _shared_kinds  # noqa: F401  (registers execute, qr, gate)
from shared.engine import SHARED_TEMPLATES
from shared.workflow import Step, Workflow
from skills.planner import kinds as k

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
QUICK, DOCS_ONLY = "quick", "docs_only"

# fmt: off
STEPS = (
    #    n   name                   kind            template                        role
    Step(1,  "plan-init",           "init",         "01-plan-init.j2",              status="discovery"),
    Step(2,  "context-verify",      "discovery",    "02-context-verify.j2",         status="discovery"),
    Step(3,  "plan-design-execute", "execute",      "03-plan-design-execute.j2",    role="architect",
         phase="plan-design", status="design", requires=("goal", "questions"),
         on_arrive=("answer_by_policy",)),
    Step(4,  "plan-design-qr",      "qr",           "04-plan-design-qr.j2",         role="quality-reviewer",
         phase="plan-design", requires=("choices",), on_arrive=("pick_by_policy",)),
    Step(5,  "plan-design-qr-gate", "gate",         "05-plan-design-qr-gate.j2",
         phase="plan-design", on_fail=3),
    Step(6,  "plan-code-execute",   "execute",      "06-plan-code-execute.j2",      role="developer",
         phase="plan-code", status="detailing", skip=(QUICK, DOCS_ONLY)),
    Step(7,  "plan-code-qr",        "qr",           "07-plan-code-qr.j2",           role="quality-reviewer",
         phase="plan-code", skip=(QUICK, DOCS_ONLY)),
    Step(8,  "plan-code-qr-gate",   "gate",         "08-plan-code-qr-gate.j2",
         phase="plan-code", on_fail=6, skip=(QUICK, DOCS_ONLY)),
    Step(9,  "plan-docs-execute",   "docs-execute", "09-plan-docs-execute.j2",      role="technical-writer",
         phase="plan-docs", status="detailing", skip=(QUICK,)),
    Step(10, "plan-docs-qr",        "qr",           "10-plan-docs-qr.j2",           role="quality-reviewer",
         phase="plan-docs", skip=(QUICK,)),
    Step(11, "plan-docs-qr-gate",   "final-gate",   "11-plan-docs-qr-gate.j2",
         phase="plan-docs", on_fail=9),
)
# fmt: on

WORKFLOW = Workflow(
    "planner",
    "PLANNER",
    STEPS,
    [os.path.join(HERE, "templates"), SHARED_TEMPLATES],
    skip_rules={QUICK: k.quick, DOCS_ONLY: k.docs_only},
    checks={
        "plan-design": k.validator_findings("design"),
        "plan-code": k.validator_findings("code"),
        "plan-docs": k.validator_findings("docs"),
    },
    requirements={"goal": k.goal, "questions": k.questions, "choices": k.choices},
    actions={"answer_by_policy": k.answer_by_policy, "pick_by_policy": k.pick_by_policy},
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
    try:
        flags["task"].encode()
    except UnicodeEncodeError:
        raise UsageError("--task: not valid Unicode (bytes that are not UTF-8)") from None
    root = project_root()
    settings = config.load(root)
    if flags.get("depth"):
        settings["depth"] = flags["depth"]
    store = session.create(
        root,
        flags["task"].strip(),
        settings,
        non_interactive=bool(flags.get("non_interactive")),
        activate=False,
    )
    try:
        code = engine.run(workflow, 1, {**flags, "new_session": True}, store=store)
    except BaseException:
        session.discard(store)  # a failed step 1 leaves no orphan session
        raise
    session.make_active(root, os.path.basename(store.dir))
    return code
