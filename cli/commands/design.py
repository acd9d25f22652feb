"""`plan overview | decision | alternative | constraint | risk | knowledge | invariant |
tradeoff`: the plan's reasoning, recorded through state/ops/plan_ops.py."""

from __future__ import annotations

import click

from cli.base import FILE_TEXT, TEXT, Operation, PlanGroup
from state.ops import plan_ops

ID = click.argument("id")
QUESTION = click.option(
    "--question",
    multiple=True,
    metavar="Q-n",
    help="A question whose answer shaped it (repeatable).",
)


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


@decision_command.command("add", cls=Operation, op=plan_ops.decision_add)
@click.option("--decision", required=True, type=TEXT, help="What was decided.")
@click.option("--reasoning", required=True, type=TEXT, help="The chain of reasoning behind it.")
@QUESTION
def decision_add() -> None:
    """Record a decision (DL-NNN) with its chain of reasoning."""


@decision_command.command("set", cls=Operation, op=plan_ops.decision_set)
@ID
@click.option("--decision", help="The new text of the decision.")
@click.option("--reasoning", help="The new chain of reasoning.")
@QUESTION
def decision_set() -> None:
    """Change a decision's text, reasoning or cited questions."""


@decision_command.command("supersede", cls=Operation, op=plan_ops.decision_supersede)
@ID
@click.option(
    "--by", required=True, type=TEXT, metavar="DL-m", help="The decision that replaces it."
)
@click.option("--reason", required=True, type=TEXT, help="Why it was superseded.")
def decision_supersede() -> None:
    """Mark a decision superseded by a later one; both stay on record."""


@click.group("alternative", cls=PlanGroup)
def alternative_command() -> None:
    """Rejected alternatives (RA-NNN) and the decisions that rejected them."""


@alternative_command.command("add", cls=Operation, op=plan_ops.alternative_add)
@click.option("--alternative", required=True, type=TEXT, help="The approach that was rejected.")
@click.option("--reason", required=True, type=TEXT, help="Why it was rejected.")
@click.option(
    "--decision", required=True, type=TEXT, metavar="DL-n", help="The decision that rejected it."
)
def alternative_add() -> None:
    """Record an alternative that was rejected, and the decision that rejected it."""


@alternative_command.command("set", cls=Operation, op=plan_ops.alternative_set)
@ID
@click.option("--alternative", help="The new text of the alternative.")
@click.option("--reason", help="The new reason it was rejected.")
@click.option("--decision", metavar="DL-n", help="The decision that rejected it.")
def alternative_set() -> None:
    """Change a rejected alternative, its reason or the decision that rejected it."""


@click.group("constraint", cls=PlanGroup)
def constraint_command() -> None:
    """Constraints (C-NNN) the plan must respect."""


@constraint_command.command("add", cls=Operation, op=plan_ops.constraint_add)
@click.option("--type", required=True, type=TEXT, help="The kind of constraint (technical, …).")
@click.option("--description", required=True, type=TEXT, help="What must hold.")
@click.option("--source", help="Where it comes from (a user quote, a doc, a file).")
def constraint_add() -> None:
    """Record a constraint the plan must respect."""


@constraint_command.command("set", cls=Operation, op=plan_ops.constraint_set)
@ID
@click.option("--type", help="The new kind of constraint.")
@click.option("--description", help="The new description.")
@click.option("--source", help="The new source.")
def constraint_set() -> None:
    """Change a constraint's type, description or source."""


@click.group("risk", cls=PlanGroup)
def risk_command() -> None:
    """Known risks (R-NNN) and how they are mitigated."""


@risk_command.command("add", cls=Operation, op=plan_ops.risk_add)
@click.option("--risk", required=True, type=TEXT, help="What could go wrong.")
@click.option("--mitigation", required=True, type=TEXT, help="How the plan guards against it.")
@click.option("--anchor", help="Where in the code it lives (file, function).")
@click.option("--decision", metavar="DL-n", help="The decision the risk comes from.")
def risk_add() -> None:
    """Record a known risk and how it is mitigated."""


@risk_command.command("set", cls=Operation, op=plan_ops.risk_set)
@ID
@click.option("--risk", help="The new text of the risk.")
@click.option("--mitigation", help="The new mitigation.")
@click.option("--anchor", help="The new anchor.")
@click.option("--decision", metavar="DL-n", help="The decision the risk comes from.")
def risk_set() -> None:
    """Change a risk, its mitigation, anchor or decision."""


@click.group("knowledge", cls=PlanGroup)
def knowledge_command() -> None:
    """What the code will not say by itself: architecture, data flow, structure."""


@knowledge_command.command("set", cls=Operation, op=plan_ops.knowledge_set)
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
def knowledge_set() -> None:
    """Set the architecture and data-flow diagrams and descriptions, and the structure rationale."""


@click.group("invariant", cls=PlanGroup)
def invariant_command() -> None:
    """Invariants the code must keep."""


@invariant_command.command("add", cls=Operation, op=plan_ops.invariant_add)
@click.argument("text", type=TEXT)
def invariant_add() -> None:
    """Add an invariant the code must keep."""


@click.group("tradeoff", cls=PlanGroup)
def tradeoff_command() -> None:
    """Tradeoffs the design accepts."""


@tradeoff_command.command("add", cls=Operation, op=plan_ops.tradeoff_add)
@click.argument("text", type=TEXT)
def tradeoff_add() -> None:
    """Add a tradeoff the design accepts."""
