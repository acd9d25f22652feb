"""The OS sandbox (layer 2 of the guard) that Bash commands run in while a plan is made:
bubblewrap on Linux, sandbox-exec on macOS; `wrap()` turns a command into its wrapped form.

Standard library only (it runs in the guard hook under `python3 -S -I`). `sandbox_note()` is
what `planner status` and SessionStart print: "" when the whole sandbox runs, else the warning.
The sandbox shares nothing writable or connectable with the host but the session's scratch
worktree and scratch dir (docs/design.md, "The sandbox"). Inside the sandbox, `main()`
loads the seccomp filter and execs the command.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import NoReturn, Protocol

    Env = Mapping[str, str]

    class Session(Protocol):  # what the sandbox reads of hooks.hookstate.Session (no cycle)
        @property
        def state_dir(self) -> str: ...

    # ("bwrap", path, the python that loads the filter or None, the user namespace's options,
    # empty where there is none) or ("sandbox-exec", path, None, ())
    Program = tuple[str, str, str | None, tuple[str, ...]]

NO_SANDBOX = "planning is guarded by command parsing only; install bubblewrap"
NO_SECCOMP = (
    "shell commands run in a read-only sandbox, but AF_UNIX sockets are not filtered there"
    " (the seccomp filter did not load); a socket the sandbox can see is a way out"
)
NO_USERNS = (
    "shell commands run in a read-only sandbox, but as root (without capabilities): user"
    " namespaces are not available here (enable them: sysctl user.max_user_namespaces,"
    " kernel.unprivileged_userns_clone) for an unprivileged user inside"
)
PROBE_VERSION = 5  # part of the probe cache key: a changed probe or sandbox runs again
INSIDE_ID = 1000  # the uid and gid a command runs as in the sandbox when the caller is root
HIDDEN = ("/tmp", "/var/tmp", "/dev/shm", "/run")  # a private tmpfs each, inside the sandbox


def find_program(name: str, env: Env | None = None) -> str | None:
    """The absolute path of `name` on PATH (only absolute PATH entries count), else None."""
    env = os.environ if env is None else env
    for folder in (env.get("PATH") or "/usr/bin:/bin").split(os.pathsep):
        if folder.startswith("/"):
            path = os.path.join(folder, name)
            if os.access(path, os.X_OK) and not os.path.isdir(path):
                return path
    return None


def sandbox_program(env: Env | None = None) -> Program | None:
    """("bwrap", path, python, user) or ("sandbox-exec", path, None, ()) when that sandbox
    runs here, else None; `python` is the interpreter that loads the seccomp filter inside the
    sandbox (this one), or None where the filter cannot load; `user` the options that make the
    command an unprivileged user in a user namespace of its own, () where there are none.

    The bwrap probe (up to four runs of `bwrap … true`, ~30 ms each) is cached per bwrap
    binary, interpreter and uid in the user's cache dir, which the sandbox keeps read-only.
    """
    env = os.environ if env is None else env
    if env.get("PLANNER_SANDBOX") == "off":
        return None
    if sys.platform == "darwin":
        path = "/usr/bin/sandbox-exec"
        return ("sandbox-exec", path, None, ()) if os.path.exists(path) else None
    path = find_program("bwrap", env)
    if path is None:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    python = os.path.realpath(sys.executable)
    seccomp = python if os.uname().machine in ARCHES and os.path.isfile(python) else None
    key = f"v{PROBE_VERSION} {path} {info.st_mtime_ns} {info.st_size} {os.getuid()}"
    key += f" {os.uname().machine} {seccomp}"
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    cache = os.path.join(base, "planner", "sandbox-probe")
    try:
        with open(cache, encoding="utf-8", errors="replace") as f:
            known = f.read(4096)
    except OSError:
        known = ""
    # One line per key: the hooks' python3 and the launchers' venv each keep their answer.
    lines = [line for line in known.splitlines() if " " in line]
    answers = dict(line.rsplit(" ", 1) for line in lines)
    found = answers.get(key)
    if found is None:
        found = "fail"
        # Best first: the filter and an unprivileged user; each missing piece is a status note.
        nested = _knows(path, "--disable-userns")
        for user in (user_options(nested), ()):
            for filtered_by in (seccomp, None) if seccomp else (None,):
                if probe_bwrap(path, filtered_by, user):
                    found = "seccomp" if filtered_by else "plain"
                    found += ("+user" + ("+nonest" if nested else "")) if user else ""
                    break
            if found != "fail":
                break
        _write_atomically(cache, "\n".join([*lines[-3:], f"{key} {found}"]).encode())
    if found == "fail":
        return None
    user = user_options("+nonest" in found) if "+user" in found else ()
    return ("bwrap", path, seccomp if found.startswith("seccomp") else None, user)


def user_options(no_nesting: bool) -> tuple[str, ...]:
    """bwrap's options for a user namespace of the command's own, in which it is an
    unprivileged user (the caller's ids, or INSIDE_ID for root: as seen outside, what it
    writes still belongs to the caller) and, with `no_nesting` (bubblewrap 0.8+), can make
    no further user namespace."""
    uid, gid = os.getuid() or INSIDE_ID, os.getgid() or INSIDE_ID
    options = ("--unshare-user", "--uid", str(uid), "--gid", str(gid))
    return (*options, "--disable-userns") if no_nesting else options


def _knows(bwrap: str, option: str) -> bool:
    """Whether this bwrap has `option` (bubblewrap 0.8 added --disable-userns)."""
    import subprocess

    try:
        done = subprocess.run([bwrap, "--help"], capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return option.encode() in done.stdout + done.stderr


def probe_bwrap(path: str, python: str | None, user: tuple[str, ...] = ()) -> bool:
    """Whether bwrap can build the sandbox here (as an unprivileged user in a user namespace
    with `user`, and `python` loading the seccomp filter in it, when given) and `/` and
    /proc/sys really are read-only inside it."""
    import subprocess

    script = "touch /.planner-probe 2>/dev/null && exit 3; [ -w /proc/sys/kernel ] && exit 4"
    script += "; [ -w /proc/sys/kernel/hostname ] && exit 5"
    script += "; [ $(id -u) = 0 ] && exit 6; exit 0" if user else "; exit 0"
    roots = hidden_roots()
    options = bwrap_options([], _under(_loader_dirs(python), roots), roots=roots, user=user)
    argv = [path, *options, "--", *filtered(python), "/bin/sh", "-c", script]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def sandbox_note(env: Env | None = None) -> str:
    """ "" when shell commands are fully sandboxed while planning, else the warning to show."""
    program = sandbox_program(env)
    if program is None:
        return NO_SANDBOX
    notes = []
    if program[0] == "bwrap" and program[2] is None:
        notes.append(NO_SECCOMP)
    if program[0] == "bwrap" and not program[3] and os.getuid() == 0:
        notes.append(NO_USERNS)  # a non-root caller runs unprivileged without one
    return "; ".join(notes)


# -- what the sandbox shares with the host ---------------------------------------------------


def hidden_roots() -> list[str]:
    """The host dirs each sandbox replaces with an empty tmpfs of its own: temp (so nothing an
    agent plants there reaches the host) and /run (sockets: the user's bus, docker, …)."""
    found: list[str] = []
    for path in HIDDEN:
        if os.path.isdir(path):
            real = os.path.realpath(path)
            if real != "/" and real not in found:
                found.append(real)
    return found


def shown_read_only(session: Session | None, project: str, env: Env, roots: list[str]) -> list[str]:
    """What a command legitimately reads that may lie under a hidden root, to be bound back
    read-only: the project and every enclosing git root, the session, HOME and its config,
    PATH, the virtualenv, the launchers' and this interpreter, the plugin and its data dir."""
    wanted = [project, *_git_roots(project)]
    if session is not None:
        state = os.path.realpath(session.state_dir)
        wanted += [state, *_git_roots(os.path.dirname(state))]
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "VIRTUAL_ENV"):
        wanted.append(env.get(name) or "")
    for name in ("CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", "PLANNER_DATA_DIR"):
        wanted.append(env.get(name) or "")
    data = env.get("XDG_DATA_HOME") or os.path.join(env.get("HOME") or "/", ".local", "share")
    wanted.append(os.path.join(data, "planner"))
    for folder in (env.get("PATH") or "").split(os.pathsep):
        wanted += [folder, _venv_root(folder)]
    launcher = env.get("PLANNER_PYTHON") or ""
    if launcher and not launcher.startswith("/"):
        launcher = find_program(launcher, env) or ""
    wanted += _loader_dirs(launcher) + _loader_dirs(sys.executable)
    return _under(wanted, roots)


def _loader_dirs(python: str | None) -> list[str]:
    """The plugin (whose code loads the filter) and the prefix of `python` (as named and as
    resolved): what the filter's loader, or a launcher, needs to see in the sandbox."""
    found = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]
    if python and python.startswith("/"):
        for bin_dir in (os.path.dirname(python), os.path.dirname(os.path.realpath(python))):
            found += [bin_dir, os.path.dirname(bin_dir)]
    return found


def _git_roots(start: str) -> list[str]:
    """`start` and every directory above it that holds a `.git`: the project's repository
    root wherever the harness says the project is (a subdirectory, a submodule)."""
    found: list[str] = []
    here = os.path.realpath(start)
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            found.append(here)
        parent = os.path.dirname(here)
        if parent == here:
            return found
        here = parent


def _venv_root(folder: str) -> str:
    parent = os.path.dirname(folder.rstrip("/"))
    return parent if os.path.isfile(os.path.join(parent, "pyvenv.cfg")) else ""


def _under(paths: list[str], roots: list[str]) -> list[str]:
    """The existing dirs among `paths` (as written and resolved) that lie strictly under a
    hidden root, parents first, without those a listed parent already covers."""
    inside = []
    for path in {os.path.normpath(p) for p in paths if p.startswith("/")}:
        for form in (path, os.path.realpath(path)):
            if any(form.startswith(root + "/") for root in roots) and os.path.isdir(form):
                inside.append(form)
    kept: list[str] = []
    for path in sorted(set(inside), key=lambda p: (p.count("/"), p)):
        if not any(path == k or path.startswith(k + "/") for k in kept):
            kept.append(path)
    return kept


def bwrap_options(
    writable: list[str],
    read_only: list[str],
    tmpdir: str | None = None,
    roots: list[str] | None = None,
    user: tuple[str, ...] | list[str] = (),
) -> list[str]:
    """Order matters, later mounts win: `/` read-only; a private /dev (read-only but its
    devices and its own /dev/shm), /proc read-only (/proc/sys too), and an empty tmpfs over
    each hidden root; `read_only` bound back into them; then `writable` (each with its `.git`
    read-only again: git finds its config there). An unprivileged user in a user namespace of
    its own (`user`, see user_options()), no capabilities (root inside cannot remount), own
    UTS, PID, IPC and network namespaces (no hostname of the host's, no ptrace or shared memory
    of processes outside, no loopback: the review page where a person approves is out of
    reach), a new terminal session (no TIOCSTI into the person's terminal), and nothing left
    running when the command ends. (The seccomp filter is loaded inside, by `filtered()`.)
    """
    roots = hidden_roots() if roots is None else roots
    options = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    # /proc/sys is the kernel's, not the sandbox's: with the caller's uid 0 outside, its files
    # (core_pattern, …) open for writing even to an unprivileged user inside; the rest of
    # /proc too (PSI triggers, …); /dev/fd/N and /dev/stdout still reach the open files
    options += ["--ro-bind", "/proc/sys", "/proc/sys", "--remount-ro", "/proc"]
    for root in roots:
        options += ["--tmpfs", root]
    if "/dev/shm" not in roots:
        options += ["--tmpfs", "/dev/shm"]
    options += ["--remount-ro", "/dev"]
    for path in read_only:
        options += ["--ro-bind", path, path]
    for path in writable:
        if os.path.isdir(path):
            options += ["--bind", path, path]
            dot_git = os.path.join(path, ".git")
            if os.path.lexists(dot_git):
                options += ["--ro-bind", dot_git, dot_git]
    options += ["--setenv", "TMPDIR", tmpdir or "/tmp"]
    options += [*user, "--unshare-uts", "--unshare-pid", "--unshare-ipc", "--unshare-net"]
    options += ["--new-session"]
    options += ["--die-with-parent", "--cap-drop", "ALL"]
    return options


def scratch_dir(session: Session) -> str:
    """`<state_dir>/scratch/`: writable in the sandbox and kept between calls, so a file
    written in one command can be read in the next or passed to `plan apply FILE`."""
    return os.path.join(os.path.realpath(session.state_dir), "scratch")


def quote(word: str) -> str:
    if word and all(c.isalnum() or c in "@%+=:,./-_" for c in word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def wrap(command: str, session: Session, project: str, env: Env | None = None) -> str | None:
    """The command as it runs inside the sandbox, or None when no sandbox runs here (`session`
    is a hooks.hookstate.Session; `project` is where the harness says the project is)."""
    env = os.environ if env is None else env
    program = sandbox_program(env)
    if program is None:
        return None
    shell = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
    scratch = scratch_dir(session)
    try:
        os.makedirs(scratch, mode=0o700, exist_ok=True)
    except OSError:
        scratch = ""
    # Writable only when they really are the session's own dirs: a worktree or scratch that
    # resolves elsewhere (a symlink planted by any means) would open that place instead.
    state = os.path.realpath(session.state_dir) + os.sep
    worktree, scratch = (
        p if p and os.path.realpath(p).startswith(state) and not os.path.islink(p) else ""
        for p in (os.path.join(state, "worktree"), scratch)
    )
    writable = [p for p in (worktree, scratch) if p]
    places = " and ".join(writable) or "nothing"
    note = (
        f"planner: this command ran in the planning sandbox (read-only except {places};"
        " /tmp is private to each command) and failed; if it meant to change the project,"
        " record the change in the plan instead"
    )
    note = "".join(c for c in note if c not in '"$`\\!')
    trap = f'rc=$?; [ $rc = 0 ] || echo "{note}" >&2'
    script = f"trap {quote(trap)} EXIT; {command}"
    if program[0] == "sandbox-exec":
        script = f"export TMPDIR={quote(scratch or '/tmp')}; {script}"
        argv = [program[1], "-p", macos_profile(writable), shell, "-c", script]
        return " ".join(map(quote, argv))
    roots = hidden_roots()
    read_only = shown_read_only(session, os.path.realpath(project), env, roots)
    options = bwrap_options(writable, read_only, scratch or None, roots, program[3])
    argv = [program[1], *options, "--", *filtered(program[2]), shell, "-c", script]
    return " ".join(map(quote, argv))


def macos_profile(writable: list[str]) -> str:
    """A sandbox-exec profile: everything allowed but file writes outside `writable` and any
    network (unix sockets included). Untested here (no macOS on these machines); kept in the
    shape Apple's own profiles use.
    """
    allow = " ".join(f'(subpath "{os.path.realpath(p)}")' for p in writable)
    return (
        "(version 1)(allow default)(deny file-write*)(deny network*)"
        f"(allow file-write* {allow}"
        ' (literal "/dev/null") (literal "/dev/tty") (regex #"^/dev/fd/"))'
    )


# -- the seccomp filter ----------------------------------------------------------------------

# Classic BPF over struct seccomp_data {int nr; u32 arch; u64 ip; u64 args[6]} (linux/seccomp.h,
# linux/filter.h): an array of struct sock_filter, as prctl(PR_SET_SECCOMP) takes it.
LD_W_ABS, JEQ_K, JGE_K, RET_K = 0x20, 0x15, 0x35, 0x06
RET_ALLOW, RET_EPERM = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO|EPERM
ARCHES = {  # uname machine -> (AUDIT_ARCH_*, socket, io_uring_setup, x32 bit or 0)
    "x86_64": (0xC000003E, 41, 425, 0x40000000),
    "aarch64": (0xC00000B7, 198, 425, 0),
}
# uname machine -> what else fails with EPERM: what makes a link (symlink, symlinkat, link,
# linkat: a link made in the worktree would change, after the guard looked, where a file tool
# writes), and the kernel keyrings (add_key, request_key, keyctl: shared with the host user's)
REFUSED = {"x86_64": (88, 266, 86, 265, 248, 249, 250), "aarch64": (36, 37, 217, 218, 219)}
AF_UNIX = 1


def seccomp_program(machine: str) -> bytes | None:
    """The filter for this machine's arch, or None where it is not known: socket(AF_UNIX, …),
    io_uring_setup (whose rings can open sockets and make links) and the calls in REFUSED fail
    with EPERM, socketpair stays allowed; a syscall of any other ABI (i386, x32, arm32, where
    socketcall hides the family) fails whatever it is."""
    import struct

    if machine not in ARCHES:
        return None
    arch, socket_nr, io_uring_nr, x32 = ARCHES[machine]
    refused = (io_uring_nr, *REFUSED[machine])
    n = len(refused)
    eperm = 9 + n  # the row that refuses, jumped to from the rows before it
    code = [
        (LD_W_ABS, 0, 0, 4),  # 0: A = arch
        (JEQ_K, 1, 0, arch),  # 1: native ABI? to 3, else 2
        (RET_K, 0, 0, RET_EPERM),  # 2
        (LD_W_ABS, 0, 0, 0),  # 3: A = nr
        (JGE_K, eperm - 5, 0, x32) if x32 else (JEQ_K, 0, 0, 0),  # 4: x32 ABI (else a no-op)
    ]
    code += [(JEQ_K, eperm - 6 - i, 0, nr) for i, nr in enumerate(refused)]  # 5 … 4+n
    code += [
        (JEQ_K, 1, 0, socket_nr),  # 5+n: socket: to 7+n
        (RET_K, 0, 0, RET_ALLOW),  # 6+n
        (LD_W_ABS, 0, 0, 16),  # 7+n: A = low 32 bits of args[0] (little-endian), the family
        (JEQ_K, 0, 1, AF_UNIX),  # 8+n: AF_UNIX: to 9+n, else 10+n
        (RET_K, 0, 0, RET_EPERM),  # 9+n
        (RET_K, 0, 0, RET_ALLOW),  # 10+n
    ]
    return b"".join(struct.pack("=HBBI", *row) for row in code)


# -I keeps the working directory off sys.path (a ctypes.py planted in the worktree must not
# run before the filter is in place); only the plugin is added, after the standard library.
LOADER = "import sys; sys.path.append(sys.argv[1]); from hooks import sandbox"
LOADER += "; sandbox.main(sys.argv[2:])"


def filtered(python: str | None) -> list[str]:
    """The argv prefix that runs a command under the filter: `main()` loads it into its own
    process inside the sandbox (bwrap has set no_new_privs) and execs the command, as
    sandbox-runtime's apply-seccomp does. Nothing is read from a file or a descriptor the
    harness would have to open (Claude Code refuses a redirection from outside the project).
    An import, not this file as a script: the cached bytecode saves a compile per command."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return [python, "-S", "-I", "-c", LOADER, root] if python else []


def load_filter(program: bytes) -> None:
    """prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &sock_fprog) for this process and its
    children; OSError when the kernel refuses."""
    import ctypes

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    code = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.addressof(code))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]
    libc.prctl.argtypes += [ctypes.c_ulong, ctypes.c_ulong]
    no_new_privs, set_seccomp, mode_filter = 38, 22, 2
    if libc.prctl(no_new_privs, 1, None, 0, 0) or libc.prctl(
        set_seccomp, mode_filter, ctypes.addressof(fprog), 0, 0
    ):
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno))


def main(argv: list[str]) -> NoReturn:
    """Inside the sandbox: load the filter, then become the command (never run it unfiltered:
    exit 126 when either fails)."""
    program = seccomp_program(os.uname().machine)
    try:
        if program is None:
            raise OSError(0, f"no filter for {os.uname().machine}")
        load_filter(program)
        os.execv(argv[0], argv)
    except (OSError, IndexError) as e:
        os.write(2, f"planner: the sandbox could not start the command ({e})\n".encode())
    os._exit(126)


def _write_atomically(path: str, data: bytes) -> None:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:
        pass  # only the cache is lost: the next call probes again
