"""The guard, round 2: every tool is matched (unknown ones denied while planning), and no
configuration or damage lowers protection while ACTIVE names a planning session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hooks import test_guard
from tests.hooks.test_guard import (
    ALLOW,
    DENY,
    GUARD,
    bash,
    decide,
    make_session,
    parse_output,
    write,
)

pytestmark = pytest.mark.usefixtures("home")
home, project = test_guard.home, test_guard.project  # the fixtures, shared


@pytest.fixture
def session(project):
    return make_session(project, "s1")


def tool(name: str, cwd: Path, tool_input: dict) -> dict:
    return {"tool_name": name, "tool_input": tool_input, "cwd": str(cwd)}


# -- item 10: tools outside the old matcher ----------------------------------------------------


@pytest.mark.parametrize(
    ("name", "tool_input"),
    [
        ("CronCreate", {"cron": "* * * * *", "prompt": "rm -rf src", "durable": True}),
        ("EnterWorktree", {"name": "x"}),
        ("bash", {"command": "rm -rf src"}),
        ("Bash ", {"command": "rm -rf src"}),
        ("save_memory", {"fact": "x"}),
        ("write_stdin", {"session_id": 1, "chars": "rm -rf src\n"}),
        ("mcp__fs__write_file", {"path": "README.md"}),
        ("SomeToolOfNextYear", {}),
    ],
)
def test_unknown_tools_are_denied_while_planning(session, project, name, tool_input):
    decision, reason = decide(tool(name, project, tool_input))
    assert decision == DENY, reason
    assert "not a tool the guard knows" in reason and "plan worktree" in reason
    assert json.loads((session / "audit.jsonl").read_text().splitlines()[-1])["tool"] == name


@pytest.mark.parametrize(
    "name", ["Read", "Grep", "Glob", "TodoWrite", "Task", "WebFetch", "read_file", "glob"]
)
def test_known_read_only_tools_pass(session, project, name):
    assert decide(tool(name, project, {"file_path": str(project / "README.md")}))[0] == ALLOW


def test_unknown_tools_pass_once_approved(project):
    make_session(project, "s1", status="approved")
    assert decide(tool("CronCreate", project, {"durable": True}))[0] == ALLOW


def test_the_plugin_matches_every_tool():
    hooks = json.loads((GUARD.parents[1] / "hooks" / "hooks.json").read_text())["hooks"]
    assert [entry["matcher"] for entry in hooks["PreToolUse"]] == ["*"]


# -- item 12: configuration and damage cannot open it -----------------------------------------


def test_a_stale_or_missing_planner_state_dir_does_not_open_it(session, project, monkeypatch):
    for stale in ("/nonexistent/session", str(project / ".planner" / "gone"), ""):
        monkeypatch.setenv("PLANNER_STATE_DIR", stale)
        assert decide(bash("rm -rf src", project))[0] == DENY, stale


def test_a_state_dir_naming_an_approved_session_does_not_open_it(session, project, monkeypatch):
    done = make_session(project, "old", status="approved")
    (project / ".planner" / "ACTIVE").write_text("s1\n")  # the planning one stays active
    monkeypatch.setenv("PLANNER_STATE_DIR", str(done))
    assert decide(bash("rm -rf src", project))[0] == DENY


@pytest.mark.parametrize("named", ["/", "sub", "elsewhere"])
def test_a_project_dir_that_is_not_the_root_does_not_open_it(
    session, project, tmp_path, monkeypatch, named
):
    target = {"/": "/", "sub": str(project / "sub"), "elsewhere": str(tmp_path / "else")}[named]
    os.makedirs(target, exist_ok=True)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", target)
    assert decide(bash("rm -rf src", project))[0] == DENY
    assert decide(write(project / "README.md", project))[0] == DENY


@pytest.mark.parametrize("status", ["bogus", "", "Approved", "planning", "review "])
def test_an_unknown_status_is_planning(project, status):
    make_session(project, "s1", status=status)
    assert decide(bash("rm -rf src", project))[0] == DENY


@pytest.mark.parametrize(
    "damage",
    ["truncated", "not-json", "status-number", "directory", "bad-utf8", "active-bad-utf8"],
)
def test_a_damaged_session_or_active_file_is_denied(session, project, damage):
    path = session / "session.json"
    if damage == "truncated":
        path.write_text(path.read_text()[:10])
    elif damage == "not-json":
        path.write_text("[1, 2")
    elif damage == "status-number":
        path.write_text(json.dumps({"id": "s1", "status": 3}))
    elif damage == "directory":
        path.unlink()
        path.mkdir()
    elif damage == "bad-utf8":
        path.write_bytes(b'{"status": "\xff\xfe"}')
    else:
        (project / ".planner" / "ACTIVE").write_bytes(b"s1\xff\n")
    decision, reason = decide(bash("rm -rf src", project))
    assert decision == DENY and "damaged" in reason


def test_an_active_file_naming_nothing_is_no_session(project):
    (project / ".planner").mkdir()
    (project / ".planner" / "ACTIVE").write_text("gone\n")
    assert decide(bash("rm -rf src", project))[0] == ALLOW


# -- the guard runs, or denies, on any python3 -----------------------------------------------

PYENV = Path(os.path.expanduser("~/.pyenv/versions"))
OLD_PYTHONS = [
    python
    for version in ("3.6", "3.7", "3.8")
    for python in sorted(PYENV.glob(f"{version}.*/bin/python{version[0]}"))[:1]
]


def test_the_entry_parses_on_python_3_6():
    """guard.py itself must parse everywhere (the version check is in it); what it imports
    may use newer syntax."""
    import ast

    source = GUARD.read_text()
    assert "\nfrom __future__ import annotations" not in source
    ast.parse(source, feature_version=(3, 6))


@pytest.mark.skipif(not OLD_PYTHONS, reason="no older Pythons under ~/.pyenv/versions")
@pytest.mark.parametrize("python", OLD_PYTHONS, ids=lambda p: p.parts[-3])
def test_an_unsupported_python_denies_with_exit_2(python, session, project):
    payload = json.dumps(bash("rm -rf src", project)).encode()
    done = subprocess.run(
        [str(python), "-S", str(GUARD)], input=payload, capture_output=True, timeout=60
    )
    version = subprocess.run(
        [str(python), "-c", "import sys; print(sys.version_info >= (3, 8))"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    if version == "True":
        assert done.returncode == 0, done.stderr
        assert parse_output(done.stdout)[0] == DENY
    else:
        assert done.returncode == 2, done.stderr
        assert b"Python 3.8" in done.stderr and b"Traceback" not in done.stderr
        assert parse_output(done.stdout)[0] == DENY


def test_the_guard_runs_under_this_python_as_a_script(session, project):
    payload = json.dumps(bash("rm -rf src", project)).encode()
    done = subprocess.run(
        [sys.executable, "-S", "-I", str(GUARD)], input=payload, capture_output=True, timeout=60
    )
    assert done.returncode == 0 and parse_output(done.stdout)[0] == DENY
