"""Layer 2: commands the parser does not deny come back wrapped in bubblewrap, and run that
way they change nothing in the project. Every corpus command is run as the guard returns it,
in a throw-away copy of a project, and the copy is compared before and after.

The sandbox shares nothing writable or connectable with the host but the worktree and the
scratch dir: each attack of issue 17 (items 3 to 6) is carried out for real and the project,
its `.git` and $HOME are compared before and after (tmp_path lies under /tmp, so every project
here is one "under a temp dir").
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import struct
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hooks import guard_hook as guard
from hooks import hookstate, sandbox
from state import vocab
from tests.hooks.guard_corpus import BYPASSES, CORPUS, DENY, FALSE_DENIALS
from tests.hooks.test_guard import make_session

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
    make_session(root, "s1")
    (root / ".planner" / "s1" / hookstate.TRACE).touch()  # the guard was heard (as it runs here)
    return root


def snapshot(
    root: Path, skip: tuple[str, ...] = (".planner/s1/worktree/", ".planner/s1/scratch")
) -> dict:
    """Every path under root with its mode, bytes and link target, but those under `skip`
    (which is not walked: a background process in a worktree may be changing it)."""
    found = {}
    paths = []
    for top, dirs, files in os.walk(root):
        rel_top = os.path.relpath(top, root)
        for name in [*dirs, *files]:
            rel = os.path.normpath(os.path.join(rel_top, name))
            if (rel + "/").startswith(skip) or rel.startswith(skip):
                dirs[:] = [d for d in dirs if d != name]
                continue
            paths.append(Path(root, rel))
    for path in sorted(paths):
        rel = str(path.relative_to(root))
        if rel in (".planner/s1/audit.jsonl", ".planner/s1/guard.heard"):  # the guard's own
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
def test_the_probe_finds_bwrap_and_caches_its_answer(env, tmp_path, monkeypatch):
    program = sandbox.sandbox_program(env)
    assert program[0] == "bwrap" and program[2] == os.path.realpath(sys.executable)
    cache = tmp_path / "cache" / "planner" / "sandbox-probe"
    # the probe ran bwrap with the filter loaded, as an unprivileged user in a user namespace
    assert " seccomp+user" in cache.read_text() and "--unshare-user" in program[3]
    other = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    monkeypatch.setattr(sys, "executable", other)  # the launchers' venv and the hooks' python3
    assert sandbox.sandbox_program(env)[2] == os.path.realpath(other)
    assert len(cache.read_text().splitlines()) == 1 + (os.path.realpath(other) != program[2])
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
def test_git_works_in_a_real_worktree_whose_git_dir_stays_read_only(env, tmp_path):
    """`plan worktree`'s checkout in the sandbox: its files writable, git reading it through
    its private git dir (read-only, as the project's .git is), so tests and `git diff` run."""
    from tests import crashpoints as cp

    project = tmp_path / "p"
    project.mkdir()
    cp.new_project(project)
    state = cp.planning(project)
    tree = Path(cp.ok(project, ["plan", "worktree"]).strip())
    private = state / "worktree.git"
    heads = (private / "HEAD").read_text()
    script = (
        f"cd {tree} && echo '# more' >> README.md && git diff --stat && git status --short; "
        f"echo x > {private}/HEAD; echo x > {project}/.git/HEAD; git -C {tree} log --oneline"
    )
    session = hookstate.find_session(str(project), env)
    done = run_wrapped(sandbox.wrap(script, session, str(project), env), project)
    assert "README.md | 1 +" in done.stdout and " M README.md" in done.stdout, done.stderr
    assert done.stderr.count("Read-only file system") == 2 and "init" in done.stdout
    assert (private / "HEAD").read_text() == heads
    assert (tree / "README.md").read_text() == "# Demo\n# more\n"


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


@pytest.mark.slow
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
        session = hookstate.find_session(str(copy), env)
        wrapped_command = sandbox.wrap(command, session, str(copy), env)
        before = snapshot(copy)
        with contextlib.suppress(subprocess.TimeoutExpired):
            subprocess.run(
                ["bash", "-c", wrapped_command],
                cwd=copy,
                capture_output=True,
                timeout=15,
                stdin=subprocess.DEVNULL,
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


# -- round 2: nothing shared, nothing trusted (issue 17, items 3 to 6) ------------------------


def wrap_in(project: Path, command: str, env: dict, where: Path | None = None) -> str:
    """`command` wrapped as the guard wraps it for the project's session."""
    session = hookstate.find_session(str(where or project), env)
    found = sandbox.wrap(command, session, str(where or project), env)
    assert found and found.startswith(shutil.which("bwrap") or "bwrap")
    return found


def trees(*roots: Path) -> dict:
    return {str(root): snapshot(root) for root in roots}


def python_writes(path: Path) -> str:
    return f"python3 -c \"open('{path}', 'a').write('x')\""


needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


@contextlib.contextmanager
def tmux_server(*where: str):
    """A tmux server of the person's, started outside any sandbox; killed afterwards."""
    tmux = ["tmux", *where, "-f", "/dev/null"]
    subprocess.run([*tmux, "new-session", "-d", "-s", "t"], check=True, timeout=30)
    socket_path = subprocess.run(
        [*tmux, "display-message", "-p", "#{socket_path}"], capture_output=True, text=True
    ).stdout.strip()
    try:
        yield tmux
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True, timeout=30)
        if socket_path:  # tmux leaves its socket file behind
            Path(socket_path).unlink(missing_ok=True)


@needs_bwrap
@needs_tmux
def test_item3_a_tmux_server_outside_is_out_of_reach(env, tmp_path):
    """`connect()` ignores read-only mounts: the person's tmux (in /tmp, hidden by the private
    /tmp; or at a path the sandbox can see, refused by the seccomp filter) cannot run a command
    outside. Without the filter the second one would be a way out, as the control shows."""
    project = make_project(tmp_path / "p")
    home = tmp_path / "home"
    visible = home / "tmux.sock"  # HOME is bound back read-only: the sandbox sees the socket
    name = f"planner-test-{os.getpid()}"
    with tmux_server("-L", name), tmux_server("-S", str(visible)):
        reached = home / "reached"
        bwrap = shutil.which("bwrap") or "bwrap"
        control = [bwrap, *sandbox.bwrap_options([], [str(home)]), "--", "tmux", "-S"]
        control += [str(visible), "run-shell", f"touch {reached}"]
        subprocess.run(control, capture_output=True, timeout=30, check=True)
        assert reached.exists()  # no filter: the server outside ran it
        reached.unlink()
        before = trees(project, home)
        attacks = [
            f"tmux -L {name} run-shell 'echo x >> {project}/README.md'",
            f"tmux -S {visible} run-shell 'echo x >> {project}/README.md; touch {reached}'",
            'python3 -c "import socket; s = socket.socket(socket.AF_UNIX);'
            f" s.connect('{visible}')\"",
        ]
        for attack in attacks:
            done = run_wrapped(wrap_in(project, attack, env), project)
            assert done.returncode != 0, attack
        assert "PermissionError" in done.stderr
        time.sleep(0.5)  # a run-shell that got through would have run by now
        assert trees(project, home) == before and not reached.exists()
    probe = "python3 -c 'import socket; socket.socketpair()' && ls -A /run && echo done"
    probe += "; test -e /run/user || test -e /run/dbus || echo hidden"
    done = run_wrapped(wrap_in(project, probe, env), project)
    assert done.stdout.split() == ["done", "hidden"], done.stderr


@needs_bwrap
def test_item4_symlinks_planted_in_tmp_never_reach_the_host(env, tmp_path):
    """The agent's /tmp is its own: what it plants there is gone, links cannot be made at all
    (round 3), and the harness's own write to /tmp after the command (Claude Code's `pwd -P
    >| /tmp/claude-XXXX-cwd`) follows nothing."""
    project = make_project(tmp_path / "p")
    prefix = f"/tmp/planner-test-{os.getpid()}"
    plant = f"for i in $(seq 200); do echo {project} > {prefix}-$i-cwd; done"
    plant += f"; ln -s {project}/src/app.py {prefix}-link || echo refused; ls {prefix}-7-cwd"
    plant += f"; ln -s {project}/README.md /var/tmp/planner-test-{os.getpid()} || echo refused"
    before = trees(project, tmp_path / "home")
    done = run_wrapped(wrap_in(project, plant, env), project)
    assert done.stdout.split() == ["refused", f"{prefix}-7-cwd", "refused"], done.stderr
    assert done.stderr.count("Operation not permitted") == 2
    assert not list(Path("/tmp").glob(f"planner-test-{os.getpid()}-*"))
    assert not Path(f"/var/tmp/planner-test-{os.getpid()}").exists()
    harness_file = Path(f"{prefix}-7-cwd")
    try:
        harness_file.write_text(str(project))  # what the harness writes after the command
    finally:
        harness_file.unlink()
    assert trees(project, tmp_path / "home") == before


@needs_bwrap
def test_item4_dev_shm_is_private_too(env, tmp_path):
    project = make_project(tmp_path / "p")
    marker = Path(f"/dev/shm/planner-test-{os.getpid()}")
    marker.write_text("host")
    try:
        script = f"ls -A /dev/shm; echo x > {marker}-inside && cat {marker}-inside"
        done = run_wrapped(wrap_in(project, script, env), project)
        assert done.stdout.split() == ["x"], done.stderr
        assert not Path(f"{marker}-inside").exists() and marker.read_text() == "host"
    finally:
        marker.unlink()


@needs_bwrap
def test_item5_a_venv_under_tmp_cannot_be_planted_into(env, tmp_path, monkeypatch):
    """PLANNER_PYTHON and PATH name a venv under /tmp: visible in the sandbox (it runs), but a
    `.pth` written into its site-packages or a `plan` into its bin/ never lands."""
    project = make_project(tmp_path / "p")
    venv = tmp_path / "venv"
    site = venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "bin").mkdir()
    (venv / "bin" / "python").symlink_to(os.path.realpath(sys.executable))
    monkeypatch.setenv("PATH", f"{venv / 'bin'}:{os.environ['PATH']}")
    monkeypatch.setenv("PLANNER_PYTHON", str(venv / "bin" / "python"))
    env = dict(os.environ)
    before = trees(project, venv, tmp_path / "home")
    script = f"ls {site} {venv}/pyvenv.cfg && {venv}/bin/python -c pass && echo runs; "
    script += python_writes(site / "evil.pth") + "; " + python_writes(venv / "bin" / "plan")
    done = run_wrapped(wrap_in(project, script, env), project)
    assert "runs" in done.stdout, done.stderr
    assert done.stderr.count("Read-only file system") == 2
    assert trees(project, venv, tmp_path / "home") == before


@needs_bwrap
def test_item6_the_git_root_is_protected_when_the_harness_names_a_subdirectory(
    env, tmp_path, monkeypatch
):
    """The project lies under /tmp and the agent was started in a subdirectory: the root's
    README.md and .git/hooks are readable in the sandbox and not writable."""
    project = make_project(tmp_path / "p")
    assert str(project).startswith("/tmp/")
    sub = project / "src"
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(sub))
    before = trees(project, tmp_path / "home")
    script = f"cat {project}/README.md; " + python_writes(project / "README.md") + "; "
    script += python_writes(project / ".git" / "hooks" / "pre-commit")
    command = wrapped(script, project)  # as the guard hands it back for this hook input
    assert command is not None
    done = run_wrapped(command, sub)
    assert "# demo" in done.stdout
    assert done.stderr.count("Read-only file system") == 2, done.stderr
    assert trees(project, tmp_path / "home") == before


@needs_bwrap
def test_the_scratch_dir_keeps_files_between_calls(env, tmp_path):
    project = make_project(tmp_path / "p")
    scratch = project / ".planner" / "s1" / "scratch"
    write = f'echo "[]" > {scratch}/ops.json; echo t > $TMPDIR/t'
    run_wrapped(wrap_in(project, write, env), project)
    done = run_wrapped(wrap_in(project, f"cat {scratch}/ops.json $TMPDIR/t", env), project)
    assert done.stdout.split() == ["[]", "t"], done.stderr
    assert (scratch / "ops.json").read_text() == "[]\n"  # readable by `plan apply FILE`
    assert scratch.stat().st_mode & 0o777 == 0o700


@needs_bwrap
def test_commands_that_write_only_temp_run(env, tmp_path):
    """`pip download -d /tmp/x`, `cp <worktree>/f /tmp/x`, `mkdir` in temp: they write the
    sandbox's own temp dirs, which vanish with the command; the host's stay as they were."""
    project = make_project(tmp_path / "p")
    worktree = project / ".planner" / "s1" / "worktree"
    (worktree / "f").write_text("w\n")
    name = f"planner-test-{os.getpid()}"
    script = f"mkdir -p /tmp/{name}/d /var/tmp/{name} && cp {worktree}/f {project}/README.md"
    script += f" /tmp/{name}/d/ && cat /tmp/{name}/d/f && mktemp && touch /dev/shm/{name}"
    before = trees(project, tmp_path / "home")
    done = run_wrapped(wrap_in(project, script, env), project)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "w"
    assert done.stdout.splitlines()[1].startswith(str(project / ".planner/s1/scratch/tmp."))
    assert not Path(f"/tmp/{name}").exists() and not Path(f"/var/tmp/{name}").exists()
    assert trees(project, tmp_path / "home") == before


@needs_bwrap
def test_the_filter_refuses_other_abis_and_io_uring(env, tmp_path):
    """Syscalls the family check cannot see through: x32 (x86_64) and io_uring_setup fail with
    EPERM in the sandbox (outside, the kernel answers ENOSYS/EFAULT or runs them)."""
    if os.uname().machine != "x86_64":
        pytest.skip("the x32 check is x86_64's")
    project = make_project(tmp_path / "p")
    calls = (
        "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True)\n"
        "for nr in (0x40000000 | 39, 425):\n"
        "    libc.syscall(nr, 1, 0); print(nr, ctypes.get_errno())"
    )
    script = f"python3 -c '{calls}'"
    outside = run_wrapped(script, project).stdout.split()
    inside = run_wrapped(wrap_in(project, script, env), project).stdout.split()
    assert outside[1] != "1" and outside[3] != "1"
    assert inside == [str(0x40000000 | 39), "1", "425", "1"]


def run_bpf(program: bytes, arch: int, nr: int, arg0: int) -> int:
    """A classic-BPF interpreter for the four instructions the filter uses."""
    data = struct.pack("=iIQ6Q", nr, arch, 0, arg0, 0, 0, 0, 0, 0)
    code = [struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    pc, acc = 0, 0
    while True:
        op, jt, jf, k = code[pc]
        if op == sandbox.LD_W_ABS:
            acc = struct.unpack_from("=I", data, k)[0]
        elif op == sandbox.RET_K:
            return k
        elif op in (sandbox.JEQ_K, sandbox.JGE_K):
            hit = acc == k if op == sandbox.JEQ_K else acc >= k
            pc += jt if hit else jf
        else:
            raise AssertionError(f"unexpected BPF op {op:#x}")
        pc += 1


@settings(max_examples=60, deadline=None)
@given(
    machine=st.sampled_from(sorted(sandbox.ARCHES)),
    arch=st.sampled_from([0xC000003E, 0xC00000B7, 0x40000003, 0x40000028, 0]),
    nr=st.one_of(
        st.integers(0, 0x7FFFFFFF),
        st.sampled_from([41, 53, 198, 199, 425, 102, 86, 88, 265, 266, 36, 37, 250, 219]),
    ),
    family=st.one_of(st.integers(0, 2**64 - 1), st.sampled_from([1, 2, 10, 16, 2**32 + 1])),
)
def test_the_filter_program_refuses_exactly_unix_sockets_links_and_keys(machine, arch, nr, family):
    native, socket_nr, io_uring_nr, x32 = sandbox.ARCHES[machine]
    verdict = run_bpf(sandbox.seccomp_program(machine), arch, nr, family)
    refused = (
        arch != native
        or (x32 and nr >= x32)
        or nr in (io_uring_nr, *sandbox.REFUSED[machine])
        or (nr == socket_nr and family & 0xFFFFFFFF == 1)
    )
    assert verdict == (sandbox.RET_EPERM if refused else sandbox.RET_ALLOW)


def test_the_loader_puts_the_filter_in_place_before_the_command(tmp_path):
    """What the wrapped command starts inside bwrap: the filter is in place before the
    command runs, and nothing is read through a redirection (Claude Code refuses one from
    outside the project). Where it cannot load the filter it does not run the command."""
    helper = sandbox.filtered(sys.executable)
    script = "grep Seccomp: /proc/self/status; python3 -c 'import socket; socket.socketpair()'"
    done = subprocess.run([*helper, "/bin/sh", "-c", script], capture_output=True, text=True)
    assert done.stdout.split() == ["Seccomp:", "2"] and done.returncode == 0, done.stderr
    refused = subprocess.run([*helper, str(tmp_path / "missing")], capture_output=True)
    assert refused.returncode == 126 and b"could not start the command" in refused.stderr


@needs_bwrap
def test_without_the_filter_temp_and_run_stay_hidden_and_status_says_so(env, tmp_path, monkeypatch):
    """Where the filter cannot load (here: an interpreter that cannot run the loader), the
    probe finds it out, the sandbox still hides /tmp and /run, and the status says AF_UNIX
    sockets are not filtered."""
    project = make_project(tmp_path / "p")
    monkeypatch.setattr(sys, "executable", shutil.which("false") or "/bin/false")
    assert sandbox.sandbox_program(env)[2] is None
    assert sandbox.sandbox_note(env) == sandbox.NO_SECCOMP
    session = hookstate.find_session(str(project), env)
    assert "AF_UNIX sockets are not filtered" in hookstate.status_text(session)
    marker = Path(f"/tmp/planner-test-{os.getpid()}")
    marker.write_text("host")
    try:
        script = f"ls -A /run /var/tmp /dev/shm | grep -v :; ls {marker} || echo hidden"
        command = wrap_in(project, script, env)
        assert "from hooks import sandbox" not in command
        done = run_wrapped(command, project)
    finally:
        marker.unlink()
    assert done.stdout.split() == ["hidden"], done.stdout


@needs_bwrap
def test_a_worktree_or_scratch_that_resolves_elsewhere_is_not_made_writable(env, tmp_path):
    """Only the session's own dirs are writable: a `worktree` or `scratch` symlink (planted by
    whatever means) into the project does not open the project."""
    project = make_project(tmp_path / "p")
    state = project / ".planner" / "s1"
    (state / "worktree").rmdir()
    (state / "worktree").symlink_to(project)
    (state / "scratch").symlink_to(project / "src")
    before = trees(project, tmp_path / "home")
    script = python_writes(state / "worktree" / "README.md") + "; "
    script += python_writes(state / "scratch" / "app.py")
    done = run_wrapped(wrap_in(project, script, env), project)
    assert done.stderr.count("Read-only file system") == 2, done.stderr
    assert "read-only except nothing" in done.stderr
    assert trees(project, tmp_path / "home") == before


@needs_bwrap
def test_a_plugin_under_a_temp_dir_still_loads_the_filter(env, tmp_path):
    """The filter's loader is the plugin's own code: where the plugin lies under /tmp it is
    bound back for the probe and for every command, so the filter still loads."""
    plugin = tmp_path / "plugin"
    shutil.copytree(Path(sandbox.__file__).parent, plugin / "hooks")
    shutil.copytree(Path(vocab.__file__).parent, plugin / "state")  # the vocabulary
    project = make_project(tmp_path / "p")
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); from hooks import hookstate, sandbox\n"
        "wrapped = sandbox.wrap(sys.argv[3], hookstate.find_session(sys.argv[2]), sys.argv[2])\n"
        "print(json.dumps([sandbox.sandbox_program(), wrapped]))"
    )
    unix = "python3 -c 'import socket; socket.socket(socket.AF_UNIX)'"
    done = subprocess.run(
        [sys.executable, "-S", "-I", "-c", code, str(plugin), str(project), unix],
        capture_output=True,
        text=True,
        env=env,
    )
    program, command = json.loads(done.stdout)
    assert program[2] is not None and str(plugin) in command, done.stderr
    ran = run_wrapped(command, project)
    assert ran.returncode != 0 and "PermissionError" in ran.stderr
