"""The person's verdict on the result of execution: accept (the session is completed) or
request changes (an amendment with the feedback as its task). One function per verdict,
called by `plan result …` and the review page alike (docs/design.md, "Result review")."""

from __future__ import annotations

import os

from state import clock
from state.errors import Refused, UsageError
from state.ops.amend_ops import open_amendment
from state.ops.result_view import committed_files, result_of, shown_lines
from state.ops.review_ops import check_comment as check_plan_comment
from state.ops.review_ops import check_sha256, check_words, in_status
from state.repo.numbered import spans
from state.rules.lifecycle import transition
from state.validation.limits import COMMENTS_MAX, FEEDBACK_MAX, NAME_MAX, check_count, check_text
from state.vocab import ResultVerdict
from state.vocab import SessionStatus as S

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from state.ops.result_view import Result
    from state.rules.session_store import Transaction
    from state.storage.documents import ResultComment, ResultReview, Session

CHANGES_REASON = "result review: changes requested"


class StaleResult(Refused):
    """The result changed after the person saw it: the verdict would be on something unseen."""


def new_round(
    session: Session,
    verdict: Literal[ResultVerdict.SUBMITTED, ResultVerdict.ACCEPTED],
    sha256: str | None,
    *,
    by: str | None = None,
    policy: bool = False,
) -> ResultReview:
    """The next result-review round, added to the session."""
    rounds = session["result_reviews"]
    rounds.append(
        {
            "round": len(rounds) + 1,
            "verdict": verdict,
            "at": clock.now(),
            "by": by,
            "feedback": None,
            "comments": [],
            "sha256": sha256,
            "policy": policy,
        }
    )
    return rounds[-1]


def submit_result(session: Session, sha256: str) -> None:
    """Executor step 9 of an interactive session: a round waits for the person's verdict."""
    transition(session, S.RESULT_REVIEW)
    new_round(session, ResultVerdict.SUBMITTED, sha256)


def accept_by_policy(session: Session, sha256: str) -> None:
    """Executor step 9 of a non-interactive session: nobody is asked, accepted on record."""
    transition(session, S.COMPLETED)
    new_round(session, ResultVerdict.ACCEPTED, sha256, by="policy", policy=True)


def in_result_review(tx: Transaction) -> Session:
    step = "executor step 9 of an interactive session puts it there"
    return in_status(tx, S.RESULT_REVIEW, f"there is no result in review ({step})")


def check_shown(expected: str | None, sha: str, verdict: str) -> None:
    """StaleResult when the person saw another result than the one now (hash `sha`)."""
    check_sha256(expected)
    if expected and expected != sha:
        raise StaleResult(
            f"the result changed since it was shown (sha256 {expected[:12]}… is no longer "
            f"the result's): reload it, review the changes, then {verdict}"
        )


def close_round(
    session: Session,
    verdict: Literal[ResultVerdict.ACCEPTED, ResultVerdict.CHANGES_REQUESTED],
    *,
    by: str | None,
    sha256: str,
    feedback: str | None = None,
    comments: list[ResultComment] | None = None,
) -> ResultReview:
    """The verdict on the round that is open (executor step 9 opened it)."""
    rounds = session["result_reviews"]
    done = rounds[-1] if rounds and rounds[-1]["verdict"] == ResultVerdict.SUBMITTED else None
    if done is None:
        done = new_round(session, ResultVerdict.SUBMITTED, None)
    done.update(
        {
            "at": clock.now(),
            "verdict": verdict,
            "by": by,
            "feedback": feedback,
            "comments": comments or [],
            "sha256": sha256,
        }
    )
    return done


def result_accept(tx: Transaction, *, by: str | None, expect_sha256: str | None) -> None:
    """The person accepts the result: the round records who, when and the hash of what they
    saw; the session is completed."""
    check_text("by", by, NAME_MAX, field=True)
    check_sha256(expect_sha256)
    if by is not None and not by.strip():
        raise UsageError("by: may not be empty (who accepts; leave it out for $USER)", field="by")
    session = in_result_review(tx)
    sha = result_of(tx.store)["sha256"]
    check_shown(expect_sha256, sha, "accept")
    by = (by or "").strip() or os.environ.get("USER") or "user"
    done = close_round(session, ResultVerdict.ACCEPTED, by=by, sha256=sha)
    transition(session, S.COMPLETED)
    tx.note(accepted_by=by, sha256=sha)
    tx.tell(
        f"DONE: the result is accepted (round {done['round']}, by {by}); the session is completed"
    )
    tx.tell(  # executor step 1 had the agent commit .planner/ as approved; this adds the rest
        'Commit its record: git add .planner && git commit -qm "Result accepted" -- .planner'
    )


def check_comment(tx: Transaction, result: Result, comment: ResultComment) -> ResultComment:
    """The comment, once its anchor names a milestone, deviation or plan item and its line a
    line the diff it points at shows; UsageError otherwise."""
    anchor, path, line = comment["anchor"], comment["file"], comment["line"]
    check_words(comment)
    if anchor.startswith("DV-"):
        if not any(d["id"] == anchor for d in result["deviations"]):
            raise UsageError(f"comment: execution.json has no {anchor}", field="comment")
        if line is not None or path is not None:
            raise UsageError(f"comment {anchor}: a deviation has no lines", field="comment")
        return comment
    if anchor.startswith("M-") and line is not None:
        if not any(m["id"] == anchor for m in result["milestones"]):
            raise UsageError(f"comment: the plan has no {anchor}", field="comment")
        files = committed_files(result, anchor)
        if path is None and len(files) == 1:
            path = comment["file"] = files[0]
        if path is None or path not in files:
            raise UsageError(
                f"comment {anchor}:{path or ''}:{line}: name one of the files its commits "
                f"change: {', '.join(files) or 'none (nothing committed)'}",
                field="comment",
            )
        lines = shown_lines(result, anchor, path)
        if line not in lines:
            raise UsageError(
                f"comment {anchor}:{path}:{line}: its commits show lines "
                f"{spans(lines) or 'none'} of {path}",
                field="comment",
            )
        return comment
    if path is not None:
        raise UsageError(
            f"comment {anchor}:{path}: only a milestone (M-) takes a file", field="comment"
        )
    check_plan_comment(tx, {"anchor": anchor, "line": line, "text": comment["text"]})
    return comment


def result_request_changes(
    tx: Transaction,
    *,
    feedback: str | None,
    comment: list[ResultComment],
    by: str | None,
    expect_sha256: str | None,
) -> None:
    """The person asks for changes: the round records the feedback and the comments, and an
    amendment opens with the feedback as its task."""
    check_text("feedback", feedback, FEEDBACK_MAX, field=True)
    check_count("comment (comments in one round)", len(comment), COMMENTS_MAX, field="comment")
    check_text("by", by, NAME_MAX, field=True)
    check_sha256(expect_sha256)
    session = in_result_review(tx)
    task = (feedback or "").strip()
    if not task:
        raise UsageError(
            "feedback is required and may not be empty (it becomes the amendment's task)",
            field="feedback",
        )
    result = result_of(tx.store)
    check_shown(expect_sha256, result["sha256"], "request changes")
    comments = [check_comment(tx, result, c) for c in comment]
    done = close_round(
        session,
        ResultVerdict.CHANGES_REQUESTED,
        by=(by or "").strip() or None,
        feedback=task,
        comments=comments,
        sha256=result["sha256"],
    )
    open_amendment(tx, reason=CHANGES_REASON, task=task)
    tx.tell(f"changes requested (result round {done['round']}): an amendment is open")
    tx.routed = True  # where the amendment's planning starts (shared/status.py settle)
