"""Review, timeouts, the non-interactive policy and the session lifecycle (§6.3–6.5)."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import pytest

from state.rules.lifecycle import TRANSITIONS, allowed
from tests.agent import Agent, Output
from tests.workflows.helpers import (
    DESIGN,
    judge_todo,
    review,
    start,
    state_of,
    to_approval,
)


def to_review(project: Path, settings: str = "") -> tuple[Agent, Output]:
    """An interactive quick-depth session at step 11, in review."""
    (project / "pyproject.toml").write_text(f"[tool.planner]\nquestions_min = 0\n{settings}")
    agent, out = start(project, "--depth", "quick", env={})
    agent.apply(DESIGN)
    out = agent.step(out.route())
    review(agent, "plan-design")
    out = agent.step(out.route("pass"))  # the gate prints step 11
    assert json.loads((state_of(out) / "session.json").read_text())["status"] == "review"
    return agent, out


def session(out: Output) -> dict:
    return json.loads((state_of(out) / "session.json").read_text())


def reject(agent: Agent, out: Output, words: str):
    return agent.shell(out.if_fail.replace("<the user's words>", words))


# A yes/no question whose recommended answer is "no" (option 2).
YES_NO_QUESTION = ["question", "add", "--category", "scope", "--kind", "yes_no"]
YES_NO_QUESTION += ["--text", "Also wave?", "--recommended", "2"]


def test_the_max_rejects_th_rejection_cancels(project: Path) -> None:
    agent, out = to_review(project)
    for n in (1, 2):
        assert "NEXT: planner --step 3" in reject(agent, out, f"no, round {n}").stderr
        out = agent.step("planner next")  # 3: what to re-check, and the gate
        judge_todo(agent, out, "plan-design")
        out = agent.step(out.route("pass"))  # 5, which prints 11
    cancelled = reject(agent, out, "still no")
    assert "The session is cancelled: rejected 3 times (max_rejects 3)" in cancelled.stderr
    s = session(out)
    assert s["status"] == "cancelled" and [r["feedback"] for r in s["reviews"]] == [
        "no, round 1",
        "no, round 2",
        "still no",
    ]
    assert "cancelled" in agent.shell("planner status", code=0).stdout
    agent.shell("planner next", code=4)
    agent.plan("decision", "add", "--decision", "d", "--reasoning", "r", code=4)


def test_an_approval_timeout_cancels_when_the_session_is_next_touched(project: Path) -> None:
    agent, out = to_review(project, 'approval_timeout = "5m"\n')
    later = {"PLANNER_NOW": str(time.time() + 301)}
    agent.env.update(later)
    refused = agent.shell(out.if_pass, code=4)
    assert "cancelled" in refused.stderr
    s = session(out)
    assert s["status"] == "cancelled" and "approval_timeout" in s["reason"]
    audit = [json.loads(line) for line in (state_of(out) / "audit.jsonl").read_text().splitlines()]
    assert any(a.get("timeout") == "approval" for a in audit)


def test_a_question_timeout_records_the_recommended_option_as_an_assumption(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.planner]\nquestion_timeout = "90s"\n')
    agent = Agent(project)
    out = agent.step("planner --step 1 --task t")
    agent.plan(
        "question",
        "add",
        "--category",
        "scope",
        "--kind",
        "choice",
        "--text",
        "Which one?",
        "--option",
        "a",
        "--option",
        "b",
        "--recommended",
        "2",
    )
    agent.env["PLANNER_NOW"] = str(time.time() + 91)
    listed = agent.plan("question", "list").stdout
    assert "Q-001 [assumed] Which one? -> b" in listed
    context = json.loads((state_of(out) / "context.json").read_text())
    assert "Q-001 Which one?: assumed 'b' (question_timeout passed)" in context["assumptions"]


def test_non_interactive_nobody_is_asked_and_the_policy_is_on_record(project: Path) -> None:
    agent, out = start(project)  # --non-interactive on step 1; at step 3
    state = state_of(out)
    agent.plan(*YES_NO_QUESTION)
    agent.plan(
        "choice",
        "import",
        "-",
        input=json.dumps(
            {
                "choices": [
                    {
                        "topic": "Storage",
                        "options": [
                            {"name": "file", "recommended": True},
                            {"name": "db", "cons": ["heavy"]},
                        ],
                    }
                ]
            }
        ),
    )
    agent.apply(DESIGN)
    out = agent.step(out.route())  # 4: the choice is picked as "auto"
    plan = json.loads((state / "plan.json").read_text())
    [choice] = plan["planning_context"]["choices"]
    assert choice["picked"] == "OPT-A" and choice["rationale"] == "auto"
    assert plan["planning_context"]["rejected_alternatives"][0]["rejection_reason"] == "heavy"
    audit = [json.loads(line) for line in (state / "audit.jsonl").read_text().splitlines()]
    policy = "--non-interactive on step 1"
    assert any(a.get("policy") == policy and a.get("picked") for a in audit)
    assert any(a.get("policy") == policy and a.get("interactive") is False for a in audit)


def test_non_interactive_answers_open_questions_when_design_starts(project: Path) -> None:
    agent = Agent(project)
    out = agent.step("planner --step 1 --task t --non-interactive")
    agent.plan(*YES_NO_QUESTION)
    agent.plan("question", "add", "--category", "priority", "--kind", "text", "--text", "Why?")
    agent.plan("context", "set", "--goal", "g")
    assert out.next.startswith("planner --step 3")  # no questions are waited for
    agent.step(out.route())
    context = json.loads((state_of(out) / "context.json").read_text())
    assert [(q["answer"], q["assumed"]) for q in context["questions"]] == [
        ("no", True),
        (None, True),
    ]
    assert context["assumptions"] == [
        "Q-001 Also wave?: assumed 'no' (non-interactive: --non-interactive on step 1)",
        "Q-002 Why?: no answer: non-interactive: --non-interactive on step 1",
    ]


def test_resume(project: Path) -> None:
    agent, out = to_approval(project)
    first = state_of(out).name
    other = Agent(project).step("planner --step 1 --task 'Another plan'")
    resumed = agent.plan("resume", first).stdout
    assert "NEXT: executor --step 1" in resumed and "approved" in resumed
    assert (project / ".planner" / "ACTIVE").read_text().strip() == first
    agent.plan("cancel", "--reason", "not needed", "--state-dir", other.state_dir)
    refused = agent.plan("resume", state_of(other).name, code=4)
    assert "cancelled (not needed); it cannot be resumed" in refused.stderr
    listed = agent.plan("list").stdout
    assert f"* {first}" in listed and "cancelled" in listed
    agent.plan("resume", "no-such-session", code=2)


def test_fail_and_cancel_follow_the_transitions(project: Path) -> None:
    agent, out = start(project)
    agent.plan("fail", "--error", "the disk is full")
    assert session(out)["status"] == "failed" and session(out)["reason"] == "the disk is full"
    agent.plan("cancel", code=4)
    agent.plan("fail", "--error", "again", code=4)
    agent.shell("planner status")
    agent.shell(out.route(), code=4)
    agent.plan("review", "approve", code=4)


def test_review_commands_need_a_plan_in_review(project: Path) -> None:
    agent, _ = start(project)
    assert "no plan in review" in agent.plan("review", "approve", code=4).stderr
    agent.plan("review", "reject", "--feedback", "f", code=4)


@pytest.mark.parametrize(
    "old, new", [(old, new) for old, new in itertools.product(TRANSITIONS, TRANSITIONS)]
)
def test_only_the_transitions_of_6_5_are_allowed(old: str, new: str) -> None:
    chain = ["discovery", "design", "detailing", "review", "approved", "executing", "completed"]
    final = ("completed", "cancelled", "failed")
    legal = old not in final and (
        old == new
        or new in ("cancelled", "failed")
        or (old in chain[:-1] and new == chain[chain.index(old) + 1])
        or (old, new) in {("review", "design"), ("design", "review")}
        # an interactive session's result is reviewed; a request for changes amends the plan
        or (old, new) in {("executing", "result_review"), ("result_review", "completed")}
        or (old, new) == ("result_review", "design")
    )
    assert allowed(old, new) == legal
