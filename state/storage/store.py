"""The one way state files are read and written.

lock → recover → read → apply → validate → one journaled commit (documents, history revision,
index, audit line: all or none, state/storage/journal.py). A change that fails validation raises
before anything is written; a damaged file is never written.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import overload

from state import clock
from state.errors import (
    DamagedFile,
    Finding,
    PlannerError,
    PreconditionFailed,
    Refused,
    UsageError,
    WriteFailed,
)
from state.storage import journal, schema
from state.storage.content import plan_hash
from state.storage.history import (
    HISTORY_DIR,
    HISTORY_INDEX,
    REV,
    Entry,
    entries,
    index_bytes,
    next_revision,
    read_revision,
    revision_file,
    revision_numbers,
)
from state.storage.ids import Identified, format_id, highest
from state.storage.lock import locked
from state.validation.amendments import approved_revision, open_round, scope_refusal
from state.vocab import APPROVED, CLOSED, ENDED, Phase
from state.vocab import SessionStatus as S

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any, Literal, TypeVar

    from state.routes import Route
    from state.storage.documents import Context, Execution, Plan, QRReport, Question, Session

    QRName = Literal[
        "qr-plan-design", "qr-plan-code", "qr-plan-docs", "qr-impl-code", "qr-impl-docs"
    ]
    DocName = Literal["plan", "context", "session", "execution"] | QRName
    Document = Plan | Context | Session | Execution | QRReport
    D = TypeVar("D", Plan, Context, Session, Execution, QRReport)

__all__ = ["HISTORY_DIR", "HISTORY_INDEX"]
LOCK_FILE = ".lock"
AUDIT_FILE = "audit.jsonl"
PLANNING_FILES = frozenset({"plan", "context", "qr-plan-design", "qr-plan-code", "qr-plan-docs"})


def file_name(name: str) -> str:
    """`plan` → plan.json, `qr-plan-design` → qr-plan-design.json."""
    return f"{name}.json"


QR_NAMES: dict[str, QRName] = {
    Phase.PLAN_DESIGN: "qr-plan-design",
    Phase.PLAN_CODE: "qr-plan-code",
    Phase.PLAN_DOCS: "qr-plan-docs",
    Phase.IMPL_CODE: "qr-impl-code",
    Phase.IMPL_DOCS: "qr-impl-docs",
}


def report_name(phase: str) -> QRName:
    """The document name of a phase's QR report: qr-plan-design, …"""
    name = QR_NAMES.get(phase)
    if name is None:
        raise UsageError(f"{phase!r}: not a QR phase ({', '.join(QR_NAMES)})")
    return name


def schema_name(name: str) -> str:
    return "qr" if name.startswith("qr-") else name


# A document at most this large is written indented, for reading and for its diff; a larger one
# compact: json's indented encoder is pure Python, ~4x the C one's time on a 3 MB plan, which
# every mutation of it paid twice (docs/design.md, "Document encoding").
INDENT_UP_TO = 256 * 1024


def dumps(doc: Any) -> bytes:
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n"
    if len(text) <= INDENT_UP_TO:
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    try:
        return text.encode()
    except UnicodeEncodeError as e:  # a lone surrogate that came through an argument
        raise UsageError(
            f"not valid Unicode: {text[max(0, e.start - 20) : e.start]!r} is followed by a "
            "lone surrogate; nothing was written"
        ) from None


def write_atomic(path: str, data: bytes) -> None:
    """Temp file in the same directory, fsync, rename: readers see the old or the new file.

    WriteFailed (exit 3) naming the file when it cannot be written; the temp file is removed.
    """
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        journal.write_file(tmp, data)
        os.replace(tmp, path)
    except OSError as e:
        journal.remove([tmp])
        raise WriteFailed(
            f"{path}: cannot be written ({e.strerror or e}); nothing was written"
        ) from None


def append_line(path: str, record: Mapping[str, object]) -> None:
    """One JSON line, one write on an O_APPEND descriptor: concurrent appends do not interleave."""
    data = (json.dumps(record, ensure_ascii=False) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def read_bytes(path: str) -> bytes:
    raw = journal.read_if_any(path)
    if raw is None:
        raise UsageError(f"{path}: not found")
    return raw


def parse(path: str, schema_name: str, raw: bytes) -> Document:
    """The document in `raw`, checked against its schema; DamagedFile names path and problem."""
    if not raw.strip():
        raise DamagedFile(f"{path}: empty file (damaged; it is left as it is)")
    try:
        doc = json.loads(raw)
    except UnicodeDecodeError as e:
        raise DamagedFile(
            f"{path}: not valid UTF-8 JSON ({e.reason} at byte {e.start}); damaged, left as it is"
        ) from None
    except ValueError as e:  # json.JSONDecodeError, or an integer of over 4,300 digits
        where = (
            f"{e.msg.removesuffix(' at')} at line {e.lineno} column {e.colno}"  # type: ignore[attr-defined]
            if hasattr(e, "lineno")
            else str(e)
        )
        raise DamagedFile(f"{path}: not valid JSON ({where}); damaged, left as it is") from None
    except RecursionError:
        raise DamagedFile(f"{path}: JSON nested too deeply; damaged, left as it is") from None
    problems = schema.check(schema_name, doc)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise DamagedFile(f"{path}: {problems[0]}{more}; damaged, left as it is")
    checked: Document = doc  # the schema `schema_name` says which document it is
    return checked


@overload
def load(path: str, schema_name: Literal["plan"], raw: bytes | None = None) -> Plan: ...
@overload
def load(path: str, schema_name: Literal["context"], raw: bytes | None = None) -> Context: ...
@overload
def load(path: str, schema_name: Literal["session"], raw: bytes | None = None) -> Session: ...
@overload
def load(path: str, schema_name: str, raw: bytes | None = None) -> Document: ...
def load(path: str, schema_name: str, raw: bytes | None = None) -> Document:
    """The document at `path` (or in `raw`, its bytes read before), checked against its schema."""
    return parse(path, schema_name, read_bytes(path) if raw is None else raw)


def approved(session: Session | None) -> bool:
    """Frozen means approved: the session's status or its approval record says so, whatever
    plan.json's frozen_at holds."""
    if not session:
        return False
    return session.get("status") in APPROVED or bool(session.get("approval"))


def write_refusal(
    name: str,
    session: Session | None,
    plan: Plan | None,
    verdict: bool = False,
    asks: bool = False,
) -> str:
    """Why `name` may not be written now, or "" when it may. `verdict`: the transaction
    records the person's verdict, the one change a plan in review may take (its freeze).
    `asks`: it adds or answers the executor's questions to the person, the one change
    context.json takes while the approved plan executes (Transaction._check_asks)."""
    status = session["status"] if session else None
    if status in CLOSED and name != "session":
        return f"the session is {status}; nothing was written"
    if name == "context" and asks and status in (S.APPROVED, S.EXECUTING):
        return ""
    if name in PLANNING_FILES and status == S.REVIEW and not verdict:
        # The person reviews exactly what the round shows: no edit until their verdict.
        return (
            "the plan is in review, frozen until the person's verdict (plan review "
            "approve|reject, or the review page); nothing was written"
        )
    if name in PLANNING_FILES and approved(session):
        return f"the plan is frozen: approved (session status {status}); nothing was written"
    if name in PLANNING_FILES and plan and plan["frozen_at"] and not amending(session):
        return f"plan.json is frozen (frozen_at {plan['frozen_at']}); nothing was written"
    return ""


# The fix for plan.json edited outside `plan` commands (state/ops/restore_ops.py).
RESTORE_FIX = (
    "fix: plan restore, which puts back plan.json as plan last wrote it; to change an "
    "approved plan, after it: plan amend --reason '…'"
)


def amending(session: Session | None) -> bool:
    """Whether an amendment round is open: the plan is unfrozen for what it touches (the
    store checks every change of plan.json against it, Transaction._check_amendment)."""
    return open_round(session) is not None


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


class DocumentReader:
    """read and read_or_none, typed by document name, for Store and Transaction alike: each
    says how it loads a document (_load) and whether there is one (exists)."""

    def _load(self, name: DocName) -> Document:
        raise NotImplementedError

    def exists(self, name: DocName) -> bool:
        raise NotImplementedError

    @overload
    def read(self, name: Literal["plan"]) -> Plan: ...
    @overload
    def read(self, name: Literal["context"]) -> Context: ...
    @overload
    def read(self, name: Literal["session"]) -> Session: ...
    @overload
    def read(self, name: Literal["execution"]) -> Execution: ...
    @overload
    def read(self, name: QRName) -> QRReport: ...
    def read(self, name: DocName) -> Document:
        return self._load(name)

    @overload
    def read_or_none(self, name: Literal["plan"]) -> Plan | None: ...
    @overload
    def read_or_none(self, name: Literal["context"]) -> Context | None: ...
    @overload
    def read_or_none(self, name: Literal["session"]) -> Session | None: ...
    @overload
    def read_or_none(self, name: Literal["execution"]) -> Execution | None: ...
    @overload
    def read_or_none(self, name: QRName) -> QRReport | None: ...
    def read_or_none(self, name: DocName) -> Document | None:
        return self.read(name) if self.exists(name) else None


class Store(DocumentReader):
    """The files of one session directory."""

    def __init__(self, state_dir: str):
        self.dir = state_dir
        # What the engine keeps true before every commit (shared/status.py settle): state/
        # cannot know the workflows, so the layer above hands it in (docs/design.md).
        self.before_commit: Callable[[Transaction], None] | None = None

    def path(self, name: str) -> str:
        return os.path.join(self.dir, file_name(name))

    def exists(self, name: str) -> bool:
        return os.path.exists(self.path(name))

    def _load(self, name: DocName) -> Document:
        """The document, checked against its schema with defaults filled in."""
        return load(self.path(name), schema_name(name))

    def last_revision(self) -> str | None:
        """The newest plan revision's name (r7), or None before the first."""
        numbers = revision_numbers(self.dir)
        return f"r{numbers[-1]}" if numbers else None

    def history(self) -> list[Entry]:
        """The revisions (rev, ts, command, summary), oldest first; see state/storage/history.py."""
        return entries(self.dir)

    def revision(self, rev: str) -> Plan:
        """Plan revision `rev` (r1, r2, …) as history/ holds it."""
        if not REV.fullmatch(rev):
            raise UsageError(f"{rev!r}: not a revision name (r1, r2, …; see plan history)")
        path, doc = read_revision(self.dir, rev, dumps)
        if doc is not None:  # replayed from a snapshot and deltas
            problems = schema.check("plan", doc)
            if problems:
                raise DamagedFile(f"{path}: {problems[0]}; damaged, left as it is")
            plan: Plan = doc  # checked against the plan's schema
            return plan
        if not os.path.exists(path):
            raise UsageError(f"{path}: no revision {rev} (see plan history)")
        return load(path, "plan")

    def audit_lines(self) -> list[str]:
        """The audit log's lines (none before the first); DamagedFile (exit 3) naming it when
        it cannot be read. Bytes that are not UTF-8 are shown replaced, not refused: a log is
        read to find what happened, damage included."""
        raw = journal.read_if_any(os.path.join(self.dir, AUDIT_FILE)) or b""
        return [line for line in raw.decode(errors="replace").splitlines() if line.strip()]

    def audit(self, event: str, **fields: object) -> None:
        append_line(
            os.path.join(self.dir, AUDIT_FILE), {"ts": clock.now(), "event": event, **fields}
        )

    def recover(self) -> None:
        """Finish or undo what a killed writer left (journal, temp files), under the lock; a
        directory with nothing left over costs one listdir and takes no lock. A closed
        session's worktree that a kill left behind is removed (state/repo/worktree.py settle)."""
        # Imported here: a command that opens no session does not load the worktree module.
        from state.repo import worktree

        if journal.leftovers(self.dir):
            with locked(os.path.join(self.dir, LOCK_FILE), directory=True):
                journal.recover(self.dir)
        with contextlib.suppress(OSError, PreconditionFailed):  # said when the session closed
            worktree.settle(self.dir, wait=0)

    def transaction(self, command: str) -> Transaction:
        """`with store.transaction(command) as tx:` everything read and written inside holds
        the session's lock, and edits are committed when the block ends without an error."""
        if not os.path.isdir(self.dir):
            raise UsageError(f"{self.dir}: no such session directory")
        return Transaction(self, command)


class Transaction(DocumentReader):
    """Documents loaded under the lock; edited ones are validated and written on commit."""

    def __init__(self, store: Store, command: str):
        self.lock = locked(os.path.join(store.dir, LOCK_FILE), directory=True)
        self.store = store
        self.command = command
        self.docs: dict[str, Document] = {}  # by name: Plan, Session, … (documents.py)
        self.original: dict[str, bytes | None] = {}
        self.edited: set[str] = set()
        self.created: list[str] = []
        self.audit_fields: dict[str, object] = {}
        self.last_ids: dict[tuple[str, str], int] = {}
        self.next_argv: list[str] | None = None  # the command to run next, if the op says
        self.routed = False  # the op leads where the routing now says: settle() fills next_argv
        # By name (state/routes.py): the step to run next, and the step the session moves to;
        # the engine resolves both through the workflow tables before the commit.
        self.next_route: Route | None = None
        self.move_to: Route | None = None
        self.told: list[str] = []  # lines for the user (stderr), e.g. "the session is cancelled"
        self.files: dict[str, bytes] = {}  # other files of the session written on commit
        self.project: tuple[str, dict[str, bytes | None]] | None = None  # project files, too
        self.verdict = False  # records the verdict on a plan in review: may write its freeze
        self.asks = False  # adds or answers the executor's questions: may write context.json
        self.revise = False  # record plan.json as a revision even if its bytes are unchanged

    def __enter__(self) -> Transaction:
        self.lock.__enter__()
        try:
            journal.recover(self.store.dir)
        except BaseException:
            self.lock.__exit__()
            raise
        return self

    def __exit__(self, kind: object, error: object, *rest: object) -> None:
        try:
            if kind is None:
                self.commit()
            elif isinstance(error, PlannerError) and error.then_record is not None:
                self._record_only(error.then_record)
        finally:
            self.lock.__exit__()

    def _record_only(self, record: Callable[[Transaction], None]) -> None:
        """A refusal that asks the person (docs/design.md, "The executor asks the person"):
        what the command changed is dropped; the question lands through the same commit."""
        self.docs, self.original, self.edited, self.created = {}, {}, set(), []
        self.audit_fields, self.last_ids, self.files, self.project = {}, {}, {}, None
        self.told, self.next_argv, self.routed = [], None, False
        self.command = f"{self.command} (refused, asked)"
        record(self)
        self.commit()

    def _load(self, name: DocName) -> Document:
        """The document as this transaction sees it (read once, then the same object)."""
        if name not in self.docs:
            path = self.store.path(name)
            raw = read_bytes(path)
            self.docs[name] = parse(path, schema_name(name), raw)
            self.original[name] = raw
        return self.docs[name]

    def exists(self, name: DocName) -> bool:
        return name in self.docs or self.store.exists(name)

    @overload
    def edit(self, name: Literal["plan"]) -> Plan: ...
    @overload
    def edit(self, name: Literal["context"]) -> Context: ...
    @overload
    def edit(self, name: Literal["session"]) -> Session: ...
    @overload
    def edit(self, name: Literal["execution"]) -> Execution: ...
    @overload
    def edit(self, name: QRName) -> QRReport: ...
    def edit(self, name: DocName) -> Document:
        """The document, to be changed in place; refused (exit 4) when it may not be written."""
        doc = self.read(name)
        self._check_writable(name)
        self.edited.add(name)
        return doc

    def create(self, name: DocName, doc: D) -> D:
        """A new document (or a replacement for a missing one)."""
        self._create(name, doc)
        return doc

    def _create(self, name: DocName, doc: Document) -> None:
        if name not in self.docs and self.store.exists(name):
            raise UsageError(f"{self.store.path(name)}: already exists")
        self._check_writable(name)
        self.docs[name] = doc
        self.original.setdefault(name, None)
        self.edited.add(name)

    @overload
    def edit_or_create(self, name: Literal["execution"], fresh: Execution) -> Execution: ...
    @overload
    def edit_or_create(self, name: QRName, fresh: QRReport) -> QRReport: ...
    def edit_or_create(self, name: DocName, fresh: Document) -> Document:
        """The document to be changed in place, or `fresh` created when there is none."""
        if self.exists(name):
            return self.edit(name)
        self._create(name, fresh)
        return fresh

    def restore(self, name: Literal["plan"], doc: Plan, current: bytes) -> None:
        """plan.json put back as recorded (plan restore) over an edit made outside `plan`
        commands: no write refusal (a frozen plan takes its own content back); the commit
        still checks the freeze and the amendment round against it."""
        self.docs[name] = doc
        self.original[name] = current
        self.edited.add(name)

    def _check_writable(self, name: str) -> None:
        session = self.read_or_none("session") if name != "session" else None
        plan = self.read_or_none("plan") if name in PLANNING_FILES else None
        reason = write_refusal(name, session, plan, self.verdict, self.asks)
        if reason:
            raise Refused(f"{self.store.dir}: {reason}")

    def new_id(self, scope: str, prefix: str, items: Iterable[Identified]) -> str:
        """The next id for `prefix` in `scope` (a file name); the scan happens once per batch."""
        key = (scope, prefix)
        if key not in self.last_ids:
            self.last_ids[key] = highest(items, prefix)
        self.last_ids[key] += 1
        return format_id(prefix, self.last_ids[key])

    def put(self, file: str, data: bytes) -> None:
        """A file of the session that is not a document (plan.md, reconcile.json), written
        in the same commit."""
        self.files[file] = data

    def put_project(self, root: str, path: str, data: bytes | None) -> None:
        """A file of the project (a real path under `root`; None deletes it), written in the
        same commit: exec apply's files land with execution.json or not at all."""
        if self.project is None:
            self.project = (root, {})
        self.project[1][path] = data

    def tell(self, line: str) -> None:
        self.told.append(line)

    def note(self, **fields: object) -> None:
        """Extra fields for this change's audit line."""
        self.audit_fields.update(fields)

    def plan_revision(self) -> str | None:
        """The revision history/ holds plan.json as once this transaction commits: the next one
        when it changed plan.json (`plan apply --verdict`: a batch, then the gate that opens a
        review round on it), else the newest."""
        edited = "plan" in self.edited and dumps(self.docs["plan"]) != self.original.get("plan")
        return next_revision(self.store.dir) if edited else self.store.last_revision()

    def commit(self) -> None:
        if self.store.before_commit is not None and self.edited:
            self.store.before_commit(self)
        changed = {
            n: d for n in sorted(self.edited) if (d := dumps(self.docs[n])) != self.original.get(n)
        }
        if changed:
            self._validate(changed)
            # Validation filled in missing defaults: write the document as it will be read back.
            changed = {n: d for n in changed if (d := dumps(self.docs[n])) != self.original.get(n)}
        if self.revise and "plan" in self.docs and "plan" not in changed:
            changed["plan"] = dumps(self.docs["plan"])  # an edit made outside plan commands
        if not changed and not self.files and not self.project:
            return
        self._check_freeze()
        if "plan" in changed:
            self._check_amendment()
        if self.asks and "context" in changed:
            self._check_asks()
        files = {file_name(n): d for n, d in changed.items()}
        record: dict[str, object] = {"command": self.command, "files": sorted(changed)}
        if self.created:
            record["ids"] = self.created
        if "plan" in changed:
            rev = next_revision(self.store.dir)
            record["rev"] = rev
            name, data = revision_file(
                self.store.dir, rev, self.original.get("plan"), changed["plan"], self.read("plan")
            )
            files[os.path.join(HISTORY_DIR, name)] = data
            summary = ", ".join(self.created) if self.created else ""
            entry: Entry = {
                "rev": rev,
                "ts": clock.now(),
                "command": self.command,
                "summary": summary,
            }
            index = [*entries(self.store.dir), entry]
            files[os.path.join(HISTORY_DIR, HISTORY_INDEX)] = index_bytes(index)
            try:
                os.makedirs(os.path.join(self.store.dir, HISTORY_DIR), exist_ok=True)
            except OSError as e:
                raise WriteFailed(
                    f"{self.store.dir}/{HISTORY_DIR}: cannot be created ({e.strerror}); "
                    "nothing was written"
                ) from None
        files.update(self.files)
        line = {"ts": clock.now(), "event": "mutation", **record, **self.audit_fields}
        journal.commit(self.store.dir, files, AUDIT_FILE, line, self.project)
        if "session" in changed and self.read("session")["status"] in CLOSED:
            self._remove_worktree()

    def _remove_worktree(self) -> None:
        """The session is closed (completed, cancelled, failed): its worktree goes in the same
        command, after the commit (a kill in between leaves it for the next recover())."""
        from state.repo import worktree  # see recover()

        try:
            worktree.settle(self.store.dir)
        except (OSError, PreconditionFailed) as e:  # the session's record stands: say so
            self.tell(f"the session is closed but its worktree was not removed: {e}")

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
        milestones, the ones it reopens, new decisions (state/ops/amend_ops.scope_refusal)."""
        session = self.read_or_none("session")
        amendment = open_round(session)
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
            raw = self.original.get("plan")
            before = load(self.store.path("plan"), "plan", raw) if raw else None
            by_hand = before is not None and scope_refusal(amendment, found[1], before, execution)
            fix = f" ({RESTORE_FIX})" if by_hand else ""  # the file was edited outside plan
            raise Refused(f"{self.store.path('plan')}: {reason}; nothing was written{fix}")

    def _check_asks(self) -> None:
        """Once approved, context.json takes only the executor's questions (`about` set):
        anything else changed in it is refused, whatever the command meant to ask."""
        session = self.read_or_none("session")
        raw = self.original.get("context")
        if session is None or session["status"] not in (S.APPROVED, S.EXECUTING) or raw is None:
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

    def _validate(self, changed: dict[str, bytes]) -> None:
        # Imported when a change is validated: its patterns are compiled on import, a cost
        # every command's start would pay (docs/design.md, "Launcher fast path").
        from state.validation import validate

        findings: list[Finding] = []
        for name in changed:
            for problem in schema.check(schema_name(name), self.docs[name]):
                path, _, message = problem.partition(": ")
                findings.append(Finding(f"{file_name(name)}:{path}", message))
        if "plan" in changed:
            broken = validate.integrity(self.read("plan"), self._question_ids())
            if broken:
                self._refuse_if_damaged_before(broken)
            findings += broken
        if findings:
            raise PreconditionFailed(
                f"{self.command}: the change would leave the plan invalid; nothing was written",
                findings,
            )

    def _refuse_if_damaged_before(self, broken: list[Finding]) -> None:
        """A problem plan.json had before this command (an edit by hand: a duplicate id, a
        dangling reference) is damage to report with the file's path (exit 3), not a fault
        of the change."""
        from state.validation import validate  # see _validate

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
