"""plan.md: the plan rendered for people from plan.json (never edited by hand)."""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")


def render_plan(plan: dict[str, Any]) -> str:
    from shared.render import render

    return render("plan.md.j2", {"plan": plan}, [TEMPLATES]).strip() + "\n"
