"""Layer 2: commands the parser does not deny come back wrapped in bubblewrap, and run that
way they change nothing in the project. Every corpus command is run as the guard returns it,
in a throw-away copy of a project, and the copy is compared before and after.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cli import guard, hookstate, sandbox
from tests.cli.guard_corpus import BYPASSES, CORPUS, DENY, FALSE_DENIALS

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None,
    reason="bubblewrap is not installed (apt-get install -y bubblewrap; .ci/run does it as root)",
)
# Commands that name places outside the copy are not run (were the sandbox broken, they could
# touch this machine); they are still judged by layer 1 in test_guard.py.
OUTSIDE = ("/etc", "/usr", "/home", "/repo", "/var", "/opt", " /", "~", "..", "$HOME")
FILES = {
    "README.md": "# demo\n",
    "src/app.py": "print('hi')\n",
    "f": "a b\nc d\n",
    "list": "a\nb\n",
    "data.csv": "1,2\n",
    "x.diff": "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a b\n+x\n",
}


def make_project(root: Path) -> Path:
    root.mkdir(parents=True)
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=root, check=True)
    state = root / ".planner" / "s1"
    (state / "worktree").mkdir(parents=True)
    session = {"id": "s1", "status": "design", "config": {"guard": "standard"}}
    (state / "session.json").write_text(json.dumps(session))
    (root / ".planner" / "ACTIVE").write_text("s1\n")
    return root


def snapshot(root: Path) -> dict:
    found = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if rel.startswith(".planner/s1/worktree/") or rel == ".planner/s1/audit.jsonl":
            continue
        info = path.lstat()
        body = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        found[rel] = (info.st_mode, body, os.readlink(path) if path.is_symlink() else "")
    return found


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in (
        "PLANNER_SANDBOX",
        "PLANNER_STATE_DIR",
        "CLAUDE_PROJECT_DIR",
        "GEMINI_PROJECT_DIR",
    ):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "home").mkdir()
    return dict(os.environ)


def wrapped(command: str, project: Path, dialect: str = "claude") -> str | None:
    """The command the guard hands back, or None when it denies or lets it pass as is."""
    payload = {"tool_name": "Bash", "tool_input": {"command": command}, "cwd": str(project)}
    output = guard.run(json.dumps(payload).encode(), dialect)
    if not output:
        return None
    data = json.loads(output)["hookSpecificOutput"]
    if dialect == "gemini":
        return data["tool_input"]["command"]
    return data.get("updatedInput", {}).get("command")


def run_wrapped(command: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )


@needs_bwrap
def test_the_probe_finds_bwrap_and_caches_its_answer(env, tmp_path):
    assert sandbox.sandbox_program(env)[0] == "bwrap"
    cache = tmp_path / "cache" / "planner" / "sandbox-probe"
    assert cache.read_text().endswith(" ok")
    assert sandbox.sandbox_note(env) == ""
    assert sandbox.sandbox_note({**env, "PLANNER_SANDBOX": "off"}) == sandbox.NO_SANDBOX


@needs_bwrap
def test_a_write_is_wrapped_and_fails_inside_the_sandbox(env, tmp_path):
    project = make_project(tmp_path / "p")
    command = wrapped("echo x > README.md; echo y > .planner/s1/session.json", project)
    assert command is None  # a plain redirection is denied by layer 1 already
    command = wrapped("python3 -c \"open('README.md', 'w').write('x')\"", project)
    assert command and command.startswith(shutil.which("bwrap"))
    before = snapshot(project)
    done = run_wrapped(command, project)
    assert done.returncode != 0 and "Read-only file system" in done.stderr
    assert "planner: this command ran in the planning sandbox" in done.stderr
    assert snapshot(project) == before
    audit = [json.loads(x) for x in (project / ".planner/s1/audit.jsonl").read_text().splitlines()]
    assert audit[-1]["event"] == "sandboxed" and audit[-1]["session"] == "s1"


@needs_bwrap
def test_the_sandbox_cannot_reach_a_server_on_this_machine(env, tmp_path):
    """The review page listens on 127.0.0.1: from the sandbox an agent cannot approve in it."""
    import http.server
    import threading

    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/"
        fetch = f"python3 -c \"import urllib.request; urllib.request.urlopen('{url}')\""
        assert subprocess.run(["bash", "-c", fetch], capture_output=True).returncode == 0
        project = make_project(tmp_path / "p")
        command = wrapped(fetch, project)
        assert command and command.startswith(shutil.which("bwrap"))
        done = run_wrapped(command, project)
        assert done.returncode != 0 and "Connection refused" in done.stderr
    finally:
        server.shutdown()


@needs_bwrap
def test_the_worktree_and_temp_stay_writable_and_root_cannot_remount(env, tmp_path):
    project = make_project(tmp_path / "p")
    worktree = project / ".planner" / "s1" / "worktree"
    script = (
        f"echo ok > {worktree}/new.txt && echo ok > /tmp/planner-sandbox-$$ && "
        "rm /tmp/planner-sandbox-$$ && "
        "if mount -o remount,rw / 2>/dev/null; then echo REMOUNTED; fi; "
        "if mount -o remount,rw,bind "
        f"{project} 2>/dev/null; then echo REMOUNTED; fi; echo x > {project}/README.md"
    )
    before = snapshot(project)
    session = hookstate.find_session(str(project), env)
    done = run_wrapped(sandbox.wrap(script, session, str(project), env), project)
    assert (worktree / "new.txt").read_text() == "ok\n"
    assert "REMOUNTED" not in done.stdout and "Read-only file system" in done.stderr
    assert snapshot(project) == before


@needs_bwrap
def test_path_and_home_under_a_temp_dir_stay_read_only(env, tmp_path, monkeypatch):
    project = make_project(tmp_path / "p")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    session = hookstate.find_session(str(project), env)
    script = f"echo x > {bin_dir}/plan; echo x > $HOME/.gitconfig; echo ok > /tmp/pl-$$"
    done = run_wrapped(sandbox.wrap(script + "; rm /tmp/pl-$$", session, str(project)), project)
    assert not (bin_dir / "plan").exists() and not (tmp_path / "home" / ".gitconfig").exists()
    assert done.stderr.count("Read-only file system") == 2


@needs_bwrap
def test_the_worktrees_git_pointer_is_read_only_in_the_sandbox(env, tmp_path):
    project = make_project(tmp_path / "p")
    dot_git = project / ".planner" / "s1" / "worktree" / ".git"
    dot_git.write_text("gitdir: /somewhere\n")
    session = hookstate.find_session(str(project), env)
    done = run_wrapped(sandbox.wrap(f"echo x > {dot_git}", session, str(project)), project)
    assert "Read-only file system" in done.stderr
    assert dot_git.read_text() == "gitdir: /somewhere\n"


@needs_bwrap
def test_gemini_gets_the_wrapped_command_as_tool_input(env, tmp_path):
    project = make_project(tmp_path / "p")
    payload = {"tool_name": "run_shell_command", "tool_input": {"command": "make", "x": 1}}
    output = guard.run(json.dumps({**payload, "cwd": str(project)}).encode(), "gemini")
    data = json.loads(output)["hookSpecificOutput"]
    assert data["tool_input"]["x"] == 1 and "bwrap" in data["tool_input"]["command"]
    assert "decision" not in json.loads(output)


def runnable(command: str) -> bool:
    return not any(part in command for part in OUTSIDE)


@needs_bwrap
def test_every_corpus_command_run_wrapped_changes_nothing(env, tmp_path):
    """Layer 1's verdict aside, the sandbox alone keeps every corpus command from writing."""
    commands = [c for c, _ in CORPUS if runnable(c)]
    template = make_project(tmp_path / "template")
    state = template / ".planner" / "s1"

    def one(index_command):
        index, command = index_command
        copy = tmp_path / f"c{index}"
        shutil.copytree(template, copy, symlinks=True)
        session = copy / ".planner" / "s1"
        options = sandbox.bwrap_options([str(session / "worktree")], str(copy), (str(session),))
        argv = [shutil.which("bwrap"), *options, "--", "/bin/bash", "-c", command]
        before = snapshot(copy)
        with contextlib.suppress(subprocess.TimeoutExpired):
            subprocess.run(
                argv, cwd=copy, capture_output=True, timeout=15, stdin=subprocess.DEVNULL
            )
        changed = snapshot(copy) != before
        shutil.rmtree(copy, ignore_errors=True)
        return command, changed

    assert state.is_dir()
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(one, enumerate(commands)))
    assert [c for c, changed in results if changed] == []
    mutating = sum(1 for c, label in CORPUS if label == DENY and runnable(c))
    assert len(results) >= 300 and mutating >= 140


@needs_bwrap
def test_the_guard_wraps_what_layer_one_lets_through(env, tmp_path):
    project = make_project(tmp_path / "p")
    for command, label in BYPASSES + FALSE_DENIALS:
        result = wrapped(command, project)
        if label == DENY:
            assert result is None, command
        else:
            assert result and result.startswith(shutil.which("bwrap")), command


def test_without_a_sandbox_the_guard_says_so(env, tmp_path):
    project = make_project(tmp_path / "p")
    off = {**env, "PLANNER_SANDBOX": "off"}
    session = hookstate.find_session(str(project), off)
    assert session is not None
    assert sandbox.wrap("ls", session, str(project), off) is None
    os.environ["PLANNER_SANDBOX"] = "off"
    try:
        text = hookstate.status_text(session)
    finally:
        del os.environ["PLANNER_SANDBOX"]
    assert "planning is guarded by command parsing only; install bubblewrap" in text


@needs_bwrap
def test_codex_never_gets_a_wrapper_it_would_ignore(env, tmp_path):
    """Codex 0.169 runs the original command whatever updatedInput says (seen in run-codex)."""
    project = make_project(tmp_path / "p")
    payload = {"tool_name": "Bash", "tool_input": {"command": "make"}, "cwd": str(project)}
    data = json.loads(guard.run(json.dumps(payload).encode(), "codex"))["hookSpecificOutput"]
    assert data["permissionDecision"] == "deny" and "updatedInput" not in data
    read_only = {**payload, "tool_input": {"command": "git status"}}
    assert guard.run(json.dumps(read_only).encode(), "codex") == ""
