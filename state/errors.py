"""One error hierarchy; each error carries its exit code and its findings.

The command layers map these to exit codes in one place; state/ never prints.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class Finding:
    """One problem: where (a JSON path or file), how bad, what, and the command that fixes it;
    `rule` names the kind of problem for CI (shared/ci_run.py RULES), "" where nobody asks;
    `line`, for a text file (plan.md), where in it."""

    __slots__ = ("fix", "level", "line_no", "message", "path", "rule")

    def __init__(
        self,
        path: str,
        message: str,
        fix: str = "",
        level: str = "error",
        rule: str = "",
        line_no: int | None = None,
    ):
        self.path, self.message, self.fix, self.level = path, message, fix, level
        self.rule, self.line_no = rule, line_no

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Finding) and self.as_dict() == other.as_dict()

    def __repr__(self) -> str:
        return f"Finding({self.line()!r})"

    def as_dict(self) -> dict[str, str]:
        return {"path": self.path, "level": self.level, "message": self.message, "fix": self.fix}

    def line(self) -> str:
        text = f"{self.path}: {self.message}" if self.path else self.message
        return f"{text} (fix: {self.fix})" if self.fix else text


class PlannerError(Exception):
    """Anything unexpected: exit 1."""

    exit_code = 1

    def __init__(
        self, message: str, findings: list[Finding] | None = None, field: str | None = None
    ):
        super().__init__(message)
        self.message = message
        self.findings = findings or []
        # A refusal that asks the person: the transaction drops everything else it held,
        # records only this (a question), commits, and the refusal is raised after it.
        self.then_record: Callable[[Any], None] | None = None  # given the Transaction
        # The argument the message starts with, by its field name ("by: may not be empty"):
        # state/ knows no CLI flags, the command layer names the option (relabel).
        self.field = field if field and message.startswith(field) else None

    def relabel(self, label: str) -> None:
        """Say the field as the caller spells it (an option name) at the message's start."""
        if self.field:
            self.message = label + self.message[len(self.field) :]
            self.args = (self.message,)
            self.field = None


class UsageError(PlannerError):
    """A bad flag or argument, an unknown step or id, no session found: exit 2."""

    exit_code = 2


class PreconditionFailed(PlannerError):
    """A gate, an order or a validation the step requires is not met: exit 3."""

    exit_code = 3


class DamagedFile(PreconditionFailed):
    """A state file that cannot be read or does not match its schema: exit 3, never overwritten."""


class Refused(PlannerError):
    """Refused by state: the plan is frozen, the session cancelled or failed: exit 4."""

    exit_code = 4


class WriteFailed(PreconditionFailed):
    """A state file could not be written (disk full, read-only): exit 3, nothing was written."""


class Busy(PreconditionFailed):
    """Another process holds the session's lock past the timeout: exit 3, nothing was done."""
