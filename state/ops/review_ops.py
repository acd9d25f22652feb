"""The user's verdict on the plan and the session's end: approve,
reject (back to design, or cancelled at max_rejects), cancel, fail."""

from __future__ import annotations

import os
import re

from state import clock, routes
from state.errors import Refused, UsageError
from state.ops.plan_ops import find
from state.ops.qr_ops import add_item, milestone_hashes, open_report, reset, standing
from state.repo.numbered import new_lines, spans
from state.rules.approval import approve, plan_hash
from state.rules.lifecycle import transition
from state.storage.store import report_name
from state.validation.limits import (
    COMMENT_MAX,
    COMMENTS_MAX,
    FEEDBACK_MAX,
    NAME_MAX,
    REASON_MAX,
    check_count,
    check_text,
)
from state.vocab import (
    DRAFTING,
    PLANNING_PHASES,
    ItemStatus,
    LoopState,
    Phase,
    ReviewVerdict,
    Severity,
)
from state.vocab import SessionStatus as S

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Literal

    from state.rules.session_store import Transaction
    from state.storage.documents import Plan, ResultComment, Review, ReviewComment, Session


def in_status(tx: Transaction, status: S, nothing: str) -> Session:
    """session.json to edit; Refused, saying `nothing`, unless the session is in `status`."""
    session = tx.edit("session")
    if session["status"] != status:
        raise Refused(f"session.json: status {session['status']}: {nothing}")
    return session


def in_review(tx: Transaction) -> Session:
    return in_status(tx, S.REVIEW, "there is no plan in review (planner step 11 puts it there)")


def close_round(
    session: Session,
    verdict: Literal[ReviewVerdict.APPROVED, ReviewVerdict.REJECTED],
    *,
    by: str | None,
    sha256: str | None,
    feedback: str | None = None,
    comments: list[ReviewComment] | None = None,
) -> None:
    """The verdict on the review round that is open (step 11 opened it)."""
    reviews = session["reviews"]
    if not reviews or reviews[-1]["verdict"] != ReviewVerdict.SUBMITTED:
        reviews.append(submitted_round(len(reviews) + 1))
    reviews[-1].update(
        {
            "at": clock.now(),
            "verdict": verdict,
            "by": by,
            "feedback": feedback,
            "comments": comments or [],
            "sha256": sha256,
        }
    )


def submitted_round(number: int) -> Review:
    """Review round `number`, submitted now and not yet decided."""
    return {
        "round": number,
        "verdict": ReviewVerdict.SUBMITTED,
        "at": clock.now(),
        "by": None,
        "feedback": None,
        "comments": [],
        "sha256": None,
        "revision": None,
    }


class StaleApproval(Refused):
    """The plan changed after the person saw it: the approval would bind content unseen."""


class ChangedOutside(Refused):
    """plan.json changed outside `plan` commands while in review: no approval binds it."""


def changed_outside(tx: Transaction, session: Session) -> tuple[int, str, str] | None:
    """(round, the hash recorded, the hash now) when plan.json is not the content the open
    review round was opened with, or not the revision it names (an edit on disk: every
    `plan` command refuses a plan in review); None when it is."""
    rounds = session["reviews"]
    current = rounds[-1] if rounds and rounds[-1]["verdict"] == ReviewVerdict.SUBMITTED else None
    shown = current["sha256"] if current else None
    now = plan_hash(tx.read("plan"))
    if current is None or not shown:
        return None
    if shown == now and current["revision"]:  # edited before step 11 opened the round?
        from state.rules.amendments import revision_hash

        held = revision_hash(tx.store, current["revision"])
        shown = held or now  # a missing revision (history/ is local) proves nothing
    return None if shown == now else (current["round"], shown, now)


def check_words(comment: ReviewComment | ResultComment) -> None:
    """A comment's text is not blank nor over its limit (the text is stored stripped)."""
    comment["text"] = comment["text"].strip()
    if not comment["text"]:
        raise UsageError(f"comment on {comment['anchor']}: has no text", field="comment")
    check_text(f"the comment on {comment['anchor']}", comment["text"], COMMENT_MAX)


def check_comment(tx: Transaction, comment: ReviewComment) -> ReviewComment:
    """The comment, once its anchor names an item of the plan (or a question) and its line
    a line of the changed file that the change's diff shows; UsageError otherwise."""
    anchor, line = comment["anchor"], comment["line"]
    check_words(comment)
    if anchor.startswith("Q-"):
        context = tx.read_or_none("context")
        if not any(q["id"] == anchor for q in (context["questions"] if context else ())):
            raise UsageError(f"comment: context.json has no {anchor}", field="comment")
    else:
        find(tx.read("plan"), anchor)  # UsageError naming the anchor when there is no such item
    if line is None:
        return comment
    if not anchor.startswith("CC-"):
        raise UsageError(
            f"comment {anchor}:{line}: only a code change (CC-) has lines", field="comment"
        )
    milestones = tx.read("plan")["milestones"]
    [change] = [c for m in milestones for c in m["code_changes"] if c["id"] == anchor]
    shown = new_lines(change["diff"])
    if line not in shown:
        raise UsageError(
            f"comment {anchor}:{line}: its diff shows lines {spans(shown) or 'none'} "
            f"of {change['file']}",
            field="comment",
        )
    return comment


def review_approve(
    tx: Transaction, *, by: str | None, sign: bool, expect_sha256: str | None
) -> None:
    """The user approves the plan in review: record who, when and its sha256, then freeze."""
    check_text("by", by, NAME_MAX, field=True)
    check_sha256(expect_sha256)
    if by is not None and not by.strip():
        raise UsageError("by: may not be empty (who approves; leave it out for $USER)", field="by")
    session = in_review(tx)
    edited = changed_outside(tx, session)
    if edited:  # found before any approval: the page (409) and the CLI (exit 4) alike
        n, shown, now = edited
        raise ChangedOutside(
            f"{tx.store.path('plan')}: changed outside plan commands since review round {n} "
            f"showed it (sha256 {shown[:12]}…, now {now[:12]}…); nothing approved (see the "
            f"edit: plan diff --review {n}; put back what the round showed: plan restore; "
            "or send it back to planning, where it is recorded as "
            "its own revision and reviewed again: plan review reject)"
        )
    expect_shown(tx, expect_sha256, "approve")
    by = by or os.environ.get("USER") or "user"
    approval = approve(tx, by)
    close_round(session, ReviewVerdict.APPROVED, by=by, sha256=approval["sha256"])
    if sign:  # after the round is closed: the signature covers every round's `by`
        # git and ssh/gpg by subprocess: loaded when asked, off the path of plan status
        from state.project import session_project
        from state.repo.signing import sign as sign_approval

        project = session_project(tx.store.dir)
        approval["signature"] = sign_approval(project, session, approval)
    tx.tell(f"approved and frozen: sha256 {approval['sha256']} (by {by})")
    tx.next_route = routes.EXECUTE


def check_sha256(expected: str | None) -> None:
    """A hash given to compare with is 64 hex digits: anything else is a mistyped argument
    (exit 2), not a plan that changed (exit 4)."""
    if expected and not re.fullmatch(r"[0-9a-f]{64}", expected):
        raise UsageError(
            f"expect_sha256: {expected[:80]!r} is not a sha256 (64 hex digits, as the "
            "review printed it)",
            field="expect_sha256",
        )


def expect_shown(tx: Transaction, expected: str | None, verdict: str) -> None:
    """StaleApproval when the plan is not the one the person saw (its hash `expected`)."""
    check_sha256(expected)
    if expected and plan_hash(tx.read("plan")) != expected:
        raise StaleApproval(
            f"plan.json changed since it was shown (sha256 {expected[:12]}… is no longer "
            f"the plan's): reload it, review the changes, then {verdict}"
        )


def review_reject(
    tx: Transaction,
    *,
    feedback: str | None,
    comment: list[ReviewComment],
    draft: bool,
    by: str | None = None,
    expect_sha256: str | None = None,
) -> None:
    """The user rejects the plan: back to the smallest planning phase the feedback and the
    comments touch (rejected_phase); max_rejects cancels. `by` and `expect_sha256` are the
    review page's (who, and the plan's hash as the page showed it)."""
    check_text("feedback", feedback, FEEDBACK_MAX, field=True)
    check_count("comment (comments in one round)", len(comment), COMMENTS_MAX, field="comment")
    check_text("by", by, NAME_MAX, field=True)
    check_sha256(expect_sha256)
    session = in_review(tx)
    expect_shown(tx, expect_sha256, "request changes")
    edited = changed_outside(tx, session)
    if edited:  # recorded as its own revision, with the audit line saying so
        tx.verdict = True  # the person's verdict: the one write a plan in review takes
        tx.edit("plan")
        tx.revise = True
        tx.note(changed_outside_plan_commands={"shown": edited[1], "now": edited[2]})
        tx.tell(
            f"plan.json was changed outside plan commands after review round {edited[0]} "
            "showed it: recorded as its own revision, to be reviewed again"
        )
    words = (feedback or "").strip()
    comments = [check_comment(tx, c) for c in comment]
    if draft:  # the review companion's draft (state/ops/drafts.py), plus what is given
        words, comments = with_draft(tx, session, words, comments)
    if not words and not comments:
        raise UsageError(
            "review reject: the feedback, a comment or the draft is required and may not be empty"
        )
    session["rejects"] += 1
    close_round(
        session,
        ReviewVerdict.REJECTED,
        by=by or None,
        feedback=words or None,
        comments=comments,
        # frozen in review: the content the round showed (not an edit made on disk since)
        sha256=edited[1] if edited else plan_hash(tx.read("plan")),
    )
    limit = session["config"]["max_rejects"]
    if session["rejects"] >= limit:
        transition(session, S.CANCELLED)
        session["reason"] = f"rejected {session['rejects']} times (max_rejects {limit})"
        tx.tell(
            f"The session is cancelled: {session['reason']}. Start a new one with "
            "planner --step 1 --task TEXT."
        )
        return
    transition(session, S.DESIGN)
    rejected = session["reviews"][-1]
    phase = rejected_phase(tx.read("plan"), rejected)
    reopen_reviews(tx, session, phase, [c["anchor"] for c in rejected["comments"]])
    recheck_the_words(tx, rejected)
    tx.tell(f"rejected (round {rejected['round']}): back to {phase}")
    tx.routed = True  # the step the workflow's table names for that phase (shared/status.py)


def with_draft(
    tx: Transaction, session: Session, feedback: str, comments: list[ReviewComment]
) -> tuple[str, list[ReviewComment]]:
    """The draft's text before `feedback` and its comments before `comments`; the draft is
    marked sent in the same transaction. Its comments are checked again: the plan may have
    changed since it was drafted."""
    # drafts.json is validated by pydantic, which `plan status` and `plan cancel` (their module
    # imports this one) should not load: only the draft's own paths import it
    from state.ops import drafts

    draft = drafts.take(tx, session)
    text = "\n\n".join(t for t in (draft["text"], feedback) if t)
    checked = [check_comment(tx, c) for c in draft["comments"]]
    check_text("the feedback (with the draft)", text, FEEDBACK_MAX)
    check_count("comments (with the draft)", len(checked) + len(comments), COMMENTS_MAX)
    return text, checked + comments


def draft_feedback(tx: Transaction, *, text: str | None, comment: list[ReviewComment]) -> list[str]:
    """A draft of review feedback for the person to send (the review companion, plan mcp):
    text and comments checked as `review reject` checks them, stored without touching the
    plan or the status (state/ops/drafts.py); only while a plan review is open or to come."""
    from state.ops import drafts  # as in with_draft

    check_text("text", text, FEEDBACK_MAX)
    check_count("comments (in one draft)", len(comment), COMMENTS_MAX)
    session = tx.read("session")
    if session["status"] not in DRAFTING:
        raise Refused(
            f"{tx.store.path('session')}: the session is {session['status']}: a draft is "
            "feedback on the plan's review, open or to come (planning, or in review)"
        )
    comments = [check_comment(tx, c) for c in comment]
    words = (text or "").strip()
    if not words and not comments:
        raise UsageError("a draft needs text or at least one comment")
    return [drafts.add(tx, session, words, comments)]


DOC_SUFFIXES = (".md", ".rst", ".txt", ".adoc")


def is_doc_file(path: str) -> bool:
    """README, CHANGELOG and the like, and anything under docs/: documentation in files."""
    name = path.rsplit("/", 1)[-1].upper()
    return (
        path.startswith(("docs/", "doc/"))
        or name.startswith(("README", "CHANGELOG", "CHANGES", "CONTRIBUTING", "HISTORY", "NEWS"))
        or path.lower().endswith(DOC_SUFFIXES)
    )


def anchor_phase(plan: Plan, anchor: str) -> Phase:
    """The planning phase an anchored comment touches: a code intent or change is plan-code,
    or plan-docs when it documents (a documentation-only milestone, or a README/docs file);
    anything else (decisions, risks, milestones, questions, an unknown id) is plan-design."""
    if anchor.startswith(("CI-", "CC-")):
        for milestone in plan["milestones"]:
            for item in (*milestone["code_intents"], *milestone["code_changes"]):
                if item["id"] == anchor:
                    documents = milestone["is_documentation_only"] or is_doc_file(item["file"])
                    return Phase.PLAN_DOCS if documents else Phase.PLAN_CODE
    return Phase.PLAN_DESIGN


def rejected_phase(plan: Plan, round_: Review) -> Phase:
    """The smallest planning phase a rejection touches: the earliest phase any of its comments
    touches; words not anchored to anything (the feedback) touch the design."""
    phases = [anchor_phase(plan, c["anchor"]) for c in round_["comments"]]
    if round_["feedback"] or not phases:
        phases.append(Phase.PLAN_DESIGN)
    return min(phases, key=PLANNING_PHASES.index)


def reopen_reviews(
    tx: Transaction,
    session: Session,
    phase: Phase = Phase.PLAN_DESIGN,
    subjects: Sequence[str] = (),
    reopened: Sequence[str] = (),
) -> None:
    """After a rejection or an amendment the reviews from `phase` on run again: their loops
    restart, and a reviewer's PASS stands unless its subject is one the verdict named
    (`subjects`: the ids the person's comments are on, or the milestones an amendment
    reopens). An item on such an id, on its intent or change or on its milestone goes back
    to TODO; another PASS no longer stands for the milestones an amendment `reopened`:
    they need items of their own, as new milestones do (qr_ops.unjudged). What the rework
    changes reopens the items that judged it, and takes a changed milestone from the PASSes
    that judged it as it was (qr_ops.reopen_changed). Earlier phases keep everything."""
    plan = tx.read("plan")
    named = related(plan, subjects)
    for later in PLANNING_PHASES[PLANNING_PHASES.index(phase) :]:
        if later in session["qr"]:
            session["qr"][later]["state"] = LoopState.INITIAL
        name = report_name(later)
        if tx.read_or_none(name) is None:
            continue
        held = milestone_hashes(plan, later)
        for item in tx.edit(name)["items"]:
            if item["source"] != "reviewer" or item["status"] != ItemStatus.PASS:
                continue
            if item["scope"].strip() in named:
                reset(item)
            else:
                kept = standing(plan, item, held)
                item["milestones"] = {m: h for m, h in kept.items() if m not in reopened}


def related(plan: Plan, subjects: Sequence[str]) -> set[str]:
    """The ids a verdict on `subjects` concerns: each subject; for an intent or a change, its
    partner and its milestone; for a milestone, its intents and changes. (An item on a file
    goes back to TODO once what the file holds changes: qr_ops.reopen_changed.)"""
    found: set[str] = set()
    for subject in subjects:
        found.add(subject)
        for m in plan["milestones"]:
            if subject == m["id"]:
                found |= {x["id"] for x in (*m["code_intents"], *m["code_changes"])}
            for c in m["code_changes"]:
                if subject in (c["id"], c["intent_ref"]):
                    found |= {c["id"], c["intent_ref"], m["id"]}
            if any(subject == i["id"] for i in m["code_intents"]):
                found.add(m["id"])
    return found


def recheck_the_words(tx: Transaction, round_: Review) -> None:
    """A review item for each thing the person said, in the phase it touches, for the rework
    to judge: one on each comment's item, one on the words not anchored to any (the design)."""
    plan = tx.read("plan")
    said = f"review round {round_['round']}"
    for c in round_["comments"]:
        report = open_report(tx, anchor_phase(plan, c["anchor"]))
        add_item(
            tx, report, f"the person's comment ({said}) is addressed", c["anchor"], Severity.MUST
        )
    if round_["feedback"]:
        report = open_report(tx, "plan-design")
        add_item(tx, report, f"the person's feedback ({said}) is addressed", "*", Severity.MUST)


def cancel(tx: Transaction, *, reason: str | None) -> None:
    """Cancel the session (from any status that is not final)."""
    check_text("reason", reason, REASON_MAX, field=True)
    session = tx.edit("session")
    transition(session, S.CANCELLED)
    session["reason"] = reason or "cancelled by the user"


def fail(tx: Transaction, *, error: str) -> None:
    """Mark the session failed, with the error."""
    check_text("error", error, REASON_MAX, field=True)
    session = tx.edit("session")
    transition(session, S.FAILED)
    session["reason"] = error
