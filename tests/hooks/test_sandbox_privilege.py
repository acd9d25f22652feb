"""No privilege inside the sandbox (PRODUCT.md §7.2): the command is an unprivileged user in a
user namespace of its own, with its own hostname, /proc/sys and /sys read-only; what it can
write is exactly the worktree, the scratch dir and its private temp dirs (issue 29, item 3).
Carried out for real in bubblewrap; the project, its .git and $HOME compared before and after.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest

from hooks import hookstate, sandbox
from tests.hooks.test_sandbox import env, make_project, needs_bwrap, run_wrapped, trees, wrap_in

__all__ = ["env"]  # the fixture, shared with tests/hooks/test_sandbox.py

WALKER = Path(__file__).with_name("writable.py")
# Devices every sandbox has, whose writing changes nothing anyone else reads.
DEVICES = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}
DEVICES |= {"/dev/pts/ptmx", "/dev/ptmx"}


def host_state() -> tuple[str, str]:
    with open("/proc/sys/kernel/core_pattern", encoding="utf-8") as f:
        return f.read(), socket.gethostname()


@needs_bwrap
def test_item3_the_command_runs_unprivileged_with_its_own_hostname(env, tmp_path):
    """The attack: as uid 0 with a read-write /proc in the host's UTS namespace,
    core_pattern opened for writing and `hostname` renamed the host. Now neither."""
    project = make_project(tmp_path / "p")
    probe = (
        "import os, socket\n"
        "print(os.getuid(), os.getgid())\n"
        "for path in ('/proc/sys/kernel/core_pattern', '/proc/sys/kernel/hostname'):\n"
        "    try:\n"
        "        os.close(os.open(path, os.O_WRONLY)); print('OPEN', path)\n"
        "    except OSError as e:\n"
        "        print('refused', e.errno)\n"
        "try:\n"
        "    socket.sethostname(socket.gethostname()); print('RENAMED')\n"
        "except OSError as e:\n"
        "    print('refused', e.errno)\n"
    )
    script = f"python3 -c {sandbox.quote(probe)}; hostname planner-pwned; hostname"
    before, host = trees(project, tmp_path / "home"), host_state()
    done = run_wrapped(wrap_in(project, script, env), project)
    lines = done.stdout.split("\n")
    uid, gid = (int(n) for n in lines[0].split())
    assert uid != 0 and gid != 0, done.stdout
    assert "OPEN" not in done.stdout and "RENAMED" not in done.stdout, done.stdout
    assert lines[1:4] == ["refused 30", "refused 30", "refused 1"], done.stdout  # EROFS, EPERM
    assert lines[4] == host[1]  # `hostname planner-pwned` failed: the name is still its own
    assert host_state() == host and trees(project, tmp_path / "home") == before


@needs_bwrap
def test_what_the_command_writes_in_the_worktree_belongs_to_the_caller(env, tmp_path):
    """Inside it is another user; outside, its files are the caller's: the product reads,
    changes and removes them after the command."""
    project = make_project(tmp_path / "p")
    tree = project / ".planner" / "s1" / "worktree"
    script = f"mkdir -p {tree}/new && echo made > {tree}/new/file && stat -c %u {tree}/new/file"
    done = run_wrapped(wrap_in(project, script, env), project)
    assert done.returncode == 0 and done.stdout.strip() != "0", done.stderr
    made = tree / "new" / "file"
    info = made.stat()
    assert (info.st_uid, info.st_gid) == (os.getuid(), os.getgid())
    made.write_text("changed by the product\n")
    made.unlink()
    (tree / "new").rmdir()


def writable_inside(project: Path, env: dict) -> set[str]:
    done = run_wrapped(wrap_in(project, f"python3 -I {WALKER}", env), project)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout))


def expected_places(project: Path) -> set[str]:
    state = project / ".planner" / "s1"
    return {str(state / "worktree"), str(state / "scratch"), *sandbox.hidden_roots(), "/dev/shm"}


@pytest.mark.slow
@needs_bwrap
def test_what_is_writable_inside_is_exactly_the_worktree_scratch_and_private_temp(env, tmp_path):
    """Every mount (from /proc/self/mountinfo), /proc, /sys and /dev, walked inside the
    sandbox: a new file is tried in each directory, each file is opened for writing."""
    project = make_project(tmp_path / "p")
    before = trees(project, tmp_path / "home")
    found = writable_inside(project, env)
    assert found - DEVICES == expected_places(project)
    assert "/dev/null" in found and not any(p.startswith(("/proc", "/sys")) for p in found)
    assert trees(project, tmp_path / "home") == before


@pytest.mark.slow
@needs_bwrap
def test_without_user_namespaces_the_same_places_and_the_status_says_so(env, tmp_path, monkeypatch):
    """Where no user namespace can be made (here: bwrap refuses the options), the sandbox
    still runs with no capabilities, /proc/sys read-only and its own hostname, what is
    writable is the same, and the status says the command runs as root (the caller's uid)."""
    monkeypatch.setattr(sandbox, "user_options", lambda no_nesting: ("--no-such-option",))
    program = sandbox.sandbox_program(env)
    assert program is not None and program[3] == ()
    assert sandbox.sandbox_note(env) == (sandbox.NO_USERNS if os.getuid() == 0 else "")
    project = make_project(tmp_path / "p")
    if os.getuid() == 0:
        session = hookstate.find_session(str(project), env)
        assert "user namespaces are not available" in hookstate.status_text(session)
    assert writable_inside(project, env) - DEVICES == expected_places(project)
    done = run_wrapped(wrap_in(project, "hostname planner-pwned; hostname", env), project)
    assert done.stdout.strip() == socket.gethostname()


def test_the_user_namespace_maps_root_to_an_unprivileged_user():
    options = sandbox.user_options(True)
    uid, gid = options[options.index("--uid") + 1], options[options.index("--gid") + 1]
    assert options[0] == "--unshare-user" and options[-1] == "--disable-userns"
    assert int(uid) == (os.getuid() or sandbox.INSIDE_ID) and int(uid) != 0
    assert int(gid) == (os.getgid() or sandbox.INSIDE_ID) and int(gid) != 0
    assert "--disable-userns" not in sandbox.user_options(False)
    assert sys.platform != "linux" or "--unshare-uts" in sandbox.bwrap_options([], [])
