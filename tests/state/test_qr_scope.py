"""state.ops.qr_ops.unjudged: the milestones no reviewer item of a phase judged; a PASS stands
only for the milestones it recorded, as they were when it passed."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from state.ops.qr_ops import milestone_hashes, unjudged
from tests.state import builders as b

MILESTONES = [
    b.milestone(1, code_intents=[b.intent(1, file="src/app.py")]),
    b.milestone(2, is_documentation_only=True, code_intents=[b.intent(2, file="README.md")]),
    b.milestone(3, code_intents=[b.intent(3, file="src/cli.py")]),
]
PLAN: Any = b.plan(milestones=MILESTONES)


def item(
    scope: str, status: str = "PASS", milestones: list[str] | dict[str, str] | None = None
) -> Any:
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


EDITS: dict[str, Any] = {
    "name": "Renamed",
    "acceptance_criteria": ["it waves"],
    "tests": {**MILESTONES[0].get("tests", {}), "files": ["tests/test_cli.py"]},
    "code_intents": [b.intent(3, file="src/cli.py", behavior="Other")],
    "code_changes": [b.change(9, "CI-003", file="src/cli.py", diff="+x")],
    "documentation": {"module_comment": "Says goodbye."},
}
SEEN = {  # what each planning phase judges of a milestone (qr_ops.of_phase)
    "plan-design": {"name", "acceptance_criteria", "tests", "code_intents"},
    "plan-code": {"tests", "code_intents", "code_changes"},
    "plan-docs": {"code_intents", "code_changes", "documentation"},
}


@given(
    st.sampled_from(sorted(SEEN)),
    st.sampled_from(["*", "M-003", "CI-003", "src/cli.py"]),
    st.lists(st.sampled_from(sorted(EDITS)), unique=True),
)
def test_a_pass_stands_for_a_milestone_while_it_holds_what_was_judged(
    phase: str, scope: str, edited: list[str]
) -> None:
    judged = milestone_hashes(PLAN, phase)  # type: ignore[arg-type]
    kept = {m: h for m, h in judged.items() if scope == "*" or m == "M-003"}
    now = copy.deepcopy(PLAN)
    for key in edited:
        base = now["milestones"][2][key]
        now["milestones"][2][key] = {**base, **EDITS[key]} if isinstance(base, dict) else EDITS[key]
    both = [item(scope, milestones=kept), item("M-001"), item("M-002")]
    changed = any(key in SEEN[phase] for key in edited)
    assert unjudged(now, both, phase) == (["M-003"] if changed else [])
    assert unjudged(now, [{**both[0], "status": "TODO"}, *both[1:]], phase) == []  # open: judged
