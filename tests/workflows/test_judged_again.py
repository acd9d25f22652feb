"""Review items judge what they judged (issue 32; docs/design.md): after a rejection or in an
amendment, code re-captured or added after the phase's items passed is judged again before
the gate passes. The LLM trial this reproduces: rejected for a different class and a new
option, the agent re-captured the milestone's code and added a change; nothing was reopened
and `plan apply --verdict pass - <<< '[]'` passed the code and docs gates on phase-wide
PASSes given to the code as it was."""

from __future__ import annotations

import json
import re
from pathlib import Path

from bench.sample import FAREWELL, WAVE, edit
from bench.sample import TWO_MILESTONES as DESIGN
from tests.agent import Agent, Output
from tests.workflows.helpers import judge_todo, state_of
from tests.workflows.test_amend import approved_plan, to_review

EMPTY = "plan apply --verdict pass - <<'EOF'\n[]\nEOF"
TREE = re.compile(r"captured edits\): (.+)$", re.M)


def judge(agent: Agent, phase: str, *scopes: str) -> None:
    agent.apply(
        [
            {"op": "qr add", "args": {"phase": phase, "scope": s, "check": "ok", "status": "PASS"}}
            for s in scopes
        ]
    )


def reports(out: Output, phase: str) -> dict[str, dict[str, object]]:
    items = json.loads((state_of(out) / f"qr-{phase}.json").read_text())["items"]
    return {i["id"]: i for i in items}


def in_review(project: Path) -> tuple[Agent, Output, Path]:
    """Steps 1 to 11 through the worktree: M-001 (farewell and wave in src/app.py, a test
    file) and M-002 (README); the code judged by a phase-wide item and one on the test
    intent (CI-003), the docs by a phase-wide item and one on M-002."""
    (project / ".planner").mkdir()
    (project / ".planner" / "config.toml").write_text("[planner]\nquestions_min = 0\n")
    agent = Agent(project, env={})
    out = agent.step("planner --step 1 --task 'Add a farewell'")
    agent.plan("context", "set", "--goal", "say goodbye")
    out = agent.step(out.route())  # 3
    agent.apply(DESIGN)
    out = agent.step(out.route())  # 4
    judge(agent, "plan-design", "*")
    out = agent.step(out.route("pass"))  # 5, which prints 6
    tree = Path(TREE.findall(out.text)[-1].replace("STATE_DIR", out.state_dir, 1))
    edit(tree / "src" / "app.py", FAREWELL + WAVE)
    edit(tree / "tests" / "test_app.py", "assert True\n")
    edit(tree / "README.md", "\n`farewell(name)` says goodbye.\n")
    agent.plan("change", "capture")
    out = agent.step(out.route())  # 7
    judge(agent, "plan-code", "*", "CI-003")
    out = agent.step(out.route("pass"))  # 8, which prints 9
    out = agent.step(out.route())  # 10
    judge(agent, "plan-docs", "*", "M-002")
    return agent, agent.step(out.route("pass")), tree  # 11


def test_rework_after_a_rejection_judges_the_recaptured_code_again(project: Path) -> None:
    agent, out, tree = in_review(project)
    passed = reports(out, "plan-code")
    rejected = agent.plan("review", "reject", "--feedback", "a Farewell class; and --invert")
    out = agent.step(rejected.stderr.split("NEXT: ", 1)[1].strip())  # 3: the design's rework
    agent.plan("decision", "set", "DL-001", "--decision", "A Farewell class")
    judge_todo(agent, out, "plan-design")  # the person's feedback, addressed
    out = agent.step(out.route("pass"))  # 5, which prints 6: nothing of the code open yet
    assert out.header.startswith("PLANNER 6/11") and "(none open now" in out.text, out.text
    assert reports(out, "plan-code") == passed

    edit(tree / "src" / "app.py", "\nclass Farewell:\n    pass\n")  # CC-001's diff changes
    recaptured = agent.plan("change", "capture")
    assert "CC-001 CI-001,CI-002 src/app.py: re-captured" in recaptured.stderr
    told = "M-001 changed after its plan-code review passed; judge it: plan qr add --phase "
    assert told + "plan-code --scope M-001 --check C --status PASS|FAIL" in recaptured.stderr
    assert "plan-docs" not in recaptured.stderr  # the docs' step names it in its turn
    assert [i["status"] for i in reports(out, "plan-code").values()] == ["PASS", "PASS"]
    option = ("--milestone", "M-001", "--file", "src/cli.py", "--behavior", "an --invert option")
    intent = agent.plan("intent", "add", *option)  # the new option: a new CC in M-001
    assert "plan-design review" not in intent.stderr  # its gate passed: nothing to say there
    edit(tree / "src" / "cli.py", "INVERT = True\n")
    added = agent.plan("change", "capture")
    assert re.search(r"CC-\d+ CI-005 src/cli.py: captured", added.stderr), added.stderr

    refused = agent.shell(EMPTY, code=3)  # the gate: the code as it is now, unjudged
    assert "M-001: no review item judged it as it is" in refused.stdout + refused.stderr
    assert "plan qr add --phase plan-code --scope M-001" in refused.stdout + refused.stderr
    out = agent.step(f"planner --step 6 --state-dir {out.state_dir}")  # names what to add
    assert '{"op": "qr add", "args": {"phase": "plan-code", "scope": "M-001"' in out.text
    assert "(none open now" not in out.text
    judge(agent, "plan-code", "M-001")
    out = agent.step(out.route("pass"))  # 8, which prints 9: the docs judged M-001 as it was
    assert out.header.startswith("PLANNER 9/11"), out.text
    assert '{"op": "qr add", "args": {"phase": "plan-docs", "scope": "M-001"' in out.text
    refused = agent.shell(EMPTY, code=3)
    assert "M-001: no review item judged it as it is" in refused.stdout + refused.stderr
    judge(agent, "plan-docs", "M-001")
    assert agent.step(out.route("pass")).header.startswith("PLANNER 11/11")


def test_a_rework_that_changes_no_code_keeps_every_code_pass(project: Path) -> None:
    agent, out, _ = in_review(project)
    code, docs = reports(out, "plan-code"), reports(out, "plan-docs")
    rejected = agent.plan("review", "reject", "--feedback", "say why in the decision")
    out = agent.step(rejected.stderr.split("NEXT: ", 1)[1].strip())  # 3
    agent.plan("decision", "set", "DL-001", "--reasoning", "greet() has one; so farewell()")
    judge_todo(agent, out, "plan-design")
    out = agent.step(out.route("pass"))  # 5, which prints 6
    assert "(none open now" in out.text
    out = Output(agent.shell(EMPTY).stdout)  # 8, which prints 9
    assert out.header.startswith("PLANNER 9/11") and "(none open now" in out.text, out.text
    assert Output(agent.shell(EMPTY).stdout).header.startswith("PLANNER 11/11")
    assert reports(out, "plan-code") == code and reports(out, "plan-docs") == docs


def test_an_amendment_judges_code_changed_after_its_review_passed(project: Path) -> None:
    """M-001 committed; the amendment reopens M-002 and corrects M-001's code with a new
    milestone (the way an amendment changes committed code): a phase-wide PASS given to the
    captured code stands for it only until it is captured again."""
    agent, approved = approved_plan(project)
    agent.step(approved.route())  # executor 1, 2, 3
    agent.plan("exec", "apply", "M-001")
    agent.plan("exec", "done", "M-001", "--evidence", "ran it", "--commit")
    out = Output(agent.plan("amend", "--reason", "kinder", "--milestone", "M-002").stdout)
    kinder = {"name": "Kinder farewell", "file": ["src/app.py"], "acceptance": ["kind"]}
    agent.apply(
        [
            {"op": "milestone add", "args": kinder},
            {
                "op": "intent add",
                "args": {"milestone": "$1", "file": "src/app.py", "behavior": "k"},
            },
        ]
    )
    out = agent.step(to_review(out))  # 4
    judge_todo(agent, out, "plan-design")
    judge(agent, "plan-design", "*")
    out = agent.step(out.route("pass"))  # 5, which prints 6
    assert out.header.startswith("PLANNER 6/11"), out.text
    tree = Path(agent.plan("worktree").stdout.strip())
    edit(tree / "src" / "wave.py", "# twice\n")
    edit(tree / "src" / "app.py", "# kinder\n")
    agent.plan("change", "capture")
    judge(agent, "plan-code", "*")  # M-002 and M-003 as captured
    edit(tree / "src" / "app.py", "# kinder still\n")
    recaptured = agent.plan("change", "capture")
    told = "M-003 changed after its plan-code review passed; judge it: plan qr add"
    assert told in recaptured.stderr and "M-002 changed" not in recaptured.stderr
    refused = agent.shell(EMPTY, code=3)
    assert "M-003: no review item judged it as it is" in refused.stdout + refused.stderr
    assert "M-001:" not in refused.stdout + refused.stderr  # committed, unchanged
    assert "M-002:" not in refused.stdout + refused.stderr  # judged as it is
    judge(agent, "plan-code", "M-003")
    assert Output(agent.shell(EMPTY).stdout).header.startswith("PLANNER 9/11")
