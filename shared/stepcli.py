"""The step scripts' command line, for `planner` and `executor` alike (PRODUCT.md §4).

--step N [--state-dir D] [--qr-status pass|fail] [--format text|json] …
next [--qr-status …]      status [--json]      role ROLE
"""

from __future__ import annotations

import sys

from shared.exits import run_main
from state.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from shared.workflow import Workflow

ROLES = ("architect", "developer", "technical-writer", "quality-reviewer")


# Every flag the step scripts know: name -> allowed values (None: any text, bool: a switch).
FLAGS: dict[str, Any] = {
    "--step": None,
    "--state-dir": None,
    "--qr-status": ("pass", "fail"),
    "--format": ("text", "json"),
    "--non-interactive": bool,
    "--task": None,
    "--depth": ("quick", "standard"),
    "--json": bool,
}
USAGE = {
    "step": "{p} --step N [--state-dir DIR] [--qr-status pass|fail] [--format text|json] "
    "[--non-interactive]{start}",
    "next": "{p} next [--state-dir DIR] [--qr-status pass|fail] [--format text|json]",
    "status": "{p} status [--state-dir DIR] [--json]",
    "role": "{p} role architect|developer|technical-writer|quality-reviewer [--state-dir DIR]",
}
START = " [--task TEXT [--depth quick|standard]]"


def usage(prog: str, starts: bool) -> str:
    lines = [u.format(p=prog, start=START if starts else "") for u in USAGE.values()]
    return "usage:\n  " + "\n  ".join(lines) + "\n"


def parse_flags(
    argv: list[str], allowed: tuple[str, ...], prog: str, positional: int = 0
) -> tuple[dict[str, Any], list[str]]:
    """{flag name: value} for the allowed flags (argparse costs ~1x python -c pass here)."""
    flags: dict[str, Any] = {name[2:].replace("-", "_"): None for name in allowed}
    words: list[str] = []
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        if not arg.startswith("--") or arg == "--":
            words.append(arg)
            continue
        name, eq, value = arg.partition("=")
        if name not in allowed:
            raise UsageError(f"unknown option {name} (see {prog} --help)")
        kind = FLAGS[name]
        if kind is bool:
            if eq:
                raise UsageError(f"{name} takes no value")
            flags[name[2:].replace("-", "_")] = True
            continue
        if not eq:
            if not rest:
                raise UsageError(f"{name} needs a value")
            value = rest.pop(0)
        if isinstance(kind, tuple) and value not in kind:
            raise UsageError(f"{name} must be one of {', '.join(kind)}, not {value!r}")
        flags[name[2:].replace("-", "_")] = value
    if len(words) != positional:
        raise UsageError(f"unexpected {' '.join(words) or 'arguments'} (see {prog} --help)")
    return flags, words


def main(
    workflow_name: str,
    load: Callable[[], Workflow],
    start: Callable[[Workflow, dict[str, Any]], int] | None = None,
) -> int:
    """The entry point of a step script; `start` handles step 1 of a workflow that begins one."""
    return run_main(workflow_name, lambda: dispatch(workflow_name, load, start, sys.argv[1:]))


def dispatch(
    name: str,
    load: Callable[[], Workflow],
    start: Callable[[Workflow, dict[str, Any]], int] | None,
    argv: list[str],
) -> int:
    if not argv or "--help" in argv or "-h" in argv or argv[0] == "help":
        sys.stdout.write(usage(name, start is not None))
        return 0 if argv else 2  # no arguments at all is a usage error
    if argv[0] == "next":
        return run_next(name, argv[1:])
    if argv and argv[0] == "status":
        return show_status(name, argv[1:])
    if argv and argv[0] == "role":
        return show_role(name, argv[1:])
    allowed = ("--step", "--state-dir", "--qr-status", "--format", "--non-interactive")
    flags, _ = parse_flags(argv, allowed + (("--task", "--depth") if start else ()), name)
    if flags["step"] is None or not flags["step"].isdecimal():
        raise UsageError(f"--step N is required, N a step number (see {name} --help)")
    flags["step"] = int(flags["step"])
    workflow = load()
    if start is not None and flags["step"] == 1 and flags.get("task") is not None:
        return start(workflow, flags)
    if flags.get("task") is not None or flags.get("depth") is not None:
        raise UsageError("--task and --depth start a session: only with --step 1")
    from shared import engine

    return engine.run(workflow, flags["step"], flags)


def run_next(name: str, argv: list[str]) -> int:
    """Run the command the session's position routes to now (IF PASS / IF FAIL by --qr-status)."""
    from shared.engine import current_routing, open_for_steps
    from shared.paths import open_session

    flags, _ = parse_flags(argv, ("--state-dir", "--qr-status", "--format"), f"{name} next")
    store = open_session(flags["state_dir"])
    routing = current_routing(store, open_for_steps(store)).as_record()
    if "next" in routing:
        target = routing["next"]
    elif routing and flags["qr_status"]:
        target = routing[f"if_{flags['qr_status']}"]
    elif routing:
        raise UsageError("the last step routes by verdict: give --qr-status pass|fail")
    else:
        raise UsageError("nothing to run next: the workflow is done")
    if flags["format"] == "json" and target[0] != "plan":
        target = [*target, "--format", "json"]
    return run_argv(target)


def run_argv(argv: list[str]) -> int:
    """Run a routed command (planner …, executor …, plan …) in this process."""
    if argv[0] == "plan":
        from cli.main import dispatch as plan_dispatch

        return plan_dispatch(argv[1:])
    from skills import workflows

    workflow_name = argv[0]
    load, start = workflows(workflow_name)
    return dispatch(workflow_name, load, start, argv[1:])


def show_status(name: str, argv: list[str]) -> int:
    from shared.paths import open_session
    from shared.status import session_status, status_text

    flags, _ = parse_flags(argv, ("--state-dir", "--json"), f"{name} status")
    summary = session_status(open_session(flags["state_dir"]))
    if flags["json"]:
        import json

        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    else:
        sys.stdout.write(status_text(summary) + "\n")
    return 0


def show_role(name: str, argv: list[str]) -> int:
    """The role's instructions, for the step the session is at."""
    from shared.paths import open_session
    from skills.planner.roles import role_prompt

    flags, (role,) = parse_flags(argv, ("--state-dir",), f"{name} role", positional=1)
    if role not in ROLES:
        raise UsageError(f"role: {role!r} is not one of {', '.join(ROLES)}")
    sys.stdout.write(role_prompt(role, open_session(flags["state_dir"])) + "\n")
    return 0
