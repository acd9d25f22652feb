"""`plan validate | verify | schema`: checking plans, for agents and for CI."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from cli.base import PlanCommand, dump, open_store, out
from state.errors import Finding, PreconditionFailed, UsageError

if TYPE_CHECKING:
    from state.store import Store


def validate_target(target: str | None, state_dir: str | None) -> tuple[Store, str]:
    """validate's TARGET: a session directory or a plan.json; else the active session."""
    from state.store import Store

    if target and target.endswith(".json") and not os.path.isdir(target):
        directory = os.path.dirname(os.path.abspath(target))
        return Store(directory), os.path.basename(target)[: -len(".json")]
    store = open_store(target or state_dir, must_exist=False)
    if not os.path.isdir(store.dir):
        raise UsageError(f"{store.dir}: no such directory")
    return store, "plan"


@click.command("validate", cls=PlanCommand)
@click.option(
    "--phase",
    type=click.Choice(["design", "code", "docs", "final"]),
    help="Also check that the plan is complete for this phase.",
)
@click.option(
    "--format",
    "format_",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
    help="text for people, json for tools, github for workflow annotations.",
)
@click.argument("target", required=False, metavar="[DIR|plan.json]")
def validate_command(
    phase: str | None, format_: str, target: str | None, state_dir: str | None, as_json: bool
) -> int:
    """Check a plan: structure, references, meaning, and a phase's completeness. Exit 3 if not."""
    from shared.paths import project_root
    from state import validate as checks
    from state.errors import DamagedFile

    store, name = validate_target(target, state_dir)
    path = store.path(name)
    try:
        plan = store.read(name)
        context = store.read_or_none("context") if name == "plan" else None
        questions = {q["id"] for q in context["questions"]} if context else None
        findings = checks.validate(plan, phase, project_root(store.dir), questions)
    except DamagedFile as e:
        findings = [Finding("", e.message)]
    errors = [f for f in findings if f.level == "error"]
    if as_json or format_ == "json":
        dump(
            {
                "file": path,
                "phase": phase,
                "valid": not errors,
                "findings": [f.as_dict() for f in findings],
            }
        )
    elif format_ == "github":
        for f in findings:
            out(f"::{f.level} file={path},title=plan {f.path}::{f.line()}")
    else:
        for_phase = f" for phase {phase}" if phase else ""
        lines = [
            f"{path}: valid{for_phase}"
            if not errors
            else f"{path}: {len(errors)} problem(s){for_phase}"
        ]
        out("\n".join(lines + [f"  - {f.line()}" for f in findings]))
    if errors:
        sys.stderr.write(f"plan validate: {path}: {len(errors)} problem(s)\n")
        return PreconditionFailed.exit_code
    return 0


@click.command("verify", cls=PlanCommand)
@click.argument("target", required=False, metavar="[DIR]")
def verify_command(target: str | None, state_dir: str | None, as_json: bool) -> int:
    """Check that a frozen plan still has the content that was approved (for CI)."""
    from state.approval import verify as check_approval

    store = open_store(target or state_dir)
    problems = check_approval(store.read("plan"), store.read("session"))
    if as_json:
        dump(
            {
                "state_dir": store.dir,
                "verified": not problems,
                "findings": [f.as_dict() for f in problems],
            }
        )
    elif problems:
        out(
            "\n".join(
                [f"{store.path('plan')}: not verified"] + [f"  - {f.line()}" for f in problems]
            )
        )
    else:
        sha = store.read("session")["approval"]["sha256"]
        out(f"{store.path('plan')}: verified, sha256 {sha}")
    if problems:
        sys.stderr.write(f"plan verify: {store.path('plan')}: {problems[0].message}\n")
        return PreconditionFailed.exit_code
    return 0


@click.command("schema", cls=PlanCommand)
@click.argument(
    "name",
    required=False,
    default="plan",
    type=click.Choice(["plan", "context", "qr", "session", "execution", "config"]),
)
def schema_command(name: str, state_dir: str | None, as_json: bool) -> None:
    """The JSON Schema of a state file, exported from the pydantic models."""
    from state.models import export_schema

    dump(export_schema(name))
