"""Layer 1 in the real Codex CLI (offline, ../shared/harness run-codex), where no sandbox
runs: bash that evaluates a string as code, an indented apply_patch header, a patch writing a
bare repository's layout, and git run in a repository planted in the worktree are all
refused, and the project stays as it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import RUN_CODEX, ScriptedClient, guard_hook, needs_codex, start_session

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
    project: Path, scripted_client: ScriptedClient
) -> None:
    state = start_session(project)
    worktree = state / "worktree"
    worktree.mkdir(exist_ok=True)
    # the layout as a sandboxed command of another client could leave it: apply_patch can no
    # longer write it (a HEAD is git's own file, denied like .git; round 3)
    (worktree / "evil" / "objects").mkdir(parents=True)
    (worktree / "evil" / "refs").mkdir()
    (worktree / "evil" / "HEAD").write_text("ref: refs/heads/main\n")
    readme = (project / "README.md").read_text()
    s = scripted_client(RUN_CODEX, scenario(project, worktree), guard_hook("codex"))
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
