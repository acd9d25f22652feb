"""Shared fixtures: real git repositories in temp dirs and the real console scripts."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock

from tests.inprocess import run_script
from tests.tiers import (  # noqa: F401 (the tiers' hooks)
    pytest_configure,
    pytest_runtest_makereport,
    pytest_runtest_setup,
)

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[1]

# -- tiers (docs/design.md, "Tests in tiers") ------------------------------------------------

# A test that uses one of these fixtures installs packages from the registry.
NETWORK_FIXTURES = {"plugin_data", "plugin_environment", "wheelhouse"}
# `not slow` is the quick loop: it leaves out the real clients, the browser and the network too.
IMPLY_SLOW = ("client", "browser", "network")
# PLANNER_CHECK_TIERS=1 fails a quick test over its CPU budget (tests/tiers.py); pytester
# runs that check on a made-up test (tests/test_tiers.py).
pytest_plugins = ["pytester"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if NETWORK_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.network)
        if any(item.get_closest_marker(name) for name in IMPLY_SLOW):
            item.add_marker(pytest.mark.slow)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Under pytest-xdist, hypothesis's Unicode tables (what st.text() draws from: ~2 s of CPU
    to compute, then kept in .hypothesis/) are made once, before the workers start, not in
    each worker's first test that draws text (which the tiers' check then charges for them)."""
    if not session.config.getoption("numprocesses", None) or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    import warnings

    from hypothesis import strategies as st

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # example() is meant for the console
        st.text(st.characters(codec="utf-8")).example()


def once_per_run(tmp_path_factory: pytest.TempPathFactory, name: str) -> tuple[Path, FileLock]:
    """A directory every pytest-xdist worker of this run shares, and the lock to hold while
    making it: expensive read-only set-up (an installed environment, downloaded wheels, a
    built wheel) is made once per run, not once per worker. In one process it is simply
    the run's own temp dir."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's temp dir, above each worker's popen-gwN
    (base / name).mkdir(exist_ok=True)
    return base / name, FileLock(str(base / f"{name}.lock"))


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The declared dependencies and the build backend, downloaded with pip once per run:
    an install from it (PIP_NO_INDEX, PIP_FIND_LINKS) needs no network during the test."""
    import tomllib

    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    wanted = [*pyproject["build-system"]["requires"], *pyproject["project"]["dependencies"]]
    where, lock = once_per_run(tmp_path_factory, "wheelhouse")
    with lock:
        if (where.parent / "wheelhouse.complete").exists():
            return where
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--dest", str(where), *wanted],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot download the dependencies: {done.stderr.strip()[-300:]}")
        (where.parent / "wheelhouse.complete").touch()
    return where


def from_wheelhouse(wheelhouse: Path) -> dict[str, str]:
    """Environment for pip (and pre-commit's pip) to install from the wheelhouse alone."""
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse)}


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def run(
    script: str, *args: str, cwd: Path, input: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """One of the package's console scripts (plan, planner, executor) as a real subprocess."""
    full_env = {k: v for k, v in os.environ.items() if k not in ("PLANNER_STATE_DIR", "CI")}
    full_env.update(env or {})
    return subprocess.run(
        [str(BIN / script), *args],
        cwd=cwd,
        input=input,
        text=True,
        capture_output=True,
        env=full_env,
        timeout=120,
    )


def run_in_process(
    script: str,
    *args: str,
    cwd: Path,
    input: str | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`run`, in this process (tests/inprocess.py): the same environment, no process start."""
    environ = {k: v for k, v in os.environ.items() if k not in ("PLANNER_STATE_DIR", "CI")}
    return run_script(script, *args, cwd=cwd, input=input, environ={**environ, **(env or {})})


_TEMPLATES: dict[str, Path] = {}


def from_template(name: str, make: Callable[[Path], object], where: Path) -> Path:
    """`where`, a copy of what `make(root)` makes (a committed git repository, say), which is
    made once per test process: a copied repository is the same repository, and a copy costs
    less than the git processes that made it."""
    if name not in _TEMPLATES:
        base = Path(tempfile.mkdtemp(prefix="planner-template-"))
        atexit.register(shutil.rmtree, base, ignore_errors=True)
        make(base / "root")
        _TEMPLATES[name] = base / "root"
    return Path(shutil.copytree(_TEMPLATES[name], where, symlinks=True))


def _project(root: Path) -> None:
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    (root / "README.md").write_text("# Demo\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-qm", "init")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git repository with one commit: src/app.py and README.md."""
    return from_template("project", _project, tmp_path / "project")


@pytest.fixture
def session_dir(project: Path) -> Path:
    """A fresh planning session in `project`, made ACTIVE."""
    from state.ops import session

    store = session.create(str(project), "Add a farewell", {}, non_interactive=False)
    return Path(store.dir)


class Plan:
    """Runs `plan …` in a project and checks exit codes: in this process (the fast tier), or
    as the console script when `process` is true (for what needs a process of its own)."""

    def __init__(self, cwd: Path, process: bool = False):
        self.cwd = cwd
        self.process = process

    def __call__(
        self, *args: str, input: str | None = None, code: int = 0, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        if self.process:
            done = run("plan", *args, cwd=self.cwd, input=input, env=env)
        else:
            done = run_in_process("plan", *args, cwd=self.cwd, input=input, env=env)
        assert done.returncode == code, (args, done.returncode, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
        return done

    def ids(self, *args: str, input: str | None = None) -> list[str]:
        """The ids printed, one per line."""
        return self(*args, input=input).stdout.split()

    def json(self, *args: str) -> object:
        return json.loads(self(*args, "--json").stdout)


@pytest.fixture
def plan(project: Path, session_dir: Path) -> Plan:
    return Plan(project)
