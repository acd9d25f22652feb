"""Amendments (a living plan): an approved plan, one milestone committed, is amended (one
milestone reopened, one added), reworked through the gates, re-approved and carried out; the
commits hold exactly the approved diffs of each round and `plan verify` checks the chain."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.agent import Agent, Output
from tests.workflows.helpers import DESIGN, add_farewell_change, judge_todo, review, state_of


def new_file_diff(path: str, *lines: str) -> str:
    body = "".join(f"+{line}\n" for line in lines)
    return f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n{body}"


WAVE_V1 = new_file_diff("src/wave.py", "def wave():", "    return 'o/'")
WAVE_V2 = new_file_diff("src/wave.py", "def wave():", "    return 'o/ o/'")
BOW = new_file_diff("src/bow.py", "def bow():", "    return 'm(_ _)m'")


def wave_milestone(ref: str) -> list[dict]:
    """The Wave milestone and its intent; `ref` is the batch's "$K" of the milestone."""
    accepted = {"name": "Wave", "file": ["src/wave.py"], "acceptance": ["wave() waves"]}
    intent = {"milestone": ref, "file": "src/wave.py", "behavior": "wave"}
    return [{"op": "milestone add", "args": accepted}, {"op": "intent add", "args": intent}]


FULL_REVIEW = re.compile(r"a full review instead: (planner --step \d+)")


def git(project: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=project, capture_output=True, text=True, check=True)
    return done.stdout


def add_change(agent: Agent, state: Path, intent: str, file: str, diff: str) -> None:
    source = state / f"{intent}.diff"
    source.write_text(diff)
    agent.plan("change", "add", "--intent", intent, "--file", file, "--diff", str(source))


def interactive_design(project: Path) -> tuple[Agent, Output]:
    """An interactive session (no questions asked) at step 3."""
    (project / "pyproject.toml").write_text("[tool.planner]\nquestions_min = 0\n")
    agent = Agent(project, env={})
    out = agent.step("planner --step 1 --task 'Add a farewell and a wave'")
    agent.plan("context", "set", "--goal", "say goodbye, wave")
    return agent, agent.step(out.route())


def to_review(out: Output) -> str:
    """The review step after a work step: NEXT, or in a rework the full review it offers."""
    return out.next or FULL_REVIEW.findall(out.text)[-1]


def through_gates(agent: Agent, out: Output, code: object, docs: object = None) -> Output:
    """From step 3 to step 11 the way the prompts say: each review judges what it lists (an
    amendment's step 3 reopens the design's items: the agent asks for the full review)."""
    out = agent.step(to_review(out))  # 4
    judge_todo(agent, out, "plan-design")
    review(agent, "plan-design")
    out = agent.step(out.route("pass"))  # 5, which prints 6
    code(state_of(out))  # type: ignore[operator]
    out = agent.step(to_review(out))  # 7
    judge_todo(agent, out, "plan-code")
    review(agent, "plan-code")
    out = agent.step(out.route("pass"))  # 8, which prints 9
    out = agent.step(to_review(out))  # 10
    judge_todo(agent, out, "plan-docs")
    review(agent, "plan-docs")
    return agent.step(out.route("pass"))  # 11: in review


def approved_plan(project: Path) -> tuple[Agent, Output]:
    """M-001 (farewell) and M-002 (wave), approved by ann: the executor's NEXT line printed."""
    agent, out = interactive_design(project)
    agent.apply([*DESIGN, *wave_milestone("$5")])

    def code(state: Path) -> None:
        add_farewell_change(agent, state)
        add_change(agent, state, "CI-002", "src/wave.py", WAVE_V1)

    out = through_gates(agent, out, code)
    approved = agent.shell(f"{out.if_pass} --by ann")
    return agent, Output(approved.stderr)


def test_an_amendment_round_from_approval_to_the_commits(project: Path) -> None:
    agent, approved = approved_plan(project)
    state = Path(json.loads(agent.plan("status", "--json").stdout)["state_dir"])
    first = agent.step(approved.route())  # executor 1, 2, 3: wave 1 holds M-001 and M-002
    for said in ("Writes are allowed now", "Read the plan: plan render", "(its planned diffs"):
        assert said in first.text, said  # how the executor works, whole the first time
    agent.plan("exec", "apply", "M-001")
    agent.plan("exec", "done", "M-001", "--evidence", "ran it", "--commit")
    original = json.loads((state / "session.json").read_text())["approval"]

    refused = agent.plan("amend", "--reason", "x", "--milestone", "M-001", code=4)
    assert "M-001 is committed: a correction is a new milestone" in refused.stderr
    opened = agent.plan("amend", "--reason", "wave twice; bow too", "--milestone", "M-002")
    assert "amendment round 1 opened, reopening M-002" in opened.stderr
    assert "the person approves the amended plan before it is carried out" in opened.stderr
    assert opened.stdout.startswith("planner step 3 follows (run here: do not run it again).")
    session = json.loads((state / "session.json").read_text())
    assert session["status"] == "design" and session["approval"] is None
    [amendment] = session["amendments"]
    assert amendment["approval"] == original and amendment["from_status"] == "executing"
    assert amendment["milestones"] == ["M-002"] and amendment["approved"] is None

    edit_m1 = agent.plan("milestone", "set", "M-001", "--name", "Farewell, kinder", code=4)
    assert "M-001 is committed: a correction is a new milestone" in edit_m1.stderr
    overview = agent.plan("overview", "set", "--title", "Other", code=4)
    assert "overview is not open in amendment round 1" in overview.stderr
    by_hand = json.loads((state / "plan.json").read_text())  # an edit by hand cannot widen it
    kept_plan = (state / "plan.json").read_text()
    by_hand["milestones"][0]["name"] = "Farewell, by hand"
    (state / "plan.json").write_text(json.dumps(by_hand))
    widened = agent.plan("decision", "add", "--decision", "D", "--reasoning", "R", code=4)
    assert "M-001 is committed: a correction is a new milestone" in widened.stderr
    (state / "plan.json").write_text(kept_plan)
    rewritten = agent.plan("decision", "set", "DL-001", "--reasoning", "Other", code=4)
    assert "DL-001 is not open in amendment round 1" in rewritten.stderr
    [newer] = agent.apply(
        [{"op": "decision add", "args": {"decision": "Also wave", "reasoning": "Asked."}}]
    )
    agent.plan("decision", "supersede", "DL-001", "--by", newer, "--reason", "waves too")
    bow = [
        {
            "op": "milestone add",
            "args": {"name": "Bow", "file": ["src/bow.py"], "acceptance": ["bow() bows"]},
        },
        {"op": "intent add", "args": {"milestone": "$1", "file": "src/bow.py", "behavior": "bow"}},
        {"op": "milestone set", "args": {"id": "M-002", "name": "Wave twice"}},
    ]
    out = Output(opened.stdout)  # planner step 3, with the amendment
    assert out.header.startswith("PLANNER 3/11")
    assert "Amendment round 1: wave twice; bow too" in out.text
    agent.apply(bow)

    def code(state: Path) -> None:
        wave = state / "wave2.diff"
        wave.write_text(WAVE_V2)
        agent.plan("change", "set", "CC-002", "--diff", str(wave))
        add_change(agent, state, "CI-003", "src/bow.py", BOW)

    review_out = through_gates(agent, out, code)
    assert "Review round 2, amendment round 1 (wave twice; bow too)" in review_out.text
    assert "+ M-003 'Bow'" in review_out.text and "~ CC-002" in review_out.text
    told = review_out.text.split("changed since the approval")[1].split("The verdict")[0]
    assert "M-001" not in told  # approved and committed: the person is told what is new
    assert "Its open milestones:\n  M-002 Wave" in told and "\n  M-003 Bow" in told
    again = Output(agent.shell(f"{review_out.if_pass} --by ann").stderr)
    session = json.loads((state / "session.json").read_text())
    [amendment] = session["amendments"]
    assert amendment["approved"] == session["approval"] and session["approval"] != original

    wave = agent.step(again.route())  # executor 1, 2, 3: only the amended and new milestones
    listed = wave.text.split("Wave 1:")[1].split("For each")[0]
    assert "M-002" in listed and "M-003" in listed and "M-001" not in listed
    assert "For each, in order, as before: plan exec apply M-n; run its tests" in wave.text
    for said in ("Writes are allowed now", "Read the plan: plan render", "(its planned diffs"):
        assert said not in wave.text, said  # read in the execution it resumes: a line
    for mid in ("M-002", "M-003"):
        agent.plan("exec", "apply", mid)
        agent.plan("exec", "done", mid, "--evidence", "ran it", "--commit")
    runs = json.loads((state / "execution.json").read_text())["milestones"]
    assert [r["id"] for r in runs if r["status"] == "done"] == ["M-001", "M-002", "M-003"]
    subjects = git(project, "log", "--format=%s").splitlines()
    assert [s.split()[0] for s in subjects] == ["M-003", "M-002", "M-001", "init"]
    assert (project / "src" / "wave.py").read_text() == "def wave():\n    return 'o/ o/'\n"
    assert "farewell" in git(project, "show", "--format=", "HEAD~2", "--", "src/app.py")
    assert git(project, "show", "--format=", "--name-only", "HEAD~1").split() == ["src/wave.py"]
    assert git(project, "show", "--format=", "--name-only", "HEAD").split() == ["src/bow.py"]
    assert (project / "src" / "bow.py").read_text() == "def bow():\n    return 'm(_ _)m'\n"
    assert first.header.startswith("EXECUTOR 3/9")

    agent.plan("verify")
    plan_md = (state / "plan.md").read_text()
    assert "## Amendments" in plan_md and "### Round 1: wave twice; bow too" in plan_md
    assert f"Approved by ann at {amendment['approved']['at']}" in plan_md
    log = [json.loads(line) for line in (state / "audit.jsonl").read_text().splitlines()]
    assert any(e.get("amendment") == 1 and e.get("reason") for e in log)

    session_path = state / "session.json"
    kept = session_path.read_text()
    tampered = json.loads(kept)
    tampered["amendments"][0]["approval"]["sha256"] = "0" * 64
    session_path.write_text(json.dumps(tampered))
    failed = agent.plan("verify", code=3)
    assert "session.json:amendments" in failed.stdout and "(amendment-chain)" in failed.stdout
    tampered = json.loads(kept)  # a re-approval of content history/ never held
    for record in (tampered["amendments"][0]["approved"], tampered["approval"]):
        record["sha256"] = "1" * 64
    tampered["reviews"][-1]["sha256"] = "1" * 64
    session_path.write_text(json.dumps(tampered))
    failed = agent.plan("verify", code=3)
    assert "which no revision in history/ has" in failed.stdout
    assert "(amendment-hash)" in failed.stdout
    session_path.write_text(kept)
    agent.plan("verify")


def test_amend_refusals(project: Path) -> None:
    agent, _ = interactive_design(project)
    refused = agent.plan("amend", "--reason", "too early", code=4)  # discovery/design
    assert "only an approved plan can be amended" in refused.stderr
    agent.plan("cancel")
    agent, _ = approved_plan(project)
    assert "may not be empty" in agent.plan("amend", "--reason", "  ", code=2).stderr
    unknown = agent.plan("amend", "--reason", "r", "--milestone", "M-009", code=2)
    assert "no such milestone" in unknown.stderr
    agent.apply([{"op": "amend", "args": {"reason": "from a batch"}}])  # not the person's act
    session = json.loads(agent.plan("status", "--json").stdout)
    record = json.loads((Path(session["state_dir"]) / "session.json").read_text())
    assert record["amendments"][0]["from_status"] == "approved"
    again = agent.plan("amend", "--reason", "twice", code=4)  # a round is open: it is planning
    assert "only an approved plan can be amended" in again.stderr


def test_a_non_interactive_amendment_is_re_approved_by_policy(project: Path) -> None:
    from tests.workflows.helpers import to_approval

    agent, out = to_approval(project)  # non-interactive: approved as "auto"
    state = state_of(out)
    agent.step(out.route())  # executor 1, 2, 3
    agent.plan("exec", "apply", "M-001")
    agent.plan("exec", "done", "M-001", "--evidence", "e", "--commit")
    out = Output(agent.plan("amend", "--reason", "wave too").stdout)  # which prints 3
    agent.apply(wave_milestone("$1"))
    out = through_gates(
        agent, out, lambda state: add_change(agent, state, "CI-002", "src/wave.py", WAVE_V1)
    )
    session = json.loads((state / "session.json").read_text())
    assert session["status"] == "approved" and session["amendments"][0]["approved"]["by"] == "auto"
    assert session["approval"] == session["amendments"][0]["approved"]
    agent.plan("verify")


class Documents:
    """What Implement.current reads of a step's context: the plan and execution.json."""

    def __init__(self, waves: list[list[str]], done: set[str]) -> None:
        self.docs = {
            "plan": {
                "milestone_dependencies": {
                    "waves": [{"wave": n, "milestones": w} for n, w in enumerate(waves, 1)]
                }
            },
            "execution": {
                "milestones": [
                    {"id": m, "status": "done" if m in done else "pending"}
                    for w in waves
                    for m in w
                ]
            },
        }

    def doc(self, name: str) -> dict[str, Any]:
        return self.docs[name]


@pytest.mark.parametrize(
    ("waves", "done", "expected"),
    [
        # a milestone added by an amendment lands in wave 1; wave 2 was committed before it
        ([["M-001", "M-003"], ["M-002"]], {"M-001", "M-002"}, (1, ["M-003"], False)),
        ([["M-001", "M-003"], ["M-002"]], {"M-001"}, (1, ["M-003"], True)),  # not done only
        ([["M-001"], ["M-002"]], {"M-001"}, (2, ["M-002"], False)),
        ([["M-001"], ["M-002"]], {"M-001", "M-002"}, (0, [], False)),
    ],
)
def test_step_3_waits_only_for_later_waves_with_work_left(
    waves: list[list[str]], done: set[str], expected: tuple[int, list[str], bool]
) -> None:
    from skills.executor.kinds import Implement

    assert Implement().current(Documents(waves, done)) == expected  # type: ignore[arg-type]


def test_an_amendment_reviews_only_what_it_changed(project: Path) -> None:
    """The review items on record stand, but those on a milestone the amendment reopens; a
    phase-wide PASS judged before does not stand for a milestone it did not judge (the one
    reopened, the one added): the rework's prompt asks for their own items and the gate
    refuses without them."""
    agent, _ = approved_plan(project)
    state = Path(json.loads(agent.plan("status", "--json").stdout)["state_dir"])

    def reviewer_items(phase: str) -> list[dict[str, Any]]:
        items = json.loads((state / f"qr-{phase}.json").read_text())["items"]
        return [i for i in items if i["source"] == "reviewer"]

    opened = agent.plan("amend", "--reason", "bow too", "--milestone", "M-002")
    for phase in ("plan-design", "plan-code", "plan-docs"):
        whole = reviewer_items(phase)
        assert {i["status"] for i in whole} == {"PASS"}  # nothing reopened
        assert all(list(i["milestones"]) == ["M-001"] for i in whole)  # no longer M-002's
    out = Output(opened.stdout)  # 3
    assert '"op": "qr add", "args": {"phase": "plan-design", "scope": "$1"' in out.text
    agent.apply(
        [
            {"op": "milestone add", "args": {"name": "Bow", "file": ["src/bow.py"],
                                             "acceptance": ["bow() bows"]}},
            {"op": "intent add", "args": {"milestone": "$1", "file": "src/bow.py",
                                          "behavior": "bow"}},
        ]
    )  # fmt: skip
    refused = agent.shell(out.route("pass"), code=3)
    for mid in ("M-002", "M-003"):
        assert f"{mid}: no review item judged it" in refused.stderr
        assert f"plan qr add --phase plan-design --scope {mid}" in refused.stderr
    assert "M-001: no review item" not in refused.stderr  # its PASS stands
    again = agent.step(f"planner --step 3 --state-dir '{state}'")
    new_items = re.findall(r'"op": "qr add", "args": \{"phase": "plan-design", "scope": "(M-\d+)"',
                           again.text)  # fmt: skip
    assert new_items == ["M-002", "M-003"]
    judged = [
        {"op": "qr add", "args": {"phase": "plan-design", "scope": m, "check": "sound",
                                  "status": "PASS"}}
        for m in new_items
    ]  # fmt: skip
    agent.apply(judged)
    code = agent.step(out.route("pass"))  # 5 passes, which prints 6
    assert code.header.startswith("PLANNER 6/11")
    assert '"scope": "M-003"' in code.text and '"scope": "M-001"' not in code.text


def test_an_amendment_asks_no_review_of_a_committed_milestone(project: Path) -> None:
    """M-001's design changed after its design review passed (an acceptance criterion added
    at the code step), so no design item judged it as approved; once committed it cannot
    change: the amendment's rework neither lists it to judge nor refuses the gate without it."""
    agent, out = interactive_design(project)
    agent.apply([*DESIGN, *wave_milestone("$5")])

    def code(state: Path) -> None:
        add_farewell_change(agent, state)
        add_change(agent, state, "CI-002", "src/wave.py", WAVE_V1)
        agent.plan("milestone", "set", "M-001", "--add-acceptance", "farewell('') == 'bye '")

    approved = Output(agent.shell(f"{through_gates(agent, out, code).if_pass} --by ann").stderr)
    agent.step(approved.route())  # executor 1, 2, 3
    agent.plan("exec", "apply", "M-001")
    agent.plan("exec", "done", "M-001", "--evidence", "ran it", "--commit")
    rework = Output(agent.plan("amend", "--reason", "bow too").stdout)  # 3
    listed = re.findall(r'"phase": "plan-design", "scope": "(M-\d+)"', rework.text)
    assert "M-001" not in listed, rework.text
    bow = [
        {"op": "milestone add", "args": {"name": "Bow", "file": ["src/bow.py"],
                                         "acceptance": ["bow() bows"]}},
        {"op": "intent add", "args": {"milestone": "$1", "file": "src/bow.py", "behavior": "bow"}},
        {"op": "qr add", "args": {"phase": "plan-design", "scope": "$1", "check": "sound",
                                  "status": "PASS"}},
        *[{"op": "qr add", "args": {"phase": "plan-design", "scope": m, "check": "sound",
                                    "status": "PASS"}} for m in listed if m != "M-003"],
    ]  # fmt: skip
    passed = agent.judge(bow, "pass")  # the design gate passes: M-001 is not asked for
    assert passed.header.startswith("PLANNER 6/11"), passed.text  # 5 passed, which printed 6


def test_an_amendment_orders_a_new_milestone_after_a_committed_one_on_its_file(
    project: Path,
) -> None:
    agent, approved = approved_plan(project)
    agent.step(approved.route())  # executor 1, 2, 3
    agent.plan("exec", "apply", "M-001")
    agent.plan("exec", "done", "M-001", "--evidence", "ran it", "--commit")
    agent.plan("amend", "--reason", "kinder")
    later = {"name": "Kinder", "file": ["src/app.py"], "acceptance": ["kinder"]}
    intent = {"milestone": "$1", "file": "src/app.py", "function": "farewell", "behavior": "k"}
    done = agent.shell(
        "plan apply -",
        input=json.dumps(
            [{"op": "milestone add", "args": later}, {"op": "intent add", "args": intent}]
        ),
    )
    said = "M-003 depends on M-001 now, added for you (M-001 is committed; both change src/app.py)"
    assert said in done.stderr
    state = Path(json.loads(agent.plan("status", "--json").stdout)["state_dir"])
    plan = json.loads((state / "plan.json").read_text())
    assert plan["milestones"][-1]["depends_on"] == ["M-001"]  # ordered by itself
    validated = agent.plan("validate", "--phase", "design")
    assert "same-file-same-wave" not in validated.stdout + validated.stderr
