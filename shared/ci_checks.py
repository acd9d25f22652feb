"""The checks of `plan validate` and `plan verify` on the targets shared/ci_run.py collects:
every file of a session read against its schema and located, the plan's own checks, the
approval's integrity, and (verify) its signature (docs/design.md, "CI: validate, verify and
what they report").
"""

from __future__ import annotations

import json
import os
from typing import Literal, cast

from shared.ci_run import Problem, Run, Target, collect
from shared.paths import project_root
from state.errors import Finding, PlannerError
from state.project import project_root as session_project_root
from state.storage import schema as schemas
from state.storage.jsonpos import line_col, pointer_of, positions
from state.validation import validate as checks
from state.vocab import APPROVED, ENDED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from shared.plan_md import Reader
    from state.storage.documents import Context, Plan, QRReport, Session
    from state.storage.store import QRName
    from state.validation.overlap import Overlap, Side

NOT_A_PLAN = ("session", "context", "execution")


class Document:
    """A state file read for CI: its text, the document, and where its problems are."""

    def __init__(self, path: str, text: str, doc: Any):
        self.path, self.text, self.doc = path, text, doc
        self.keys = set(doc) if isinstance(doc, dict) else set()  # before defaults are filled
        self.clean = True  # no schema problem
        self._starts: dict[Any, int] | None = None
        self._ends: dict[Any, int] = {}

    def place(self, problem: Problem) -> Problem:
        """Set the problem's file and position: where its JSON path starts and, when the
        path is in the text itself, where its value ends (else its nearest ancestor's start)."""
        if self._starts is None:
            self._starts = positions(self.text, self._ends)
        problem.file = self.path
        pointer = pointer_of(self.doc, problem.path)
        for n in range(len(pointer), -1, -1):
            if pointer[:n] in self._starts:
                problem.line, problem.col = line_col(self.text, self._starts[pointer[:n]])
                if n == len(pointer):
                    problem.end_line, problem.end_col = line_col(self.text, self._ends[pointer])
                break
        return problem


def read_document(target: Target, path: str, schema: str) -> Document | None:
    """The file checked against its schema; every problem goes to target (None if unusable)."""
    if not os.path.exists(path):
        name = os.path.basename(path) if path != target.path else target.given
        target.add(Problem(f"{name}: not found", file=path, rule="not-found"))
        target.usage = target.usage or path == target.path
        return None
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        target.add(Problem(f"cannot be read ({e.strerror})", file=path, rule="damaged-file"))
        return None
    damaged = "damaged-file"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        message = f"not valid UTF-8 ({e.reason} at byte {e.start}); damaged"
        target.add(Problem(message, file=path, rule=damaged))
        return None
    if not text.strip():
        target.add(Problem("empty file; damaged", file=path, line=1, col=1, rule=damaged))
        return None
    try:
        doc = json.loads(text)
    except ValueError as e:
        line, col = getattr(e, "lineno", None), getattr(e, "colno", None)
        at = f" at line {line} column {col}" if line else ""
        reason = str(getattr(e, "msg", e)).removesuffix(" at")
        message = f"not valid JSON ({reason}{at}); damaged, left as it is"
        target.add(Problem(message, "", "", "error", path, line, col, damaged))
        return None
    except RecursionError:
        target.add(Problem("not valid JSON (nested too deep); damaged", file=path, rule=damaged))
        return None
    document = Document(path, text, doc)
    for problem in schemas.check(schema, doc):
        where, _, message = problem.partition(": ")
        target.add(document.place(Problem(message, "" if where == "(document)" else where)))
        document.clean = False
    return document


def _not_a_plan(target: Target, document: Document | None) -> bool:
    """True (with a clear problem) when a file given as a plan is another state file or
    a JSON that is no plan at all."""
    name = os.path.basename(target.path)
    stem = name.removesuffix(".json")
    if stem in NOT_A_PLAN or stem.startswith("qr-"):
        target.add(
            Problem(
                f"{name} is a session's {stem} record, not a plan: pass the session "
                f"directory ({os.path.dirname(target.given) or '.'}) or its plan.json",
                fix=f"plan validate {os.path.dirname(target.given) or '.'}",
                rule="not-a-plan",
            )
        )
        target.usage = True
        return True
    if document is not None and not {"plan_id", "milestones"} & document.keys:
        target.problems = []
        message = f"{target.given}: not a session or plan (a plan.json has plan_id and milestones)"
        target.add(Problem(message, rule="not-a-plan"))
        target.usage = True
        return True
    return False


def _session_document(target: Target) -> Document | None:
    """session.json of a session target, checked (None: no session.json, or unusable)."""
    path = os.path.join(target.path, "session.json")
    if target.kind != "session" or not os.path.exists(path):
        return None
    document = read_document(target, path, "session")
    if document is not None and document.clean and isinstance(document.doc, dict):
        target.status = document.doc.get("status")
        return document
    return None


# ---------------------------------------------------------------- validate


def validate(
    paths: list[str], every: bool, state_dir: str | None, phase: str | None, strict: bool = False
) -> Run:
    """`plan validate`: every file's structure (every schema error), the plan's references,
    meaning and a phase's completeness, and an approved plan's integrity."""
    run = Run("validate", project_root(), phase, strict)
    plans: dict[str, Document] = {}
    for target in collect(run, paths, every, state_dir):
        if target.usage or (target.kind == "plan" and _not_a_plan(target, None)):
            continue
        session = _session_document(target)
        path = os.path.join(target.path, "plan.json") if target.kind == "session" else target.path
        document = read_document(target, path, "plan")
        if document is None or (target.kind == "plan" and _not_a_plan(target, document)):
            continue
        plans[target.path] = document
        _plan_checks(target, document, phase, session)
        if session is not None and document.clean and target.status in APPROVED:
            _approval_checks(target, document, session)
    if every:
        _overlap_checks(run, plans)
    return run


def _overlap_checks(run: Run, plans: dict[str, Document]) -> None:
    """--all: a warning per overlap of open sessions, on the later session's plan.json where
    it names the file (on the earlier one's when the later is in another work tree); a
    session of another work tree skipped as damaged is a notice of the run."""
    from state.validation import overlap  # ~15 ms: only --all looks for overlaps

    found = overlap.find(run.root)
    targets = {os.path.realpath(t.path): t for t in run.targets if t.kind == "session"}
    for o in found.overlaps:
        for side in (o.second, o.first):
            target = targets.get(os.path.realpath(side.state_dir))
            if target is not None and target.path in plans:
                other = o.other(side.session)
                problem = Problem(
                    _overlap_message(o, side, other),
                    side.where,
                    "agree which session goes first (plan list marks both)",
                    "warning",
                    rule="overlapping-plans",
                )
                target.add(plans[target.path].place(problem))
                break
    for note in found.notes:
        if os.path.realpath(note.state_dir) not in targets:  # validate reports its own
            message = f"session {note.session} not checked for overlaps: {note.message}"
            run.problems.append(Problem(message, level="notice", rule="overlapping-plans"))


def _overlap_message(o: Overlap, side: Side, other: Side) -> str:
    def ids(s: Side) -> str:
        return " ".join([*s.milestones, *s.intents])

    there = "" if other.worktree == side.worktree else f" (in work tree {other.worktree})"
    return (
        f"sessions {side.session} and {other.session}{there} both plan changes to "
        f"{o.what()}: {ids(side)} here, {ids(other)} there"
    )


def _plan_checks(
    target: Target, document: Document, phase: str | None, session: Document | None
) -> None:
    questions = _question_ids(target)
    root = os.path.dirname(os.path.dirname(target.path)) if target.kind == "session" else ""
    try:
        findings = checks.integrity(document.doc, questions) + checks.meaning(document.doc)
        if target.status not in APPROVED | ENDED:  # at plan time: fixable
            findings += checks.same_file_same_wave(document.doc)
        if session is not None and document.clean:
            findings += _stale_overview(target, session.doc, document.doc)
        if phase:
            base = _base_commit(session)
            findings += checks.completeness(document.doc, phase, root or os.getcwd(), base)
    except (KeyError, TypeError, AttributeError, IndexError):
        if document.clean:
            raise
        return  # the structure is too broken for the reference checks: schema errors said so
    for f in findings:
        target.add(document.place(Problem.of(f)))


def _stale_overview(target: Target, session: Session, plan: Plan) -> list[Finding]:
    """A warning in the rework after a rejection: decisions or choices changed, the overview
    did not (state/rules/session_store.stale_overview_since)."""
    from state.rules.session_store import OVERVIEW_FIX, stale_overview_since
    from state.storage.store import DocumentStore

    said = stale_overview_since(DocumentStore(target.path), session, plan)
    return (
        [Finding("overview", said, OVERVIEW_FIX, "warning", rule="stale-overview")] if said else []
    )


def _base_commit(session: Document | None) -> str | None:
    """The session's base commit, checked (values from files are data), or None."""
    from state.repo import gitinfo  # only --phase needs the base commit

    base = session.doc.get("base_commit") if session else None
    return base if gitinfo.is_commit_id(base) else None


def _question_ids(target: Target) -> set[str] | None:
    """The question ids of the session's context.json (checked as a file when it is a
    session's); None, with a warning for a session, when there is none to check against."""
    directory = target.path if target.kind == "session" else os.path.dirname(target.path)
    path = os.path.join(directory, "context.json")
    if target.kind != "session":
        from state.storage import store  # ~25 ms: a plan file on its own only

        try:
            return {q["id"] for q in store.load(path, "context")["questions"]}
        except PlannerError:  # a plan file on its own: references are not checked
            return None
    if not os.path.exists(path):
        message = "no context.json: question references are not checked"
        target.add(Problem(message, level="warning", file=path, rule="questions-unchecked"))
        return None
    document = read_document(target, path, "context")
    if document is None or not document.clean:
        return None
    return {q["id"] for q in document.doc["questions"]}


# ---------------------------------------------------------------- verify


def verify(
    paths: list[str],
    every: bool,
    state_dir: str | None,
    require_approved: bool = False,
    require_signature: bool = False,
    require_signer_match: bool = False,
    strict: bool = False,
) -> Run:
    """`plan verify`: approved sessions still have the approved content (and signature)."""
    run = Run("verify", project_root(), strict=strict)
    for target in collect(run, paths, every, state_dir):
        if target.usage:
            continue
        if target.kind == "plan":  # a plan file: its session is the directory it is in
            target.path, target.kind = os.path.dirname(target.path), "session"
        session_doc = read_document(target, os.path.join(target.path, "session.json"), "session")
        if session_doc is None or not target.ok:
            continue
        status = target.status = session_doc.doc["status"]
        if status not in APPROVED:
            target.judged = False
            if status in ENDED:
                message, rule, level = f"{status}: nothing to verify", "not-checked", "notice"
            else:
                message = f"not approved (status {status}): nothing to verify yet"
                rule, level = "not-approved", "error" if require_approved else "notice"
            target.add(session_doc.place(Problem(message, "status", "", level, rule=rule)))
            continue
        plan_doc = read_document(target, os.path.join(target.path, "plan.json"), "plan")
        if plan_doc is None or not target.ok:
            continue
        _approval_checks(target, plan_doc, session_doc)
        if target.ok:
            _signature_checks(target, session_doc, require_signature, require_signer_match)
    return run


def _approval_checks(target: Target, plan: Document, session: Document) -> None:
    """plan.json, the review record and plan.md are what the approval says."""
    # jinja2 and the approval's checks: only for an approved session
    from shared.plan_md import for_session
    from state.rules.approval import verify as check_approval

    render = for_session(session_files(target.path))
    for f in check_approval(plan.doc, session.doc, target.path, render):
        if f.path == "plan.md":
            problem = Problem.of(f)
            problem.file, problem.line = os.path.join(target.path, "plan.md"), f.line_no
            target.add(problem)
            continue
        document = session if f.path.startswith("session.json") else plan
        target.add(document.place(Problem.of(f)))


def _signature_checks(
    target: Target, session: Document, required: bool, signer_must_match: bool
) -> None:
    from state.repo import signing  # ~20 ms: only `plan verify` checks signatures

    approval = session.doc.get("approval")
    if not approval:  # the approval's own checks reported it missing (no-approval)
        return
    root = session_project_root(target.path)
    checked = signing.check(session.doc, approval, root, required, signer_must_match)
    for f in checked.findings:
        target.add(session.place(Problem.of(f)))
    if checked.principals or checked.fingerprint:
        target.signer = {
            "principal": checked.signer,
            "fingerprint": checked.fingerprint,
            "format": checked.format,
        }


def session_files(directory: str) -> Reader:
    """The session's files beside plan.json, read as the store reads them, for rendering
    plan.md: None when one is missing or damaged (validate reports the damage)."""
    from state.rules.session_store import Store

    store = Store(directory)

    def read(name: Literal["context", "session"] | QRName) -> Context | Session | QRReport | None:
        try:
            return store.read_or_none(name)
        except PlannerError:
            return None

    return cast("Reader", read)  # Reader's overloads narrow this union by name
