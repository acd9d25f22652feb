"""The session's store: the document store (state/storage/store.py) under the session's rules.

What may be written when (the freeze, a plan in review, an open amendment round, the
executor's asks, a closed session), the plan's integrity, where the command sends the
session, and what a commit leaves besides its files (a closed session's worktree goes). Every
command opens this store; the storage below knows none of it (docs/design.md, "Layers").
"""

from __future__ import annotations

import contextlib
import json

from state.errors import DamagedFile, Finding, PlannerError, PreconditionFailed, Refused
from state.rules.amendments import approved_revision, open_amendment, scope_refusal
from state.storage.content import plan_hash
from state.storage.history import HISTORY_DIR, sha256
from state.storage.store import DocumentStore, DocumentTransaction, Encoded, checked_lines, load
from state.vocab import APPROVED, CLOSED, ENDED, Document, ReviewVerdict, SessionStatus

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from state.routes import Route, Target
    from state.storage.documents import Context, Plan, Question, Review, Session

REWORK = frozenset({SessionStatus.DESIGN, SessionStatus.DETAILING})  # after a rejection
PLANNING_FILES = frozenset({"plan", "context", "qr-plan-design", "qr-plan-code", "qr-plan-docs"})
# context.json takes the executor's questions to the person while the approved plan executes.
ASKING = frozenset({SessionStatus.APPROVED, SessionStatus.EXECUTING})
# The fix for plan.json edited outside `plan` commands (state/ops/restore_ops.py).
RESTORE_FIX = (
    "fix: plan restore, which puts back plan.json as plan last wrote it; to change an "
    "approved plan, after it: plan amend --reason '…'"
)


def write_refusal(
    name: str, session: Session | None, plan: Plan | None, verdict: bool = False, asks: bool = False
) -> str:
    """Why `name` may not be written now, or "" when it may. `verdict`: the transaction
    records the person's verdict, the one change a plan in review may take (its freeze).
    `asks`: it adds or answers the executor's questions to the person, the one change
    context.json takes while the approved plan executes (Transaction._check_asks)."""
    status = session["status"] if session else None
    if status in CLOSED and name != Document.SESSION:
        return f"the session is {status}; nothing was written"
    if name == Document.CONTEXT and asks and status in ASKING:
        return ""
    if name in PLANNING_FILES and status == SessionStatus.REVIEW and not verdict:
        # The person reviews exactly what the round shows: no edit until their verdict.
        return (
            "the plan is in review, frozen until the person's verdict (plan review "
            "approve|reject, or the review page); nothing was written"
        )
    # Frozen means approved: the status or the approval record says so, whatever frozen_at holds.
    if name in PLANNING_FILES and session and (status in APPROVED or session["approval"]):
        return f"the plan is frozen: approved (session status {status}); nothing was written"
    # An open amendment round unfreezes the plan for what it touches (_check_amendment).
    if name in PLANNING_FILES and plan and plan["frozen_at"] and not open_amendment(session):
        return f"plan.json is frozen (frozen_at {plan['frozen_at']}); nothing was written"
    return ""


def tampered(session: Session | None, plan: Plan | None) -> str:
    """Why plan.json is not the approved plan ("" when it is, or nothing was approved)."""
    approval = session["approval"] if session else None
    if not approval or plan is None:
        return ""
    actual = plan_hash(plan)
    if actual != approval["sha256"]:
        return (
            f"content changed after approval (sha256 {actual[:12]}… is not the approved "
            f"{approval['sha256'][:12]}…)"
        )
    if not plan.get("frozen_at"):
        return "content changed after approval (frozen_at was cleared)"
    return ""


OVERVIEW_FIX = (
    "where its title, problem or approach no longer say what the plan does: "
    "plan overview set --approach A --title T --problem P, only what changed"
)


def stale_overview_since(store: DocumentStore, session: Session, plan: Plan) -> str:
    """In the rework after a rejection: which decisions and choices changed since the rejected
    round while the overview did not, or "" (docs/design.md, "A stale overview after a
    rejection")."""
    from state.validation.diff import stale_overview

    rejected = rejected_round(session)
    if rejected is None or not rejected["revision"]:
        return ""
    try:
        ids = stale_overview(store.revision(rejected["revision"]), plan)
    except PlannerError:  # history/ is local: a clone may lack it
        return ""
    if not ids:
        return ""
    return f"{', '.join(ids)} changed since review round {rejected['round']}, the overview did not"


def rejected_round(session: Session) -> Review | None:
    """The last review round, when it was rejected and its rework is under way."""
    rounds = session["reviews"]
    if rounds and rounds[-1]["verdict"] == ReviewVerdict.REJECTED and session["status"] in REWORK:
        return rounds[-1]
    return None


class Store(DocumentStore):
    """The files of one session directory, written under the session's rules."""

    def __init__(self, state_dir: str):
        super().__init__(state_dir)
        # What the engine keeps true before every commit (shared/status.py settle): state/
        # cannot know the workflows, so the layer above hands it in (docs/design.md).
        self.before_commit: Callable[[Transaction], None] | None = None

    def recover(self) -> None:
        """What a killed writer left (the storage's recover), and a closed session's worktree
        that a kill left behind (state/repo/worktree.py settle)."""
        super().recover()
        # Imported here: a command that opens no session does not load the worktree module.
        from state.repo import worktree

        with contextlib.suppress(OSError, PreconditionFailed):  # said when the session closed
            worktree.settle(self.dir, wait=0)

    def transaction(self, command: str) -> Transaction:
        super().transaction(command)  # the directory's check
        return Transaction(self, command)


class Transaction(DocumentTransaction):
    """A document transaction that keeps the session's rules, and carries what the command
    decided besides its documents: where it sends the session and lines for the person."""

    store: Store

    def __init__(self, store: Store, command: str):
        super().__init__(store, command)
        self.verdict = False  # records the verdict on a plan in review: may write its freeze
        self.asks = False  # adds or answers the executor's questions: may write context.json
        # By name (state/routes.py): the step to run next, and the step the session moves to;
        # the engine resolves both through the workflow tables before the commit.
        self.next_route: Route | None = None
        self.move_to: Route | None = None

    def _fresh(self) -> None:
        super()._fresh()
        self.next: Target | None = None  # the step or command to run next, if the op says
        self.routed = False  # the op leads where the routing now says: settle() fills next
        self.told: list[str] = []  # lines for the person (stderr), e.g. "the session is cancelled"

    def tell(self, line: str) -> None:
        self.told.append(line)

    def _check_writable(self, name: str) -> None:
        session = self.read_or_none("session") if name != Document.SESSION else None
        plan = self.read_or_none("plan") if name in PLANNING_FILES else None
        reason = write_refusal(name, session, plan, self.verdict, self.asks)
        if reason:
            raise Refused(f"{self.store.dir}: {reason}")

    def _prepare(self) -> None:
        if self.store.before_commit is not None:
            self.store.before_commit(self)

    def _check(self, changed: dict[str, bytes]) -> None:
        self._check_freeze()
        if Document.PLAN in changed:
            self._check_amendment()
        if self.asks and Document.CONTEXT in changed:
            self._check_asks()

    def _committed(self, changed: dict[str, bytes]) -> None:
        """The session is closed (completed, cancelled, failed): its worktree goes in the same
        command, after the commit (a kill in between leaves it for the next recover())."""
        if Document.PLAN in changed:
            self._tell_stale_overview()
        if Document.SESSION not in changed or self.read("session")["status"] not in CLOSED:
            return
        from state.repo import worktree  # see Store.recover

        try:
            worktree.settle(self.store.dir)
        except (OSError, PreconditionFailed) as e:  # the session's record stands: say so
            self.tell(f"the session is closed but its worktree was not removed: {e}")

    def _tell_stale_overview(self) -> None:
        """One line when this command changed a decision or choice and the overview is still
        what the person rejected (only then: the line is not repeated at every write)."""
        from state.validation.diff import stale_overview

        was, session = self.original.get("plan"), self.read("session")
        if was is None or rejected_round(session) is None:  # cheap first: plan.json unparsed
            return
        if stale_overview(json.loads(was), self.read("plan")):
            said = stale_overview_since(self.store, session, self.read("plan"))
            if said:
                self.tell(f"{said}: {OVERVIEW_FIX}")

    def _check_freeze(self) -> None:
        """Frozen means approved: no write while plan.json differs from the approved plan,
        except the one that closes the session (cancel, fail)."""
        session = self.read_or_none("session")
        if session is None or session["status"] in ENDED:
            return
        reason = tampered(session, self.read_or_none("plan"))
        if reason:
            raise Refused(
                f"{self.store.path('plan')}: {reason}; nothing was written ({RESTORE_FIX})"
            )

    def _check_amendment(self) -> None:
        """While an amendment is open, plan.json changes only where the round allows: new
        milestones, the ones it reopens, new decisions (state/rules/amendments.scope_refusal)."""
        session = self.read_or_none("session")
        amendment = open_amendment(session)
        if amendment is None:
            return
        # Against the approved plan, not the one before this command: new milestones stay
        # open all round, and an edit by hand cannot widen the round.
        found = approved_revision(self.store, amendment["approval"]["sha256"], session)
        raw = self.original.get("plan")
        if found is None and raw is not None:
            # history/ is this machine's record (a clone has none): the plan as this command
            # found it is the reference, its approved milestones those execution.json runs
            reference = load(self.store.path("plan"), "plan", raw)
            execution = self.read_or_none("execution")
            if execution is not None:
                ran = {r["id"] for r in execution["milestones"]}
                reference["milestones"] = [m for m in reference["milestones"] if m["id"] in ran]
            found = ("plan.json", reference)
            self.note(amendment_checked_against="plan.json as found (no approved revision)")
        if found is None:
            raise DamagedFile(
                f"{self.store.dir}/{HISTORY_DIR}: no revision has the approved plan that "
                f"amendment round {amendment['round']} amends; nothing was written"
            )
        execution = self.read_or_none("execution")
        reason = scope_refusal(amendment, found[1], self.read("plan"), execution)
        if reason:
            before = load(self.store.path("plan"), "plan", raw) if raw else None
            by_hand = before is not None and scope_refusal(amendment, found[1], before, execution)
            fix = f" ({RESTORE_FIX})" if by_hand else ""  # the file was edited outside plan
            raise Refused(f"{self.store.path('plan')}: {reason}; nothing was written{fix}")

    def _check_asks(self) -> None:
        """Once approved, context.json takes only the executor's questions (`about` set):
        anything else changed in it is refused, whatever the command meant to ask."""
        session = self.read_or_none("session")
        raw = self.original.get("context")
        if session is None or session["status"] not in ASKING or raw is None:
            return

        def planning_part(doc: Context) -> tuple[Context, list[Question]]:
            kept = [q for q in doc["questions"] if not q["about"]]
            return {**doc, "questions": []}, kept

        before = load(self.store.path("context"), "context", raw)
        if planning_part(before) != planning_part(self.read("context")):
            raise Refused(
                f"{self.store.path('context')}: the plan is frozen: approved (session status "
                f"{session['status']}); only the executor's questions to the person may "
                "be added or answered; nothing was written"
            )

    def _findings(self, changed: dict[str, bytes]) -> list[Finding]:
        """The schemas' findings, and the plan's integrity (ids, references) when it changed."""
        findings = super()._findings(changed)
        if Document.PLAN in changed:
            # Imported when a change is validated: its patterns are compiled on import, a cost
            # every command's start would pay (docs/design.md, "Launcher fast path").
            from state.validation import validate

            # A large plan as a commit wrote it, after this check found it sound: only what
            # changed is walked when it can be (validate.integrity `sound`); else all of it.
            old, raw = self.encoded["plan"].old, self.original.get("plan")
            if old is not None and raw and self._sound(raw) not in checked_lines(self.store.dir):
                old = None
            broken = validate.integrity(self.read("plan"), self._question_ids(), old)
            if broken:
                self._refuse_if_damaged_before(broken)
            findings += broken
        return findings

    def _checked_lines(self, name: str, encoded: Encoded) -> list[bytes]:
        """A plan this commit writes passed the integrity check too: its next commit walks only
        what changed when it can (validate.integrity `sound`)."""
        lines = super()._checked_lines(name, encoded)
        return [*lines, self._sound(encoded.data)] if name == Document.PLAN else lines

    def _sound(self, data: bytes) -> bytes:
        from state.validation import validate  # see _findings

        return f"plan.json {sha256(data)} integrity-{validate.fingerprint()}".encode()

    def _refuse_if_damaged_before(self, broken: list[Finding]) -> None:
        """A problem plan.json had before this command (an edit by hand: a duplicate id, a
        dangling reference) is damage to report with the file's path (exit 3), not a fault
        of the change."""
        from state.validation import validate  # see _findings

        raw = self.original.get("plan")
        if not raw:
            return
        before = validate.integrity(json.loads(raw), self._question_ids())
        old = [f for f in broken if f in before]
        if old:
            more = f" (and {len(old) - 1} more)" if len(old) > 1 else ""
            raise DamagedFile(
                f"{self.store.path('plan')}: {old[0].line()}{more}; it was so before this "
                "command (edited by hand?): fix the file or restore a revision (plan history); "
                "nothing was written"
            )

    def _question_ids(self) -> set[str] | None:
        context = self.read_or_none("context")
        return None if context is None else {q["id"] for q in context["questions"]}
