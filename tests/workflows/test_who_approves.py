"""Who approves (§6.4, §7.2): the person's configuration, fixed when the session is created,
never the ambient environment. `CI=true` (every CI system sets it) changes nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.agent import Agent
from tests.workflows.helpers import DESIGN, review, start, state_of


def commit(project: Path, *paths: str) -> None:
    for argv in (["add", *paths], ["commit", "-qm", "config"]):
        subprocess.run(["git", *argv], cwd=project, check=True, capture_output=True)


def session(state: Path) -> dict:
    return json.loads((state / "session.json").read_text())


def test_ci_in_the_environment_never_lets_step_11_approve(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.planner]\nquestions_min = 0\n")
    agent, out = start(project, "--depth", "quick", env={"CI": "true"})
    state = state_of(out)
    assert session(state)["policy"] is None and session(state)["non_interactive"] is False
    agent.apply(DESIGN)
    out = agent.step(out.route())
    review(agent, "plan-design")
    out = agent.step(out.route("pass"))  # the gate prints step 11
    assert "approved by auto" not in out.text.lower() and "plan review approve" in out.text
    again = agent.step(f"planner --step 11 --state-dir '{state}'")  # quick: no verdict
    assert "approved by auto" not in again.text.lower()
    s = session(state)
    assert s["status"] == "review" and s["approval"] is None
    assert json.loads((state / "plan.json").read_text())["frozen_at"] is None


def test_a_later_step_cannot_switch_the_session_to_non_interactive(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.planner]\nquestions_min = 0\n")
    agent, out = start(project, "--depth", "quick", env={})
    state = state_of(out)
    agent.apply(DESIGN)
    before = (state / "session.json").read_bytes()
    refused = agent.shell(f"{out.route()} --non-interactive", code=4)
    assert "mode is fixed when it is created" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert (state / "session.json").read_bytes() == before


def test_interactive_false_counts_only_when_committed(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.planner]\ninteractive = false\n")
    agent = Agent(project, env={"CI": "true"})
    refused = agent.shell("planner --step 1 --task 'Add a farewell'", code=3)
    assert "interactive = false counts only when committed" in refused.stderr
    assert "pyproject.toml" in refused.stderr
    assert not any((project / ".planner").glob("*/session.json"))


def test_a_committed_interactive_false_is_fixed_when_the_session_is_created(
    project: Path,
) -> None:
    (project / "pyproject.toml").write_text(
        "[tool.planner]\ninteractive = false\nquestions_min = 0\n"
    )
    commit(project, "pyproject.toml")
    agent, out = start(project, "--depth", "quick", env={})
    state = state_of(out)
    assert session(state)["policy"] == "interactive = false in pyproject.toml (committed)"
    # changed afterwards (by anyone): the session keeps the mode it was created with
    (project / "pyproject.toml").write_text("[tool.planner]\nquestions_min = 0\n")
    agent.apply(DESIGN)
    out = agent.step(out.route())
    review(agent, "plan-design")
    out = agent.step(out.route("pass"))
    assert "approved by auto" in out.text.lower()
    s = session(state)
    assert s["status"] == "approved" and s["approval"]["by"] == "auto"
