"""The `plan` command group: every command is a click command in a module of cli/commands/,
loaded when it is used (click's LazyGroup recipe); errors become one line and an exit code.
"""

from __future__ import annotations

import importlib
import sys

import click

from cli.base import PlanGroup, run_click
from cli.exits import run_main

# Each module of cli/commands/ and the top-level commands or groups it defines.
MODULES = {
    "session": ("status", "list", "resume"),
    "ending": ("cancel", "fail"),
    "reading": ("show", "render", "log", "history", "diff", "waves"),
    "checks": ("validate", "verify", "schema"),
    "design": (
        *("overview", "decision", "alternative", "constraint"),
        *("risk", "knowledge", "invariant", "tradeoff"),
    ),
    "milestones": ("milestone", "intent", "change", "doc"),
    "discovery": ("context", "question", "choice", "ask"),
    "review": ("review", "qr"),
    "result": ("result",),
    "execution": ("exec",),
    "apply": ("apply",),
    "worktree": ("worktree",),
    "amend": ("amend",),
    "rebase": ("rebase",),
    "restore": ("restore",),
    "mcp": ("mcp",),
}
COMMANDS = {name: module for module, names in MODULES.items() for name in names}


class LazyGroup(PlanGroup):
    """The root group: a command's module is imported only when that command is used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return super().get_command(ctx, cmd_name)
        module = importlib.import_module(f"cli.commands.{COMMANDS[cmd_name]}")
        command = getattr(module, f"{cmd_name}_command")
        assert isinstance(command, click.Command), cmd_name
        return command


@click.group(
    "plan",
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(package_name="planner", prog_name="plan", message="%(prog)s %(version)s")
def plan() -> None:
    """Record, read and check a planner session's plan.

    Mutations print the ids they create on stdout, one per line (--json for an object);
    everything else goes to stderr. Each command takes --state-dir DIR (else
    $PLANNER_STATE_DIR, else the project's .planner/ACTIVE session).
    """


def dispatch(argv: list[str]) -> int:
    """Run `plan ARGV` in this process; click's usage errors become one line and exit 2."""
    return run_click(plan, argv, "plan")


def main(argv: list[str] | None = None) -> int:
    return run_main("plan", lambda: dispatch(sys.argv[1:] if argv is None else argv))
