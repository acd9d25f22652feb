"""Routing lines: exact shell commands, POSIX-quoted, runnable from any directory.

Quoting matches shlex.quote (a test checks) without importing shlex or re on the hot path.
"""

from __future__ import annotations

from typing import TypedDict

from state.routes import StepRef, Target
from state.status_view import shell_word
from state.vocab import WorkflowName

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.storage.documents import RoutingRecord, StepRecord


class RoutingJson(TypedDict, total=False):
    """A routing as `--format json` prints it: one of next, if_pass and if_fail, or done."""

    next: str
    if_pass: str
    if_fail: str
    done: bool


def quote(word: str) -> str:
    if word.startswith("<") and word.endswith(">"):  # a placeholder the agent replaces whole
        return placeholder(word)
    return shell_word(word)


def placeholder(word: str) -> str:
    """A placeholder quoted so the line is valid shell as printed: single quotes, or double
    quotes when it holds an apostrophe ("<the user's words>")."""
    if "'" not in word:
        return f"'{word}'"
    return '"' + "".join("\\" + c if c in '"$`\\' else c for c in word) + '"'


def command(argv: list[str]) -> str:
    return " ".join(quote(word) for word in argv)


def step_argv(workflow: str, step: int, state_dir: str, qr_status: str | None = None) -> list[str]:
    argv = [workflow, "--step", str(step), "--state-dir", state_dir]
    return [*argv, "--qr-status", qr_status] if qr_status else argv


def argv_of(target: Target) -> list[str]:
    """A target's command line: rendered only where it is printed (docs/design.md, "Routes by
    name")."""
    if isinstance(target, StepRef):
        return step_argv(target.workflow, target.number, target.state_dir, target.qr_status)
    return target


def record(target: Target | None) -> StepRecord | None:
    """What session.json keeps of a target: a step as its StepRecord, another command none."""
    if not isinstance(target, StepRef):
        return None
    workflow, number, status = WorkflowName(target.workflow), target.number, target.qr_status
    return {"workflow": workflow, "name": target.name, "number": number, "qr_status": status}


class Routing:
    """Where a step leads: one NEXT command, two (IF PASS / IF FAIL), or DONE."""

    __slots__ = ("done", "if_fail", "if_pass", "next", "note")

    def __init__(
        self,
        next: Target | None = None,
        if_pass: Target | None = None,
        if_fail: Target | None = None,
        done: bool = False,
        note: str = "",
    ):
        self.next, self.if_pass, self.if_fail, self.done = next, if_pass, if_fail, done
        self.note = note  # one line shown above the routing (e.g. what was skipped)

    def targets(self) -> list[Target]:
        return [t for t in (self.next, self.if_pass, self.if_fail) if t is not None]

    def steps(self) -> list[StepRef]:
        """The steps it may lead to (not the other commands)."""
        return [t for t in self.targets() if isinstance(t, StepRef)]

    def lines(self) -> list[str]:
        if self.done:
            return ["DONE"]
        if self.next is not None:
            return [f"NEXT: {command(argv_of(self.next))}"]
        return [
            f"IF PASS: {command(argv_of(self.if_pass or []))}",
            f"IF FAIL: {command(argv_of(self.if_fail or []))}",
        ]

    def as_record(self) -> RoutingRecord:
        """What session.json keeps: the steps it leads to, typed (state/storage/models.py)."""
        return {
            "next": record(self.next),
            "if_pass": record(self.if_pass),
            "if_fail": record(self.if_fail),
        }

    def as_json(self) -> RoutingJson:
        if self.done:
            return {"done": True}
        if self.next is not None:
            return {"next": command(argv_of(self.next))}
        return {
            "if_pass": command(argv_of(self.if_pass or [])),
            "if_fail": command(argv_of(self.if_fail or [])),
        }
