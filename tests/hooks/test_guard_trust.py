"""The guard, round 3 (§7.2): the product's own commands never run unwrapped in a place the
agent writes (a repository there would be the agent's, its config run with the person's
rights), and the guard leaves a trace per session so the status can say whether anything
guards planning at all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hooks import guard_hook as guard
from hooks import hookstate
from tests.conftest import REPO
from tests.conftest import run_in_process as run  # `plan` and `planner` in this process
from tests.hooks.guard_setup import guard_call
from tests.hooks.test_guard import bash, make_session
from tests.state.test_git_hardening import planted_repository, snapshot

ALLOW, DENY = "allow", "deny"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("PLANNER_SANDBOX", "off")
    monkeypatch.setenv("PATH", "/usr/local/bin:/usr/bin:/bin")
    for name in ("PLANNER_STATE_DIR", "CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CI"):
        monkeypatch.delenv(name, raising=False)
    root = tmp_path / "project"
    (root / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def decide(payload: dict) -> tuple[str, str]:
    output = guard.run(json.dumps(payload).encode(), "claude")
    if not output:
        return ALLOW, ""
    inner = json.loads(output)["hookSpecificOutput"]
    return inner.get("permissionDecision", "wrap"), inner.get("permissionDecisionReason", "")


PLACES = [
    "cd {state}/worktree/sub && planner --step 1 --task x",
    "cd {state}/worktree && plan status",
    "cd {state}/scratch/repo; plan cancel",
    "cd .planner/s1/worktree/sub && plan status",
    "cd /nowhere || true; cd .planner/s1/worktree && plan status",  # if the first cd fails
    "cd {state} && cd worktree && plan show",
    "cd .planner && plan status",
    "plan status --state-dir .planner/s1/worktree/sub/.planner/x",
    "plan status --state-dir {state}/scratch/repo/.planner/x",
    "plan context scan --state-dir .planner/s1/worktree",
]


@pytest.mark.parametrize("command", PLACES)
def test_own_commands_in_a_place_the_agent_writes_are_denied(project: Path, command: str):
    state = make_session(project, "s1")
    (state / "worktree" / "sub").mkdir()
    (state / "scratch" / "repo").mkdir(parents=True)
    decision, reason = decide(bash(command.format(state=state), project))
    assert decision == DENY, reason
    if "--state-dir" in command:
        assert "not a session in the project's .planner/" in reason
    elif "one `plan` command per call" not in reason:
        assert "inside .planner/ where the agent writes" in reason and f"cd {project}" in reason


def test_own_commands_from_a_hook_cwd_inside_the_worktree_are_denied(project: Path):
    state = make_session(project, "s1")
    decision, reason = decide(bash("plan status", state / "worktree"))
    assert decision == DENY and "where the agent writes" in reason


def test_from_the_worktree_a_cd_to_the_project_that_must_succeed_runs_them(project: Path):
    """`cd DIR && plan …` runs plan only in DIR; with `;` or `||` it may run where it was."""
    state = make_session(project, "s1")
    inside = state / "worktree"
    assert decide(bash(f"cd {project} && plan status", inside))[0] == ALLOW
    assert decide(bash(f"cd {inside} && cd {project} && plan status", project))[0] == ALLOW
    assert decide(bash(f"cd {project}; plan status", inside))[0] == DENY
    assert decide(bash(f"cd {project} || plan status", inside))[0] == DENY
    assert decide(bash(f"cd {inside}; cd {project} && plan status", project))[0] == ALLOW
    assert decide(bash(f"cd {inside} && plan status; cd {project}", project))[0] == DENY


def test_own_commands_elsewhere_in_the_project_still_run(project: Path):
    make_session(project, "s1")
    assert decide(bash("cd sub && plan status", project))[0] == ALLOW
    assert decide(bash("plan status", project / "sub"))[0] == ALLOW
    many = " && ".join(["cd sub", "cd .."] * 3) + " && plan status"  # 6 cds: not plain
    assert decide(bash(many, project))[0] == DENY


def test_attack_6_a_planted_repository_in_the_worktree_runs_nothing(project: Path, tmp_path: Path):
    """The whole attack: a real repository with a clean filter built in the worktree, then
    the product's own command run there as the guard allows it. Nothing runs; the project,
    its .git and $HOME are as they were."""
    env = {"HOME": os.environ["HOME"], "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    started = run("planner", "--step", "1", "--task", "Add a farewell", cwd=project, env=env)
    assert started.returncode == 0, started.stderr
    state = Path(started.stdout.split("STATE_DIR=", 1)[1].split()[0])
    marker = tmp_path / "MARKER"
    sub = state / "worktree" / "sub"
    planted_repository(sub, marker)
    home = Path(os.environ["HOME"])
    before = (snapshot(project, skip=sub.parent), snapshot(home))
    for command in (f"cd {sub} && planner --step 1 --task x", f"cd {sub} && plan cancel"):
        decision, _ = decide(bash(command, project))
        assert decision == DENY
        done = subprocess.run(  # and run anyway, as if a client ignored the guard
            ["bash", "-c", command], cwd=project, env=env, capture_output=True, text=True
        )
        assert done.returncode == 4, done.stderr
    assert not marker.exists()
    after = (snapshot(project, skip=sub.parent), snapshot(home))
    own = {str(state / hookstate.TRACE), str(state / "audit.jsonl")}  # the guard's records
    assert {k: v for k, v in after[0].items() if k not in own} == {
        k: v for k, v in before[0].items() if k not in own
    }
    assert after[1] == before[1]
    assert json.loads((state / "session.json").read_text())["status"] == "discovery"


# -- a true status -----------------------------------------------------------------------------


def status(project: Path, **env: str) -> str:
    done = run("plan", "status", cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("dialect", ["codex", "claude"])
def test_the_status_says_not_guarded_until_the_guard_is_heard(project: Path, dialect: str):
    started = run("planner", "--step", "1", "--task", "Add a farewell", cwd=project)
    assert started.returncode == 0, started.stderr
    state = Path(started.stdout.split("STATE_DIR=", 1)[1].split()[0])
    client = {"CODEX_THREAD_ID": "t-1"} if dialect == "codex" else {}
    silent = status(project, **client)
    assert "guard: planning is NOT guarded" in silent
    assert ("/hooks" in silent) == (dialect == "codex")
    assert ("/plugin" in silent) == (dialect == "claude")
    start = subprocess.run(
        [
            sys.executable,
            "-S",
            "-I",
            str(REPO / "hooks" / "session_start.py"),
            "--dialect",
            dialect,
        ],
        input=json.dumps({"cwd": str(project)}),
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    assert "guard: planning is NOT guarded" in start
    guard_call(project, dialect)
    assert (state / hookstate.TRACE).exists()
    heard = status(project, **client)
    assert "NOT guarded" not in heard and "\nguard: planning is " in heard


def test_the_trace_is_outside_what_the_agent_can_write(project: Path):
    """The trace lies in the session's directory, beside session.json: neither a file tool
    (worktree only) nor a command (sandboxed: worktree and scratch only) can leave it."""
    state = make_session(project, "s1")
    decision, _ = decide(
        {
            "tool_name": "Write",
            "tool_input": {"file_path": str(state / hookstate.TRACE)},
            "cwd": str(project),
        }
    )
    assert decision == DENY
    assert (state / hookstate.TRACE).exists()  # the Write's own guard call left it
