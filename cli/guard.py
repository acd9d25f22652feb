"""The read-only guard: a PreToolUse hook that blocks writes while a plan is being made.

Standard library only: it runs under `python3 -S` before every tool call, before any
environment of the package exists.

Hook contracts relied on (Claude Code hooks reference, Gemini CLI hooks reference, 2026):
stdin is one JSON object with `tool_name`, `tool_input`, `cwd`, `permission_mode`; exit 0
with `hookSpecificOutput.permissionDecision` "deny"/"ask" and a reason (Claude Code, Codex,
which has no "ask"), or `{"decision": "deny", "reason": …}` (Gemini CLI BeforeTool). Silence
means "no opinion", so the normal permission rules still apply; an explicit allow would skip
them. Codex's `apply_patch` carries the patch in `tool_input.command` (`*** Update File: p`).
"""

import os
import sys

if __name__ == "__main__" and not __package__:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import time
from json import dumps, loads

from cli.guard_tools import MUTATE, OK, PASS, UNKNOWN
from shared import paths

FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path"}
FILE_TOOLS["NotebookEdit"] = "notebook_path"
GEMINI_TOOLS = {"run_shell_command": "Bash", "write_file": "Write", "replace": "Edit"}
PATCH_TOOLS = ("apply_patch", "ApplyPatch")
PATCH_MARKERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")
DIALECTS = ("claude", "codex", "gemini")
HINT = "Planning is read-only until the plan is approved: "
DENY_HINT = "record this in the plan (plan change add / plan intent add …) instead"
ASK_HINT = "allow it only if it changes nothing, else record it in the plan instead"


class Malformed(Exception):
    """The hook input is not what any supported harness sends."""


class DamagedSession(Exception):
    """session.json exists but cannot be read as a session."""


# -- the hook --------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    dialect = "claude"
    try:
        dialect = parse_dialect(sys.argv[1:] if argv is None else argv)
        stream = sys.stdin.buffer if sys.stdin is not None else None
        output = run(stream.read() if stream is not None else b"", dialect)
    except Exception as e:  # fail closed: a broken guard must not let writes through
        if os.environ.get("PLANNER_DEBUG") == "1":
            import traceback

            traceback.print_exc()
        problem = f"{e.__class__.__name__}: {str(e)[:200]}".replace("\n", " ")
        output = render(
            dialect, "deny", f"The read-only guard failed ({problem}); denied to be safe."
        )
    if output:
        os.write(1, (output + "\n").encode("ascii"))
    return 0


def parse_dialect(argv: list[str]) -> str:
    dialect = "claude"
    for i, arg in enumerate(argv):
        if arg == "--dialect" and i + 1 < len(argv):
            dialect = argv[i + 1]
        elif arg.startswith("--dialect="):
            dialect = arg.split("=", 1)[1]
    if dialect not in DIALECTS:
        raise ValueError(f"unknown --dialect {dialect!r}; use claude, codex or gemini")
    return dialect


def run(raw: bytes, dialect: str = "claude") -> str:
    """The hook's whole job: stdin bytes in, the text for stdout out ("" lets the call pass)."""
    try:
        hook = parse_hook(raw)
    except Malformed as e:
        reason = f"The guard cannot read its input ({e}); denied to be safe."
        return finish(dialect, "deny", reason, planning_dir(os.getcwd()), "?", "")
    tool = GEMINI_TOOLS.get(hook["tool_name"], hook["tool_name"])
    if tool != "Bash" and tool not in FILE_TOOLS and tool not in PATCH_TOOLS:
        return ""
    cwd = hook.get("cwd") or os.getcwd()
    try:
        session = find_session(cwd)
    except DamagedSession as e:
        reason = f"The session file {e} is damaged, so the guard cannot tell whether planning"
        reason += " is read-only; fix or remove it."
        return finish(dialect, "deny", reason, os.path.dirname(str(e)), tool, target_of(hook))
    if session is None:
        return ""
    state_dir, strict = session
    verdict = judge_tool(tool, hook, cwd, state_dir)
    if verdict[0] == OK:
        return ""
    decision = "deny" if verdict[0] == MUTATE or strict else "ask"
    reason = explain(verdict, decision, strict, state_dir)
    return finish(dialect, decision, reason, state_dir, tool, target_of(hook))


def parse_hook(raw: bytes) -> dict:
    if not raw.strip():
        raise Malformed("stdin is empty")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Malformed("stdin is not UTF-8") from None
    try:
        hook = loads(text)
    except (ValueError, RecursionError):
        raise Malformed("stdin is not valid JSON") from None
    if not isinstance(hook, dict):
        raise Malformed("stdin is not a JSON object")
    if not isinstance(hook.get("tool_name"), str) or not hook["tool_name"]:
        raise Malformed("tool_name is missing or not a string")
    for key, kind in (("tool_input", dict), ("cwd", str), ("permission_mode", str)):
        if hook.get(key) is not None and not isinstance(hook[key], kind):
            raise Malformed(f"{key} is not a{'n object' if kind is dict else ' string'}")
    return hook


def target_of(hook: dict) -> str:
    tool_input = hook.get("tool_input") or {}
    for key in ("command", "file_path", "notebook_path"):
        if isinstance(tool_input.get(key), str):
            return tool_input[key]
    return ""


def render(dialect: str, decision: str, reason: str) -> str:
    if dialect == "gemini":
        return dumps({"decision": "deny", "reason": reason})
    if dialect == "codex":
        decision = "deny"
    inner = {"hookEventName": "PreToolUse", "permissionDecision": decision}
    inner["permissionDecisionReason"] = reason
    return dumps({"hookSpecificOutput": inner})


def finish(dialect: str, decision: str, reason: str, state_dir, tool: str, target: str) -> str:
    if dialect != "claude":
        decision = "deny"
    if state_dir:
        audit(state_dir, tool, target, decision, reason)
    return render(dialect, decision, reason)


def audit(state_dir: str, tool: str, target: str, decision: str, reason: str) -> None:
    """One line per block, appended in one write(2) on an O_APPEND fd: atomic, no lock."""
    entry = {"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "event": "blocked"}
    entry.update(by="guard", tool=tool, target=target[:500], decision=decision, reason=reason)
    try:
        fd = os.open(
            os.path.join(state_dir, "audit.jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644
        )
    except OSError:
        return
    try:
        os.write(fd, (dumps(entry) + "\n").encode("ascii"))
    except OSError:
        pass
    finally:
        os.close(fd)


# -- the session -----------------------------------------------------------------------------


def find_session(cwd: str) -> tuple[str, bool] | None:
    """(state dir, strict) while the active session is planning, else None."""
    state_dir = paths.resolve_state_dir(cwd=cwd)
    if not state_dir:
        return None
    session_file = os.path.join(state_dir, "session.json")
    try:
        with open(session_file, "rb") as f:
            raw = f.read()
    except OSError:
        return None
    try:
        session = loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        raise DamagedSession(session_file) from None
    if not isinstance(session, dict) or not isinstance(session.get("status"), str):
        raise DamagedSession(session_file)
    if session["status"] not in paths.PLANNING_STATUSES:
        return None
    config = session.get("config")
    return state_dir, isinstance(config, dict) and config.get("guard") == "strict"


def planning_dir(cwd: str) -> str | None:
    try:
        session = find_session(cwd)
    except DamagedSession:
        return None
    return session[0] if session else None


# -- the policy ------------------------------------------------------------------------------


def judge_tool(tool: str, hook: dict, cwd: str, state_dir: str) -> tuple:
    tool_input = hook.get("tool_input") or {}
    if tool == "Bash":
        command = tool_input.get("command")
        if not isinstance(command, str):
            return (MUTATE, "Bash", "has no command string, so the guard cannot check it")
        from cli.guard_rules import classify_bash

        return classify_bash(command)
    if tool in FILE_TOOLS:
        path = tool_input.get(FILE_TOOLS[tool])
        if not isinstance(path, str) or not path:
            return (MUTATE, tool, "names no file, so the guard cannot check it")
        return judge_write(tool, path, cwd, state_dir, hook.get("permission_mode"))
    if tool in PATCH_TOOLS:
        return judge_patch(tool_input, cwd, state_dir)
    return PASS


def judge_write(tool: str, path: str, cwd: str, state_dir: str, mode) -> tuple:
    try:
        target = os.path.realpath(os.path.join(cwd, path))
        allowed = [os.path.realpath(state_dir)]
        if mode == "plan":
            allowed.append(os.path.realpath(os.path.expanduser("~/.claude/plans")))
    except ValueError:
        return (MUTATE, f"{tool} {path}", "names a path the guard cannot resolve")
    if any(target == root or target.startswith(root.rstrip(os.sep) + os.sep) for root in allowed):
        return PASS
    return (MUTATE, f"{tool} {path}", "writes outside the session directory")


def judge_patch(tool_input: dict, cwd: str, state_dir: str) -> tuple:
    patch = tool_input.get("command") or tool_input.get("patch") or tool_input.get("input")
    lines = patch.splitlines() if isinstance(patch, str) else []
    files = [line.split(": ", 1)[1].strip() for line in lines if line.startswith(PATCH_MARKERS)]
    if not files:
        return (MUTATE, "apply_patch", "names no file the guard can check")
    for path in files:
        verdict = judge_write("apply_patch", path, cwd, state_dir, None)
        if verdict[0] != OK:
            return verdict
    return PASS


def explain(verdict: tuple, decision: str, strict: bool, state_dir: str) -> str:
    kind, part, why = verdict
    part = part if len(part) <= 80 else part[:79] + "…"
    part = part.replace("`", "'").replace("\n", " ")
    first = f"`{part}` {why}" + (" (strict guard)" if kind == UNKNOWN and strict else "")
    hint = ASK_HINT if decision == "ask" else DENY_HINT
    return f"{first}. {HINT}{hint}; the session is {state_dir}."


if __name__ == "__main__":
    main()
    sys.stderr.flush()
    os._exit(0)  # stdout went out through os.write; skipping teardown saves ~1.5 ms per call
