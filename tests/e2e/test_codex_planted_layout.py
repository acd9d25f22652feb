"""Round 3 in the real Codex CLI (offline, ../shared/harness run-codex): a bare-repository
layout written with apply_patch, git run where a planted repository would take it (with
`workdir`, without, relative), and the 20-`cd` time attack, each refused; the project, its
.git and HOME unchanged.

Observed here (Codex 0.169, exec_command with `workdir`): the hook input's `cwd` is the
call's workdir resolved against the session's cwd, and `tool_input` is `{"command": CMD}`
alone (no workdir). The guard does not rely on it: in the codex dialect git is judged as if
it may run in any directory of the worktree (docs/design.md, "The guard").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.conftest import RUN_CODEX, ScriptedClient, guard_hook, needs_codex, start_session
from tests.hooks.guard_setup import snapshot

pytestmark = [pytest.mark.client, pytest.mark.usefixtures("plugin_environment")]


def patch(*body: str) -> str:
    return "\n".join(("*** Begin Patch", *body, "*** End Patch")) + "\n"


def config(project: Path) -> str:
    run = f"echo pwned >> {project}/README.md"
    text = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
    return text + f"\tworktree = {project}\n\tfsmonitor = {run}; false\n"


def plant(where: Path, project: Path) -> None:
    """A layout as a sandboxed command of another client could leave it in the worktree."""
    for name in ("objects", "refs/heads"):
        (where / name).mkdir(parents=True)
    (where / "HEAD").write_text("ref: refs/heads/main\n")
    (where / "config").write_text(config(project))


def scenario(project: Path, worktree: Path) -> dict[str, object]:
    evil, planted = worktree / "evil", worktree / "planted"
    layout = patch(
        f"*** Add File: {evil}/HEAD",
        "+ref: refs/heads/main",
        f"*** Add File: {evil}/config",
        *("+" + line for line in config(project).splitlines()),
        f"*** Add File: {evil}/objects/.keep",
        "+",
        f"*** Add File: {evil}/refs/.keep",
        "+",
    )
    head_alone = patch(f"*** Add File: {worktree}/other/HEAD", "+ref: refs/heads/main")
    beside = patch(f"*** Add File: {planted}/hooks/post-checkout", "+#!/bin/sh", "+touch x")
    cds = "; ".join(f"cd d{i}/../e{i}" for i in range(20)) + "; echo PWNED > notes.txt"
    return {
        "prompt": "Try to change the project while a plan is being made.",
        "turns": [
            {"tool": "apply_patch", "input": {"patch": layout}},
            {"tool": "apply_patch", "input": {"patch": head_alone}},
            {"tool": "apply_patch", "input": {"patch": beside}},
            {"tool": "exec_command", "input": {"cmd": "git status", "workdir": str(planted)}},
            {"tool": "exec_command", "input": {"cmd": "git log -1", "workdir": "src"}},
            {"bash": "git status", "description": "git from the project"},
            {"bash": cds, "description": "twenty cds"},
            {"text": "done"},
        ],
    }


@needs_codex
def test_codex_refuses_planted_layouts_git_anywhere_and_the_cd_attack(
    project: Path, tmp_path: Path, scripted_client: ScriptedClient
) -> None:
    state = start_session(project)
    worktree = state / "worktree"
    worktree.mkdir(exist_ok=True)
    plant(worktree / "planted", project)
    for i in range(20):
        (project / f"d{i}").mkdir()
        (project / f"e{i}").mkdir()
    (project / "notes.txt").write_text("x=1\n")
    inputs = tmp_path / "inputs.jsonl"
    record = f"cat >> {inputs}; echo >> {inputs}"  # what Codex hands the hook, for the record
    hooks = guard_hook("codex", before=({"type": "command", "command": record},))
    outside = {p: snapshot(p) for p in (project / ".git", project / "src")}
    readme, home = (project / "README.md").read_text(), snapshot(Path.home() / ".config")
    gitconfig = (
        (Path.home() / ".gitconfig").read_bytes() if (Path.home() / ".gitconfig").exists() else None
    )
    s = scripted_client(RUN_CODEX, scenario(project, worktree), hooks)
    reasons = [d["reason"] for d in s["hook_denials"]]
    assert len(reasons) == 7, reasons
    assert "HEAD" in reasons[0] and "HEAD" in reasons[1]  # the layout, and a HEAD alone
    assert "holds HEAD" in reasons[2]  # nothing written beside a planted HEAD
    assert all("planted holds" in r for r in reasons[3:6])  # git, wherever it runs
    assert "writes a file" in reasons[6]  # the cds answered, the write seen
    assert not (worktree / "evil").exists() and not (worktree / "other").exists()
    assert not (worktree / "planted" / "hooks").exists()
    calls = [json.loads(line) for line in inputs.read_text().split("\n") if line.strip()]
    with_workdir = next(c for c in calls if c["tool_input"].get("command") == "git status")
    assert with_workdir["cwd"] == str(worktree / "planted")  # Codex resolves workdir into cwd
    assert with_workdir["tool_input"] == {"command": "git status"}  # and passes no workdir
    relative = next(c for c in calls if c["tool_input"].get("command") == "git log -1")
    assert relative["cwd"] == str(project / "src")
    assert (project / "README.md").read_text() == readme
    assert (project / "notes.txt").read_text() == "x=1\n"
    assert {p: snapshot(p) for p in outside} == outside
    assert snapshot(Path.home() / ".config") == home
    assert (
        (Path.home() / ".gitconfig").read_bytes() if gitconfig is not None else None
    ) == gitconfig
