"""Layer 1, generated: whatever the parser allows in the codex dialect (no sandbox) changes
nothing when it is run.

A grammar of bash (quoting, expansions, here-docs and here-strings, redirections, lists,
subshells and groups, `cd`, the builtins that evaluate strings, common tools) builds commands;
each is judged by the real guard (`guard.run(raw, "codex", env)`, PLANNER_SANDBOX=off) in a
throw-away copy of a small project. Every command it allows is then run with bash inside
bubblewrap, where only that copy, a throw-away HOME and a private /tmp are writable, and the
copy (files, modes, .git refs, config and hooks) and HOME must be unchanged afterwards.
Hypothesis draws the seeds (derandomized, so CI sees the same commands; a failure prints its
seed and command); the bypasses found are kept in FOUND and tried on every run.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from bench.guard_grammar import Grammar
from hooks import guard_hook as guard

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="no bubblewrap here")

FILES = {
    "README.md": "# demo\n",
    "src/app.py": "print('hi')\n",
    "src/data.txt": "b\na\nc\n",
    "notes.txt": "x=1\n",
}
# what an apply_patch into the worktree can add: a bare-repository layout git discovers from
# inside it, whose config points at the project and runs a program as its fsmonitor
PLANTED = {
    "HEAD": "ref: refs/heads/main\n",
    "config": "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ../../../..\n"
    "\tfsmonitor = echo pwned >> README.md; false\n",
    "objects/.keep": "",
    "refs/.keep": "",
}
HOME_FILES = {".bashrc": "# rc\n", ".gitconfig": "[user]\n\tname = t\n"}

# -- running what the guard allows -----------------------------------------------------------


def make_tree(root: Path, files: dict) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("generative")
    project = base / "project"
    make_tree(project, FILES)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=project, check=True)
    subprocess.run([*git, "add", "."], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=project, check=True)
    state = project / ".planner" / "s1"
    (state / "worktree").mkdir(parents=True)
    session = {"id": "s1", "status": "design", "config": {"guard": "standard"}}
    (state / "session.json").write_text(json.dumps(session))
    (project / ".planner" / "ACTIVE").write_text("s1\n")
    make_tree(state / "worktree" / "evil", PLANTED)
    make_tree(base / "home", HOME_FILES)
    return base


def snapshot(root: Path) -> dict:
    """Every file's type, mode and content (links by target), but git's index, which `git
    status` refreshes without changing anything a person sees, and the guard's own records."""
    found = {}
    for here, dirs, files in os.walk(root):
        for name in sorted(dirs + files):
            full = os.path.join(here, name)
            rel = os.path.relpath(full, root)
            if rel in (".git/index", ".planner/s1/audit.jsonl", ".planner/s1/guard.heard"):
                continue
            info = os.lstat(full)
            if os.path.islink(full):
                found[rel] = ("link", os.readlink(full))
            elif os.path.isfile(full):
                with open(full, "rb") as f:
                    found[rel] = (info.st_mode, hashlib.sha1(f.read()).hexdigest())
            else:
                found[rel] = (info.st_mode, "dir")
    return found


def sandboxed(command: str, cwd: Path, home: Path) -> list:
    """bash -c command with only the copy, HOME and a private /tmp writable."""
    base = str(cwd.parent)
    return [
        *("bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"),
        *("--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--bind", base, base),
        *("--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session"),
        *("--cap-drop", "ALL", "--chdir", str(cwd), "--setenv", "HOME", str(home)),
        *("bash", "-c", command),
    ]


def judge(command: str, project: Path, home: Path) -> str:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "PLANNER_SANDBOX": "off"}
    payload = {"tool_name": "Bash", "tool_input": {"command": command}, "cwd": str(project)}
    return guard.run(json.dumps(payload).encode(), "codex", env)


FOUND = [
    # bypasses this test found (and others of the same kind), tried on every run
    "x='a[$(touch pwned)]'; echo $((x))",
    "test -v 'a[$(touch pwned)]'",
    # found: the fd of `{a[x]}<f` is stored in a[x], so the subscript is evaluated
    "x='b[$(touch pwned)]'; a=(1); echo \"src/app.py\" {a[x]}</dev/null",
    # the planted repository in the worktree, found again with the git check turned off
    "cd .planner/s1/worktree/evil && git status",
]


def check(command: str, template: Path, tmp: Path) -> bool:
    """Judge the command in a fresh copy and, when it is allowed, run it there: True if run."""
    shutil.copytree(template, tmp, symlinks=True)
    project, home = tmp / "project", tmp / "home"
    if judge(command, project, home):
        return False  # denied: nothing to run
    before, home_before = snapshot(project), snapshot(home)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
    with contextlib.suppress(subprocess.TimeoutExpired):
        subprocess.run(
            sandboxed(command, project, home),
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
        )
    assert snapshot(project) == before, f"allowed, and it changed the project: {command!r}"
    assert snapshot(home) == home_before, f"allowed, and it changed HOME: {command!r}"
    return True


@pytest.mark.slow
@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=st.integers(0, 2**32 - 1))
def test_what_the_parser_allows_changes_nothing(template, tmp_path_factory, seed):
    command = Grammar(seed).command_list()
    ran = check(command, template, tmp_path_factory.mktemp("run") / "copy")
    event("allowed and run" if ran else "denied")


@pytest.mark.parametrize("command", FOUND)
def test_bypasses_found_stay_closed(template, tmp_path, command):
    check(command, template, tmp_path / "copy")


def test_the_harness_sees_a_change(template, tmp_path):
    """The run and the snapshots would catch a command that writes (so the test above can fail)."""
    shutil.copytree(template, tmp_path / "copy", symlinks=True)
    project, home = tmp_path / "copy" / "project", tmp_path / "copy" / "home"
    before, home_before = snapshot(project), snapshot(home)
    command = "touch pwned; echo x >> ~/.bashrc; chmod -x .git/hooks/pre-commit.sample"
    command += "; cd .planner/s1/worktree/evil && git status"  # runs the planted fsmonitor
    subprocess.run(sandboxed(command, project, home), capture_output=True)
    changed = {name for name, _ in set(snapshot(project).items()) ^ set(before.items())}
    assert changed == {"pwned", ".git/hooks/pre-commit.sample", "README.md"}
    assert snapshot(home) != home_before
    assert judge(command, project, home)  # and the guard denies it
