"""The README's first command installs the package from a wheel, not from this checkout: the
wheel must carry every template, role, schema and skill file the code reads, and a plan must
start from it alone."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO, once_per_run

pytestmark = pytest.mark.network

PACKAGES = ("cli", "shared", "state", "skills", "hooks")


def tracked_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    return listed.splitlines()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from the tracked files alone, as from a clean checkout."""
    tmp, lock = once_per_run(tmp_path_factory, "wheel")  # built once, whichever worker asks
    with lock:
        if not list(tmp.glob("planner-*.whl")):
            source = tmp / "source"
            for name in tracked_files():
                (source / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO / name, source / name)
            build = [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q"]
            subprocess.run([*build, "-w", str(tmp)], check=True, timeout=600)
    return next(tmp.glob("planner-*.whl"))


def test_the_wheel_holds_every_data_file(wheel: Path) -> None:
    packaged = set(zipfile.ZipFile(wheel).namelist())
    data = [
        name
        for name in tracked_files()
        if name.split("/")[0] in PACKAGES and not name.endswith(".py")
    ]
    assert data, "no data files found: is this a git checkout?"
    assert [name for name in data if name not in packaged] == []


def test_the_wheel_holds_every_module(wheel: Path) -> None:
    """A subpackage left out of pyproject's packages (cli/commands/) would break `plan`."""
    packaged = set(zipfile.ZipFile(wheel).namelist())
    modules = [n for n in tracked_files() if n.split("/")[0] in PACKAGES and n.endswith(".py")]
    modules.append("planner_entry.py")  # the console scripts' entry, a top-level module
    assert [name for name in modules if name not in packaged] == []


def test_a_plan_starts_from_the_installed_wheel(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    # with its declared dependencies, as a user's pip install does
    subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", str(wheel)],
        check=True,
        timeout=300,
    )
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    done = subprocess.run(
        [str(venv / "bin" / "planner"), "--step", "1", "--task", "Add a --version flag"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "STATE_DIR=" in done.stdout and "NEXT: planner --step 3" in done.stdout
    role = subprocess.run(
        [str(venv / "bin" / "planner"), "role", "architect"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert role.returncode == 0 and "architect" in role.stdout, role.stderr
