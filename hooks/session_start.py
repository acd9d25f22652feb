"""The SessionStart hook: where the active planner session stands and the command to run next.

Plain text on stdout, which Claude Code and Codex add to the agent's context, so an agent that
starts, resumes or compacts picks up where it was (docs/design.md, "One status");
`--dialect gemini` wraps it in the JSON Gemini CLI requires
(hookSpecificOutput.additionalContext). No session, or a
finished one: nothing is printed. Read-only (timeouts are applied by the next real command,
not here), standard library only (hooks/hookstate.py and state/status_view.py, the same text
`plan status` prints), and it always exits 0: a hook must never break a session. While
planning it also says, true for the client, whether shell commands run in the read-only
sandbox or are guarded by command parsing only.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__" and not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from hooks import hookstate
from state.vocab import CLOSED, Dialect
from state.vocab import SessionStatus as S

HEADER = "planner: an active session (run the NEXT command to continue; `plan status` for more)"
# In review the next act is the person's verdict, which the guard refuses to the agent: the
# header says whose it is and where they give it, not "run the NEXT command".
VERDICT: dict[str, tuple[str, str, str]] = {
    S.REVIEW: ("the plan", "review approve", "review reject --feedback '<what must change>'"),
    S.RESULT_REVIEW: (
        "the result",
        "result accept",
        "result request-changes --feedback '<what must change>'",
    ),
}


def header(status: str) -> str:
    verdict = VERDICT.get(status)
    if verdict is None:
        return HEADER
    what, yes, no = verdict
    return (
        f"planner: an active session awaits the person's verdict on {what}; it is theirs, not"
        f" yours. Ask them to give it in their terminal (`plan {yes}` or `plan {no}`) or on"
        " the review page (`plan review open`); once they have, `planner status` says what"
        " comes next"
    )


def hook_cwd(raw: bytes) -> str | None:
    """The `cwd` field of the hook JSON, else None."""
    try:
        import json

        cwd = json.loads(raw).get("cwd") if raw.strip() else None
    except Exception:  # malformed input still gets the status of the project
        cwd = None
    return cwd if isinstance(cwd, str) and cwd else None


def report(cwd: str | None, dialect: str = Dialect.CLAUDE) -> str:
    """The text to print for the project (see hooks/hookstate.py for how it is found), or ""
    when there is nothing to resume."""
    start = hookstate.project_dir(cwd)
    try:
        session = hookstate.find_session(start, also=(cwd,))
    except hookstate.DamagedSession as e:
        return f"planner: the active session {os.path.dirname(str(e))} cannot be read: {e}"
    if session is None or session.status in CLOSED:
        return ""
    return f"{header(session.status)}\n{hookstate.status_text(session, dialect)}"


def render(text: str, dialect: str) -> str:
    if dialect != Dialect.GEMINI:
        return text
    import json
    import re

    # Gemini CLI turns every < and > of additionalContext into &lt; &gt; (against tag
    # injection), so a placeholder such as '<the user's words>' would reach the model escaped.
    text = re.sub(r"<([^<>\n]*)>", "\u2039\\1\u203a", text)
    context = {"hookEventName": "SessionStart", "additionalContext": text}
    return json.dumps({"hookSpecificOutput": context})


def parse_dialect(args: list[str]) -> str:
    """`--dialect claude|codex|gemini` (or `--dialect=…`); claude and codex read plain text.

    Without the flag, Gemini CLI is recognised by the GEMINI_SESSION_ID it gives every hook:
    hooks/hooks.json is read by Claude Code and by Gemini CLI's extension loader alike, and
    SessionStart has the same name in both, so one command serves the two.
    """
    for i, arg in enumerate(args):
        if arg == "--dialect" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--dialect="):
            return arg.split("=", 1)[1]
    gemini = os.environ.get("GEMINI_SESSION_ID") and os.environ.get("GEMINI_CWD")
    return Dialect.GEMINI if gemini else Dialect.CLAUDE


def launchers_note(dialect: str) -> str:
    """Where the launchers are, when the agent's shell cannot find them: Claude Code puts the
    plugin's bin/ on PATH, Gemini CLI does not (the person links them once) and Codex's
    install links them into a directory that may not be on PATH; "" when `planner` is found."""
    import shutil

    if dialect == Dialect.CLAUDE or shutil.which("planner", path=os.environ.get("PATH", "")):
        return ""
    bin_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin")
    return (
        f"planner: the commands planner, executor and plan are not on PATH: run them as"
        f" {bin_dir}/planner (and so on), and ask the person to run once:"
        f" mkdir -p ~/.local/bin && ln -s {bin_dir}/planner {bin_dir}/executor {bin_dir}/plan"
        " ~/.local/bin/"
    )


def main(argv: list[str] | None = None) -> int:
    dialect = parse_dialect(sys.argv[1:] if argv is None else argv)
    try:
        raw = sys.stdin.buffer.read() if sys.stdin is not None else b""
        text = report(hook_cwd(raw), dialect)
        note = launchers_note(dialect)
        text = f"{text}\n{note}" if text and note else text or note
    except Exception as e:
        if os.environ.get("PLANNER_DEBUG") == "1":
            raise
        text = f"planner: the session status is unavailable ({type(e).__name__}: {e})"
    if text:
        sys.stdout.write(render(text, dialect) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
