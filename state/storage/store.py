"""The one way state files are read and written.

lock → recover → read → apply → validate → one journaled commit (documents, history revision,
index, audit line: all or none, state/storage/journal.py). A change that fails validation raises
before anything is written; a damaged file is never written.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
from typing import overload

from state import clock, routes, vocab
from state.errors import (
    DamagedFile,
    Finding,
    PlannerError,
    PreconditionFailed,
    UsageError,
    WriteFailed,
)
from state.storage import journal, schema
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
    sha256,
)
from state.storage.ids import Identified, format_id, highest
from state.storage.lock import locked
from state.vocab import Phase

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any, Literal, Self, TypeVar

    from state.storage.documents import Context, Execution, Plan, QRReport, Session

    QRName = Literal[
        "qr-plan-design", "qr-plan-code", "qr-plan-docs", "qr-impl-code", "qr-impl-docs"
    ]
    DocName = Literal["plan", "context", "session", "execution"] | QRName
    Document = Plan | Context | Session | Execution | QRReport
    D = TypeVar("D", Plan, Context, Session, Execution, QRReport)

LOCK_FILE = ".lock"
AUDIT_FILE = "audit.jsonl"
# Lines "<file> <sha256 of its bytes> <schema.fingerprint>": the large documents as the commit
# that wrote them checked them (docs/design.md, "Document encoding").
CHECKED = ".checked"


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
# compact: json's indented encoder is pure Python, ~4x the C one's time on a 3 MB plan
# (docs/design.md, "Document encoding").
INDENT_UP_TO = 256 * 1024
DIGITS = bytes.maketrans(b"0123456789", b"0000000000")


def dumps(doc: Any) -> bytes:
    compact = _compact(doc)
    if _chars(compact) < INDENT_UP_TO:  # its text and a newline: at most INDENT_UP_TO characters
        return _utf8(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return _utf8(compact) + b"\n"


def _compact(value: Any) -> bytes | str:
    """`json.dumps(value, ensure_ascii=False, separators=(",", ":"))` as UTF-8, from orjson
    (~10x faster, the same bytes for every value a document holds: tests/state/test_encoding.py);
    json's text where orjson refuses the value (an int beyond 64 bits, a lone surrogate: _utf8
    then says so as before)."""
    import orjson  # on use: commands that write no document do not load it

    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _chars(data: bytes | str) -> int:
    """The length of `_compact`'s text in characters, as the size rule counts (ASCII bytes,
    most of a plan, are counted without decoding them: a commit counts every member)."""
    if isinstance(data, str) or data.isascii():
        return len(data)
    return len(data.decode())


def _utf8(text: bytes | str) -> bytes:
    if isinstance(text, bytes):
        return text
    try:
        return text.encode()
    except UnicodeEncodeError as e:  # a lone surrogate that came through an argument
        raise UsageError(
            f"not valid Unicode: {text[max(0, e.start - 20) : e.start]!r} is followed by a "
            "lone surrogate; nothing was written"
        ) from None


def _member(key: str, value: Any) -> bytes | str:
    """`"key":value` as `_compact` writes it in an object."""
    return _compact({key: value})[1:-1]


def loads(raw: bytes) -> Any:
    """`json.loads(raw)`; a large document through orjson (~2x faster) where it reads the same:
    no run of 19 digits (orjson reads an int beyond 64 bits as a float) and no error of any kind
    (json then raises its own, with line and column: tests/state/test_encoding.py)."""
    if len(raw) > INDENT_UP_TO and b"0" * 19 not in raw.translate(DIGITS):
        import orjson  # see _compact

        with contextlib.suppress(Exception):  # json says what is wrong, or reads it
            return orjson.loads(raw)
    return json.loads(raw)


class Encoded:
    """A document's bytes as `dumps` writes them, encoded once, member by member when it is
    large, and, when `raw` (its bytes as read, compact) differs from them in some top-level
    members only, those members' values in `raw` (`old`): the commit checks, and history's
    delta diffs, only those (docs/design.md, "Document encoding")."""

    def __init__(self, doc: Any, raw: bytes | None):
        self.doc = doc
        self.old: dict[str, Any] | None = None  # None: compare the whole documents
        self.pieces: dict[str, bytes] = {}
        self._encode(doc.keys() if isinstance(doc, dict) else ())
        if self.pieces and raw is not None and raw != self.data:
            self.old = _changed_members(raw, self.pieces)

    def _encode(self, keys: Iterable[str]) -> None:
        """(Re-)encode these members; the whole document when it is small or not an object."""
        texts = {k: _member(k, self.doc[k]) for k in keys}
        if self.old is None and sum(map(_chars, texts.values())) + len(texts) + 2 <= INDENT_UP_TO:
            self.pieces = {}  # as dumps: small, so indented
            self.data = dumps(self.doc)
            return
        kept = self.pieces if self.old is not None else {}  # else every member is in texts
        self.pieces = {**kept, **{k: _utf8(t) for k, t in texts.items()}}
        self.data = b"{" + b",".join(self.pieces.values()) + b"}\n"

    def check(self, schema_name: str) -> list[str]:
        """The schema's problems of what changed; defaults it filled are encoded in."""
        problems, filled = schema.check_filled(schema_name, self.doc, self.old)
        if filled:
            self._encode(self.doc.keys() if self.old is None else self.old)
        return problems


def _changed_members(raw: bytes, pieces: dict[str, bytes]) -> dict[str, Any] | None:
    """The members of the object in `raw` whose bytes differ from `pieces` (the new document's,
    by key, in order), as `raw` has them; None when `raw` is not those members with only some
    values changed (keys added, removed or moved, other spacing, damage): compare wholly."""
    keys, parts = list(pieces), list(pieces.values())
    if raw[:1] != b"{" or raw[-2:] != b"}\n":
        return None
    first, start = 0, 1  # the members equal from the front: raw[1:start - 1]
    while first < len(parts) and raw.startswith(parts[first] + b",", start):
        start += len(parts[first]) + 1
        first += 1
    last, end = len(parts), len(raw) - 2  # from the back: raw[end + 1:-2]
    while last > first and end - len(parts[last - 1]) > start:
        cut = end - len(parts[last - 1])
        if raw[cut - 1 : cut] != b"," or not raw.startswith(parts[last - 1], cut):
            break
        end = cut - 1
        last -= 1
    try:  # what lies between: those members, or not this shape after all
        old = json.loads(b"{" + raw[start:end] + b"}")
    except (ValueError, RecursionError):
        return None
    if not isinstance(old, dict) or list(old) != keys[first:last]:
        return None
    changed = {k: v for k, v in old.items() if _utf8(_member(k, v)) != pieces[k]}
    return changed or None


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
        doc = loads(raw)
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
    if schema_name == vocab.Document.SESSION:
        routes.upgrade(doc)  # routes an older planner stored as command lines
    # Bytes a commit wrote after checking them against this very schema are not walked again.
    trusted = len(raw) > INDENT_UP_TO and checked_line(path, schema_name, raw) in checked_lines(
        os.path.dirname(path)
    )
    problems = [] if trusted else schema.check(schema_name, doc)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise DamagedFile(f"{path}: {problems[0]}{more}; damaged, left as it is")
    checked: Document = doc  # the schema `schema_name` says which document it is
    return checked


def checked_line(path: str, schema_name: str, data: bytes) -> bytes:
    sha = sha256(data)
    return f"{os.path.basename(path)} {sha} {schema.fingerprint(schema_name)}".encode()


def checked_lines(directory: str) -> list[bytes]:
    """The lines of CHECKED in `directory` (none when it cannot be read: walk the document)."""
    try:
        with open(os.path.join(directory, CHECKED), "rb") as f:
            return f.read().splitlines()
    except OSError:
        return []


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


class DocumentStore(DocumentReader):
    """The files of one session directory: documents, history, audit log. It knows storage
    only; the session's rules wrap it (state/rules/session_store.py)."""

    def __init__(self, state_dir: str):
        self.dir = state_dir

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
        directory with nothing left over costs one listdir and takes no lock."""
        if journal.leftovers(self.dir):
            with locked(os.path.join(self.dir, LOCK_FILE), directory=True):
                journal.recover(self.dir)

    def transaction(self, command: str) -> DocumentTransaction:
        """`with store.transaction(command) as tx:` everything read and written inside holds
        the session's lock, and edits are committed when the block ends without an error."""
        if not os.path.isdir(self.dir):
            raise UsageError(f"{self.dir}: no such session directory")
        return DocumentTransaction(self, command)


class DocumentTransaction(DocumentReader):
    """Documents loaded under the lock; edited ones are validated and written on commit. What
    may be written when is the session's rules' (state/rules/session_store.py): they override
    `_check_writable`, `_prepare`, `_findings`, `_check` and `_committed`."""

    def __init__(self, store: DocumentStore, command: str):
        self.lock = locked(os.path.join(store.dir, LOCK_FILE), directory=True)
        self.store = store
        self.command = command
        self.revise = False  # record plan.json as a revision even if its bytes are unchanged
        self.frozen = False  # a large document's objects are out of the collector's walks
        self._fresh()

    def _fresh(self) -> None:
        """What the command changed: nothing yet (also after a refusal that asks, _record_only)."""
        self.docs: dict[str, Document] = {}  # by name: Plan, Session, … (documents.py)
        self.original: dict[str, bytes | None] = {}
        self.edited: set[str] = set()
        self.created: list[str] = []
        self.audit_fields: dict[str, object] = {}
        self.last_ids: dict[tuple[str, str], int] = {}
        self.files: dict[str, bytes] = {}  # other files of the session written on commit
        self.project: tuple[str, dict[str, bytes | None]] | None = None  # project files, too
        self.problems: dict[str, list[str]] = {}  # the schema's, of each changed document
        self.encoded: dict[str, Encoded] = {}  # each changed document, as commit encoded it

    def __enter__(self) -> Self:
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
            if self.frozen:  # back into the collector's walks: none is kept out for good
                gc.unfreeze()

    def _record_only(self, record: Callable[[Any], None]) -> None:
        """A refusal that asks the person (docs/design.md, "The executor asks the person"):
        what the command changed is dropped; the question lands through the same commit."""
        self._fresh()
        self.command = f"{self.command} (refused, asked)"
        record(self)
        self.commit()

    def _load(self, name: DocName) -> Document:
        """The document as this transaction sees it (read once, then the same object)."""
        if name not in self.docs:
            path = self.store.path(name)
            raw = read_bytes(path)
            # A large document is ~200k containers and no cycle: out of the cyclic collector's
            # walks until the transaction ends (docs/design.md, "Document encoding").
            large = len(raw) > INDENT_UP_TO and gc.isenabled()
            if large:
                gc.disable()
            try:
                self.docs[name] = parse(path, schema_name(name), raw)
            finally:
                if large:
                    self.frozen = True
                    gc.freeze()
                    gc.enable()
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
        """Refused (exit 4) when `name` may not be written now: the rules say (none here)."""

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
        if self.edited:
            self._prepare()
        encoded = {
            n: e
            for n in sorted(self.edited)
            if (e := Encoded(self.docs[n], self.original.get(n))).data != self.original.get(n)
        }
        changed = {n: e.data for n, e in encoded.items()}
        self.encoded = encoded
        if changed:
            self.problems = {n: e.check(schema_name(n)) for n, e in encoded.items()}
            self._validate(changed)
            # Validation filled in missing defaults: write the document as it will be read back.
            changed = {n: e.data for n, e in encoded.items() if e.data != self.original.get(n)}
        if self.revise and "plan" in self.docs and "plan" not in changed:
            changed["plan"] = dumps(self.docs["plan"])  # an edit made outside plan commands
        if not changed and not self.files and not self.project:
            return
        self._check(changed)
        files = {file_name(n): d for n, d in changed.items()}
        self._record_checked(files, {n: e for n, e in encoded.items() if n in changed})
        record: dict[str, object] = {"command": self.command, "files": sorted(changed)}
        if self.created:
            record["ids"] = self.created
        if "plan" in changed:
            record["rev"] = self._revision(files, changed["plan"], encoded.get("plan"))
        files.update(self.files)
        line = {"ts": clock.now(), "event": "mutation", **record, **self.audit_fields}
        journal.commit(self.store.dir, files, AUDIT_FILE, line, self.project)
        self._committed(changed)

    def _revision(self, files: dict[str, bytes], plan: bytes, encoded: Encoded | None) -> str:
        """The name of plan.json's next revision in history/, its file and the index that lists
        it added to `files` (state/storage/history.py)."""
        rev = next_revision(self.store.dir)
        old = encoded.old if encoded else None
        name, data = revision_file(
            self.store.dir, rev, self.original.get("plan"), plan, self.read("plan"), old
        )
        files[os.path.join(HISTORY_DIR, name)] = data
        summary = ", ".join(self.created)
        entry: Entry = {"rev": rev, "ts": clock.now(), "command": self.command, "summary": summary}
        index = [*entries(self.store.dir), entry]
        files[os.path.join(HISTORY_DIR, HISTORY_INDEX)] = index_bytes(index)
        try:
            os.makedirs(os.path.join(self.store.dir, HISTORY_DIR), exist_ok=True)
        except OSError as e:
            raise WriteFailed(
                f"{self.store.dir}/{HISTORY_DIR}: cannot be created ({e.strerror}); "
                "nothing was written"
            ) from None
        return rev

    def _record_checked(self, files: dict[str, bytes], written: dict[str, Encoded]) -> None:
        """CHECKED, when it changes: a line for each large document this commit checked and
        writes, the lines of the others kept (the next read trusts them and skips the walk)."""
        before = checked_lines(self.store.dir)
        names = {file_name(n).encode() for n in written}
        lines = [line for line in before if line.split(b" ")[0] not in names]
        lines += [x for n, e in written.items() if e.pieces for x in self._checked_lines(n, e)]
        if lines != before:
            files[CHECKED] = b"".join(line + b"\n" for line in lines)

    def _checked_lines(self, name: str, encoded: Encoded) -> list[bytes]:
        """CHECKED's lines for a large document this commit checked (the rules add theirs)."""
        return [checked_line(self.store.path(name), schema_name(name), encoded.data)]

    def _prepare(self) -> None:
        """Before a commit that edits documents: what the layers above keep true (none here)."""

    def _check(self, changed: dict[str, bytes]) -> None:
        """After validation, before anything is written: the rules' last word (none here)."""

    def _committed(self, changed: dict[str, bytes]) -> None:
        """After the commit landed (none here)."""

    def _validate(self, changed: dict[str, bytes]) -> None:
        findings = self._findings(changed)
        if findings:
            raise PreconditionFailed(
                f"{self.command}: the change would leave the plan invalid; nothing was written",
                findings,
            )

    def _findings(self, changed: dict[str, bytes]) -> list[Finding]:
        """What the changed documents' schemas said of them at the commit (the rules add the
        plan's integrity)."""
        findings: list[Finding] = []
        for name in changed:
            for problem in self.problems[name]:
                path, _, message = problem.partition(": ")
                findings.append(Finding(f"{file_name(name)}:{path}", message))
        return findings
