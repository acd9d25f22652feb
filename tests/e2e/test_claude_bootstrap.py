"""The plugin in the real Claude Code with nothing installed: no PLANNER_PYTHON, a fresh
plugin data dir (each harness run has its own HOME, so CLAUDE_PLUGIN_DATA is new). The
SessionStart hook starts making the environment, the launchers wait for it or make it, and
a quick plan is walked to frozen by its routing lines. Slow: one real install per run.

The harness lets nothing out of the machine but its fake API (its proxy refuses the rest),
so pip installs from a wheelhouse downloaded from the registry just before (PIP_NO_INDEX,
PIP_FIND_LINKS): the same wheels, the same pip, no network during the run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.conftest import run_claude

pytestmark = pytest.mark.client


def test_a_quick_plan_to_frozen_in_the_environment_the_plugin_makes(
    harness: Path,
    claude_bin: str,
    project: Path,
    isolated_path: str,
    tmp_path: Path,
    wheelhouse: Path,
) -> None:
    rc, s = run_claude(
        tmp_path,
        "quick_plan.json",
        "--path",
        isolated_path,
        "--env",
        "CI=1",
        "--env",
        "PIP_NO_INDEX=1",
        "--env",
        f"PIP_FIND_LINKS={wheelhouse}",
        "--keep-home",
        timeout=600,
    )
    assert rc == 0 and s["ok"], (rc, s["stderr_tail"], s["requests"])

    # The hook handed the build to the background and returned; nothing failed the session.
    mine = [h for h in s["hook_responses"] if "Python environment" in h["stderr"]]
    assert [h["exit_code"] for h in mine] == [0]
    assert "in the background" in mine[0]["stderr"]

    results = {r["tool_use_id"]: r for r in s["tool_results"]}
    steps = [
        (c["input"]["command"], results[c["id"]]["text"])
        for c in s["tool_calls"]
        if c["name"] == "Bash" and c["id"] in results
    ]
    assert steps[0][0] == "planner --step 1 --task 'Add a farewell' --depth quick --non-interactive"
    # The first step waited for the build the hook started (its progress is on stderr,
    # which the Bash tool shows before the step's own output).
    print(steps[0][1][:600])
    headers = [m for _, out in steps for m in re.findall(r"^PLANNER \d+/11", out, re.M)]
    assert headers == [f"PLANNER {n}/11" for n in (1, 2, 3, 4, 5, 11)]
    for command, out in steps:
        assert not out.startswith("Exit code"), (command, out)
    state = Path(steps[0][1].split("STATE_DIR=")[1].split()[0])
    assert state.parent == project / ".planner"
    plan = json.loads((state / "plan.json").read_text())
    session = json.loads((state / "session.json").read_text())
    assert plan["frozen_at"] and session["approval"]["by"] == "auto"

    # The environment is in Claude Code's data dir for the plugin, made once.
    data = Path(s["run"]["home"]) / ".claude" / "plugins" / "data" / "planner-inline"
    made = json.loads((data / "venv" / "planner-env.json").read_text())
    assert made["plugin_version"] and (data / "venv" / "bin" / "planner").exists()
    log = (data / "bootstrap.log").read_text()  # made once: one first stage, one second
    assert log.count("\n== ") - log.count(" second stage in ") == 1, log[-2000:]
    assert log.count(" second stage in ") <= 1, log[-2000:]


SERVER = "mcp__plugin_planner_planner__"  # Claude Code's names for the plugin's server's tools


def test_the_companion_attaches_in_the_first_session_and_its_tools_follow_the_build(
    harness: Path,
    claude_bin: str,
    project: Path,
    isolated_path: str,
    tmp_path: Path,
    wheelhouse: Path,
) -> None:
    """Nothing installed: `plan mcp` answers Claude Code at once (its connect timeout is 30 s,
    the build takes longer) with one tool saying the environment is being made; once the
    build is done the companion's own tools replace it in the same session."""
    scenario = {
        "prompt": "Is the review companion there?",
        "turns": [
            {"tool": "ToolSearch", "input": {"query": "planner companion", "max_results": 30}},
            {"tool": f"{SERVER}companion_status", "input": {}},
            # A launcher waits for the build the session started (its lock), then runs.
            {"bash": "plan --help >/dev/null && echo built", "timeout": 600000},
            {"bash": "for i in 1 2 3 4 5; do sleep 1; done; echo waited", "timeout": 60000},
            {"tool": "ToolSearch", "input": {"query": "planner session status", "max_results": 30}},
            {"tool": f"{SERVER}list_sessions", "input": {}},
            {"text": "The companion is attached."},
        ],
    }
    rc, s = run_claude(
        tmp_path,
        scenario,
        "--path",
        isolated_path,
        "--env",
        "PIP_NO_INDEX=1",
        "--env",
        f"PIP_FIND_LINKS={wheelhouse}",
        "--allow",
        SERVER.rstrip("_"),
        "--keep-home",
        timeout=600,
    )
    assert rc == 0 and s["ok"], (rc, s["stderr_tail"], s["requests"])
    results = {r["tool_use_id"]: r for r in s["tool_results"]}
    answered = [(c["name"], results[c["id"]]) for c in s["tool_calls"] if c["id"] in results]
    by_tool = dict(answered)
    waiting = by_tool[f"{SERVER}companion_status"]
    assert not waiting["is_error"], waiting
    assert "its Python environment is being made" in waiting["text"], waiting
    built = next(r for name, r in answered if name == "Bash")
    assert built["text"].strip().endswith("built"), built
    sessions = by_tool[f"{SERVER}list_sessions"]
    assert not sessions["is_error"], sessions  # the real companion's tool, same session
    assert "No such tool" not in sessions["text"]
    stderr = (tmp_path / "out" / "stderr.txt").read_text()
    assert "timed out" not in stderr, stderr[-2000:]
