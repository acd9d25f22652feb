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
    from collections.abc import Mapping

    from state.storage.documents import StoredStep


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


def argv_of(target: Target) -> list[str]:
    """A target's command line: rendered only where it is printed (docs/design.md, "Routes by
    name")."""
    if not isinstance(target, StepRef):
        return target
    argv = [target.workflow, "--step", str(target.number), "--state-dir", target.state_dir]
    return [*argv, "--qr-status", target.qr_status] if target.qr_status else argv


def record(target: StepRef) -> StoredStep:
    """What session.json keeps of a step (a QR loop's gate)."""
    workflow, number, status = WorkflowName(target.workflow), target.number, target.qr_status
    return {"workflow": workflow, "name": target.name, "number": number, "qr_status": status}


class Routing:
    """Where a step leads: one NEXT command, two (IF PASS / IF FAIL), or DONE."""

    __slots__ = ("done", "if_fail", "if_pass", "next", "note", "work")

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
        self.work = ""  # the text's NEXT instead of the command (JSON, session.json keep it)

    def steps(self) -> list[StepRef]:
        """The steps it may lead to (not the other commands)."""
        return [t for t in (self.next, self.if_pass, self.if_fail) if isinstance(t, StepRef)]

    def lines(self) -> list[str]:
        shown: Mapping[str, object] = {} if self.done else self.as_json()
        return [f"{k.upper().replace('_', ' ')}: {v}" for k, v in shown.items()] or ["DONE"]

    def shown(self) -> list[str]:
        """The lines a step's text ends with."""
        return [f"NEXT: {self.work}"] if self.work else self.lines()

    def as_json(self) -> RoutingJson:
        if self.done:
            return {"done": True}
        if self.next is not None:
            return {"next": command(argv_of(self.next))}
        pass_, fail = (command(argv_of(t or [])) for t in (self.if_pass, self.if_fail))
        return {"if_pass": pass_, "if_fail": fail}
