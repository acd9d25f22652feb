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
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e.conftest import HARNESS, SCENARIOS

RUN_CODEX = HARNESS / "run-codex"
RUN_GEMINI = HARNESS / "run-gemini"
PLANNER = Path(sys.executable).parent / "planner"
CACHE = Path.home() / ".cache" / "claude-plugin-harness"

pytestmark = [pytest.mark.client, pytest.mark.usefixtures("plugin_environment")]
needs_codex = pytest.mark.skipif(
    not RUN_CODEX.exists() or not (CACHE / "codex").exists(),
    reason="no Codex CLI installed by the harness (run-codex once)",
)
needs_gemini = pytest.mark.skipif(
    not RUN_GEMINI.exists() or not (CACHE / "gemini").exists() or not shutil.which("bwrap"),
    reason="no Gemini CLI installed by the harness (run-gemini once), or no bubblewrap",
)


def start_session(project: Path) -> Path:
    done = subprocess.run(
        [str(PLANNER), "--step", "1", "--task", "Add a farewell"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return Path(done.stdout.split("STATE_DIR=", 1)[1].split()[0])


@needs_codex
def test_codex_denies_what_it_cannot_sandbox_and_keeps_approval_human(
    project: Path, tmp_path: Path
) -> None:
    state = start_session(project)
    guard = f"python3 -S -I {REPO}/hooks/guard.py --dialect codex"
    start = f"python3 -S -I {REPO}/hooks/session_start.py --dialect codex"
    hooks = {
        "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": guard}]}],
        "SessionStart": [{"hooks": [{"type": "command", "command": start}]}],
    }
    (tmp_path / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    readme = (project / "README.md").read_text()
    out = tmp_path / "out"
    run = subprocess.run(
        [
            str(RUN_CODEX),
            "--scenario",
            str(SCENARIOS / "guard_sandbox.json"),
            "--hooks-file",
            str(tmp_path / "hooks.json"),
            "--workdir",
            str(project),
            "--out",
            str(out),
            "--path",
            f"{Path(sys.executable).parent}:/usr/bin:/bin",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    s = json.loads((out / "summary.json").read_text())
    assert run.returncode == 0, s["stderr_tail"]
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
    project: Path, tmp_path: Path
) -> None:
    state = start_session(project)
    guard = f"python3 -S -I {REPO}/hooks/guard.py --dialect gemini"
    hook = {"type": "command", "name": "planner-guard", "timeout": 10000, "command": guard}
    matcher = "run_shell_command|write_file|replace"
    hooks = {"BeforeTool": [{"matcher": matcher, "hooks": [hook]}]}
    (tmp_path / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    readme = (project / "README.md").read_text()
    out = tmp_path / "out"
    run = subprocess.run(
        [
            str(RUN_GEMINI),
            "--scenario",
            str(SCENARIOS / "guard_sandbox.json"),
            "--hooks-file",
            str(tmp_path / "hooks.json"),
            "--workdir",
            str(project),
            "--out",
            str(out),
            "--path",
            f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    s = json.loads((out / "summary.json").read_text())
    assert run.returncode == 0, s["stderr_tail"]
    wrote = s["tool_results"][0]
    assert wrote["is_error"] or wrote["exit_code"]
    assert "Read-only file system" in wrote["text"]
    assert "planner: this command ran in the planning sandbox" in wrote["text"]
    reasons = [d["reason"] for d in s["hook_denials"]]
    assert len(reasons) == 2 and "person's decision" in reasons[0]
    assert (project / "README.md").read_text() == readme
    assert json.loads((state / "session.json").read_text())["status"] == "discovery"
