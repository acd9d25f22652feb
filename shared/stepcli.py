"""The step scripts' command line, for `planner` and `executor` alike (PRODUCT.md §4).

  --step N [--state-dir D] [--qr-status pass|fail] [--format text|json] …
  next [--qr-status …]      status [--json]      role ROLE
"""

from __future__ import annotations

import argparse
import sys

from shared.exits import run_main
from state.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from shared.workflow import Workflow

ROLES = ("architect", "developer", "technical-writer", "quality-reviewer")


class Parser(argparse.ArgumentParser):
    """argparse that raises UsageError (exit 2, one line) instead of printing usage."""

    def error(self, message: str) -> Any:
        raise UsageError(f"{message} (see {self.prog} --help)")


def step_parser(prog: str, starts: bool) -> Parser:
    p = Parser(prog=prog, description="Print the prompt of a workflow step and what to run next.")
    p.add_argument("--step", type=int, required=True, metavar="N")
    p.add_argument("--state-dir", metavar="DIR")
    p.add_argument("--qr-status", choices=("pass", "fail"))
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--non-interactive", action="store_true",
                   help="Ask nobody: take recommended options and approve as auto.")
    if starts:
        p.add_argument("--task", metavar="TEXT", help="What to plan (step 1 starts a session).")
        p.add_argument("--depth", choices=("quick", "standard"))
    return p


def main(workflow_name: str, load: Callable[[], Workflow],
         start: Callable[[Workflow, dict[str, Any]], int] | None = None) -> int:
    """The entry point of a step script; `start` handles step 1 of a workflow that begins one."""
    return run_main(workflow_name, lambda: dispatch(workflow_name, load, start, sys.argv[1:]))


def dispatch(name: str, load: Callable[[], Workflow],
             start: Callable[[Workflow, dict[str, Any]], int] | None, argv: list[str]) -> int:
    if argv and argv[0] == "next":
        return run_next(name, argv[1:])
    if argv and argv[0] == "status":
        return show_status(name, argv[1:])
    if argv and argv[0] == "role":
        return show_role(name, argv[1:])
    flags = vars(step_parser(name, start is not None).parse_args(argv))
    workflow = load()
    if start is not None and flags["step"] == 1 and flags.get("task") is not None:
        return start(workflow, flags)
    if flags.get("task") is not None or flags.get("depth") is not None:
        raise UsageError("--task and --depth start a session: only with --step 1")
    from shared import engine

    return engine.run(workflow, flags["step"], flags)


def run_next(name: str, argv: list[str]) -> int:
    """Run the command the session's position routes to now (IF PASS / IF FAIL by --qr-status)."""
    from shared.engine import current_routing, open_session

    p = Parser(prog=f"{name} next")
    p.add_argument("--state-dir", metavar="DIR")
    p.add_argument("--qr-status", choices=("pass", "fail"))
    p.add_argument("--format", choices=("text", "json"), default="text")
    args = p.parse_args(argv)
    store = open_session(args.state_dir)
    routing = current_routing(store, store.read("session")).as_record()
    if "next" in routing:
        target = routing["next"]
    elif routing and args.qr_status:
        target = routing[f"if_{args.qr_status}"]
    elif routing:
        raise UsageError("the last step routes by verdict: give --qr-status pass|fail")
    else:
        raise UsageError("nothing to run next: the workflow is done")
    if args.format == "json" and target[0] != "plan":
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
    from shared.engine import open_session
    from shared.status import session_status, status_text

    p = Parser(prog=f"{name} status")
    p.add_argument("--state-dir", metavar="DIR")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    summary = session_status(open_session(args.state_dir))
    if args.json:
        import json

        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
    else:
        sys.stdout.write(status_text(summary) + "\n")
    return 0


def show_role(name: str, argv: list[str]) -> int:
    """The role's instructions, for the step the session is at."""
    from shared.engine import open_session
    from skills.planner.roles import role_prompt

    p = Parser(prog=f"{name} role")
    p.add_argument("role", choices=ROLES)
    p.add_argument("--state-dir", metavar="DIR")
    args = p.parse_args(argv)
    sys.stdout.write(role_prompt(args.role, open_session(args.state_dir)) + "\n")
    return 0
