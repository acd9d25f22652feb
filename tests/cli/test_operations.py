"""Every operation takes the command's own parameters as keywords, by their click names: what
click passes is what the state/ function declares (cli/base.py Operation)."""

from __future__ import annotations

import inspect

import click

from cli.base import COMMON, Operation
from cli.main import plan


def operations(group: click.Group, path: str = "") -> dict[str, Operation]:
    """Every Operation under `group` by its path ("decision add"), lazy groups loaded."""
    ctx = click.Context(group)
    found: dict[str, Operation] = {}
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            found |= operations(command, f"{path}{name} ")
        elif isinstance(command, Operation):
            found[path + name] = command
    return found


def mismatch(command: Operation) -> str:
    """Why the op does not take exactly the command's own parameters as keywords ("" if it does)."""
    first, *rest = inspect.signature(command.op).parameters.values()
    if first.name != "tx":
        return f"its first parameter is {first.name}, not tx"
    if any(p.kind is not inspect.Parameter.KEYWORD_ONLY for p in rest):
        return "parameters after tx must be keyword-only"
    keywords = {p.name for p in rest}
    own = {  # an id's former option spelling is folded into `id` (cli/base.py target_id)
        p.name
        for p in command.params
        if p.expose_value and p.name not in COMMON and not getattr(p, "alias_of_id", None)
    }
    return "" if keywords == own else f"op takes {sorted(keywords)}, click passes {sorted(own)}"


def test_every_operation_takes_its_parameters_as_keywords() -> None:
    found = operations(plan)
    assert "overview set" in found and "decision add" in found
    for name, command in found.items():
        assert not mismatch(command), f"plan {name}: {mismatch(command)}"


def test_a_misspelt_or_positional_keyword_is_caught() -> None:
    def misspelt(tx: object, *, titel: str | None) -> None: ...

    def positional(tx: object, title: str | None) -> None: ...

    def right(tx: object, *, title: str | None) -> None: ...

    def command(op: object) -> Operation:
        return Operation("x", params=[click.Option(["--title"])], op=op)  # type: ignore[arg-type]

    assert "click passes ['title']" in mismatch(command(misspelt))
    assert "keyword-only" in mismatch(command(positional))
    assert mismatch(command(right)) == ""
