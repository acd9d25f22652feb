"""`plan validate` and `plan verify` for CI: the run's model (problems located by file, line
and column, each with a rule id), the rules, and which sessions and plan files to check.
Nothing here prints (cli/ci_report.py does); a run exits with its worst target's code
(docs/design.md, "CI: validate, verify and what they report").
"""

from __future__ import annotations

import os
from typing import TypedDict

from shared.paths import ACTIVE_FILE, PLANNER_DIR, STATE_DIR_ENV, resolve_state_dir
from state.errors import DamagedFile, Finding, UsageError
from state.project import git_root

# Every kind of problem: its rule id (SARIF ruleId, JSON "rule", GitHub title) and summary.
RULES: dict[str, str] = {
    "usage": "The command line or the session to check is wrong (exit 2).",
    "nothing-to-check": "There is no session to check (no .planner/ or no session in it).",
    "not-found": "A path named on the command line, or a file of a session, does not exist.",
    "not-a-plan": "A path is not a session directory or a plan file (exit 2).",
    "damaged-file": "A state file is not readable JSON (bytes, encoding, syntax).",
    "schema": "A state file does not match its JSON Schema (plan schema NAME).",
    "duplicate-id": "Two items of one kind have the same id.",
    "dangling-reference": "A reference names an item that does not exist.",
    "self-reference": "An item refers to itself.",
    "dependency-cycle": "Milestones depend on each other in a cycle.",
    "placeholder": "A placeholder (TBD, TODO, FIXME, XXX, ???) is left in the plan's text.",
    "empty-text": "An item's text is empty.",
    "risk-without-mitigation": "A known risk has no mitigation.",
    "incomplete": "The plan lacks what the phase (--phase) needs.",
    "diff-does-not-apply": "A planned diff does not apply to the file it changes.",
    "questions-unchecked": "Warning: no context.json, so question references were not checked.",
    "no-approval": "The session is approved but has no approval record, or is not frozen.",
    "content-changed": "plan.json changed after approval (its sha256 is not the approved one).",
    "review-mismatch": "The last review round does not record the approval.",
    "plan-md-mismatch": "plan.md is not plan.json rendered (plan.md is never edited).",
    "not-approved": "verify: the session is not approved yet (an error with --require-approved).",
    "not-checked": "verify: the session was cancelled or failed; there is nothing to verify.",
    "unsigned": "The approval is not signed (an error with --require-signature).",
    "signature-invalid": "The approval's signature does not verify.",
    "signer-untrusted": "The signing key is not trusted by git's settings.",
    "signer-mismatch": "Warning: the signer is not the approver (error: --require-signer-match).",
    "signature-old-form": "Warning: a version 1 signature, which does not cover who and when.",
    "overlapping-plans": "Warning: two open sessions plan changes to the same file or function.",
    "same-file-same-wave": "Warning: two milestones of one wave change one file (no --depends).",
    "stale-overview": "Warning: decisions changed after a rejection, the overview did not.",
}
# What to do about each: SARIF's rule help, which code scanning shows beside an alert.
HELP: dict[str, str] = {
    "usage": "Fix the command line as the message says; `plan validate --help` lists the options.",
    "nothing-to-check": "Start a session (planner --step 1) or name its directory.",
    "not-found": "Name an existing session directory or plan file; restore a missing file "
    "from git.",
    "not-a-plan": "Name a directory under .planner/ that holds session.json, or a plan.json.",
    "damaged-file": "Restore the file from git (git checkout -- FILE) or from "
    "`plan history --show REV`; planner never rewrites a damaged file.",
    "schema": "Change the field through the plan commands the message names; "
    "`plan schema NAME` prints the schema.",
    "duplicate-id": "Ids are given by plan commands: restore the file from git, then make the "
    "change with plan commands.",
    "dangling-reference": "Add the item it names, or point the reference at an existing one "
    "(plan ... set).",
    "self-reference": "Point the reference at another item (plan ... set).",
    "dependency-cycle": "Remove one dependency of the cycle: plan milestone set M-n --depends.",
    "placeholder": "Replace the placeholder with the real text (plan ... set).",
    "empty-text": "Give the item its text (plan ... set).",
    "risk-without-mitigation": "Add a mitigation: plan risk set R-n --mitigation TEXT.",
    "incomplete": "Add what the phase needs, as the message lists it.",
    "diff-does-not-apply": "Capture the change again from the worktree (plan change capture) "
    "or rebase the plan (plan rebase).",
    "questions-unchecked": "Commit the session's context.json too.",
    "no-approval": "Review and approve the plan again (planner step 11; plan review approve).",
    "content-changed": "Restore the approved plan.json from git, or amend the plan (plan amend) "
    "and approve it again.",
    "review-mismatch": "Review and approve the plan again (plan review approve).",
    "plan-md-mismatch": "Render it again: plan render --full -o STATE_DIR/plan.md.",
    "not-approved": "Approve the plan (plan review approve), or drop --require-approved.",
    "not-checked": "Nothing to do: a cancelled or failed session is not verified.",
    "unsigned": "Approve with --sign (plan review approve --sign), or drop --require-signature.",
    "signature-invalid": "Approve again with --sign; the signature does not match the approval.",
    "signer-untrusted": "Add the signer's key to git's allowed signers (gpg.ssh."
    "allowedSignersFile) or the gpg keyring.",
    "signer-mismatch": "Sign as the approver, or drop --require-signer-match.",
    "signature-old-form": "Approve again with --sign to sign who and when too.",
    "overlapping-plans": "Agree which session goes first, or plan around the shared file "
    "(plan list shows the pairs).",
    "same-file-same-wave": "Order the two milestones: plan milestone set M-n --depends M-m.",
    "stale-overview": "Re-read the overview; plan overview set --approach A where it is stale.",
}


class Problem:
    """A Finding placed in a file: rule, level, JSON path, message, fix, file, and where:
    line and column, and where the value ends (end_line, end_col: the column after it)."""

    __slots__ = (
        *("col", "end_col", "end_line", "file", "fix"),
        *("level", "line", "message", "path", "rule"),
    )

    def __init__(
        self,
        message: str,
        path: str = "",
        fix: str = "",
        level: str = "error",
        file: str = "",
        line: int | None = None,
        col: int | None = None,
        rule: str = "",
    ):
        self.message, self.path, self.fix, self.level = message, path, fix, level
        self.file, self.line, self.col = file, line, col
        self.end_line: int | None = None
        self.end_col: int | None = None
        self.rule = rule or "schema"

    @classmethod
    def of(cls, finding: Finding) -> Problem:
        problem = cls(finding.message, finding.path, finding.fix, finding.level)
        problem.rule = finding.rule or problem.rule
        return problem

    def as_dict(self) -> ProblemRecord:
        return {
            "rule": self.rule,
            "level": self.level,
            "path": self.path,
            "message": self.message,
            "fix": self.fix,
            "file": self.file or None,
            "line": self.line,
            "col": self.col,
            "end_line": self.end_line,
            "end_col": self.end_col,
        }

    def text(self) -> str:
        return Finding(self.path, self.message, self.fix).line()


class ProblemRecord(TypedDict):
    """A problem in `--format json` (and the SARIF and GitHub forms' source)."""

    rule: str
    level: str
    path: str
    message: str
    fix: str
    file: str | None
    line: int | None
    col: int | None
    end_line: int | None
    end_col: int | None


class TargetRecord(TypedDict):
    path: str
    kind: str
    status: str | None
    judged: bool
    ok: bool
    signer: dict[str, str] | None
    findings: list[ProblemRecord]


class RunRecord(TypedDict):
    """A whole run in `--format json`."""

    command: str
    ok: bool
    exit_code: int
    phase: str | None
    strict: bool
    findings: list[ProblemRecord]
    targets: list[TargetRecord]


class Target:
    """One session or plan file of the run, what was found in it and, for verify, who
    signed its approval."""

    def __init__(self, path: str, kind: str, status: str | None = None, given: str = ""):
        self.path, self.kind, self.status = path, kind, status  # kind: session | plan
        self.given = given or path  # as the person typed it, for messages
        self.problems: list[Problem] = []
        self.judged = True  # verify: False for a session that is not approved
        self.usage = False  # the path is no session or plan (exit 2, not 3)
        self.strict = False  # warnings fail it too
        self.signer: dict[str, str] | None = None

    @property
    def ok(self) -> bool:
        failing = ("error", "warning") if self.strict else ("error",)
        return not any(p.level in failing for p in self.problems)

    def exit_code(self) -> int:
        if self.ok:
            return 0
        return UsageError.exit_code if self.usage else 3

    def add(self, problem: Problem) -> Problem:
        problem.file = problem.file or self.path
        self.problems.append(problem)
        return problem


class Run:
    """The whole run: its targets and the problems that belong to none (no session found)."""

    def __init__(self, command: str, root: str, phase: str | None = None, strict: bool = False):
        self.command, self.root, self.phase, self.strict = command, root, phase, strict
        self.targets: list[Target] = []
        self.problems: list[Problem] = []
        self.usage_code = 0

    def fail(self, message: str, fix: str = "", rule: str = "usage") -> Run:
        self.problems.append(Problem(message, fix=fix, rule=rule))
        self.usage_code = max(self.usage_code, UsageError.exit_code)
        return self

    def warn(self, message: str, rule: str) -> Run:
        """A warning of the run itself (nothing to check): it never changes the exit code."""
        self.problems.append(Problem(message, level="warning", rule=rule))
        return self

    @property
    def exit_code(self) -> int:
        return max([self.usage_code, *(t.exit_code() for t in self.targets)])

    def relative(self, path: str) -> str:
        """A path as GitHub and people read it: relative to the root of the repository that
        holds it (wherever the command runs from), with /; absolute outside any."""
        root = repository_of(path) or self.root
        rel = os.path.relpath(path, root)
        return path if rel.startswith("..") else rel.replace(os.sep, "/")

    def as_dict(self) -> RunRecord:
        def problem(p: Problem) -> ProblemRecord:
            d = p.as_dict()
            d["file"] = self.relative(p.file) if p.file else None
            return d

        return {
            "command": self.command,
            "ok": self.exit_code == 0,
            "exit_code": self.exit_code,
            "phase": self.phase,
            "strict": self.strict,
            "findings": [problem(p) for p in self.problems],
            "targets": [
                {
                    "path": self.relative(t.path),
                    "kind": t.kind,
                    "status": t.status,
                    "judged": t.judged,
                    "ok": t.ok,
                    "signer": t.signer,
                    "findings": [problem(p) for p in t.problems],
                }
                for t in self.targets
            ],
        }


def repository_of(path: str) -> str | None:
    """The repository a state file belongs to: the directory holding the `.planner/` it is
    under, else the nearest directory above it with a `.git` entry; None if neither."""
    here = os.path.abspath(path)
    parts = here.split(os.sep)
    if PLANNER_DIR in parts[:-1]:
        index = len(parts) - 1 - parts[::-1].index(PLANNER_DIR)
        return os.sep.join(parts[:index]) or os.sep
    return git_root(here)


# ---------------------------------------------------------------- which targets


def _is_session(directory: str) -> bool:
    return any(os.path.isfile(os.path.join(directory, n)) for n in ("session.json", "plan.json"))


def sessions_in(home: str) -> list[str]:
    """Every session directory under a .planner/ directory, sorted by name."""
    if not os.path.isdir(home):
        return []
    found = (os.path.join(home, name) for name in sorted(os.listdir(home)))
    return [d for d in found if os.path.isdir(d) and _is_session(d)]


def _named(raw: str) -> list[Target]:
    """The targets one PATH names: a session, a .planner/ directory's sessions, a plan file;
    a path that is none of these is a target with a usage problem (exit 2), named whole."""
    path = os.path.abspath(raw)
    if os.path.isdir(path) and _is_session(path):
        return [Target(path, "session", given=raw)]
    if os.path.isdir(path) and sessions_in(path):
        return [Target(d, "session") for d in sessions_in(path)]  # a .planner/ directory
    target = Target(path, "plan" if os.path.isfile(path) else "session", given=raw)
    if not os.path.exists(path):
        message, rule = f"{raw}: not found", "not-found"
    elif os.path.isdir(path):
        message = f"{raw}: not a session or plan (no session.json or plan.json in it)"
        rule = "not-a-plan"
    elif not path.endswith(".json"):
        message, rule = f"{raw}: not a session or plan", "not-a-plan"
    else:
        return [target]
    target.add(Problem(message, fix="plan list (the sessions), or --all", rule=rule))
    target.usage = True
    return [target]


def collect(run: Run, paths: list[str], every: bool, state_dir: str | None) -> list[Target]:
    """The targets named by PATHs, --all, or else the active session (problems go to run)."""
    home = os.path.join(run.root, PLANNER_DIR)
    targets = [t for raw in paths for t in _named(raw)]
    nothing = f"nothing to check: no session in {run.relative(home)}/"
    if every:
        targets += [Target(d, "session") for d in sessions_in(home)]
        if not targets:
            run.warn(nothing, "nothing-to-check")
    if not paths and not every:
        found = _active(run, state_dir, home)
        if found:
            targets.append(Target(found, "session"))
        elif not run.problems:
            sessions = sessions_in(home)
            if len(sessions) > 1:
                run.fail(
                    f"no active session: {len(sessions)} sessions in {run.relative(home)}/; "
                    "pass a path or --all",
                    f"plan {run.command} --all",
                )
            elif sessions:
                targets.append(Target(sessions[0], "session"))
            else:
                run.warn(nothing, "nothing-to-check")
    unique: dict[str, Target] = {}
    for t in targets:
        t.strict = run.strict
        unique.setdefault(t.path, t)  # a session named twice is checked once
    run.targets += unique.values()
    return list(unique.values())


def _active(run: Run, state_dir: str | None, home: str) -> str | None:
    """The session --state-dir, $PLANNER_STATE_DIR or .planner/ACTIVE names; a damaged ACTIVE,
    or one naming no session directory, is a problem of the run (exit 3) naming the file."""
    try:
        found = resolve_state_dir(state_dir)
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
