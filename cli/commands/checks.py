"""`plan validate | verify | schema`: checking plans, for agents and for CI."""

from __future__ import annotations

import click

from cli.base import PlanCommand, dump
from cli.ci_report import CICommand, run_command
from shared import ci_checks, ci_run
from state.errors import UsageError
from state.validation.validate import PHASES

PATHS = click.argument("paths", nargs=-1, metavar="[PATH]...")
EVERY = click.option(
    "--all", "every", is_flag=True, help="Every session under the repository's .planner/."
)
FORMAT = click.option(
    "--format",
    "format_",
    default="text",
    show_default=True,
    metavar="text|json|github|sarif",
    help="text for people, json for tools and sarif for code scanning (always one "
    "document), github for annotations.",
)  # a plain string, checked by cli/ci_report.py, so that a bad value still gets JSON output
EXIT_ZERO = click.option(
    "--exit-zero",
    is_flag=True,
    help="Exit 0 even when plans fail the checks (as ruff's --exit-zero): for a step that "
    "only reports, such as a SARIF upload. A usage error still exits 2.",
)
STRICT = click.option(
    "--strict",
    is_flag=True,
    help="Warnings fail the run too (a session without context.json, a signer who is not "
    "the approver, an old-form signature).",
)


@click.command("validate", cls=CICommand)
@click.option(
    "--phase",
    metavar="design|code|docs|final",
    help="Also check that the plan is complete for this phase (plan-design, plan-code and "
    "plan-docs, as `plan qr` spells them, are accepted too).",
)
@FORMAT
@STRICT
@EXIT_ZERO
@EVERY
@PATHS
def validate_command(
    phase: str | None,
    format_: str,
    strict: bool,
    exit_zero: bool,
    every: bool,
    paths: tuple[str, ...],
    state_dir: str | None,
    as_json: bool,
) -> int:
    """Check plans: structure (every schema error), references, meaning, a phase's completeness.

    PATH: session directories or plan files (default: the active session). session.json
    and context.json are checked too, and an approved plan must still be the approved one.
    Exit 3 if one is invalid or damaged, 2 if a path is no session or plan, 0 with a
    warning when there is nothing to check."""

    def check() -> ci_run.Run:
        return ci_checks.validate(list(paths), every, state_dir, _phase(phase), strict)

    return run_command("validate", {"json": as_json, "format": format_}, check, exit_zero)


def _phase(phase: str | None) -> str | None:
    if phase is not None and phase.removeprefix("plan-") in PHASES[:3]:
        phase = phase.removeprefix("plan-")
    if phase is not None and phase not in PHASES:
        raise UsageError(f"--phase: must be one of {', '.join(PHASES)}")
    return phase


@click.command("verify", cls=CICommand)
@FORMAT
@STRICT
@EXIT_ZERO
@EVERY
@click.option(
    "--require-approved",
    is_flag=True,
    help="A session not approved yet is an error (cancelled and failed ones are not).",
)
@click.option(
    "--require-signature",
    is_flag=True,
    help="An unsigned approval (or one signed the old way) is an error.",
)
@click.option(
    "--require-signer-match",
    is_flag=True,
    help="The signer's principal must name the approver (approval.by).",
)
@PATHS
def verify_command(
    format_: str,
    strict: bool,
    exit_zero: bool,
    every: bool,
    require_approved: bool,
    require_signature: bool,
    require_signer_match: bool,
    paths: tuple[str, ...],
    state_dir: str | None,
    as_json: bool,
) -> int:
    """Check that approved plans still have the content that was approved (for CI).

    Sessions not approved yet are listed, not judged (an error with --require-approved).
    A signature, when present, must verify; its signer is printed (see plan review approve
    --sign)."""

    def check() -> ci_run.Run:
        return ci_checks.verify(
            list(paths),
            every,
            state_dir,
            require_approved,
            require_signature,
            require_signer_match,
            strict,
        )

    return run_command("verify", {"json": as_json, "format": format_}, check, exit_zero)


@click.command("schema", cls=PlanCommand)
@click.argument(
    "name",
    required=False,
    default="plan",
    type=click.Choice(["plan", "context", "qr", "session", "execution", "config"]),
)
def schema_command(name: str, state_dir: str | None, as_json: bool) -> None:
    """The JSON Schema of a state file, exported from the pydantic models.

    NAME: plan (plan.json), context (context.json), qr (qr-PHASE.json), session
    (session.json), execution (execution.json) or config (the settings). For editors: see
    the VS Code json.schemas mapping in docs/reference.md, "Editor support"."""
    from state.storage.models import export_schema  # pydantic: validate and verify run without

    dump(export_schema(name))
