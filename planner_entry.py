"""The console scripts `planner`, `executor` and `plan`: first check that the top-level packages
cli, shared, state, skills and hooks are this planner's, then run the command (docs/design.md,
"Own packages"). Standard library only: it runs before any of them is trusted.
"""

import gc
import importlib
import os
import sys
from collections.abc import Callable

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


def started(prog: str, module: str, name: str) -> int:
    """Run the command `name` of `module`. Its import makes ~100k objects and no garbage: it
    runs with the cyclic collector off, and what it made is then frozen out of the collector's
    later walks (gc.freeze): ~10% of a step's instructions, ~3% of a `plan` command's
    (docs/design.md, "Launcher fast path")."""
    check(prog)
    enabled = gc.isenabled()
    gc.disable()
    try:
        run: Callable[[], int] = getattr(importlib.import_module(module), name)
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
    return run()


def planner() -> int:
    return started("planner", "cli.steps", "planner")


def executor() -> int:
    return started("executor", "cli.steps", "executor")


def plan() -> int:
    return started("plan", "cli.__main__", "main")
