"""The pre-commit hook definition (.pre-commit-hooks.yaml) run by pre-commit itself: it
installs this repository into its own environment and checks the plans of a real repo."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.cli.test_ci import INVALID_PLAN, new_session
from tests.conftest import BIN, REPO, from_wheelhouse, git

pytestmark = pytest.mark.network


def try_repo(
    project: Path, home: Path, wheelhouse: Path, hook: str = "planner-validate"
) -> subprocess.CompletedProcess[str]:
    """pre-commit installs this repository into its own environment, from the wheelhouse."""
    env = {**os.environ, "PRE_COMMIT_HOME": str(home), **from_wheelhouse(wheelhouse)}
    env.pop("PLANNER_STATE_DIR", None)
    return subprocess.run(
        [str(BIN / "pre-commit"), "try-repo", str(REPO), hook, "--all-files"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_hook_passes_a_good_plan_and_fails_a_bad_one(
    project: Path, tmp_path: Path, wheelhouse: Path
) -> None:
    new_session(project, "good")
    git(project, "add", ".planner")
    git(project, "commit", "-qm", "a plan")
    good = try_repo(project, tmp_path / "pre-commit", wheelhouse)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "planner validate" in good.stdout and "Passed" in good.stdout

    bad = new_session(project, "bad")
    (bad / "plan.json").write_text(INVALID_PLAN)
    git(project, "add", ".planner")
    done = try_repo(project, tmp_path / "pre-commit", wheelhouse)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Failed" in done.stdout
    assert ".planner/bad: 4 problem(s)" in done.stdout
    assert "'severe' is not one of low, medium, high" in done.stdout
