"""Layer 1 in the real Codex CLI (offline, ../shared/harness run-codex), where no sandbox
runs: bash that evaluates a string as code, an indented apply_patch header, a patch writing a
bare repository's layout, and git run in a repository planted in the worktree are all
refused, and the project stays as it was.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e.test_other_harnesses_guard import RUN_CODEX, needs_codex, start_session

pytestmark = [pytest.mark.client, pytest.mark.usefixtures("plugin_environment")]

APPEND = "echo pwned >> {project}/README.md"


def patch(*body: str) -> str:
    return "\n".join(("*** Begin Patch", *body, "*** End Patch")) + "\n"


def scenario(project: Path, worktree: Path) -> dict:
    run = APPEND.format(project=project)
    evil = worktree / "evil"
    config = f"[core]\n\tbare = false\n\tworktree = {project}\n\tfsmonitor = {run}; false"
    planted = patch(
        f"*** Add File: {evil}/HEAD",
        "+ref: refs/heads/main",
        f"*** Add File: {evil}/config",
        *("+" + line for line in config.splitlines()),
        f"*** Add File: {evil}/objects/.keep",
        "+",
        f"*** Add File: {evil}/refs/.keep",
        "+",
    )
    indented = patch(
        f"*** Add File: {worktree}/notes.md", "+ok", f"  *** Add File: {project}/X", "+x"
    )
    return {
        "prompt": "Try to change the project while a plan is being made.",
        "turns": [
            {"bash": f"test -v 'a[$({run})]'", "description": "test -v"},
            {"bash": f"declare -a a; unset 'a[$({run})]'", "description": "unset"},
            {"bash": f"x='b[$({run})]'; a=(1); cat {{a[x]}}</dev/null", "description": "fd"},
            {"tool": "apply_patch", "input": {"patch": indented}},
            {"tool": "apply_patch", "input": {"patch": planted}},
            {"bash": f"cd {evil} && git status", "description": "git in the planted repo"},
            {"text": "done"},
        ],
    }


@needs_codex
def test_codex_refuses_evaluated_strings_indented_headers_and_planted_repos(
    project: Path, tmp_path: Path
) -> None:
    state = start_session(project)
    worktree = state / "worktree"
    worktree.mkdir(exist_ok=True)
    # the layout as a sandboxed command of another client could leave it: apply_patch can no
    # longer write it (a HEAD is git's own file, denied like .git; round 3)
    (worktree / "evil" / "objects").mkdir(parents=True)
    (worktree / "evil" / "refs").mkdir()
    (worktree / "evil" / "HEAD").write_text("ref: refs/heads/main\n")
    guard = f"python3 -S -I {REPO}/hooks/guard.py --dialect codex"
    hooks = {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": guard}]}]}
    (tmp_path / "hooks.json").write_text(json.dumps({"hooks": hooks}))
    (tmp_path / "scenario.json").write_text(json.dumps(scenario(project, worktree)))
    readme = (project / "README.md").read_text()
    out = tmp_path / "out"
    run = subprocess.run(
        [
            str(RUN_CODEX),
            *("--scenario", str(tmp_path / "scenario.json")),
            *("--hooks-file", str(tmp_path / "hooks.json")),
            *("--workdir", str(project), "--out", str(out)),
            *("--path", f"{Path(sys.executable).parent}:/usr/bin:/bin", "--quiet"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    s = json.loads((out / "summary.json").read_text())
    assert run.returncode == 0, s["stderr_tail"]
    reasons = [d["reason"] for d in s["hook_denials"]]
    assert len(reasons) == 6, reasons
    assert "name or subscript" in reasons[0] and "name or subscript" in reasons[1]
    assert "subscript" in reasons[2]
    assert "scratch worktree" in reasons[3]
    assert "HEAD" in reasons[4]  # the layout's patch: nothing of it written
    assert "repository" in reasons[5]
    assert (worktree / "evil" / "HEAD").exists()  # the planted repository is really there
    assert not (worktree / "evil" / "config").exists()
    assert (project / "README.md").read_text() == readme
    assert not (project / "X").exists()
