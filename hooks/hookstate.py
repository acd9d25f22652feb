"""What the hooks know of the project: its root, the planning session and its status text
(the OS sandbox is hooks/sandbox.py).

Standard library only (the guard and SessionStart run as `python3 -S` before any environment
exists): of the package it imports only state/vocab_core.py and state/status_view.py, themselves
standard library only.
"""

from __future__ import annotations

import os

from state.vocab_core import SETTLED, Dialect

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from state.status_view import Status

# SETTLED: statuses known not to be planning; any other (a new one, a typo, "bogus") guards as
# planning.
PROJECT_ENV = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR")
MAX_SESSION_BYTES = 4 << 20
# Left in the session's directory by the guard's first call for it (the directory is made
# with the session, so a trace there was left after it was created); outside the worktree and
# the scratch dir, the only places of the session the agent can write while planning.
TRACE = "guard.heard"


class DamagedSession(Exception):
    """session.json (or .planner/ACTIVE) exists but cannot be read (the path is the message)."""


class Session:
    """The active session of a project: where it lives and what session.json says."""

    __slots__ = ("data", "id", "state_dir", "status", "strict")

    def __init__(self, state_dir: str, data: dict[str, object]) -> None:
        """`data` is session.json as read, unvalidated: read_session checked its status."""
        self.state_dir, self.data = state_dir, data
        self.status = str(data["status"])
        sid = data.get("id")
        self.id = sid if isinstance(sid, str) else os.path.basename(state_dir)
        config = data.get("config")
        self.strict = isinstance(config, dict) and config.get("guard") == "strict"

    @property
    def planning(self) -> bool:
        return self.status not in SETTLED

    @property
    def worktree(self) -> str:
        return os.path.join(self.state_dir, "worktree")

    @property
    def project(self) -> str:
        """The project that holds the session's store (`<project>/.planner/<id>`), whatever
        directory the harness names: what the sandbox keeps read-only."""
        return os.path.dirname(os.path.dirname(self.state_dir))


def leave_trace(session: Session) -> None:
    """Mark that the guard has been heard for `session` (one stat once it exists)."""
    path = os.path.join(session.state_dir, TRACE)
    if os.path.exists(path):
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError:
        return  # no trace: the status then says the guard is not heard, the safe side
    os.close(fd)


def heard(state_dir: str) -> bool:
    """Whether the guard has been called for the session since it was created."""
    return os.path.exists(os.path.join(state_dir, TRACE))


def project_dir(hook_cwd: object, env: Mapping[str, str] | None = None) -> str:
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


def find_session(
    start: str, env: Mapping[str, str] | None = None, also: Iterable[object] = ()
) -> Session | None:
    """The session that governs `start`: the first planning one among $PLANNER_STATE_DIR and
    the `.planner/ACTIVE` files above `start`, then above each of `also` (the hook's cwd);
    else the first session found in any status; None when there is none.

    Configuration only ever adds protection: a stale or missing PLANNER_STATE_DIR, or a
    project dir that is `/` or a subdirectory, still finds the planning session that ACTIVE
    names; a session.json or ACTIVE that cannot be read raises DamagedSession (fail closed).
    """
    env = os.environ if env is None else env
    first = None
    explicit = env.get("PLANNER_STATE_DIR")
    if explicit:
        first = read_session(os.path.realpath(os.path.join(start, explicit)))
        if first is not None and first.planning:
            return first
    for origin in (start, *also):
        if not isinstance(origin, str) or not os.path.isabs(origin):
            continue
        here = os.path.realpath(origin)
        while True:
            found = read_active(os.path.join(here, ".planner"))
            if found is not None and found.planning:
                return found
            first = first or found
            parent = os.path.dirname(here)
            if parent == here:
                break
            here = parent
    return first


def read_active(home: str) -> Session | None:
    """The session `<home>/ACTIVE` names, or None when there is no ACTIVE or it names nothing."""
    path = os.path.join(home, "ACTIVE")
    try:
        with open(path, "rb") as f:
            raw = f.read(4096)
    except FileNotFoundError:
        return None
    except OSError:
        if os.path.lexists(path):
            raise DamagedSession(path) from None
        return None
    try:
        name = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise DamagedSession(path) from None
    if not name:
        return None
    return read_session(os.path.realpath(os.path.join(home, name)))


def read_session(state_dir: str) -> Session | None:
    path = os.path.join(state_dir, "session.json")
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_SESSION_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError:
        raise DamagedSession(path) from None
    from json import loads  # only when there is a session to read (it imports re)

    try:
        data = loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        raise DamagedSession(path) from None
    if len(raw) > MAX_SESSION_BYTES or not isinstance(data, dict):
        raise DamagedSession(path)
    if not isinstance(data.get("status"), str):
        raise DamagedSession(path)
    return Session(state_dir, data)


def status_text(session: Session, dialect: str = Dialect.CLAUDE) -> str:
    """What SessionStart prints: the same text as `plan status` (state/status_view.py)."""
    from json import loads

    from state.status_view import summary, text

    try:
        with open(os.path.join(session.state_dir, "context.json"), "rb") as f:
            raw = f.read(MAX_SESSION_BYTES)
    except OSError:
        raw = b""
    try:
        context = loads(raw.decode("utf-8")) if raw else None
    except (ValueError, RecursionError):  # a damaged context is `plan status`'s to report
        context = None
    return text(with_guard(summary(session.data, session.state_dir, context), dialect))


CODEX_GUARD = "planning is read-only, guarded by command parsing only (Codex runs no rewritten"
CODEX_GUARD += " command, so nothing runs in a sandbox): shell commands that write, or that the"
CODEX_GUARD += " guard cannot judge, are denied, in the scratch worktree too; edit files only"
CODEX_GUARD += " with apply_patch, in the scratch worktree"


def client_dialect() -> Dialect:
    """The client a command runs under, from what it sets in its shells' environment: Codex
    gives every command CODEX_THREAD_ID (and runs no rewritten command, so its guard line
    differs); Claude Code and Gemini CLI share the sandboxed one."""
    codex = os.environ.get("CODEX_THREAD_ID") or os.environ.get("CODEX_SESSION_ID")
    return Dialect.CODEX if codex else Dialect.CLAUDE


NOT_GUARDED = "planning is NOT guarded: no call of planner's guard has been heard for this"
NOT_GUARDED += " session, so nothing stops a write to the project; "
UNHEARD = {
    Dialect.CODEX: "Codex runs planner's hooks only once the person trusts them: run /hooks"
    " in Codex and trust planner's hooks, then restart the session",
    Dialect.CLAUDE: "planner's hooks are not running: the plugin (Claude Code: /plugin) or"
    " the extension (Gemini CLI: gemini extensions list) must be installed and enabled, then"
    " restart the session",
}


def with_guard(summary: Status, dialect: str | None = None) -> Status:
    """The status record with the guard's line while planning, true for the client: NOT
    guarded where no guard call has been heard for the session, else the sandbox where
    commands run in it, else what parsing alone does. Without a dialect (`plan status`), the
    client the command runs under."""
    if summary["status"] in SETTLED:
        return summary
    dialect = dialect or client_dialect()
    if not heard(summary["state_dir"]):
        what = UNHEARD[Dialect.CODEX if dialect == Dialect.CODEX else Dialect.CLAUDE]
        return {**summary, "guard": NOT_GUARDED + what}
    if dialect == Dialect.CODEX:
        return {**summary, "guard": f"{CODEX_GUARD} ({summary['state_dir']}/worktree)"}
    from hooks.sandbox import sandbox_note  # only when a status is printed, not on every hook

    note = sandbox_note()
    if note:
        return {**summary, "guard": note}
    places = f"{summary['state_dir']}/worktree and {summary['state_dir']}/scratch"
    guard = f"planning is read-only; shell commands run in a read-only sandbox except {places}"
    return {**summary, "guard": guard + " (/tmp is private to each command)"}
