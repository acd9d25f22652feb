"""The table of operations: every mutating `plan` command and every `plan apply` entry.

A command and a batch cannot disagree because both look up the same Op and call its run
function inside one store transaction. Modules register their ops with @op.
"""

from __future__ import annotations

from state.errors import PlannerError, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from state.store import Store, Transaction

    Run = Callable[[Transaction, dict[str, Any]], list[str] | None]


class Param:
    """One argument of a command; `name` is the apply key, `--name-with-dashes` the option.

    type is str, int or a tuple of allowed strings. flag: --x/--no-x, None when not given;
    switch: a plain --x that is False when absent. content: FILE|- on the command line,
    the text itself in `plan apply`.
    """

    __slots__ = (
        "content",
        "default",
        "flag",
        "help",
        "metavar",
        "multiple",
        "name",
        "positional",
        "required",
        "short",
        "switch",
        "type",
    )

    def __init__(
        self,
        name: str,
        help: str = "",
        type: Any = str,
        multiple: bool = False,
        required: bool = False,
        flag: bool = False,
        switch: bool = False,
        positional: bool = False,
        content: bool = False,
        metavar: str = "",
        default: Any = None,
        short: str = "",
    ):
        self.name, self.help, self.type, self.multiple = name, help, type, multiple
        self.required, self.flag, self.switch, self.positional = required, flag, switch, positional
        self.content, self.metavar, self.default = content, metavar, default
        self.short = short  # e.g. "-o"; the fast parser leaves short options to click

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")

    def empty(self) -> Any:
        if self.multiple:
            return []
        return False if self.switch else self.default


class Op:
    """A mutating command: its name ("decision add"), what it runs, its params and help."""

    __slots__ = ("help", "name", "params", "run")

    def __init__(self, name: str, run: Run, params: tuple[Param, ...], help: str):
        self.name, self.run, self.params, self.help = name, run, params, help


OPS: dict[str, Op] = {}


def op(name: str, *params: Param) -> Callable[[Run], Run]:
    """Register the decorated function as operation `name` ("decision add")."""

    def register(run: Run) -> Run:
        OPS[name] = Op(name, run, params, (run.__doc__ or "").strip())
        return run

    return register


def load_all() -> dict[str, Op]:
    """Import every module that registers operations."""
    from state import (  # noqa: F401
        choice_ops,
        context_ops,
        exec_ops,
        plan_ops,
        qr_ops,
        question_ops,
        review_ops,
    )

    return OPS


def check_args(operation: Op, args: dict[str, Any], where: str) -> dict[str, Any]:
    """Arguments with every param present (defaults filled); bad ones raise UsageError."""
    known = {p.name: p for p in operation.params}
    for key in args:
        if key not in known:
            raise UsageError(f"{where}: unknown argument {key!r} (known: {', '.join(known)})")
    out: dict[str, Any] = {}
    for p in operation.params:
        value = args.get(p.name, p.empty())
        if p.multiple and value is None:
            value = []
        elif p.multiple and not isinstance(value, list):
            value = [value]
        for one in value if p.multiple else [value]:
            _check_value(p, one, where)
        if p.required and (value in (None, []) or (isinstance(value, str) and not value.strip())):
            raise UsageError(f"{where}: {p.option} is required and may not be empty")
        out[p.name] = value
    return out


def _check_value(p: Param, value: Any, where: str) -> None:
    if value is None:
        return
    if isinstance(value, str) and not _is_unicode(value):
        raise UsageError(
            f"{where}: {p.option}: not valid Unicode (a lone surrogate, e.g. from bytes that "
            "are not UTF-8); nothing was written"
        )
    if p.flag or p.switch:
        ok = isinstance(value, bool)
    elif isinstance(p.type, tuple):
        ok = value in p.type
    elif p.type is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, str)
    if not ok:
        expected = (
            "true or false"
            if p.flag
            else (" | ".join(p.type) if isinstance(p.type, tuple) else p.type.__name__)
        )
        raise UsageError(f"{where}: {p.option} must be {expected}, got {value!r}")


def run_op(store: Store, name: str, args: dict[str, Any]) -> Transaction:
    """One operation in its own transaction; the committed transaction tells what it made
    (created), what to run next (next_argv) and what to tell the user (told)."""
    operation = OPS[name]
    with store.transaction(name) as tx:
        ids = operation.run(tx, check_args(operation, args, name)) or []
        tx.created.extend(ids)
    return tx


def apply(store: Store, batch: Any) -> list[str]:
    """A list of {"op", "args"} applied in one transaction, all or nothing; "$K" = K-th op's id."""
    if isinstance(batch, dict) and "ops" in batch:
        batch = batch["ops"]
    if not isinstance(batch, list) or not batch:
        raise UsageError('plan apply: expected a non-empty JSON list of {"op", "args"} objects')
    created: list[list[str]] = []
    with store.transaction("apply") as tx:
        for number, entry in enumerate(batch, 1):
            where = f"plan apply: operation {number}"
            if not isinstance(entry, dict) or not isinstance(entry.get("op"), str):
                raise UsageError(f'{where}: expected an object with a string "op"')
            operation = OPS.get(entry["op"])
            if operation is None:
                raise UsageError(f"{where}: unknown op {entry['op']!r}")
            raw = entry.get("args", {})
            if not isinstance(raw, dict):
                raise UsageError(f'{where} ({operation.name}): "args" must be an object')
            args = check_args(
                operation, _resolve(raw, created, where), f"{where} ({operation.name})"
            )
            try:
                ids = operation.run(tx, args) or []
            except PlannerError as e:
                e.message = f"{where} ({operation.name}): {e.message}"
                e.args = (e.message,)
                raise
            created.append(ids)
            tx.created.extend(ids)
        tx.note(ops=len(batch))
    return [i for ids in created for i in ids]


def _is_unicode(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _resolve(value: Any, created: list[list[str]], where: str) -> Any:
    """Replace "$K" (a whole string) by the first id the K-th operation created."""
    if isinstance(value, dict):
        return {k: _resolve(v, created, where) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, created, where) for v in value]
    if isinstance(value, str) and value.startswith("$") and value[1:].isdecimal():
        k = int(value[1:])
        if not 1 <= k <= len(created) or not created[k - 1]:
            raise UsageError(
                f"{where}: {value} does not name an earlier operation that created an id"
            )
        return created[k - 1][0]
    return value
