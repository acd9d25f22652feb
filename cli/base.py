"""What every `plan` command shares: the command classes (--state-dir and --json on each,
operations run in a store transaction), the FILE|- and non-blank text types, and output.

An Operation runs its state/ function (`op`) with the open transaction and the command's own
parameters as keywords, by their click names (repeatable options as lists), through
state/ops/perform.py; it returns the ids it created. `plan apply` runs the same function
through the same parameters. tests/cli/test_operations.py keeps every op's keywords equal
to its parameters.
"""

from __future__ import annotations

import itertools
import sys
from typing import TYPE_CHECKING, Any

import click

from cli.exits import run_main
from cli.output import dump as dump  # the commands' output, re-exported where they look
from cli.output import emit_ids as emit_ids
from cli.output import out as out
from cli.output import tell
from shared.paths import open_session
from state.errors import PlannerError, UsageError
from state.routes import StepRef
from state.vocab import Phase, WorkflowName

if TYPE_CHECKING:
    from collections.abc import Callable

    from shared.workflow import Flags
    from state.rules.session_store import Transaction

    # click 8.4 made its parameter types generic: subscripted for mypy only, as older clicks
    # (which the dependency range allows) cannot subscript them at run time
    TextParam = click.ParamType[str, str]
    PairParam = click.ParamType[Any, tuple[str, str]]
    PhaseChoice = click.Choice[str]
else:
    TextParam, PairParam, PhaseChoice = click.ParamType, click.ParamType, click.Choice

COMMON = ("state_dir", "as_json")
INLINE = "planner.inline_content"  # ctx.meta key: FILE|- options take the text itself


def common_params() -> list[click.Parameter]:
    """--state-dir and --json, which every command takes."""
    return [
        click.Option(
            ["--state-dir"],
            metavar="DIR",
            help="Session directory (else $PLANNER_STATE_DIR, else .planner/ACTIVE).",
        ),
        click.Option(
            ["--json", "as_json"], is_flag=True, help="Print machine-readable JSON instead of text."
        ),
    ]


class CheckedCommand(click.Command):
    """A command that says which option swallowed which before click parses (swallowed_option):
    every `plan` command, the step scripts and their subcommands."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        swallowed_option(self, args)
        return super().parse_args(ctx, args)


class CheckedGroup(CheckedCommand, click.Group):
    """A group that says it of its own options, up to its subcommand (which checks its own)."""


class PlanCommand(CheckedCommand):
    """A `plan` command: its own options plus --state-dir and --json."""

    def __init__(self, name: str | None, params: list[click.Parameter] | None = None, **kw: Any):
        own = {p.name for p in params or []}
        extra = [p for p in common_params() if p.name not in own]
        super().__init__(name, params=[*(params or []), *extra], **kw)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PlannerError as e:
            relabel(self, e)
            raise

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        rest = super().parse_args(ctx, args)
        for param in self.params:
            metavar = getattr(param, "alias_of_id", None)
            if metavar and param.name:  # the former option spelling of the positional ID
                old = ctx.params.pop(param.name, None)
                given = ctx.params.get("id")
                if old is not None and given is not None and old != given:
                    raise click.UsageError(
                        f"{metavar}: given twice ({given}, {param.opts[0]} {old})"
                    )
                ctx.params["id"] = given if given is not None else old
                if ctx.params["id"] is None:
                    raise click.UsageError(f"{metavar}: required (the item the command acts on)")
        return rest


def target_id(metavar: str, old: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The item a command acts on as its first argument, ID (as `plan exec done M-n`), with
    its former option spelling (`old`, e.g. --milestone) still taken, hidden and deprecated,
    so plans, prompts and batches written before keep working (docs/design.md)."""

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        f = click.option(
            old, type=TEXT, metavar=metavar, hidden=True, help=f"Deprecated: give {metavar} first."
        )(f)
        f.__click_params__[-1].alias_of_id = metavar  # type: ignore[attr-defined]
        return click.argument("id", required=False, type=TEXT, metavar=metavar)(f)

    return decorate


def options(*decorators: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Several click options as one decorator, as if stacked in the order given."""

    def stacked(f: Any) -> Any:
        for decorate in reversed(decorators):
            f = decorate(f)
        return f

    return stacked


def swallowed_option(command: click.Command, args: list[str]) -> None:
    """`--decision --reasoning x`: say that --decision took --reasoning as its value, rather
    than what click would say next (an extra argument x, --reasoning missing); a group's
    options up to its subcommand. `--decision=--reasoning` still gives that value on purpose."""
    takes_value = {
        opt
        for p in command.params
        if isinstance(p, click.Option) and not p.is_flag and not p.count
        for opt in p.opts
    }
    names = {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)}
    subcommands = command.commands if isinstance(command, click.Group) else {}
    for word, following in itertools.pairwise(args):
        if word == "--" or word in subcommands:
            return
        if word in takes_value and following.split("=", 1)[0] in names:
            raise click.UsageError(f"{word} took {following} as its value: give it one first")


class Operation(PlanCommand):
    """A command that changes the session: `op`, its state/ function, runs inside one store
    transaction; the decorated function gives the help text alone."""

    def __init__(
        self,
        name: str | None,
        params: list[click.Parameter] | None = None,
        *,
        op: Callable[..., list[str] | None],
        **kw: Any,
    ):
        super().__init__(name, params, **kw)
        self.op = op

    def invoke(self, ctx: click.Context) -> int:
        store = open_store(ctx.params["state_dir"])
        args = arguments(ctx.params)
        with store.transaction(operation_name(ctx)) as tx:
            tx.created.extend(self.run(tx, args))
        for line in tx.told:
            tell(line)
        changed = [] if tx.created else changed_ids(ctx, args)
        if not (tx.created or changed or tx.told):  # every change says what, in one line
            tell(f"plan {operation_name(ctx)}: recorded")
        step = tx.next if self.runs_next and not ctx.params["as_json"] else None
        if isinstance(step, StepRef) and step.workflow == WorkflowName.PLANNER:
            # the step runs in the same call, as a gate prints the step it leads to (the step
            # engine loads here only)
            from shared import engine
            from shared.workflow import workflow_named

            emit_ids(unsaid(tx.created, tx.told), False, None, changed)
            out(f"planner step {step.number} follows (run here: do not run it again).")
            flags: Flags = {"state_dir": store.dir}
            out(engine.run(workflow_named(step.workflow), step.number, flags, store))
            return 0
        as_json = ctx.params["as_json"]
        ids = tx.created if as_json else unsaid(tx.created, tx.told)
        emit_ids(ids, as_json, tx.next, changed)
        return 0

    runs_next = False
    """Whether the planner step the operation routes to runs in the same call (`plan amend`:
    the rework's first step) instead of being named on a NEXT line."""

    def run(self, tx: Transaction, args: dict[str, object]) -> list[str]:
        """The command's operation on converted arguments; the ids it created."""
        for name, value in args.items():
            for one in value if isinstance(value, list) else [value]:
                if any(isinstance(t, str) and not is_unicode(t) for t in texts(one)):
                    raise UsageError(
                        f"--{name.replace('_', '-')}: not valid Unicode (a lone surrogate, e.g. "
                        "from bytes that are not UTF-8); nothing was written"
                    )
        from state.ops.perform import perform  # ~7 ms that `plan status` does not need

        try:
            return perform(tx, self.op, args)
        except PlannerError as e:
            relabel(self, e)
            raise


def texts(value: object) -> list[object]:
    """A value, or a record's values (a --comment), as the texts the user gave."""
    return list(value.values()) if isinstance(value, dict) else [value]


def unsaid(created: list[str], told: list[str]) -> list[str]:
    """The created ids stdout still has to print: all of them, except at a terminal (stdout
    and stderr both on it) the ids a told line already starts with (`plan change capture`
    says "CC-001 CI-001 src/app.py: captured"), so a person reads each id once; a pipe or
    --json gets every id."""
    if not (sys.stdout.isatty() and sys.stderr.isatty()):
        return created
    return [i for i in created if not any(t.startswith(i + " ") for t in told)]


def relabel(command: click.Command, e: PlannerError) -> None:
    """state/ names the field; the user typed the option that fills it (its first spelling,
    e.g. by -> --by)."""
    field = e.field or ""  # none named: e.relabel changes nothing
    opts = [p.opts[0] for p in command.params if p.name == field and isinstance(p, click.Option)]
    e.relabel(opts[0] if opts else "--" + field.replace("_", "-"))


EDITS = ("set", "answer")  # commands that change an item in place print the item's id


def changed_ids(ctx: click.Context, args: dict[str, object]) -> list[str]:
    """What a `set` or `answer` command changed: the item's id (DL-001, qa-002, Q-001), else
    its milestone (`doc set`), else the section (`context`, `overview`, `knowledge`), as
    `plan show` reads it."""
    if ctx.info_name not in EDITS:
        return []
    if isinstance(args.get("id"), str):
        return [str(args["id"])]
    return [ctx.parent.info_name] if ctx.parent and ctx.parent.info_name else []


def is_unicode(text: str) -> bool:
    """False for text holding lone surrogates (bytes that were not UTF-8, or JSON's \\ud800)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


class PlanGroup(click.Group):
    """A group of `plan` commands; its commands are PlanCommands unless they say otherwise."""

    command_class = PlanCommand
    group_class = type  # subgroups are PlanGroups too


def operation_name(ctx: click.Context) -> str:
    """The command path after `plan`: "decision add"."""
    words = []
    while ctx.parent is not None:
        words.append(ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(reversed(words))


def arguments(params: dict[str, Any]) -> dict[str, object]:
    """A command's own parameters as the state functions take them: repeatables as lists.
    `params` is click's ctx.params (values of every type click converts to)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in params.items() if k not in COMMON}


class FileText(TextParam):
    """FILE|-: the file's text, or standard input for '-'. In `plan apply`, the text itself."""

    name = "file"

    def convert(self, value: str, param: click.Parameter | None, ctx: click.Context | None) -> str:
        if ctx is not None and ctx.meta.get(INLINE):
            return value
        if value == "-":
            return sys.stdin.read()
        try:
            with open(value, encoding="utf-8") as f:
                return f.read()
        except (OSError, UnicodeDecodeError, ValueError) as e:  # ValueError: a NUL in the name
            reason = getattr(e, "strerror", None) or str(e)
            self.fail(f"cannot read {value} ({reason})", param, ctx)


class Text(TextParam):
    """Text that is not blank: what a required field holds."""

    name = "text"

    def convert(self, value: str, param: click.Parameter | None, ctx: click.Context | None) -> str:
        if not str(value).strip():
            self.fail("may not be empty", param, ctx)
        return value


class Position(TextParam):
    """N|TEXT: an entry of a list by its position (from 1) or its exact text; state tells
    which (digits are a position). In `plan apply`, a number is a position too."""

    name = "position"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        return str(value)


class KeyValue(PairParam):
    """KEY=VALUE: one named parameter, as a (key, value) pair."""

    name = "key=value"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[str, str]:
        if isinstance(value, tuple):  # already converted (a default, or plan apply's)
            return value
        key, sep, rest = str(value).partition("=")
        if not sep or not key:
            self.fail(f"expected KEY=VALUE, got {value!r}", param, ctx)
        return (key, rest)


class QRPhase(PhaseChoice):
    """A review phase; design, code and docs mean the planning ones (plan-design, …), as
    `plan validate --phase` spells them."""

    def __init__(self) -> None:
        super().__init__([p.value for p in Phase])

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> Phase:
        if isinstance(value, str) and value in ("design", "code", "docs"):
            value = f"plan-{value}"
        return Phase(super().convert(value, param, ctx))


FILE_TEXT = FileText()
TEXT = Text()
POSITION = Position()
KEY_VALUE = KeyValue()


def run_click(command: click.Command, argv: list[str], prog: str) -> int:
    """Run a click command in this process; its errors and ours become exit codes in one
    place (cli/exits.py run_main)."""

    def body() -> int:
        result: Any = command.main(args=argv, prog_name=prog, standalone_mode=False)
        return result if isinstance(result, int) else 0

    return run_main(prog, body)


# the session store from --state-dir, $PLANNER_STATE_DIR or .planner/ACTIVE
open_store = open_session
