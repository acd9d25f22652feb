"""What an agent reads at a rework, round 3 (issue 32): after a rejection the step names the
commands that edit (no help calls needed) and each item to re-check with its check, and does
not print the first pass's skeleton again; the next review round shows what changed; fix mode
does not repeat the user's words; an amendment's code step says what to edit and capture."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.agent import Output
from tests.workflows.helpers import DESIGN, review
from tests.workflows.test_amend import approved_plan
from tests.workflows.test_cost import interactive, to_review

SKELETON = 'plan apply - <<\'EOF\'\n[{"op": "overview set"'


def rework(project: Path, *words: str) -> tuple[Output, Output]:
    """The plan in review is rejected with `words`; the rejection's output and the step it
    routes to."""
    agent, _ = to_review(project)
    rejected = agent.plan("review", "reject", *words)
    return Output(rejected.stderr), agent.step(rejected.stderr.split("NEXT: ", 1)[1].strip())


def test_the_design_rework_names_the_edits_and_prints_no_skeleton(project: Path) -> None:
    _, out = rework(project, "--comment", "DL-001: why mirror it?")
    assert out.header.startswith("PLANNER 3/11")
    assert SKELETON not in out.text and '"milestone tests"' not in out.text  # said at step 3
    for words in ("decision set DL-n", "milestone set M-n", "intent set CI-n", "--add-X T",
                  "--remove-X", "plan apply --help",
                  'overrule: plan question answer Q-n "other: NEW"'):  # fmt: skip
        assert words in out.text, words
    # the item to re-check, with what it checks, then the line that judges it
    said = r"^  (qa-\d+) \[DL-001\] the person's comment \(review round 1\) is addressed$"
    item = re.search(said, out.text, re.M)
    assert item, out.text
    assert f'{{"op": "qr set", "args": {{"id": "{item[1]}", "phase": "plan-design"' in out.text
    assert out.text.count("why mirror it?") == 1  # the words once, whole


@pytest.mark.parametrize(
    ("comment", "step", "phase"),
    [("CC-001:4: use an f-string", 6, "plan-code"), ("CC-002:3: credit ann", 9, "plan-docs")],
)
def test_the_code_and_docs_reworks_name_the_record_edits_and_the_check(
    project: Path, comment: str, step: int, phase: str
) -> None:
    _, out = rework(project, "--comment", comment)
    assert out.header.startswith(f"PLANNER {step}/11")
    assert "Records: plan intent set CI-n | milestone set M-n, with the options" in out.text
    said = 'capture --intent CI-n [FILE]... (test files too; plan apply: {"op": "change capture"'
    assert said in out.text
    anchor = comment.split(":", 1)[0]
    assert re.search(rf"^  qa-\d+ \[{anchor}\] the person's comment", out.text, re.M), out.text
    assert f'"phase": "{phase}", "status": "PASS|FAIL"' in out.text


def test_review_round_2_shows_what_changed_since_round_1(project: Path) -> None:
    agent, _ = to_review(project)
    first = agent.plan("render", "--summary").stdout
    rejected = agent.plan("review", "reject", "--comment", "DL-001: say why")
    out = agent.step(rejected.stderr.split("NEXT: ", 1)[1].strip())  # 3
    agent.plan("decision", "set", "DL-001", "--reasoning", "Same shape as greet()")
    qa = re.findall(r'"id": "(qa-\d+)", "phase": "plan-design"', out.text)
    agent.apply([{"op": "qr set", "args": {"id": i, "phase": "plan-design", "status": "PASS"}}
                 for i in qa])  # fmt: skip
    out = agent.step(out.route("pass"))  # 5, which prints 6: the code phase kept its items
    while not (out.if_pass or "").startswith("plan review approve"):
        nxt = out.next or out.if_pass
        assert nxt, out.text
        out = agent.step(nxt)
    said = r"what changed since round 1 \((r\d+), the plan it\nshowed: plan diff \1\)"
    assert re.search(said, out.text), out.text
    assert "~ DL-001" in out.text  # the decision they asked about, by meaning
    assert first.splitlines()[1] not in out.text  # not the whole summary again

    # the person at a terminal: what changed, then the plan with its diffs, and the verdict
    shown = agent.plan("review", "show").stdout
    rev = re.search(r"plan diff (r\d+)", out.text)
    assert rev, out.text
    since = f"Changed since review round 1 (each whole: plan diff {rev[1]}):\n  ~ DL-001"
    assert shown.startswith(f"Review round 2.\n{since}")
    assert "+def farewell(name):" in shown  # CC-001's diff, whole
    assert shown.rstrip().endswith("on a page: plan review open")
    # plan diff names what the revision is, and shows the content without bookkeeping
    diff = agent.plan("diff", rev[1]).stdout
    named = f"{rev[1]} (plan.json revision {rev[1][1:]}: what review round 1 showed) -> now:"
    assert diff.startswith(named)
    assert "reasoning_chain: " in diff and "timestamp" not in diff


def test_review_round_1_points_the_person_at_plan_review_show(project: Path) -> None:
    agent, out = to_review(project)
    assert "(in a terminal:\nplan review show)" in out.text
    listed = agent.plan("review", "--help").stdout
    assert "the person reads the plan with `plan review show`" in listed and "\n  show " in listed
    shown = agent.plan("review", "show").stdout
    lines = shown.splitlines()
    assert lines[0] == "Review round 1."  # nothing before it to compare with
    assert lines[1:] == lines[1 : 1 + len(lines) - 1]
    summary = agent.plan("render", "--summary").stdout.splitlines()
    assert [ln for ln in lines if ln in summary] == summary  # the summary, in its order
    for change in ("CC-001 src/app.py (CI-001):", "CC-002 README.md (CI-002):"):
        assert f"    {change}" in lines, shown
    assert "      +def farewell(name):" in lines  # each diff whole, under its milestone
    assert "plan review reject --feedback" in shown
    assert agent.plan("review", "show", "--json").stdout.startswith("[")


def test_fix_mode_names_no_unchanged_words_and_no_skeleton(project: Path) -> None:
    agent, design = interactive(project)  # Q-001 answered
    agent.apply(DESIGN)
    qr = agent.step(design.route())  # 4
    assert "The user's words (Q-001) unchanged since step 3" in qr.text
    review(agent, "plan-design", "FAIL", finding="DL-001 gives no reason")
    fix = agent.step(qr.route("fail"))  # 5 fail, which prints 3 in fix mode
    assert "FIX MODE" in fix.text and SKELETON not in fix.text
    assert "The user's words" not in fix.text  # named by the review step just before
    assert "Before moving on" not in fix.text  # the gate below checks it
    assert "overrule" not in fix.text  # no person's words to overrule an answer


def test_an_amendments_code_step_says_what_to_edit_and_capture(project: Path) -> None:
    agent, approved = approved_plan(project)
    agent.step(approved.route())  # executor 1, 2, 3
    agent.plan("exec", "apply", "M-001")
    agent.plan("exec", "done", "M-001", "--evidence", "ran it", "--commit")
    opened = Output(agent.plan("amend", "--reason", "bow too").stdout)  # prints step 3
    assert '"op": "milestone add"' in opened.text  # the new milestones' skeleton
    bow = [
        {"op": "milestone add", "args": {"name": "Bow", "file": ["src/bow.py"],
                                         "acceptance": ["bow() bows"]}},
        {"op": "intent add", "args": {"milestone": "$1", "file": "src/bow.py",
                                      "function": "bow", "behavior": "bows"}},
        {"op": "qr add", "args": {"phase": "plan-design", "scope": "$1", "check": "sound",
                                  "status": "PASS"}},
    ]  # fmt: skip
    intent = agent.apply(bow)[1]
    code = agent.step(opened.route("pass"))  # 5, which prints 6
    assert code.header.startswith("PLANNER 6/11"), code.text
    said = "Amendment: make the intents of M-003 real edits in the worktree (STATE_DIR/worktree)"
    assert said in code.text
    assert "; from the project:\n  plan change capture --intent CI-n [FILE]..." in code.text
    assert "which holds the committed milestones; they stay as they are" in code.text
    assert "Change only what the person's words" not in code.text  # nothing recorded to edit
    assert '"scope": "M-003", "check": "C"' in code.text  # its own review item, to add
    tree = Path(code.state_dir, "worktree")
    (tree / "src" / "bow.py").write_text("def bow():\n    return 'bows'\n")
    judged = {"op": "qr add", "args": {"phase": "plan-code", "scope": "M-003", "check": "ok",
                                       "status": "PASS"}}  # fmt: skip
    docs = agent.judge([{"op": "change capture", "args": {"intent": [intent]}}, judged], "pass")
    assert "PLANNER 9/11" in docs.text, docs.text  # 8, which prints 9: its code is captured
    said = "Amendment: document M-003 where a reader needs it (docstrings, README, docs/)"
    assert said in docs.text and "nothing to document: judge it below" in docs.text
    assert "; from the project:\n  plan change capture;" in docs.text  # not in the worktree
    assert "real edits" not in docs.text


def test_a_rejection_shows_its_words_whole_and_the_unchanged_answers_in_one_line(
    project: Path,
) -> None:
    agent, _ = to_review(project)  # Q-001 "Who says it?" answered "the app", shown at step 3
    rejected = agent.plan("review", "reject", "--comment", "CC-002:3: credit ann")
    line = rejected.stderr.split("NEXT: ", 1)[1].strip()
    out = agent.step(line)  # 9
    words = out.text.split("The user's words (hold to them):\n", 1)[1]
    assert words.startswith("  Q-001 unchanged: plan show --answers\n  Review round 1 rejected")
    assert "credit ann" in words and "the app" not in out.text
    assert agent.step(line).text == out.text  # a re-render shows what the arrival showed
    agent.plan("question", "answer", "Q-001", "the user")  # the answers change: whole again
    again = agent.step(line)
    assert "Q-001 Who says it? -> the user" in again.text and "credit ann" in again.text


def test_a_decision_changed_in_the_rework_says_the_overview_is_as_rejected(project: Path) -> None:
    agent, _ = to_review(project)
    agent.plan("review", "reject", "--comment", "DL-001: say why")
    said = agent.plan("decision", "set", "DL-001", "--reasoning", "Same shape as greet()").stderr
    assert "DL-001 changed since review round 1, the overview did not" in said, said
    assert "plan overview set --approach A" in said
    agent.plan("overview", "set", "--approach", "farewell() beside greet(), same shape")
    said = agent.plan("decision", "set", "DL-001", "--reasoning", "As greet() is").stderr
    assert "the overview did not" not in said  # set since the rejection: nothing to say
    said = agent.plan("milestone", "set", "M-001", "--name", "Farewell, again").stderr
    assert "overview" not in said  # no decision or choice changed


def test_validate_warns_of_an_overview_older_than_the_decisions_after_a_rejection(
    project: Path,
) -> None:
    agent, _ = to_review(project)
    agent.plan("review", "reject", "--feedback", "say why")
    assert "stale-overview" not in agent.plan("validate", "--format", "github").stdout
    agent.plan("decision", "add", "--decision", "Also wave()", "--reasoning", "asked for")
    warned = agent.plan("validate").stdout
    assert "warning" in warned and "the overview did not" in warned, warned
    agent.plan("overview", "set", "--title", "Farewell and wave")
    assert "overview" not in agent.plan("validate").stdout
