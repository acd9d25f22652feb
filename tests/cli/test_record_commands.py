"""What the recording commands print and change: the ids they made or changed, `plan show`
of every record, `qr add` with its verdict, a pass reset when what it judged changes,
`milestone set`, phase names, the option that swallowed the next, `apply --help`."""

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
        (["doc", "set", "M-001", "--module-comment", "c"], "M-001"),
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
    item = plan.json("show", "qa-002")  # ids run across the phases
    assert (item["phase"], item["check"]) == ("plan-code", "diffs apply")
    # a session from before numbered each phase from qa-001: --phase says which
    code = next(plan.cwd.glob(".planner/*/qr-plan-code.json"))
    code.write_text(code.read_text().replace("qa-002", "qa-001"))
    assert plan.json("show", "qa-001", "--phase", "plan-code")["check"] == "diffs apply"
    assert "--phase: qa-001 is in several phases" in plan("show", "qa-001", code=2).stderr
    assert "no review item qa-009" in plan("show", "qa-009", code=2).stderr
    assert "has no option OPT-C" in plan("show", "D-001/OPT-C", code=2).stderr
    assert "Q-, qa-, or context" in plan("show", "X-001", code=2).stderr


def farewell_change(plan: Plan, project_diff: str) -> None:
    plan("milestone", "add", "--name", "Farewell", "--file", "src/app.py")
    plan("intent", "add", "--milestone", "M-001", "--file", "src/app.py", "--behavior", "bye")
    plan("change", "add", "--intent", "CI-001", "--file", "src/app.py", "--diff", "-",
         input=project_diff)  # fmt: skip


DIFF = """--- a/src/app.py
+++ b/src/app.py
@@ -1,2 +1,5 @@
 def greet(name):
     return 'hi ' + name
+
+def farewell(name):
+    return '{word} ' + name
"""


def test_qr_add_records_the_verdict_in_one_command(plan: Plan) -> None:
    assert plan.ids(
        "qr", "add", "--phase", "plan-code", "--check", "c", "--status", "FAIL",
        "--finding", "wrong file",
    ) == ["qa-001"]  # fmt: skip
    item = plan.json("show", "qa-001")
    assert (item["status"], item["finding"]) == ("FAIL", "wrong file")
    done = plan("qr", "add", "--phase", "plan-code", "--check", "c", "--status", "FAIL", code=2)
    assert "--finding is required with status FAIL" in done.stderr
    batch = [
        {"op": "qr add", "args": {"phase": "plan-code", "check": "d", "status": "PASS"}},
        {"op": "qr set", "args": {"id": "qa-001", "phase": "plan-code", "status": "PASS"}},
    ]
    assert plan.ids("apply", "-", input=json.dumps(batch)) == ["qa-002"]
    assert [i["status"] for i in plan.json("qr", "show", "--phase", "plan-code")["items"]] == [
        "PASS",
        "PASS",
    ]


def statuses(plan: Plan, phase: str) -> dict[str, str]:
    return {i["id"]: i["status"] for i in plan.json("qr", "show", "--phase", phase)["items"]}


def test_a_pass_goes_back_to_todo_when_what_it_judged_changes(plan: Plan) -> None:
    farewell_change(plan, DIFF.format(word="bye"))
    plan("decision", "add", "--decision", "d", "--reasoning", "r")
    for scope in ("CC-001", "src/app.py", "M-001", "CI-001", "DL-001", "*"):
        plan("qr", "add", "--phase", "plan-code", "--check", "ok", "--scope", scope,
             "--status", "PASS")  # fmt: skip
    plan("qr", "add", "--phase", "plan-design", "--check", "ok", "--scope", "CC-001")
    plan("qr", "set", "qa-007", "--phase", "plan-design", "--status", "PASS")  # after code's 6
    plan("decision", "set", "DL-001", "--reasoning", "unrelated to the change")
    assert statuses(plan, "plan-code")["qa-005"] == "TODO"  # DL-001 itself changed
    plan("qr", "set", "qa-005", "--phase", "plan-code", "--status", "PASS")

    done = plan("change", "set", "CC-001", "--diff", "-", input=DIFF.format(word="ciao"))
    assert "qa-001 (plan-code) is TODO again: CC-001 changed after it passed" in done.stderr
    assert statuses(plan, "plan-code") == {
        "qa-001": "TODO",  # the change
        "qa-002": "TODO",  # its file
        "qa-003": "TODO",  # its milestone
        "qa-004": "TODO",  # its intent
        "qa-005": "PASS",  # a decision it does not touch
        "qa-006": "PASS",  # * is not tracked
    }
    assert statuses(plan, "plan-design") == {"qa-007": "TODO"}  # every phase that passed it
    # judged again: PASS stays until the next change
    plan("qr", "set", "qa-001", "--phase", "plan-code", "--status", "PASS")
    plan("overview", "set", "--title", "Farewell")
    assert statuses(plan, "plan-code")["qa-001"] == "PASS"


def test_milestone_set_edits_one_requirement_criterion_or_file(plan: Plan) -> None:
    plan("milestone", "add", "--name", "M", "--requirement", "one", "--requirement", "tow",
         "--requirement", "three", "--acceptance", "a", "--file", "x.py")  # fmt: skip
    plan("milestone", "set", "M-001", "--remove-requirement", "2", "--add-requirement", "two",
         "--add-acceptance", "b", "--remove-file", "1", "--add-file", "y.py")  # fmt: skip
    m = plan.json("show", "M-001")
    assert m["requirements"] == ["one", "three", "two"]
    assert (m["acceptance_criteria"], m["files"]) == (["a", "b"], ["y.py"])
    done = plan("milestone", "set", "M-001", "--remove-acceptance", "3", code=2)
    assert "--remove-acceptance '3': not a position (from 1) or an entry of M-001's" in done.stderr
    plan("milestone", "set", "M-001", "--requirement", "only")  # still replaces the list
    assert plan.json("show", "M-001")["requirements"] == ["only"]


def test_phase_names_are_accepted_in_both_spellings(plan: Plan) -> None:
    plan("qr", "add", "--phase", "code", "--check", "c")
    assert plan.json("qr", "show", "--phase", "plan-code")["items"][0]["check"] == "c"
    assert plan.json("show", "qa-001", "--phase", "code")["phase"] == "plan-code"
    short = plan("validate", "--phase", "design", code=3).stdout
    assert plan("validate", "--phase", "plan-design", code=3).stdout == short
    assert "plan-design" in plan("qr", "add", "--help").stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["decision", "add", "--decision", "--reasoning", "x"], "--decision took --reasoning"),
        (["milestone", "add", "--name", "M", "--file", "--doc-only"], "--file took --doc-only"),
        (["qr", "add", "--phase", "--check=c"], "--phase took --check=c"),
    ],
)
def test_a_usage_error_names_the_option_that_swallowed_the_next(
    plan: Plan, args: list[str], message: str
) -> None:
    done = plan(*args, code=2)
    assert f"{message} as its value" in done.stderr
    assert plan.ids("decision", "add", "--decision=--reasoning", "--reasoning", "r") == ["DL-001"]


def test_apply_help_lists_every_operation_and_its_argument_keys(plan: Plan) -> None:
    from click.testing import CliRunner

    from cli.commands.apply import operations
    from cli.main import plan as root

    text = plan("apply", "--help").stdout
    assert "constraint add      type*, description*, source" in text
    assert "milestone set" in text and "add_requirement[]" in text
    import click

    every = operations(click.Context(root), root)
    assert len(every) > 30 and all(f"  {name} " in text for name in every)
    assert CliRunner().invoke(root, ["apply", "--help"]).exit_code == 0
    batch = [{"op": "constraint add", "args": {"constraint": "x"}}]
    done = plan("apply", "-", input=json.dumps(batch), code=2)
    assert "unknown argument 'constraint' (known: type, description, source)" in done.stderr


def test_a_picks_reason_ends_before_the_pros_and_the_outline_counts_read(plan: Plan) -> None:
    plan(
        "choice", "add", "--topic", "Format",
        "--option-json", '{"name": "compact", "pros": ["smallest output"], "recommended": true}',
        "--option-json", '{"name": "pretty"}',
    )  # fmt: skip
    plan("choice", "pick", "D-001/OPT-A", "--rationale", "since scripts compare against jq")
    reasons = plan.json("show", "DL-001")["reasoning_chain"]
    assert reasons == "since scripts compare against jq. Pros: smallest output."
    counts = plan("show").stdout.splitlines()[1]
    assert counts == "1 decision, 1 rejected alternative, 0 constraints, 0 risks, 1 choice"
