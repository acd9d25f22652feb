"""The bin/ launchers run the package from the checkout with a Python that has only the
standard library: what a Claude Code plugin user has when nothing was pip-installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e.conftest import clean_env

BIN = REPO / "bin"
# The step scripts render with jinja2 and parse with click: until the launchers make their own
# environment (PRODUCT.md §2.1), they are pointed at the interpreter running the tests.
WITH_DEPS = {"PLANNER_PYTHON": sys.executable}


def launch(
    name: str, *args: str, cwd: Path, path: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run a launcher the way a shell finds it: by name, from PATH."""
    return subprocess.run(
        [name, *args],
        cwd=cwd,
        env=clean_env(f"{BIN}{os.pathsep}{path}", **env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, (done.args, done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    return done.stdout


def test_each_launcher_is_an_executable_posix_script() -> None:
    for name in ("planner", "executor", "plan"):
        launcher = BIN / name
        assert os.access(launcher, os.X_OK), launcher
        assert launcher.read_text().startswith("#!/bin/sh\n")


def test_hot_paths_need_only_the_standard_library(project: Path, isolated_path: str) -> None:
    start = ("planner", "--step", "1", "--task", "x")
    out = ok(launch(*start, cwd=project, path=isolated_path, **WITH_DEPS))
    assert out.startswith("PLANNER 1/11 plan-init\n")
    state = next(ln.split("=", 1)[1] for ln in out.splitlines() if ln.startswith("STATE_DIR="))
    assert Path(state).parent == project / ".planner"

    status = ok(launch("plan", "status", cwd=project, path=isolated_path))
    assert f"STATE_DIR={state}" in status
    added = ok(
        launch(
            "plan",
            "decision",
            "add",
            "--decision",
            "D",
            "--reasoning",
            "R",
            cwd=project,
            path=isolated_path,
        )
    )
    assert added == "DL-001\n"
    done = launch("executor", "--help", cwd=project, path=isolated_path, **WITH_DEPS)
    assert ok(done).lower().startswith("usage:")


@pytest.mark.parametrize(
    ("args", "missing"),
    [(["--help"], "click"), (["decision", "add"], "click"), (["schema"], "pydantic")],
)
def test_slow_paths_without_their_dependency_fail_in_one_line(
    project: Path, isolated_path: str, session_dir: Path, args: list[str], missing: str
) -> None:
    done = launch("plan", *args, cwd=project, path=isolated_path)
    assert done.returncode in (1, 2), (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("plan: ")
    assert f"needs the {missing} package" in done.stderr


def test_planner_python_picks_the_interpreter(project: Path) -> None:
    # No python3 on PATH at all: only PLANNER_PYTHON can find one.
    empty = project.parent / "empty-bin"
    empty.mkdir()
    done = launch("planner", "--help", cwd=project, path=str(empty), **WITH_DEPS)
    assert ok(done).lower().startswith("usage:")


def test_a_symlinked_launcher_finds_its_checkout(project: Path, isolated_path: str) -> None:
    links = project.parent / "links"
    links.mkdir()
    (links / "planner").symlink_to(BIN / "planner")
    done = subprocess.run(
        [str(links / "planner"), "--help"],
        cwd=project,
        env=clean_env(isolated_path, **WITH_DEPS),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ok(done).lower().startswith("usage:")


def test_the_project_directory_cannot_shadow_the_package(project: Path, isolated_path: str) -> None:
    for package in ("shared", "state", "cli", "skills"):
        (project / package).mkdir(exist_ok=True)
        (project / package / "__init__.py").write_text("raise SystemExit('shadowed')\n")
    start = ("planner", "--step", "1", "--task", "x")
    out = ok(launch(*start, cwd=project, path=isolated_path, **WITH_DEPS))
    assert out.startswith("PLANNER 1/11")
