"""The CLI defects two agent trials and a person at a terminal hit (issue 12), one test each."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Plan

STORE_CHOICE = [
    "choice",
    "add",
    "--topic",
    "Store",
    "--option-json",
    '{"name": "sqlite", "recommended": true}',
    "--option-json",
    '{"name": "postgres", "cons": ["a server"]}',
]


def test_choice_add_prints_the_option_ids_with_the_choice(plan: Plan) -> None:
    assert plan.ids(*STORE_CHOICE) == ["D-001", "D-001/OPT-A", "D-001/OPT-B"]
    assert plan.json(*STORE_CHOICE)["ids"] == ["D-002", "D-002/OPT-A", "D-002/OPT-B"]
    # the printed form is what choice pick takes
    assert plan.ids("choice", "pick", "D-001/OPT-B", "--rationale", "ops has one") == [
        "DL-001",
        "RA-001",
    ]
    assert plan.ids("choice", "pick", "D-002", "OPT-A", "--rationale", "simple")[0] == "DL-002"
    assert "D-n/OPT-X" in plan("choice", "pick", "D-001", "--rationale", "r", code=2).stderr


@pytest.mark.parametrize(
    "args, changed",
    [
        (["overview", "set", "--title", "T"], "overview"),
        (["context", "set", "--goal", "G"], "context"),
        (["decision", "set", "DL-001", "--reasoning", "better"], "DL-001"),
        (["question", "answer", "Q-001", "yes"], "Q-001"),
        (["milestone", "set", "M-001", "--name", "N"], "M-001"),
        (["doc", "set", "--milestone", "M-001", "--module-comment", "c"], "M-001"),
        (["qr", "set", "qa-001", "--phase", "plan-design", "--status", "PASS"], "qa-001"),
    ],
)
def test_set_and_answer_print_the_id_they_changed(
    plan: Plan, args: list[str], changed: str
) -> None:
    plan("decision", "add", "--decision", "d", "--reasoning", "r")
    plan("question", "add", "--category", "scope", "--kind", "yes_no", "--text", "Q?")
    plan("milestone", "add", "--name", "M")
    plan("qr", "add", "--phase", "plan-design", "--check", "c")
    assert plan.ids(*args) == [changed]


def test_plan_show_reads_questions_choices_options_context_and_review_items(plan: Plan) -> None:
    plan("question", "add", "--category", "scope", "--kind", "yes_no", "--text", "Wave too?")
    plan(*STORE_CHOICE)
    plan("context", "set", "--goal", "Say goodbye")
    plan("qr", "add", "--phase", "plan-design", "--check", "decisions cite questions")
    plan("qr", "add", "--phase", "plan-code", "--check", "diffs apply")
    assert plan.json("show", "Q-001")["text"] == "Wave too?"
    assert plan.json("show", "D-001")["topic"] == "Store"
    assert plan.json("show", "D-001/OPT-B")["name"] == "postgres"
    assert plan.json("show", "context")["task_spec"]["goal"] == "Say goodbye"
    item = plan.json("show", "qa-001", "--phase", "plan-code")
    assert (item["phase"], item["check"]) == ("plan-code", "diffs apply")
    assert "give --phase" in plan("show", "qa-001", code=2).stderr
    assert "no review item qa-009" in plan("show", "qa-009", code=2).stderr
    assert "has no option OPT-C" in plan("show", "D-001/OPT-C", code=2).stderr
    assert "Q-, qa-, or context" in plan("show", "X-001", code=2).stderr
