"""`plan exec`: the executor's record of milestones started and done, and deviations,
through state/ops/exec_commands.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from cli.base import TEXT, Operation, PlanGroup, open_store, out, target_id
from state.errors import PlannerError
from state.ops import exec_commands as ops
from state.vocab import RunStatus, WorkflowName

if TYPE_CHECKING:
    from shared.workflow import Flags
    from state.rules.session_store import Store

MILESTONE = click.argument("id", metavar="M-n")


@click.group("exec", cls=PlanGroup)
def exec_command() -> None:
    """Execution: milestones started, applied, done and committed; tests run; deviations."""


@exec_command.command("start", cls=Operation, op=ops.exec_start)
@MILESTONE
def exec_start() -> None:
    """Mark a milestone in progress.

    Refused (exit 4) when another planner session committed to its files since the base
    commit: the refusal asks the person yes or no (plan question answer, plan ask)."""


@exec_command.command("apply", cls=Operation, op=ops.exec_apply)
@MILESTONE
def exec_apply() -> None:
    """Apply the milestone's planned diffs to the project, in plan order, all or nothing.

    A file that moved on since planning is merged three-way; a conflict names the change,
    the file and the hunk, exits 3, and leaves every file as it was. The files land with the
    session's record in one transaction: killed at any moment, the next command finishes or
    undoes it, and a rerun (or a diff applied by hand) is recognised as already applied.
    Refused (exit 4) when another planner session committed to its files since the base
    commit: the refusal asks the person yes or no; their yes lets the three-way apply decide.
    """


class CompletesWave(Operation):
    """`plan exec done --commit` (and `plan exec commit`) that completes the wave executor step
    3 shows prints the step that follows in the same call (the next wave, or the review), as a
    gate prints the step it leads to: nothing is left to do between them (docs/design.md,
    "Chained steps")."""

    def invoke(self, ctx: click.Context) -> int:
        code: int = super().invoke(ctx)
        committed = ctx.params.get("commit", True)  # exec commit always; exec done with --commit
        if committed and not ctx.params["as_json"]:
            wave_done(open_store(ctx.params["state_dir"]), ctx.params["id"])
        return code


@exec_command.command("commit", cls=CompletesWave, op=ops.exec_commit)
@MILESTONE
@click.option(
    "--allow-detached", is_flag=True, help="Commit even though HEAD is detached (on no branch)."
)
@click.option(
    "--include-uncommitted",
    is_flag=True,
    help="Commit your own edits that its files held before exec apply, with the milestone.",
)
def exec_commit() -> None:
    """Commit the milestone's files: "M-001 Name: CI-001, CI-002" (config commit = "none": not).

    Run again after a fix, it commits what changed in its files since as
    "M-001 Name (fix: DV-001, DV-002)", naming the deviations recorded since its last commit.
    The commit's trailers (Planner-Session, Planner-Milestone, Planner-Deviation) let a rerun
    find and record it.
    Refused (exit 3) on a detached HEAD, or when its files held edits of yours before exec
    apply, unless the flag says so.
    """


def wave_done(store: Store, milestone: str) -> None:
    """Run the step executor step 3 routes to once every milestone of `milestone`'s wave is
    done; a step that is not ready refuses before it writes, and its NEXT line stands."""
    session = store.read("session")
    if session["workflow"] != WorkflowName.EXECUTOR:
        return
    status = {m["id"]: m["status"] for m in store.read("execution")["milestones"]}
    waves = store.read("plan")["milestone_dependencies"]["waves"]
    wave = next((w["milestones"] for w in waves if milestone in w["milestones"]), [])
    if not wave or any(status.get(m) != RunStatus.DONE for m in wave):
        return
    from shared import engine  # the step engine loads here only, as `plan amend`'s does
    from shared.workflow import workflow_named

    executor = workflow_named(WorkflowName.EXECUTOR)
    if session["step"] != executor.named("impl-execute").number:
        return
    # where step 3 routes now: another wave, or the review once every wave is done
    pending = any(status.get(m) != RunStatus.DONE for w in waves for m in w["milestones"])
    step = executor.named("impl-execute" if pending else "impl-code-qr")
    flags: Flags = {"state_dir": store.dir}
    try:
        chain = engine.decide(executor, step.number, flags, store, True)
    except PlannerError:
        return
    out(f"executor step {step.number} follows (run here: do not run it again).")
    out(engine.show(chain, flags))


@exec_command.command("done", cls=CompletesWave, op=ops.exec_done)
@MILESTONE
@click.option("--evidence", multiple=True, help="What shows it works (repeatable).")
@click.option(
    "--ran", multiple=True, metavar="TEST_FILE", help="A test file that was run (repeatable)."
)
@click.option("--commit", is_flag=True, help="Then commit it, as plan exec commit M-n does.")
def exec_done() -> None:
    """Mark a milestone done, with the evidence and the tests that were run; with --commit,
    commit it in the same call."""


@exec_command.command("deviation", cls=Operation, op=ops.exec_deviation)
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
def exec_deviation() -> None:
    """Record where the implementation departs from milestone M-n, and why.

    A significant deviation (it drops an acceptance criterion or adds a dependency, as
    declared; or its milestone's commits change files outside the milestone or add a
    dependency, as git shows) asks the person one question: continue, amend or stop.
    The implementation gate waits for the answer."""
