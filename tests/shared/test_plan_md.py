"""plan.md is the document a person approves (PRODUCT.md §12): every section it needs, diffs in
the order they apply, sentences never doubled, the approval only on a frozen plan."""

from __future__ import annotations

from shared.plan_md import render_plan
from shared.render import sentence
from tests.state import builders as b

SECTIONS = (
    "Task: Add a farewell",
    "Goal: say bye.",
    "In scope: app.",
    "Out of scope: i18n.",
    "## Problem",
    "## Approach",
    "## Constraints",
    "## Questions and answers",
    "**Q-001** Question 1? Answer: yes",
    "## Decisions",
    "From Q-001: Question 1? Answer: yes",  # a decision citing a question shows its text
    "Rejected **RA-001** Alternative 1: too complex.",
    "## Risks",
    "## Milestones",
    "Accepted when: farewell('x') == 'bye x'",
    "Tests: tests/test_app.py (unit)",
    "```diff",
    "Mirrors greet().",  # the change's --why text
    "## Review",
    "### Findings: plan-design (iteration 2)",
    "qa-002 SHOULD FAIL [R-001] risks mitigated -- no mitigation",
    "### Approval",
)


def sample(**plan_fields: object) -> dict:
    return b.plan(
        overview={"title": "Farewell", "problem": "No goodbye.", "approach": "Add farewell()."},
        decisions=[b.decision(1, question_refs=["Q-001"])],
        alternatives=[b.alternative(1)],
        constraints=[b.constraint(1)],
        risks=[b.risk(1, risk="Names up to 1000.", mitigation="Tests cover 1000.")],
        milestones=[
            b.milestone(
                1,
                acceptance_criteria=["farewell('x') == 'bye x'"],
                tests={"files": ["tests/test_app.py"], "type": "unit"},
                code_intents=[b.intent(1)],
                code_changes=[b.change(1, "CI-001", diff=DIFF, why_comments=["Mirrors greet()."])],
            )
        ],
        **plan_fields,
    )


DIFF = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1,2 @@\n x\n+y\n"


def test_plan_md_holds_every_section_a_person_approves() -> None:
    text = render_plan(sample(), b.context(), b.rich_session(), {"plan-design": b.qr_report()})
    for section in SECTIONS:
        assert section in text, section
    assert "Not approved yet." in text  # not frozen: the session's approval is not shown
    frozen = render_plan(
        sample(frozen_at=b.LATER), b.context(), b.rich_session(), {"plan-design": b.qr_report()}
    )
    assert f"Approved by user at {b.LATER}; sha256 {'a' * 64}." in frozen


def test_sentences_are_never_doubled() -> None:
    text = render_plan(sample(), b.context(), b.session())
    assert "Names up to 1000. Mitigation: Tests cover 1000." in text
    assert ".." not in text.replace("...", "")
    assert sentence("1000.") == "1000." and sentence("no period") == "no period."
    assert sentence("Why?") == "Why?" and sentence("") == ""


def test_diffs_come_in_apply_order() -> None:
    """M-001 depends on M-002: M-002's diff applies first, so plan.md shows it first."""
    plan = b.plan(
        milestones=[
            b.milestone(1, depends_on=["M-002"], code_changes=[b.change(1, "CI-001", DIFF)]),
            b.milestone(2, code_changes=[b.change(2, "CI-002", DIFF), b.change(3, "CI-003", DIFF)]),
        ],
        milestone_dependencies={
            "waves": [{"wave": 1, "milestones": ["M-002"]}, {"wave": 2, "milestones": ["M-001"]}]
        },
    )
    text = render_plan(plan)
    assert text.index("**CC-002**") < text.index("**CC-003**") < text.index("**CC-001**")
    assert text.index("### M-002") < text.index("### M-001")
