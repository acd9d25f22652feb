"""What the executor asks the person (docs/design.md, "The executor asks the person"):
a significant deviation (continue / amend / stop) and a milestone whose files another planner
session applied since this plan's base commit (yes / no).

The questions live in context.json beside discovery's, with `about` naming what they are
about, and are answered the same way (`plan question answer`, `plan ask`). Every write goes
through the caller's transaction.
"""

from __future__ import annotations

import configparser
import json
import re
import tomllib

from state.errors import Refused
from state.ops import plan_ops
from state.ops.exec_apply import (
    SESSION_TRAILER,  # every executor commit names its session
    _planned_before,
    gitinfo_dir,
    milestone_paths,
    project_git,
)
from state.ops.exec_ops import add_deviation, commits_of, run_of
from state.ops.question_ops import new_question
from state.project import session_project
from state.repo import gitinfo
from state.repo import worktree as wt
from state.vocab import QuestionKind, RunStatus

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Literal

    from state.rules.session_store import Transaction
    from state.storage.documents import Deviation, Milestone, Question, Session

CONTINUE, AMEND, STOP = "continue", "amend", "stop"
DEVIATION_OPTIONS = (
    (CONTINUE, "go on with the deviation as it is"),
    (AMEND, "change the plan first (plan amend), then go on"),
    (STOP, "stop the executor here"),
)


# ---------------------------------------------------------------- questions


def _question(
    tx: Transaction,
    about: str,
    kind: Literal[QuestionKind.CHOICE, QuestionKind.YES_NO],
    text: str,
    why: str,
) -> str:
    """A new executor question in context.json (the transaction may write it: `tx.asks`),
    answered as discovery's are (state/ops/question_ops.py)."""
    tx.asks = True
    answers = DEVIATION_OPTIONS if kind == QuestionKind.CHOICE else (("yes", ""), ("no", ""))
    context = tx.edit("context")
    q = new_question(
        tx.new_id("context", "Q", context["questions"]),
        "scope",
        kind,
        text,
        why,
        [{"label": label, "description": d} for label, d in answers],
        about=about,
    )
    context["questions"].append(q)
    return q["id"]


def question_of(tx: Transaction, qid: str | None) -> Question | None:
    context = tx.read_or_none("context") if qid is not None else None
    if context is None:
        return None
    return next((q for q in context["questions"] if q["id"] == qid), None)


def answered_since_approval(q: Question, session: Session) -> bool:
    """Whether the answer still stands: an approval after it (an amendment re-approved)
    settles an "amend"."""
    approval = session["approval"]
    return not (q["answered_at"] and approval and approval["at"] > q["answered_at"])


# ---------------------------------------------------------------- where the commands ask
# `plan exec …` (cli/commands/execution.py) calls these around state/ops/exec_ops.py and
# exec_apply.py, in the same transaction: those modules stay as they were, and this one
# reads them without either importing it.


def before_start(tx: Transaction, milestone: str) -> None:
    """`plan exec start`: a milestone not started or applied yet is checked for other
    sessions' commits."""
    run = run_of(tx, milestone)
    if run["status"] == RunStatus.PENDING and not run["applied_at"]:
        check_other_sessions(tx, plan_ops.find(tx.read("plan"), milestone, "M"))


def before_apply(tx: Transaction, milestone: str) -> None:
    """`plan exec apply`: before the project is written for the milestone."""
    if not run_of(tx, milestone)["applied_at"]:
        check_other_sessions(tx, plan_ops.find(tx.read("plan"), milestone, "M"))


def after_deviation(
    tx: Transaction, deviation_id: str, *, drops_acceptance: list[str], adds_dependency: list[str]
) -> None:
    """`plan exec deviation`: what it declares significant, and what the milestone's commits
    show that no deviation names yet, go on it; either asks the person."""
    item = next(d for d in tx.edit("execution")["deviations"] if d["id"] == deviation_id)
    reasons = [f"drops an acceptance criterion: {t}" for t in drops_acceptance]
    reasons += [f"adds a dependency: {t}" for t in adds_dependency]
    mark_significant(tx, item, reasons)
    record_detected(tx, item["milestone"], into=item)


def after_commit(tx: Transaction, milestone: str) -> None:
    """`plan exec commit` (made, or found by its trailers): what the commit shows significant
    goes on the first deviation it carries, else on a new one."""
    execution = tx.read("execution")
    run = next((r for r in execution["milestones"] if r["id"] == milestone), None)
    if run is None or run["commit"] is None:
        return
    last = (run["fix_commits"] or [run["commit"]])[-1]
    carried = [
        d for d in execution["deviations"] if d["milestone"] == milestone and d["commit"] == last
    ]
    record_detected(tx, milestone, into=carried[0] if carried else None)


# ---------------------------------------------------------------- significant deviations


def mark_significant(tx: Transaction, deviation: Deviation, reasons: list[str]) -> Deviation:
    """Add the reasons a deviation is significant; the first one asks the person."""
    new = [r for r in reasons if r not in deviation["significant"]]
    if not new:
        return deviation
    deviation["significant"] += new
    if deviation["question"] is None:
        text = (
            f"{deviation['id']} ({deviation['milestone']}) departs from the approved plan: "
            f"{deviation['description']}. Continue, amend the plan, or stop?"
        )
        why = "it is significant: " + "; ".join(deviation["significant"])
        deviation["question"] = _question(tx, deviation["id"], QuestionKind.CHOICE, text, why)
        tx.tell(
            f"{deviation['id']} is significant ({'; '.join(new)}): "
            f"{deviation['question']} asks the person: continue, amend or stop"
        )
    else:
        tx.tell(f"{deviation['id']} is significant also because: {'; '.join(new)}")
    return deviation


def new_deviation(
    tx: Transaction, milestone: str, description: str, commit: str | None = None
) -> Deviation:
    item = add_deviation(tx, milestone, description, commit)
    tx.created.append(item["id"])
    return item


def unrecorded(tx: Transaction, milestone: str) -> list[str]:
    """What git shows significant about the milestone's commits and no deviation of it
    names yet."""
    known = {
        r
        for d in tx.read("execution")["deviations"]
        if d["milestone"] == milestone
        for r in d["significant"]
    }
    return [r for r in detect(tx, milestone) if r not in known]


def record_detected(tx: Transaction, milestone: str, into: Deviation | None = None) -> None:
    """Mark what `unrecorded` finds on `into` (a deviation of the milestone), else on a new
    deviation that says it was found, not declared."""
    reasons = unrecorded(tx, milestone)
    if not reasons:
        return
    if into is None:
        run = next(r for r in tx.read("execution")["milestones"] if r["id"] == milestone)
        into = new_deviation(
            tx,
            milestone,
            "found in its commit, not recorded as a deviation: " + "; ".join(reasons),
            run["fix_commits"][-1] if run["fix_commits"] else run["commit"],
        )
    mark_significant(tx, into, reasons)


def detect(tx: Transaction, milestone: str) -> list[str]:
    """The significant facts git shows about the milestone's commits: files outside its
    planned files, and dependencies its manifests gained that the plan does not add."""
    execution = tx.read("execution")
    run = next((r for r in execution["milestones"] if r["id"] == milestone), None)
    commits = commits_of(run)
    if not commits:
        return []
    plan, session = tx.read("plan"), tx.read("session")
    project = session_project(tx.store.dir)
    repo = gitinfo_dir(project)
    planned = set(milestone_paths(plan_ops.find(plan, milestone, "M"), project))
    touched: list[str] = []
    tree = ("diff-tree", "--no-commit-id", "--name-only", "-r", "-z", "--root", "--end-of-options")
    for sha in commits:
        sha = gitinfo.commit_id(sha, f"execution.json:{milestone}.commit")
        names = project_git(repo, project, *tree, sha).decode("utf-8", "surrogateescape")
        # .planner/ holds the sessions' own records
        touched += [n for n in names.split("\0") if n and not n.startswith(".planner/")]
    touched = list(dict.fromkeys(touched))
    reasons = []
    outside = sorted(set(touched) - planned)
    if outside:
        reasons.append(f"changes files outside {milestone}: {', '.join(outside)}")
    manifests = [p for p in touched if is_manifest(p)]
    if manifests:
        start, pairs = session["base_commit"], wt.ordered_changes(plan)
        intended = _planned_before(plan, start, project, pairs, "")  # every planned diff
        for path in manifests:
            now = wt.run(repo, "show", f"{commits[-1]}:{path}", work_tree=project, cwd=project)
            text = now.stdout.decode("utf-8", "surrogateescape") if not now.returncode else ""
            if path in intended:
                base = intended[path] or ""
            else:
                read = wt.base_reader(project, wt.base_of(session, "session.json:base_commit"))
                base = read([path]).get(path) or ""
            added = sorted(dependencies(path, text) - dependencies(path, base))
            if added:
                reasons.append(f"adds a dependency the plan does not: {path}: {', '.join(added)}")
    return reasons


MANIFEST_NAMES = frozenset(
    {
        "pyproject.toml",
        "setup.cfg",
        "setup.py",
        "Pipfile",
        "package.json",
        "Cargo.toml",
        "go.mod",
        "Gemfile",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "composer.json",
    }
)


def is_manifest(path: str) -> bool:
    """A file that declares the project's dependencies."""
    name = path.rsplit("/", 1)[-1]
    return name in MANIFEST_NAMES or bool(re.fullmatch(r"requirements[\w.-]*\.(txt|in)", name))


def dependencies(path: str, text: str) -> set[str]:
    """What `text` declares as dependencies, one entry each; for a format not read here (or
    text that does not parse), its non-blank lines, so any added line counts."""
    name = path.rsplit("/", 1)[-1]
    try:
        if name in ("pyproject.toml", "Cargo.toml", "Pipfile"):
            return _toml_dependencies(tomllib.loads(text))
        if name == "package.json":
            data = json.loads(text or "{}")
            return {
                f"{k}@{v}"
                for key in (
                    "dependencies",
                    "devDependencies",
                    "peerDependencies",
                    "optionalDependencies",
                )
                for k, v in (data.get(key) or {}).items()
            }
        if name == "setup.cfg":
            parser = configparser.ConfigParser()
            parser.read_string(text)
            found = set()
            for section, key in (
                ("options", "install_requires"),
                ("options", "setup_requires"),
                ("options", "tests_require"),
            ):
                found |= _lines(parser.get(section, key, fallback=""))
            if parser.has_section("options.extras_require"):
                for _, value in parser.items("options.extras_require"):
                    found |= _lines(value)
            return found
        if name == "go.mod":
            return {
                m.group(1)
                for m in re.finditer(r"^\s*(?:require\s+)?([\w./~-]+\s+v\S+)", text, re.M)
            }
    except (ValueError, configparser.Error, AttributeError):
        pass
    return _lines(text)


def _lines(text: str) -> set[str]:
    return {line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")}


TOML_TABLES = ("dependencies", "dev-dependencies", "build-dependencies", "packages", "dev-packages")


def _toml_dependencies(data: Any, prefix: str = "") -> set[str]:
    """Every entry of a dependency table or list at any depth: pyproject's
    project.dependencies, optional-dependencies, dependency-groups, build-system.requires,
    poetry's tables; Cargo's [*dependencies] (targets and workspace too); Pipfile's packages."""
    found: set[str] = set()
    if not isinstance(data, dict):
        return found
    for key, value in data.items():
        where = f"{prefix}{key}"
        deps = key in TOML_TABLES or key in ("requires", "optional-dependencies")
        deps = deps or where.startswith("dependency-groups")
        if deps and isinstance(value, list):
            found |= {f"{where}: {v}" for v in value if isinstance(v, str)}
        elif deps and isinstance(value, dict):
            for k, v in value.items():
                if isinstance(v, list):
                    found |= {f"{where}.{k}: {x}" for x in v if isinstance(x, str)}
                else:
                    found.add(f"{where}: {k} {json.dumps(v, sort_keys=True)}")
        elif isinstance(value, dict):
            found |= _toml_dependencies(value, where + ".")
    return found


# ---------------------------------------------------------------- other sessions' commits


def other_sessions(tx: Transaction, milestone: Milestone) -> list[tuple[str, str, list[str]]]:
    """Commits since this plan's base commit, on HEAD's history, that touch the milestone's
    files and whose Planner-Session trailer names another session: (commit, session, files)."""
    session = tx.read("session")
    base = tx.read("execution")["base_commit"] or session["base_commit"]
    if not base:
        return []
    base = gitinfo.commit_id(base, "execution.json:base_commit")
    project = session_project(tx.store.dir)
    paths = milestone_paths(milestone, project)
    if not paths:
        return []
    repo = gitinfo_dir(project)
    done = wt.run(
        repo,
        "log",
        "-z",
        "--name-only",
        f"--format=%x01%H%n%(trailers:key={SESSION_TRAILER},valueonly)",
        "--end-of-options",
        "HEAD",
        f"^{base}",
        "--",
        *paths,
        work_tree=project,
        cwd=project,
    )
    if done.returncode:
        return []
    found = []
    for entry in done.stdout.decode("utf-8", "surrogateescape").split("\x01")[1:]:
        head, _, rest = entry.partition("\n")
        sha = head.strip()
        lines = [x.strip() for x in rest.replace("\0", "\n").splitlines() if x.strip()]
        owners = [x for x in lines if x not in paths]
        files = [x for x in lines if x in paths]
        for owner in owners:
            if owner != session["id"]:
                found.append((sha, owner, files))
                break
    return found


def check_other_sessions(tx: Transaction, milestone: Milestone) -> None:
    """Refuse (exit 4) a milestone whose files another planner session applied since the base
    commit, unless the person agreed; the first refusal records the yes/no question."""
    found = other_sessions(tx, milestone)
    if not found:
        return
    mid = milestone["id"]
    run = next(r for r in tx.read("execution")["milestones"] if r["id"] == mid)
    q = question_of(tx, run["overlap_question"])
    if q is not None and q["answer"] == "yes":
        return
    sessions = sorted({s for _, s, _ in found})
    listed = "; ".join(f"{sha[:12]} by {s} ({', '.join(files)})" for sha, s, files in found)
    head = (
        f"{mid}: its files were changed since this plan's base commit by another planner "
        f"session ({', '.join(sessions)}; this session is {tx.read('session')['id']}): "
        f"{listed}; nothing was applied"
    )
    if q is not None and q["answer"] == "no":
        raise Refused(f"{head}; the person answered no to {q['id']}")
    if q is not None:
        raise Refused(f"{head}; {q['id']} waits for the person's answer: {_how(q['id'])}")

    def ask(tx: Transaction) -> None:
        text = (
            f"{mid} {milestone['name']}: another planner session ({', '.join(sessions)}) "
            f"committed to its files since this plan's base commit: {listed}. "
            "Apply it anyway (a three-way merge decides; a conflict still refuses)?"
        )
        why = "the other session's work could be overwritten or duplicated"
        qid = _question(tx, mid, QuestionKind.YES_NO, text, why)
        run_of(tx, mid)["overlap_question"] = qid

    # the id `ask` will give it: the refusal's record starts afresh (Transaction._record_only)
    qid = tx.new_id("context", "Q", tx.read("context")["questions"])
    refusal = Refused(f"{head}; {qid} asks the person whether to apply it: {_how(qid)}")
    refusal.then_record = ask
    raise refusal


def _how(qid: str) -> str:
    return (
        f"ask the person (`plan ask` in their terminal), then record their answer: "
        f"plan question answer {qid} yes|no"
    )
