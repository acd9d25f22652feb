"""Issue 10: damaged or oddly encoded state exits 3 naming the path, bad arguments exit 2
naming the option, never 1 "unexpected error"; `plan render -o` stays inside the session
while planning."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import BIN, REPO, Plan


def plan_bytes(cwd: Path, *args: bytes, input: bytes | None = None) -> subprocess.CompletedProcess:
    """`plan` with raw byte arguments (what a shell passes for bytes that are not UTF-8)."""
    env = {k: v for k, v in os.environ.items() if k != "PLANNER_STATE_DIR"}
    return subprocess.run(
        [os.fsencode(BIN / "plan"), *args], cwd=cwd, input=input, capture_output=True, env=env
    )


def test_active_holding_invalid_utf8_exits_3_naming_it(plan: Plan, project: Path) -> None:
    (project / ".planner" / "ACTIVE").write_bytes(b"\xff\xfe session\n")
    for args in (
        ("status",),
        ("list",),
        ("decision", "add", "--decision", "D", "--reasoning", "R"),
    ):
        done = plan(*args, code=3)
        assert "ACTIVE" in done.stderr and "UTF-8" in done.stderr


@pytest.mark.parametrize(
    "damage",
    [
        b"[" * 200_000 + b"]" * 200_000,
        b'{"schema_version": 2, "n": ' + b"9" * 5000 + b"}",
        b"\xff\xfe{}",
    ],
    ids=["200000-deep", "5000-digit-integer", "bad-utf8"],
)
def test_damaged_json_exits_3_naming_the_file(plan: Plan, session_dir: Path, damage: bytes) -> None:
    (session_dir / "plan.json").write_bytes(damage)
    for args in (("show",), ("decision", "add", "--decision", "D", "--reasoning", "R")):
        done = plan(*args, code=3)
        assert "plan.json" in done.stderr
    assert (session_dir / "plan.json").read_bytes() == damage


def test_a_directory_where_a_file_should_be_exits_3(plan: Plan, session_dir: Path) -> None:
    (session_dir / "context.json").unlink()
    (session_dir / "context.json").mkdir()
    done = plan("question", "list", code=3)
    assert "context.json" in done.stderr


def test_lone_surrogates_in_arguments_exit_2_naming_the_option(
    session_dir: Path, project: Path
) -> None:
    before = (session_dir / "plan.json").read_bytes()
    done = plan_bytes(
        project, b"decision", b"add", b"--decision", b"bad \xff", b"--reasoning", b"R"
    )
    assert done.returncode == 2, done.stderr
    assert b"--decision" in done.stderr
    batch = b'[{"op": "decision add", "args": {"decision": "\\ud800", "reasoning": "R"}}]'
    done = plan_bytes(project, b"apply", b"-", input=batch)
    assert done.returncode == 2, done.stderr
    assert b"--decision" in done.stderr
    assert (session_dir / "plan.json").read_bytes() == before


def test_integers_over_4300_digits_exit_2(plan: Plan, session_dir: Path) -> None:
    batch = '[{"op": "decision add", "args": {"decision": ' + "9" * 5000 + "}}]"
    done = plan("apply", "-", input=batch, code=2)
    assert "4300" in done.stderr or "digits" in done.stderr
    done = plan("log", "--limit", "9" * 5000, code=2)
    assert "--limit" in done.stderr


def test_plan_validate_on_other_json_files(plan: Plan, session_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "my-plan.json"
    other.write_bytes((session_dir / "plan.json").read_bytes())
    assert plan("validate", str(other)).returncode == 0
    done = plan("validate", str(session_dir / "session.json"), code=2)
    said = done.stdout + done.stderr  # the finding is on stdout, the summary on stderr
    assert "session.json" in said and "not a plan" in said
    (tmp_path / "broken.json").write_text("{")
    done = plan("validate", str(tmp_path / "broken.json"), code=3)
    assert "broken.json" in done.stdout + done.stderr


def test_render_output_stays_inside_the_session_while_planning(
    plan: Plan, session_dir: Path, tmp_path: Path
) -> None:
    before = (session_dir / "plan.json").read_bytes()
    outside = tmp_path / "out.md"
    assert "inside the session" in plan("render", "-o", str(outside), code=4).stderr
    assert not outside.exists()
    for name in ("plan.json", "session.json", "history/r1.json", ".checked"):
        done = plan("render", "-o", str(session_dir / name), code=2)
        assert "state files" in done.stderr
    assert (session_dir / "plan.json").read_bytes() == before
    plan("render", "-o", str(session_dir / "plan.md"))
    assert (session_dir / "plan.md").read_text().startswith("#")
    assert "render" in (session_dir / "audit.jsonl").read_text()


def test_render_output_goes_anywhere_after_approval(
    plan: Plan, session_dir: Path, tmp_path: Path
) -> None:
    session = json.loads((session_dir / "session.json").read_text())
    session.update(status="review", workflow="planner", step=11)
    (session_dir / "session.json").write_text(json.dumps(session))
    plan("review", "approve")
    plan("render", "-o", str(tmp_path / "out.md"))
    assert (tmp_path / "out.md").read_text().startswith("#")


def test_no_unexpected_error_for_a_missing_session_json_module_run(project: Path) -> None:
    """python -m cli behaves as the console script (a smoke check of the exit-code map)."""
    done = subprocess.run(
        [sys.executable, "-m", "cli", "status", "--state-dir", str(project / "nowhere")],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "unexpected error" not in done.stderr


def test_a_damaged_file_says_where_once(plan: Plan, session_dir: Path) -> None:
    (session_dir / "plan.json").write_text('{"overview": {"title": "cut sh')
    said = plan("show", code=3).stderr
    assert "Unterminated string starting at line 1 column" in said and "at at" not in said


# A Ctrl-C raised where Python cannot raise it (a weakref callback, as importlib's module
# locks have: a suite run caught one while `plan status` imported), then the work going on.
IN_A_CALLBACK = """
import signal, sys, weakref
sys.path.insert(0, sys.argv[1])
from bootstrap import interruptible

def command(launcher, args):
    class Lock: pass
    lock = Lock()
    def cb(ref):
        raise KeyboardInterrupt
    ref = weakref.ref(lock, cb)
    del lock  # the callback raises: an "unraisable" KeyboardInterrupt
    for _ in range(10 ** 6):
        pass  # the main thread gets it at a bytecode boundary
    print("went on")
    return 0

sys.exit(interruptible(command, "plan", []))
"""


def test_a_ctrl_c_in_a_callback_ends_the_command_quietly() -> None:
    done = subprocess.run(
        [sys.executable, "-c", IN_A_CALLBACK, str(REPO / "hooks")], capture_output=True, text=True
    )
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "")


@pytest.mark.slow
def test_ctrl_c_while_python_starts_prints_no_traceback(project: Path) -> None:
    """SIGINT at a range of moments from the launcher's start to the command's run: each
    run ends quietly (130, or killed by the signal before Python handles it), never with a
    traceback."""
    env = {**os.environ, "PLANNER_PYTHON": sys.executable}
    seen = set()
    for n in range(16):
        child = subprocess.Popen(
            [str(REPO / "bin" / "plan"), "status"], cwd=project, env=env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        time.sleep(0.015 * n)
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=30)
        assert "Traceback" not in err, (n, err)
        assert child.returncode in (130, -signal.SIGINT, 2, 0), (n, child.returncode, err)
        seen.add(child.returncode)
    assert 130 in seen  # some of them landed while Python ran the launcher or imported


def test_a_missing_dependency_names_the_python_and_the_install_that_fixes_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ordered-set trial: PLANNER_PYTHON named a checkout's venv without orjson and the
    line said "pip install planner", a package the index may not hold."""
    from cli.exits import run_main

    def body() -> None:
        raise ModuleNotFoundError("No module named 'orjson'", name="orjson")

    monkeypatch.delenv("PLANNER_DATA_DIR", raising=False)
    assert run_main("plan", body) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert line == (
        f"plan: needs the orjson package, which {sys.executable} lacks; fix: {sys.executable}"
        f" -m pip install -e {REPO} (or a PLANNER_PYTHON that has it)"
    )
