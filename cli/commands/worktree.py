"""`plan worktree`: the session's scratch worktree, where planning edits real files;
`plan change capture` turns its edits into the plan's diffs."""

from __future__ import annotations

import click

from cli.base import PlanCommand, dump, open_store, out
from cli.output import tell
from state.errors import Refused
from state.repo import worktree
from state.rules.amendments import worktree_round
from state.vocab import CLOSED


@click.command("worktree", cls=PlanCommand)
def worktree_command(state_dir: str | None, as_json: bool) -> None:
    """Create (once) a checkout of the base commit in the session and print its path (in an
    amendment: of HEAD, with the planned diffs not committed yet).

    Edit files there with your file tools and run the tests there; then
    `plan change capture` records the edits as the plan's diffs. It is never committed,
    writes nothing to the project's .git, and is removed when the session is closed.
    """
    store = open_store(state_dir)
    store.recover()
    session = store.read("session")
    if session["status"] in CLOSED:  # a closed session's worktree was removed with it
        raise Refused(f"{store.dir}: the session is {session['status']}; it has no worktree")
    made = worktree.ensure(
        store, session, *worktree_round(session, store.read_or_none("execution"))
    )
    if made["gone"]:
        tell(
            f"the worktree started from {made['gone'][:12]}, which is gone from git (history "
            "rewritten); made again from HEAD (edits not captured there are not kept)"
        )
    if as_json:
        dump(
            {
                "path": made["path"],
                "base_commit": session["base_commit"],
                "start": made["start"],
                "created": made["created"],
            }
        )
        return
    out(made["path"])
    if made["created"]:
        start, round_ = made["start"][:12], made["round"]
        what = f"HEAD {start} (amendment round {round_})" if round_ else start
        tell(f"worktree of {what} created; edit there, then: plan change capture")
    if made["failed"]:
        tell(
            f"no longer apply on HEAD, left as HEAD has them: {', '.join(made['failed'])} "
            "(capture those files again for their intents)"
        )
