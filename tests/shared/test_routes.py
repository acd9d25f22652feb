"""Routes by step name: every route state/ can record resolves through the workflow tables,
and state/ builds no command line and names no step number."""

from __future__ import annotations

import ast
import dataclasses
import pathlib

import pytest

from cli import workflows
from shared.routing import Routing, argv_of, record
from shared.workflow import register, step_ref, workflow_named
from state import routes
from state.errors import UsageError
from state.routes import StepRef

STATE = pathlib.Path(__file__).resolve().parents[2] / "state"


@pytest.fixture(autouse=True)
def _tables() -> None:
    workflows.register_all()


@pytest.mark.parametrize("route", routes.ALL, ids=lambda r: f"{r.workflow}:{r.step}")
def test_every_route_resolves_to_its_step(route: routes.Route) -> None:
    step = workflow_named(route.workflow).named(route.step)
    argv = argv_of(step_ref(route, "/s"))
    assert argv == [route.workflow, "--step", str(step.number), "--state-dir", "/s"]


def test_every_route_is_listed() -> None:
    """A Route constant in state/routes.py left out of ALL would escape the test above."""
    constants = {v for v in vars(routes).values() if isinstance(v, routes.Route)}
    assert constants == set(routes.ALL)


def test_a_missing_step_name_fails() -> None:
    with pytest.raises(UsageError, match="no step named"):
        step_ref(routes.Route("executor", "no-such-step"), "/s")


def test_a_table_names_its_targets_by_name_and_each_one_exists() -> None:
    table = workflow_named("planner")
    gate = table.named("plan-design-qr-gate")
    assert gate.on_fail == "plan-design-execute"
    wrong = dataclasses.replace(gate, on_fail="no-such-step")
    with pytest.raises(UsageError, match="no step named 'no-such-step'"):
        dataclasses.replace(table, steps=(*table.steps[:4], wrong, *table.steps[5:]))


def test_a_step_ref_becomes_a_command_line_only_when_printed() -> None:
    ref = StepRef("planner", "plan-design-qr-gate", 5, "/s", "pass")
    routing = Routing(if_pass=ref, if_fail=["plan", "review", "reject"])
    assert routing.steps() == [ref]
    assert routing.lines() == [
        "IF PASS: planner --step 5 --state-dir /s --qr-status pass",
        "IF FAIL: plan review reject",
    ]
    stored = {"workflow": "planner", "name": ref.name, "number": 5, "qr_status": "pass"}
    assert record(ref) == stored  # a QR loop's gate in session.json


def test_renumbering_a_table_keeps_the_route() -> None:
    """Routes follow the step's name: the same route finds the step at its new number."""
    table = workflow_named("executor")
    shifted = [dataclasses.replace(s, number=s.number + 10) for s in table.steps]
    renumbered = dataclasses.replace(table, steps=tuple(shifted))
    register("executor", lambda: renumbered)
    try:
        assert step_ref(routes.EXECUTE, "/s").number == table.named(routes.EXECUTE.step).number + 10
    finally:
        workflows.register_all()


@pytest.mark.parametrize("path", sorted(STATE.rglob("*.py")), ids=lambda p: p.name)
def test_state_builds_no_step_command(path: pathlib.Path) -> None:
    """No `--step` argv and no `step=N` in state/: a route names the step instead."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.List):
            words = [e.value for e in node.elts if isinstance(e, ast.Constant)]
            assert "--step" not in words, f"{path.name}:{node.lineno} builds a step command"
        if isinstance(node, ast.keyword) and node.arg == "step":
            assert not isinstance(node.value, ast.Constant), (
                f"{path.name}:{node.lineno} sets a step number"
            )
