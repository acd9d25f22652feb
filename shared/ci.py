"""`plan validate` and `plan verify` for CI: which sessions and plan files to check, the
checks, and one result for the run (findings located by file, line and column).

Nothing here prints; cli/ci.py formats a Run as text, JSON or GitHub workflow commands.
Exit code of a run, worst wins: 0 all good < 2 usage (a path that is no session or plan,
no session found, conflicting flags) < 3 a plan invalid, damaged, not verified.
"""

from __future__ import annotations

import json
import os

from state.errors import DamagedFile, Finding, PlannerError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

APPROVED_STATUSES = ("approved", "executing", "completed")
NOT_A_PLAN = ("session", "context", "execution")


class Problem:
    """A Finding placed in a file: level, JSON path, message, fix, file, line and column."""

    __slots__ = ("col", "file", "fix", "level", "line", "message", "path")

    def __init__(
        self,
        message: str,
        path: str = "",
        fix: str = "",
        level: str = "error",
        file: str = "",
        line: int | None = None,
        col: int | None = None,
    ):
        self.message, self.path, self.fix, self.level = message, path, fix, level
        self.file, self.line, self.col = file, line, col

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("level", "path", "message", "fix")} | {
            "file": self.file or None,
            "line": self.line,
            "col": self.col,
        }

    def text(self) -> str:
        return Finding(self.path, self.message, self.fix).line()


class Target:
    """One session or plan file of the run and what was found in it."""

    def __init__(self, path: str, kind: str, status: str | None = None):
        self.path, self.kind, self.status = path, kind, status  # kind: session | plan
        self.problems: list[Problem] = []
        self.judged = True  # verify: False for a session that is not approved
        self.usage = False  # the path is no session or plan (exit 2, not 3)

    @property
    def ok(self) -> bool:
        return not any(p.level == "error" for p in self.problems)

    def exit_code(self) -> int:
        if self.ok:
            return 0
        return UsageError.exit_code if self.usage else 3

    def add(self, problem: Problem) -> None:
        problem.file = problem.file or self.path
        self.problems.append(problem)


class Run:
    """The whole run: its targets and the problems that belong to none (no session found)."""

    def __init__(self, command: str, root: str, phase: str | None = None):
        self.command, self.root, self.phase = command, root, phase
        self.targets: list[Target] = []
        self.problems: list[Problem] = []
        self.usage_code = 0

    def fail(self, message: str, fix: str = "") -> Run:
        self.problems.append(Problem(message, fix=fix))
        self.usage_code = UsageError.exit_code
        return self

    @property
    def exit_code(self) -> int:
        return max([self.usage_code, *(t.exit_code() for t in self.targets)])

    def relative(self, path: str) -> str:
        """A path as GitHub and people read it: relative to the repository root, with /."""
        rel = os.path.relpath(path, self.root)
        return path if rel.startswith("..") else rel.replace(os.sep, "/")

    def as_dict(self) -> dict[str, Any]:
        def problem(p: Problem) -> dict[str, Any]:
            d = p.as_dict()
            d["file"] = self.relative(p.file) if p.file else None
            return d

        return {
            "command": self.command,
            "ok": self.exit_code == 0,
            "exit_code": self.exit_code,
            "phase": self.phase,
            "findings": [problem(p) for p in self.problems],
            "targets": [
                {
                    "path": self.relative(t.path),
                    "kind": t.kind,
                    "status": t.status,
                    "judged": t.judged,
                    "ok": t.ok,
                    "findings": [problem(p) for p in t.problems],
                }
                for t in self.targets
            ],
        }


# ---------------------------------------------------------------- which targets


def _is_session(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "session.json")) or os.path.isfile(
        os.path.join(directory, "plan.json")
    )


def sessions_in(home: str) -> list[str]:
    """Every session directory under a .planner/ directory, sorted by name."""
    if not os.path.isdir(home):
        return []
    found = (os.path.join(home, name) for name in sorted(os.listdir(home)))
    return [d for d in found if os.path.isdir(d) and _is_session(d)]


def collect(run: Run, paths: list[str], every: bool, state_dir: str | None) -> list[Target]:
    """The targets named by PATHs, --all, or else the active session (problems go to run)."""
    from shared.paths import PLANNER_DIR

    home = os.path.join(run.root, PLANNER_DIR)
    targets: list[Target] = []
    for raw in paths:
        path = os.path.abspath(raw)
        if os.path.isdir(path) and not _is_session(path) and sessions_in(path):
            targets += [Target(d, "session") for d in sessions_in(path)]  # a .planner/ dir
        elif os.path.isdir(path):
            targets.append(Target(path, "session"))
        else:
            targets.append(Target(path, "plan"))
    if every:
        targets += [Target(d, "session") for d in sessions_in(home)]
        if not sessions_in(home):
            run.fail(f"no sessions in {home}", "planner --step 1 --task TEXT")
    if not paths and not every:
        found = _active(run, state_dir, home)
        if found:
            targets.append(Target(found, "session"))
        elif not run.problems:
            count = len(sessions_in(home))
            if count > 1:
                run.fail(
                    f"no active session: {count} sessions in {run.relative(home)}/; "
                    "pass a path or --all",
                    "plan validate --all",
                )
            elif count == 1:
                targets += [Target(d, "session") for d in sessions_in(home)]
            else:
                run.fail(
                    "no session found: start one with `planner --step 1 --task TEXT` "
                    "or pass a path",
                    "planner --step 1 --task TEXT",
                )
    unique: dict[str, Target] = {}
    for t in targets:
        unique.setdefault(t.path, t)  # a session named twice is checked once
    run.targets += unique.values()
    return list(unique.values())


def _active(run: Run, state_dir: str | None, home: str) -> str | None:
    """The session --state-dir, $PLANNER_STATE_DIR or .planner/ACTIVE names; a damaged ACTIVE,
    or one naming no session directory, is a problem of the run (exit 3) naming the file."""
    from shared.paths import ACTIVE_FILE, STATE_DIR_ENV, resolve_state_dir

    try:
        found = resolve_state_dir(state_dir, strict=True)
    except DamagedFile as e:  # not readable, not UTF-8, or outside .planner/
        run.fail(e.message).usage_code = e.exit_code
        return None
    if found and not os.path.isdir(found):
        source = (
            "--state-dir"
            if state_dir
            else f"${STATE_DIR_ENV}"
            if os.environ.get(STATE_DIR_ENV)
            else os.path.join(home, ACTIVE_FILE)
        )
        run.fail(f"{source}: names {found}, which is not a session directory", "plan resume ID")
        run.usage_code = DamagedFile.exit_code
        return None
    return found


# ---------------------------------------------------------------- reading, located


class Document:
    """A state file read for CI: its text, the document, and where its problems are."""

    def __init__(self, path: str, text: str, doc: Any):
        self.path, self.text, self.doc = path, text, doc
        self.keys = set(doc) if isinstance(doc, dict) else set()  # before defaults are filled

    def place(self, problem: Problem) -> Problem:
        from state.jsonpos import locate, pointer_of

        problem.file = self.path
        problem.line, problem.col = locate(self.text, pointer_of(self.doc, problem.path))
        return problem


def read_document(target: Target, path: str, schema: str) -> Document | None:
    """The file checked against its schema; every problem goes to target (None if unusable)."""
    from state import schema as schemas

    if not os.path.exists(path):
        target.add(Problem(f"{os.path.basename(path)}: not found", file=path))
        target.usage = target.usage or path == target.path
        return None
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        target.add(Problem(f"cannot be read ({e.strerror})", file=path))
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        target.add(Problem(f"not valid UTF-8 ({e.reason} at byte {e.start}); damaged", file=path))
        return None
    if not text.strip():
        target.add(Problem("empty file; damaged", file=path, line=1, col=1))
        return None
    try:
        doc = json.loads(text)
    except ValueError as e:
        line, col = getattr(e, "lineno", None), getattr(e, "colno", None)
        at = f" at line {line} column {col}" if line else ""
        reason = str(getattr(e, "msg", e)).removesuffix(" at")
        message = f"not valid JSON ({reason}{at}); damaged, left as it is"
        target.add(Problem(message, "", "", "error", path, line, col))
        return None
    except RecursionError:
        target.add(Problem("not valid JSON (nested too deep); damaged", file=path))
        return None
    document = Document(path, text, doc)
    for problem in schemas.check(schema, doc):
        where, _, message = problem.partition(": ")
        target.add(document.place(Problem(message, "" if where == "(document)" else where)))
    return document


def _plan_file(target: Target) -> str:
    return os.path.join(target.path, "plan.json") if target.kind == "session" else target.path


def _not_a_plan(target: Target, document: Document | None) -> bool:
    """True (with a clear problem) when a file given as a plan is another state file or
    a JSON that is no plan at all."""
    name = os.path.basename(target.path)
    stem = name.removesuffix(".json")
    if stem in NOT_A_PLAN or stem.startswith("qr-"):
        target.add(
            Problem(
                f"{name} is a session's {stem} record, not a plan: pass the session "
                f"directory ({os.path.dirname(target.path)}) or its plan.json",
                fix=f"plan validate {os.path.dirname(target.path)}",
            )
        )
        target.usage = True
        return True
    if document is not None and not {"plan_id", "milestones"} & document.keys:
        target.problems = []
        target.add(
            Problem("not a plan: a plan.json has plan_id, milestones and planning_context", "")
        )
        target.usage = True
        return True
    return False


# ---------------------------------------------------------------- validate


def validate(paths: list[str], every: bool, state_dir: str | None, phase: str | None) -> Run:
    """`plan validate`: structure (every schema error), references, meaning, a phase."""
    from shared.paths import project_root

    run = Run("validate", project_root(), phase)
    for target in collect(run, paths, every, state_dir):
        if target.kind == "plan" and _not_a_plan(target, None):
            continue
        document = read_document(target, _plan_file(target), "plan")
        if target.kind == "plan" and _not_a_plan(target, document):
            continue
        _status(target)
        if document is not None:
            _plan_checks(target, document, phase)
    return run


def _status(target: Target) -> dict[str, Any] | None:
    """The session record of a session target (its status noted), or None."""
    from state import store

    if target.kind != "session":
        return None
    path = os.path.join(target.path, "session.json")
    if not os.path.exists(path):
        return None
    try:
        session = store.load(path, "session")
    except PlannerError:  # damaged: verify reports it; validate checks the plan only
        return None
    target.status = session["status"]
    return session


def _plan_checks(target: Target, document: Document, phase: str | None) -> None:
    from state import validate as checks

    questions = _question_ids(target)
    root = os.path.dirname(os.path.dirname(target.path)) if target.kind == "session" else ""
    try:
        findings = checks.integrity(document.doc, questions) + checks.meaning(document.doc)
        if phase:
            base = _base_commit(target)
            findings += checks.completeness(document.doc, phase, root or os.getcwd(), base)
    except (KeyError, TypeError, AttributeError, IndexError):
        if target.ok:
            raise
        return  # the structure is too broken for the reference checks: schema errors said so
    for f in findings:
        target.add(document.place(Problem(f.message, f.path, f.fix, f.level)))


def _base_commit(target: Target) -> str | None:
    """The session's base commit, checked (values from files are data, §3), or None."""
    from state import gitinfo

    session = _status(target)
    base = session.get("base_commit") if session else None
    return base if gitinfo.is_commit_id(base) else None


def _question_ids(target: Target) -> set[str] | None:
    from state import store

    directory = target.path if target.kind == "session" else os.path.dirname(target.path)
    path = os.path.join(directory, "context.json")
    try:
        context = store.load(path, "context")
    except PlannerError:  # missing or damaged: question references are not checked
        return None
    return {q["id"] for q in context["questions"]}


# ---------------------------------------------------------------- verify


def verify(
    paths: list[str],
    every: bool,
    state_dir: str | None,
    require_approved: bool = False,
    require_signature: bool = False,
) -> Run:
    """`plan verify`: approved sessions still have the approved content (and signature)."""
    from shared.paths import project_root

    run = Run("verify", project_root())
    for target in collect(run, paths, every, state_dir):
        if target.kind == "plan":  # a plan file: its session is the directory it is in
            target.path, target.kind = os.path.dirname(target.path), "session"
        session_doc = read_document(target, os.path.join(target.path, "session.json"), "session")
        if session_doc is None or not target.ok:
            continue
        session = session_doc.doc
        target.status = session["status"]
        if session["status"] not in APPROVED_STATUSES:
            target.judged = False
            level = "error" if require_approved else "notice"
            problem = Problem(
                f"not approved (status {session['status']}): nothing to verify yet",
                "status",
                "",
                level,
            )
            target.add(session_doc.place(problem))
            continue
        plan_doc = read_document(target, os.path.join(target.path, "plan.json"), "plan")
        if plan_doc is None or not target.ok:
            continue
        _approval_checks(target, plan_doc, session_doc, require_signature, run.root)
    return run


def _approval_checks(
    target: Target, plan: Document, session: Document, require_signature: bool, root: str
) -> None:
    from shared.plan_md import for_session
    from state import signing
    from state.approval import verify as check_approval

    render = for_session(lambda name: _session_file(target.path, name, session.doc))
    for f in check_approval(plan.doc, session.doc, target.path, render):
        document = session if f.path.startswith("session.json") else plan
        target.add(document.place(Problem(f.message, f.path, f.fix, f.level)))
    if not target.ok:
        return
    approval = session.doc.get("approval") or {}
    for message, fix in signing.check(session.doc, approval, root, require_signature):
        target.add(session.place(Problem(message, "approval.signature", fix)))


def _session_file(directory: str, name: str, session: dict[str, Any]) -> dict[str, Any] | None:
    """A file of the session beside plan.json, read as the store reads it, for rendering
    plan.md: None when it is missing or damaged (validate reports the damage)."""
    from state import store

    if name == "session":
        return session
    path = os.path.join(directory, f"{name}.json")
    if not os.path.exists(path):
        return None
    try:
        return store.load(path, store.schema_name(name))
    except PlannerError:
        return None
