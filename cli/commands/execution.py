"""`plan exec`: the executor's record of milestones started and done, and deviations,
through state/ops/exec_ops.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cli.base import TEXT, Operation, PlanGroup, open_store, out, target_id
from state.errors import PlannerError
from state.ops import exec_apply as ops
from state.ops import exec_ops
from state.validation import asks
from state.validation.planning import refuse_while_planning
from state.vocab import RunStatus, WorkflowName

if TYPE_CHECKING:
    from shared.workflow import Flags
    from state.storage.store import Store, Transaction

MILESTONE = click.argument("id", metavar="M-n")


class Execution(Operation):
    """A `plan exec` command, in a batch as on the command line: refused (exit 4) while any
    session of the project is planning, whatever --state-dir names."""

    def run(self, tx: Transaction, args: dict[str, object]) -> list[str]:
        refuse_while_planning(tx.store.dir)
        return super().run(tx, args)


@click.group("exec", cls=PlanGroup)
def exec_command() -> None:
    """Execution: milestones started, applied, done and committed; tests run; deviations."""


@exec_command.command("start", cls=Execution)
@MILESTONE
def exec_start(tx: Transaction, *, id: str) -> None:
    """Mark a milestone in progress.

    Refused (exit 4) when another planner session committed to its files since the base
    commit: the refusal asks the person yes or no (plan question answer, plan ask)."""
    asks.before_start(tx, id)
    exec_ops.exec_start(tx, id=id)


@exec_command.command("apply", cls=Execution)
@MILESTONE
def exec_apply(tx: Transaction, *, id: str) -> None:
    """Apply the milestone's planned diffs to the project, in plan order, all or nothing.

    A file that moved on since planning is merged three-way; a conflict names the change,
    the file and the hunk, exits 3, and leaves every file as it was. The files land with the
    session's record in one transaction: killed at any moment, the next command finishes or
    undoes it, and a rerun (or a diff applied by hand) is recognised as already applied.
    Refused (exit 4) when another planner session committed to its files since the base
    commit: the refusal asks the person yes or no; their yes lets the three-way apply decide.
    """
    asks.before_apply(tx, id)
    ops.exec_apply(tx, id=id)


@exec_command.command("commit", cls=Execution)
@MILESTONE
@click.option(
    "--allow-detached", is_flag=True, help="Commit even though HEAD is detached (on no branch)."
)
@click.option(
    "--include-uncommitted",
    is_flag=True,
    help="Commit your own edits that its files held before exec apply, with the milestone.",
)
def exec_commit(
    tx: Transaction, *, id: str, allow_detached: bool, include_uncommitted: bool
) -> None:
    """Commit the milestone's files: "M-001 Name: CI-001, CI-002" (config commit = "none": not).

    Run again after a fix, it commits what changed in its files since as
    "M-001 Name (fix: DV-001, DV-002)", naming the deviations recorded since its last commit.
    The commit's trailers (Planner-Session, Planner-Milestone, Planner-Deviation) let a rerun
    find and record it.
    Refused (exit 3) on a detached HEAD, or when its files held edits of yours before exec
    apply, unless the flag says so.
    """
    ops.exec_commit(
        tx, id=id, allow_detached=allow_detached, include_uncommitted=include_uncommitted
    )
    asks.after_commit(tx, id)


class Done(Execution):
    """`plan exec done --commit` that completes the wave executor step 3 shows prints the step
    its NEXT line names in the same call (the next wave, or the review), as a gate prints the
    step it leads to: nothing is left to do between them (docs/design.md, "Chained steps")."""

    def invoke(self, ctx: click.Context) -> int:
        code: int = super().invoke(ctx)
        if ctx.params["commit"] and not ctx.params["as_json"]:
            wave_done(open_store(ctx.params["state_dir"]), ctx.params["id"])
        return code


def wave_done(store: Store, milestone: str) -> None:
    """Run the step executor step 3 routes to once every milestone of `milestone`'s wave is
    done; a step that is not ready refuses before it writes, and its NEXT line stands."""
    session = store.read("session")
    argv = session["routing"].get("next") or []
    if (session["workflow"], session["step"]) != (WorkflowName.EXECUTOR, 3) or argv[:2] != [
        "executor",
        "--step",
    ]:
        return
    status = {m["id"]: m["status"] for m in store.read("execution")["milestones"]}
    waves = store.read("plan")["milestone_dependencies"]["waves"]
    wave = next((w["milestones"] for w in waves if milestone in w["milestones"]), [])
    if not wave or any(status.get(m) != RunStatus.DONE for m in wave):
        return
    # the routing step 3 has now (its NEXT was recorded when it showed the wave just done)
    pending = any(status.get(m) != RunStatus.DONE for w in waves for m in w["milestones"])
    argv = ["executor", "--step", "3" if pending else "4"]
    from shared import engine  # the step engine loads here only, as `plan amend`'s does
    from shared.workflow import workflow_named

    flags: Flags = {"state_dir": store.dir}
    try:
        chain = engine.decide(workflow_named("executor"), int(argv[2]), flags, store, True)
    except PlannerError:
        return
    out(f"executor step {argv[2]} follows (run here: do not run it again).")
    engine.show(chain, flags)


@exec_command.command("done", cls=Done)
@MILESTONE
@click.option("--evidence", multiple=True, help="What shows it works (repeatable).")
@click.option(
    "--ran", multiple=True, metavar="TEST_FILE", help="A test file that was run (repeatable)."
)
@click.option("--commit", is_flag=True, help="Then commit it, as plan exec commit M-n does.")
def exec_done(
    tx: Transaction, *, id: str, evidence: list[str], ran: list[str], commit: bool
) -> None:
    """Mark a milestone done, with the evidence and the tests that were run; with --commit,
    commit it in the same call."""
    exec_ops.exec_done(tx, id=id, evidence=evidence, ran=ran)
    if commit:
        ops.exec_commit(tx, id=id)
        asks.after_commit(tx, id)


@exec_command.command("deviation", cls=Execution)
@target_id("M-n", "--milestone")
@click.option(
    "--description", required=True, type=TEXT, help="What departs from the plan, and why."
)
@click.option(
    "--drops-acceptance",
    multiple=True,
    type=TEXT,
    metavar="TEXT",
    help="An acceptance criterion it drops (repeatable): significant, asks the person.",
)
@click.option(
    "--adds-dependency",
    multiple=True,
    type=TEXT,
    metavar="NAME",
    help="A dependency it adds (repeatable): significant, asks the person.",
)
def exec_deviation(
    tx: Transaction,
    *,
    id: str,
    description: str,
    drops_acceptance: list[str],
    adds_dependency: list[str],
) -> list[str]:
    """Record where the implementation departs from milestone M-n, and why.

    A significant deviation (it drops an acceptance criterion or adds a dependency, as
    declared; or its milestone's commits change files outside the milestone or add a
    dependency, as git shows) asks the person one question: continue, amend or stop.
    The implementation gate waits for the answer."""
    ids = exec_ops.exec_deviation(tx, milestone=id, description=description)
    asks.after_deviation(
        tx, ids[0], drops_acceptance=drops_acceptance, adds_dependency=adds_dependency
    )
    return ids
