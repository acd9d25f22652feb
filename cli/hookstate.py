"""What the hooks know of the project: its root and the planning session (the OS sandbox is
cli/sandbox.py).

Standard library only (the guard and SessionStart run as `python3 -S` before any environment
exists), so it never imports shared/ or state/.
"""

from __future__ import annotations

import os

PLANNING = frozenset({"discovery", "design", "detailing", "review"})
CLOSED = frozenset({"completed", "cancelled", "failed"})
PROJECT_ENV = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR")
MAX_SESSION_BYTES = 4 << 20


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
    from json import loads

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
    from json import loads

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


def sandbox_note(env=None) -> str:
    """cli/sandbox.py's warning, imported only when a status is printed (not on every hook)."""
    from cli.sandbox import sandbox_note as note

    return note(env)
