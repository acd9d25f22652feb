"""The shapes the engine types by hand stay equal to what feeds them: a step script's Flags
are its click parameters, a routing's JSON keys are RoutingJson's, and every variable a shared
kind declares is read by the templates."""

from __future__ import annotations

import pathlib

import pytest

from cli.steps import step_script
from shared.kinds import ExecuteVariables, GateVariables, ReviewVariables
from shared.routing import Routing, RoutingJson
from shared.workflow import Flags

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLICK_NAMES = {"format_": "format"}  # the one option click names apart from its Flags key


@pytest.mark.parametrize("script", ["planner", "executor"])
def test_flags_are_the_step_scripts_parameters(script: str) -> None:
    params = {p.name for p in step_script(script).params if p.expose_value and p.name}
    given = {CLICK_NAMES.get(name, name) for name in params}
    keys = set(Flags.__annotations__)
    assert given <= keys, given - keys
    # no option gives new_session (steps.start sets it); only the planner takes task and depth
    assert keys - given <= {"new_session", "task", "depth"}


def test_routing_json_has_the_keys_as_json_gives() -> None:
    shown = [
        Routing(done=True).as_json(),
        Routing(next=["planner", "--step", "2"]).as_json(),
        Routing(if_pass=["a"], if_fail=["b"]).as_json(),
    ]
    assert {key for record in shown for key in record} == set(RoutingJson.__annotations__)


@pytest.mark.parametrize("variables", [ExecuteVariables, ReviewVariables, GateVariables])
def test_every_variable_a_shared_kind_declares_is_read(variables: type) -> None:
    templates = [*ROOT.glob("shared/templates/*.j2"), *ROOT.glob("skills/*/templates/*.j2")]
    read = "".join(t.read_text(encoding="utf-8") for t in templates)
    unused = [key for key in variables.__annotations__ if key not in read]
    assert not unused, f"{variables.__name__}: {unused} is read by no template"
