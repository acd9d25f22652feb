"""The executor's records written as typed literals (state/ops/exec_ops.py new_run and
add_deviation, the questions of state/ops/asks.py) hold what the models fill in by
default, and pass the schema when the store commits them: mypy checks their keys, this their
values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from state.ops import asks
from state.ops.exec_ops import add_deviation, new_run
from state.rules.session_store import Store
from state.storage import schema
from tests import crashpoints as cp


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("records") / "project"
    root.mkdir()
    return cp.executing(root)


def assert_model_defaults(record: dict[str, object], definition: str, given: set[str]) -> None:
    """Every field of `record` that the code does not set on purpose holds the model's default."""
    name = "context" if definition == "Question" else "execution"
    model = {k: v for k, v in schema.defaults(name, definition).items() if k not in given}
    assert model and {k: record[k] for k in model} == model


def test_a_new_run_is_the_models_run() -> None:
    assert new_run("M-001") == {**schema.defaults("execution", "MilestoneRun"), "id": "M-001"}


def test_step_1_made_every_run_as_the_model_would(state: Path) -> None:
    runs = json.loads((state / "execution.json").read_text())["milestones"]
    assert runs and all(r == new_run(r["id"]) for r in runs)


def test_a_deviation_and_its_question_hold_the_models_defaults(state: Path) -> None:
    with Store(str(state)).transaction("test: records") as tx:
        item = add_deviation(tx, "M-001", "went another way")
        asks.mark_significant(tx, item, ["adds a dependency: x"])
    execution = json.loads((state / "execution.json").read_text())
    context = json.loads((state / "context.json").read_text())
    written = next(d for d in execution["deviations"] if d["id"] == item["id"])
    marked = {"significant", "question"}  # mark_significant set them
    question = next(q for q in context["questions"] if q["id"] == written["question"])
    assert_model_defaults(written, "Deviation", {"id", "milestone", "description", "at"} | marked)
    assert written["significant"] == ["adds a dependency: x"]
    given = {"id", "category", "kind", "text", "why", "options", "asked_at", "about"}
    assert_model_defaults(question, "Question", given)
    assert question["about"] == item["id"] and question["kind"] == "choice"
    assert [o["label"] for o in question["options"]] == [asks.CONTINUE, asks.AMEND, asks.STOP]
