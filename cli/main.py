"""The `plan` command: one table of commands (the operations of state/ops.py and the readers
of cli/commands.py), parsed by cli/fastargs.py when it can and by click otherwise.

Both parsers end in execute(), so a command behaves the same whichever parsed it.
"""

from __future__ import annotations

import sys

from shared.exits import report, run_main
from state.errors import UsageError
from state.ops import Op, Param, run_op

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import click

    from state.store import Store

COMMON = (
    Param(
        "state_dir",
        metavar="DIR",
        help="Session directory (else $PLANNER_STATE_DIR, else .planner/ACTIVE).",
    ),
    Param("json", switch=True, help="Machine-readable output."),
)


class Command:
    """An operation or a reader as the command line sees it: its params plus the common ones."""

    __slots__ = ("help", "name", "params", "target")

    def __init__(self, target: Any):
        own = {p.name for p in target.params}
        self.target, self.name, self.help = target, target.name, target.help
        self.params = (*target.params, *(p for p in COMMON if p.name not in own))


def table() -> dict[str, Command]:
    """Every command by name ("decision add", "status")."""
    from cli import ask  # noqa: F401  (registers plan ask)
    from cli.commands import READERS
    from state.ops import load_all

    targets: list[Any] = [*load_all().values(), *READERS.values()]
    return {c.name: Command(c) for c in targets}


def open_store(state_dir: str | None, must_exist: bool = True) -> Store:
    """The session store from --state-dir, $PLANNER_STATE_DIR or .planner/ACTIVE."""
    from shared.paths import open_session

    return open_session(state_dir, must_exist)


def read_content(value: str, option: str) -> str:
    """FILE|-: the file's text, or standard input for '-'."""
    if value == "-":
        return sys.stdin.read()
    try:
        with open(value, encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        reason = getattr(e, "strerror", None) or str(e)
        raise UsageError(f"{option}: cannot read {value} ({reason})") from None


def out(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def emit_ids(ids: list[str], as_json: bool, next_argv: list[str] | None = None) -> None:
    """Created ids on stdout; the next command (when there is one) on stderr, or in the JSON."""
    from shared.routing import command

    if as_json:
        import json

        record: dict[str, Any] = {"ids": ids}
        if next_argv:
            record["next"] = command(next_argv)
        out(json.dumps(record))
        return
    if ids:
        out("\n".join(ids))
    if next_argv:
        sys.stderr.write(f"NEXT: {command(next_argv)}\n")


def execute(command: Command, args: dict[str, Any]) -> int:
    """Run a parsed command: an operation on the session, or a reader."""
    target = command.target
    if not isinstance(target, Op):
        return target.run(args) or 0
    for p in target.params:
        if p.content and args[p.name] is not None:
            args[p.name] = read_content(args[p.name], p.option)
    store = open_store(args.pop("state_dir"))
    as_json = args.pop("json")
    tx = run_op(store, target.name, args)
    for line in tx.told:
        sys.stderr.write(line + "\n")
    emit_ids(tx.created, as_json, tx.next_argv)
    return 0


def _click_param(p: Param) -> click.Parameter:
    import click

    kind = click.Choice(p.type) if isinstance(p.type, tuple) else p.type
    # click 8.5 treats an explicit default=None as a default, which satisfies `required`.
    default = {} if p.default is None else {"default": p.default}
    if p.positional:
        many = {"nargs": -1} if p.multiple else default
        return click.Argument(
            [p.name], type=kind, required=p.required, metavar=p.metavar or p.name.upper(), **many
        )
    if p.flag:
        dashed = p.name.replace("_", "-")
        return click.Option([f"--{dashed}/--no-{dashed}", p.name], default=None, help=p.help)
    if p.switch:
        return click.Option([p.option, p.name], is_flag=True, default=False, help=p.help)
    names = [p.option, p.short] if p.short else [p.option]
    return click.Option(
        [*names, p.name],
        type=kind,
        multiple=p.multiple,
        required=p.required,
        help=p.help + (" (FILE, or - for stdin)" if p.content else ""),
        metavar=p.metavar or ("FILE|-" if p.content else None),
        show_default=p.default is not None,
        **default,
    )


def build_click(commands: dict[str, Command], run: Any = execute) -> click.Group:
    """The click group for the same table; `run(command, args)` is called with parsed args."""
    import click

    root = click.Group("plan", help="Record, read and check a planner session's plan.")
    for command in commands.values():
        *path, word = command.name.split()
        group = root
        for name in path:
            sub = group.commands.get(name)
            if not isinstance(sub, click.Group):
                sub = click.Group(name, help=f"{name.capitalize()} commands.")
                group.add_command(sub)
            group = sub

        def callback(_command: Any = command, **args: Any) -> Any:
            args = {k: list(v) if isinstance(v, tuple) else v for k, v in args.items()}
            return run(_command, args)

        group.add_command(
            click.Command(
                word,
                callback=callback,
                help=command.help,
                params=[_click_param(p) for p in command.params],
            )
        )
    return root


def _with_click(argv: list[str], commands: dict[str, Command]) -> int:
    import click

    try:
        result = build_click(commands).main(args=argv, prog_name="plan", standalone_mode=False)
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.ClickException as e:
        ctx = getattr(e, "ctx", None)
        report(ctx.command_path if ctx else "plan", e.format_message().replace("\n", " "))
        return e.exit_code
    except click.Abort:
        report("plan", "aborted")
        return 1
    return result if isinstance(result, int) else 0


def dispatch(argv: list[str]) -> int:
    from cli.fastargs import parse

    commands = table()
    parsed = parse(argv, commands)
    if parsed is None:
        return _with_click(argv, commands)
    return execute(*parsed)


def main(argv: list[str] | None = None) -> int:
    return run_main("plan", lambda: dispatch(sys.argv[1:] if argv is None else argv))
