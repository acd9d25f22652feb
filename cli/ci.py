"""Prints a CI run (shared/ci.py) as text, one JSON document, or GitHub workflow commands.

GitHub escaping follows @actions/core's command.ts: data escapes % CR LF; properties
also escape : and , (https://docs.github.com/actions/reference/workflow-commands).
"""

from __future__ import annotations

import json
import sys

from state.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from shared.ci import Problem, Run

FORMATS = ("text", "json", "github")


def output_format(args: dict[str, Any]) -> str:
    """--format, with --json as a synonym of --format json; conflicting ones exit 2."""
    fmt = args.get("format") or "text"
    if fmt not in FORMATS:
        raise UsageError(f"--format: must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if args.get("json") and fmt not in ("text", "json"):
        raise UsageError(f"--json and --format {fmt} conflict: pass one of them")
    return "json" if args.get("json") else fmt


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_command(level: str, message: str, **properties: Any) -> str:
    """`::level key=value,…::message`, empty properties left out, as @actions/core does."""
    props = ",".join(
        f"{k}={escape_property(str(v))}" for k, v in properties.items() if v not in (None, "")
    )
    return f"::{level}{' ' + props if props else ''}::{escape_data(message)}"


def _github(run: Run, problem: Problem) -> str:
    level = problem.level if problem.level in ("error", "warning", "notice") else "notice"
    title = f"plan {run.command}" + (f" {problem.path}" if problem.path else "")
    message = problem.message + (f" (fix: {problem.fix})" if problem.fix else "")
    return github_command(
        level,
        message,
        file=run.relative(problem.file) if problem.file else None,
        line=problem.line,
        col=problem.col,
        title=title.strip(),
    )


def _text(run: Run) -> str:
    lines: list[str] = []
    for t in run.targets:
        errors = [p for p in t.problems if p.level == "error"]
        phase = f" for phase {run.phase}" if run.phase else ""
        if not t.judged:
            head = f"{run.relative(t.path)}: not approved (status {t.status})"
        elif errors:
            head = f"{run.relative(t.path)}: {len(errors)} problem(s){phase}"
        else:
            head = f"{run.relative(t.path)}: {'verified' if run.command == 'verify' else 'valid'}"
            head += phase
        lines.append(head)
        for p in t.problems:
            where = run.relative(p.file) + (f":{p.line}" if p.line else "")
            level = "" if p.level == "error" else f"{p.level}: "
            lines.append(f"  - {level}{p.text()}  [{where}]")
    return "\n".join(lines)


def emit(run: Run, fmt: str) -> int:
    """Print the run in `fmt`, a one-line summary on stderr if it failed; the exit code."""
    if fmt == "json":
        sys.stdout.write(json.dumps(run.as_dict(), indent=2, ensure_ascii=False) + "\n")
    elif fmt == "github":
        lines = [_github(run, p) for p in run.problems]
        lines += [_github(run, p) for t in run.targets for p in t.problems]
        if lines:
            sys.stdout.write("\n".join(lines) + "\n")
    elif run.targets:
        sys.stdout.write(_text(run) + "\n")
    if fmt == "text" and run.problems:  # what belongs to no target, as every command says it
        sys.stderr.write("".join(f"plan {run.command}: {p.text()}\n" for p in run.problems))
    code = run.exit_code
    if code and run.targets:
        bad = [t for t in run.targets if not t.ok]
        sys.stderr.write(f"plan {run.command}: {len(bad)} of {len(run.targets)} failed\n")
    elif code and fmt != "text" and run.problems:  # the reason in one line, as every command
        sys.stderr.write(f"plan {run.command}: {run.problems[0].text()}\n")
    return code


def usage_failure(command: str, error: UsageError, fmt: str) -> int:
    """A usage error before any target was read: one JSON document still, in JSON mode."""
    from shared.ci import Run
    from shared.paths import project_root

    run = Run(command, project_root()).fail(error.message)
    if fmt != "json":
        raise error
    return emit(run, fmt)


def run_command(command: str, args: dict[str, Any], check: Any) -> int:
    """Parse the format, run `check()` (a Run), print it; usage errors stay JSON in JSON mode."""
    wants_json = bool(args.get("json")) or args.get("format") == "json"
    try:
        fmt = output_format(args)
        run = check()
    except UsageError as e:
        return usage_failure(command, e, "json" if wants_json else "text")
    return emit(run, fmt)
