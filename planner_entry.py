"""The console scripts `planner`, `executor` and `plan`: first check that the top-level packages
cli, shared, state, skills and hooks are this planner's, then run the command (docs/design.md,
"Own packages"). Standard library only: it runs before any of them is trusted.
"""

import os
import sys

PACKAGES = ("state", "shared", "skills", "hooks", "cli")
HERE = os.path.dirname(os.path.abspath(__file__))


def foreign() -> tuple[str, str] | None:
    """The first package that is not this planner's and what is wrong, or None when all are:
    each __init__.py sets `__planner__` and sits beside this file (an import, an attribute
    read and a string comparison each; the command imports them anyway)."""
    for name in PACKAGES:
        try:
            package = __import__(name)
        except Exception as e:  # another tool's package that does not even import here
            if os.environ.get("PLANNER_DEBUG") == "1":
                raise
            return name, f"the package '{name}' does not import ({type(e).__name__}: {e})"
        where = os.path.dirname(getattr(package, "__file__", None) or "") or "(a namespace)"
        home = os.path.dirname(where)
        if getattr(package, "__planner__", False) and (
            home == HERE or os.path.realpath(home) == os.path.realpath(HERE)
        ):
            continue
        return name, f"the package '{name}' at {where} is not this planner's (planner is at {HERE})"
    return None


def check(prog: str) -> None:
    """Exit 3 with one line naming the package and the fix when one is not ours."""
    wrong = foreign()
    if wrong:
        name, what = wrong
        sys.stderr.write(
            f"{prog}: {what}: another tool's '{name}' shares this Python "
            f"environment ({sys.prefix}); fix: give planner an environment of its own "
            "(python3 -m venv DIR && DIR/bin/pip install planner; the plugin and "
            "hooks/install.py make one), or set PLANNER_PYTHON to its python\n"
        )
        sys.exit(3)


def planner() -> int:
    check("planner")
    from cli.steps import planner as run

    return run()


def executor() -> int:
    check("executor")
    from cli.steps import executor as run

    return run()


def plan() -> int:
    check("plan")
    from cli.__main__ import main as run

    return run()
