"""The plugin makes its own environment (hooks/bootstrap.py): real launchers, real venv and
pip against the package registry, on a copy of the plugin folder so that its version can be
bumped. Slow (each build is a real install): the environments are made once per module.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, git
from tests.e2e.conftest import clean_env

# One worker under pytest-xdist (--dist loadgroup): the module's first launch (a real build,
# the costliest set-up of the suite) is then made once, not once per worker.
pytestmark = [pytest.mark.network, pytest.mark.xdist_group("bootstrap")]

NAMES = ("planner", "executor", "plan")


def launch(
    plugin: Path, name: str, *args: str, cwd: Path, path: str, data: Path, **env: str
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(plugin / "bin" / name), *args],
        cwd=cwd,
        env=clean_env(path, PLANNER_DATA_DIR=str(data), **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str], timeout: int = 600) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def environments(data: Path) -> list[Path]:
    return sorted(p for p in data.iterdir() if p.name.startswith("venv-"))


def made_from(data: Path) -> dict:
    return json.loads((data / "venv" / "planner-env.json").read_text())


def new_repo(where: Path) -> Path:
    where.mkdir(parents=True)
    git(where, "init", "-q", "-b", "main")
    return where


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the plugin folder (tracked and new files), as a marketplace install has."""
    copy = tmp_path_factory.mktemp("plugin") / "planner"
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    for rel in filter(None, files):
        source = REPO / rel
        if source.is_file():
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            (copy / rel).write_bytes(source.read_bytes())
            (copy / rel).chmod(source.stat().st_mode)
    return copy


@pytest.fixture(scope="module")
def first_launch(
    plugin: Path, isolated_path: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[tuple[int, str, str]], float]:
    """Two launchers started at once on a fresh data dir: (data dir, their results, seconds)."""
    root = tmp_path_factory.mktemp("first")
    data = root / "data"
    one, two = new_repo(root / "one"), new_repo(root / "two")
    started = time.monotonic()
    procs = [
        launch(
            plugin, "planner", "--step", "1", "--task", "x", cwd=one, path=isolated_path, data=data
        ),
        launch(plugin, "plan", "schema", "plan", cwd=two, path=isolated_path, data=data),
    ]
    results = [finish(p) for p in procs]
    return data, results, time.monotonic() - started


def test_two_first_launches_at_once_make_one_environment_and_both_run(
    first_launch: tuple[Path, list[tuple[int, str, str]], float],
) -> None:
    data, [(rc1, out1, err1), (rc2, out2, err2)], seconds = first_launch
    print(f"first launch, two at once: {seconds:.1f} s")
    assert rc1 == 0 and rc2 == 0, (err1, err2)
    assert out1.startswith("PLANNER 1/11 plan-init\n")
    assert json.loads(out2)["title"]
    # One made it, the other waited for it; progress went to stderr.
    both = err1 + err2
    assert both.count("creating its Python environment") == 1, both
    assert "waiting for another process" in both and "environment ready" in both
    assert "Traceback" not in both
    [env] = environments(data)
    assert (data / "venv").resolve() == env
    log = (data / "bootstrap.log").read_text()
    assert len([ln for ln in log.splitlines() if ln.startswith("== ") and " from " in ln]) == 1


def second_stage_in(data: Path) -> None:
    """Wait for the second stage the first launch started in the background (its marker)."""
    full = data / "venv" / "planner-env.full"
    deadline = time.monotonic() + 600
    while not full.exists() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert full.exists(), (data / "bootstrap.log").read_text()[-2000:]


def test_the_second_stage_follows_in_the_background(
    plugin: Path, isolated_path: str, first_launch: tuple, tmp_path: Path
) -> None:
    """The steps' packages first; the review page's and the companion's after them, started
    by the launcher that made the first stage, once (docs/design.md)."""
    data = first_launch[0]
    second_stage_in(data)
    log = (data / "bootstrap.log").read_text()
    assert log.count(" second stage in ") == 1, log[-2000:]
    python = data / "venv" / "bin" / "python"
    done = subprocess.run(
        [str(python), "-I", "-c", "import starlette, uvicorn, markdown_it, mcp"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    rc, out, err = finish(
        launch(plugin, "plan", "review", "--help", cwd=tmp_path, path=isolated_path, data=data)
    )
    assert rc == 0 and err == "" and "open" in out, err


def test_a_made_environment_is_used_as_is(
    plugin: Path, isolated_path: str, first_launch: tuple, tmp_path: Path
) -> None:
    data = first_launch[0]
    before = environments(data)
    made = made_from(data)
    assert made["plugin_version"] == "0.1.0" and made["root"] == str(plugin)
    declared = {d.split(">")[0].split("<")[0] for d in made["dependencies"]}
    pyproject = tomllib.loads((plugin / "pyproject.toml").read_text())
    wanted = {d.split(">")[0].split("<")[0] for d in pyproject["project"]["dependencies"]}
    assert declared == wanted and {"pydantic", "click", "jinja2", "filelock"} <= declared
    for name in NAMES:
        rc, _, err = finish(
            launch(
                plugin, name, "--help", cwd=new_repo(tmp_path / name), path=isolated_path, data=data
            )
        )
        assert rc == 0 and err == "", (name, err)
    # The package imports from the environment (the plugin folder, installed editable).
    python = data / "venv" / "bin" / "python"
    where = subprocess.run(
        [
            str(python),
            "-I",
            "-c",
            "import cli, click, jinja2, pydantic, filelock; print(cli.__file__)",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert where.stdout.strip() == str(plugin / "cli" / "__init__.py"), where.stderr
    # The editable install the launcher wrote itself: its console script and its dist-info.
    version = subprocess.run(
        [str(data / "venv" / "bin" / "plan"), "--version"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert version.stdout == f"plan {pyproject['project']['version']}\n", version.stderr
    assert environments(data) == before


def test_a_creation_that_fails_says_so_in_one_line_and_exits_2(
    plugin: Path, isolated_path: str, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    nothing = tmp_path / "no-wheels"
    nothing.mkdir()
    offline = {
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(nothing),
    }
    rc, out, err = finish(
        launch(
            plugin,
            "plan",
            "status",
            cwd=new_repo(tmp_path / "p"),
            path=isolated_path,
            data=data,
            **offline,
        )
    )
    assert rc == 2 and out == ""
    assert "Traceback" not in err
    [line] = [ln for ln in err.splitlines() if "cannot" in ln]
    assert err.endswith(line + "\n")
    assert line.startswith("plan: cannot create its Python environment: ")
    assert "pip install failed" in line and "fix: " in line
    assert f"{plugin}/hooks/bootstrap.py rebuild" in line
    # Nothing half-made is left to be used.
    assert not (data / "venv").exists() and environments(data) == []


def test_session_start_hands_the_data_dir_to_the_shell_and_builds_in_the_background(
    plugin: Path, isolated_path: str, first_launch: tuple, tmp_path: Path
) -> None:
    hook = ["python3", "-S", "-I", str(plugin / "hooks" / "bootstrap.py"), "session-start"]
    env_file = tmp_path / "env.sh"
    ready = first_launch[0]
    second_stage_in(ready)  # ready: both stages (xdist may run the test above on another worker)
    done = subprocess.run(
        hook,
        env=clean_env(isolated_path, CLAUDE_PLUGIN_DATA=str(ready), CLAUDE_ENV_FILE=str(env_file)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    assert env_file.read_text() == f"export PLANNER_DATA_DIR={ready}\n"

    # A fresh dir: the hook returns at once and the build runs detached (here it fails:
    # offline), with its outcome in the log; the hook itself never fails the session.
    data = tmp_path / "fresh"
    offline = {"PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(tmp_path)}
    done = subprocess.run(
        hook,
        env=clean_env(isolated_path, CLAUDE_PLUGIN_DATA=str(data), **offline),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout == ""
    assert "creating its Python environment in the background" in done.stderr
    log = data / "bootstrap.log"
    deadline = time.monotonic() + 300
    while "cannot create" not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline, log.read_text() if log.exists() else "no log"
        time.sleep(0.5)
    assert "Traceback" not in log.read_text()


def test_planner_python_wins(plugin: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    rc, out, err = finish(
        launch(
            plugin,
            "planner",
            "--step",
            "1",
            "--task",
            "x",
            cwd=new_repo(tmp_path / "p"),
            path="/usr/bin:/bin",
            data=data,
            PLANNER_PYTHON=sys.executable,
        )
    )
    assert rc == 0 and out.startswith("PLANNER 1/11"), err
    assert not data.exists()


def test_a_version_bump_makes_it_anew(
    plugin: Path, isolated_path: str, first_launch: tuple, tmp_path: Path
) -> None:
    data = first_launch[0]
    [old] = environments(data)
    manifest = plugin / ".claude-plugin" / "plugin.json"
    bumped = json.loads(manifest.read_text())
    bumped["version"] = "0.1.1"
    manifest.write_text(json.dumps(bumped, indent=2))
    rc, out, err = finish(
        launch(
            plugin,
            "planner",
            "--step",
            "1",
            "--task",
            "x",
            cwd=new_repo(tmp_path / "p"),
            path=isolated_path,
            data=data,
        )
    )
    assert rc == 0 and out.startswith("PLANNER 1/11"), err
    assert "creating its Python environment" in err
    [new] = environments(data)
    assert new != old and not old.exists()
    assert made_from(data)["plugin_version"] == "0.1.1"


@pytest.fixture(scope="module")
def uv_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding only `uv` (installed with pip from the registry)."""
    root = tmp_path_factory.mktemp("uv")
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True, timeout=300)
    done = subprocess.run(
        [str(root / "venv" / "bin" / "python"), "-m", "pip", "install", "--quiet", "uv"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot install uv: {done.stderr.strip()[-300:]}")
    (root / "bin").mkdir()
    (root / "bin" / "uv").symlink_to(root / "venv" / "bin" / "uv")
    return root / "bin"


def test_uv_makes_it_when_on_path(
    plugin: Path, isolated_path: str, uv_only: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    path = f"{uv_only}{os.pathsep}{isolated_path}"
    rc, out, err = finish(
        launch(plugin, "plan", "schema", "plan", cwd=new_repo(tmp_path / "p"), path=path, data=data)
    )
    assert rc == 0 and json.loads(out)["title"], err
    assert "with uv" in err and "with pip" not in err
    assert f"$ {uv_only / 'uv'} venv" in (data / "bootstrap.log").read_text()
    [env] = environments(data)
    assert not (env / "bin" / "pip").exists()  # uv's venv: no pip inside, none needed


# -- failures of the data dir: one line and exit 2, never a traceback -------------------------


@contextlib.contextmanager
def tmpfs(where: Path, size: str = "1m") -> Iterator[Path]:
    """A small tmpfs at `where` (root only; the test is skipped elsewhere)."""
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    )
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()[:120]}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def one_line_exit_2(plugin: Path, isolated_path: str, data: Path, cwd: Path) -> str:
    rc, out, err = finish(launch(plugin, "plan", "status", cwd=cwd, path=isolated_path, data=data))
    assert rc == 2 and out == "", err
    assert "Traceback" not in err
    [line] = [ln for ln in err.splitlines() if "cannot" in ln or "failed" in ln]
    assert err.endswith(line + "\n")
    assert line.startswith("plan: cannot create its Python environment: ") and "fix: " in line
    return line


def test_a_read_only_data_dir_is_one_line_and_exit_2(
    plugin: Path, isolated_path: str, tmp_path: Path
) -> None:
    with tmpfs(tmp_path / "ro") as data:
        remount = subprocess.run(["mount", "-o", "remount,ro", str(data)], capture_output=True)
        if remount.returncode:
            pytest.skip("cannot remount read-only here")
        line = one_line_exit_2(plugin, isolated_path, data, new_repo(tmp_path / "p"))
    assert f"{data}/venv.lock" in line and "Read-only file system" in line
    # The fix works where the launcher cannot write (Codex's sandbox): a terminal, once.
    assert f"outside the agent's sandbox: python3 {plugin}/hooks/bootstrap.py ensure" in line


def test_a_read_only_data_dir_waits_for_the_build_another_process_makes(
    plugin: Path, isolated_path: str, tmp_path: Path, first_launch
) -> None:
    """Inside Codex's sandbox HOME is read-only while the SessionStart hook, outside it, makes
    the environment: the launcher waits on the lock it cannot write, then runs in what the
    hook made."""
    import fcntl

    made = (first_launch[0] / "venv").resolve()
    writable, data = tmp_path / "rw", tmp_path / "ro"
    writable.mkdir()
    data.mkdir()
    if subprocess.run(["mount", "--bind", str(writable), str(data)]).returncode:
        pytest.skip("cannot bind-mount here")
    try:
        ro = subprocess.run(["mount", "-o", "remount,bind,ro", str(data)], capture_output=True)
        if ro.returncode:
            pytest.skip("cannot remount read-only here")
        fd = os.open(writable / "venv.lock", os.O_RDWR | os.O_CREAT)
        fcntl.flock(fd, fcntl.LOCK_EX)  # the hook's build, in progress
        proc = launch(
            plugin, "plan", "schema", "plan", cwd=new_repo(tmp_path / "p"), path=isolated_path,
            data=data,
        )  # fmt: skip
        try:
            assert proc.stderr is not None
            assert "waiting for another process" in proc.stderr.readline()
            (writable / "venv").symlink_to(made)  # the build is done
        finally:
            os.close(fd)
        rc, out, err = finish(proc)
        assert rc == 0 and json.loads(out)["title"], err
    finally:
        subprocess.run(["umount", "-l", str(data)], capture_output=True)


def test_a_full_data_dir_is_one_line_and_exit_2(
    plugin: Path, isolated_path: str, tmp_path: Path
) -> None:
    with tmpfs(tmp_path / "full") as data:
        fd = os.open(data / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            for size in (65536, 4096, 1):
                with contextlib.suppress(OSError):
                    while os.write(fd, b"x" * size):
                        pass
        finally:
            os.close(fd)
        line = one_line_exit_2(plugin, isolated_path, data, new_repo(tmp_path / "p"))
        assert not (data / "venv").exists() and environments(data) == []
    assert "No space left on device" in line or "failed" in line


@pytest.mark.parametrize("left", ["", "half a line", None])
def test_a_waiter_finding_a_failed_build_says_why_in_one_line(
    plugin: Path, isolated_path: str, tmp_path: Path, left: str | None
) -> None:
    """The build it waited for died leaving venv.failed empty, cut short, or not a file."""
    import fcntl

    data = tmp_path / "data"
    data.mkdir()
    fd = os.open(data / "venv.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    proc = launch(
        plugin, "plan", "status", cwd=new_repo(tmp_path / "p"), path=isolated_path, data=data
    )
    try:
        assert proc.stderr is not None
        assert "waiting for another process" in proc.stderr.readline()
        if left is None:
            (data / "venv.failed").mkdir()
        else:
            (data / "venv.failed").write_text(left)
    finally:
        os.close(fd)  # the "builder" is done: the waiter reads venv.failed
    rc, out, err = finish(proc)
    assert rc == 2 and out == "", err
    assert "Traceback" not in err
    [line] = [ln for ln in err.splitlines() if "cannot" in ln]
    assert err.endswith(line + "\n")
    assert line.startswith("plan: cannot create its Python environment: ") and "fix: " in line
    if left == "half a line":
        assert "half a line" in line
    else:
        assert "venv.failed" in line
    assert not (data / "venv").exists()


def test_plan_mcp_without_an_environment_answers_at_once_and_says_why_it_cannot_start(
    tmp_path: Path, isolated_path: str
) -> None:
    """A client's first session (hooks/mcp_wait.py): `plan mcp` answers initialize and
    tools/list while no environment exists, with one tool saying it is being made; a build
    that fails (here: an empty package index) is what that tool then answers."""
    import queue
    import threading

    data = tmp_path / "data"
    empty = tmp_path / "index"
    empty.mkdir()
    env = clean_env(
        isolated_path,
        PLANNER_DATA_DIR=str(data),
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(empty),
        UV_OFFLINE="1",
    )
    server = subprocess.Popen(
        [str(REPO / "bin" / "plan"), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert server.stdin is not None and server.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(ln) for ln in server.stdout], daemon=True).start()

    def ask(ident: int, method: str, params: dict | None = None) -> dict:
        message = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}}
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
        return json.loads(lines.get(timeout=60))

    try:
        hello = ask(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
        assert not (data / "venv").exists()  # answered before any environment exists
        assert hello["result"]["capabilities"]["tools"] == {"listChanged": True}
        [tool] = ask(2, "tools/list")["result"]["tools"]
        assert tool["name"] == "companion_status"
        assert "being made" in tool["description"] and str(data) in tool["description"]
        for attempt in range(300):
            answer = ask(3 + attempt, "tools/call", {"name": "companion_status", "arguments": {}})
            if answer["result"]["isError"]:
                break
            time.sleep(1)
        text = answer["result"]["content"][0]["text"]
        assert text.startswith("planner's review companion cannot start: pip install failed")
        assert not (data / "venv").exists()
    finally:
        server.stdin.close()
        server.wait(timeout=30)
    assert server.returncode == 0
