"""The guard's codex and gemini dialects in the real Codex CLI and Gemini CLI (offline,
../shared/harness run-codex, run-gemini).

Observed with Gemini CLI 0.61: `hookSpecificOutput.tool_input` rewrites the command, so Bash
runs in the sandbox there. Observed with Codex 0.169: a deny reaches the model as "Command
blocked by PreToolUse hook"; `updatedInput` is ignored (the original command ran and changed
the project), so the codex dialect never wraps: layer 1 alone, commands it cannot judge
denied, no ask.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e.conftest import (
    RUN_CODEX,
    RUN_GEMINI,
    ScriptedClient,
    guard_hook,
    needs_codex,
    needs_gemini,
    start_session,
)

pytestmark = [pytest.mark.client, pytest.mark.usefixtures("plugin_environment")]


@needs_codex
def test_codex_denies_what_it_cannot_sandbox_and_keeps_approval_human(
    project: Path, scripted_client: ScriptedClient
) -> None:
    state = start_session(project)
    start = f"python3 -S -I {REPO}/hooks/session_start.py --dialect codex"
    hooks = {
        **guard_hook("codex"),
        "SessionStart": [{"hooks": [{"type": "command", "command": start}]}],
    }
    readme = (project / "README.md").read_text()
    s = scripted_client(RUN_CODEX, "guard_sandbox.json", hooks)
    reasons = [d["reason"] for d in s["hook_denials"]]
    assert len(reasons) == 3, reasons
    assert "cannot" in reasons[0] or "Python" in reasons[0]
    assert "person's decision" in reasons[1] and "terminal" in reasons[1]
    assert "scratch worktree" in reasons[2]
    assert (project / "README.md").read_text() == readme
    assert json.loads((state / "session.json").read_text())["status"] == "discovery"
    assert any("planner: an active session" in m for m in map(str, s["hook_messages"]))


@needs_gemini
def test_gemini_runs_bash_in_the_sandbox_and_denies_human_acts(
    project: Path, scripted_client: ScriptedClient
) -> None:
    state = start_session(project)
    hooks = guard_hook("gemini", "run_shell_command|write_file|replace")
    readme = (project / "README.md").read_text()
    s = scripted_client(RUN_GEMINI, "guard_sandbox.json", hooks)
    wrote = s["tool_results"][0]
    assert wrote["is_error"] or wrote["exit_code"]
    assert "Read-only file system" in wrote["text"]
    assert "planner: this command ran in the planning sandbox" in wrote["text"]
    reasons = [d["reason"] for d in s["hook_denials"]]
    assert len(reasons) == 2 and "person's decision" in reasons[0]
    assert (project / "README.md").read_text() == readme
    assert json.loads((state / "session.json").read_text())["status"] == "discovery"
