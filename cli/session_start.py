"""The SessionStart hook: where the active planner session stands and the command to run next.

Plain text on stdout, which Claude Code and Codex add to the agent's context, so an agent that
starts, resumes or compacts picks up where it was (PRODUCT.md §7); `--dialect gemini` wraps it
in the JSON Gemini CLI requires (hookSpecificOutput.additionalContext). No session, or a
finished one: nothing is printed. Read-only (timeouts are applied by the next real command,
not here), standard library only, and it always exits 0: a hook must never break a session.
"""

import os
import sys

if __name__ == "__main__" and not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CLOSED = frozenset({"completed", "cancelled", "failed"})
HEADER = "planner: an active session (run the NEXT command to continue; `plan status` for more)"


def hook_cwd(raw: bytes) -> str:
    """The `cwd` field of the hook JSON, else the process's own directory."""
    try:
        import json

        cwd = json.loads(raw).get("cwd") if raw.strip() else None
    except Exception:  # malformed input still gets the status of the process's directory
        cwd = None
    return cwd if isinstance(cwd, str) and cwd else os.getcwd()


def report(cwd: str) -> str:
    """The text to print for the project that holds cwd ("" when there is nothing to resume)."""
    from shared import paths

    state_dir = paths.resolve_state_dir(cwd=cwd)
    if not state_dir or not os.path.isfile(os.path.join(state_dir, "session.json")):
        return ""
    from shared.status import session_status, status_text
    from state.store import Store

    try:
        summary = session_status(Store(state_dir))
    except Exception as e:  # a damaged session is worth saying, never worth a traceback
        problem = getattr(e, "message", None) or f"{type(e).__name__}: {e}"
        return f"planner: the active session {state_dir} cannot be read: {problem}"
    if summary["status"] in CLOSED:
        return ""
    return f"{HEADER}\n{status_text(summary)}"


def render(text: str, dialect: str) -> str:
    if dialect != "gemini":
        return text
    import json

    context = {"hookEventName": "SessionStart", "additionalContext": text}
    return json.dumps({"hookSpecificOutput": context})


def parse_dialect(args: list[str]) -> str:
    """`--dialect claude|codex|gemini` (or `--dialect=…`); claude and codex read plain text."""
    for i, arg in enumerate(args):
        if arg == "--dialect" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--dialect="):
            return arg.split("=", 1)[1]
    return "claude"


def main(argv: list[str] | None = None) -> int:
    dialect = parse_dialect(sys.argv[1:] if argv is None else argv)
    try:
        raw = sys.stdin.buffer.read() if sys.stdin is not None else b""
        text = report(hook_cwd(raw))
    except Exception as e:
        if os.environ.get("PLANNER_DEBUG") == "1":
            raise
        text = f"planner: the session status is unavailable ({type(e).__name__}: {e})"
    if text:
        sys.stdout.write(render(text, dialect) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
