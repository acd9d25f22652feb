"""Where a session stands, as one record and one text, for `plan status`, `planner status`
and the SessionStart hook alike (docs/design.md, "One status"). Standard library only,
importing of the package only state/vocab.py: the hook imports it under `python3 -S -I`.
"""

from __future__ import annotations

import os

from state.vocab import ENDED, WorkflowName

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hooks run on Python 3.8: types are for mypy only
    from collections.abc import Mapping
    from typing import NotRequired, TypedDict

    class Status(TypedDict):
        """The record `plan status --json` prints (from session.json as found: the hook reads
        it unchecked, so its values are what the file holds); SessionStart adds `guard`."""

        session: object
        state_dir: str
        task: object
        status: object
        workflow: object
        step: object
        next: str
        open_questions: list[object]
        qr: Mapping[str, object]
        guard: NotRequired[str]
        problems: NotRequired[list[str]]  # what git shows now that the record does not


ROUTING_PREFIXES = ("NEXT", "IF ", "DONE")
SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")


def shell_word(word: str) -> str:
    """`word` as one POSIX shell word (what shlex.quote gives, without importing shlex)."""
    if not word:
        return "''"
    if SAFE.issuperset(word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


def next_lines(session: Mapping[str, object], state_dir: str) -> str:
    """The routing lines to show: recorded by the last commit, or why there are none. A
    session copied or moved since shows its own directory, not the one it was recorded in."""
    status = session.get("status")
    if status in ENDED:
        return f"(none: the session is {status}: {session.get('reason') or 'no reason given'})"
    recorded = session.get("next_command")
    if not isinstance(recorded, str) or not recorded:
        return "NEXT: (nothing recorded yet)"
    root, sid = session.get("project_root"), session.get("id")
    if isinstance(root, str) and isinstance(sid, str):
        was = os.path.join(root, ".planner", sid)
        if was != state_dir:
            recorded = recorded.replace(
                f"--state-dir {shell_word(was)}", f"--state-dir {shell_word(state_dir)}"
            )
    return recorded if recorded.startswith(ROUTING_PREFIXES) else "NEXT: " + recorded


def open_questions(context: object) -> list[object]:
    questions = context.get("questions") if isinstance(context, dict) else None
    return [
        q.get("id")
        for q in questions or ()
        if isinstance(q, dict) and q.get("answer") is None and not q.get("skipped")
    ]


def summary(session: Mapping[str, object], state_dir: str, context: object = None) -> Status:
    """The record `plan status --json` prints (and the text below is made from)."""
    qr = session.get("qr")
    return {
        "session": session.get("id"),
        "state_dir": state_dir,
        "task": session.get("task", ""),
        "status": session.get("status"),
        "workflow": session.get("workflow", WorkflowName.PLANNER),
        "step": session.get("step", 1),
        "next": next_lines(session, state_dir),
        "open_questions": open_questions(context),
        "qr": qr if isinstance(qr, dict) else {},
    }


def text(s: Status) -> str:
    lines = [
        # the step last run, beside the NEXT line (a rejection sends step 11 back to 3)
        f"session {s['session']}: {s['status']}, last ran {s['workflow']} step {s['step']}",
        f"task: {s['task']}",
        f"STATE_DIR={s['state_dir']}",
    ]
    if s["open_questions"]:
        lines.append(f"open questions: {', '.join(map(str, s['open_questions']))}")
    for phase, loop in s["qr"].items():
        if isinstance(loop, dict):
            lines.append(f"qr {phase}: iteration {loop.get('iteration')}, {loop.get('state')}")
    lines += s.get("problems") or []
    lines.append(s["next"])
    if s.get("guard"):
        lines.append(f"guard: {s['guard']}")
    return "\n".join(lines)
