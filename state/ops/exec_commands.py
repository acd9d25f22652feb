"""`plan exec …`: each command's operation, as the command line and `plan apply` run it.

Each is refused (exit 4) while any session of the project is planning, whatever --state-dir
names (rules/planning.py); around the record (exec_ops.py) and the project's files
(exec_apply.py) it asks the person where ops/asks.py says, in the same transaction.
"""

from __future__ import annotations

from state.ops import asks, exec_ops
from state.ops import exec_apply as files
from state.rules.planning import refuse_while_planning

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.rules.session_store import Transaction


def exec_start(tx: Transaction, *, id: str) -> None:
    refuse_while_planning(tx.store.dir)
    asks.before_start(tx, id)
    exec_ops.exec_start(tx, id=id)


def exec_apply(tx: Transaction, *, id: str) -> None:
    refuse_while_planning(tx.store.dir)
    asks.before_apply(tx, id)
    files.exec_apply(tx, id=id)


def exec_commit(
    tx: Transaction, *, id: str, allow_detached: bool, include_uncommitted: bool
) -> None:
    refuse_while_planning(tx.store.dir)
    files.exec_commit(
        tx, id=id, allow_detached=allow_detached, include_uncommitted=include_uncommitted
    )
    asks.after_commit(tx, id)


def exec_done(
    tx: Transaction, *, id: str, evidence: list[str], ran: list[str], commit: bool
) -> None:
    refuse_while_planning(tx.store.dir)
    exec_ops.exec_done(tx, id=id, evidence=evidence, ran=ran)
    if commit:
        files.exec_commit(tx, id=id)
        asks.after_commit(tx, id)


def exec_deviation(
    tx: Transaction,
    *,
    id: str,
    description: str,
    drops_acceptance: list[str],
    adds_dependency: list[str],
) -> list[str]:
    refuse_while_planning(tx.store.dir)
    ids = exec_ops.exec_deviation(tx, milestone=id, description=description)
    asks.after_deviation(
        tx, ids[0], drops_acceptance=drops_acceptance, adds_dependency=adds_dependency
    )
    return ids
