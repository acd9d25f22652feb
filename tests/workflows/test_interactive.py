"""Interactive planning: questions, plan ask in a real terminal, choices,
review with rejection and approval, verify."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pexpect
import pytest

from tests.agent import Agent
from tests.conftest import BIN
from tests.workflows.helpers import DESIGN, add_farewell_change, judge_todo, review, state_of

QUESTIONS = """Here are my questions:

```json
{"questions": [
  {"category": "scope", "kind": "choice", "text": "Which greeting styles are needed?",
   "why": "Decides how many functions we add",
   "options": ["Farewell only", {"label": "Farewell and wave", "description": "two"}],
   "recommended": 1},
  {"category": "technical", "kind": "yes_no", "text": "Should farewell() accept None?",
   "why": "Error handling", "recommended": "no"},
  {"category": "priority", "kind": "text", "text": "Anything else to keep in mind?"},
  {"category": "constraint", "kind": "yes_no", "text": "Must greet() stay unchanged?",
   "recommended": 1}
]}
```
"""
CHOICE = {
    "choices": [
        {
            "topic": "Where farewell lives",
            "options": [
                {
                    "name": "In app.py",
                    "description": "beside greet",
                    "pros": ["one place"],
                    "cons": [],
                    "recommended": True,
                },
                {"name": "A new module", "pros": ["room to grow"], "cons": ["one more file"]},
            ],
        }
    ]
}


def ask_in_terminal(project: Path) -> str:
    """Answer Q-1 by number, Q-2 with y, skip Q-3 with Enter, then Ctrl-C at Q-4."""
    child = pexpect.spawn(
        str(BIN / "plan"),
        ["ask"],
        cwd=str(project),
        encoding="utf-8",
        timeout=30,
        env={**{k: v for k, v in os.environ.items() if k != "CI"}, "TERM": "xterm"},
    )
    child.expect(r"\(1/4\) Q-001 \(scope\) Which greeting styles")
    child.expect(r"1\) Farewell only  \(recommended\)")
    child.expect(r"Enter takes \[1\] > ")
    child.sendline("7")  # not an option number: asked again
    child.expect("7 is not an option number")
    child.expect("Enter takes")
    child.sendline("2")
    child.expect("recorded: Farewell and wave")
    child.expect(r"\(2/4\) Q-002")
    child.expect(r"y/n; Enter takes \[2\] > ")
    child.sendline("maybe")
    child.expect("answer yes or no")
    child.sendline("y")
    child.expect("recorded: yes")
    child.expect("Q-003")
    child.expect("Enter skips > ")
    child.sendline("")  # Enter, no option recommended: skipped
    child.expect("Q-004")
    child.expect("Enter takes")
    child.sendintr()  # Ctrl-C keeps what was answered
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130, child.before
    return child.before or ""


@pytest.mark.slow
def test_the_interactive_path(project: Path, tmp_path: Path) -> None:
    agent = Agent(project)
    out = agent.step("planner --step 1 --task 'Add a farewell'")
    state = state_of(out)
    assert "README.md" in out.text  # the scan's summary is shown at discovery
    scan = agent.plan("context", "scan")
    assert "Documents" in scan.stdout + scan.stderr
    (tmp_path / "questions.md").write_text(QUESTIONS)
    assert agent.plan("question", "import", str(tmp_path / "questions.md")).stdout.split() == [
        "Q-001",
        "Q-002",
        "Q-003",
        "Q-004",
    ]
    agent.plan("context", "set", "--goal", "Users can say goodbye")
    refused = agent.shell(out.route(), code=3)  # design waits for the answers
    assert "3 more question(s) must be answered" in refused.stderr
    out = agent.step(out.route().replace("--step 3", "--step 2", 1))  # step 2 again
    assert out.next.startswith("planner --step 3") and "3 more question(s)" in out.text

    stopped = ask_in_terminal(project)
    assert "Stopped; the answers given so far are saved." in stopped
    context = json.loads((state / "context.json").read_text())
    by_id = {q["id"]: q for q in context["questions"]}
    assert by_id["Q-001"]["answer"] == "Farewell and wave"
    assert by_id["Q-002"]["answer"] == "yes"
    assert by_id["Q-003"]["skipped"] and by_id["Q-004"]["answer"] is None
    assert out.next.startswith("planner --step 3")  # once answered, NEXT starts the design
    design = agent.step(out.route())
    assert "Q-001 Which greeting styles are needed? -> Farewell and wave" in design.text

    agent.apply(DESIGN)
    agent.plan("choice", "import", "-", input=json.dumps(CHOICE))
    assert (
        "choice 'Where farewell lives' is not picked" in agent.shell(design.route(), code=3).stderr
    )
    assert agent.plan(
        "choice", "pick", "D-001", "OPT-A", "--rationale", "keep it together"
    ).stdout.split() == ["DL-002", "RA-001"]
    out = agent.step(design.route())  # 4
    review(agent, "plan-design")
    out = agent.step(out.route("pass"))  # 5, which prints 6
    add_farewell_change(agent, state)
    out = agent.step(out.route())
    review(agent, "plan-code")
    out = agent.step(out.route("pass"))  # 8, which prints 9
    agent.plan("doc", "set", "M-001", "--docstring", "farewell: say goodbye")
    out = agent.step(out.route())
    review(agent, "plan-docs")
    review_step = agent.step(out.route("pass"))  # 11: the user reviews
    assert "plan review show" in review_step.text  # what the person reads in a terminal
    assert review_step.if_pass.startswith("plan review approve")
    assert json.loads((state / "session.json").read_text())["status"] == "review"

    rejected = agent.shell(
        review_step.if_fail.replace("<the user's words>", "Also log every farewell")
    )
    assert "NEXT: planner --step 3" in rejected.stderr
    again = agent.step(rejected.stderr.split("NEXT: ", 1)[1].strip())
    assert "Review round 1 rejected: Also log every farewell" in again.text
    assert agent.plan("diff", "--review", "1").stdout.startswith("r")
    agent.plan("risk", "add", "--risk", "Log noise", "--mitigation", "debug level")
    assert '"op": "qr set"' in again.text  # passes from round 1 must be judged again
    judge_todo(agent, again, "plan-design")
    out = agent.step(again.route("pass"))  # 5, which prints 6, re-checks listed
    judge_todo(agent, out, "plan-code")
    out = agent.step(out.route("pass"))  # 8, which prints 9
    judge_todo(agent, out, "plan-docs")
    review_step = agent.step(out.route("pass"))
    assert "Review round 2" in review_step.text and "Rejections: 1 of 3" in review_step.text

    approved = agent.shell(f"{review_step.if_pass} --by ann")
    assert "NEXT: executor --step 1" in approved.stderr
    session = json.loads((state / "session.json").read_text())
    sha = session["approval"]["sha256"]
    assert f"approved and frozen: sha256 {sha} (by ann)\nNEXT: executor" in approved.stderr
    assert session["status"] == "approved" and session["approval"]["by"] == "ann"
    assert [r["verdict"] for r in session["reviews"]] == ["rejected", "approved"]
    assert json.loads((state / "plan.json").read_text())["frozen_at"]
    assert "verified" in agent.plan("verify").stdout
    plan = json.loads((state / "plan.json").read_text())
    plan["overview"]["approach"] = "Something else"
    (state / "plan.json").write_text(json.dumps(plan, indent=2))
    assert "content changed after approval" in agent.plan("verify", code=3).stdout
