"""plan.md: the plan rendered for people from plan.json (never edited by hand)."""

from __future__ import annotations

import os
from typing import Any

from shared.render import render

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")


def render_plan(plan: dict[str, Any], reviews: list[dict[str, Any]] | None = None) -> str:
    """plan.md; `reviews` (session.json's rounds) adds the review section with the feedback."""
    decided = [r for r in reviews or [] if r["verdict"] != "submitted"]
    return render("plan.md.j2", {"plan": plan, "reviews": decided}, [TEMPLATES]).strip() + "\n"
