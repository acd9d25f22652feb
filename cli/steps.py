"""The step scripts `planner` and `executor` as click commands: a step by
number, `next`, `status` and `role`. The workflows are registered with the engine here."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Literal

import click

from cli import workflows
from cli.base import CheckedCommand, CheckedGroup, run_click
from cli.exits import run_main
from cli.output import line, out
from shared import engine
from shared.paths import open_session
from shared.routing import argv_of
from shared.status import current_routing
from shared.workflow import Flags, workflow_named
from skills.planner.roles import ROLES, role_prompt
from state.errors import UsageError
from state.routes import StepRef
from state.vocab import WorkflowName

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
STATE_DIR_HELP = "The session's directory (default: $PLANNER_STATE_DIR, else .planner/ACTIVE)."
VERDICT = click.Choice(["pass", "fail"])
FORMAT = click.Choice(["text", "json"])
STATE_DIR = click.option("--state-dir", metavar="DIR", help=STATE_DIR_HELP)  # one Option a use


def version() -> str:
    import tomllib
    from importlib import metadata  # ~2x `python -c pass` to import: only for --version

    try:
        return metadata.version("planner")
    except metadata.PackageNotFoundError:  # run from a checkout by the plugin's bin/ launchers
        pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
        return str(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"])


def show_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        click.echo(f"{ctx.info_name} {version()}")
        ctx.exit(0)


def step_script(name: str) -> click.Group:
    """The `planner` or `executor` command: its workflow is looked up when a step runs."""

    @click.group(
        name=name,
        cls=CheckedGroup,
        invoke_without_command=True,
        context_settings=CONTEXT,
        help=f"Run the {name} workflow one step at a time: each step prints what to do and "
        "the exact command to run next.",
    )
    @click.option(
        "--version",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=show_version,
        help="Show the version and exit.",
    )
    @click.option("--step", type=int, metavar="N", help="The step to run (see the routing lines).")
    @STATE_DIR
    @click.option("--qr-status", type=VERDICT, help="The review's verdict, at a gate step.")
    @click.option("--format", "format_", type=FORMAT, help="text (default) or one JSON object.")
    @click.option("--non-interactive", is_flag=True, help="Nobody is asked: recommended answers.")
    @click.pass_context
    def group(
        ctx: click.Context,
        /,
        step: int | None,
        state_dir: str | None,
        qr_status: str | None,
        format_: str | None,
        non_interactive: bool,
        task: str | None = None,
        depth: Literal["quick", "standard"] | None = None,  # a click.Choice of these
    ) -> int:
        if ctx.invoked_subcommand is not None:
            if step is not None:
                raise click.UsageError(f"--step and {ctx.invoked_subcommand}: give one of them")
            return 0
        if step is None:
            raise click.UsageError(f"--step N is required, N a step number (see {name} --help)")
        flags: Flags = {
            "step": step,
            "state_dir": state_dir,
            "qr_status": qr_status,
            "format": format_,
            "non_interactive": non_interactive,
            "task": task,
            "depth": depth,
        }
        workflow = workflow_named(name)
        if workflow.start is not None and step == 1 and task is not None:
            out(workflow.start(workflow, flags))
            return 0
        if task is not None or depth is not None:
            raise UsageError("--task and --depth start a session: only with --step 1")
        out(engine.run(workflow, step, flags))
        return 0

    if name == WorkflowName.PLANNER:
        click.option(
            "--depth",
            type=click.Choice(["quick", "standard"]),
            help="How much planning the task needs (with --task).",
        )(group)
        click.option("--task", metavar="TEXT", help="Start a session: what to plan.")(group)

    for subcommand in (run_next, status, role):
        group.add_command(subcommand)
    return group


@click.command(name="next", cls=CheckedCommand, context_settings=CONTEXT)
@STATE_DIR
@click.option("--qr-status", type=VERDICT, help="Which way a gate's review went.")
@click.option("--format", "format_", type=FORMAT, help="text (default) or one JSON object.")
def run_next(state_dir: str | None, qr_status: str | None, format_: str | None) -> int:
    """Run the command the session's routing names now (IF PASS / IF FAIL by --qr-status)."""
    store = open_session(state_dir)
    routing = current_routing(store, engine.open_for_steps(store))
    if routing.done:
        raise UsageError("nothing to run next: the workflow is done")
    if routing.next is None and not qr_status:
        raise UsageError("the last step routes by verdict: give --qr-status pass|fail")
    target = routing.next or (routing.if_pass if qr_status == "pass" else routing.if_fail)
    if not isinstance(target, StepRef):
        return run_argv(target or [])  # a `plan` command: the person's verdict, …
    json_format = ["--format", "json"] if format_ == "json" else []
    return invoke(target.workflow, [*argv_of(target)[1:], *json_format])


@click.command(cls=CheckedCommand, context_settings=CONTEXT)
@STATE_DIR
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
def status(state_dir: str | None, as_json: bool) -> int:
    """Where the session stands and what to run next (no session active here, as in a
    fresh clone: the only open one, else the list; `plan status` says the same)."""
    from cli.commands.session import show_status

    show_status(state_dir, as_json, line)
    return 0


@click.command(cls=CheckedCommand, context_settings=CONTEXT)
@click.argument("role", metavar="|".join(ROLES))
@STATE_DIR
def role(role: str, state_dir: str | None) -> int:
    """The role's own instructions, for the step the session is at."""
    if role not in ROLES:
        raise UsageError(f"role: {role!r} is not one of {', '.join(ROLES)}")
    line(role_prompt(role, open_session(state_dir)))
    return 0


def invoke(name: str, argv: list[str]) -> int:
    """Run step script `name` with argv in this process; click's errors become exit 2."""
    command = step_script(name)
    if not argv:  # nothing asked: the help, and a usage error
        line(command.get_help(click.Context(command, info_name=name)))
        return 2
    return run_click(command, argv, name)


def run_argv(argv: list[str]) -> int:
    """Run a routed command (planner …, executor …, plan …) in this process."""
    if argv[0] == "plan":
        from cli.main import dispatch  # the `plan` CLI, loaded only when a route names it

        return int(dispatch(argv[1:]) or 0)
    return invoke(argv[0], argv[1:])


def main(name: str) -> int:
    """The entry point of a step script."""
    workflows.register_all()
    return run_main(name, lambda: invoke(name, sys.argv[1:]))


def planner() -> int:
    return main("planner")


def executor() -> int:
    return main("executor")
