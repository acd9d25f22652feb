"""The one place errors become exit codes and one-line messages: ours (PlannerError) and
click's (usage, --help, Ctrl-C at a prompt), for `plan` and the step scripts alike.

0 done · 1 unexpected · 2 usage · 3 precondition · 4 refused by state. A traceback only
with PLANNER_DEBUG=1. click is not imported here: a missing click is reported in one line.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from state.errors import Finding, PlannerError


def report(prog: str, message: str, findings: list[Finding] | None = None) -> None:
    """The message on one line, then one line per failing check with its fix; a message that
    names its command already (`plan apply: …`) is not prefixed again."""
    lines = [message if message.startswith(f"{prog} ") else f"{prog}: {message}"]
    lines += [f"  - {f.line()}" for f in findings or []]
    sys.stderr.write("\n".join(lines) + "\n")


def _huge_number_option() -> str:
    """The option whose value is the over-long number (argument parsers convert with int())."""
    argv = sys.argv[1:]
    for i, arg in enumerate(argv):
        name, eq, value = arg.partition("=")
        if eq and len(value) > 4300:
            return name
        if len(arg) > 4300 and arg.isdecimal():
            return argv[i - 1] if i and argv[i - 1].startswith("-") else "an argument"
    return "an argument"


def _reinstall() -> str:
    """The fix for a missing dependency: the plugin's environment is made anew; a Python the
    person chose gets planner installed into it from this checkout (or from the index)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    data = os.environ.get("PLANNER_DATA_DIR")
    if data and os.path.abspath(sys.prefix).startswith(os.path.abspath(data) + os.sep):
        return f"fix: python3 {root}/hooks/bootstrap.py rebuild"
    given = os.path.join(root, "pyproject.toml")
    target = f"-e {root}" if os.path.exists(given) else "planner"
    return f"fix: {sys.executable} -m pip install {target} (or a PLANNER_PYTHON that has it)"


def run_main(prog: str, body: Callable[[], int | None]) -> int:
    """Run an entry point; PlannerError → its exit code, anything else → 1."""
    try:
        return body() or 0
    except PlannerError as e:
        if os.environ.get("PLANNER_DEBUG") == "1":
            raise
        report(prog, e.message, e.findings)
        return e.exit_code
    except ModuleNotFoundError as e:  # a slow path whose dependency is not installed here
        if os.environ.get("PLANNER_DEBUG") == "1":
            raise
        report(prog, f"needs the {e.name} package, which {sys.executable} lacks; {_reinstall()}")
        return 1
    except KeyboardInterrupt:
        report(prog, "interrupted")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # the last line of defence: never a traceback for the user
        code = click_error(prog, e)
        if code is not None:
            return code
        if os.environ.get("PLANNER_DEBUG") == "1":
            raise
        if isinstance(e, ValueError) and "digits" in str(e):  # int() of a huge argument
            report(
                prog,
                f"{_huge_number_option()}: a number with over 4,300 digits; give a smaller one",
            )
            return 2
        report(prog, f"unexpected error: {type(e).__name__}: {e} (PLANNER_DEBUG=1 shows more)")
        return 1


def click_error(prog: str, e: Exception) -> int | None:
    """click's own errors as their exit code and one line (2 for usage); None for others."""
    if "click" not in sys.modules:  # no click command ran: not one of its errors
        return None
    import click

    if isinstance(e, click.exceptions.Exit):
        return int(e.exit_code)
    no_args: type[click.UsageError] | None = getattr(click.exceptions, "NoArgsIsHelpError", None)
    if no_args is not None and isinstance(e, no_args):  # `plan decision` alone: its help
        sys.stderr.write(e.format_message() + "\n")
        return e.exit_code
    if isinstance(e, click.ClickException):
        ctx = getattr(e, "ctx", None)
        report(ctx.command_path if ctx else prog, e.format_message().replace("\n", " "))
        return e.exit_code
    if isinstance(e, click.Abort):  # click's name for Ctrl-C or end of input at a prompt
        report(prog, "interrupted")
        return 130
    return None
