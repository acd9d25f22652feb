"""Fixtures for the plugin's end-to-end tests: a Python without the package's dependencies,
a PATH that holds only it and the system tools, and the real Claude Code through the
offline harness ($PLANNER_HARNESS, else shared/harness beside this checkout or, for a clone,
beside the repository it was cloned from).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, once_per_run


def find_harness() -> Path:
    if os.environ.get("PLANNER_HARNESS"):
        return Path(os.environ["PLANNER_HARNESS"])
    beside = [REPO.parent / "shared" / "harness"]
    origin = subprocess.run(
        ["git", "-C", str(REPO), "config", "remote.origin.url"], capture_output=True, text=True
    ).stdout.strip()
    if origin and Path(origin).is_dir():
        beside.append(Path(origin).resolve().parent / "shared" / "harness")
    return next((h for h in beside if (h / "run-claude").exists()), beside[0])


HARNESS = find_harness()
RUN_CLAUDE = HARNESS / "run-claude"
SCENARIOS = Path(__file__).resolve().parent / "scenarios"
CACHE = os.environ.get("HARNESS_CACHE_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "claude-plugin-harness"
)
RUN_CODEX = HARNESS / "run-codex"
RUN_GEMINI = HARNESS / "run-gemini"
BIN = Path(sys.executable).parent
PLANNER = BIN / "planner"
# What each client finds on PATH: this Python's console scripts and the system tools.
CLIENT_PATH = {RUN_CODEX: f"{BIN}:/usr/bin:/bin", RUN_GEMINI: f"{BIN}:/usr/local/bin:/usr/bin:/bin"}

needs_codex = pytest.mark.skipif(
    not RUN_CODEX.exists() or not Path(CACHE, "codex").exists(),
    reason="no Codex CLI installed by the harness (run-codex once)",
)
needs_gemini = pytest.mark.skipif(
    not RUN_GEMINI.exists() or not Path(CACHE, "gemini").exists() or not shutil.which("bwrap"),
    reason="no Gemini CLI installed by the harness (run-gemini once), or no bubblewrap",
)


def start_session(project: Path) -> Path:
    """`planner --step 1`: a planning session in `project`; its state directory."""
    done = subprocess.run(
        [str(PLANNER), "--step", "1", "--task", "Add a farewell"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.split("STATE_DIR=", 1)[1].split()[0])


def guard_hook(dialect: str, matcher: str = "*", before: tuple[dict[str, Any], ...] = ()) -> dict:
    """A hooks file that runs this checkout's guard in `dialect` (codex: PreToolUse; gemini:
    BeforeTool), after the hooks in `before`."""
    guard = f"python3 -S -I {REPO}/hooks/guard.py --dialect {dialect}"
    if dialect == "codex":
        hooks = [*before, {"type": "command", "command": guard}]
        return {"PreToolUse": [{"matcher": matcher, "hooks": hooks}]}
    hook = {"type": "command", "name": "planner-guard", "timeout": 10000, "command": guard}
    return {"BeforeTool": [{"matcher": matcher, "hooks": [*before, hook]}]}


ScriptedClient = Callable[..., dict[str, Any]]


@pytest.fixture
def scripted_client(project: Path, tmp_path: Path) -> ScriptedClient:
    """Runs Codex CLI or Gemini CLI (RUN_CODEX, RUN_GEMINI) in `project` on a scripted model:
    `scripted_client(client, scenario, hooks, *extra, timeout=300)` writes the scenario (a
    dict, or a file under scenarios/) and the hooks file into tmp_path, runs the client and
    returns the harness's summary, the run having exited 0."""

    def run(
        client: Path,
        scenario: dict[str, Any] | str,
        hooks: dict[str, Any],
        *extra: str,
        timeout: int = 300,
    ) -> dict[str, Any]:
        if isinstance(scenario, str):
            scenario = json.loads((SCENARIOS / scenario).read_text())
        (tmp_path / "scenario.json").write_text(json.dumps(scenario))
        (tmp_path / "hooks.json").write_text(json.dumps({"hooks": hooks}))
        out = tmp_path / "out"
        done = subprocess.run(
            [
                str(client),
                *("--scenario", str(tmp_path / "scenario.json")),
                *("--hooks-file", str(tmp_path / "hooks.json")),
                *("--workdir", str(project), "--out", str(out)),
                *("--path", CLIENT_PATH[client], "--quiet", *extra),
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        summary = out / "summary.json"
        assert summary.exists(), f"no summary (exit {done.returncode}): {done.stderr[-2000:]}"
        s: dict[str, Any] = json.loads(summary.read_text())
        assert done.returncode == 0, s.get("stderr_tail")
        return s

    return run


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin/ of a fresh venv with no site-packages: only the standard library imports."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    probe = subprocess.run(
        [str(venv / "bin" / "python3"), "-c", "import click"], capture_output=True, timeout=60
    )
    assert probe.returncode != 0, "the bare venv can import click: it is not isolated"
    return venv / "bin"


@pytest.fixture(scope="session")
def isolated_path(bare_python: Path) -> str:
    """PATH for a plugin user who never installed the package: a bare python3, git, sh."""
    dirs = [str(bare_python)]
    git = shutil.which("git")
    if git:
        dirs.append(os.path.dirname(git))
    dirs += ["/usr/bin", "/bin"]
    return os.pathsep.join(dict.fromkeys(dirs))


@pytest.fixture(scope="session")
def plugin_data(tmp_path_factory: pytest.TempPathFactory, isolated_path: str) -> Path:
    """A data dir holding the environment the launchers make for this checkout (made once
    per run, shared by the pytest-xdist workers as concurrent sessions share it).

    Pass it as PLANNER_DATA_DIR; tests/e2e/test_bootstrap.py tests how it is made.
    """
    data, lock = once_per_run(tmp_path_factory, "plugin-data")
    with lock:  # one build for all workers; `ensure` finds it made for the others
        made = subprocess.run(
            ["python3", "-S", "-I", str(REPO / "hooks" / "bootstrap.py"), "ensure"],
            env=clean_env(isolated_path, PLANNER_DATA_DIR=str(data)),
            capture_output=True,
            text=True,
            timeout=600,
        )
    assert made.returncode == 0, made.stderr
    return data


@pytest.fixture
def plugin_environment(plugin_data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The launchers (and the SessionStart bootstrap) use the environment made once, not one
    of their own per run (test_claude_bootstrap.py makes a fresh one)."""
    monkeypatch.setenv("PLANNER_DATA_DIR", str(plugin_data))


def clean_env(path: str, **extra: str) -> dict[str, str]:
    """The environment a step script sees: no planner variables, no CI, no active venv."""
    drop = ("PLANNER_STATE_DIR", "PLANNER_PYTHON", "PLANNER_DATA_DIR", "CI", "VIRTUAL_ENV")
    drop += ("PYTHONPATH", "CLAUDE_PLUGIN_DATA", "CLAUDE_ENV_FILE", "XDG_DATA_HOME")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PATH"] = path
    env.update(extra)
    return env


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A TMPDIR outside /tmp: Codex's sandbox then leaves the scratch HOME read-only."""
    where = Path(tempfile.mkdtemp(prefix="planner-e2e-", dir="/var/tmp"))
    try:
        yield where
    finally:
        shutil.rmtree(where, ignore_errors=True)


# -- the real Claude Code --------------------------------------------------------------------


@pytest.fixture(scope="session")
def harness() -> Path:
    if not RUN_CLAUDE.exists():
        pytest.skip(f"no Claude Code harness at {HARNESS} (set PLANNER_HARNESS)")
    return HARNESS


def find_claude() -> str | None:
    if os.environ.get("CLAUDE_BIN"):
        return os.environ["CLAUDE_BIN"]
    pattern = f"{CACHE}/venv/lib/python3*/site-packages/claude_agent_sdk/_bundled/claude"
    found = [f for f in glob.glob(pattern) if os.access(f, os.X_OK)]
    return found[0] if found else None


@pytest.fixture(scope="session")
def claude_bin(harness: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The CLI the harness runs; a first trivial run makes the harness install it."""
    found = find_claude()
    if found is None:
        tmp = tmp_path_factory.mktemp("install-claude")
        (tmp / "scenario.json").write_text('[{"text": "ok"}]')
        done = subprocess.run(
            [str(RUN_CLAUDE), "--scenario", str(tmp / "scenario.json"), "--quiet"],
            capture_output=True,
            text=True,
            timeout=1200,
        )
        found = find_claude()
        assert found, f"the harness did not install claude: {done.stderr[-2000:]}"
    return found


def run_claude(
    tmp_path: Path,
    scenario: dict | list | str | Path,
    *extra: str,
    plugin_dir: Path = REPO,
    timeout: int = 120,
) -> tuple[int, dict]:
    """Run one scenario (a dict, or a file under scenarios/); return (exit code, summary).

    The project is tmp_path/"project" (the `project` fixture's git repository).
    """
    if isinstance(scenario, (str, Path)):
        scenario = json.loads((SCENARIOS / scenario).read_text())
    scenario_file = tmp_path / "scenario.json"
    scenario_file.write_text(json.dumps(scenario))
    out = tmp_path / "out"
    cmd = [
        str(RUN_CLAUDE),
        "--plugin-dir",
        str(plugin_dir),
        "--scenario",
        str(scenario_file),
        "--workdir",
        str(tmp_path / "project"),
        "--out",
        str(out),
        "--timeout",
        str(timeout),
        "--quiet",
        *extra,
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 60)
    summary_file = out / "summary.json"
    assert summary_file.exists(), f"no summary (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return proc.returncode, json.loads(summary_file.read_text())
