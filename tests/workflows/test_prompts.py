"""What the agent reads: routing lines that are valid shell as printed,
prompts without --state-dir, the user's words once per step, fix mode that names the
commands that edit, and plan.md re-rendered at approval."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from shared.routing import command
from tests.agent import Agent, Output
from tests.workflows.helpers import DESIGN, add_farewell_change, judge_todo, review, state_of

QUESTIONS = [
    {"category": "scope", "kind": "choice", "text": "Which greeting styles are needed?",
     "options": ["Farewell only", "Farewell and wave"], "recommended": 1},
    {"category": "technical", "kind": "text", "text": "What should a farewell say?"},
    {"category": "priority", "kind": "text", "text": "Anything else to keep in mind?"},
]  # fmt: skip
ANSWERS = ("Farewell only", "It says bye and the name", "Keep greet unchanged")
FEEDBACK = "Also log every farewell"
ROUTING = ("NEXT: ", "IF PASS: ", "IF FAIL: ")


class Walk:
    """The agent, and every step's and role's output it read."""

    def __init__(self, project: Path):
        self.agent = Agent(project)  # interactive: CI is not set
        self.outputs: list[Output] = []
        self.roles: list[str] = []

    def step(self, line: str) -> Output:
        out = self.agent.step(line)
        self.outputs.append(out)
        for text in out.text.splitlines():
            if text.startswith("Role: "):
                role = text.split("sub-agent: ", 1)[1].rstrip(")")
                self.roles.append(self.agent.shell(role).stdout)
        return out


def design_of(w: Walk) -> Output:
    return next(o for o in w.outputs if o.header.startswith("PLANNER 3/11"))


def walk_to_review(project: Path) -> tuple[Walk, Output]:
    w = Walk(project)
    agent = w.agent
    out = w.step("planner --step 1 --task 'Add a farewell'")
    agent.plan("question", "import", "-", input=json.dumps(QUESTIONS))
    for n, answer in enumerate(ANSWERS, 1):
        agent.plan("question", "answer", f"Q-00{n}", answer)
    agent.plan(
        "context", "set", "--goal", "say goodbye", "--scope", "app", "--out-of-scope", "i18n"
    )
    design = w.step(out.route())  # 3
    agent.apply(DESIGN)
    out = w.step(design.route())  # 4: the design review fails once
    review(agent, "plan-design", "FAIL", finding="DL-001 gives no real reason")
    fix = w.step(out.route("fail"))  # 5 fail, which prints 3 in fix mode
    assert "FIX MODE" in fix.text
    agent.plan("decision", "set", "DL-001", "--reasoning", "Same shape keeps the module obvious.")
    judge_todo(agent, fix, "plan-design")  # the re-check fix mode lists
    out = w.step(fix.route("pass"))  # 5, which prints 6
    add_farewell_change(agent, state_of(out))
    out = w.step(out.route())
    review(agent, "plan-code")
    out = w.step(out.route("pass"))  # 8, which prints 9
    agent.plan("doc", "set", "M-001", "--docstring", "farewell: say goodbye")
    out = w.step(out.route())
    review(agent, "plan-docs")
    return w, w.step(out.route("pass"))  # 11: the user reviews


def test_what_the_agent_reads(project: Path) -> None:
    w, at_review = walk_to_review(project)
    state = at_review.state_dir
    fix = next(o for o in w.outputs if "FIX MODE" in o.text)
    for words in ("decision set", "risk set", "intent set", "milestone set", "--add-X T",
                  "--remove-X N|TEXT", "plan intent remove CI-n"):  # fmt: skip
        assert words in fix.text, words
    assert 'plan apply - <<\'EOF\'\n[{"op": "overview set"' in design_of(w).text
    assert "counting from 1" in design_of(w).text and "milestone tests" in design_of(w).text
    for header in ("PLANNER 3/11", "PLANNER 4/11"):
        first = next(o for o in w.outputs if o.header.startswith(header))
        assert first.text.count(" - <<'EOF'") == 1, header  # one skeleton a step (--verdict at 4)
    code = next(o for o in w.outputs if o.header.startswith("PLANNER 6/11"))
    tree = "captured edits): STATE_DIR/worktree"
    assert tree in code.text and "plan change capture" in code.text  # no diff by hand
    assert "the same way at step 9, not here" in code.text  # validate --phase code asks none
    assert "plan validate --phase code passes (each code milestone has diffs" in code.text
    docs = next(o for o in w.outputs if o.header.startswith("PLANNER 9/11"))
    assert "plan change capture" in docs.text and '"op": "doc set"' not in docs.text
    assert "nobody writes a diff by hand" in docs.text and "plan render --full" in docs.text
    assert "--diff" not in fix.text and "--diff" not in docs.text
    discovery = next(o for o in w.outputs if o.header.startswith("PLANNER 2/11"))
    assert "the option's label or number (from 1)" in discovery.text
    # the person away: assume on record, do not wait (an LLM agent did not know which)
    said = 'answer" | --skip\n   | --assume (nobody to answer in this run: the recommended option'
    assert said in discovery.text  # which command takes --assume (another did not know)
    for header in ("PLANNER 2/11", "PLANNER 6/11"):  # discovery, and the worktree's step: once
        first = next(o for o in w.outputs if o.header.startswith(header))
        assert first.text.count("Scratch files go in STATE_DIR/scratch/") == 1, header
    design = next(o for o in w.outputs if o.header.startswith("PLANNER 3/11"))
    assert "Scratch files" not in design.text  # said at step 2 already
    review_step = next(o for o in w.outputs if o.header.startswith("PLANNER 4/11"))
    assert "Scratch files" not in review_step.text  # the reviewer's batch is a heredoc

    rejected = w.agent.shell(at_review.route("fail").replace("<the user's words>", FEEDBACK))
    again = w.step(rejected.stderr.split("NEXT: ", 1)[1].strip())  # step 3 with the feedback
    assert FEEDBACK in again.text

    for out in w.outputs:
        for line in out.text.splitlines():
            if line.startswith(ROUTING):
                check = subprocess.run(["bash", "-n", "-c", line.split(": ", 1)[1]])
                assert check.returncode == 0, line
            elif not line.startswith("STATE_DIR="):
                assert "--state-dir" not in line and state not in line, (out.header, line)
        for words in (*ANSWERS, FEEDBACK):
            assert out.text.count(words) <= 1, (out.header, words)
    assert w.roles
    for text in w.roles:
        assert "--state-dir" not in text and state not in text
        assert not any(words in text for words in (*ANSWERS, FEEDBACK))


def test_placeholders_are_valid_shell() -> None:
    for argv in (
        ["plan", "review", "reject", "--state-dir", "/tmp/a b", "--feedback", "<the user's words>"],
        ["plan", "qr", "accept", "--by", "<user>", "--reason", "<why the user accepts>"],
    ):
        line = command(argv)
        assert subprocess.run(["bash", "-n", "-c", line]).returncode == 0, line
    assert command(["x", "<the user's words>"]) == 'x "<the user\'s words>"'


def test_plan_md_is_rendered_again_at_approval(project: Path) -> None:
    w, at_review = walk_to_review(project)
    plan_md = Path(at_review.state_dir) / "plan.md"
    before = plan_md.read_text()
    assert "Not approved yet." in before and "## Questions and answers" in before
    assert "Which greeting styles are needed? Answer: Farewell only" in before
    approved = w.agent.shell(at_review.route("pass"))
    assert "NEXT: executor --step 1" in approved.stderr
    after = plan_md.read_text()
    session = json.loads((Path(at_review.state_dir) / "session.json").read_text())
    assert f"sha256 {session['approval']['sha256']}." in after
    assert "Not approved yet." not in after
    w.agent.plan("verify")  # plan.md is plan.json rendered, with the approval
