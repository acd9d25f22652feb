"""The product's own commands while planning: `plan`, `planner`, `executor` (PRODUCT.md §7).

They run unwrapped, so they can write the session, only when written plainly: one simple
command naming the launcher (a pipe from cat/echo/printf or a here-doc on stdin allowed), no
assignments, no writing redirections, no run-time words, output only into the session. The
person's own acts (approve, reject, accept, cancel, fail, resume another session, switching to
non-interactive) are asked; the executor waits for approval. Anything else is not "own" and
goes through the parser and the sandbox like any command.
"""

from __future__ import annotations

import os

from cli.guard_tools import MUTATE, PASS, SAFE_TARGETS

LAUNCHERS = ("plan", "planner", "executor")
FEEDERS = ("cat", "echo", "printf")
READ_REDIRECTS = ("<", "<<", "<<-", "<<<")
HUMAN_OPS = ("qr accept", "review approve", "review reject", "cancel", "fail", "resume")
PERSON = "is the person's decision"
ASK = "ask"


def mentions_launcher(command: str) -> bool:
    return any(name in command for name in LAUNCHERS)


def judge_own(command: str, session, cwd: str, env):
    """A verdict for a plain own command (PASS runs it unwrapped), or None when it is not one."""
    first = command.lstrip().split(None, 1)[0] if command.strip() else ""
    if first.rsplit("/", 1)[-1] not in (*LAUNCHERS, *FEEDERS) or not mentions_launcher(command):
        return None
    from cli import shell

    commands = shell.pipeline(command)
    if not commands or not commands[-1].argv or not is_launcher(commands[-1].argv[0], env):
        return None
    *feeders, own = commands
    if not all(_plain_feeder(c) for c in feeders) or not _plain(own):
        return None
    return judge_launcher(own.argv, command, session, cwd)


def is_launcher(word: str, env) -> bool:
    """`plan` on a PATH of absolute entries (the sandbox keeps them read-only, so nothing can
    be planted there), or an absolute path to a bin/ launcher."""
    base = word.rsplit("/", 1)[-1]
    if base not in LAUNCHERS:
        return False
    if "/" in word:
        return word.startswith("/") and word.endswith("/bin/" + base) and "/../" not in word
    entries = (env.get("PATH") or "").split(os.pathsep)
    return all(e.startswith("/") for e in entries)


def _plain(cmd) -> bool:
    if cmd.assignments or any(cmd.flags):
        return False
    return all(_reads_only(r) for r in cmd.redirects)


def _plain_feeder(cmd) -> bool:
    return bool(cmd.argv) and cmd.argv[0] in FEEDERS and _plain(cmd)


def _reads_only(redirect) -> bool:
    if redirect.op in READ_REDIRECTS:
        return True
    if redirect.op in (">&", "<&") and (redirect.target.isdigit() or redirect.target == "-"):
        return True
    return redirect.op in (">", ">>") and redirect.target in SAFE_TARGETS


def judge_launcher(argv: list, command: str, session, cwd: str) -> tuple:
    part = " ".join(argv)
    base = argv[0].rsplit("/", 1)[-1]
    words, options = _split(argv[1:])
    for name, value in options:
        if name == "--state-dir" and not _inside(cwd, value, os.path.dirname(session.state_dir)):
            return (MUTATE, part, "names a state dir outside the project's .planner/")
        if name == "--non-interactive":
            return (MUTATE, part, PERSON + " (non-interactive approves by itself)", ASK)
        if name in ("-o", "--output") and not _inside(cwd, value, session.state_dir):
            return (MUTATE, part, "writes outside the session directory")
    if base == "executor" or words[:1] == ["exec"]:
        return (MUTATE, part, "executes the plan, which waits for the person's approval")
    verb = " ".join(words[:2])
    if base == "plan" and (
        verb in ("review approve", "review reject", "qr accept")
        or words[:1] in (["cancel"], ["fail"])
        or (words[:1] == ["resume"] and words[1:2] not in ([], [session.id]))
    ):
        return (MUTATE, part, PERSON, ASK)
    if base == "plan" and words[:1] == ["apply"] and _applies_human_act(cwd, words, command):
        return (MUTATE, part, PERSON + " (a batch holding it too)", ASK)
    return PASS


def _split(args: list) -> tuple:
    """(positional words, [(option, value)]): every `--opt value` pair as written."""
    words, options, i = [], [], 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("-") and arg != "-":
            name, eq, value = arg.partition("=")
            if not eq and name in ("--state-dir", "-o", "--output"):
                value = args[i + 1] if i + 1 < len(args) else ""
                i += 1
            elif not eq and name.startswith("-o") and len(name) > 2:
                name, value = "-o", name[2:]
            options.append((name, value))
        else:
            words.append(arg)
        i += 1
    return words, options


def _inside(cwd: str, path: str, folder: str) -> bool:
    try:
        real = os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))
        root = os.path.realpath(folder)
    except (ValueError, OSError):
        return False
    return real == root or real.startswith(root + os.sep)


def _applies_human_act(cwd: str, words: list, command: str) -> bool:
    """Whether a `plan apply` batch may hold a human act: its text (stdin here-doc) or file."""
    text = command
    source = words[1] if len(words) > 1 else "-"
    if source != "-":
        try:
            with open(os.path.join(cwd, source), encoding="utf-8", errors="replace") as f:
                text += f.read(4 << 20)
        except OSError:
            return True
    if "\\u" in text:
        return True  # a JSON escape could spell an op name the scan below would miss
    flat = " ".join(text.split())
    return any(f'"{op}"' in flat for op in HUMAN_OPS)
