"""`plan exec apply` and `plan exec commit`: a milestone's planned diffs onto the project, in
plan order, all or nothing (three-way where the file moved on), and its commit (PRODUCT.md §11).
"""

from __future__ import annotations

import contextlib
import os
import tempfile

from state import clock, plan_ops, unidiff
from state import worktree as wt
from state.errors import PreconditionFailed
from state.exec_ops import run_of
from state.project import session_project
from state.project_paths import check_milestone
from state.store import write_atomic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from state.store import Transaction


def exec_apply(tx: Transaction, a: dict[str, Any]) -> None:
    """Apply a milestone's planned diffs to the project; on a conflict nothing is written."""
    run = run_of(tx, a["id"])
    if run["applied_at"]:
        tx.tell(f"{a['id']}: already applied at {run['applied_at']}; nothing to do")
        return
    plan, session = tx.read("plan"), tx.read("session")
    project = session_project(tx.store.dir)
    check_milestone(project, plan_ops.find(plan, a["id"]))
    pairs = wt.ordered_changes(plan)
    mine = [c for m, c in pairs if m["id"] == a["id"]]
    before = _planned_before(plan, session, project, pairs, a["id"])
    results: dict[str, str | None] = {}
    for change in mine:
        try:
            patches = unidiff.parse(change["diff"])
        except unidiff.DiffError as e:
            raise PreconditionFailed(f"{change['id']}: {e}; nothing was applied") from None
        for patch in patches:
            path = patch.new_path or patch.old_path or ""
            if unidiff.unsafe(path, project):
                raise PreconditionFailed(f"{change['id']}: {unidiff.unsafe(path, project)}")
            now = results[path] if path in results else _read(project, patch.old_path or path)
            results[path] = _apply_one(change, patch, now, before, project)
            if patch.old_path and patch.old_path != path:
                results[patch.old_path] = None
            try:
                before[path] = unidiff.apply(patch, before[path]) if path in before else None
            except unidiff.DiffError:
                before.pop(path)  # the planned chain is broken here: no ancestor to merge with
    for path, text in results.items():  # every diff applied in memory: now write them all
        full = os.path.join(project, path)
        if text is None:
            if os.path.lexists(full):
                os.remove(full)
            continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        write_atomic(full, text.encode("utf-8", "surrogateescape"))
    run.update(status="in_progress", started_at=run["started_at"] or clock.now())
    run["applied_at"] = clock.now()
    files = ", ".join(results) or "nothing"
    tx.tell(f"{a['id']}: applied {len(mine)} planned diff(s) to {files}")


def _planned_before(
    plan: dict[str, Any], session: dict[str, Any], project: str, pairs: list[Any], milestone: str
) -> dict[str, str | None]:
    """Files as the plan left them before `milestone`: the three-way merge's common ancestor."""
    base = session["base_commit"]
    if not base or not pairs:
        return {}
    paths = [c["file"] for _, c in pairs]
    files = wt.base_reader(project, wt.base_of(session, "session.json:base_commit"))(paths)
    for m, c in pairs:
        if m["id"] == milestone:
            break
        try:
            for patch in unidiff.parse(c["diff"]):
                name = patch.new_path or patch.old_path or ""
                files[name] = unidiff.apply(patch, files.get(name))
        except unidiff.DiffError:
            files.pop(c["file"], None)  # no ancestor for it: exact application only
    return files


def _apply_one(
    change: dict[str, Any], patch: Any, now: str | None, before: dict[str, str | None], project: str
) -> str | None:
    path = patch.new_path or patch.old_path
    try:
        return unidiff.apply(patch, now)
    except unidiff.DiffError as exact:
        try:
            unidiff.apply(unidiff.reverse(patch), now)
            return now  # already applied (a retry after a crash, or by hand)
        except unidiff.DiffError:
            pass
        where = f"{change['id']} ({change['intent_ref']})"
        if path not in before or before[path] is None or now is None or patch.new_path is None:
            raise PreconditionFailed(f"{where}: {exact}; nothing was applied") from None
        ancestor = before[path]
        try:
            planned = unidiff.apply(patch, ancestor)
        except unidiff.DiffError:
            raise PreconditionFailed(f"{where}: {exact}; nothing was applied") from None
        merged, conflicts = _merge(project, now, ancestor, planned)
        if conflicts:
            raise PreconditionFailed(
                f"{where}: {exact}; the three-way merge with the file as it is now left "
                f"{conflicts} conflict(s) in {path}; nothing was applied"
            ) from None
        return merged


def _merge(project: str, ours: str, ancestor: str | None, theirs: str | None) -> tuple[str, int]:
    """git merge-file: (merged text, number of conflicts)."""
    with tempfile.TemporaryDirectory(prefix="planner-merge-") as tmp:
        names = []
        for name, text in (("current", ours), ("planned-base", ancestor), ("planned", theirs)):
            names.append(os.path.join(tmp, name))
            with open(names[-1], "wb") as f:
                f.write((text or "").encode("utf-8", "surrogateescape"))
        done = wt.run(wt.common_dir(project), "merge-file", "-p", "--", *names, cwd=tmp)
    if done.returncode < 0 or done.returncode > 127:
        raise PreconditionFailed(f"git merge-file: {done.stderr.decode(errors='replace')}")
    return done.stdout.decode("utf-8", "surrogateescape"), done.returncode


def _read(project: str, path: str) -> str | None:
    full = os.path.join(project, path)
    if not os.path.lexists(full):
        return None
    with open(full, "rb") as f:
        return f.read().decode("utf-8", "surrogateescape")


def commit_message(milestone: dict[str, Any]) -> str:
    """ "M-001 Parser: CI-001, CI-002", then one line per planned change."""
    ids = [i["id"] for i in milestone["code_intents"]] or [
        c["id"] for c in milestone["code_changes"]
    ]
    head = f"{milestone['id']} {milestone['name']}" + (f": {', '.join(ids)}" if ids else "")
    body = [f"{c['id']} {c['intent_ref']} {c['file']}" for c in milestone["code_changes"]]
    return head + ("\n\n" + "\n".join(body) if body else "") + "\n"


def exec_commit(tx: Transaction, a: dict[str, Any]) -> None:
    """Commit the milestone's planned files with a message from the plan (config `commit`)."""
    run = run_of(tx, a["id"])
    session = tx.read("session")
    if session["config"].get("commit", "milestone") == "none":
        tx.tell(f'{a["id"]}: config commit = "none": its changes are left uncommitted')
        return
    milestone = plan_ops.find(tx.read("plan"), a["id"])
    project = session_project(tx.store.dir)
    check_milestone(project, milestone)
    paths = _milestone_paths(milestone, project)
    repo = gitinfo_dir(project)
    tracked = wt.git(repo, "ls-files", "-z", "--", *paths, work_tree=project, cwd=project)
    known = set(tracked.decode("utf-8", "surrogateescape").split("\0"))
    keep = [p for p in paths if p in known or os.path.lexists(os.path.join(project, p))]
    if keep:
        wt.git(repo, "add", "-A", "--", *keep, work_tree=project, cwd=project)
    staged = (
        wt.git(
            repo,
            "diff",
            "--cached",
            "--name-only",
            "-z",
            "--",
            *keep,
            work_tree=project,
            cwd=project,
        )
        if keep
        else b""
    )
    if not staged.strip(b"\0"):
        raise PreconditionFailed(
            f"{a['id']}: nothing to commit in its files (fix: plan exec apply {a['id']})"
        )
    message = commit_message(milestone)
    wt.git(repo, "commit", "-q", "-m", message, "--", *keep, work_tree=project, cwd=project)
    sha = wt.git(repo, "rev-parse", "HEAD", work_tree=project, cwd=project).decode().strip()
    run["commit"] = sha
    tx.tell(f"{a['id']}: committed {sha[:12]} {message.splitlines()[0]}")


def _milestone_paths(milestone: dict[str, Any], project: str) -> list[str]:
    """The files a milestone plans: its files, intents, diffs (both sides) and tests."""
    paths = list(milestone["files"]) + [i["file"] for i in milestone["code_intents"]]
    for c in milestone["code_changes"]:
        paths.append(c["file"])
        with contextlib.suppress(unidiff.DiffError):
            paths += unidiff.touched_files(c["diff"])
    paths += milestone["tests"]["files"]
    return [p for p in dict.fromkeys(paths) if p and not unidiff.unsafe(p, project)]


def gitinfo_dir(project: str) -> str:
    """The project's own git dir (its worktree's, when the project is a linked worktree)."""
    from state import gitinfo

    found = gitinfo.git_dir(project)
    if found is None:
        raise PreconditionFailed(f"{project}: not a git repository (fix: git init)")
    return found
