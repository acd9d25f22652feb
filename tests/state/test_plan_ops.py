"""state.ops.plan_ops: the typed items it builds are what the models say, and a set-operation
changes exactly what was given (a flag given as false and a list given as '' count)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import pytest

from state.errors import UsageError
from state.ops import plan_ops
from state.rules.session_store import Store
from state.storage import models
from tests.conftest import Plan


def test_new_items_are_the_models_defaults(plan: Plan, session_dir: Path) -> None:
    """A new item holds what the command gave and the defaults models.py declares, in the
    models' order."""
    assert get_args(models.Milestone.model_fields["risk"].annotation) == plan_ops.RISKS
    plan("milestone", "add", "--name", "Parser")
    plan("milestone", "add", "--name", "Printer")
    plan("constraint", "add", "--type", "technical", "--description", "d")
    stored = json.loads((session_dir / "plan.json").read_text())
    milestone = models.Milestone(id="M-002", number=2, name="Printer").model_dump()
    assert stored["milestones"][1] == milestone
    constraint = models.Constraint(id="C-001", type="technical", description="d").model_dump()
    assert stored["planning_context"]["constraints"] == [constraint]
    assert list(stored["milestones"][1]) == list(milestone)  # as `plan show` prints it


def test_find_refuses_an_id_of_another_kind_before_looking(plan: Plan, session_dir: Path) -> None:
    plan("decision", "add", "--decision", "d", "--reasoning", "r")
    document = Store(str(session_dir)).read("plan")
    assert plan_ops.find(document, "DL-001", "DL")["decision"] == "d"
    with pytest.raises(UsageError, match="DL-001: not a milestone id"):
        plan_ops.find(document, "DL-001", "M")
    with pytest.raises(UsageError, match=r"plan\.json: no M-001"):
        plan_ops.find(document, "M-001", "M")


def test_what_counts_as_given() -> None:
    """None and [] are not given; False is (--no-doc-only), and [''] clears a list."""
    m = {"name": "Parser", "is_documentation_only": True, "depends_on": ["M-002"]}
    fields = {"doc_only": "is_documentation_only", "depends": "depends_on", "name": "name"}
    assert not plan_ops.fill(m, fields, {"doc_only": None, "depends": [], "name": None})
    assert m["depends_on"] == ["M-002"] and m["name"] == "Parser"
    assert plan_ops.fill(m, fields, {"doc_only": False, "depends": [""], "name": ""})
    assert (m["is_documentation_only"], m["depends_on"], m["name"]) == (False, [], "")
    tests = {"scenarios": {"edge": ["old"]}}
    assert plan_ops.fill(tests, {"edge": "scenarios.edge"}, {"edge": ["a", "", "b"]})
    assert tests == {"scenarios": {"edge": ["a", "b"]}}


def test_milestone_set_changes_only_what_is_given(plan: Plan, session_dir: Path) -> None:
    plan("milestone", "add", "--name", "Parser", "--requirement", "a", "--requirement", "b")
    before = json.loads((session_dir / "plan.json").read_text())["milestones"][0]
    plan("milestone", "set", "M-001", "--add-requirement", " ", code=2)  # blank: nothing given
    plan("milestone", "set", "M-001", "--doc-only")
    plan("milestone", "set", "M-001", "--remove-requirement", "1", "--add-requirement", "c")
    after = json.loads((session_dir / "plan.json").read_text())["milestones"][0]
    assert after == before | {"is_documentation_only": True, "requirements": ["b", "c"]}
    done = plan("milestone", "set", "M-001", "--remove-requirement", "3", code=2)
    assert (
        "--remove-requirement '3': not a position (from 1) or an entry of M-001's requirements: "
        "1 'b'; 2 'c'" in done.stderr
    )


def test_remove_takes_the_listed_text_or_the_position(plan: Plan, session_dir: Path) -> None:
    """--remove-file takes the path as listed as well as its position, on the command line and
    in `plan apply` (an agent names what it sees); a text not listed is refused, nothing written."""
    plan("milestone", "add", "--name", "P", "--file", "src/a.py", "--file", "src/b.py",
         "--file", "src/c.py", "--requirement", "r1", "--requirement", "r2")  # fmt: skip

    def files() -> list[str]:
        return json.loads((session_dir / "plan.json").read_text())["milestones"][0]["files"]

    plan("milestone", "set", "M-001", "--remove-file", "src/b.py")
    assert files() == ["src/a.py", "src/c.py"]
    batch = [{"op": "milestone set", "args": {"id": "M-001", "remove_file": ["src/c.py"]}}]
    plan("apply", "-", input=json.dumps(batch))
    assert files() == ["src/a.py"]
    batch = [{"op": "milestone set", "args": {"id": "M-001", "remove_file": [1]}}]
    plan("apply", "-", input=json.dumps(batch))
    assert files() == []
    plan("milestone", "set", "M-001", "--add-file", "src/a.py")
    done = plan("milestone", "set", "M-001", "--remove-file", "src/z.py", "--add-file", "x", code=2)
    assert done.stderr.strip().splitlines() == [
        "plan: --remove-file 'src/z.py': not a position (from 1) or an entry of M-001's files: "
        "1 'src/a.py'"
    ]
    assert files() == ["src/a.py"]
    plan("milestone", "set", "M-001", "--remove-requirement", "r2", "--remove-requirement", "1")
    assert (
        json.loads((session_dir / "plan.json").read_text())["milestones"][0]["requirements"] == []
    )
    shown = plan("milestone", "set", "--help").stdout
    assert "--remove-file N|TEXT" in shown and "exact text" in shown


def test_state_names_the_field_and_the_command_line_the_option(
    plan: Plan, session_dir: Path
) -> None:
    """state/ knows no flags: its error starts with the field (PlannerError.field), and the
    command layer puts the option there."""
    plan("milestone", "add", "--name", "Parser")
    args: dict[str, object] = {k: [] for k in plan_ops.milestone_set.keywords}
    args |= {"id": "M-001", "name": None, "risk": None, "doc_only": None, "delegated_to": None}
    with pytest.raises(UsageError) as refused, Store(str(session_dir)).transaction("x") as tx:
        plan_ops.milestone_set(tx, **args | {"remove_file": [2]})
    assert refused.value.field == "remove_file"
    assert refused.value.message == (
        "remove_file '2': not a position (from 1) or an entry of M-001's files: none"
    )
    done = plan("milestone", "set", "M-001", "--remove-file", "2", code=2)
    assert "--remove-file '2': not a position" in done.stderr
    done = plan("milestone", "set", "M-001", "--add-file", ".git/config", code=2)
    assert "--add-file: '.git/config': " in done.stderr
