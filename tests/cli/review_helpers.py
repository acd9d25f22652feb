"""A real interactive session brought to planner step 11 (in review), for the review page tests."""

from __future__ import annotations

from pathlib import Path

from tests.agent import Agent, Output
from tests.workflows.helpers import DESIGN, add_farewell_change, judge_todo, review, state_of


def to_review(project: Path, env: dict[str, str] | None = None) -> tuple[Agent, Output]:
    """Steps 1 to 11 of an interactive session: the plan waits for the person's verdict."""
    (project / ".planner").mkdir(exist_ok=True)
    (project / ".planner" / "config.toml").write_text("[planner]\nquestions_min = 1\n")
    agent = Agent(project, env=env or {})
    out = agent.step("planner --step 1 --task 'Add a farewell'")  # prints step 2 too
    agent.plan("context", "set", "--goal", "say goodbye", "--scope", "src/app.py only")
    agent.plan(
        "question", "add", "--category", "scope", "--kind", "yes_no",
        "--text", "Should farewell() also wave?", "--option", "yes", "--option", "no",
        "--recommended", "2",
    )  # fmt: skip
    agent.plan("question", "answer", "Q-001", "no")
    out = agent.step(out.route())  # 3
    agent.apply(DESIGN)
    out = agent.step(out.route())  # 4
    review(agent, "plan-design")
    out = agent.step(out.route("pass"))  # 5, which prints 6
    add_farewell_change(agent, state_of(out))
    out = agent.step(out.route())  # 7
    review(agent, "plan-code")
    out = agent.step(out.route("pass"))  # 8, which prints 9
    agent.plan("doc", "set", "M-001", "--docstring", "farewell: say goodbye")
    out = agent.step(out.route())  # 10
    review(agent, "plan-docs")
    return agent, agent.step(out.route("pass"))  # 11


def back_to_review(agent: Agent, design: Output) -> Output:
    """After a rejection and the revision at step 3 (`design`): each work step lists what to
    re-check and routes to its gate; the gates 5, 8 and 11 again, re-judging what they list."""
    judge_todo(agent, design, "plan-design")
    out = agent.step(design.route("pass"))  # 5, which prints 6
    judge_todo(agent, out, "plan-code")
    out = agent.step(out.route("pass"))  # 8, which prints 9
    judge_todo(agent, out, "plan-docs")
    return agent.step(out.route("pass"))  # 11
