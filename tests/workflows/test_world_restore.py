"""plan.json edited by hand after approval or in an amendment round (PRODUCT.md §17, issue
30 case 9 and the world-moves catalogue): every command refuses it before anything is
written or committed, names `plan restore`, and so does `plan status`; `plan restore` puts
the recorded plan back (from history/, else from the copy HEAD holds) and the walk goes on.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import git
from tests.workflows.test_amend import approved_plan

pytestmark = pytest.mark.slow  # a whole planning walk to approval

FIX = "fix: plan restore"


def edit_by_hand(state: Path) -> None:
    path = state / "plan.json"
    doc = json.loads(path.read_text())
    doc["overview"]["title"] += " (edited by hand)"
    path.write_text(json.dumps(doc, indent=2) + "\n")


def executing(project: Path) -> tuple[object, Path]:
    agent, approved = approved_plan(project)
    state = Path(json.loads(agent.plan("status", "--json").stdout)["state_dir"])
    agent.step(approved.route())  # executor 1, 2, 3
    agent.plan("exec", "apply", "M-001")
    return agent, state


def test_an_approved_plan_edited_by_hand_is_restored_and_exec_goes_on(project: Path) -> None:
    agent, state = executing(project)
    approved = (state / "plan.json").read_bytes()
    head = git(project, "rev-parse", "HEAD")
    edit_by_hand(state)
    refused = agent.plan("exec", "done", "M-001", "--evidence", "ran it", "--commit", code=4)
    assert "content changed after approval" in refused.stderr and FIX in refused.stderr
    assert git(project, "rev-parse", "HEAD") == head  # refused before git committed anything
    assert json.loads((state / "execution.json").read_text())["milestones"][0]["commit"] is None
    status = agent.plan("status").stdout
    assert "content changed after approval" in status and FIX in status
    restored = agent.plan("restore")
    assert "restored from history/" in restored.stderr and "(the approved plan)" in restored.stderr
    assert (state / "plan.json").read_bytes() == approved
    assert "restored_from" in (state / "audit.jsonl").read_text().splitlines()[-1]
    assert "nothing to restore" in agent.plan("restore").stderr  # a second run says done
    assert "changed after approval" not in agent.plan("status").stdout
    agent.plan("exec", "done", "M-001", "--evidence", "ran it", "--commit")
    assert git(project, "log", "-1", "--format=%s").startswith("M-001")
    agent.plan("verify")


def test_without_history_the_approved_plan_comes_from_head(project: Path) -> None:
    agent, state = executing(project)
    approved = (state / "plan.json").read_bytes()
    git(project, "add", "--", ".planner")
    git(project, "commit", "-qm", "plan files", "--", ".planner")
    shutil.rmtree(state / "history")  # not committed: a clone has none
    edit_by_hand(state)
    restored = agent.plan("restore")
    assert "restored from HEAD:.planner/" in restored.stderr
    assert (state / "plan.json").read_bytes() == approved
    agent.plan("exec", "done", "M-001", "--evidence", "ran it", "--commit")


def test_with_no_copy_of_the_approved_plan_restore_says_so_and_writes_nothing(
    project: Path,
) -> None:
    agent, state = executing(project)
    shutil.rmtree(state / "history")
    edit_by_hand(state)
    edited = (state / "plan.json").read_bytes()
    refused = agent.plan("restore", code=3)
    assert "no copy of the approved plan.json" in refused.stderr and "plan cancel" in refused.stderr
    assert (state / "plan.json").read_bytes() == edited


def test_a_hand_edit_in_an_amendment_round_is_named_and_restored(project: Path) -> None:
    agent, state = executing(project)
    agent.plan("exec", "done", "M-001", "--evidence", "ran it", "--commit")
    agent.plan("amend", "--reason", "bow too")
    before = (state / "plan.json").read_bytes()
    edit_by_hand(state)
    decision = json.dumps([{"op": "decision add", "args": {"decision": "D", "reasoning": "R"}}])
    refused = agent.plan("apply", "-", input=decision, code=4)
    assert "overview is not open in amendment round 1" in refused.stderr
    assert FIX in refused.stderr
    assert "changed outside plan commands since" in agent.plan("status").stdout
    agent.plan("restore")
    assert (state / "plan.json").read_bytes() == before
    agent.plan("apply", "-", input=decision)  # the round goes on
    assert "changed outside plan commands" not in agent.plan("status").stdout


def test_an_amendment_opened_in_a_fresh_clone_works_without_history(
    project: Path, tmp_path: Path
) -> None:
    """history/ is local (the product's .gitignore): a clone of the committed session has
    none, yet `plan amend` and the round's writes check against what the files show."""
    from tests.agent import Agent

    agent, state = executing(project)
    agent.plan("exec", "done", "M-001", "--evidence", "ran it", "--commit")
    git(project, "add", "--", ".planner")
    git(project, "commit", "-qm", "plan files", "--", ".planner")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(project), str(clone))
    assert not (clone / state.relative_to(project) / "history").exists()
    there = Agent(clone)
    there.plan("resume", state.name)
    opened = there.plan("amend", "--reason", "bow too")
    assert "amendment round 1 opened" in opened.stderr
    decision = json.dumps([{"op": "decision add", "args": {"decision": "D", "reasoning": "R"}}])
    assert there.plan("apply", "-", input=decision).stdout == "DL-002\n"  # one op: its id
    assert (
        "amendment_checked_against"
        in (clone / state.relative_to(project) / "audit.jsonl").read_text()
    )
