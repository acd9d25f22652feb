"""What an agent pays, round 2 (issue 19): the user's words once, feedback routed to the
smallest phase, one call per gate, a compact plan.md, every change said in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent import Agent, Output
from tests.workflows.helpers import DESIGN, add_farewell_change, review, start, state_of

README_DIFF = """\
--- a/README.md
+++ b/README.md
@@ -1 +1,3 @@
 # Demo
+
+`farewell(name)` says goodbye.
"""

DOCS = [
    {
        "op": "milestone add",
        "args": {"name": "Document farewell", "file": ["README.md"], "doc_only": True},
    },
    {
        "op": "intent add",
        "args": {"milestone": "$1", "file": "README.md", "behavior": "README says farewell()"},
    },
]


def interactive(project: Path) -> tuple[Agent, Output]:
    """An interactive session at step 3 with one answered question."""
    (project / "pyproject.toml").write_text("[tool.planner]\nquestions_min = 1\n")
    agent = Agent(project, env={})
    out = agent.step("planner --step 1 --task 'Add a farewell'")  # prints step 2 too
    agent.plan("context", "set", "--goal", "say goodbye")
    questions = [{"category": "scope", "kind": "text", "text": "Who says it?", "why": "w"}]
    agent.plan("question", "import", "-", input=json.dumps(questions))
    agent.plan("question", "answer", "Q-001", "the app")
    out = agent.step(out.route())  # 2 again, then 3
    return agent, agent.step(out.route()) if out.header.startswith("PLANNER 2/") else out


def to_review(project: Path) -> tuple[Agent, Output]:
    """An interactive session in review: a code change (CC-001) and a README change (CC-002);
    the code review passed one item on src/app.py and one on the whole phase."""
    agent, out = interactive(project)
    agent.apply(DESIGN)
    agent.apply(DOCS)
    out = agent.step(out.route())  # 4
    review(agent, "plan-design")
    out = agent.step(out.route("pass"))  # 5, which prints 6
    state = state_of(out)
    add_farewell_change(agent, state)
    (state / "readme.diff").write_text(README_DIFF)
    agent.plan(
        "change", "add", "--intent", "CI-002", "--file", "README.md",
        "--diff", str(state / "readme.diff"),
    )  # fmt: skip
    out = agent.step(out.route())  # 7
    agent.apply(
        [
            {
                "op": "qr add",
                "args": {"phase": "plan-code", "check": "diff", "scope": "src/app.py"},
            },
            {"op": "qr set", "args": {"id": "$1", "phase": "plan-code", "status": "PASS"}},
        ]
    )
    review(agent, "plan-code")
    out = agent.step(out.route("pass"))  # 8, which prints 9
    out = agent.step(out.route())  # 10
    review(agent, "plan-docs")
    out = agent.step(out.route("pass"))  # 11: in review
    assert out.if_pass and out.if_pass.startswith("plan review approve")
    return agent, out


def report(out: Output, phase: str) -> dict:
    return {
        i["id"]: i for i in json.loads((state_of(out) / f"qr-{phase}.json").read_text())["items"]
    }


def loops(out: Output) -> dict:
    return json.loads((state_of(out) / "session.json").read_text())["qr"]


@pytest.mark.parametrize(
    ("words", "step"),
    [
        (["--comment", "CC-002:3: credit ann"], 9),  # the README diff: documentation
        (["--comment", "CI-002: say more"], 9),  # an intent of the documentation-only milestone
        (["--comment", "CC-001:4: use an f-string"], 6),  # a code diff
        (["--comment", "DL-001: why mirror it?"], 3),  # a decision
        (["--comment", "CC-002:3: x", "--comment", "CC-001:4: y"], 6),  # the earlier phase
        (["--feedback", "not like this", "--comment", "CC-002:3: x"], 3),  # nothing anchored
    ],
)
def test_a_rejection_goes_to_the_smallest_phase_it_touches(
    project: Path, words: list[str], step: int
) -> None:
    agent, _ = to_review(project)
    rejected = agent.plan("review", "reject", *words)
    assert f"NEXT: planner --step {step} " in rejected.stderr
    assert "rejected (round 1): back to plan-" in rejected.stderr
    status = json.loads(agent.shell("planner status --json").stdout)
    assert status["next"].startswith(f"NEXT: planner --step {step} ")
    said = agent.shell("plan status").stdout  # the step last run, then where it goes next
    assert ", last ran planner step 11\n" in said
    assert f"NEXT: planner --step {step} " in said
    arrived = agent.step(rejected.stderr.split("NEXT: ", 1)[1].strip())
    assert arrived.header.startswith(f"PLANNER {step}/11")
    assert words[-1].rsplit(": ", 1)[-1] in arrived.text  # the user's new words, whole


def test_unchanged_reviews_keep_their_pass_and_earlier_phases_keep_their_loops(
    project: Path,
) -> None:
    agent, out = to_review(project)
    code_before = report(out, "plan-code")
    agent.plan("review", "reject", "--comment", "CC-002:3: credit ann")
    assert loops(out)["plan-design"]["state"] == "complete"  # not revisited
    assert loops(out)["plan-code"]["state"] == "complete"
    assert loops(out)["plan-docs"]["state"] == "initial"
    assert report(out, "plan-code") == code_before  # every code item keeps its PASS
    docs = [i for i in report(out, "plan-docs").values() if i["source"] == "reviewer"]
    assert [(i["scope"], i["status"]) for i in docs] == [("*", "PASS"), ("CC-002", "TODO")]
    assert "comment (review round 1)" in docs[1]["check"]  # the person's comment, to judge


def test_a_code_rejection_reopens_only_the_items_whose_scope_changes(project: Path) -> None:
    agent, out = to_review(project)
    agent.plan("review", "reject", "--comment", "CC-001:4: use an f-string")
    code = report(out, "plan-code")
    on_file = next(i for i in code.values() if i["scope"] == "src/app.py")
    whole = next(i for i in code.values() if i["scope"] == "*" and i["source"] == "reviewer")
    assert on_file["status"] == "PASS" and whole["status"] == "PASS"  # nothing changed yet
    comment = next(i for i in code.values() if i["scope"] == "CC-001")
    assert comment["status"] == "TODO"  # the person's comment, judged in the rework
    assert loops(out)["plan-design"]["state"] == "complete"
    agent.plan("intent", "set", "CI-001", "--behavior", "Return f'bye {name}'")
    assert report(out, "plan-code")[on_file["id"]]["status"] == "TODO"  # its scope changed


def test_the_users_words_whole_once_and_when_they_change(project: Path) -> None:
    agent, design = interactive(project)
    assert "The user's words (hold to them):" in design.text and "the app" in design.text
    agent.apply(DESIGN)
    qr = agent.step(design.route())
    line = "The user's words (Q-001) unchanged since step 3: plan show --answers"
    assert line in qr.text and "the app" not in qr.text
    assert agent.step(design.route()).text == qr.text  # a re-render shows the same
    agent.plan("question", "answer", "Q-001", "the user")
    changed = agent.step(design.route())
    assert "the user" in changed.text and "unchanged" not in changed.text
    shown = agent.plan("show", "--answers").stdout
    assert "Q-001 Who says it? -> the user" in shown
    assert (
        json.loads(agent.plan("show", "--answers", "--json").stdout)["answers"][0]["id"] == "Q-001"
    )
    review(agent, "plan-design")
    code = agent.step(qr.route("pass"))  # 6: whole, as no arrival showed the change (re-renders
    assert code.header.startswith("PLANNER 6/11") and "the user" in code.text  # record nothing)
    add_farewell_change(agent, state_of(code))
    code_qr = agent.step(code.route())  # 7: a phase's review, the words unchanged since 6
    assert "The user's words (Q-001) unchanged since step 6: plan show --answers" in code_qr.text
    review(agent, "plan-code")
    docs = agent.step(code_qr.route("pass"))  # 9: a phase starts, the words unchanged: one line
    assert docs.header.startswith("PLANNER 9/11") and "the user" not in docs.text
    assert "The user's words (Q-001) unchanged since step 6: plan show --answers" in docs.text


def test_a_gate_prints_the_next_step_and_json_keeps_one_object(project: Path) -> None:
    agent, out = start(project)
    agent.apply(DESIGN)
    out = agent.step(out.route())
    review(agent, "plan-design")
    gate = agent.shell(out.route("pass") + " --format json").stdout
    record = json.loads(gate)
    assert record["step"] == 6 and record["name"] == "plan-code-execute"
    assert record["next"].startswith("planner --step 7")
    assert record["gate"]["step"] == 5 and record["gate"]["verdict"] == "pass"
    assert "passed" in record["gate"]["prompt"]
    session = json.loads((state_of(out) / "session.json").read_text())
    assert session["step"] == 6 and session["reached"]["planner"] == 6
    audit = (state_of(out) / "audit.jsonl").read_text()
    again = json.loads(agent.shell(out.route("pass") + " --format json").stdout)
    assert again == record  # the same call again: nothing recorded, the same answer
    assert (state_of(out) / "audit.jsonl").read_text() == audit


def test_plan_render_is_compact_for_the_agent_and_plan_md_whole(project: Path) -> None:
    agent, out = to_review(project)
    compact = agent.plan("render").stdout
    assert "```diff" not in compact
    assert "**CC-001** for CI-001, `src/app.py` +3 -0" in compact
    assert "**CC-002** for CI-002, `README.md` +2 -0" in compact
    full = agent.plan("render", "--full").stdout
    assert "```diff" in full and "+def farewell(name):" in full
    assert (state_of(out) / "plan.md").read_text() == full
    assert len(compact) < len(full)


def test_every_change_says_what_in_one_line(project: Path) -> None:
    agent, _ = start(project)
    added = agent.plan("context", "add", "assumptions", "Python 3.11")
    assert added.stderr == "plan context add: recorded\n"
    applied = agent.plan(
        "apply", "-",
        input=json.dumps([{"op": "context add", "args": {"field": "constraints", "text": "x"}}]),
    )  # fmt: skip
    assert "plan apply: 1 recorded: context add" in applied.stderr


def test_a_choice_answer_takes_option_and_rationale() -> None:
    from cli.commands.discovery import reason

    assert reason(" because it is simpler") == "it is simpler"
    assert reason(": keeps it small") == "keeps it small"
    assert reason("") == ""


def test_design_shows_discoverys_constraints_and_plan_md_lists_each_once(project: Path) -> None:
    agent, out = start(project)
    agent.plan("context", "add", "constraints", "Runs on Python 3.8")
    design = agent.step(f"planner --step 3 --state-dir '{state_of(out)}'")  # a re-render
    assert "source) only new ones:\n  - Runs on Python 3.8" in design.text
    assert '{"op": "constraint add"' not in design.text  # one list: discovery's
    assert "  - Runs on Python 3.8" in design.text
    constraint = {"type": "technical", "description": "Runs on Python 3.8", "source": "user"}
    agent.apply([*DESIGN, {"op": "constraint add", "args": constraint}])
    plan_md = agent.plan("render").stdout
    assert plan_md.count("Runs on Python 3.8") == 1 and "**C-001** technical" in plan_md


def test_step_11_summarises_the_plan_for_the_person(project: Path) -> None:
    from tests.cli.review_helpers import to_review

    agent, out = to_review(project)
    summary = agent.plan("render", "--summary").stdout
    assert summary.splitlines()[0].startswith(("Farewell: ", "The plan: "))
    assert "  M-001 " in summary and "src/app.py +" in summary
    assert summary in out.text  # the step shows the same lines
    assert len(summary) < 1000 and "@@" not in summary  # no diff
    assert "plan render" not in out.text.split("Review round 1")[1].split("Both verdicts")[0]


def test_questions_asked_in_the_chat_are_imported_with_their_answers(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.planner]\nquestions_min = 2\n")
    agent = Agent(project, env={})
    out = agent.step("planner --step 1 --task 'Add a farewell'")
    asked = [
        {"category": "scope", "kind": "choice", "text": "Where?", "why": "w",
         "options": ["app", "cli"], "recommended": 1, "answer": "2, but only for admins"},
        {"category": "scope", "kind": "text", "text": "Who says it?", "why": "w",
         "answer": "the app"},
    ]  # fmt: skip
    wrong = [{**asked[0], "text": "Else?", "answer": "3"}]
    refused = agent.shell("plan apply -", input=json.dumps(
        [{"op": "question import", "args": {"source": wrong}}]), code=2)  # fmt: skip
    assert "3 is not an option number" in refused.stderr
    agent.apply(
        [
            {"op": "context set", "args": {"goal": "say goodbye"}},
            {"op": "question import", "args": {"source": asked}},
        ]
    )
    shown = agent.plan("show", "--answers").stdout
    assert "Q-001 Where? -> cli" in shown and "only for admins" in shown
    assert "Q-002 Who says it? -> the app" in shown and "Else?" not in shown
    assert agent.step(out.route()).header.startswith("PLANNER 3/11")  # nothing left to ask
