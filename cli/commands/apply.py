"""`plan apply FILE|-`: a JSON list of operations run in one transaction, all or nothing.

Each "op" is looked up in the `plan` click group ("decision add" → group → command) and its
"args" go through that command's own click parameters (types, choices, required, multiple,
defaults), so a batch accepts and refuses what the command line does; then the command's
function runs on the batch's transaction. "$K" (1-based) is the first id the K-th op created;
stdout holds the created ids in order, one per line (PRODUCT.md §9, §10).
"""

from __future__ import annotations

import difflib
import json
from typing import TYPE_CHECKING, Any

import click

from cli.base import (
    COMMON,
    FILE_TEXT,
    INLINE,
    POSITION,
    Operation,
    PlanCommand,
    arguments,
    emit_ids,
    open_store,
)
from cli.output import out, tell
from hooks.human_acts import is_human_act, refusal
from state.errors import Finding, PlannerError, PreconditionFailed, Refused, UsageError
from state.routes import StepRef

if TYPE_CHECKING:
    from shared.workflow import Flags
    from state.rules.session_store import Store, Transaction


class ApplyCommand(PlanCommand):
    """`plan apply`, whose help lists every operation and its argument keys, read from the
    commands themselves so that it cannot go stale."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        root = ctx.find_root().command
        assert isinstance(root, click.Group)
        parent = batch_context(root)
        rows = [
            (name, argument_keys(find_operation(parent, name, "")))
            for name in operations(parent, root)
        ]
        with formatter.section("Operations and their argument keys (* required, [] a list)"):
            formatter.write_dl(rows)
        super().format_epilog(ctx, formatter)


def argument_keys(command: Operation) -> str:
    """An operation's "args" keys: `name*` when required, `file[]` when repeatable."""
    keys = []
    for p in command.params:
        if not p.expose_value or p.name in COMMON or p.name is None:
            continue
        mark = "[]" if getattr(p, "multiple", False) else ""
        keys.append(p.name + mark + ("*" if p.required else ""))
    return ", ".join(keys) or "(none)"


@click.command("apply", cls=ApplyCommand)
@click.argument("source", type=FILE_TEXT, metavar="FILE|-")
@click.option(
    "--verdict",
    type=click.Choice(["pass", "fail"]),
    help="Then run the gate the session's IF PASS / IF FAIL line names, in the same "
    "transaction: a review's items and its verdict in one call (the gate prints what follows).",
)
def apply_command(source: str, verdict: str | None, state_dir: str | None, as_json: bool) -> None:
    """Apply a JSON list of operations, all or nothing; "$K" is the id the K-th op created
    (the created ids are printed in order, one per line).

    Each operation is {"op": "milestone add", "args": {"name": "Parser", "file": ["p.py"]}}:
    the command after `plan`, and its options with - written _ (repeatable ones as lists,
    positional ones by name, FILE|- ones as the text itself).
    """
    try:
        batch = json.loads(source)
    except ValueError as e:  # bad JSON, or an integer of over 4,300 digits
        raise UsageError(f"plan apply: not valid JSON ({e})") from None
    except RecursionError:
        raise UsageError("plan apply: JSON nested too deeply") from None
    root = click.get_current_context().find_root().command
    assert isinstance(root, click.Group)
    store = open_store(state_dir)
    if verdict:
        apply_and_judge(store, root, batch, verdict, as_json)
        return
    told: list[str] = []
    created = apply_batch(store, root, batch, told)
    for line in told:  # what the operations said, then what the batch did, on stderr
        tell(line)
    emit_ids([i for ids in created for i in ids], as_json)


def apply_and_judge(
    store: Store, root: click.Group, batch: Any, verdict: str, as_json: bool
) -> None:
    """The batch, then the gate its verdict routes to, in one transaction (docs/design.md,
    "One call per gate"): a gate that refuses leaves the batch unwritten too. The batch's ids
    and lines come first, then the gate and the step it leads to, as the gate alone prints."""
    from shared import engine  # the step engine loads here only, as `plan amend`'s does
    from shared.status import current_routing
    from shared.workflow import workflow_named

    if as_json:
        raise UsageError("plan apply: --verdict prints steps as text; drop --json")
    routing = current_routing(store, store.read("session"))  # its IF PASS / IF FAIL, live
    gate = routing.if_pass if verdict == "pass" else routing.if_fail
    if not isinstance(gate, StepRef):
        fix = "plan apply without --verdict; planner status"
        raise PreconditionFailed(
            "plan apply --verdict: the session is at no review (its routing has no IF PASS / "
            "IF FAIL step); nothing was written",
            [Finding("session.json", "no gate to run", fix)],
        )
    prepared = prepare(root, batch, verdict=True)
    done: list[Transaction] = []
    created: list[list[str]] = []

    def records(tx: Transaction) -> None:
        created[:] = run_prepared(tx, prepared)
        done.append(tx)

    flags: Flags = {"state_dir": store.dir, "qr_status": verdict}
    chain = engine.decide(workflow_named(gate.workflow), gate.number, flags, store, True, records)
    for line in done[0].told:  # the gate's lines say the rest
        tell(line)
    emit_ids([i for ids in created for i in ids], False)
    out(engine.show(chain, flags))


Prepared = tuple[list[Any], list[tuple[str, Operation, str]], click.Context]


def prepare(root: click.Group, batch: Any, verdict: bool = False) -> Prepared:
    """The batch's ops found in the group before anything runs (usage errors first); with a
    verdict the list may be empty (the verdict alone: nothing left to judge)."""
    if isinstance(batch, dict) and "ops" in batch:
        batch = batch["ops"]
    if not isinstance(batch, list) or not (batch or verdict):
        raise UsageError('plan apply: expected a non-empty JSON list of {"op", "args"} objects')
    parent = batch_context(root)
    return batch, [resolved(parent, n, entry) for n, entry in enumerate(batch, 1)], parent


def run_prepared(tx: Transaction, prepared: Prepared) -> list[list[str]]:
    """Run the batch's ops on the transaction the caller holds; the ids each op created."""
    batch, found, parent = prepared
    created: list[list[str]] = []
    for entry, (name, command, where) in zip(batch, found, strict=True):
        raw = entry.get("args", {})
        if not isinstance(raw, dict):
            raise UsageError(f'{where}: "args" must be an object')
        args = convert(command, name, resolve(raw, created, where), parent, where)
        try:
            ids = command.run(tx, args)
        except PlannerError as e:
            e.message = f"{where}: {e.message}"
            e.args = (e.message,)
            raise
        created.append(ids)
        tx.created.extend(ids)
    tx.note(ops=len(batch))
    return created


def apply_batch(
    store: Store, root: click.Group, batch: Any, told: list[str] | None = None
) -> list[list[str]]:
    """Run a batch of {"op", "args"} on `store` in one transaction; the ids each op created.
    `told` receives the lines the operations tell the user and one line naming what ran."""
    prepared = prepare(root, batch)
    with store.transaction("apply") as tx:
        created = run_prepared(tx, prepared)
    if told is not None:  # ids on stdout say what a batch created; else one line says what ran
        told += tx.told
        if not tx.created:
            names = ", ".join(" ".join(e["op"].split()) for e in prepared[0])
            told.append(f"plan apply: {len(prepared[0])} recorded: {names}")
    return created


def resolved(parent: click.Context, number: int, entry: Any) -> tuple[str, Operation, str]:
    """(name, command, where) of the batch's `number`-th op, found before anything runs: a
    person's act anywhere in the batch refuses the whole batch."""
    where = f"plan apply: operation {number}"
    if not isinstance(entry, dict) or not isinstance(entry.get("op"), str):
        raise UsageError(f'{where}: expected an object with a string "op"')
    name = " ".join(entry["op"].split())
    return name, find_operation(parent, name, where), f"{where} ({name})"


def batch_context(root: click.Group) -> click.Context:
    """The context the batch's commands are parsed under: FILE|- options take the text."""
    ctx = click.Context(root, info_name="plan")
    ctx.meta[INLINE] = True
    return ctx


def operations(ctx: click.Context, group: click.Group, path: str = "") -> list[str]:
    """Every operation's name under `group`: "decision add", …"""
    names = []
    for word in group.list_commands(ctx):
        command = group.get_command(ctx, word)
        if isinstance(command, click.Group):
            names += operations(ctx, command, f"{path}{word} ")
        elif isinstance(command, Operation) and not is_human_act(path + word):
            names.append(path + word)
    return names


def find_operation(ctx: click.Context, name: str, where: str) -> Operation:
    """The command `name` names in the group, which must change the session and not be the
    person's act (judged on the command found, whatever the spelling that found it)."""
    command: click.Command | None = ctx.command
    path = []
    for word in name.split():
        command = command.get_command(ctx, word) if isinstance(command, click.Group) else None
        path.append(command.name if command is not None and command.name else word)
    if command is not None and is_human_act(" ".join(path)):
        raise Refused(f"{where}: {refusal(' '.join(path))}; nothing was written")
    if isinstance(command, Operation):
        return command
    root = ctx.command
    assert isinstance(root, click.Group)
    if command is not None and not isinstance(command, click.Group):
        raise UsageError(
            f"{where}: {name!r} does not change the session; plan apply runs only commands that do"
        )
    close = difflib.get_close_matches(name, operations(ctx, root), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise UsageError(f"{where}: unknown op {name!r}{hint}")


def convert(
    command: Operation, name: str, raw: dict[str, object], parent: click.Context, where: str
) -> dict[str, object]:
    """The JSON arguments (an object of the batch, values checked here) through the command's
    own click parameters, as the command line gives them: the op's keywords."""
    known = {p.name: p for p in command.params if p.expose_value and p.name not in COMMON}
    for key in raw:
        if key not in known:
            raise UsageError(f"{where}: unknown argument {key!r} (known: {', '.join(known)})")
    given = {key: json_value(known[key], value, where) for key, value in raw.items()}
    try:
        ctx = command.make_context(
            name.split()[-1],
            [],
            parent=parent,
            default_map={k: v for k, v in given.items() if v is not None},
        )
    except click.MissingParameter as e:
        raise UsageError(f"{where}: {label(e.param)} is required") from None
    except click.BadParameter as e:
        raise UsageError(f"{where}: {label(e.param)}: {e.message}") from None
    except click.ClickException as e:
        raise UsageError(f"{where}: {e.format_message()}") from None
    return arguments(ctx.params)


def label(param: click.Parameter | None) -> str:
    """How a refusal names the argument: the option ("--decision") or the positional's key."""
    if param is None:
        return "an argument"
    return param.opts[0] if isinstance(param, click.Option) else str(param.name)


def json_value(param: click.Parameter, value: Any, where: str) -> Any:
    """A JSON value of the shape the command line gives: text (or a number for a number
    option), a list of them for a repeatable option (one is wrapped), true/false for a flag.
    """
    if value is None:
        return None
    if isinstance(param, click.Option) and param.is_flag:
        if not isinstance(value, bool):
            raise UsageError(f"{where}: {label(param)} must be true or false, got {value!r}")
        return value
    number = isinstance(param.type, click.types.IntParamType) or param.type is POSITION
    many = param.multiple or param.nargs == -1  # a repeatable option, or FILE... positionals
    values = value if many and isinstance(value, list) else [value]
    if param.metavar in ("JSON", "FILE|-"):  # JSON text may be given as the JSON itself
        values = [json.dumps(v) if isinstance(v, (dict, list)) else v for v in values]
        value = values if many else values[0]
    for one in values:
        is_number = isinstance(one, int) and not isinstance(one, bool)
        if not (isinstance(one, str) or (number and is_number)):
            expected = "a number or text" if number else "text"
            raise UsageError(f"{where}: {label(param)} must be {expected}, got {one!r}")
    return values if many else value


def resolve(value: Any, created: list[list[str]], where: str) -> Any:
    """Replace "$K" (a whole string) by the first id the K-th operation created."""
    if isinstance(value, dict):
        return {k: resolve(v, created, where) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, created, where) for v in value]
    if isinstance(value, str) and value.startswith("$") and value[1:].isdecimal():
        k = int(value[1:])
        if not 1 <= k <= len(created) or not created[k - 1]:
            raise UsageError(
                f"{where}: {value} does not name an earlier operation that created an id"
            )
        return created[k - 1][0]
    return value
