"""The guard's codex dialect in the real Codex CLI (offline, ../shared/harness run-codex).

Observed with Codex 0.169: a deny reaches the model as "Command blocked by PreToolUse hook";
`updatedInput` is ignored (the original command ran and changed the project), so the codex
dialect never wraps: layer 1 alone, commands it cannot judge denied, no ask.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e.conftest import HARNESS, SCENARIOS

RUN_CODEX = HARNESS / "run-codex"
PLANNER = Path(sys.executable).parent / "planner"
CODEX_CACHE = Path.home() / ".cache" / "claude-plugin-harness" / "codex"

pytestmark = [
    pytest.mark.claude,
    pytest.mark.skipif(not RUN_CODEX.exists(), reason=f"no run-codex in {HARNESS}"),
    pytest.mark.skipif(
        not CODEX_CACHE.exists(), reason="Codex CLI not installed by the harness (run-codex once)"
    ),
]


def test_codex_denies_what_it_cannot_sandbox_and_keeps_approval_human(
    project: Path, tmp_path: Path
) -> None:
    done = subprocess.run(
        [str(PLANNER), "--step", "1", "--task", "Add a farewell"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
    )
    state = Path(done.stdout.split("STATE_DIR=", 1)[1].split()[0])
    guard = f"python3 -S -I {REPO}/cli/guard.py --dialect codex"
    start = f"python3 -S -I {REPO}/cli/session_start.py --dialect codex"
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
