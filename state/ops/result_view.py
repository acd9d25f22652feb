"""What the person reviews after execution, assembled once for `plan result show` and the
review page's result view: per milestone the planned diffs beside its commits' diffs, the
tests that ran, the deviations with their reasons, and the reconcile table."""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import NotRequired, TypedDict

from state.ops.exec_ops import commits_of
from state.project import session_project
from state.repo import git, gitinfo, unidiff
from state.repo import worktree as wt
from state.repo.numbered import numbered
from state.rules.amendments import approved_revision, runs_by_id
from state.vocab import RunStatus, SessionStatus

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.rules.session_store import Store
    from state.storage.documents import (
        CodeChange,
        Deviation,
        Execution,
        Milestone,
        Plan,
    )
    from state.storage.store import DocumentStore

RECONCILE_FILE = "reconcile.json"
DIFF_HEADER = re.compile(r"^diff --git a/(.*) b/(.*)$")


class ReconcileRow(TypedDict):
    """One milestone of reconcile.json: its planned files against what git shows changed."""

    id: str
    status: str
    planned_files: list[str]
    changed_files: list[str]
    untouched_planned_files: list[str]
    untouched_intents: list[str]
    commit: str | None
    fix_commits: list[str]


class TestRun(TypedDict):
    """A test a milestone names or `plan exec done --ran` recorded, and whether it ran."""

    file: str
    milestone: str
    ran: bool


class ReconcileRecord(TypedDict):
    """reconcile.json, as executor step 9 writes it (skills/executor/reconcile.py builds it)."""

    base_commit: str | None
    head: str | None
    milestones: list[ReconcileRow]
    unplanned_changes: list[str]
    deviations: list[Deviation]
    tests: list[TestRun]


class DiffLine(TypedDict):
    """A diff line numbered as in the files (state/repo/numbered.py), as a plain record."""

    old: int | None
    new: int | None
    kind: str
    text: str


class FileDiff(TypedDict):
    path: str
    lines: list[DiffLine]
    # a milestone commit's file that is its several planned changes of it, applied in order
    planned: NotRequired[list[str]]


class CommitView(TypedDict):
    sha: str
    short: str
    subject: str
    files: list[FileDiff]
    gone: NotRequired[bool]  # git no longer has it (history rewritten and pruned)


class PlannedChange(TypedDict):
    id: str
    file: str
    lines: list[DiffLine]


class MilestoneResult(TypedDict):
    id: str
    name: str
    status: str
    planned: list[PlannedChange]
    commits: list[CommitView]
    evidence: list[str]
    tests: list[TestRun]
    deviations: list[Deviation]
    reconcile: ReconcileRow | None  # None before reconcile.json has the milestone


class Result(TypedDict):
    """The result as the person sees it; `sha256` hashes the rest (what a verdict is on)."""

    title: str
    base_commit: str | None
    head: str | None
    milestones: list[MilestoneResult]
    tests_run: list[str]
    deviations: list[Deviation]
    unplanned_changes: list[str]
    sha256: str


def lines_of(diff: str) -> list[DiffLine]:
    """A diff's lines numbered as in the files (state/repo/numbered.py), as plain records."""
    return [
        {"old": line.old, "new": line.new, "kind": line.kind, "text": line.text}
        for line in numbered(diff)
    ]


def file_diffs(diff: str) -> list[FileDiff]:
    """A git diff of several files split per file: [{"path", "lines"}] in git's order."""
    chunks: list[list[str]] = []
    for text in diff.splitlines():
        if text.startswith("diff --git ") or not chunks:
            chunks.append([])
        chunks[-1].append(text)
    files: list[FileDiff] = []
    for chunk in chunks:
        path = None
        for text in chunk[:6]:
            if text.startswith("+++ b/"):
                path = text[6:]
            elif text.startswith("--- a/") and path is None:
                path = text[6:]  # a deleted file: +++ /dev/null comes after
        header = DIFF_HEADER.match(chunk[0])
        if path is None and header:
            path = header[2]  # a binary file or a mode change: no ---/+++ lines
        if path is not None:
            files.append({"path": path, "lines": lines_of("\n".join(chunk))})
    return files


def commit_view(root: str, sha: str) -> CommitView:
    """One commit as `git show` has it (the one hardened runner, state/repo/git.py): its subject
    and each file's diff."""
    sha = gitinfo.commit_id(sha, "execution.json:commit")
    subject = git.output(root, "show", "-s", "--format=%s", "--end-of-options", sha).strip()
    diff = git.output(
        root,
        "show",
        "--format=",
        "--patch",
        "--no-color",
        "--no-ext-diff",
        "--no-renames",
        "--end-of-options",
        sha,
        "--",
    )
    return {"sha": sha, "short": sha[:12], "subject": subject, "files": file_diffs(diff)}


GONE = "commit gone from git (history rewritten and pruned; fix: plan rebase)"


def gone_view(sha: str) -> CommitView:
    """A milestone's commit git no longer has: named, with nothing to show of it."""
    return {"sha": sha, "short": sha[:12], "subject": GONE, "files": [], "gone": True}


def assemble(
    plan: Plan, execution: Execution | None, record: ReconcileRecord | None, root: str
) -> Result:
    """The result as the person sees it, from the plan, execution.json, reconcile.json and
    git; `sha256` is the hash of everything else in it (what a verdict was given on)."""
    runs = runs_by_id(execution)
    deviations = execution["deviations"] if execution else []
    rows = {m["id"]: m for m in record["milestones"]} if record else {}
    tests = record["tests"] if record else []
    milestones: list[MilestoneResult] = []
    every = [
        gitinfo.commit_id(s, "execution.json:commit") for r in runs.values() for s in commits_of(r)
    ]
    lost = set(git.missing_commits(root, every)) if every else set()
    for m in plan["milestones"]:
        run = runs.get(m["id"])
        milestones.append(
            {
                "id": m["id"],
                "name": m["name"],
                "status": run["status"] if run else RunStatus.PENDING,
                "planned": [
                    {"id": c["id"], "file": c["file"], "lines": lines_of(c["diff"])}
                    for c in m["code_changes"]
                ],
                "commits": [
                    gone_view(sha)
                    if sha in lost
                    else composed(root, commit_view(root, sha), m, plan)
                    for sha in commits_of(run)
                ],
                "evidence": run["evidence"] if run else [],
                "tests": [t for t in tests if t["milestone"] == m["id"]],
                "deviations": [d for d in deviations if d["milestone"] == m["id"]],
                "reconcile": rows.get(m["id"]),
            }
        )
    result: Result = {
        "title": plan["overview"]["title"],
        "base_commit": record["base_commit"] if record else None,
        "head": record["head"] if record else None,
        "milestones": milestones,
        "tests_run": execution["tests_run"] if execution else [],
        "deviations": deviations,
        "unplanned_changes": record["unplanned_changes"] if record else [],
        "sha256": "",
    }
    result["sha256"] = result_hash(result)
    return result


def composed(root: str, commit: CommitView, m: Milestone, plan: Plan) -> CommitView:
    """Marks each file of the commit that is the milestone's planned changes of it (two or
    more: one alone is compared line for line where it is shown), applied in plan order on
    the commit's parent: those planned diffs are then not shown beside it."""
    order = [c for mm, c in wt.ordered_changes(plan) if mm is m]
    chains: dict[str, list[CodeChange]] = {}
    for c in order:
        chains.setdefault(c["file"], []).append(c)
    paths = [f["path"] for f in commit["files"] if len(chains.get(f["path"], [])) > 1]
    if not paths:
        return commit
    before = wt.base_reader(root, f"{commit['sha']}^")(paths)
    after = wt.base_reader(root, commit["sha"])(paths)
    for f in commit["files"]:
        if f["path"] not in paths:
            continue
        text = before[f["path"]]
        try:
            for c in chains[f["path"]]:
                for patch in unidiff.parse(c["diff"]):
                    text = unidiff.apply(patch, text)
        except unidiff.DiffError:
            continue
        if text == after[f["path"]]:
            f["planned"] = [c["id"] for c in chains[f["path"]]]
    return commit


def since_review(store: Store) -> tuple[int, list[str]] | None:
    """While the person reviews a result after asking for changes (every round before the
    one in review asked for them, each opening an amendment): that round, and the milestones
    it did not see, new in the plan since (history/ has the plan it saw) or reopened since;
    None when no round asked, or history/ lacks that plan (a clone: then everything)."""
    session = store.read("session")
    asked = session["result_reviews"][:-1]
    if session["status"] not in {SessionStatus.RESULT_REVIEW} or not asked:
        return None
    opened = [a for a in session["amendments"] if a["from_status"] in {SessionStatus.RESULT_REVIEW}]
    if len(opened) < len(asked):
        return None
    k = session["amendments"].index(opened[len(asked) - 1])
    found = approved_revision(store, opened[len(asked) - 1]["approval"]["sha256"], session)
    if found is None:
        return None
    seen = {m["id"] for m in found[1]["milestones"]}
    reopened = {mid for a in session["amendments"][k:] for mid in a["milestones"]}
    since = [
        m["id"]
        for m in store.read("plan")["milestones"]
        if m["id"] not in seen or m["id"] in reopened
    ]
    return asked[-1]["round"], since


def gone_commits(result: Result) -> list[tuple[str, str]]:
    """(milestone, commit) of each milestone commit git no longer has."""
    return [
        (m["id"], c["sha"]) for m in result["milestones"] for c in m["commits"] if c.get("gone")
    ]


def result_hash(result: Result) -> str:
    """sha256 of the result's canonical JSON (keys sorted, no whitespace, UTF-8), its own
    `sha256` left out."""
    body = {k: v for k, v in result.items() if k != "sha256"}
    data = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(data.encode()).hexdigest()


def reconcile_record(state_dir: str) -> ReconcileRecord | None:
    """reconcile.json as executor step 9 wrote it (None before it ran)."""
    try:
        with open(os.path.join(state_dir, RECONCILE_FILE), encoding="utf-8") as f:
            record: ReconcileRecord = json.load(f)  # the product's own file, written whole
    except (FileNotFoundError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def result_of(store: DocumentStore) -> Result:
    """The result of the session in `store` (its reconcile.json, plan, execution and git)."""
    return assemble(
        store.read("plan"),
        store.read_or_none("execution"),
        reconcile_record(store.dir),
        session_project(store.dir),
    )


def shown_lines(result: Result, milestone: str, path: str) -> list[int]:
    """The new-file lines the milestone's commits show of `path` (for anchoring a comment)."""
    found: list[int] = []
    for m in result["milestones"]:
        if m["id"] != milestone:
            continue
        for commit in m["commits"]:
            for f in commit["files"]:
                if f["path"] == path:
                    found += [ln["new"] for ln in f["lines"] if ln["new"] is not None]
    return found


def committed_files(result: Result, milestone: str) -> list[str]:
    """The files the milestone's commits change, in order, once each."""
    files: dict[str, None] = {}
    for m in result["milestones"]:
        if m["id"] == milestone:
            for commit in m["commits"]:
                files.update(dict.fromkeys(f["path"] for f in commit["files"]))
    return list(files)
