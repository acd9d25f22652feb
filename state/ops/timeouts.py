"""Timeouts, applied when a session is next touched, on record:
an approval not given in approval_timeout cancels; an unanswered question past
question_timeout is skipped with its recommended option as an assumption."""

from __future__ import annotations

from state import clock
from state.ops.question_ops import assume_answer
from state.rules.lifecycle import transition
from state.vocab import SessionStatus as S

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.rules.session_store import Store
    from state.storage.documents import Context, Question, Session


def _overdue(since: str | None, limit: int, now: float) -> bool:
    return bool(limit and since and now - clock.parse(since) > limit)


def _approval_overdue(session: Session, now: float) -> bool:
    limit = session["config"]["approval_timeout"]
    return session["status"] == S.REVIEW and _overdue(session["review_started_at"], limit, now)


def _question_overdue(q: Question, limit: int, now: float) -> bool:
    return q["answer"] is None and not q["skipped"] and _overdue(q["asked_at"], limit, now)


def due(session: Session, context: Context | None) -> bool:
    """Whether anything has timed out (read-only: the cheap check every command makes)."""
    now, limit = clock.epoch(), session["config"]["question_timeout"]
    questions = context["questions"] if context else []
    return _approval_overdue(session, now) or any(
        _question_overdue(q, limit, now) for q in questions
    )


def expire(store: Store) -> None:
    """Apply what has timed out; nothing is written when nothing has."""
    session = store.read("session")
    watch_questions = session["config"]["question_timeout"] and session["status"] in (
        S.DISCOVERY,
        S.DESIGN,
    )
    context = store.read_or_none("context") if watch_questions else None
    if not due(session, context):
        return
    with store.transaction("timeout") as tx:
        session, now = tx.edit("session"), clock.epoch()
        config = session["config"]
        if _approval_overdue(session, now):
            transition(session, S.CANCELLED)
            session["reason"] = (
                f"no approval within approval_timeout ({config['approval_timeout']}s)"
            )
            tx.note(timeout="approval", status=S.CANCELLED)
        if watch_questions:
            context = tx.edit("context")
            skipped = []
            for q in context["questions"]:
                if _question_overdue(q, config["question_timeout"], now):
                    assume_answer(context, q, "question_timeout passed")
                    skipped.append(q["id"])
            if skipped:
                tx.note(timeout="question", questions=skipped)
