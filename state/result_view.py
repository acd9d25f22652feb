"""What the person reviews after execution, assembled once for `plan result show` and the
review page's result view: per milestone the planned diffs beside its commits' diffs, the
tests that ran, the deviations with their reasons, and the reconcile table."""

from __future__ import annotations

import hashlib
import json
import os
import re

from state.repo import git, gitinfo
from state.repo.numbered import numbered

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from state.storage.store import Store

RECONCILE_FILE = "reconcile.json"
DIFF_HEADER = re.compile(r"^diff --git a/(.*) b/(.*)$")


def lines_of(diff: str) -> list[dict[str, Any]]:
    """A diff's lines numbered as in the files (state/repo/numbered.py), as plain records."""
    return [line._asdict() for line in numbered(diff)]


def file_diffs(diff: str) -> list[dict[str, Any]]:
    """A git diff of several files split per file: [{"path", "lines"}] in git's order."""
    chunks: list[list[str]] = []
    for text in diff.splitlines():
        if text.startswith("diff --git ") or not chunks:
            chunks.append([])
        chunks[-1].append(text)
    files = []
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


def commit_view(root: str, sha: str) -> dict[str, Any]:
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


def assemble(
    plan: dict[str, Any], execution: dict[str, Any], record: dict[str, Any], root: str
) -> dict[str, Any]:
    """The result as the person sees it, from the plan, execution.json, reconcile.json and
    git; `sha256` is the hash of everything else in it (what a verdict was given on)."""
    runs = {m["id"]: m for m in execution["milestones"]}
    rows = {m["id"]: m for m in record.get("milestones") or []}
    tests = record.get("tests") or []
    milestones = []
    for m in plan["milestones"]:
        run = runs.get(m["id"], {})
        shas = [s for s in [run.get("commit"), *run.get("fix_commits", [])] if s]
        milestones.append(
            {
                "id": m["id"],
                "name": m["name"],
                "status": run.get("status", "pending"),
                "planned": [
                    {"id": c["id"], "file": c["file"], "lines": lines_of(c["diff"])}
                    for c in m["code_changes"]
                ],
                "commits": [commit_view(root, sha) for sha in shas],
                "evidence": run.get("evidence", []),
                "tests": [t for t in tests if t["milestone"] == m["id"]],
                "deviations": [d for d in execution["deviations"] if d["milestone"] == m["id"]],
                "reconcile": rows.get(m["id"], {}),
            }
        )
    result = {
        "title": plan["overview"]["title"],
        "base_commit": record.get("base_commit"),
        "head": record.get("head"),
        "milestones": milestones,
        "tests_run": execution["tests_run"],
        "deviations": execution["deviations"],
        "unplanned_changes": record.get("unplanned_changes") or [],
    }
    return {**result, "sha256": result_hash(result)}


def result_hash(result: dict[str, Any]) -> str:
    """sha256 of the result's canonical JSON (keys sorted, no whitespace, UTF-8)."""
    body = {k: v for k, v in result.items() if k != "sha256"}
    data = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(data.encode()).hexdigest()


def reconcile_record(state_dir: str) -> dict[str, Any]:
    """reconcile.json as executor step 9 wrote it ({} before it ran)."""
    try:
        with open(os.path.join(state_dir, RECONCILE_FILE), encoding="utf-8") as f:
            record = json.load(f)
    except (FileNotFoundError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def result_of(store: Store) -> dict[str, Any]:
    """The result of the session in `store` (its reconcile.json, plan, execution and git)."""
    from state.project import session_project

    execution = store.read_or_none("execution") or {"milestones": [], "deviations": []}
    execution.setdefault("tests_run", [])
    return assemble(
        store.read("plan"),
        execution,
        reconcile_record(store.dir),
        session_project(store.dir),
    )


def shown_lines(result: dict[str, Any], milestone: str, path: str) -> list[int]:
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


def committed_files(result: dict[str, Any], milestone: str) -> list[str]:
    """The files the milestone's commits change, in order, once each."""
    files: dict[str, None] = {}
    for m in result["milestones"]:
        if m["id"] == milestone:
            for commit in m["commits"]:
                files.update(dict.fromkeys(f["path"] for f in commit["files"]))
    return list(files)
