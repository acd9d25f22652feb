"""The bin/ launchers run the package in the plugin's own environment (hooks/bootstrap.py),
with a Python that has only the standard library: what a Claude Code plugin user has when
nothing was pip-installed. The environment is made once per test session (the
`plugin_data` fixture); tests/e2e/test_bootstrap.py tests how it is made.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e.conftest import clean_env

BIN = REPO / "bin"


def launch(
    name: str, *args: str, cwd: Path, path: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run a launcher the way a shell finds it: by name, from PATH."""
    return subprocess.run(
        [name, *args],
        cwd=cwd,
        env=clean_env(f"{BIN}{os.pathsep}{path}", **{**data_dir(), **env}),
        capture_output=True,
        text=True,
        timeout=120,
    )


def data_dir() -> dict[str, str]:
    """PLANNER_DATA_DIR as the `path` fixture set it, for clean_env (which drops it)."""
    return (
        {"PLANNER_DATA_DIR": os.environ["PLANNER_DATA_DIR"]}
        if "PLANNER_DATA_DIR" in os.environ
        else {}
    )


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, (done.args, done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    return done.stdout


@pytest.fixture
def path(isolated_path: str, plugin_data: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """isolated_path, with the launchers using the environment made once for this session."""
    monkeypatch.setenv("PLANNER_DATA_DIR", str(plugin_data))
    return isolated_path


def test_each_launcher_is_the_same_executable_posix_script() -> None:
    scripts = {(BIN / name).read_text() for name in ("planner", "executor", "plan")}
    assert len(scripts) == 1
    for name in ("planner", "executor", "plan"):
        assert os.access(BIN / name, os.X_OK), name
    [script] = scripts
    assert script.startswith("#!/bin/sh\n") and len(script.splitlines()) <= 20


def test_the_launchers_run_the_package_in_the_plugin_environment(project: Path, path: str) -> None:
    out = ok(launch("planner", "--step", "1", "--task", "x", cwd=project, path=path))
    assert out.startswith("PLANNER 1/11 plan-init\n")
    state = next(ln.split("=", 1)[1] for ln in out.splitlines() if ln.startswith("STATE_DIR="))
    assert Path(state).parent == project / ".planner"

    status = ok(launch("plan", "status", cwd=project, path=path))
    assert f"STATE_DIR={state}" in status
    added = ok(
        launch(
            "plan", "decision", "add", "--decision", "D", "--reasoning", "R", cwd=project, path=path
        )
    )
    assert added == "DL-001\n"
    assert ok(launch("executor", "--help", cwd=project, path=path)).lower().startswith("usage:")
    # What needed the libraries the bare python3 lacks: help, schemas.
    assert "Usage: plan" in ok(launch("plan", "--help", cwd=project, path=path))
    assert '"$defs"' in ok(launch("plan", "schema", "plan", cwd=project, path=path))


def test_a_usage_error_exits_2_naming_the_option(
    project: Path, path: str, session_dir: Path
) -> None:
    done = launch("plan", "decision", "add", "--decison", "x", cwd=project, path=path)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "--decison" in done.stderr and "Traceback" not in done.stderr


def test_planner_python_picks_the_interpreter(project: Path) -> None:
    # No python3 on PATH at all: only PLANNER_PYTHON can find one; it has the dependencies,
    # so no environment is made.
    empty = project.parent / "empty-bin"
    empty.mkdir()
    data = project.parent / "no-data"
    done = launch(
        "planner",
        "--help",
        cwd=project,
        path=str(empty),
        PLANNER_PYTHON=sys.executable,
        PLANNER_DATA_DIR=str(data),
    )
    assert ok(done).lower().startswith("usage:")
    assert done.stderr == "" and not data.exists()


def test_no_python3_is_said_in_one_line(project: Path) -> None:
    empty = project.parent / "empty-bin"
    empty.mkdir()
    done = launch("plan", "status", cwd=project, path=str(empty))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "plan: needs python3 (Python 3.11+) on PATH, or set PLANNER_PYTHON\n"


OLD_PYTHONS = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.[89]*/bin/python3")))
OLD_PYTHONS += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.10*/bin/python3")))


@pytest.mark.skipif(not OLD_PYTHONS, reason="no Python 3.8-3.10 here (pyenv)")
def test_an_old_python3_is_said_in_one_line(project: Path) -> None:
    old = project.parent / "old-bin"
    old.mkdir()
    (old / "python3").symlink_to(OLD_PYTHONS[0])
    done = launch("planner", "--help", cwd=project, path=f"{old}{os.pathsep}/usr/bin:/bin")
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("planner: needs Python 3.11 or newer (this is 3.")


def test_a_symlinked_launcher_finds_its_checkout(project: Path, path: str) -> None:
    links = project.parent / "links"
    links.mkdir()
    (links / "planner").symlink_to(BIN / "planner")
    done = subprocess.run(
        [str(links / "planner"), "--help"],
        cwd=project,
        env=clean_env(path, PLANNER_DATA_DIR=os.environ["PLANNER_DATA_DIR"]),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ok(done).lower().startswith("usage:")


def test_the_project_directory_cannot_shadow_the_package(project: Path, path: str) -> None:
    for package in ("shared", "state", "cli", "skills", "hooks"):
        (project / package).mkdir(exist_ok=True)
        (project / package / "__init__.py").write_text("raise SystemExit('shadowed')\n")
    out = ok(launch("planner", "--step", "1", "--task", "x", cwd=project, path=path))
    assert out.startswith("PLANNER 1/11")


def test_the_data_dir_is_chosen_in_the_documented_order(tmp_path: Path, isolated_path: str) -> None:
    def where(**env: str) -> str:
        done = subprocess.run(
            ["python3", "-S", "-I", str(REPO / "hooks" / "bootstrap.py"), "where"],
            env=clean_env(isolated_path, **env),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()[0].removeprefix("data: ")

    xdg = where(XDG_DATA_HOME=str(tmp_path / "xdg"))
    # One dir per plugin folder under the shared fallback: clones do not replace each other's.
    assert Path(xdg).parent == tmp_path / "xdg" / "planner"
    assert Path(xdg).name.startswith(REPO.name + "-")
    claude = where(XDG_DATA_HOME=str(tmp_path), CLAUDE_PLUGIN_DATA=str(tmp_path / "claude"))
    assert claude == str(tmp_path / "claude")
    mine = where(CLAUDE_PLUGIN_DATA=str(tmp_path / "claude"), PLANNER_DATA_DIR=str(tmp_path / "p"))
    assert mine == str(tmp_path / "p")
