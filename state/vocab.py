"""The product's words, once: statuses, phases, severities, QR loop states, engine modes, guard
decisions, clients and document names as `str` Enums (docs/design.md, "One vocabulary").

Standard library only, importing nothing of the package, and Python 3.8 syntax: the hooks
import it under `python3 -S -I` before any environment exists. The pydantic models take their
Literals from these Enums (state/storage/models.py); tests/test_vocabulary.py refuses the raw
strings in the product.
"""

from __future__ import annotations

from enum import Enum


class Word(str, Enum):  # noqa: UP042 (StrEnum needs 3.11)
    """A member is its own word: it equals, hashes, prints and serialises as the plain string,
    so what a JSON file holds compares with it directly (StrEnum needs 3.11; the hooks run on
    3.8)."""

    def __str__(self) -> str:
        return str(self.value)


class SessionStatus(Word):
    """session.json `status`, in the order a session moves through them."""

    DISCOVERY = "discovery"
    DESIGN = "design"
    DETAILING = "detailing"
    REVIEW = "review"
    APPROVED = "approved"
    EXECUTING = "executing"
    RESULT_REVIEW = "result_review"
    COMPLETED = "completed"
    CANCELLED = "cancelled"
    FAILED = "failed"


S = SessionStatus
# Drafting: a plan is being made, nothing is approved yet.
DRAFTING = frozenset({S.DISCOVERY, S.DESIGN, S.DETAILING, S.REVIEW})
# Planning: the project stays read-only (any status not listed as settled guards as planning).
# result_review is guarded like a plan in review: the agent changes nothing the person is
# reviewing, and their verdict (`plan result accept|request-changes`) is asked.
PLANNING = DRAFTING | {S.RESULT_REVIEW}
APPROVED = frozenset({S.APPROVED, S.EXECUTING, S.RESULT_REVIEW, S.COMPLETED})
ENDED = frozenset({S.CANCELLED, S.FAILED})  # never approved, never will be
CLOSED = frozenset({S.COMPLETED, *ENDED})  # no step runs, nothing is resumed
SETTLED = (APPROVED - {S.RESULT_REVIEW}) | CLOSED


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


class GuardDecision(Word):
    """What the guard answers a tool call while planning (audit.jsonl `decision`)."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"
    SANDBOXED = "sandboxed"


class Dialect(Word):
    """The client a hook answers, in its own dialect (`--dialect`)."""

    CLAUDE = "claude"
    CODEX = "codex"
    GEMINI = "gemini"
