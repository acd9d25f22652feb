"""One hardened git runner: git's own environment variables never point the product at
another repository (git exports GIT_DIR and GIT_WORK_TREE while it runs hooks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from state.repo import git, gitinfo
from tests.conftest import git as git_cmd
from tests.conftest import run_in_process as run  # `plan` and `planner` in this process


@pytest.fixture
def other(tmp_path: Path) -> Path:
    root = tmp_path / "other"
    root.mkdir()
    git_cmd(root, "init", "-q")
    (root / "secret.txt").write_text("not ours\n")
    return root


def test_git_environment_changes_nothing(project: Path, other: Path, monkeypatch) -> None:
    (project / "src" / "app.py").write_text("changed\n")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / ".git" / "index"))
    head = git.output(str(project), "rev-parse", "HEAD").strip()
    assert gitinfo.changed_files(str(project), head) == ["src/app.py"]


def test_context_scan_reads_the_project_not_the_hooks_repository(
    project: Path, other: Path
) -> None:
    done = run("planner", "--step", "1", "--task", "x", cwd=project)
    assert done.returncode == 0, done.stderr
    (project / "src" / "app.py").write_text("changed\n")
    env = {"GIT_DIR": str(other / ".git"), "GIT_WORK_TREE": str(other)}
    done = run("plan", "context", "scan", "--json", cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    assert "secret.txt" not in done.stdout + done.stderr


def test_discovery_stops_at_the_root(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    (outer / "inner").mkdir(parents=True)
    git_cmd(outer, "init", "-q")
    (outer / "inner" / ".git").mkdir()  # a broken repository: git must not climb past it
    assert git.run(str(outer / "inner"), "rev-parse", "--git-dir").returncode != 0
