"""The `plan` click tree, walked: every command and group by its path after `plan`."""

from __future__ import annotations

import click

from cli.base import Operation
from cli.main import plan


def walk() -> dict[str, click.Command]:
    """Every group and command: {"decision": group, "decision add": command, …}."""
    ctx = click.Context(plan, info_name="plan")
    found: dict[str, click.Command] = {}

    def visit(group: click.Group, path: str) -> None:
        for word in group.list_commands(ctx):
            command = group.get_command(ctx, word)
            assert command is not None, path + word
            found[path + word] = command
            if isinstance(command, click.Group):
                visit(command, f"{path}{word} ")

    visit(plan, "")
    return found


def commands() -> dict[str, click.Command]:
    """The commands one can run (no groups)."""
    return {name: c for name, c in walk().items() if not isinstance(c, click.Group)}


def operations() -> dict[str, Operation]:
    """The commands that change the session (and that `plan apply` runs)."""
    return {name: c for name, c in walk().items() if isinstance(c, Operation)}
