"""The in-process tier: `plan`, `planner` and `executor` run in the test's own process, through
the console scripts' own bodies (the exit-code mapper around the click dispatch) under click's
CliRunner isolation, with the argv, working directory, stdin and environment a process would
get. What needs a process of its own (signals, locks across processes, launchers, the hooks
under `python3 -S -I`, a pty) keeps using the real console scripts.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

SCRIPTS = ("plan", "planner", "executor")
# Text a shell would expand or treat as syntax outside quotes (inside double quotes, the
# first four): such a command goes to a real shell.
SHELL_SYNTAX = "$`\\!*?[]{}~#;&|<>()\n"
IN_DOUBLE_QUOTES = SHELL_SYNTAX[:4]


def run_script(
    script: str,
    *args: str,
    cwd: Path,
    environ: Mapping[str, str],
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Console script `script` with `args`, run here; `environ` is its whole environment."""
    import click.formatting
    from click.testing import CliRunner

    from cli import workflows
    from cli.exits import run_main
    from cli.steps import run_argv

    assert script in SCRIPTS, script
    workflows.register_all()
    env: dict[str, str | None] = {k: None for k in os.environ if k not in environ}
    env.update(environ)
    argv, here = sys.argv, os.getcwd()
    with CliRunner().isolation(input=input, env=env) as (out, err, _):
        # help as wide as a process whose stdout is a pipe formats it (CliRunner fixes 80)
        click.formatting.FORCED_WIDTH = None
        sys.argv = [script, *args]  # the mapper names an over-long number's option from it
        os.chdir(cwd)
        try:
            code = run_main(script, lambda: run_argv([script, *args]))
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.chdir(here)
            sys.argv = argv
    return subprocess.CompletedProcess(
        [script, *args], code, out.getvalue().decode(), err.getvalue().decode()
    )


def simple_command(command: str) -> list[str] | None:
    """The words of a command line that only calls one of the scripts with quoted words (what
    routing lines and `Agent.plan` print), else None."""
    if not _quoted_literally(command):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    return words if words and words[0] in SCRIPTS else None


def _quoted_literally(command: str) -> bool:
    """Whether every character a shell would expand or treat as syntax is inside quotes that
    keep it literal (single quotes keep everything; double quotes all but IN_DOUBLE_QUOTES)."""
    quote = ""
    for char in command:
        if quote == "'":
            quote = "" if char == "'" else quote
        elif quote == '"':
            if char in IN_DOUBLE_QUOTES:
                return False
            quote = "" if char == '"' else quote
        elif char in "'\"":
            quote = char
        elif char in SHELL_SYNTAX:
            return False
    return not quote
