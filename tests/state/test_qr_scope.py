"""state.ops.qr_ops.unjudged: the milestones no reviewer item of a phase judged; a phase-wide
PASS stands only for the milestones it recorded."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from state.ops.qr_ops import unjudged
from tests.state import builders as b

MILESTONES = [
    b.milestone(1, code_intents=[b.intent(1, file="src/app.py")]),
    b.milestone(2, is_documentation_only=True, code_intents=[b.intent(2, file="README.md")]),
    b.milestone(3, code_intents=[b.intent(3, file="src/cli.py")]),
]
PLAN: Any = b.plan(milestones=MILESTONES)


def item(scope: str, status: str = "PASS", milestones: list[str] | None = None) -> Any:
    return {"id": "qa-001", "check": "c", "scope": scope, "severity": "MUST", "status": status,
            "finding": None, "source": "reviewer", "iteration": 1, "judged": None,
            "milestones": milestones}  # fmt: skip


def test_a_phase_wide_pass_stands_for_what_it_recorded_and_an_open_one_for_all() -> None:
    assert unjudged(PLAN, [item("*", milestones=["M-001"])]) == ["M-002", "M-003"]
    assert unjudged(PLAN, [item("*", milestones=None)]) == []  # recorded before the field
    assert unjudged(PLAN, [item("*", "TODO", ["M-001"])]) == []  # it judges all once it passes
    found = unjudged(PLAN, [item("*", milestones=["M-001"]), item("README.md")])
    assert found == ["M-003"]  # a file names the milestone its intent is in
    assert unjudged(PLAN, [item("*", milestones=["M-001"]), item("CI-003")]) == ["M-002"]


def test_the_code_phase_judges_no_documentation_only_milestone() -> None:
    assert unjudged(PLAN, [item("src/app.py"), item("M-003")], "plan-code") == []
    assert unjudged(PLAN, [item("src/app.py"), item("M-003")], "plan-docs") == ["M-002"]


@given(st.lists(st.sampled_from(["M-001", "M-002", "M-003", "CI-001", "src/cli.py", "x"])))
def test_a_scoped_item_covers_exactly_the_milestones_it_names(scopes: list[str]) -> None:
    named = {"M-001": "M-001", "M-002": "M-002", "M-003": "M-003", "CI-001": "M-001",
             "src/cli.py": "M-003"}  # fmt: skip
    covered = {named[s] for s in scopes if s in named}
    expected = [m["id"] for m in MILESTONES if m["id"] not in covered]
    assert unjudged(PLAN, [item(s) for s in scopes]) == expected
