"""What the hooks know of the project: its root, the planning session, and the OS sandbox.

Standard library only (the guard and SessionStart run as `python3 -S` before any environment
exists), so it never imports shared/ or state/. `sandbox_note()` is also what `planner status`
should print (PRODUCT.md §7): "" when a sandbox runs, else the one-line warning.
"""

from __future__ import annotations

import os

PLANNING = frozenset({"discovery", "design", "detailing", "review"})
CLOSED = frozenset({"completed", "cancelled", "failed"})
NO_SANDBOX = "planning is guarded by command parsing only; install bubblewrap"
PROJECT_ENV = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR")
MAX_SESSION_BYTES = 4 << 20
PROBE_VERSION = 2  # part of the probe cache key: a changed probe or sandbox runs again


class DamagedSession(Exception):
    """session.json exists but cannot be read as a session (the path is the message)."""


class Session:
    """The active session of a project: where it lives and what session.json says."""

    __slots__ = ("data", "id", "state_dir", "status", "strict")

    def __init__(self, state_dir: str, data: dict) -> None:
        self.state_dir, self.data = state_dir, data
        self.status = data["status"]
        self.id = data["id"] if isinstance(data.get("id"), str) else os.path.basename(state_dir)
        config = data.get("config")
        self.strict = isinstance(config, dict) and config.get("guard") == "strict"

    @property
    def planning(self) -> bool:
        return self.status in PLANNING

    @property
    def worktree(self) -> str:
        return os.path.join(self.state_dir, "worktree")


def project_dir(hook_cwd, env=None) -> str:
    """Where the harness says the project is: CLAUDE_PROJECT_DIR, GEMINI_PROJECT_DIR, else cwd.

    The shell's own directory is never used when the harness names the project, so `cd`
    elsewhere, into a nested repository or a planted `.git` changes nothing.
    """
    env = os.environ if env is None else env
    for name in PROJECT_ENV:
        value = env.get(name)
        if value and os.path.isabs(value):
            return os.path.realpath(value)
    if isinstance(hook_cwd, str) and os.path.isabs(hook_cwd):
        return os.path.realpath(hook_cwd)
    return os.path.realpath(os.getcwd())


def find_session(start: str, env=None):
    """The session that governs `start`: $PLANNER_STATE_DIR, else the nearest `.planner/ACTIVE`
    above it whose session is still planning (so a nested repository or the session's own
    worktree, which has a `.git` of its own, finds the outer project's session), else the
    nearest active session in any status; None when there is none.
    """
    env = os.environ if env is None else env
    explicit = env.get("PLANNER_STATE_DIR")
    if explicit:
        return read_session(os.path.realpath(os.path.join(start, explicit)))
    first = None
    here = start
    while True:
        home = os.path.join(here, ".planner")
        name = _read_small(os.path.join(home, "ACTIVE"))
        if name and name.strip():
            found = read_session(os.path.realpath(os.path.join(home, name.strip())))
            if found is not None and found.planning:
                return found
            first = first or found
        parent = os.path.dirname(here)
        if parent == here:
            return first
        here = parent


def read_session(state_dir: str):
    path = os.path.join(state_dir, "session.json")
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_SESSION_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError:
        raise DamagedSession(path) from None
    from cli.hookjson import loads

    try:
        data = loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        raise DamagedSession(path) from None
    if len(raw) > MAX_SESSION_BYTES or not isinstance(data, dict):
        raise DamagedSession(path)
    if not isinstance(data.get("status"), str):
        raise DamagedSession(path)
    return Session(state_dir, data)


def _read_small(path: str):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(4096)
    except OSError:
        return None


def status_text(session: Session) -> str:
    """What SessionStart prints: where the session stands and the command to run next."""
    data = session.data
    lines = [
        f"session {session.id}: {session.status}, {data.get('workflow', 'planner')} "
        f"step {data.get('step', 1)}",
        f"task: {data.get('task', '')}",
        f"STATE_DIR={session.state_dir}",
    ]
    context = _read_small(os.path.join(session.state_dir, "context.json"))
    if context and '"questions"' in context:
        open_ids = _open_questions(os.path.join(session.state_dir, "context.json"))
        if open_ids:
            lines.append(f"open questions: {', '.join(open_ids)}")
    qr = data.get("qr")
    for phase, loop in qr.items() if isinstance(qr, dict) else ():
        if isinstance(loop, dict):
            lines.append(f"qr {phase}: iteration {loop.get('iteration')}, {loop.get('state')}")
    next_command = data.get("next_command")
    if isinstance(next_command, str) and next_command:
        nxt = next_command if next_command.startswith(("NEXT", "IF ")) else "NEXT: " + next_command
        lines.append(nxt)
    else:
        lines.append("NEXT: (nothing recorded yet; `plan status` shows where it stands)")
    if session.planning:
        note = sandbox_note()
        lines.append(
            f"guard: {note}"
            if note
            else "guard: planning is read-only; shell commands run in a read-only sandbox "
            f"except the scratch worktree ({session.worktree})"
        )
    return "\n".join(lines)


def _open_questions(path: str) -> list:
    from cli.hookjson import loads

    try:
        with open(path, "rb") as f:
            context = loads(f.read(MAX_SESSION_BYTES).decode("utf-8"))
        questions = context.get("questions") or []
        return [
            q["id"]
            for q in questions
            if isinstance(q, dict) and q.get("answer") is None and not q.get("skipped")
        ]
    except Exception:  # a damaged context is `plan status`'s to report, not this hook's
        return []


# -- the sandbox (layer 2) -------------------------------------------------------------------


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


def wrap(command: str, session: Session, project: str, env=None):
    """The command as it runs inside the sandbox, or None when no sandbox runs here."""
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
