"""`plan worktree`: the session's scratch worktree, where planning edits real files;
`plan change capture` turns its edits into the plan's diffs."""

from __future__ import annotations

import os

import click

from cli.base import PlanCommand, dump, open_store, out
from cli.output import tell
from state.errors import Refused
from state.ops.lifecycle import FINAL
from state.project import session_project
from state.repo import worktree
from state.repo.git import missing_commits
from state.storage.lock import locked
from state.validation.amendments import committed


@click.command("worktree", cls=PlanCommand)
def worktree_command(state_dir: str | None, as_json: bool) -> None:
    """Create (once) a checkout of the base commit in the session and print its path.

    Edit files there with your file tools and run the tests there; then
    `plan change capture` records the edits as the plan's diffs. It is never committed,
    writes nothing to the project's .git, and is removed when the session is closed.
    """
    store = open_store(state_dir)
    store.recover()
    session = store.read("session")
    if session["status"] in FINAL:  # a closed session's worktree was removed with it
        raise Refused(f"{store.dir}: the session is {session['status']}; it has no worktree")
    base = worktree.base_of(session, f"{store.path('session')}:base_commit")
    project = session_project(store.dir)
    worktree.check_present(project, base, f"{store.path('session')}:base_commit")
    start, round_ = worktree.start(project, session, base)  # an amendment's: HEAD
    if start != base:
        worktree.check_present(project, start, f"{project}: HEAD", "HEAD")
    failed: list[str] = []
    # its own lock: a checkout may take longer than the session lock waits for
    with locked(os.path.join(store.dir, ".worktree.lock"), timeout=worktree.CREATE_TIMEOUT_S):
        was = worktree.start_of(project, worktree.path_of(store.dir))
        if round_ and was and was != start and missing_commits(project, [was]):
            # an amendment's worktree whose HEAD git no longer has: never handed out
            worktree.remove(project, store.dir)
            tell(
                f"the worktree started from {was[:12]}, which is gone from git (history "
                "rewritten); made again from HEAD (edits not captured there are not kept)"
            )
        path, created = worktree.create(project, store.dir, start, round_)
        if created and round_:
            execution = store.read_or_none("execution")
            done = (
                {r["id"] for r in execution["milestones"] if committed(r)} if execution else set()
            )
            failed = worktree.apply_pending(path, store.read("plan"), done)
            worktree.mark(store.dir, round_)
    if as_json:
        dump({"path": path, "base_commit": base, "start": start, "created": created})
        return
    out(path)
    if created:
        what = f"HEAD {start[:12]} (amendment round {round_})" if round_ else start[:12]
        tell(f"worktree of {what} created; edit there, then: plan change capture")
    if failed:
        tell(
            f"no longer apply on HEAD, left as HEAD has them: {', '.join(failed)} (capture "
            "those files again for their intents)"
        )
