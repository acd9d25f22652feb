"""The words every guard call needs: a session's status and the classes of statuses, the guard's
decisions, the clients' dialects. state/vocab.py holds the rest and re-exports these; they are
apart because a guard call imports them under `python3 -S -I` and building all the product's
Enums costs it a tenth of its run (docs/design.md "Guard speed"). Standard library only and
Python 3.8 syntax, like state/vocab.py.
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
