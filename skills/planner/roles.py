"""The role instructions `planner role ROLE` prints, tailored to where the session stands.

They add only what the step's prompt does not say: the step already shows the user's words."""

from __future__ import annotations

import os

from shared import qr
from shared.engine import SHARED_TEMPLATES
from shared.render import render
from shared.workflow import workflow_named
from state.rules.session_store import Store

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "roles")
ROLES = ("architect", "developer", "technical-writer", "quality-reviewer")


def role_prompt(role: str, store: Store) -> str:
    session = store.read("session")
    workflow = workflow_named(session["workflow"])
    phase = workflow.step(session["step"]).phase or ""
    iteration = qr.loop_of(session, phase)["iteration"] if phase else 1
    variables = {
        "task": session["task"],
        "workflow": session["workflow"],
        "state_dir": store.dir,
        "phase": phase,
        "iteration": iteration,
        "blocking": ", ".join(qr.blocking_severities(iteration)),
    }
    return render(f"{role}.j2", variables, [HERE, SHARED_TEMPLATES]).strip()
