"""`plan status` names what the next command would refuse after the person's git moved
(PRODUCT.md §17): a merge left in conflict, a milestone's apply undone, each with its fix."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.cli.test_exec_refusals import executing
from tests.conftest import Plan, git


def status(project: Path, state: Path) -> str:
    return Plan(project)("status", "--state-dir", str(state)).stdout


def test_status_names_a_merge_left_in_conflict_and_how_to_finish_it(project: Path) -> None:
    state = executing(project)
    assert "in progress" not in status(project, state)
    git(project, "switch", "-qc", "other")
    (project / "src" / "app.py").write_text("theirs\n")
    git(project, "commit", "-qam", "theirs")
    git(project, "switch", "-q", "main")
    (project / "src" / "app.py").write_text("ours\n")
    git(project, "commit", "-qam", "ours")
    merged = subprocess.run(
        ["git", "merge", "-q", "other"], cwd=project, capture_output=True, text=True
    )
    assert merged.returncode != 0  # left in conflict
    shown = status(project, state)
    assert "a merge is in progress" in shown and "git merge --abort" in shown, shown
    git(project, "merge", "--abort")
    assert "in progress" not in status(project, state)


def test_status_names_an_apply_undone_with_plan_exec_apply(project: Path) -> None:
    state = executing(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001", "--state-dir", str(state))
    assert "recorded as applied" not in status(project, state)
    git(project, "checkout", "--", ".")
    shown = status(project, state)
    assert "M-001: recorded as applied, but none of its files differ from HEAD" in shown
    assert "(fix: plan exec apply M-001)" in shown
    plan("exec", "apply", "M-001", "--state-dir", str(state))  # the fix applies it again
    assert "recorded as applied" not in status(project, state)


def test_status_names_a_base_commit_amended_out_of_heads_history(project: Path) -> None:
    state = executing(project)
    base = git(project, "rev-parse", "HEAD").strip()
    git(project, "commit", "-q", "--amend", "-m", "init, reworded")  # not pruned: it resolves
    shown = status(project, state)
    assert f"the base commit {base[:12]} is not in HEAD's history" in shown, shown
    assert "plan rebase" in shown
    Plan(project)("rebase", "--state-dir", str(state))
    assert "not in HEAD's history" not in status(project, state)
