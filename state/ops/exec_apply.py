"""`plan exec apply` and `plan exec commit`: a milestone's planned diffs onto the project, in
plan order, all or nothing (three-way where the file moved on), and its commit.
"""

from __future__ import annotations

import contextlib
import os
import tempfile

from state import clock
from state.errors import PreconditionFailed, Refused, UsageError
from state.ops import plan_ops
from state.ops.exec_ops import commits_of, run_of
from state.project import session_project
from state.repo import contention, gitinfo, unidiff
from state.repo import worktree as wt
from state.rules.session_store import RESTORE_FIX, tampered
from state.validation.project_paths import check_milestone
from state.vocab import RunStatus

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.rules.session_store import Transaction
    from state.storage.documents import (
        CodeChange,
        Deviation,
        Execution,
        Milestone,
        MilestoneRun,
        Plan,
        Session,
    )


def exec_apply(tx: Transaction, *, id: str) -> None:
    """Apply a milestone's planned diffs to the project, in the session's transaction: the
    files land with execution.json or not at all; on a conflict nothing is written.

    Whether it is applied is decided from what the repository shows now, not from the record
    (docs/design.md, "The world moves"): its commit in HEAD's history is "already committed";
    files that hold its planned diffs are "already applied"; files the person undid since
    (git stash, git checkout -- .) are applied again."""
    run = run_of(tx, id)
    project = session_project(tx.store.dir)
    refuse_underway(project)
    base = require_base(tx, project)
    require_commits(tx, gitinfo_dir(project), project, id)
    sha = run["commit"]
    if sha and gitinfo.resolves(project, sha) and gitinfo.contains(project, sha):
        tx.tell(f"{id}: already committed as {sha[:12]} (in HEAD); nothing to do")
        return
    milestone, mine, found, results = planned_results(tx, id, project, base)
    changed = [p for p, text in results.items() if text != found[p]]
    if not changed and run["applied_at"]:
        tx.tell(f"{id}: already applied at {run['applied_at']} (its files hold it); nothing to do")
        return
    run["dirty_at_apply"] = _dirty(project, milestone, found, results)
    root = os.path.realpath(project)
    for path in changed:
        text = results[path]
        data = None if text is None else text.encode("utf-8", "surrogateescape")
        tx.put_project(root, _destination(project, path, deleting=text is None), data)
    was = run["applied_at"]
    run["status"] = (
        RunStatus.IN_PROGRESS if changed or run["status"] == RunStatus.PENDING else run["status"]
    )
    run["started_at"] = run["started_at"] or clock.now()
    run["applied_at"] = clock.now()
    if not changed:
        tx.tell(f"{id}: already applied (its files hold its planned diffs); recorded")
        return
    if was:
        tx.note(applied_again=id, applied_before=was)
        tx.tell(
            f"{id}: applied again: its files no longer held its planned diffs (applied at "
            f"{was}, undone since)"
        )
    tx.tell(f"{id}: applied {len(mine)} planned diff(s) to {', '.join(changed)}")


def planned_results(
    tx: Transaction, id: str, project: str, base: str | None
) -> tuple[Milestone, list[CodeChange], dict[str, str | None], dict[str, str | None]]:
    """(milestone, its planned changes, its files as they are, its files as the plan makes them
    from what they are): exact, "already applied", or three-way against the planned ancestor.
    PreconditionFailed on a conflict or an unsafe path; nothing is written."""
    plan = tx.read("plan")
    milestone = plan_ops.find(plan, id, "M")
    check_milestone(project, milestone)
    pairs = wt.ordered_changes(plan)
    mine = [c for m, c in pairs if m["id"] == id]
    before = _planned_before(plan, base, project, pairs, id)
    held = _held(tx, project, mine, before)
    if held is not None:  # the files are what the plan makes of them: applied
        return milestone, mine, held, dict(held)
    results: dict[str, str | None] = {}
    found: dict[str, str | None] = {}  # the files as they were
    for change in mine:
        try:
            patches = unidiff.parse(change["diff"])
        except unidiff.DiffError as e:
            raise PreconditionFailed(f"{change['id']}: {e}; nothing was applied") from None
        for patch in patches:
            path = patch.new_path or patch.old_path or ""
            for name in dict.fromkeys((path, patch.old_path or path)):
                if unidiff.unsafe(name, project):
                    raise PreconditionFailed(f"{change['id']}: {unidiff.unsafe(name, project)}")
                if name not in found:
                    found[name] = _current(tx, project, name)
            now = results[path] if path in results else found[patch.old_path or path]
            planned: str | None = None
            try:
                planned = unidiff.apply(patch, before[path]) if path in before else None
            except unidiff.DiffError:
                before.pop(path)  # the planned chain is broken here: no ancestor to merge with
            results[path] = _apply_one(change, patch, now, before, project, planned)
            if patch.old_path and patch.old_path != path:
                results[patch.old_path] = None
            if path in before:
                before[path] = planned
    return milestone, mine, found, results


def _held(
    tx: Transaction, project: str, mine: list[CodeChange], before: dict[str, str | None]
) -> dict[str, str | None] | None:
    """The milestone's files as they are, when every one holds exactly what its planned diffs
    make of the planned ancestor (applied, by the product or by hand); else None."""
    after = dict(before)
    try:
        for change in mine:
            for patch in unidiff.parse(change["diff"]):
                path = patch.new_path or patch.old_path or ""
                for name in dict.fromkeys((path, patch.old_path or path)):
                    if name not in after or unidiff.unsafe(name, project):
                        return None
                after[path] = unidiff.apply(patch, after[path])
                if patch.old_path and patch.old_path != path:
                    after[patch.old_path] = None
    except unidiff.DiffError:
        return None
    touched = {p: after[p] for p in after if after[p] != before.get(p) or p not in before}
    if not touched:
        return None
    now = {p: _current(tx, project, p) for p in touched}
    return now if now == touched else None


def require_base(tx: Transaction, project: str) -> str | None:
    """The commit planning started from (the planned diffs' ancestor), after checking that it
    and the one the execution started from are still in the repository: one gone (history
    rewritten and pruned) is exit 3 naming it and `plan rebase`."""
    session = tx.read("session")
    execution = tx.read("execution") if tx.store.exists("execution") else None
    found = {
        "session.json:base_commit": session["base_commit"],
        "execution.json:base_commit": execution["base_commit"] if execution else None,
    }
    for where, sha in found.items():
        if sha is not None:
            sha = gitinfo.commit_id(sha, os.path.join(tx.store.dir, where))
            if not gitinfo.resolves(project, sha):
                raise PreconditionFailed(gitinfo.gone(sha, f"the base commit ({where})"))
            if not gitinfo.contains(project, sha):
                raise PreconditionFailed(
                    f"the base commit ({where}) {sha[:12]} is not in HEAD's history (the "
                    "branch was rebased, reset or switched) (fix: switch back to the branch "
                    "the plan is on; or plan rebase, which carries the plan onto HEAD)"
                )
    return session["base_commit"]


def require_commits(
    tx: Transaction, repo: str, project: str, id: str
) -> tuple[str, list[str]] | None:
    """The milestone's commit found by its trailers in HEAD's history since the base (or None),
    after checking its recorded commits: one gone, or rewritten as another HEAD holds, is exit
    3 naming it and `plan rebase`."""
    run = run_of(tx, id)
    session, execution = tx.read("session"), tx.read("execution")
    for sha in commits_of(run):
        if not gitinfo.resolves(project, sha):
            raise PreconditionFailed(gitinfo.gone(sha, f"{id}'s commit (execution.json)"))
    made = _made_commit(repo, project, session, execution, id)
    old = run["commit"]
    if made and old and made[0] != old and not gitinfo.contains(project, old):
        raise PreconditionFailed(
            f"{id}'s commit {old[:12]} is not in HEAD's history, which holds {made[0][:12]} "
            "for it (rewritten by an amend or a rebase) (fix: plan rebase, which records it)"
        )
    return made


def refuse_underway(project: str) -> None:
    """Exit 3 before anything changes while a merge, rebase, am, cherry-pick, revert or bisect
    is half done in the project: its files and index belong to that operation."""
    git_dir = gitinfo.git_dir(project)
    found = contention.underway(git_dir) if git_dir else None
    if found:
        marker, what, fix = found
        raise PreconditionFailed(
            f"{project}: {what} is in progress ({marker}), and its commit would take this "
            f"milestone's files (fix: finish or abort it: {fix}; then rerun); "
            "nothing was changed"
        )


def _current(tx: Transaction, project: str, path: str) -> str | None:
    """The file as this transaction leaves it so far (an earlier exec apply in the same
    batch), else as it is on disk."""
    staged = tx.project[1] if tx.project is not None else {}
    for deleting in (False, True):
        where = _destination(project, path, deleting)
        if where in staged:
            data = staged[where]
            return None if data is None else data.decode("utf-8", "surrogateescape")
    return _read(project, path)


def _destination(project: str, path: str, deleting: bool) -> str:
    """Where the file's new content goes: through a symlink to its target (unidiff.unsafe
    checked it stays in the project), so the link stays a link; a deletion removes the link."""
    full = os.path.join(project, path)
    if deleting:
        return os.path.join(os.path.realpath(os.path.dirname(full)), os.path.basename(full))
    return os.path.realpath(full)


def _dirty(
    project: str, milestone: Milestone, found: dict[str, str | None], results: dict[str, str | None]
) -> list[str]:
    """The milestone's files that held edits not from the plan when it was applied: changed
    from HEAD, and not already holding the planned result (a diff applied by hand)."""
    paths = milestone_paths(milestone, project)
    repo = gitinfo_dir(project)
    if not paths:
        return []
    status = ("--no-optional-locks", "status", "--porcelain", "-z", "--", *paths)
    done = wt.run(repo, *status, work_tree=project, cwd=project)
    if done.returncode:
        return []
    dirty = []
    for entry in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        name = entry[3:]
        by_hand = name in results and found.get(name) == results[name]
        if len(entry) > 3 and name in paths and not by_hand:
            dirty.append(name)
    return sorted(dirty)


def _planned_before(
    plan: Plan,
    base: str | None,
    project: str,
    pairs: list[tuple[Milestone, CodeChange]],
    milestone: str,
) -> dict[str, str | None]:
    """Files as the plan left them before `milestone`: the three-way merge's common ancestor.
    `base` is the checked commit the execution started from (after `plan rebase`, one that
    may hold earlier milestones already: a change found applied there is skipped)."""
    if not base or not pairs:
        return {}
    paths = [c["file"] for _, c in pairs]
    files = wt.base_reader(project, base)(paths)
    for m, c in pairs:
        if m["id"] == milestone:
            break
        try:
            for patch in unidiff.parse(c["diff"]):
                name = patch.new_path or patch.old_path or ""
                files[name] = _forward(patch, files.get(name))
        except unidiff.DiffError:
            files.pop(c["file"], None)  # no ancestor for it: exact application only
    return files


def _forward(patch: unidiff.FilePatch, text: str | None) -> str | None:
    """`text` after `patch`, or `text` itself where it holds the patch already."""
    try:
        return unidiff.apply(patch, text)
    except unidiff.DiffError:
        unidiff.apply(unidiff.reverse(patch), text)  # DiffError again: neither
        return text


def _apply_one(
    change: CodeChange,
    patch: unidiff.FilePatch,
    now: str | None,
    before: dict[str, str | None],
    project: str,
    planned: str | None,
) -> str | None:
    """The file after `patch`. "Already applied" is decided first, from the content: the file
    is what the plan makes of it, or the diff undoes cleanly and does not apply (a retry, or
    `git apply` by hand); then exactly; then three-way against the planned ancestor."""
    path = patch.new_path or patch.old_path
    if path in before and now == planned:
        return now
    try:
        forward: str | None = unidiff.apply(patch, now)
    except unidiff.DiffError as e:
        exact = e
    else:
        return forward
    try:
        unidiff.apply(unidiff.reverse(patch), now)
        return now  # already applied (a retry after a crash, or by hand)
    except unidiff.DiffError:
        pass
    where = f"{change['id']} ({change['intent_ref']})"
    if path not in before or before[path] is None or now is None or patch.new_path is None:
        raise PreconditionFailed(f"{where}: {exact}; nothing was applied") from None
    ancestor = before[path]
    if planned is None:
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
    if os.path.isdir(full):
        raise PreconditionFailed(
            f"{full}: is a directory, where the plan changes a file (move it away, then rerun); "
            "nothing was applied"
        )
    try:
        with open(full, "rb") as f:
            return f.read().decode("utf-8", "surrogateescape")
    except FileNotFoundError:  # a dangling symlink: its target is created
        return None
    except OSError as e:
        raise PreconditionFailed(
            f"{full}: cannot be read ({e.strerror}); nothing was applied"
        ) from None


def commit_message(
    milestone: Milestone, deviations: list[Deviation] | None = None, fix: bool = False
) -> str:
    """ "M-001 Parser: CI-001, CI-002", then one line per planned change and per deviation it
    carries out; a fix after the milestone's commit: "M-001 Parser (fix: DV-001, DV-002)"."""
    deviations = deviations or []
    named = [d["id"] for d in deviations]
    if fix:
        head = f"{milestone['id']} {milestone['name']} (fix" + (
            f": {', '.join(named)})" if named else ")"
        )
        body = []
    else:
        ids = [i["id"] for i in milestone["code_intents"]] or [
            c["id"] for c in milestone["code_changes"]
        ]
        head = f"{milestone['id']} {milestone['name']}" + (f": {', '.join(ids)}" if ids else "")
        body = [
            f"{c['id']} {','.join([c['intent_ref'], *c['shared_intents']])} {c['file']}"
            for c in milestone["code_changes"]
        ]
    body += [
        f"{d['id']} {d['description'].splitlines()[0] if d['description'] else ''}".rstrip()
        for d in deviations
    ]
    return head + ("\n\n" + "\n".join(body) if body else "") + "\n"


SESSION_TRAILER = "Planner-Session"
MILESTONE_TRAILER = "Planner-Milestone"
DEVIATION_TRAILER = "Planner-Deviation"
TRAILERS = ",".join(f"key={k}" for k in (SESSION_TRAILER, MILESTONE_TRAILER, DEVIATION_TRAILER))


def exec_commit(
    tx: Transaction, *, id: str, allow_detached: bool = False, include_uncommitted: bool = False
) -> None:
    """Commit the milestone's planned files with a message from the plan (config `commit`);
    after its commit, a fix commit of what changed since, naming the deviations it carries out.

    The commit carries trailers naming the session, the milestone and those deviations, so
    that a rerun, or a retry after a kill between `git commit` and the record, finds it and
    records it instead.
    """
    run = run_of(tx, id)
    session = tx.read("session")
    if session["config"]["commit"] == "none":
        tx.tell(f'{id}: config commit = "none": its changes are left uncommitted')
        return
    if tx.project is not None:  # git commits what is on disk; the batch's files land at its end
        raise UsageError(
            f"exec commit {id}: this batch also writes project files, which land only "
            f"when the batch does; run `plan exec commit {id}` on its own after it"
        )
    reason = tampered(session, tx.read("plan"))
    if reason:  # before git commits anything: the record would refuse it afterwards
        raise Refused(f"{tx.store.path('plan')}: {reason}; nothing was written ({RESTORE_FIX})")
    milestone = plan_ops.find(tx.read("plan"), id, "M")
    project = session_project(tx.store.dir)
    check_milestone(project, milestone)
    repo = gitinfo_dir(project)
    refuse_underway(project)
    base = require_base(tx, project)
    execution = tx.read("execution")
    made = require_commits(tx, repo, project, id)
    if made and made[0] not in commits_of(run):
        _recorded(run, execution, *made)
        tx.tell(f"{id}: committed earlier as {made[0][:12]} (found by its trailer); recorded")
        return
    if not allow_detached and _detached(repo, project):
        raise PreconditionFailed(
            f"{project}: HEAD is detached, so {id}'s commit would be on no branch "
            f"(fix: git switch <branch>, then rerun; or plan exec commit {id} "
            "--allow-detached)"
        )
    recorded = run["commit"] if run["commit"] and gitinfo.contains(project, run["commit"]) else None
    own = made[0] if made else recorded  # the milestone has its commit: what changed since is a fix
    paths = milestone_paths(milestone, project)
    tracked = project_git(repo, project, "ls-files", "-z", "--", *paths)
    known = set(tracked.decode("utf-8", "surrogateescape").split("\0"))
    keep = [p for p in paths if p in known or os.path.lexists(os.path.join(project, p))]
    theirs = [] if own else [p for p in run["dirty_at_apply"] if p in keep]
    if theirs and not include_uncommitted:
        raise PreconditionFailed(
            f"{id}: {', '.join(theirs)} held uncommitted edits of yours before "
            f"plan exec apply {id}; they would go into its commit (fix: commit them on "
            f"their own first, or rerun with plan exec commit {id} --include-uncommitted)"
        )
    index = _index_entries(repo, project, keep)
    if keep:
        project_git(repo, project, "add", "-A", "--", *keep)
    done: list[str] = []
    try:
        _commit_staged(tx, repo, project, milestone, own, keep, base, run, execution, done)
    except BaseException:
        if keep and not done:  # a refusal leaves the index as it found it
            _restore_index(repo, project, keep, index)
        raise


def _commit_staged(
    tx: Transaction,
    repo: str,
    project: str,
    milestone: Milestone,
    own: str | None,
    keep: list[str],
    base: str | None,
    run: MilestoneRun,
    execution: Execution,
    done: list[str],
) -> None:
    """Commit the milestone's staged files (`done` gets the commit once git made it), as a fix
    when it has its commit (`own`). Nothing staged: committed earlier (`own`), or by the
    person, recognised by content and recorded."""
    id, fix, session = milestone["id"], own is not None, tx.read("session")
    staged = (
        project_git(repo, project, "diff", "--cached", "--name-only", "-z", "--", *keep)
        if keep
        else b""
    )
    if not staged.strip(b"\0"):
        if own:
            tx.tell(f"{id}: already committed as {own[:12]}; nothing else to do")
            return
        by_hand = _committed_by_hand(tx, repo, project, id, base, execution, session, keep)
        if by_hand is None:
            raise PreconditionFailed(
                f"{id}: nothing to commit in its files, and HEAD does not hold its planned "
                f"diffs (fix: plan exec apply {id})"
            )
        sha, subject = by_hand
        run["commit"] = None
        _recorded(run, execution, sha, [])
        tx.note(recognised_commit=sha, milestone=id, by="content")
        tx.tell(
            f"{id}: committed by hand as {sha[:12]} {subject} (its files in HEAD hold its "
            "planned diffs); recorded as its commit"
        )
        return
    carried = [d for d in execution["deviations"] if d["milestone"] == id and not d["commit"]]
    trailers = [
        f"{SESSION_TRAILER}: {session['id']}",
        f"{MILESTONE_TRAILER}: {id}",
        *(f"{DEVIATION_TRAILER}: {d['id']}" for d in carried),
    ]
    message = commit_message(milestone, carried, fix) + "\n" + "\n".join(trailers) + "\n"
    project_git(repo, project, "commit", "-q", "-m", message, "--", *keep)
    done.append(id)
    # its own commit by its trailers: HEAD may already be another git's commit on top of it
    ours = _made_commit(repo, project, session, execution, id)
    sha = ours[0] if ours else project_git(repo, project, "rev-parse", "HEAD").decode().strip()
    if not fix:
        run["commit"] = None  # the milestone's commit, even when an older one left HEAD's history
    _recorded(run, execution, sha, [d["id"] for d in carried])
    tx.tell(f"{id}: committed {sha[:12]} {message.splitlines()[0]}")


def _committed_by_hand(
    tx: Transaction,
    repo: str,
    project: str,
    id: str,
    base: str | None,
    execution: Execution,
    session: Session,
    keep: list[str],
) -> tuple[str, str] | None:
    """(sha, subject) of the newest commit since the base that touched the milestone's files,
    when its files, which match HEAD (nothing staged), hold its planned diffs; else None."""
    try:
        _, _, found, results = planned_results(tx, id, project, base)
    except PreconditionFailed:
        return None
    if any(results[p] != found[p] for p in results) or not keep:
        return None
    log = ("log", "-1", "--format=%H %s", "HEAD")
    since = _since_base(session, execution)
    line = project_git(repo, project, *log, *since, "--", *keep).decode(errors="replace").strip()
    if not line:  # the base holds it already (a rewritten commit `plan rebase` moved past)
        line = project_git(repo, project, *log, "--", *keep).decode(errors="replace")
    sha, _, subject = line.strip().partition(" ")
    return (sha, subject) if gitinfo.is_commit_id(sha) else None


def _index_entries(repo: str, project: str, paths: list[str]) -> bytes:
    """The index's entries for `paths` (git ls-files -s -z), to put back on a refusal."""
    if not paths:
        return b""
    return project_git(repo, project, "ls-files", "-s", "-z", "--", *paths)


def _restore_index(repo: str, project: str, paths: list[str], entries: bytes) -> None:
    """The index's entries for `paths` as `entries` recorded them: staged by the refused
    command are unstaged, the person's own staging kept (git update-index --index-info)."""
    kept = [e for e in entries.split(b"\0") if e]
    known = {e.partition(b"\t")[2] for e in kept}
    zeros = b"0" * len(gitinfo.head_commit(project) or "0" * 40)
    listed = project_git(repo, project, "ls-files", "-z", "--", *paths)
    drop = [p for p in listed.split(b"\0") if p and p not in known]
    feed = b"".join(b"0 " + zeros + b"\t" + p + b"\0" for p in drop)
    feed += b"".join(e + b"\0" for e in kept)
    if feed:
        project_git(repo, project, "update-index", "-z", "--index-info", stdin=feed)


def _recorded(run: MilestoneRun, execution: Execution, sha: str, deviations: list[str]) -> None:
    """The milestone's commit (its first) or one more fix commit, and the deviations it names."""
    if run["commit"] is None:
        run["commit"] = sha
    elif sha != run["commit"] and sha not in run["fix_commits"]:
        run["fix_commits"].append(sha)
    for d in execution["deviations"]:
        if d["id"] in deviations:
            d["commit"] = sha


def _made_commit(
    repo: str, project: str, session: Session, execution: Execution, milestone: str
) -> tuple[str, list[str]] | None:
    """The newest commit on HEAD's ancestry since the base commit whose trailers name this
    session and milestone, with the deviations its trailers name; or None."""
    log = ("log", "-z", f"--format=%H%n%(trailers:{TRAILERS},valueonly=false)", "HEAD")
    since = _since_base(session, execution)
    done = wt.run(repo, *log, *since, "--", work_tree=project, cwd=project)
    if done.returncode:
        return None  # no commit yet (an unborn HEAD)
    want = {f"{SESSION_TRAILER}: {session['id']}", f"{MILESTONE_TRAILER}: {milestone}"}
    for entry in done.stdout.decode("utf-8", "replace").split("\0"):
        sha, _, trailers = entry.strip().partition("\n")
        lines = {line.strip() for line in trailers.splitlines()}
        if want <= lines:
            prefix = f"{DEVIATION_TRAILER}: "
            return sha, sorted(x.removeprefix(prefix) for x in lines if x.startswith(prefix))
    return None


def project_git(repo: str, project: str, *args: str, stdin: bytes | None = None) -> bytes:
    """git's stdout for a command on the project's work tree (state/repo/worktree.git)."""
    return wt.git(repo, *args, work_tree=project, cwd=project, stdin=stdin)


def _since_base(session: Session, execution: Execution) -> list[str]:
    """The `git log` limit that leaves out the session's base commit and what it holds."""
    base = execution["base_commit"] or session["base_commit"]
    return [f"^{gitinfo.commit_id(base, 'execution.json:base_commit')}"] if base else []


def _detached(repo: str, project: str) -> bool:
    done = wt.run(repo, "symbolic-ref", "-q", "HEAD", work_tree=project, cwd=project)
    return done.returncode == 1


def milestone_paths(milestone: Milestone, project: str) -> list[str]:
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
    found = gitinfo.git_dir(project)
    if found is None:
        raise PreconditionFailed(f"{project}: not a git repository (fix: git init)")
    return found
