"""The role instructions `planner role ROLE` prints, tailored to where the session stands."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.store import Store

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "roles")


def role_prompt(role: str, store: Store) -> str:
    from shared import qr
    from shared.engine import SHARED_TEMPLATES, user_words
    from shared.render import render
    from skills import workflows

    session = store.read("session")
    workflow = workflows(session["workflow"])[0]()
    phase = workflow.step(session["step"]).phase or ""
    iteration = qr.loop_of(session, phase)["iteration"] if phase else 1
    variables = {
        "task": session["task"],
        "workflow": session["workflow"],
        "state_dir": store.dir,
        "phase": phase,
        "iteration": iteration,
        "blocking": ", ".join(qr.blocking_severities(iteration)),
        **user_words(session, store.read_or_none("context")),
    }
    return render(f"{role}.j2", variables, [HERE, SHARED_TEMPLATES]).strip()
