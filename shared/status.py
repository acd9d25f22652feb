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
        "next": live_next(store, session),
        "open_questions": [
            q["id"] for q in context["questions"] if q["answer"] is None and not q["skipped"]
        ],
        "qr": session["qr"],
    }


def live_next(store: Store, session: dict[str, Any]) -> str:
    """The routing lines of the step the session is at, as they are now."""
    if session["status"] in ("cancelled", "failed"):
        return f"(none: the session is {session['status']}: {session['reason']})"
    from shared.engine import current_routing
    from shared.workflow import registered

    if registered(session["workflow"]) is None:  # a hook: it loads no workflow table
        return session["next_command"] or ""
    return "\n".join(current_routing(store, session).lines())


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
    lines.append(s["next"] or "NEXT: (nothing recorded yet)")
    return "\n".join(lines)
