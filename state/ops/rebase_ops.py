"""`plan rebase`: carry a session onto HEAD after the person rewrote the history it relied on;
it records rewritten milestone commits, moves the base and changes no planned diff
(docs/design.md, "The world moves").
"""

from __future__ import annotations

import os

from state.errors import PreconditionFailed, Refused
from state.ops.exec_apply import (
    MILESTONE_TRAILER,
    SESSION_TRAILER,
    TRAILERS,
    gitinfo_dir,
    project_git,
    refuse_underway,
)
from state.ops.exec_ops import commits_of
from state.project import session_project
from state.repo import gitinfo, unidiff
from state.repo import worktree as wt
from state.vocab import CLOSED, DRAFTING

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.rules.session_store import Transaction
    from state.storage.documents import Execution, Plan

HISTORY_LIMIT = 5000  # commits of HEAD's history searched for a rewritten milestone commit


def plan_rebase(tx: Transaction, *, drop_worktree: bool = False) -> None:
    """Record HEAD as the session's base and re-find its milestone commits; see the module."""
    session = tx.read("session")
    if session["status"] in CLOSED:
        raise Refused(
            f"{tx.store.path('session')}: the session is {session['status']}; nothing to rebase"
        )
    project = session_project(tx.store.dir)
    repo = gitinfo_dir(project)
    refuse_underway(project)
    head = gitinfo.head_commit(project)
    if head is None or not gitinfo.resolves(project, head):
        raise PreconditionFailed(
            f"{project}: HEAD does not resolve to a commit, so there is nothing to carry the "
            "plan onto (fix: git switch <branch>, or commit, then rerun plan rebase)"
        )
    tree = wt.path_of(tx.store.dir)
    planning = session["status"] in DRAFTING
    if planning and os.path.lexists(tree) and not drop_worktree:
        raise PreconditionFailed(
            f"{tree}: the scratch worktree was checked out from the old base; its edits "
            "would be captured against the new one (fix: capture what it holds first, "
            "plan change capture, then plan rebase --drop-worktree; plan worktree makes "
            "it again from the new base)"
        )
    old_base = session["base_commit"]
    execution = tx.read("execution") if tx.store.exists("execution") else None
    remapped, dropped = (
        _remap(tx, repo, project, session["id"], execution) if execution else ({}, [])
    )
    base = _new_base(repo, project, head, execution)
    blocked = _must_change(tx.read("plan"), project, base, execution)
    tx.edit("session")["base_commit"] = base
    if execution is not None:
        tx.edit("execution")["base_commit"] = base
    if drop_worktree and os.path.lexists(tree):
        wt.remove(project, tx.store.dir)
        tx.tell(f"{tree}: removed (plan worktree makes it again from {base[:12]})")
    tx.note(
        rebased_from=old_base,
        rebased_onto=base,
        head=head,
        remapped=remapped,
        uncommitted=dropped,
        must_change=[b.split(":")[0] for b in blocked],
    )
    was = old_base[:12] if old_base else "none"
    tx.tell(f"base commit {was} -> {base[:12]} (HEAD {head[:12]})")
    for old, new in remapped.items():
        tx.tell(f"commit {old[:12]} rewritten as {new[:12]}: recorded")
    for milestone in dropped:
        tx.tell(
            f"{milestone}: its commit is not in HEAD's history any more: not committed "
            f"(fix: plan exec apply {milestone}, then plan exec commit {milestone})"
        )
    for line in blocked or ["every planned diff not yet committed applies to the new base"]:
        tx.tell(line)


def _remap(
    tx: Transaction, repo: str, project: str, session_id: str, execution: Execution
) -> tuple[dict[str, str], list[str]]:
    """Milestone commits gone from HEAD's history found again by their trailers; ({old: new},
    milestones whose commit HEAD no longer holds). Edits execution.json."""
    found = _by_trailer(repo, project, session_id)
    remapped: dict[str, str] = {}
    dropped: list[str] = []
    runs = tx.edit("execution")["milestones"]
    for run in runs:
        old = commits_of(run)
        if not old or all(_kept(project, s) for s in old):
            continue
        new = found.get(run["id"], [])
        if not new:
            dropped.append(run["id"])
            run["commit"], run["fix_commits"], run["applied_at"] = None, [], None
            continue
        pairs = dict(zip(old, new, strict=False))
        remapped.update({o: n for o, n in pairs.items() if o != n})
        run["commit"], run["fix_commits"] = new[0], new[1:]
    for deviation in tx.edit("execution")["deviations"]:
        if deviation["commit"] in remapped:
            deviation["commit"] = remapped[deviation["commit"]]
        elif deviation["milestone"] in dropped:
            deviation["commit"] = None
    return remapped, dropped


def _kept(project: str, sha: str) -> bool:
    return (
        gitinfo.is_commit_id(sha)
        and gitinfo.resolves(project, sha)
        and gitinfo.contains(project, sha)
    )


def _by_trailer(repo: str, project: str, session_id: str) -> dict[str, list[str]]:
    """Per milestone, the commits in HEAD's history whose trailers name this session and the
    milestone, oldest first."""
    args = ("log", "-z", f"-n{HISTORY_LIMIT}", f"--format=%H%n%(trailers:{TRAILERS})", "HEAD", "--")
    out = project_git(repo, project, *args).decode("utf-8", "replace")
    found: dict[str, list[str]] = {}
    for entry in reversed(out.split("\0")):
        sha, _, trailers = entry.strip().partition("\n")
        lines = {line.strip() for line in trailers.splitlines()}
        if f"{SESSION_TRAILER}: {session_id}" not in lines:
            continue
        for line in lines:
            if line.startswith(f"{MILESTONE_TRAILER}: "):
                found.setdefault(line.partition(": ")[2], []).append(sha)
    return found


def _new_base(repo: str, project: str, head: str, execution: Execution | None) -> str:
    """HEAD; once milestones are committed, the parent of the oldest of their commits."""
    commits = {
        s for run in (execution["milestones"] if execution else []) for s in (run["commit"],) if s
    }
    if not commits:
        return head
    order = wt.git(repo, "rev-list", f"-n{HISTORY_LIMIT}", "HEAD", "--", work_tree=project)
    listed = order.decode().split()
    oldest = max(commits, key=lambda s: listed.index(s) if s in listed else -1)
    done = wt.run(repo, "rev-parse", "--verify", "-q", f"{oldest}^", work_tree=project)
    parent = done.stdout.decode().strip()
    return parent if gitinfo.is_commit_id(parent) else head


def _must_change(plan: Plan, project: str, base: str, execution: Execution | None) -> list[str]:
    """The planned diffs of milestones not yet committed that do not apply to `base` plus the
    planned diffs before them (already there counts as applying): one line each, naming the
    change and what the person runs."""
    committed = {
        run["id"] for run in (execution["milestones"] if execution else []) if run["commit"]
    }
    pairs = wt.ordered_changes(plan)
    files = wt.base_reader(project, base)(dict.fromkeys(c["file"] for _, c in pairs))
    lines = []
    for milestone, change in pairs:
        try:
            patches = unidiff.parse(change["diff"])
        except unidiff.DiffError as e:
            lines.append(f"{milestone['id']} {change['id']}: {e}")
            continue
        for patch in patches:
            path = patch.new_path or patch.old_path or ""
            text = files.get(patch.old_path or path)
            try:
                files[path] = unidiff.apply(patch, text)
            except unidiff.DiffError as e:
                try:
                    unidiff.apply(unidiff.reverse(patch), text)  # already there
                except unidiff.DiffError:
                    files.pop(path, None)
                    if milestone["id"] not in committed:
                        lines.append(
                            f"{milestone['id']} {change['id']}: its planned diff no longer "
                            f"applies to the new base ({e}); the plan must change, and the "
                            f"person approves it again (fix: plan amend --reason 'carry onto "
                            f"HEAD' --milestone {milestone['id']}, then plan worktree and plan "
                            "change capture)"
                        )
            if patch.old_path and patch.old_path != path:
                files[patch.old_path] = None
    return lines
