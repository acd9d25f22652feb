"""The top-level packages cli, shared, state, skills and hooks are common names: another tool's
`cli` installed into planner's environment shadows or overwrites planner's. The console scripts
check first (planner_entry.py) and say so in one line, exit 3, never a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import REPO, from_wheelhouse

SITE = sysconfig.get_paths()["purelib"]  # this environment's libraries: click, pydantic, pip


def fake_package(root: Path, name: str) -> Path:
    """Another tool's package `name` with a main.py and a __main__.py of its own."""
    package = root / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""Another tool."""\n')
    (package / "main.py").write_text("def main():\n    print('another tool')\n")
    (package / "__main__.py").write_text("def main():\n    print('another tool')\n")
    return package


def run(python: str, script: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The console script `script`, as pip writes it, run outside this checkout."""
    return subprocess.run(
        [python, "-c", f"import sys, planner_entry; sys.exit(planner_entry.{script}())", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd="/",  # not this checkout, whose folders `python -c` would import first
        timeout=120,
    )


def assert_named(done: subprocess.CompletedProcess[str], prog: str, name: str, at: Path) -> None:
    assert done.returncode == 3, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith(f"{prog}: the package '{name}' at {at} is not this planner's")
    assert "environment of its own" in line


@pytest.mark.parametrize("name", ["state", "cli"])
@pytest.mark.parametrize("script", ["planner", "executor", "plan"])
def test_a_shadowing_package_is_named_with_the_fix(tmp_path: Path, name: str, script: str) -> None:
    fake = fake_package(tmp_path / "other", name)
    path = f"{fake.parent}{os.pathsep}{REPO}"
    done = run(sys.executable, script, "status", PYTHONPATH=path)
    assert_named(done, script, name, fake)


def test_our_own_packages_pass(tmp_path: Path) -> None:
    done = run(sys.executable, "plan", "--version", PYTHONPATH=str(REPO))
    assert done.returncode == 0 and done.stdout.startswith("plan "), done.stderr


def venv_seeing_our_libraries(tmp_path: Path) -> tuple[Path, Path]:
    """A fresh venv whose own site-packages is empty but for a .pth line to this environment's
    libraries, so that pip installs offline (--no-deps, no build isolation)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "libraries.pth").write_text(SITE + "\n")
    return python, Path(site)


def pip_install(python: Path, wheelhouse: Path, *args: str) -> None:
    """pip install, offline: the build backend from the wheelhouse, the libraries as they are."""
    quiet = ["-q", "--no-deps", "--ignore-installed"]
    env = {**os.environ, **from_wheelhouse(wheelhouse)}
    subprocess.run([python, "-m", "pip", "install", *quiet, *args], env=env, check=True)


def source_copy(tmp_path: Path) -> Path:
    """This checkout's files (as they are now), to build from without writing into it."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    source = tmp_path / "planner"
    for name in listed:
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    return source


@pytest.mark.slow
@pytest.mark.network
@pytest.mark.parametrize("mode", ["wheel", "editable"])
def test_another_tools_cli_installed_beside_planner(
    tmp_path: Path, wheelhouse: Path, mode: str
) -> None:
    """pip installs another tool's `cli` into planner's environment: over planner's files (a
    wheel install: cli/__init__.py and cli/main.py are replaced) or ahead of its path entry
    (an editable install). `plan` says which package and where, and how to fix it."""
    python, site = venv_seeing_our_libraries(tmp_path)
    source = source_copy(tmp_path)
    editable = ["-e", str(source), "--config-settings", "editable_mode=compat"]
    pip_install(python, wheelhouse, *(editable if mode == "editable" else [str(source)]))
    plan = python.parent / "plan"
    before = subprocess.run([plan, "--version"], capture_output=True, text=True, timeout=120)
    assert before.returncode == 0 and before.stdout.startswith("plan "), before.stderr

    other = tmp_path / "other"
    fake_package(other, "cli")
    (other / "pyproject.toml").write_text(
        '[project]\nname = "othertool"\nversion = "1.0"\n'
        '[tool.setuptools]\npackages = ["cli"]\n'
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
    )
    pip_install(python, wheelhouse, str(other))
    assert (site / "cli" / "main.py").read_text().endswith("print('another tool')\n")

    for script in ("plan", "planner", "executor"):
        done = subprocess.run(
            [python.parent / script, "status"], capture_output=True, text=True, timeout=120
        )
        assert_named(done, script, "cli", site / "cli")


def test_a_command_runs_with_its_imports_frozen_and_the_collector_on(tmp_path: Path) -> None:
    """started() imports with the collector off and freezes what the import made; the command
    itself runs with the collector on, and a failed import leaves it on too."""
    (tmp_path / "probe.py").write_text(
        "import gc\n"
        "def run():\n"
        "    print(gc.isenabled(), gc.get_freeze_count() > 1000)\n"
        "    return 0\n"
    )
    script = (
        "import gc, sys, planner_entry\n"
        "code = planner_entry.started('plan', 'probe', 'run')\n"
        "try:\n"
        "    planner_entry.started('plan', 'no_such_module', 'run')\n"
        "except ImportError:\n"
        "    print(gc.isenabled())\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(tmp_path)])},
        cwd=tmp_path,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "True True\nTrue\n", "")
