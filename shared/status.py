"""Where a session stands, for `plan status`, `planner status` and the SessionStart hook."""

from __future__ import annotations

from state.store import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def session_status(store: Store) -> dict[str, Any]:
    session = store.read("session")
    context = store.read_or_none("context") or {"questions": []}
    return {
        "session": session["id"],
        "state_dir": store.dir,
        "task": session["task"],
        "status": session["status"],
        "workflow": session["workflow"],
        "step": session["step"],
        "next": session["next_command"],
        "open_questions": [
            q["id"] for q in context["questions"] if q["answer"] is None and not q["skipped"]
        ],
        "qr": session["qr"],
    }


def status_text(s: dict[str, Any]) -> str:
    lines = [
        f"session {s['session']}: {s['status']}, {s['workflow']} step {s['step']}",
        f"task: {s['task']}",
        f"STATE_DIR={s['state_dir']}",
    ]
    if s["open_questions"]:
        lines.append(f"open questions: {', '.join(s['open_questions'])}")
    for phase, loop in s["qr"].items():
        lines.append(f"qr {phase}: iteration {loop['iteration']}, {loop['state']}")
    lines.append(f"NEXT: {s['next']}" if s["next"] else "NEXT: (none recorded)")
    return "\n".join(lines)
