"""The product's words, once: statuses, phases, severities, QR loop states, engine modes, guard
decisions, clients and document names as `str` Enums (docs/design.md, "One vocabulary").

Standard library and state/vocab_core.py (the words every guard call needs, re-exported here)
only, and Python 3.8 syntax: the hooks import it under `python3 -S -I` before any environment
exists. The pydantic models take their Literals from these Enums (state/storage/models.py);
tests/test_vocabulary.py refuses the raw strings in the product.
"""

from __future__ import annotations

from state.vocab_core import APPROVED as APPROVED
from state.vocab_core import CLOSED as CLOSED
from state.vocab_core import DRAFTING as DRAFTING
from state.vocab_core import ENDED as ENDED
from state.vocab_core import PLANNING as PLANNING
from state.vocab_core import SETTLED as SETTLED
from state.vocab_core import Dialect as Dialect
from state.vocab_core import GuardDecision as GuardDecision
from state.vocab_core import SessionStatus as SessionStatus
from state.vocab_core import Word as Word

S = SessionStatus


class Phase(Word):
    """A QR review phase (qr-{phase}.json, a step's `phase`)."""

    PLAN_DESIGN = "plan-design"
    PLAN_CODE = "plan-code"
    PLAN_DOCS = "plan-docs"
    IMPL_CODE = "impl-code"
    IMPL_DOCS = "impl-docs"


PLANNING_PHASES = (Phase.PLAN_DESIGN, Phase.PLAN_CODE, Phase.PLAN_DOCS)


class Severity(Word):
    """A QR item's severity: which review iterations it blocks."""

    MUST = "MUST"
    SHOULD = "SHOULD"
    COULD = "COULD"


class ItemStatus(Word):
    """A QR item's status."""

    TODO = "TODO"
    PASS = "PASS"
    FAIL = "FAIL"


class LoopState(Word):
    """A QR loop's state (session.json `qr.{phase}.state`)."""

    INITIAL = "initial"
    RETRY = "retry"
    COMPLETE = "complete"
    ESCALATED = "escalated"
    ACCEPTED = "accepted"


class ReviewVerdict(Word):
    """A review round's verdict (session.json `reviews[].verdict`)."""

    SUBMITTED = "submitted"
    APPROVED = "approved"
    REJECTED = "rejected"


class ResultVerdict(Word):
    """A result review round's verdict (session.json `result_reviews[].verdict`)."""

    SUBMITTED = "submitted"
    ACCEPTED = "accepted"
    CHANGES_REQUESTED = "changes_requested"


class RunStatus(Word):
    """A milestone's progress (execution.json `milestones[].status`)."""

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    DONE = "done"


class QuestionKind(Word):
    """How a question is answered (context.json `questions[].kind`)."""

    CHOICE = "choice"
    YES_NO = "yes_no"
    TEXT = "text"


class WorkflowName(Word):
    """The two workflows (session.json `workflow`)."""

    PLANNER = "planner"
    EXECUTOR = "executor"


class EngineMode(Word):
    """How the engine runs a step it may run: record an arrival, or print the step again."""

    ARRIVE = "arrive"
    RERENDER = "rerender"


class Document(Word):
    """A session document by name (`<name>.json`); a QR report is `qr-<phase>`."""

    SESSION = "session"
    PLAN = "plan"
    CONTEXT = "context"
    EXECUTION = "execution"
