"""The launchers' fast path (bin/ + hooks/bootstrap.py `fast`): with a ready environment
named by PLANNER_DATA_DIR the command runs in the environment's own Python, one start, no
python3; anything else (no stamp, a stale one, no Python, PLANNER_PYTHON) goes through the
bootstrap. Real launchers and processes: the python3 on PATH and PLANNER_PYTHON are
wrappers that write down each call, so a test sees which path ran.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e.conftest import clean_env

# Every build a test below starts must fail at once: no network, no index.
OFFLINE = {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": os.devnull}


def recorder(where: Path, name: str, real: str, log: Path) -> Path:
    """An executable `where/name` that appends its arguments to `log`, then runs `real`."""
    where.mkdir(parents=True, exist_ok=True)
    script = where / name
    script.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    script.chmod(0o755)
    return script


def calls(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


@pytest.fixture
def python3_log(tmp_path: Path, isolated_path: str) -> tuple[str, Path]:
    """PATH whose python3 (the bare one) writes down each call; and that log."""
    log = tmp_path / "python3.calls"
    bare = shutil.which("python3", path=isolated_path)
    assert bare
    recorder(tmp_path / "rec-bin", "python3", bare, log)
    return f"{tmp_path / 'rec-bin'}{os.pathsep}{isolated_path}", log


def copy_data(plugin_data: Path, to: Path) -> Path:
    """A copy of the ready data dir (the `venv` link and its environment), to damage."""
    shutil.copytree(plugin_data, to, symlinks=True, ignore=shutil.ignore_patterns("venv.lock"))
    return to


def run(
    launcher: Path, *args: str, cwd: Path, path: str, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(launcher), *args],
        cwd=cwd,
        env=clean_env(path, **env),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_ready_environment_runs_the_command_without_python3(
    project: Path, plugin_data: Path, python3_log: tuple[str, Path]
) -> None:
    path, log = python3_log
    env = {"PLANNER_DATA_DIR": str(plugin_data)}
    done = run(
        REPO / "bin" / "planner", "--step", "1", "--task", "x", cwd=project, path=path, **env
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.startswith("PLANNER 1/11 plan-init\n")
    status = run(REPO / "bin" / "plan", "status", cwd=project, path=path, **env)
    assert status.returncode == 0 and "STATE_DIR=" in status.stdout, status.stderr
    # click names the program after the launcher, as the console script did.
    usage = run(REPO / "bin" / "plan", "--help", cwd=project, path=path, **env)
    assert usage.stdout.startswith("Usage: plan ")
    assert calls(log) == [], "the fast path started python3"
    # Claude Code's own variable names the data dir as well.
    claude = run(
        REPO / "bin" / "executor",
        "--help",
        cwd=project,
        path=path,
        CLAUDE_PLUGIN_DATA=str(plugin_data),
    )
    assert claude.returncode == 0 and calls(log) == [], claude.stderr


@pytest.mark.parametrize("damage", ["no stamp", "stale stamp", "no python"])
def test_an_environment_not_known_to_be_current_goes_through_the_bootstrap(
    damage: str,
    project: Path,
    plugin_data: Path,
    python3_log: tuple[str, Path],
    tmp_path: Path,
) -> None:
    path, log = python3_log
    data = copy_data(plugin_data, tmp_path / "data")
    env_dir = data / "venv"
    (env_dir / "planner-env.key").unlink()
    if damage == "no stamp":
        (env_dir / "planner-env.json").unlink()
    elif damage == "stale stamp":
        stamp = json.loads((env_dir / "planner-env.json").read_text())
        (env_dir / "planner-env.json").write_text(json.dumps({**stamp, "plugin_version": "0.0.1"}))
    else:
        (env_dir / "bin" / "python").unlink()
    done = run(
        REPO / "bin" / "plan",
        "status",
        cwd=project,
        path=path,
        PLANNER_DATA_DIR=str(data),
        **OFFLINE,
    )
    # The bootstrap ran (python3 -S -I ... run) and tried to make the environment anew; offline
    # that fails in one line with the command that fixes it.
    assert any(call.startswith("-S -I ") for call in calls(log)), calls(log)
    assert done.returncode == 2 and done.stdout == ""
    assert "creating its Python environment" in done.stderr
    assert done.stderr.splitlines()[-1].startswith("plan: cannot create its Python environment: ")
    assert "Traceback" not in done.stderr


def test_a_touched_but_unchanged_plugin_folder_stays_on_the_fast_path(
    project: Path, plugin_data: Path, python3_log: tuple[str, Path], tmp_path: Path
) -> None:
    # The key (stat of the plugin files) no longer matches; the files still say the same.
    path, log = python3_log
    data = copy_data(plugin_data, tmp_path / "data")
    (data / "venv" / "planner-env.key").write_text("not the key\n")
    done = run(REPO / "bin" / "plan", "--help", cwd=project, path=path, PLANNER_DATA_DIR=str(data))
    assert done.returncode == 0 and done.stdout.startswith("Usage: plan "), done.stderr
    assert calls(log) == []
    assert (data / "venv" / "planner-env.key").read_text().startswith(f"{REPO}\n")


@pytest.mark.parametrize("damage", ["the package's path entry", "a dependency"])
def test_a_damaged_environment_says_so_in_one_line(
    damage: str, project: Path, plugin_data: Path, python3_log: tuple[str, Path], tmp_path: Path
) -> None:
    path, _ = python3_log
    data = copy_data(plugin_data, tmp_path / "data")
    [site] = (data / "venv" / "lib").glob("python3.*/site-packages")
    if damage == "a dependency":
        shutil.rmtree(site / "click")
    else:
        [entry] = [p for p in site.glob("*.pth") if p.read_text().strip() == str(REPO)]
        entry.unlink()
    done = run(REPO / "bin" / "plan", "status", cwd=project, path=path, PLANNER_DATA_DIR=str(data))
    assert done.returncode != 0 and done.stdout == ""
    [line] = done.stderr.splitlines()
    if damage == "a dependency":  # the command itself says what it lacks (cli/exits.py)
        assert line.startswith("plan: needs the click package, which "), line
        assert line.endswith(f"fix: python3 {REPO}/hooks/bootstrap.py rebuild"), line
    else:
        assert line.startswith("plan: the Python environment ") and "No module named" in line
        assert line.endswith(f"fix: python3 {REPO}/hooks/bootstrap.py rebuild")
        assert done.returncode == 2


def test_planner_python_is_honoured_over_a_ready_environment(
    project: Path, plugin_data: Path, python3_log: tuple[str, Path], tmp_path: Path
) -> None:
    path, log = python3_log
    chosen_log = tmp_path / "chosen.calls"
    chosen = recorder(tmp_path / "chosen", "python", sys.executable, chosen_log)
    done = run(
        REPO / "bin" / "planner",
        "--help",
        cwd=project,
        path=path,
        PLANNER_DATA_DIR=str(plugin_data),
        PLANNER_PYTHON=str(chosen),
    )
    assert done.returncode == 0 and done.stdout.lower().startswith("usage:"), done.stderr
    assert calls(chosen_log) and calls(log) == []


def test_paths_with_spaces_take_the_fast_path(
    project: Path, plugin_data: Path, python3_log: tuple[str, Path], tmp_path: Path
) -> None:
    path, log = python3_log
    # The plugin folder reached through a directory with spaces (the same folder: its
    # environment is the one made), and a data dir with spaces.
    spaced = tmp_path / "my plugins" / "planner dir"
    spaced.parent.mkdir()
    spaced.symlink_to(REPO)
    data = copy_data(plugin_data, tmp_path / "data with spaces")
    env = {"PLANNER_DATA_DIR": str(data)}
    started = run(
        spaced / "bin" / "planner", "--step", "1", "--task", "x.  y", cwd=project, path=path, **env
    )
    assert started.returncode == 0 and "x.  y" in started.stdout, started.stderr
    words = ["--decision", "a b", "--reasoning", "c  'd' $HOME"]
    done = run(spaced / "bin" / "plan", "decision", "add", *words, cwd=project, path=path, **env)
    assert done.returncode == 0 and done.stdout == "DL-001\n", done.stderr
    [plan] = project.glob(".planner/*/plan.json")
    assert "c  'd' $HOME" in plan.read_text()
    assert calls(log) == []


def test_session_start_names_the_fallback_data_dir_for_the_shell_too(
    isolated_path: str, tmp_path: Path
) -> None:
    # Without CLAUDE_PLUGIN_DATA the data dir is the XDG fallback; the agent's shell still
    # gets it as PLANNER_DATA_DIR, so its launchers take the fast path.
    env_file = tmp_path / "env.sh"
    hook = ["python3", "-S", "-I", str(REPO / "hooks" / "bootstrap.py")]
    xdg = {"XDG_DATA_HOME": str(tmp_path / "xdg")}
    done = subprocess.run(
        [*hook, "session-start"],
        env=clean_env(isolated_path, CLAUDE_ENV_FILE=str(env_file), **xdg, **OFFLINE),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    where = subprocess.run(
        [*hook, "where"], env=clean_env(isolated_path, **xdg), capture_output=True, text=True
    )
    data = where.stdout.splitlines()[0].removeprefix("data: ")
    assert data.startswith(str(tmp_path / "xdg" / "planner") + "/")
    assert env_file.read_text() == f"export PLANNER_DATA_DIR={data}\n"
