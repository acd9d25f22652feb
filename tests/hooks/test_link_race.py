"""Issue 29 item 1, carried out: a sandboxed background loop flips `<worktree>/x` between a
directory inside and a link out (to $HOME, to the project's src/), while file tools write
`<worktree>/x/…` through the guard for a fixed budget of calls, each allowed call written the
way the clients write (following links). Nothing may land outside the worktree: the project,
its .git and $HOME are compared before and after, and the flipper's every link was refused.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from hooks import guard_hook as guard
from tests.hooks.test_sandbox import env, make_project, needs_bwrap, trees

__all__ = ["env"]  # the fixture, shared with tests/hooks/test_sandbox.py

# Runs in the sandbox: flip `x` as fast as it can until STOP appears, then say what it did.
FLIPPER = """
import os, sys
os.chdir(sys.argv[1])
tries = refused = flips = 0
open("READY", "w").close()
while not os.path.exists("STOP"):
    for target in sys.argv[2:]:
        try:
            os.rename("x", "hold")  # the directory the guard saw goes away...
        except OSError:
            pass
        tries += 1
        try:
            os.symlink(target, "x")  # ...a link out takes its place for a moment...
            os.unlink("x")
        except PermissionError:
            refused += 1
        except OSError:
            pass
        try:
            os.rename("hold", "x")  # ...and the directory is back
            flips += 1
        except OSError:
            pass
print(tries, refused, flips)
"""
NOTEBOOK = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
# (tool, dialect, file under x/, what the client writes there)
CALLS = {
    "Write": ("claude", ".gitconfig", "[core]\n\tfsmonitor = touch PWNED\n"),
    "Edit": ("claude", "app.py", "print('owned')\n"),
    "MultiEdit": ("claude", "app.py", "print('owned twice')\n"),
    "NotebookEdit": ("claude", "nb.ipynb", NOTEBOOK),
    "write_file": ("gemini", "evil.py", "print('evil')\n"),
    "replace": ("gemini", "app.py", "print('replaced')\n"),
    "apply_patch": ("codex", "evil.py", "print('patched')\n"),
}


def call(tool: str, tree: Path, project: Path) -> tuple[bool, Path]:
    """Ask the guard as the client would; (allowed, the path the client then writes)."""
    dialect, name, _ = CALLS[tool]
    target = tree / "x" / name
    if tool == "apply_patch":
        patch = f"*** Begin Patch\n*** Add File: x/{name}\n+print(1)\n*** End Patch\n"
        payload = {"tool_name": tool, "tool_input": {"command": patch}, "cwd": str(tree)}
    else:
        key = "notebook_path" if tool == "NotebookEdit" else "file_path"
        payload = {"tool_name": tool, "tool_input": {key: str(target)}, "cwd": str(project)}
    return guard.run(json.dumps(payload).encode(), dialect) == "", target


def client_writes(tool: str, target: Path) -> bool:
    """What the client does once allowed: open the path as named (links followed)."""
    text = CALLS[tool][2]
    try:
        if tool in ("Edit", "MultiEdit", "replace"):
            text = target.read_text() + text  # an edit reads, then writes the whole file
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError:
        return False  # `x` was away at that moment
    return True


def start_flipper(tree: Path, project: Path, home: Path) -> subprocess.Popen:
    """The flipper goes in with a file tool and starts with a Bash call, as an agent's would."""
    (tree / "flip.py").write_text(FLIPPER)
    command = f"python3 flip.py {tree} {home} {project / 'src'}"
    payload = {"tool_name": "Bash", "tool_input": {"command": command}, "cwd": str(tree)}
    answer = json.loads(guard.run(json.dumps(payload).encode(), "claude"))
    wrapped = answer["hookSpecificOutput"]["updatedInput"]["command"]
    assert "bwrap" in wrapped
    return subprocess.Popen(
        ["bash", "-c", wrapped],
        cwd=tree,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def race(tools: tuple[str, ...], budget: int, tmp_path: Path) -> None:
    project = make_project(tmp_path / "p")
    home = tmp_path / "home"
    (home / ".gitconfig").write_text("[user]\n\tname = person\n")
    tree = project / ".planner" / "s1" / "worktree"
    (tree / "hold").mkdir()
    (tree / "hold" / "app.py").write_text("print('worktree')\n")
    (tree / "src").mkdir()
    before = trees(project, home)
    flipper = start_flipper(tree, project, home)
    landed = 0
    try:
        for _ in range(600):  # the flipper is running before the first write
            if (tree / "READY").exists() or flipper.poll() is not None:
                break
            time.sleep(0.05)
        for _ in range(budget):
            for tool in tools:
                allowed, target = call(tool, tree, project)
                landed += allowed and client_writes(tool, target)
        (tree / "STOP").write_text("")
        out, err = flipper.communicate(timeout=60)
    finally:
        if flipper.poll() is None:
            os.killpg(flipper.pid, signal.SIGKILL)
            flipper.wait()
    tries, refused, flips = (int(n) for n in out.split())
    assert tries > 0 and refused == tries, (out, err)  # no link was ever made
    assert flips > 0 and landed > 0  # the race ran: `x` came and went, writes went through
    assert trees(project, home) == before
    assert not [p for p in tree.rglob("*") if p.is_symlink()]


@pytest.mark.slow
@needs_bwrap
def test_item1_write_through_a_flipped_link_never_leaves_the_worktree(env, tmp_path):
    """The attack as reported: Claude Code's Write of x/.gitconfig and Gemini's write_file."""
    race(("Write", "write_file"), 600, tmp_path)


@pytest.mark.slow
@needs_bwrap
def test_every_file_tool_races_a_flipper_and_nothing_lands_outside(env, tmp_path):
    race(tuple(CALLS), 300, tmp_path)
