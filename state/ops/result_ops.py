"""The person's verdict on the result of execution: accept (the session is completed) or
request changes (an amendment with the feedback as its task). One function per verdict,
called by `plan result …` and the review page alike (docs/design.md, "Result review")."""

from __future__ import annotations

import os
import re

from state import clock
from state.errors import Refused, UsageError
from state.ops.lifecycle import transition
from state.validation.limits import (
    COMMENT_MAX,
    COMMENTS_MAX,
    FEEDBACK_MAX,
    NAME_MAX,
    check_count,
    check_text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from state.storage.store import Transaction

CHANGES_REASON = "result review: changes requested"


class StaleResult(Refused):
    """The result changed after the person saw it: the verdict would be on something unseen."""


def open_round(session: dict[str, Any], sha256: str) -> None:
    """Executor step 9 of an interactive session: a round waits for the person's verdict."""
    transition(session, "result_review")
    session["result_reviews"].append(
        {
            "round": len(session["result_reviews"]) + 1,
            "verdict": "submitted",
            "at": clock.now(),
            "sha256": sha256,
        }
    )


def accept_by_policy(session: dict[str, Any], sha256: str) -> None:
    """Executor step 9 of a non-interactive session: nobody is asked, accepted on record."""
    transition(session, "completed")
    session["result_reviews"].append(
        {
            "round": len(session["result_reviews"]) + 1,
            "verdict": "accepted",
            "at": clock.now(),
            "by": "policy",
            "sha256": sha256,
            "policy": True,
        }
    )


def in_result_review(tx: Transaction) -> dict[str, Any]:
    session = tx.edit("session")
    if session["status"] != "result_review":
        raise Refused(
            f"session.json: status {session['status']}: there is no result in review "
            "(executor step 9 of an interactive session puts it there)"
        )
    return session


def check_shown(expected: str | None, sha: str, verdict: str) -> None:
    """StaleResult when the person saw another result than the one now (hash `sha`)."""
    if expected and expected != sha:
        raise StaleResult(
            f"the result changed since it was shown (sha256 {expected[:12]}… is no longer "
            f"the result's): reload it, review the changes, then {verdict}"
        )


def close_round(session: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """The verdict on the round that is open (executor step 9 opened it)."""
    rounds = session["result_reviews"]
    if not rounds or rounds[-1]["verdict"] != "submitted":
        rounds.append({"round": len(rounds) + 1, "verdict": "submitted", "at": clock.now()})
    rounds[-1].update(at=clock.now(), **fields)
    return dict(rounds[-1])


def result_accept(tx: Transaction, a: dict[str, Any]) -> None:
    """The person accepts the result: the round records who, when and the hash of what they
    saw; the session is completed."""
    check_text("by", a.get("by"), NAME_MAX, field=True)
    if a.get("by") is not None and not a["by"].strip():
        raise UsageError("by: may not be empty (who accepts; leave it out for $USER)", field="by")
    from state.result_view import result_of

    session = in_result_review(tx)
    sha = str(result_of(tx.store)["sha256"])
    check_shown(a.get("expect_sha256"), sha, "accept")
    by = (a.get("by") or "").strip() or os.environ.get("USER") or "user"
    done = close_round(session, verdict="accepted", by=by, sha256=sha)
    transition(session, "completed")
    tx.note(accepted_by=by, sha256=sha)
    tx.tell(
        f"DONE: the result is accepted (round {done['round']}, by {by}); the session is completed"
    )


# The comment's head: ID, then an optional FILE and LINE, then the separator. The text is
# the rest, so a blank text is an error, never read as a shorter head ("DV-001:3=" is not
# DV-001 saying "3=").
COMMENT_HEAD = re.compile(
    r"\s*([A-Za-z]+-\d+)(?::((?!\d+\s*[:=])[^\s:=][^:=]*))?(?::(\d+))?\s*[:=]"
)


def parse_comment(text: str) -> dict[str, Any]:
    """`M-001=text`, `M-001:src/app.py:7=text` (a line of the milestone's commit diff),
    `CC-004:7=text` (a line of the planned diff) or `DV-001: text` as a comment record."""
    check_text("a comment", text, COMMENT_MAX + 300)  # before the pattern reads it
    match = COMMENT_HEAD.match(text)
    if not match:
        raise UsageError(
            f"--comment {text[:40]!r}: expected 'ID=TEXT', 'ID:LINE=TEXT' or "
            "'M-nnn:FILE:LINE=TEXT' (e.g. 'M-001:src/app.py:7=off by one', 'DV-001=why?')"
        )
    anchor, path, line = match.groups()
    words = text[match.end() :]
    if not words.strip():
        raise UsageError(f"--comment {text[:40]!r}: the comment on {anchor.upper()} has no text")
    check_text(f"the comment on {anchor.upper()}", words.strip(), COMMENT_MAX)
    return {
        "anchor": anchor.upper(),
        "file": path.strip() if path else None,
        "line": int(line) if line else None,
        "text": words.strip(),
    }


def check_comment(
    tx: Transaction, result: dict[str, Any], comment: dict[str, Any]
) -> dict[str, Any]:
    """The comment, once its anchor names a milestone, deviation or plan item and its line a
    line the diff it points at shows; UsageError otherwise."""
    from state.ops.review_ops import check_comment as check_plan_comment
    from state.repo.numbered import spans
    from state.result_view import committed_files, shown_lines

    anchor, path, line = comment["anchor"], comment["file"], comment["line"]
    if anchor.startswith("DV-"):
        if not any(d["id"] == anchor for d in result["deviations"]):
            raise UsageError(f"--comment: execution.json has no {anchor}")
        if line is not None or path is not None:
            raise UsageError(f"--comment {anchor}: a deviation has no lines")
        return comment
    if anchor.startswith("M-") and line is not None:
        if not any(m["id"] == anchor for m in result["milestones"]):
            raise UsageError(f"--comment: the plan has no {anchor}")
        files = committed_files(result, anchor)
        if path is None and len(files) == 1:
            path = comment["file"] = files[0]
        if path not in files:
            raise UsageError(
                f"--comment {anchor}:{path or ''}:{line}: name one of the files its commits "
                f"change: {', '.join(files) or 'none (nothing committed)'}"
            )
        lines = shown_lines(result, anchor, path)
        if line not in lines:
            raise UsageError(
                f"--comment {anchor}:{path}:{line}: its commits show lines "
                f"{spans(lines) or 'none'} of {path}"
            )
        return comment
    if path is not None:
        raise UsageError(f"--comment {anchor}:{path}: only a milestone (M-) takes a file")
    check_plan_comment(tx, {"anchor": anchor, "line": line, "text": comment["text"]})
    return comment


def result_request_changes(tx: Transaction, a: dict[str, Any]) -> None:
    """The person asks for changes: the round records the feedback and the comments, and an
    amendment opens with the feedback as its task."""
    from state.ops.amend_ops import open_amendment
    from state.result_view import result_of

    check_text("feedback", a.get("feedback"), FEEDBACK_MAX, field=True)
    many = len(a.get("comment") or [])
    check_count("comment (comments in one round)", many, COMMENTS_MAX, field="comment")
    check_text("by", a.get("by"), NAME_MAX, field=True)
    session = in_result_review(tx)
    feedback = (a.get("feedback") or "").strip()
    if not feedback:
        raise UsageError(
            "result request-changes: --feedback is required and may not be empty "
            "(it becomes the amendment's task)"
        )
    result = result_of(tx.store)
    check_shown(a.get("expect_sha256"), result["sha256"], "request changes")
    comments = [check_comment(tx, result, parse_comment(c)) for c in a.get("comment") or []]
    done = close_round(
        session,
        verdict="changes_requested",
        by=(a.get("by") or "").strip() or None,
        feedback=feedback,
        comments=comments,
        sha256=result["sha256"],
    )
    open_amendment(tx, reason=CHANGES_REASON, task=feedback)
    tx.tell(f"changes requested (result round {done['round']}): an amendment is open")
    tx.routed = True  # where the amendment's planning starts (shared/status.py settle)
