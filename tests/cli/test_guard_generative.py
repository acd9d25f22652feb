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
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

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

# -- the grammar -----------------------------------------------------------------------------

PATHS = [
    "README.md",
    "src/app.py",
    "src/data.txt",
    "new.txt",
    "src",
    ".git/config",
    ".git/hooks/pre-commit",
    ".git/HEAD",
    "~/.bashrc",
    "$HOME/.bashrc",
    "/tmp/scratch",
    "/dev/null",
    ".planner/s1/session.json",
    ".planner/s1/worktree/w.txt",
    ".planner/s1/worktree/evil",
]
CODE = "touch pwned"  # what a hidden command would do
BARE = ["x", "1", "-n", "-v", "a[0]", "a", "r", "PS4", "PATH", "HOME", "%s", "-", "src"]
EXPANSIONS = [
    "$x",
    "${x}",
    "${x:-d}",
    "${#x}",
    "${x%.*}",
    "${!x}",
    "${x@P}",
    "${x:1}",
    "${a[x]}",
    "${a[$x]}",
    "$((1 + 2))",
    "$((x))",
    "$[x]",
    "$HOME",
    "$(echo a)",
    f"$({CODE})",
    "`echo a`",
    f"`{CODE}`",
    "<(echo a)",
    f">({CODE})",
    f"'a[$({CODE})]'",
    f"a[\\$({CODE})]",
    f'"$({CODE})"',
]
REDIRECTS = ["<", ">", ">>", "2>", "&>", ">|", "<>", "3>", "2>>"]
REDIRECTS_ALONE = [">&2", "2>&1", "> /dev/null", "< /dev/null", "<<< x", "<<< $x", "3<README.md"]
REDIRECTS_ALONE += [f"<<< 'a[$({CODE})]'", "1>/dev/fd/3", ">/dev/stderr", "{a[x]}</dev/null"]
POISON = f"x='b[$({CODE})]'; a=(1); "  # a value that runs code wherever bash evaluates x
BUILTINS = [
    "test -v {w}",
    "[ -v {w} ]",
    "[ {w} ]",
    "[ {w} = {w} ]",
    "[[ -v {w} ]]",
    "[[ {w} -eq 1 ]]",
    "[[ {w} == {w} ]]",
    "unset {w}",
    "declare -a a; unset {w}",
    "wait -n -p {w}",
    "mapfile -C {w} -c 1 a",
    "readarray {w}",
    "declare -n r={w}",
    "local -n r={w}",
    "typeset -n r={w}",
    "declare {w}={w}",
    "declare -i x={w}",
    "export {w}={w}",
    "printf -v {w} %s x",
    "printf {w} {w}",
    "read {w}",
    "read -a {w}",
    "(( {w} ))",
    "let {w}",
    "x={w}",
    "x={w}; echo $((x))",
    "a=([{w}]=1)",
    "for {w} in {w}; do set -x; true; done",
    "eval {w}",
    "cd {w}",
    ": ${{w}:={w}}",
]
TOOLS = [
    "echo {w}",
    "printf '%s\\n' {w}",
    "cat {w}",
    "cp {w} {w}",
    "mv {w} {w}",
    "tee {w}",
    "sed -n 1p {w}",
    "sed {w} {w}",
    "sed -i s/a/b/ {w}",
    "awk '{print}' {w}",
    "awk {w} {w}",
    "git status",
    "cd .planner/s1/worktree/evil && git status",
    "cd {w} && git log -1",
    "git log --oneline -1",
    "git diff {w}",
    "git -C {w} status",
    "git config {w}",
    "git {w}",
    "python3 -c 'print(1)'",
    "python3 -c {w}",
    "find src -name {w}",
    "find src -exec {w} \\;",
    "find src -exec cat {} +",
    "xargs {w}",
    "echo README.md | xargs cat",
    "env {w}",
    "env x={w} cat {w}",
    "sh -c {w}",
    "bash -c 'echo {w}'",
    "wc -l {w}",
    "grep -r x {w}",
    "ls {w}",
    "head -1 {w}",
    "sort {w}",
]
PREFIXES = ["x=1 ", "PS4='$(touch pwned)' ", "GIT_DIR=. ", "a[x]=1 ", "HOME=/tmp "]
HEREDOC_BODIES = ["a", "$x", f"$({CODE})", "b c", "'$x'"]
OPERATORS = [" | ", " && ", " || ", "; ", " & ", "\n", " |& "]


class Grammar:
    """Bash commands drawn from a seeded random source: plain words most of the time (so a
    good share is allowed and run), code-bearing expansions and writes now and then."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def pick(self, items: list) -> str:
        return self.r.choice(items)

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def word(self) -> str:
        if self.chance(0.15):
            return self.pick(EXPANSIONS)
        text = self.pick(BARE) if self.chance(0.5) else self.pick(PATHS)
        quoting = self.r.randrange(5)
        if quoting == 1:
            return "'" + text + "'"
        if quoting == 2:
            return '"' + text.replace('"', "") + '"'
        if quoting == 3:
            return "$'" + text.replace("'", "").replace("t", "\\x74") + "'"
        return text

    def simple(self) -> str:
        template = self.pick(BUILTINS) if self.chance(0.4) else self.pick(TOOLS)
        parts = template.split("{w}")
        command = parts[0] + "".join(self.word() + part for part in parts[1:])
        if self.chance(0.1):
            command = self.pick(PREFIXES) + command
        if self.chance(0.15):
            command += " " + self.pick(REDIRECTS) + " " + self.pick(PATHS)
        elif self.chance(0.1):
            command += " " + self.pick(REDIRECTS_ALONE)
        if self.chance(0.08):
            command += " <<EOF\n" + self.pick(HEREDOC_BODIES) + "\nEOF\n"
        return command

    def command_list(self, depth: int = 0) -> str:
        parts = [(POISON if depth == 0 and self.chance(0.3) else "") + self.simple()]
        while self.chance(0.4):
            more = self.compound(depth + 1) if depth < 2 and self.chance(0.5) else self.simple()
            parts.append(self.pick(OPERATORS) + more)
        return "".join(parts).rstrip("\n")

    def compound(self, depth: int) -> str:
        inner = self.command_list(depth)
        shape = self.r.randrange(6)
        if shape == 0:
            return f"( {inner} )"
        if shape == 1:
            return "{ " + inner + "; }"
        if shape == 2:
            return f"if {self.simple()}; then {inner}; fi"
        if shape == 3:
            return f"for i in 1 2; do {inner}; done"
        if shape == 4:
            return f"x=$({inner})"
        return inner


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
    """Every file's type, mode and content (links by target), but git's index, which
    `git status` refreshes without changing anything a person sees."""
    found = {}
    for here, dirs, files in os.walk(root):
        for name in sorted(dirs + files):
            full = os.path.join(here, name)
            rel = os.path.relpath(full, root)
            if rel in (".git/index", ".planner/s1/audit.jsonl"):
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
