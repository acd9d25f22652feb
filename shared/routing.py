"""Routing lines: exact shell commands, POSIX-quoted, runnable from any directory.

Quoting matches shlex.quote (a test checks) without importing shlex or re on the hot path.
"""

from __future__ import annotations

from typing import TypedDict

from state.status_view import shell_word


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


class Routing:
    """Where a step leads: one NEXT command, two (IF PASS / IF FAIL), or DONE."""

    __slots__ = ("done", "if_fail", "if_pass", "next", "note")

    def __init__(
        self,
        next: list[str] | None = None,
        if_pass: list[str] | None = None,
        if_fail: list[str] | None = None,
        done: bool = False,
        note: str = "",
    ):
        self.next, self.if_pass, self.if_fail, self.done = next, if_pass, if_fail, done
        self.note = note  # one line shown above the routing (e.g. what was skipped)

    def lines(self) -> list[str]:
        if self.done:
            return ["DONE"]
        if self.next is not None:
            return [f"NEXT: {command(self.next)}"]
        return [
            f"IF PASS: {command(self.if_pass or [])}",
            f"IF FAIL: {command(self.if_fail or [])}",
        ]

    def as_record(self) -> dict[str, list[str]]:
        """What session.json keeps, for `planner next`."""
        if self.done:
            return {}
        if self.next is not None:
            return {"next": self.next}
        return {"if_pass": self.if_pass or [], "if_fail": self.if_fail or []}

    def as_json(self) -> RoutingJson:
        if self.done:
            return {"done": True}
        if self.next is not None:
            return {"next": command(self.next)}
        return {"if_pass": command(self.if_pass or []), "if_fail": command(self.if_fail or [])}
