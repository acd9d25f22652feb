"""Operations on context.json: the task spec and the lists discovery fills in."""

from __future__ import annotations

from typing import Literal, get_args

from state.ops.plan_ops import fill, require_some
from state.project import project_root
from state.repo.scan import scan

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.rules.session_store import Transaction

ContextList = Literal[
    "constraints",
    "entry_points",
    "rejected_alternatives",
    "current_understanding",
    "assumptions",
    "invisible_knowledge",
    "user_quotes",
]
LISTS: tuple[str, ...] = get_args(ContextList)


def context_set(
    tx: Transaction, *, goal: str | None, scope: str | None, out_of_scope: str | None
) -> None:
    """Set the task's goal, scope and what is out of scope."""
    given = {"goal": goal, "scope": scope, "out_of_scope": out_of_scope}
    spec = tx.edit("context")["task_spec"]
    require_some(fill(spec, {k: k for k in given}, given), "context set")


def context_add(tx: Transaction, *, field: ContextList, text: str) -> None:
    """Add a line to a context list: constraints (MUST/SHOULD …), entry_points, assumptions, …"""
    tx.edit("context")[field].append(text)  # click's Choice of LISTS gives a ContextList


def context_scan(tx: Transaction, *, base: str | None) -> None:
    """Find the project's documents, the files changed since REF and the kinds of change."""
    session = tx.read("session")
    context = tx.edit("context")  # refused before the scan when context.json may not be written
    context["gathered"] = scan(project_root(tx.store.dir), base, session["task"])
    tx.note(change_types=context["gathered"]["change_types"])
    tx.tell(context["gathered"]["summary"])
