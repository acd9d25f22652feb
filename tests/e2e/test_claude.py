"""The Claude Code plugin in the real Claude Code CLI, offline, through ../shared/harness.

The model is scripted (tests/e2e/scenarios/); Claude Code, the plugin loader, the hooks and
the Bash tool are real. Claude runs with a PATH that has a Python without the package's
dependencies and no console scripts: the step scripts that run are the plugin's bin/
launchers. Every run has its own project, HOME and port, and a time limit (run-claude
--timeout), so the tests may run in parallel.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e.conftest import clean_env, run_claude

pytestmark = [pytest.mark.client, pytest.mark.usefixtures("plugin_environment")]

SKILLS = ("planner:planner", "planner:executor")
ORIGINAL_APP = "def greet(name):\n    return 'hi ' + name\n"
FAREWELL_APP = ORIGINAL_APP + "\n\ndef farewell(name):\n    return 'bye ' + name\n"


def claude(claude_bin: str, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A `claude` subcommand with a scratch HOME and no outbound traffic."""
    env = clean_env(
        os.environ["PATH"],
        HOME=str(home),
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    return subprocess.run(
        [claude_bin, *args], env=env, capture_output=True, text=True, timeout=120, cwd=home
    )


def bash_results(summary: dict) -> list[tuple[str, dict]]:
    """(command, its tool result) for every Bash call, in order."""
    results = {r["tool_use_id"]: r for r in summary["tool_results"]}
    return [
        (c["input"]["command"], results[c["id"]])
        for c in summary["tool_calls"]
        if c["name"] == "Bash" and c["id"] in results
    ]


# -- manifests -------------------------------------------------------------------------------


def test_hooks_json_wires_the_guard_fail_closed_and_the_session_start() -> None:
    hooks = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
    [pre] = hooks["PreToolUse"]
    assert pre["matcher"] == "*"  # every tool: while planning, unknown ones are denied
    [guard] = pre["hooks"]
    assert guard["command"] == 'python3 -S -I "${CLAUDE_PLUGIN_ROOT}/hooks/guard.py"'
    assert guard["onFailure"] == "block" and guard["timeout"] <= 10
    [start] = hooks["SessionStart"]
    assert start["hooks"][0]["command"].endswith('"${CLAUDE_PLUGIN_ROOT}/hooks/session_start.py"')
    manifest = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    pyproject = (REPO / "pyproject.toml").read_text()
    assert manifest["name"] == "planner"
    assert f'\nversion = "{manifest["version"]}"\n' in pyproject


def test_claude_plugin_validate_strict_passes(claude_bin: str, tmp_path: Path) -> None:
    """`claude plugin validate --strict` on the folder (its marketplace and plugin) and on the
    manifest: no error, no warning (hooks/hooks.json holds Claude Code's events only; Gemini
    CLI's are hooks/gemini-hooks.json), and it provides the skills, commands and hooks."""
    manifest = str(REPO / ".claude-plugin" / "plugin.json")
    for target in (str(REPO), manifest):
        done = claude(claude_bin, tmp_path, "plugin", "validate", "--strict", target)
        assert done.returncode == 0, done.stdout + done.stderr
    done = claude(claude_bin, tmp_path, "plugin", "validate", "--strict", "--json", manifest)
    report = json.loads(done.stdout)
    assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []
    assert all(not p["errors"] and not p["warnings"] for p in report["contents"]), report
    provides = report["provides"]
    assert sorted(provides["skills"]) == sorted(SKILLS)
    assert sorted(provides["commands"]) == ["planner:cancel", "planner:plan", "planner:status"]
    assert sorted(provides["bin"]) == ["executor", "plan", "planner"]
    assert {h["event"] for h in provides["hooks"]} == {"PreToolUse", "SessionStart"}


def test_the_repository_is_its_own_marketplace(claude_bin: str, tmp_path: Path) -> None:
    # The README's one-step install, with a local path where users give planner-dev/planner.
    installed = claude(
        claude_bin, tmp_path, "plugin", "install", "planner", "--marketplace", str(REPO)
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    [plugin] = json.loads(claude(claude_bin, tmp_path, "plugin", "list", "--json").stdout)
    assert plugin["id"] == "planner@planner-dev" and plugin["enabled"]


def skills_ref(*args: str) -> subprocess.CompletedProcess[str]:
    """skills-ref, the Agent Skills reference validator (console script `agentskills`)."""
    script = shutil.which("agentskills", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.fail("skills-ref is missing: pip install -e '.[test]'")
    return subprocess.run([script, *args], capture_output=True, text=True, timeout=60)


def test_skills_ref_validates_each_skill(tmp_path: Path) -> None:
    # The root SKILL.md is the umbrella skill `planner`, valid where it is installed.
    umbrella = tmp_path / ".agents" / "skills" / "planner"
    umbrella.mkdir(parents=True)
    shutil.copy(REPO / "SKILL.md", umbrella / "SKILL.md")
    for skill in (REPO / "skills" / "planner", REPO / "skills" / "executor", umbrella):
        done = skills_ref("validate", str(skill))
        assert done.returncode == 0, done.stdout + done.stderr
        props = json.loads(skills_ref("read-properties", str(skill)).stdout)
        # Only the open spec's keys, and no allowed-tools (headless prompts).
        assert set(props) <= {"name", "description", "license", "compatibility", "metadata"}
        assert "<" not in props["description"] and ">" not in props["description"]
        assert "launchers" in props["compatibility"]


# -- the real Claude Code --------------------------------------------------------------------


def run(tmp_path: Path, scenario: str, isolated_path: str, *extra: str, timeout: int = 180):
    data = "PLANNER_DATA_DIR=" + os.environ["PLANNER_DATA_DIR"]
    rc, summary = run_claude(
        tmp_path,
        scenario,
        "--path",
        isolated_path,
        "--env",
        "CI=1",
        "--env",
        data,
        *extra,
        timeout=timeout,
    )
    assert rc == 0 and summary["ok"], (rc, summary["stderr_tail"], summary["requests"])
    return summary


def test_the_plugin_and_both_skills_load(
    harness: Path, project: Path, isolated_path: str, tmp_path: Path
) -> None:
    s = run(tmp_path, "init.json", isolated_path)
    [plugin] = [p for p in s["plugins"] if p["name"] == "planner"]
    manifest = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    assert plugin["path"] == str(REPO) and plugin["version"] == manifest["version"]
    assert set(SKILLS) <= set(s["plugin_skills"])
    skill, which = s["tool_results"]
    assert skill["text"] == "Launching skill: planner:planner" and not skill["is_error"]
    body = next(t for t in s["user_texts"] if t.startswith("Base directory for this skill:"))
    assert str(REPO / "skills" / "planner") in body and "planner --step 1" in body
    # No console scripts on PATH: the plugin's bin/ launchers are what the agent runs.
    assert which["text"].split() == [str(REPO / "bin" / n) for n in ("planner", "executor", "plan")]
    starts = [h for h in s["hook_responses"] if h["hook_event"] == "SessionStart"]
    assert len(starts) == 2  # the session's status and the plugin's environment (ready)
    assert all(h["exit_code"] == 0 and h["stdout"] == "" for h in starts)  # no session yet


def test_session_start_shows_where_the_session_stands(
    harness: Path, project: Path, isolated_path: str, tmp_path: Path
) -> None:
    started = subprocess.run(
        [str(REPO / "bin" / "planner"), "--step", "1", "--task", "Add a farewell"],
        cwd=project,
        env=clean_env(isolated_path, PLANNER_DATA_DIR=os.environ["PLANNER_DATA_DIR"]),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert started.returncode == 0, started.stderr
    state = started.stdout.split("STATE_DIR=", 1)[1].split()[0]
    s = run(tmp_path, "resume.json", isolated_path)
    [start] = [h for h in s["hook_responses"] if h["hook_event"] == "SessionStart" and h["stdout"]]
    assert start["exit_code"] == 0
    assert f"STATE_DIR={state}" in start["stdout"]
    assert f"planner --step 3 --state-dir {state}" in start["stdout"]
    [(command, status)] = bash_results(s)
    assert command == "planner status" and f"STATE_DIR={state}" in status["text"]


def test_planning_is_read_only_until_the_plan_is_approved(
    harness: Path, project: Path, isolated_path: str, tmp_path: Path
) -> None:
    s = run(tmp_path, "plan_then_write.json", isolated_path)
    skill = s["tool_calls"][0]
    assert skill["name"] == "Skill" and skill["input"]["skill"] == "planner:planner"
    steps = bash_results(s)
    assert steps[1][0] == "planner --step 1 --task 'Add a farewell' --non-interactive"
    state = Path(steps[1][1]["text"].split("STATE_DIR=")[1].split()[0])
    assert state.parent == project / ".planner"

    # The workflow was walked by its own routing lines, step by step, to the executor.
    # (a gate's call that runs several steps says which in a first paragraph)
    outputs = [r["text"] for _, r in steps]
    chained = re.compile(r"planner steps [\d, and]+ follow \(run here")
    outputs = [t.split("\n\n", 1)[1] if chained.match(t) else t for t in outputs]
    headers = [t.split()[:2] for t in outputs if t.startswith(("PLANNER ", "EXECUTOR "))]
    assert headers == [  # step 1 and gates 5 and 8 print the step they lead to in the same call
        *(["PLANNER", f"{n}/11"] for n in range(1, 12) if n not in (2, 6, 9)),
        ["EXECUTOR", "1/9"],
    ]
    step11 = next(t for t in outputs if t.startswith("PLANNER 11/11"))
    assert f"NEXT: executor --step 1 --state-dir {state}" in step11.splitlines()
    for command, result in steps:
        assert not result["is_error"] or command.startswith("echo"), (command, result["text"])

    # During planning: the Write and the shell redirection were denied by the guard.
    write, shell = s["hook_denials"]
    assert write["tool_name"] == "Write"
    assert write["tool_input"]["file_path"] == str(project / "src" / "app.py")
    assert "Planning is read-only until the plan is approved" in write["reason"]
    assert shell["tool_name"] == "Bash" and "README.md" in shell["tool_input"]["command"]
    [shown] = [r["text"] for c, r in steps if c.startswith("cat ")]
    assert shown.rstrip("\n") == ORIGINAL_APP.rstrip("\n")
    assert (project / "README.md").read_text() == "# Demo\n"
    audit = [json.loads(line) for line in (state / "audit.jsonl").read_text().splitlines()]
    blocked = [a for a in audit if a["event"] == "blocked"]
    assert [(a["tool"], a["decision"]) for a in blocked] == [("Write", "deny"), ("Bash", "deny")]
    assert blocked[0]["target"] == str(project / "src" / "app.py")

    # Shell commands other than the product's own ran in the sandbox, on record.
    assert any(a["event"] == "sandboxed" for a in audit) or not shutil.which("bwrap")

    # The frozen plan, then the same Write is allowed and lands.
    plan = json.loads((state / "plan.json").read_text())
    assert plan["frozen_at"] and plan["milestones"][0]["code_changes"][0]["id"] == "CC-001"
    session = json.loads((state / "session.json").read_text())
    assert session["status"] == "executing" and session["approval"]["by"] == "auto"
    writes = [r for r in s["tool_results"] if r["name"] == "Write"]
    assert [w["is_error"] for w in writes] == [True, False]
    # Step 6: the Edit in the scratch worktree was allowed and became the intent's diff.
    [edit] = [r for r in s["tool_results"] if r["name"] == "Edit"]
    assert not edit["is_error"], edit["text"]
    assert "+def farewell(name):" in plan["milestones"][0]["code_changes"][0]["diff"]
    assert (project / "src" / "app.py").read_text() == FAREWELL_APP
    assert len(s["hook_denials"]) == 2


def test_a_guard_that_cannot_run_blocks_the_call(
    harness: Path, project: Path, isolated_path: str, tmp_path: Path
) -> None:
    # The plugin's own hooks.json, with a guard that crashes (exit 1): onFailure "block".
    plugin = tmp_path / "plugin"
    shutil.copytree(REPO / ".claude-plugin", plugin / ".claude-plugin")
    shutil.copytree(REPO / "hooks", plugin / "hooks")
    (plugin / "hooks" / "guard.py").write_text("raise SystemExit(1)\n")
    (plugin / "hooks" / "session_start.py").write_text("")
    scenario = [
        {"write": {"file_path": "{{cwd}}/notes.txt", "content": "x\n"}},
        {"text": "done"},
    ]
    rc, s = run_claude(tmp_path, scenario, "--path", isolated_path, plugin_dir=plugin)
    assert rc == 0 and s["ok"], s["stderr_tail"]
    [denial] = s["hook_denials"]
    assert denial["tool_name"] == "Write" and "onFailure" in denial["reason"]
    assert not (project / "notes.txt").exists()
