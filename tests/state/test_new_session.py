"""A new session's first documents: state/ops/session.py spells every field (mypy holds the
keys to documents.py); here their values are held to the models' defaults."""

from __future__ import annotations

import json
from pathlib import Path

from shared import config
from state import clock
from state.ops import session
from state.storage import models


def test_the_first_documents_hold_the_models_defaults(project: Path) -> None:
    stamp, settings = clock.now(), config.load(str(project))
    made = session.new_session("s-1", "Add a farewell", stamp, str(project), settings, True)
    expected = models.Session(
        id="s-1",
        task="Add a farewell",
        created_at=stamp,
        updated_at=stamp,
        project_root=str(project),
        base_commit=made["base_commit"],
        non_interactive=True,
        policy="non-interactive (the caller gave no reason)",
        config=settings,
    )
    assert made == expected.model_dump(mode="json")
    plan = session.new_plan(stamp)
    fresh = models.Plan(plan_id=plan["plan_id"], created_at=stamp)
    assert plan == fresh.model_dump(mode="json")
    assert session.new_context() == models.Context().model_dump(mode="json")


def test_create_writes_the_first_documents_and_makes_the_session_active(project: Path) -> None:
    store = session.create(str(project), "Add a farewell", config.load(str(project)), False)
    written = json.loads(Path(store.path("session")).read_text())
    assert written["task"] == "Add a farewell" and written["status"] == "discovery"
    assert store.read("plan")["milestones"] == [] and store.read("context")["questions"] == []
    assert (Path(store.dir).parent / "ACTIVE").read_text().strip() == Path(store.dir).name
