"""The OS sandbox (layer 2 of the guard) that Bash commands run in while a plan is made:
bubblewrap on Linux, sandbox-exec on macOS; `wrap()` turns a command into its wrapped form.

Standard library only (it runs in the guard hook under `python3 -S -I`). `sandbox_note()` is
what `planner status` and SessionStart print: "" when a sandbox runs, else the warning.
"""

from __future__ import annotations

import os

NO_SANDBOX = "planning is guarded by command parsing only; install bubblewrap"
PROBE_VERSION = 2  # part of the probe cache key: a changed probe or sandbox runs again


def find_program(name: str, env=None):
    """The absolute path of `name` on PATH (only absolute PATH entries count), else None."""
    env = os.environ if env is None else env
    for folder in (env.get("PATH") or "/usr/bin:/bin").split(os.pathsep):
        if folder.startswith("/"):
            path = os.path.join(folder, name)
            if os.access(path, os.X_OK) and not os.path.isdir(path):
                return path
    return None


def sandbox_program(env=None):
    """("bwrap", path) or ("sandbox-exec", path) when that sandbox runs here, else None.

    The bwrap probe (one run of `bwrap … true`, ~30 ms) is cached per bwrap binary in the
    user's cache dir, which the sandbox itself keeps read-only.
    """
    import sys

    env = os.environ if env is None else env
    if env.get("PLANNER_SANDBOX") == "off":
        return None
    if sys.platform == "darwin":
        path = "/usr/bin/sandbox-exec"
        return ("sandbox-exec", path) if os.path.exists(path) else None
    path = find_program("bwrap", env)
    if path is None:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    key = f"v{PROBE_VERSION} {path} {info.st_mtime_ns} {info.st_size} {os.getuid()}"
    cache = os.path.join(_cache_dir(env), "sandbox-probe")
    cached = _read_small(cache)
    if cached and cached.rsplit(" ", 1)[0] == key:
        return ("bwrap", path) if cached.endswith(" ok") else None
    ok = probe_bwrap(path)
    try:
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        tmp = f"{cache}.{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(f"{key} {'ok' if ok else 'fail'}")
        os.replace(tmp, cache)
    except OSError:
        pass
    return ("bwrap", path) if ok else None


def _cache_dir(env) -> str:
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "planner")


def probe_bwrap(path: str) -> bool:
    """Whether bwrap can build the sandbox here and `/` really is read-only inside it."""
    import subprocess

    script = "touch /.planner-probe 2>/dev/null && exit 3; exit 0"
    argv = [path, *bwrap_options([], "/"), "/bin/sh", "-c", script]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def sandbox_note(env=None) -> str:
    """ "" when shell commands are sandboxed while planning, else the warning to show."""
    return "" if sandbox_program(env) else NO_SANDBOX


def temp_dirs(env) -> list:
    found = []
    for path in ("/tmp", "/var/tmp", "/dev/shm", env.get("TMPDIR") or ""):
        if path and os.path.isdir(path):
            real = os.path.realpath(path)
            if real not in found:
                found.append(real)
    return found


def guarded_dirs(env) -> list:
    """Places outside the project that the sandbox must keep read-only even when they lie
    under a temp dir: what PATH runs (a planted `plan` there would run unwrapped next time),
    HOME and its config (git reads ~/.gitconfig for the product's own commands), the plugin."""
    found = [p for p in (env.get("PATH") or "").split(os.pathsep) if p.startswith("/")]
    for name in ("HOME", "XDG_CONFIG_HOME", "CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA"):
        if (env.get(name) or "").startswith("/"):
            found.append(env[name])
    temps = [t + os.sep for t in temp_dirs(env)]
    return [os.path.realpath(p) for p in found if os.path.realpath(p).startswith(tuple(temps))]


def bwrap_options(writable: list, project: str, read_only: tuple = ()) -> list:
    """Everything read-only, temp dirs writable, then the project (and the session) read-only
    again in case they live under a temp dir, then the worktree writable; no capabilities,
    an own PID namespace (no ptrace of processes outside), an own network namespace (no
    loopback to this machine: the review page's approval, `plan review open`, stays out of
    the agent's reach), a new terminal session (no TIOCSTI into the person's terminal), and
    nothing left running when the command ends.
    """
    options = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for path in temp_dirs(os.environ):
        options += ["--bind", path, path]
    for path in (project, *read_only, *guarded_dirs(os.environ)):
        if path and path != "/" and os.path.isdir(path):
            options += ["--ro-bind", path, path]
    for path in writable:
        if os.path.isdir(path):
            options += ["--bind", path, path]
            dot_git = os.path.join(path, ".git")
            if os.path.exists(dot_git):  # where git finds its config: never rewritten here
                options += ["--ro-bind", dot_git, dot_git]
    options += ["--unshare-pid", "--unshare-net", "--new-session", "--die-with-parent"]
    options += ["--cap-drop", "ALL"]
    return options


def quote(word: str) -> str:
    if word and all(c.isalnum() or c in "@%+=:,./-_" for c in word):
        return word
    return "'" + word.replace("'", "'\\''") + "'"


def wrap(command: str, session, project: str, env=None):
    """The command as it runs inside the sandbox, or None when no sandbox runs here (`session`
    is a cli.hookstate.Session)."""
    env = os.environ if env is None else env
    program = sandbox_program(env)
    if program is None:
        return None
    shell = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
    worktree = os.path.realpath(session.worktree)
    note = (
        f"planner: this command ran in the planning sandbox (read-only except {worktree}"
        " and temp dirs) and failed; if it meant to change the project, record the change"
        " in the plan instead"
    )
    note = "".join(c for c in note if c not in '"$`\\!')
    trap = f'rc=$?; [ $rc = 0 ] || echo "{note}" >&2'
    script = f"trap {quote(trap)} EXIT; {command}"
    if program[0] == "sandbox-exec":
        argv = [program[1], "-p", macos_profile([worktree]), shell, "-c", script]
    else:
        state = os.path.realpath(session.state_dir)
        options = bwrap_options([worktree], project, (state, os.path.dirname(state)))
        argv = [program[1], *options, "--", shell, "-c", script]
    return " ".join(map(quote, argv))


def macos_profile(writable: list) -> str:
    """A sandbox-exec profile: everything allowed but file writes outside writable and temp.
    Untested here (no macOS on these machines); kept in the shape Apple's own profiles use.
    """
    allow = " ".join(f'(subpath "{os.path.realpath(p)}")' for p in writable)
    return (
        "(version 1)(allow default)(deny file-write*)(deny network*)"
        f'(allow file-write* {allow} (subpath "/private/tmp") (subpath "/private/var/folders")'
        ' (literal "/dev/null") (literal "/dev/tty") (regex #"^/dev/fd/"))'
    )


def _read_small(path: str):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(4096)
    except OSError:
        return None
