"""`plan overview | decision | alternative | constraint | risk | knowledge | invariant |
tradeoff`: the plan's reasoning, recorded through state/ops/plan_ops.py."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from cli.base import FILE_TEXT, TEXT, Operation, PlanGroup
from state.ops import plan_ops

if TYPE_CHECKING:
    from state.storage.store import Transaction

ID = click.argument("id")


@click.group("overview", cls=PlanGroup)
def overview_command() -> None:
    """The plan's title, problem and approach."""


@overview_command.command("set", cls=Operation, op=plan_ops.overview_set)
@click.option("--title", help="A short title for the plan.")
@click.option("--problem", help="The problem the plan solves.")
@click.option("--approach", help="How the plan solves it, in a few sentences.")
def overview_set() -> None:
    """Set the plan's title, problem and approach (only what is given changes)."""


@click.group("decision", cls=PlanGroup)
def decision_command() -> None:
    """Decisions (DL-NNN) and the reasoning behind them."""


def question_option(f: Any) -> Any:
    return click.option(
        "--question",
        multiple=True,
        metavar="Q-n",
        help="A question whose answer shaped it (repeatable).",
    )(f)


@decision_command.command("add", cls=Operation)
@click.option("--decision", required=True, type=TEXT, help="What was decided.")
@click.option("--reasoning", required=True, type=TEXT, help="The chain of reasoning behind it.")
@question_option
def decision_add(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Record a decision (DL-NNN) with its chain of reasoning."""
    return plan_ops.decision_add(tx, a)


@decision_command.command("set", cls=Operation)
@ID
@click.option("--decision", help="The new text of the decision.")
@click.option("--reasoning", help="The new chain of reasoning.")
@question_option
def decision_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Change a decision's text, reasoning or cited questions."""
    plan_ops.decision_set(tx, a)


@decision_command.command("supersede", cls=Operation)
@ID
@click.option(
    "--by", required=True, type=TEXT, metavar="DL-m", help="The decision that replaces it."
)
@click.option("--reason", required=True, type=TEXT, help="Why it was superseded.")
def decision_supersede(tx: Transaction, a: dict[str, Any]) -> None:
    """Mark a decision superseded by a later one; both stay on record."""
    plan_ops.decision_supersede(tx, a)


@click.group("alternative", cls=PlanGroup)
def alternative_command() -> None:
    """Rejected alternatives (RA-NNN) and the decisions that rejected them."""


@alternative_command.command("add", cls=Operation)
@click.option("--alternative", required=True, type=TEXT, help="The approach that was rejected.")
@click.option("--reason", required=True, type=TEXT, help="Why it was rejected.")
@click.option(
    "--decision", required=True, type=TEXT, metavar="DL-n", help="The decision that rejected it."
)
def alternative_add(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Record an alternative that was rejected, and the decision that rejected it."""
    return plan_ops.alternative_add(tx, a)


@alternative_command.command("set", cls=Operation)
@ID
@click.option("--alternative", help="The new text of the alternative.")
@click.option("--reason", help="The new reason it was rejected.")
@click.option("--decision", metavar="DL-n", help="The decision that rejected it.")
def alternative_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Change a rejected alternative, its reason or the decision that rejected it."""
    plan_ops.alternative_set(tx, a)


@click.group("constraint", cls=PlanGroup)
def constraint_command() -> None:
    """Constraints (C-NNN) the plan must respect."""


@constraint_command.command("add", cls=Operation)
@click.option("--type", required=True, type=TEXT, help="The kind of constraint (technical, …).")
@click.option("--description", required=True, type=TEXT, help="What must hold.")
@click.option("--source", help="Where it comes from (a user quote, a doc, a file).")
def constraint_add(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Record a constraint the plan must respect."""
    return plan_ops.constraint_add(tx, a)


@constraint_command.command("set", cls=Operation)
@ID
@click.option("--type", help="The new kind of constraint.")
@click.option("--description", help="The new description.")
@click.option("--source", help="The new source.")
def constraint_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Change a constraint's type, description or source."""
    plan_ops.constraint_set(tx, a)


@click.group("risk", cls=PlanGroup)
def risk_command() -> None:
    """Known risks (R-NNN) and how they are mitigated."""


@risk_command.command("add", cls=Operation)
@click.option("--risk", required=True, type=TEXT, help="What could go wrong.")
@click.option("--mitigation", required=True, type=TEXT, help="How the plan guards against it.")
@click.option("--anchor", help="Where in the code it lives (file, function).")
@click.option("--decision", metavar="DL-n", help="The decision the risk comes from.")
def risk_add(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Record a known risk and how it is mitigated."""
    return plan_ops.risk_add(tx, a)


@risk_command.command("set", cls=Operation)
@ID
@click.option("--risk", help="The new text of the risk.")
@click.option("--mitigation", help="The new mitigation.")
@click.option("--anchor", help="The new anchor.")
@click.option("--decision", metavar="DL-n", help="The decision the risk comes from.")
def risk_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Change a risk, its mitigation, anchor or decision."""
    plan_ops.risk_set(tx, a)


@click.group("knowledge", cls=PlanGroup)
def knowledge_command() -> None:
    """What the code will not say by itself: architecture, data flow, structure."""


@knowledge_command.command("set", cls=Operation)
@click.option(
    "--architecture-diagram",
    type=FILE_TEXT,
    metavar="FILE|-",
    help="An ASCII diagram of the architecture (a file, or - for stdin).",
)
@click.option("--architecture", help="The architecture in words.")
@click.option(
    "--data-flow-diagram",
    type=FILE_TEXT,
    metavar="FILE|-",
    help="An ASCII diagram of the data flow (a file, or - for stdin).",
)
@click.option("--data-flow", help="The data flow in words.")
@click.option("--structure-rationale", help="Why the code is structured this way.")
def knowledge_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Set the architecture and data-flow diagrams and descriptions, and the structure rationale."""
    plan_ops.knowledge_set(tx, a)


@click.group("invariant", cls=PlanGroup)
def invariant_command() -> None:
    """Invariants the code must keep."""


@invariant_command.command("add", cls=Operation)
@click.argument("text", type=TEXT)
def invariant_add(tx: Transaction, a: dict[str, Any]) -> None:
    """Add an invariant the code must keep."""
    plan_ops.invariant_add(tx, a)


@click.group("tradeoff", cls=PlanGroup)
def tradeoff_command() -> None:
    """Tradeoffs the design accepts."""


@tradeoff_command.command("add", cls=Operation)
@click.argument("text", type=TEXT)
def tradeoff_add(tx: Transaction, a: dict[str, Any]) -> None:
    """Add a tradeoff the design accepts."""
    plan_ops.tradeoff_add(tx, a)
