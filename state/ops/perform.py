"""One operation of `plan …` in its transaction (a command, or an entry of `plan apply`): the
operation, then what any change to plan.json brings about."""

from __future__ import annotations

from state.ops.qr_ops import reopen_changed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from state.rules.session_store import Transaction


def perform(
    tx: Transaction, op: Callable[..., list[str] | None], args: dict[str, object]
) -> list[str]:
    """Run `op` with `args` as keywords; the ids it created. A reviewer's PASS on what it
    changed is TODO again (qr_ops.reopen_changed)."""
    ids = op(tx, **args) or []
    reopen_changed(tx)
    return ids
