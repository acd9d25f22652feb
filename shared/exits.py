"""The one place errors become exit codes and one-line messages.

0 done · 1 unexpected · 2 usage · 3 precondition · 4 refused by state. A traceback only
with PLANNER_DEBUG=1.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from state.errors import Finding, PlannerError


def report(prog: str, message: str, findings: list[Finding] | None = None) -> None:
    """The message on one line, then one line per failing check with its fix."""
    lines = [f"{prog}: {message}"]
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
        report(
            prog,
            f"needs the {e.name} package: install planner into this Python "
            "(pip install planner), or set PLANNER_PYTHON to one that has it",
        )
        return 1
    except KeyboardInterrupt:
        report(prog, "interrupted")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # the last line of defence: never a traceback for the user
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
