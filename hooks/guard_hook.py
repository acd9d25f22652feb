"""The read-only guard: a PreToolUse hook that keeps the project unchanged while a plan is made.

Its entry is hooks/guard.py. Standard library only: it runs under `python3 -S` before every tool
call, before any environment of the package exists (the project and session come from
hooks/hookstate.py, the sandbox from hooks/sandbox.py).

What it allows, asks, denies or wraps while the project's active session is planning:
docs/design.md, "The guard". Every deny, ask and sandboxed call is written to the session's
audit.jsonl.

Hook contracts relied on (observed in the real clients, tests/e2e): stdin is one JSON object with
`tool_name`, `tool_input`, `cwd`; Claude Code and Codex read
`hookSpecificOutput.permissionDecision` "deny"/"ask" with a reason (Codex has no ask) and
`hookSpecificOutput.updatedInput` without a decision (Claude Code runs the rewritten
call through its normal permission flow; Codex 0.169 ignores it and runs the original, so
the codex dialect never wraps: layer 1 alone, unknown commands denied); Gemini CLI reads
`{"decision": "deny", "reason"}` and `hookSpecificOutput.tool_input`. Codex's `apply_patch`
carries the patch in `tool_input.command`.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from json import dumps, loads

from hooks import hookstate
from hooks.guard_tools import MUTATE, OK, PASS, UNKNOWN, Hint, Verdict, names
from hooks.shell_lex import TooComplex, check_clock, start_clock, stop_clock
from state.vocab_core import Dialect, GuardDecision

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import TypedDict

    from hooks.hookstate import Session

    Env = Mapping[str, str]

    class HookInput(TypedDict, total=False):
        """The hook's stdin as parse_hook checked it; each tool's input is the tool's own."""

        tool_name: str
        tool_input: dict[str, object]
        cwd: str
        permission_mode: object


FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path"}
FILE_TOOLS["NotebookEdit"] = "notebook_path"
GEMINI_TOOLS = {"run_shell_command": "Bash", "write_file": "Write", "replace": "Edit"}
SHELL_TOOLS = ("Bash", "shell", "exec_command", "local_shell")
PATCH_TOOLS = ("apply_patch", "ApplyPatch")
PATCH_MARKERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")
# Tools known to change no file, by name, in Claude Code, Codex and Gemini CLI. Every other
# tool is denied while planning (hooks.json matches every tool): a new tool is unknown until
# someone reads what it does and adds it here.
READ_ONLY_TOOLS = names(
    """Read Glob Grep LS NotebookRead WebFetch WebSearch TodoWrite TodoRead Task Agent
    TaskOutput BashOutput KillShell KillBash ExitPlanMode EnterPlanMode Skill SlashCommand
    AskUserQuestion ListMcpResourcesTool ReadMcpResourceTool ToolSearch
    read_file read_many_files list_directory glob search_file_content grep google_web_search
    web_fetch write_todos view_image update_plan web_search activate_skill"""
)
DIALECTS = frozenset(Dialect)
OWN_MCP = ("mcp__planner__", "mcp__plugin_planner_planner__")  # the read-only companion
HINT = "Planning is read-only until the plan is approved: "
DENY_HINT = "record this in the plan (plan change add / plan intent add …) instead"
ASK_HINT = "allow it only if it changes nothing, else record it in the plan instead"
# Where there is no prompt (Codex, Gemini CLI) an "ask" is a denial the model reads: what to do.
MODEL_ASK_HINT = "the guard cannot tell whether this command writes, so it is denied here;"
MODEL_ASK_HINT += " read with plain read-only commands (cat, grep, ls, git show, …) or the read"
MODEL_ASK_HINT += " tools, and record what should change in the plan (plan change add / plan"
MODEL_ASK_HINT += " intent add …)"
WRITE_HINT = "edit files in the scratch worktree (`plan worktree` prints it), then"
WRITE_HINT += " `plan change capture`"
HUMAN_HINT = "The person runs it themselves, in their terminal or on the review page"
HUMAN_HINT += " (`plan review open`), not the agent: ask them to"
UNKNOWN_TOOL_HINT = "read with Read/Grep/Glob, run shell commands with Bash (judged, then"
UNKNOWN_TOOL_HINT += " sandboxed), edit in the scratch worktree (`plan worktree`); after"
UNKNOWN_TOOL_HINT += " approval every tool runs"
# The same, in the tools and the truth of the clients that name them otherwise.
UNKNOWN_TOOL_HINTS: dict[str, str] = {
    Dialect.CODEX: "read with shell commands that change nothing (cat, grep, ls, git show, …:"
    " judged, never sandboxed), edit with apply_patch in the scratch worktree (`plan"
    " worktree`); after approval every tool runs",
    Dialect.GEMINI: "read with read_file/glob/search_file_content, run shell commands with"
    " run_shell_command (judged, then sandboxed), edit with write_file/replace in the scratch"
    " worktree (`plan worktree`); after approval every tool runs",
}
MAX_WRAPPED = 100_000  # bytes of command that still fit one argv word of the sandbox wrapper
# Seconds the guard may spend judging one call (CPU; wall-clock on an idle machine, at most 4x
# on a busy one); past them it denies "too complex to judge" (docs/design.md, "The guard":
# bounded, fail-closed time), far inside every client's hook timeout.
BUDGET = 0.5
MAX_PATH = 4096  # Linux's PATH_MAX: a longer path cannot be written, only slow to resolve
LONG_PATH = "names a path longer than any file system takes, so the guard does not resolve it"
TOO_COMPLEX = "is too complex to judge in time, so it is denied; split it into smaller"
TOO_COMPLEX += " commands, or put it in a script in the scratch worktree and run that"
ASK, DENY, SANDBOXED = GuardDecision.ASK, GuardDecision.DENY, GuardDecision.SANDBOXED


class Malformed(Exception):
    """The hook input is not what any supported harness sends."""


# -- the hook --------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    dialect: str = Dialect.CLAUDE
    try:
        dialect = parse_dialect(sys.argv[1:] if argv is None else argv)
        output = run(sys.stdin.buffer.read() if sys.stdin is not None else b"", dialect)
    except Exception as e:  # fail closed: a broken guard must not let writes through
        if os.environ.get("PLANNER_DEBUG") == "1":
            import traceback

            traceback.print_exc()
        problem = f"{e.__class__.__name__}: {str(e)[:200]}".replace("\n", " ")
        output = render(
            dialect, DENY, f"The read-only guard failed ({problem}); denied to be safe."
        )
    if output:
        os.write(1, (output + "\n").encode("ascii"))
    return 0


def parse_dialect(argv: list[str]) -> Dialect:
    dialect: str = Dialect.CLAUDE
    for i, arg in enumerate(argv):
        if arg == "--dialect" and i + 1 < len(argv):
            dialect = argv[i + 1]
        elif arg.startswith("--dialect="):
            dialect = arg.split("=", 1)[1]
    if dialect not in DIALECTS:
        raise ValueError(f"unknown --dialect {dialect!r}; use claude, codex or gemini")
    return Dialect(dialect)


def run(
    raw: bytes, dialect: str = Dialect.CLAUDE, env: Env | None = None, budget: float = BUDGET
) -> str:
    """The hook's whole job: stdin bytes in, the text for stdout out ("" lets the call pass).
    Judging a tool call that takes over `budget` seconds denies it as too complex."""
    start_clock(budget)
    try:
        return _run(raw, dialect, os.environ if env is None else env)
    finally:
        stop_clock()


def _run(raw: bytes, dialect: str, env: Env) -> str:
    try:
        hook = parse_hook(raw)
    except Malformed as e:
        reason = f"The guard cannot read its input ({e}); denied to be safe."
        return finish(dialect, DENY, reason, planning_session(None, env), "?", "")
    name: str = hook["tool_name"]
    if name in READ_ONLY_TOOLS or name.startswith(OWN_MCP):
        return ""
    tool = GEMINI_TOOLS.get(name, "Bash" if name in SHELL_TOOLS else name)
    project = hookstate.project_dir(hook.get("cwd"), env)
    try:
        session = hookstate.find_session(project, env, also=(hook.get("cwd"),))
    except hookstate.DamagedSession as e:
        reason = f"The session file {e} is damaged, so the guard cannot tell whether planning"
        reason += " is read-only; fix or remove it."
        return render(dialect, DENY, reason)
    if session is None or not session.planning:
        return ""
    hookstate.leave_trace(session)  # `planner status` then says the guard is heard
    cwd = hook.get("cwd", project)
    project = session.project  # what holds the store, whatever directory the harness named
    if dialect == Dialect.CODEX:
        env = {**env, "PLANNER_SANDBOX": "off"}  # Codex ignores updatedInput: layer 1 alone
    try:
        verdict = judge_tool(tool, hook, cwd, session, project, env, dialect)
    except TooComplex:
        verdict = Verdict(MUTATE, target_of(hook)[:80], TOO_COMPLEX, DENY, Hint.WRITE)
    if verdict.decision is SANDBOXED:
        audit(session, tool, target_of(hook), SANDBOXED, "run in the read-only sandbox")
        return render_wrapped(dialect, hook, verdict.wrapped)
    if verdict.level == OK:
        return ""
    decision = verdict.decision or (DENY if verdict.level == MUTATE or session.strict else ASK)
    reason = explain(verdict, decision, session, dialect)
    return finish(dialect, decision, reason, session, tool, target_of(hook))


def parse_hook(raw: bytes) -> HookInput:
    if not raw.strip():
        raise Malformed("stdin is empty")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise Malformed("stdin is not UTF-8") from None
    try:
        data = loads(text)
    except (ValueError, RecursionError):
        raise Malformed("stdin is not valid JSON") from None
    if not isinstance(data, dict):
        raise Malformed("stdin is not a JSON object")
    if not isinstance(data.get("tool_name"), str) or not data["tool_name"]:
        raise Malformed("tool_name is missing or not a string")
    for key, kind in (("tool_input", dict), ("cwd", str)):
        if data.get(key) is not None and not isinstance(data[key], kind):
            raise Malformed(f"{key} is not a{'n object' if kind is dict else ' string'}")
    hook: HookInput = {"tool_name": data["tool_name"], "tool_input": data.get("tool_input") or {}}
    if data.get("cwd") is not None:
        hook["cwd"] = data["cwd"]
    if "permission_mode" in data:
        hook["permission_mode"] = data["permission_mode"]
    return hook


def target_of(hook: HookInput) -> str:
    tool_input = hook.get("tool_input", {})
    for key in ("command", "file_path", "notebook_path", "cmd"):
        target = tool_input.get(key)
        if isinstance(target, str):
            return target
    return ""


def render(dialect: str, decision: str, reason: str) -> str:
    if dialect == Dialect.GEMINI:
        return dumps({"decision": DENY, "reason": reason})
    if dialect == Dialect.CODEX:
        # Codex shows "Command blocked by PreToolUse hook: REASON. Command: CMD": its own period.
        decision, reason = DENY, reason.rstrip(". ")
    inner = {"hookEventName": "PreToolUse", "permissionDecision": decision}
    inner["permissionDecisionReason"] = reason
    return dumps({"hookSpecificOutput": inner})


def render_wrapped(dialect: str, hook: HookInput, command: str) -> str:
    """The call with its command replaced by the sandboxed one and no decision, so the
    harness's own permission rules still apply to it."""
    tool_input = dict(hook.get("tool_input", {}))
    key = "cmd" if "cmd" in tool_input and "command" not in tool_input else "command"
    tool_input[key] = command
    gemini = dialect == Dialect.GEMINI
    event, field = ("BeforeTool", "tool_input") if gemini else ("PreToolUse", "updatedInput")
    return dumps({"hookSpecificOutput": {"hookEventName": event, field: tool_input}})


def finish(
    dialect: str, decision: str, reason: str, session: Session | None, tool: str, target: str
) -> str:
    if dialect != Dialect.CLAUDE:
        decision = DENY
    if session is not None:
        audit(session, tool, target, decision, reason)
    return render(dialect, decision, reason)


def audit(session: Session, tool: str, target: str, decision: str, reason: str) -> None:
    """One line per call, appended in one write(2) on an O_APPEND fd: atomic, no lock."""
    event = "sandboxed" if decision == SANDBOXED else "blocked"
    entry = {"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "event": event}
    entry.update(by="guard", session=session.id, tool=tool, target=target[:500])
    entry.update(decision=decision, reason=reason)
    try:
        path = os.path.join(session.state_dir, "audit.jsonl")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError:
        return
    try:
        os.write(fd, (dumps(entry) + "\n").encode("ascii"))
    except OSError:
        pass
    finally:
        os.close(fd)


def planning_session(cwd: object, env: Env) -> Session | None:
    try:
        session = hookstate.find_session(hookstate.project_dir(cwd, env), env)
    except hookstate.DamagedSession:
        return None  # the deny goes out anyway; only its audit line has nowhere to go
    return session if session is not None and session.planning else None


# -- the policy ------------------------------------------------------------------------------


def judge_tool(
    tool: str,
    hook: HookInput,
    cwd: str,
    session: Session,
    project: str,
    env: Env,
    dialect: str = Dialect.CLAUDE,
) -> Verdict:
    tool_input = hook.get("tool_input", {})
    if tool == "Bash":
        command = tool_input.get("command", tool_input.get("cmd"))
        if not isinstance(command, str):
            return Verdict(MUTATE, "Bash", "has no command string, so the guard cannot check it")
        # a call's own directory (Gemini's dir_path, a workdir), where the input carries it
        workdir = tool_input.get("dir_path") or tool_input.get("workdir")
        workdirs = (workdir,) if isinstance(workdir, str) and workdir else ()
        anywhere = dialect == Dialect.CODEX
        return judge_bash(command, session, cwd, project, env, workdirs, anywhere)
    if tool in FILE_TOOLS:
        path = tool_input.get(FILE_TOOLS[tool])
        if not isinstance(path, str) or not path:
            return Verdict(MUTATE, tool, "names no file, so the guard cannot check it")
        if len(path) > MAX_PATH:
            return Verdict(MUTATE, tool, LONG_PATH, hint=Hint.WRITE)
        return judge_write(tool, path, cwd, session, hook.get("permission_mode"))
    if tool in PATCH_TOOLS:
        return judge_patch(tool_input, cwd, session)
    why = "is not a tool the guard knows to change nothing, so it is denied while planning"
    return Verdict(MUTATE, tool, why, DENY, Hint.TOOLS)


def judge_bash(
    command: str,
    session: Session,
    cwd: str,
    project: str,
    env: Env,
    workdirs: tuple[str, ...] = (),
    anywhere: bool = False,
) -> Verdict:
    """A Bash call: the product's own chain, or layer 1 then the sandbox. `workdirs` are
    directories the call says it runs in, beside `cwd`; with `anywhere` (codex: its hook input
    may not show a call's workdir, observed in docs/design.md) git is judged as if it may run
    in any directory of the worktree and the scratch dir."""
    if "plan" in command or "executor" in command:
        from hooks.guard_own import judge_own

        own = judge_own(command, session, cwd, env)
        if own is not None:
            return own
    if len(command) > MAX_WRAPPED // 4 and len(command.encode("utf-8", "replace")) > MAX_WRAPPED:
        why = "is too long to judge or to run in the sandbox (over 100 KB); put it in a script"
        why += " in the scratch worktree and run that"
        return Verdict(MUTATE, command[:60], why, DENY, Hint.WRITE)
    from hooks.guard_places import Where
    from hooks.guard_rules import classify_bash
    from hooks.sandbox import sandbox_program, scratch_dir, wrap

    # the project is the one holding the session, never one found from the hook's cwd (a
    # repository planted in the worktree would be "the project" then)
    where = Where(cwd, project, session.worktree, env, lambda: sandbox_program(env) is not None)
    where.scratch = scratch_dir(session) + os.sep  # written there, like temp, in the sandbox
    where.dirs.update(os.path.realpath(os.path.join(cwd, w)) for w in workdirs)
    if anywhere:
        where.anywhere = (session.worktree, scratch_dir(session))
    verdict = classify_bash(command, where=where)
    if verdict.level == MUTATE or (verdict.level == UNKNOWN and session.strict):
        return verdict
    wrapped = wrap(command, session, project, env)
    if not wrapped:
        return verdict
    return Verdict(verdict.level, verdict.part, verdict.why, SANDBOXED, wrapped=wrapped)


def judge_write(tool: str, path: str, cwd: str, session: Session, mode: object = None) -> Verdict:
    """File tools write only inside the session's scratch worktree (never its state), judged
    on the path as given, never resolved first: the client opens that path after the guard
    answers, so a link on it could point elsewhere by then. No `..`, and no link anywhere
    from the worktree down (nor can one appear: docs/design.md, "The guard")."""
    part = f"{tool} {path}"
    try:
        given = os.path.join(cwd, os.path.expanduser(path))
    except (ValueError, TypeError):
        return Verdict(MUTATE, part, "names a path the guard cannot read")
    if "\0" in given or os.pardir in given.split(os.sep):
        why = "names `..` (or a NUL): file tools are judged on the path as given, so name the"
        why += " file by its plain absolute path in the worktree"
        return Verdict(MUTATE, part, why, hint=Hint.WRITE)
    target = os.path.normpath(given)
    inside = _inside(target, session.worktree)
    if inside is not None and os.path.isdir(inside[0]):
        from hooks.guard_places import git_files

        # `.git`, and a bare repository's layout, alike; then no link on the path
        why = git_files(inside[0], target) or _not_plain(*inside)
        return PASS if not why else Verdict(MUTATE, part, why, hint=Hint.WRITE)
    if mode == "plan" and target.endswith(".md"):
        plans = _inside(target, os.path.expanduser("~/.claude/plans"))
        if plans is not None and not _not_plain(*plans):
            return PASS  # Claude Code's own plan mode writes its plan file there
    why = "writes outside the session's scratch worktree"
    return Verdict(MUTATE, part, why, hint=Hint.WRITE)


def _inside(target: str, folder: str) -> tuple[str, str] | None:
    """(folder's root, the rest of `target` under it) when `target` (normalized, no `..`)
    lies under `folder` as written or as resolved (above it nothing is agent-writable), else
    None; None too when `folder` itself is a link (its resolved form would be elsewhere)."""
    if os.path.islink(os.path.normpath(folder)):
        return None
    for root in dict.fromkeys((os.path.normpath(folder), os.path.realpath(folder))):
        if target.startswith(root + os.sep) and len(target) > len(root) + 1:
            return root, target[len(root) + 1 :]
    return None


def _not_plain(root: str, rest: str) -> str:
    """Why writing `root`/`rest` could reach another file than the one named ("" if it
    cannot): a link on any part of the path (lstat from the root down), or a target that is
    not a plain file of its own (a FIFO, a device, a file with a second name)."""
    here = root
    for name in rest.split(os.sep):
        here = os.path.join(here, name)
        try:
            info = os.lstat(here)
        except OSError:
            return ""  # not there (yet): what the client makes below it holds no link either
        if stat.S_ISLNK(info.st_mode):
            shown = here[len(root) + 1 :]
            return f"has a link on its path ({shown}); file tools write only through plain dirs"
    if not stat.S_ISREG(info.st_mode) and not stat.S_ISDIR(info.st_mode):
        return "is not a plain file (a FIFO, socket or device)"
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        return "is a file with another name (a hard link) that may lie outside the worktree"
    return ""


def judge_patch(tool_input: dict[str, object], cwd: str, session: Session) -> Verdict:
    """Every file a Codex patch names must be inside the worktree. The patch is read as Codex
    reads it (headers trimmed, `*** Move to:` too) and, to be safe, every line that looks like
    a header once trimmed counts as well; a patch whose framing does not parse is denied."""
    patch = tool_input.get("command") or tool_input.get("patch") or tool_input.get("input")
    files = patch_files(patch) if isinstance(patch, str) else None
    if not files:
        why = "is not a patch the guard can parse" if files is None else "names no file"
        return Verdict(MUTATE, "apply_patch", why + ", so the guard cannot check it")
    workdir = tool_input.get("workdir")
    if isinstance(workdir, str) and workdir:
        cwd = os.path.join(cwd, workdir)
    for path in files:
        check_clock()
        if len(path) > MAX_PATH:
            return Verdict(MUTATE, "apply_patch", LONG_PATH, hint=Hint.WRITE)
        verdict = judge_write("apply_patch", path, cwd, session)
        if verdict.level != OK:
            return verdict
    return PASS


# Rust's str::trim: Unicode White_Space, which differs from Python's str.strip() (\x1c-\x1f)
RUST_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
RUST_SPACE += "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def patch_files(patch: str) -> list[str] | None:
    """The paths a Codex patch touches (`Add`, `Update`, `Delete`, `Move to`), or None when
    its framing does not parse. Lines split on newlines alone and trimmed as Codex does."""
    lines = [
        line[:-1] if line.endswith("\r") else line for line in patch.strip(RUST_SPACE).split("\n")
    ]
    heredoc = lines[0] in ("<<EOF", "<<'EOF'", '<<"EOF"') and lines[-1].endswith("EOF")
    if heredoc and len(lines) >= 4:
        lines = lines[1:-1]
    begin, end = lines[0].strip(RUST_SPACE), lines[-1].strip(RUST_SPACE)
    if len(lines) < 2 or begin != "*** Begin Patch" or end != "*** End Patch":
        return None
    files = []
    for line in lines[1:-1]:
        header = line.strip(RUST_SPACE)
        for marker in PATCH_MARKERS:
            if header.startswith(marker):
                files.append(header[len(marker) :])
    return files


def explain(
    verdict: Verdict, decision: str, session: Session, dialect: str = Dialect.CLAUDE
) -> str:
    """The refusal's text: what the rule found, and what to do instead, as the rule chose."""
    part = verdict.part if len(verdict.part) <= 80 else verdict.part[:79] + "…"
    part = part.replace("`", "'").replace("\n", " ")
    strict = verdict.level == UNKNOWN and session.strict
    first = f"`{part}` {verdict.why}" + (" (strict guard)" if strict else "")
    where = f"; the session is {session.state_dir}."
    if verdict.hint is Hint.PERSON:
        return f"{first}. {HUMAN_HINT}{where}"
    return f"{first}. {HINT}{instead(verdict.hint, decision, dialect)}{where}"


def instead(hint: Hint | str, decision: str, dialect: str) -> str:
    """What to do instead: the rule's own words, or the text for its kind of hint."""
    if isinstance(hint, str):
        return hint
    if hint is Hint.WRITE:
        return WRITE_HINT
    if hint is Hint.TOOLS:
        return UNKNOWN_TOOL_HINTS.get(dialect, UNKNOWN_TOOL_HINT)
    if decision == ASK:
        return ASK_HINT if dialect == Dialect.CLAUDE else MODEL_ASK_HINT
    return DENY_HINT
