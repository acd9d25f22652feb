"""Prints a CI run (shared/ci_run.py) as text, one JSON document, GitHub workflow commands or
one SARIF 2.1.0 log (GitHub code scanning), and keeps usage errors in the asked format.

GitHub escaping follows @actions/core's command.ts: data escapes % CR LF; properties
also escape : and , (https://docs.github.com/actions/reference/workflow-commands).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypedDict
from urllib.parse import quote

import click

from cli.base import PlanCommand
from cli.output import dump, line, tell
from shared.ci_run import HELP, RULES, Problem, Run, Target
from shared.paths import project_root
from state.errors import UsageError
from state.vocab import ENDED

FORMATS = ("text", "json", "github", "sarif")
DOCUMENTS = ("json", "sarif")  # formats that print exactly one document, whatever happens
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVELS = {"error": "error", "warning": "warning", "notice": "note"}
# A session not approved yet (or cancelled, failed) is listed, not judged: in SARIF it is a
# notification of the run, not an alert in code scanning (--require-approved makes it an
# error, which is one).
NOT_ALERTS = ("not-approved", "not-checked")
REGION = ("startLine", "startColumn", "endLine", "endColumn")  # a result's, from Problem's
HELP_URI = "https://github.com/planner-dev/planner#ci-validating-plans-in-pipelines"


class FormatFlags(TypedDict):
    """--json and --format as the command was given them."""

    json: bool
    format: str | None


def output_format(args: FormatFlags) -> str:
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


def github_command(level: str, message: str, **properties: str | int | None) -> str:
    """`::level key=value,…::message`, empty properties left out, as @actions/core does."""
    props = ",".join(
        f"{k}={escape_property(str(v))}" for k, v in properties.items() if v not in (None, "")
    )
    return f"::{level}{' ' + props if props else ''}::{escape_data(message)}"


def _github(run: Run, problem: Problem) -> str:
    level = problem.level if problem.level in ("error", "warning", "notice") else "notice"
    return github_command(
        level,
        problem.text(),
        file=run.relative(problem.file) if problem.file else None,
        line=problem.line,
        col=problem.col,
        endLine=problem.end_line,
        endColumn=problem.end_col,
        title=f"plan {run.command} ({problem.rule})",
    )


def _head(run: Run, t: Target) -> str:
    where = run.relative(t.path)
    failing = [p for p in t.problems if p.level == "error" or (t.strict and p.level == "warning")]
    phase = f" for phase {run.phase}" if run.phase else ""
    if not t.judged:
        if t.status in ENDED:
            return f"{where}: {t.status}, not checked"
        return f"{where}: not approved (status {t.status})"
    if failing:
        return f"{where}: {len(failing)} problem(s){phase}"
    head = f"{where}: {'verified' if run.command == 'verify' else 'valid'}{phase}"
    if t.signer:
        head += f", signed by {t.signer['principal'] or '?'} ({t.signer['fingerprint']})"
    return head


def _text(run: Run) -> str:
    lines: list[str] = []
    for t in run.targets:
        lines.append(_head(run, t))
        for p in t.problems:
            where = run.relative(p.file) + (f":{p.line}" if p.line else "")
            level = "" if p.level == "error" else f"{p.level}: "
            lines.append(f"  - {level}{p.text()}  [{where}] ({p.rule})")
    return "\n".join(lines)


def sarif(run: Run) -> dict[str, object]:
    """The run as one SARIF 2.1.0 log: the rules in tool.driver, a result per finding with
    its repository-relative location; run-level findings as tool notifications (a log of
    SARIF's own schema, built here only to be dumped: no Python code reads it back)."""
    from importlib.metadata import version  # ~2x `python -c pass`: only the SARIF form needs it

    rules = [
        {
            "id": rule,
            "shortDescription": {"text": text},
            "help": {"text": HELP[rule], "markdown": HELP[rule]},
            "helpUri": HELP_URI,
            "defaultConfiguration": {"level": "warning" if text.startswith("Warning") else "error"},
        }
        for rule, text in RULES.items()
    ]
    found = [(t, p) for t in run.targets for p in t.problems]
    # sessions not judged (not approved, cancelled) are listed, not alerts
    listed = [p for _, p in found if p.level == "notice" and p.rule in NOT_ALERTS]
    results = [sarif_result(run, t, p) for t, p in found if p not in listed]
    notifications = [
        {"level": SARIF_LEVELS.get(p.level, "note"), "message": {"text": p.text()}}
        for p in run.problems
    ]
    notifications += [
        {"level": "note", "message": {"text": f"{run.relative(p.file)}: {p.text()}"}}
        for p in listed
    ]
    invocation = {
        "executionSuccessful": run.usage_code == 0,
        "exitCode": run.exit_code,
        "toolExecutionNotifications": notifications,
    }
    driver = {
        "name": "planner",
        "semanticVersion": version("planner"),
        "informationUri": "https://github.com/planner-dev/planner",
        "rules": rules,
    }
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "invocations": [invocation], "results": results}],
    }


def sarif_result(run: Run, t: Target, p: Problem) -> dict[str, object]:
    """A finding as a SARIF result, at its repository-relative location."""
    uri = quote(run.relative(p.file or t.path), safe="/")
    at = zip(REGION, (p.line, p.col, p.end_line, p.end_col), strict=True)
    region = {k: v for k, v in at if v}
    location: dict[str, object] = {"artifactLocation": {"uri": uri}}
    if region:
        location["region"] = region
    result: dict[str, object] = {
        "ruleId": p.rule,
        "level": SARIF_LEVELS.get(p.level, "note"),
        "message": {"text": p.text()},
        "locations": [{"physicalLocation": location}],
        # the same finding keeps its alert when lines move: rule, file, JSON path
        "partialFingerprints": {"plannerFinding/v1": fingerprint(p.rule, uri, p.path)},
    }
    if p.rule in RULES:
        result["ruleIndex"] = list(RULES).index(p.rule)
    return result


def fingerprint(rule: str, uri: str, path: str) -> str:
    import hashlib

    return hashlib.sha256(f"{rule}\0{uri}\0{path}".encode()).hexdigest()[:32]


def emit(run: Run, fmt: str) -> int:
    """Print the run in `fmt`, a one-line summary on stderr if it failed; the exit code."""
    if fmt == "json":
        dump(run.as_dict())
    elif fmt == "sarif":
        dump(sarif(run))
    elif fmt == "github":
        lines = [_github(run, p) for p in run.problems]
        lines += [_github(run, p) for t in run.targets for p in t.problems]
        if lines:
            line("\n".join(lines))
    elif run.targets:
        line(_text(run))
    if fmt == "text" and run.problems:  # what belongs to no target, as every command says it
        for p in run.problems:
            tell(f"plan {run.command}: {'warning: ' if p.level == 'warning' else ''}{p.text()}")
    code = run.exit_code
    if code and run.targets:
        bad = [t for t in run.targets if not t.ok]
        tell(f"plan {run.command}: {len(bad)} of {len(run.targets)} failed")
    elif code and fmt != "text" and run.problems:  # the reason in one line, as every command
        tell(f"plan {run.command}: {run.problems[0].text()}")
    return code


def usage_failure(command: str, message: str, fmt: str) -> int:
    """A usage error before any target was read, printed as the run would be (exit 2)."""
    return emit(Run(command, project_root()).fail(message), fmt)


def run_command(
    command: str, args: FormatFlags, check: Callable[[], Run], exit_zero: bool = False
) -> int:
    """Parse the format, run `check()` (a Run), print it; usage errors stay in the format.
    exit_zero: findings exit 0 too (as ruff's --exit-zero), usage errors still 2."""
    asked = "json" if args.get("json") else args.get("format")
    try:
        fmt = output_format(args)
        run = check()
    except UsageError as e:
        if asked not in DOCUMENTS:
            raise
        return usage_failure(command, e.message, asked)
    code = emit(run, fmt)
    return 0 if exit_zero and code == 3 else code


def asked_format(args: list[str]) -> str | None:
    """The document format an argv asks for (--json, --format json|sarif, --format=…), as
    far as it can be read when click could not parse it."""
    asked = None
    for index, word in enumerate(args):
        following = args[index + 1] if index + 1 < len(args) else ""
        if word == "--":
            break
        if word == "--json":
            asked = "json"
        elif word == "--format" and following in DOCUMENTS:
            asked = following
        elif word.startswith("--format=") and word.split("=", 1)[1] in DOCUMENTS:
            asked = word.split("=", 1)[1]
    return asked


class CICommand(PlanCommand):
    """validate and verify: a wrong flag still prints one document when one was asked for."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        asked = asked_format(args)
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as e:
            if asked is None:
                raise
            message = e.format_message().replace("\n", " ")
            code = usage_failure(str(self.name), message, asked)
            raise click.exceptions.Exit(code) from None
