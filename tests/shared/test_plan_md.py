"""plan.md is the document a person approves: every section it needs, diffs in
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


def option(**fields: object) -> dict:
    return {"description": "", "pros": [], "cons": [], "recommended": False, **fields}


def test_what_was_agreed_reads_as_agreed() -> None:
    """An answer with its condition, a choice's fields on their own lines, a constraint
    recorded twice shown once, a fixed finding as fixed, a round's hash."""
    context = b.context()
    context["questions"][0]["condition"] = "the error message says why"
    context["constraints"].append("Constraint 1.")  # what C-001 records with an id
    plan = sample()
    plan["planning_context"]["choices"] = [
        b.choice(
            1,
            picked="OPT-A",
            rationale="simplest",
            options=[
                option(id="OPT-A", name="Direct", description="Do it directly", pros=["safe"]),
                option(id="OPT-B", name="Queue", cons=["slow", "more code"]),
            ],
        )
    ]
    report = b.qr_report()
    report["items"][1].update(status="PASS")  # fixed in round 2; its finding is history
    session = b.rich_session()
    session["reviews"][0]["sha256"] = "b" * 64
    text = render_plan(plan, context, session, {"plan-design": report})
    said = "Question 1? Answer: yes (condition: the error message says why)"
    assert f"**Q-001** {said}" in text and f"  - From Q-001: {said}" in text
    assert "  - Picked: OPT-A Direct. Do it directly.\n    - Pros: safe.\n" in text
    assert "  - Not picked: OPT-B Queue\n    - Cons: slow; more code.\n" in text
    assert "  - Why: simplest." in text
    assert "  - Why: Reasoning for decision 1." in text
    assert text.count("Constraint 1") == 1 and "- MUST keep greet." in text
    assert (
        "qa-002 SHOULD PASS [R-001] risks mitigated -- fixed (earlier finding: no mitigation)"
        in text
    )
    assert "(it showed sha256 bbbbbbbbbbbb…)" in text


def test_a_picked_choice_shows_once_and_superseded_refs_say_so() -> None:
    """A choice picked through `plan ask` is one entry (its DL is named, not repeated); an
    intent citing a superseded decision names the decision now in force; conditions that
    start with a conjunction still read."""
    context = b.context()
    context["questions"][0]["condition"] = "and print the extra keys to stderr"
    plan = sample()
    ctx = plan["planning_context"]
    ctx["decision_log"] = b.plan(
        decisions=[
            b.decision(1, question_refs=["Q-001"], superseded_by="DL-002", superseded_reason="No"),
            b.decision(2, superseded_by="DL-003", superseded_reason="Again."),
            b.decision(3),
            b.decision(4, decision="Topic 1: Direct", reasoning_chain="since jq. Pros: safe."),
        ]
    )["planning_context"]["decision_log"]
    ctx["choices"] = [
        b.choice(
            1,
            picked="OPT-A",
            rationale="since jq",
            decision_ref="DL-004",
            options=[
                option(id="OPT-A", name="Direct", pros=["safe"]),
                option(id="OPT-B", name="Q"),
            ],
        )
    ]
    plan["milestones"][0]["code_intents"][0]["decision_refs"] = ["DL-001", "DL-003"]
    text = render_plan(plan, context, b.session())
    assert "Answer: yes (condition: and print the extra keys to stderr)" in text
    assert ", but and" not in text
    assert "**DL-004**" not in text and "**D-001** Choice: Topic 1 (decided as DL-004)" in text
    assert text.count("Pros: safe") == 1
    assert "(DL-001, superseded by DL-003; DL-003)" in text


def test_a_new_file_diff_names_both_sides(tmp_path) -> None:
    from state.repo.worktree import make_diff
    from tests.conftest import git

    git(tmp_path, "init", "-q")
    created = make_diff(str(tmp_path), "src/new.py", None, "x = 1\n")
    assert created.startswith("diff --git a/src/new.py b/src/new.py\nnew file mode")
    assert "--- /dev/null\n+++ b/src/new.py\n" in created
    deleted = make_diff(str(tmp_path), "src/old.py", "x = 1\n", None)
    assert deleted.startswith("diff --git a/src/old.py b/src/old.py\n")
    assert "--- a/src/old.py\n+++ /dev/null\n" in deleted


def test_the_summary_counts_every_change_of_a_file_together() -> None:
    """Two code changes of one file (a re-worked milestone): the summary's `+N -M` is theirs
    together, not the last one's."""
    from shared.plan_md import summary

    one = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n"
    two = "--- a/src/app.py\n+++ b/src/app.py\n@@ -9 +9,3 @@\n x\n+a\n+b\n"
    changes = [b.change(1, "CI-001", one), b.change(2, "CI-002", two)]
    plan = b.plan(milestones=[b.milestone(1, files=["src/app.py"], code_changes=changes)])
    assert "  M-001 Milestone 1: src/app.py +3 -1" in summary(plan)
