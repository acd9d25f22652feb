"""Operations on context.json: the task spec and the lists discovery fills in.

Each operation is a function (tx, a): the open transaction and the arguments by name
(repeatable ones as lists); it returns the ids it created. cli/commands/ declares the
arguments; state/ parses none.
"""

from __future__ import annotations

from state.ops.plan_ops import require_some, update

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from state.storage.store import Transaction

LISTS = (
    "constraints",
    "entry_points",
    "rejected_alternatives",
    "current_understanding",
    "assumptions",
    "invisible_knowledge",
    "user_quotes",
)


def context_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Set the task's goal, scope and what is out of scope."""
    spec = tx.edit("context")["task_spec"]
    require_some(update(spec, a, {k: k for k in ("goal", "scope", "out_of_scope")}), "context set")


def context_add(tx: Transaction, a: dict[str, Any]) -> None:
    """Add a line to a context list: constraints (MUST/SHOULD …), entry_points, assumptions, …"""
    tx.edit("context")[a["field"]].append(a["text"])


def context_scan(tx: Transaction, a: dict[str, Any]) -> None:
    """Find the project's documents, the files changed since REF and the kinds of change."""
    from state.project import project_root
    from state.repo.scan import scan

    session = tx.read("session")
    context = tx.edit("context")  # refused before the scan when context.json may not be written
    context["gathered"] = scan(project_root(tx.store.dir), a["base"], session["task"])
    tx.note(change_types=context["gathered"]["change_types"])
    tx.tell(context["gathered"]["summary"])
