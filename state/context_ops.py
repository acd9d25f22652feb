"""Operations on context.json: the task spec and the lists discovery fills in."""

from __future__ import annotations

from state.ops import Param, op
from state.plan_ops import require_some, update

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from state.store import Transaction

LISTS = (
    "constraints",
    "entry_points",
    "rejected_alternatives",
    "current_understanding",
    "assumptions",
    "invisible_knowledge",
    "user_quotes",
)


@op("context set", Param("goal"), Param("scope"), Param("out_of_scope"))
def context_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Set the task's goal, scope and what is out of scope."""
    spec = tx.edit("context")["task_spec"]
    require_some(update(spec, a, {k: k for k in ("goal", "scope", "out_of_scope")}), "context set")


@op(
    "context add",
    Param("field", positional=True, required=True, type=LISTS),
    Param("text", positional=True, required=True),
)
def context_add(tx: Transaction, a: dict[str, Any]) -> None:
    """Add a line to a context list: constraints (MUST/SHOULD …), entry_points, assumptions, …"""
    tx.edit("context")[a["field"]].append(a["text"])


@op(
    "context scan",
    Param("base", metavar="REF", help="Compare with this commit, branch or tag (default HEAD)."),
)
def context_scan(tx: Transaction, a: dict[str, Any]) -> None:
    """Find the project's documents, the files changed since REF and the kinds of change."""
    from state.project import project_root
    from state.scan import scan

    session = tx.read("session")
    context = tx.edit("context")  # refused before the scan when context.json may not be written
    context["gathered"] = scan(project_root(tx.store.dir), a["base"], session["task"])
    tx.note(change_types=context["gathered"]["change_types"])
    tx.tell(context["gathered"]["summary"])
