"""Layer 1 where no sandbox runs (the codex dialect): strings bash evaluates as code, Codex
patch headers, git against a planted repository, and temp-only writes left to the sandbox.

Each attack is the hook input as the client sends it; where it can be, the command is also
carried out with bash to show that it really runs code (so a test cannot pass vacuously).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from hooks import guard_hook as guard
from tests.conftest import from_template
from tests.hooks.test_guard import make_session

ALLOW, DENY = "allow", "deny"


def committed(root: Path) -> None:
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# demo\n")
    (root / "src" / "app.py").write_text("print('hi')\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=root, check=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = from_template("layer1-project", committed, tmp_path / "project")
    make_session(root, "s1")
    return root


@pytest.fixture
def worktree(project: Path) -> Path:
    return project / ".planner" / "s1" / "worktree"


def hook_env(project: Path, sandbox: bool = False) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLANNER_", "CLAUDE_"))}
    env.update(HOME=str(project.parent / "home"), PLANNER_SANDBOX="on" if sandbox else "off")
    env.pop("GEMINI_PROJECT_DIR", None)
    return env


def judge(command: str, cwd: Path, dialect: str = "codex", sandbox: bool = False) -> str:
    """The guard's answer to a Bash call: allow, deny, ask or wrap."""
    payload = {"tool_name": "Bash", "tool_input": {"command": command}, "cwd": str(cwd)}
    return answer(guard.run(json.dumps(payload).encode(), dialect, hook_env(cwd, sandbox)))


def judge_patch(patch: str, cwd: Path) -> str:
    payload = {"tool_name": "apply_patch", "tool_input": {"command": patch}, "cwd": str(cwd)}
    return answer(guard.run(json.dumps(payload).encode(), "codex", hook_env(cwd)))


def answer(output: str) -> str:
    if not output:
        return ALLOW
    inner = json.loads(output)["hookSpecificOutput"]
    return "wrap" if "updatedInput" in inner else inner["permissionDecision"]


# -- 1. strings bash evaluates as code -------------------------------------------------------

RUN = "$(touch MARK)"
EVALUATED = [
    f"test -v 'a[{RUN}]'",
    f"[ -v 'a[{RUN}]' ]",
    f"[[ -v 'a[{RUN}]' ]]",
    f"declare -a a; unset 'a[{RUN}]'",
    f"sleep 0 & wait -n -p 'a[{RUN}]'",
    "printf 'x\\n' | mapfile -C 'touch MARK #' -c 1 lines",
    "printf 'x\\n' | readarray -C 'touch MARK #' -c 1 lines",
    f"declare -n r='a[{RUN}]'; echo $r",
    f"a=(1); local_x='b[{RUN}]'; declare -n r=local_x; (( r ))",
    f"printf -v 'a[{RUN}]' x",
    f"read 'a[{RUN}]' <<< x",
    f"x='b[{RUN}]'; echo $(( x ))",
    f"x='b[{RUN}]'; (( x ))",
    f"x='b[{RUN}]'; let x",
    f"x='b[{RUN}]'; [[ x -eq 1 ]]",
    f"x='b[{RUN}]'; declare -i y=x",
    f"x='b[{RUN}]'; a=(1); echo ${{a[x]}}",
    f"x='b[{RUN}]'; echo ${{!x}}",
    f"x='{RUN}'; echo ${{x@P}}",
    f"y='b[{RUN}]'; x=abc; echo ${{x:y}}",
    f"unset PS4; : ${{PS4:='{RUN}'}}; set -x; true",
    f"for PS4 in '{RUN}'; do set -x; true; done",
    f"declare -a a='([0]={RUN})'",
    f"x='b[{RUN}]'; a=([x]=1)",
    f"o=-v; [ \"$o\" 'a[{RUN}]' ]",
    "o='-v a[$(touch${IFS}MARK)]'; [ $o ]",
    f"o=-v; printf \"$o\" 'a[{RUN}]' x",
    f"x='b[{RUN}]'; a=(1); cat {{a[x]}}</dev/null",
]


@pytest.mark.parametrize("command", EVALUATED)
def test_strings_bash_evaluates_as_code_are_denied_without_a_sandbox(project, command):
    marker = project.parent / "MARK"
    done = subprocess.run(["bash", "-c", command], cwd=project.parent, capture_output=True)
    assert marker.exists(), (command, done.stderr)  # bash really runs the string as code
    assert judge(command.replace("MARK", "README.md"), project) == DENY


READ_ONLY_IDIOMS = [
    'while read -r line; do echo "$line"; done < README.md',
    'f=README.md; [ -f "$f" ] && echo yes',
    'x=1; test -n "$x"',
    'a=1; b=2; [ "$a" = "$b" ] || echo differ',
    '[ ! -d "$HOME" ]',
    "test -v HOME",
    "printf '%s\\n' a b",
    "unset x",
    "declare -p HOME",
    "read -r first < README.md; echo $first",
    "for f in src/*.py; do wc -l $f; done",
    "echo ${HOME:-none} ${#HOME} ${HOME%/*}",
]


@pytest.mark.parametrize("command", READ_ONLY_IDIOMS)
def test_read_only_idioms_still_pass(project, command):
    assert judge(command, project) == ALLOW


@pytest.mark.parametrize(
    "command",
    [
        "man -P 'touch README.md' ls",
        "man --pager='touch README.md' ls",
        "less '+!touch README.md' README.md",
        "less -o log README.md",
        "more +/x README.md",
        "coproc cat",
        "getopts ab 'a[$(touch README.md)]'",
        "select 'PS4' in x; do set -x; done",
        "trap 'touch README.md' EXIT",
        "set -k; git status GIT_DIR=/tmp/x",
        "set -euk; env PS4=x true",
        "set -o keyword; git log GIT_DIR=/tmp/x",
        'o=-k; set "$o"; git log GIT_DIR=/tmp/x',
    ],
)
def test_builtins_and_options_the_parser_does_not_model_are_denied(project, command):
    assert judge(command, project) == DENY


def test_ordinary_set_passes(project):
    for command in ("set -euo pipefail; git status", "set -x; ls", "set -- a b; echo $1"):
        assert judge(command, project) == ALLOW, command


def test_plain_pagers_pass(project):
    assert judge("less -R README.md", project) == ALLOW
    assert judge("man -k grep", project) == ALLOW


# -- 2. apply_patch headers, read as Codex reads them ----------------------------------------


def patch(*body: str) -> str:
    return "\n".join(("*** Begin Patch", *body, "*** End Patch")) + "\n"


def test_an_indented_header_after_a_worktree_file_is_seen(project, worktree):
    inside = patch(f"*** Add File: {worktree}/notes.md", "+ok")
    assert judge_patch(inside, project) == ALLOW
    sneaky = patch(
        f"*** Add File: {worktree}/notes.md", "+ok", f"   *** Add File: {project}/X", "+x"
    )
    assert judge_patch(sneaky, project) == DENY
    tabbed = patch(f"*** Add File: {worktree}/a", "+a", f"\t*** Update File: {project}/README.md")
    assert judge_patch(tabbed, project) == DENY


def test_move_to_names_a_file_too(project, worktree):
    moved = patch(f"*** Update File: {worktree}/a.py", f"*** Move to: {project}/src/app.py")
    assert judge_patch(moved + "@@\n-a\n+b\n", project) == DENY
    moved = patch(f"*** Update File: {worktree}/a.py", f" *** Move to: {worktree}/b.py", "@@")
    assert judge_patch(moved, project) == ALLOW


@pytest.mark.parametrize(
    "text",
    [
        "*** Add File: X\n+x\n",
        "*** Begin Patch\n*** Add File: {wt}/a\n+a\n",
        "garbage\n*** Begin Patch\n*** Add File: {wt}/a\n+a\n*** End Patch\n",
        "*** Begin Patch\n*** End Patch\n",
        "",
    ],
)
def test_a_patch_whose_framing_does_not_parse_is_denied(project, worktree, text):
    assert judge_patch(text.format(wt=worktree), project) == DENY


def test_heredoc_wrapped_patch_and_padded_markers(project, worktree):
    wrapped = f"<<'EOF'\n*** Begin Patch\n*** Add File: {worktree}/a\n+a\n*** End Patch\nEOF\n"
    assert judge_patch(wrapped, project) == ALLOW
    padded = f"  *** Begin Patch \n *** Add File: {project}/X\n+x\n *** End Patch  "
    assert judge_patch(padded, project) == DENY
    unicode_space = f"*** Begin Patch\n\u3000*** Add File: {project}/X\n+x\n*** End Patch"
    assert judge_patch(unicode_space, project) == DENY


def test_patch_files_under_the_worktrees_git_are_denied(project, worktree):
    assert judge_patch(patch(f"*** Add File: {worktree}/.git/config", "+x"), project) == DENY
    assert judge_patch(patch(f"*** Add File: {worktree}/sub/.git/HEAD", "+x"), project) == DENY


# -- 3. git against any repository but the project -------------------------------------------


def plant_repository(project: Path, worktree: Path) -> Path:
    """What the attack's apply_patch adds: a bare-repository layout whose config points git at
    the project and runs a program as its fsmonitor."""
    evil = worktree / "evil"
    for name in ("objects/.keep", "refs/heads/.keep"):
        (evil / name).parent.mkdir(parents=True, exist_ok=True)
        (evil / name).write_text("")
    (evil / "HEAD").write_text("ref: refs/heads/main\n")
    hook = evil / "monitor.sh"
    hook.write_text(f"#!/bin/sh\necho pwned >> {project}/README.md\n")
    hook.chmod(0o755)
    (evil / "config").write_text(
        f"[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = {project}\n"
        f"\tfsmonitor = {hook}\n"
    )
    return evil


def test_git_in_a_planted_repository_is_denied(project, worktree):
    evil = plant_repository(project, worktree)
    attack = f"cd {evil} && git status"
    for command in (attack, f"cd {worktree}; cd evil; git status", f"cd {evil}/refs && git log"):
        assert judge(command, project) == DENY, command
    assert judge("git status", evil) == DENY  # the hook's own cwd inside it
    assert judge(f"bash -c 'cd {evil} && git status'", project) == DENY
    assert judge(f"cd {evil} && go vet ./...", project) == DENY  # go runs git too
    subprocess.run(["bash", "-c", attack], cwd=project, capture_output=True, timeout=60)
    assert "pwned" in (project / "README.md").read_text()  # the attack is real


@pytest.mark.parametrize(
    "command",
    [
        "git -C {elsewhere} log",
        "git --git-dir={elsewhere}/.git log",
        "git --work-tree={elsewhere} status",
        "GIT_DIR={elsewhere}/.git git log",
        "export GIT_DIR={elsewhere}/.git; git log",
        "cd {elsewhere} && git log",
        "cd {elsewhere}; git log",
        'd={elsewhere}; cd "$d" && git log',
        "pushd {elsewhere} && git log",
        "cd src; popd; git log",
        "env -C {elsewhere} git log",
        "find {elsewhere} -maxdepth 0 -execdir git log \\;",
        "cd ~root && git log",
        "cd {elsewhere}/* && git log",
    ],
)
def test_git_against_another_repository_is_denied(project, tmp_path, command):
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    subprocess.run(["git", "init", "-q", str(elsewhere)], check=True)
    assert judge(command.format(elsewhere=elsewhere), project) == DENY


def test_git_in_the_project_and_the_worktree_passes(project, worktree):
    for command in ("git status", "cd src && git log --oneline", f"cd {worktree} && git status"):
        assert judge(command, project) == ALLOW, command
    assert judge("git log -1", project / "src") == ALLOW
    assert judge("cd .. && git status", project / "src") == ALLOW


# -- 4. writing only temp runs in the sandbox ------------------------------------------------

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="no bubblewrap here")


@needs_bwrap
@pytest.mark.parametrize(
    "command",
    [
        "cp {worktree}/f /tmp/x",
        "pip install --target /tmp/x six",
        "pip download -d /tmp/x six",
        "python3 -m pip install --target=/tmp/x six",
        "python3 -m venv /tmp/v",
        ". /tmp/v/bin/activate && pip install six",
        "echo x > /tmp/x",
        "mkdir -p /tmp/a/b && touch /tmp/a/b/c",
        "cp README.md {scratch}/notes.md",
        "git diff > {scratch}/change.diff",
    ],
)
def test_writing_only_temp_runs_in_the_sandbox(project, worktree, command):
    command = command.format(worktree=worktree, scratch=worktree.parent / "scratch")
    assert judge(command, project, "claude", sandbox=True) == "wrap"
    assert judge(command, project, "codex") == DENY


@needs_bwrap
@pytest.mark.parametrize(
    "command",
    [
        "cp README.md {project}/copy",
        "echo x > {project}/README.md",
        "cp /tmp/x {project}/src/",
        "mv /tmp/x {project}/README.md",
        "pip install six",
        "pip install --target {project}/lib six",
    ],
)
def test_writing_the_project_stays_denied_with_a_sandbox(project, command):
    assert judge(command.format(project=project), project, "claude", sandbox=True) == DENY
