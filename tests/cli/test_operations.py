"""Every operation takes the command's own parameters as keywords, by their click names: what
click passes is what the state/ function declares (cli/base.py Operation), and every command
that changes the session declares its operation one way, `op=` (its callback is help text)."""

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
    required = {p.name for p in rest if p.default is inspect.Parameter.empty}
    own = {  # an id's former option spelling is folded into `id` (cli/base.py target_id)
        p.name
        for p in command.params
        if p.expose_value and p.name not in COMMON and not getattr(p, "alias_of_id", None)
    }
    if required <= own <= keywords:  # a keyword with a default is another caller's (the page)
        return ""
    return f"op takes {sorted(keywords)}, click passes {sorted(own)}"


def test_every_operation_takes_its_parameters_as_keywords() -> None:
    found = operations(plan)
    assert "overview set" in found and "decision add" in found
    for name, command in found.items():
        assert not mismatch(command), f"plan {name}: {mismatch(command)}"


def test_a_misspelt_or_positional_keyword_is_caught() -> None:
    def misspelt(tx: object, *, titel: str | None) -> None: ...

    def positional(tx: object, title: str | None) -> None: ...

    def right(tx: object, *, title: str | None) -> None: ...

    def wider(tx: object, *, title: str | None, by: str | None = None) -> None: ...

    def needs_more(tx: object, *, title: str | None, by: str | None) -> None: ...

    def command(op: object) -> Operation:
        return Operation("x", params=[click.Option(["--title"])], op=op)  # type: ignore[arg-type]

    assert "click passes ['title']" in mismatch(command(misspelt))
    assert "keyword-only" in mismatch(command(positional))
    assert mismatch(command(right)) == "" and mismatch(command(wider)) == ""
    assert "click passes ['title']" in mismatch(command(needs_more))


def test_every_operation_declares_its_op_and_its_callback_does_nothing() -> None:
    """`op=` is the one way an Operation names what it does: a callback that took `tx` would
    be a second way, and would never run."""
    for name, command in operations(plan).items():
        assert command.callback is not None, name
        assert not inspect.signature(command.callback).parameters, f"plan {name}"
        assert command.op is not command.callback, f"plan {name}"
