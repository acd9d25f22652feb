"""`plan exec commit` after a milestone's commit: a fix commit of what changed since, naming
the deviations it carries out (DV-n) in its subject and trailers; a retry finds it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skills.executor import reconcile
from tests.cli.test_worktree import BYE, DESIGN, GREET, WAVE, executing
from tests.conftest import Plan, git


def planned(plan: Plan, session_dir: Path) -> None:
    plan("apply", "-", input=json.dumps(DESIGN))
    tree = Path(plan("worktree").stdout.strip())
    (tree / "src" / "app.py").write_text(GREET + BYE + WAVE)
    (tree / "README.md").write_text("# Demo\n\nSay farewell.\n")
    plan("change", "capture")
    executing(session_dir)


def execution(session_dir: Path) -> dict:
    return json.loads((session_dir / "execution.json").read_text())


def deviation(plan: Plan, text: str) -> str:
    return plan("exec", "deviation", "M-001", "--description", text).stdout.strip()


def test_a_fix_commit_names_the_deviations_it_carries_out(
    plan: Plan, project: Path, session_dir: Path
) -> None:
    planned(plan, session_dir)
    plan("exec", "apply", "M-001")
    plan("exec", "commit", "M-001")
    first = git(project, "rev-parse", "HEAD").strip()
    app = project / "src" / "app.py"
    app.write_text(app.read_text().replace("'bye '", "'goodbye '"))
    assert deviation(plan, "farewell says goodbye\nthe review asked") == "DV-001"
    assert deviation(plan, "wave kept") == "DV-002"
    done = plan("exec", "commit", "M-001")
    assert "committed" in done.stderr and "M-001 Farewell (fix: DV-001, DV-002)" in done.stderr
    body = git(project, "log", "-1", "--format=%B")
    assert body.splitlines()[0] == "M-001 Farewell (fix: DV-001, DV-002)"
    assert "DV-001 farewell says goodbye\nDV-002 wave kept\n" in body
    assert "Planner-Deviation: DV-001\nPlanner-Deviation: DV-002" in body
    assert "Planner-Milestone: M-001" in body
    fix = git(project, "rev-parse", "HEAD").strip()
    run, devs = execution(session_dir)["milestones"][0], execution(session_dir)["deviations"]
    assert (run["commit"], run["fix_commits"]) == (first, [fix])
    assert [d["commit"] for d in devs] == [fix, fix]
    doc = json.loads((session_dir / "plan.json").read_text())
    record = reconcile.build(doc, execution(session_dir), str(project))
    assert (record["milestones"][0]["commit"], record["milestones"][0]["fix_commits"]) == (
        first,
        [fix],
    )
    again = plan("exec", "commit", "M-001")  # nothing changed since: nothing to commit
    assert "already committed" in again.stderr
    assert git(project, "rev-parse", "HEAD").strip() == fix
    app.write_text(app.read_text() + "\n# tidy\n")  # a second fix names only what is new
    deviation(plan, "a comment")
    plan("exec", "commit", "M-001")
    assert git(project, "log", "-1", "--format=%s").strip() == "M-001 Farewell (fix: DV-003)"


def test_deviations_recorded_before_the_first_commit_go_into_it(
    plan: Plan, project: Path, session_dir: Path
) -> None:
    planned(plan, session_dir)
    plan("exec", "apply", "M-001")
    deviation(plan, "kept greet's quotes")
    plan("exec", "commit", "M-001")
    body = git(project, "log", "-1", "--format=%B")
    assert body.splitlines()[0] == "M-001 Farewell: CI-001, CI-002"
    assert "DV-001 kept greet's quotes" in body and "Planner-Deviation: DV-001" in body
    head = git(project, "rev-parse", "HEAD").strip()
    assert execution(session_dir)["deviations"][0]["commit"] == head
    assert execution(session_dir)["milestones"][0]["fix_commits"] == []


def test_a_fix_without_a_deviation_says_fix(plan: Plan, project: Path, session_dir: Path) -> None:
    planned(plan, session_dir)
    plan("exec", "apply", "M-001")
    plan("exec", "commit", "M-001")
    (project / "src" / "app.py").write_text(GREET + BYE + WAVE + "\n# reviewed\n")
    plan("exec", "commit", "M-001")
    assert git(project, "log", "-1", "--format=%s").strip() == "M-001 Farewell (fix)"


@pytest.mark.slow
def test_a_fix_commit_made_before_a_kill_is_found_and_recorded(
    plan: Plan, project: Path, session_dir: Path
) -> None:
    planned(plan, session_dir)
    plan("exec", "apply", "M-001")
    plan("exec", "commit", "M-001")
    session = json.loads((session_dir / "session.json").read_text())["id"]
    (project / "src" / "app.py").write_text(GREET + BYE + WAVE + "\n# fixed\n")
    deviation(plan, "fixed")
    message = (
        "M-001 Farewell (fix: DV-001)\n\nPlanner-Session: "
        f"{session}\nPlanner-Milestone: M-001\nPlanner-Deviation: DV-001\n"
    )
    git(project, "commit", "-qam", message)  # what a kill after `git commit` leaves unrecorded
    fix = git(project, "rev-parse", "HEAD").strip()
    done = plan("exec", "commit", "M-001")
    assert "found by its trailer" in done.stderr
    assert execution(session_dir)["milestones"][0]["fix_commits"] == [fix]
    assert execution(session_dir)["deviations"][0]["commit"] == fix
    assert git(project, "rev-parse", "HEAD").strip() == fix
