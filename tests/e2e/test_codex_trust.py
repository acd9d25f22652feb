"""A true status in the real Codex CLI (offline, ../shared/harness run-codex): with planner's
hooks not yet trusted nothing guards planning (Codex runs untrusted hooks silently inert),
and `planner status` says so and what to do; trusted, the guard is heard and it says what
guards."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e.test_other_harnesses_guard import RUN_CODEX, needs_codex, start_session

pytestmark = pytest.mark.client


def codex(project: Path, tmp_path: Path, *extra: str) -> dict:
    guard = f"python3 -S -I {REPO}/hooks/guard.py --dialect codex"
    hooks = {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": guard}]}]}
    (tmp_path / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    scenario = {
        "prompt": "Where does the plan stand? Then note it in the README.",
        "turns": [
            {"bash": "planner status", "description": "Where the plan stands"},
            {"bash": "echo noted >> README.md", "description": "A note"},
            {"text": "done"},
        ],
    }
    (tmp_path / "scenario.json").write_text(json.dumps(scenario))
    out = tmp_path / "out"
    run = subprocess.run(
        [
            str(RUN_CODEX),
            *("--scenario", str(tmp_path / "scenario.json")),
            *("--hooks-file", str(tmp_path / "hooks.json")),
            *("--workdir", str(project), "--out", str(out)),
            *("--path", f"{Path(sys.executable).parent}:/usr/bin:/bin", "--quiet"),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    s = json.loads((out / "summary.json").read_text())
    assert run.returncode == 0, s["stderr_tail"]
    return s


@needs_codex
def test_untrusted_hooks_the_status_says_planning_is_not_guarded(
    project: Path, tmp_path: Path
) -> None:
    state = start_session(project)
    s = codex(project, tmp_path, "--no-hook-trust-bypass")
    said = s["tool_results"][0]["text"]
    assert "guard: planning is NOT guarded" in said and "/hooks" in said, said
    assert "noted" in (project / "README.md").read_text()  # nothing guarded: it was written
    assert not s["hook_denials"] and not (state / "guard.heard").exists()


@needs_codex
def test_trusted_hooks_the_status_says_what_guards(project: Path, tmp_path: Path) -> None:
    state = start_session(project)
    readme = (project / "README.md").read_text()
    s = codex(project, tmp_path)
    said = s["tool_results"][0]["text"]
    assert "NOT guarded" not in said and "guarded by command parsing only" in said, said
    assert len(s["hook_denials"]) == 1 and (project / "README.md").read_text() == readme
    assert (state / "guard.heard").exists()
