"""The executor: nine steps that carry a frozen plan out, wave by wave, and reconcile it
against git. Read the table to read the workflow; the executor's own
kinds and requirements are in kinds.py beside it, the shared ones in shared/kinds.py."""

from __future__ import annotations

import os

from shared.engine import SHARED_TEMPLATES
from shared.kinds import Gate
from shared.workflow import Step, Workflow
from skills.executor.kinds import (
    DocsImplement,
    ExecInit,
    Implement,
    ImplGate,
    ImplReview,
    Load,
    Reconcile,
    all_done,
    review_findings,
)
from state.vocab import Phase, WorkflowName
from state.vocab import SessionStatus as S

HERE = os.path.dirname(os.path.abspath(__file__))

# fmt: off
STEPS = (
    #    n  name                 kind       template                   role
    Step(1, "init",              ExecInit,  "01-init.j2",              status=S.EXECUTING),
    Step(2, "load-verify",       Load,      "02-load-verify.j2"),
    Step(3, "impl-execute",      Implement, "03-impl-execute.j2",      role="developer",
         phase=Phase.IMPL_CODE),
    Step(4, "impl-code-qr",      ImplReview, "04-impl-code-qr.j2",     role="quality-reviewer",
         phase=Phase.IMPL_CODE, requires=(all_done,)),
    Step(5, "impl-code-qr-gate", ImplGate,  "05-impl-code-qr-gate.j2",
         phase=Phase.IMPL_CODE, on_fail="impl-execute"),
    Step(6, "impl-docs-execute", DocsImplement, "06-impl-docs-execute.j2", role="technical-writer",
         phase=Phase.IMPL_DOCS),
    Step(7, "impl-docs-qr",      ImplReview, "07-impl-docs-qr.j2",     role="quality-reviewer",
         phase=Phase.IMPL_DOCS),
    Step(8, "impl-docs-qr-gate", Gate,      "08-impl-docs-qr-gate.j2",
         phase=Phase.IMPL_DOCS, on_fail="impl-docs-execute"),
    Step(9, "reconcile",         Reconcile, "09-reconcile.j2"),
)
# fmt: on

EXECUTOR = Workflow(
    WorkflowName.EXECUTOR,
    "EXECUTOR",
    STEPS,
    [os.path.join(HERE, "templates"), SHARED_TEMPLATES],
    checks={
        Phase.IMPL_CODE: review_findings(docs=False),
        Phase.IMPL_DOCS: review_findings(docs=True),
    },
)
