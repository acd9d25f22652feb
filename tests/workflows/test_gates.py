"""QR gates: refusals from the record, iterations, severities, escalation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared.qr import blocking_severities
from tests.workflows.helpers import DESIGN, review, start, state_of


def at_design_review(project: Path):  # -> (agent, out at step 4)
    agent, out = start(project)
    agent.apply(DESIGN)
    return agent, agent.step(out.route())


def loop_state(out) -> dict:
    session = json.loads((state_of(out) / "session.json").read_text())
    return session["qr"].get("plan-design", {"state": "initial"})


def test_pass_is_refused_while_a_blocking_item_is_fail_or_todo(project: Path) -> None:
    agent, out = at_design_review(project)
    qa = agent.plan("qr", "add", "--phase", "plan-design", "--check", "reasons given").stdout
    refused = agent.shell(out.route("pass"), code=3)
    assert "MUST item is TODO: reasons given" in refused.stderr
    assert f"plan qr set {qa.strip()} --phase plan-design --status VERDICT" in refused.stderr
    assert "--status PASS" not in refused.stderr  # fix and re-check, never flip the verdict
    agent.plan(
        "qr",
        "set",
        qa.strip(),
        "--phase",
        "plan-design",
        "--status",
        "FAIL",
        "--finding",
        "DL-001 gives no reason",
    )
    assert "MUST item is FAIL" in agent.shell(out.route("pass"), code=3).stderr
    assert loop_state(out)["state"] == "initial"  # nothing recorded by a refusal


def test_pass_needs_a_reviewer_item_and_the_report(project: Path) -> None:
    agent, out = at_design_review(project)
    assert "no item recorded by the reviewer" in agent.shell(out.route("pass"), code=3).stderr
    (state_of(out) / "qr-plan-design.json").unlink()
    assert "qr-plan-design.json: missing" in agent.shell(out.route("pass"), code=3).stderr


def test_mechanical_items_are_recorded_before_the_reviewer_starts(project: Path) -> None:
    agent, out = start(project)
    agent.apply(DESIGN[:3])  # a milestone without intents
    out = agent.step(out.route())
    report = json.loads((state_of(out) / "qr-plan-design.json").read_text())
    [item] = [i for i in report["items"] if i["source"] == "validator"]
    assert item["status"] == "FAIL" and "no code intent" in item["check"]
    assert item["id"] in out.text
    review(agent, "plan-design")
    assert "no code intent" in agent.shell(out.route("pass"), code=3).stderr


def test_fail_needs_a_fail_item_with_a_finding(project: Path) -> None:
    agent, out = at_design_review(project)
    review(agent, "plan-design")
    assert "no FAIL item with a finding" in agent.shell(out.route("fail"), code=3).stderr


def test_each_failed_gate_adds_one_iteration_and_fix_mode_shows_the_items(project: Path) -> None:
    agent, out = at_design_review(project)
    qa = review(agent, "plan-design", "FAIL", finding="risk R-? missing")
    gate = agent.step(out.route("fail"))
    assert loop_state(out) == {"iteration": 2, "state": "retry", "gate": loop_state(out)["gate"]}
    again = agent.step(out.route("fail"))  # re-running the same gate changes nothing
    assert again.text == gate.text and loop_state(out)["iteration"] == 2
    agent.shell(out.route("pass"), code=3)  # the opposite verdict on the same gate is refused
    fix = gate  # the failed gate printed fix mode in the same call
    assert gate.text.startswith("planner steps 5 and 3 follow (run here")
    assert "\n\nPLANNER 5/11" in gate.text and gate.header.startswith("PLANNER 3/11")
    assert "FIX MODE, iteration 2" in fix.text and "risk R-? missing" in fix.text
    assert fix.route("pass") == out.route("pass")  # re-check, then the gate
    review_again = agent.step(full_review(fix))  # or a full review, as fix mode offers
    assert f"{qa} MUST TODO" in review_again.text  # the reviewer must judge it again
    assert "iteration 2 (any item FAIL or TODO blocks a pass)" in review_again.text


def test_blocking_severities_by_iteration() -> None:
    assert blocking_severities(1) == blocking_severities(2) == ("MUST", "SHOULD", "COULD")
    assert blocking_severities(3) == blocking_severities(4) == ("MUST", "SHOULD")
    assert blocking_severities(5) == blocking_severities(9) == ("MUST",)


def full_review(fix) -> str:
    """The review step fix mode offers instead of re-checking its items (step 4)."""
    return fix.route("pass").replace("--step 5", "--step 4").replace(" --qr-status pass", "")


def fail_round(agent, out, finding: str):
    """From a QR step: fail the gate, go through fix mode, arrive at the QR step again."""
    qa = review(agent, "plan-design", "FAIL", finding=finding)
    gate = agent.step(out.route("fail"))  # prints fix mode too
    return qa, gate, agent.step(full_review(gate))


def test_at_iteration_3_a_could_item_no_longer_blocks(project: Path) -> None:
    agent, out = at_design_review(project)
    for n in (1, 2):
        qa, _, out = fail_round(agent, out, f"round {n}")
        agent.plan("qr", "set", qa, "--phase", "plan-design", "--status", "PASS")
    assert loop_state(out)["iteration"] == 3
    assert "iteration 3 (a MUST/SHOULD item FAIL or TODO blocks a pass)" in out.text
    review(agent, "plan-design", "FAIL", severity="COULD", finding="naming could be nicer")
    review(agent, "plan-design")
    passed = agent.step(out.route("pass"))
    assert passed.header.startswith("PLANNER 6/11")
    # a pass after fix rounds reads as a pass (an agent read "passed at iteration 3" as failed)
    assert "\nGate plan-design passed.\n" in passed.text and "passed at" not in passed.text


def test_the_loop_stops_at_qr_max_iterations_until_the_user_accepts(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.planner]\nqr_max_iterations = 2\n")
    agent, out = at_design_review(project)
    agent.plan("qr", "accept", "--phase", "plan-design", "--by", "ann", "--reason", "r", code=3)
    _, _, out = fail_round(agent, out, "first")
    review(agent, "plan-design", "FAIL", finding="still no tests planned")
    stopped = agent.step(out.route("fail"))  # iteration 2 = the last: exit 0, no loop
    assert loop_state(out)["state"] == "escalated" and loop_state(out)["iteration"] == 2
    assert "still no tests planned" in stopped.text and "ask whether to accept" in stopped.text
    assert stopped.next.startswith("plan qr accept --phase plan-design")
    agent.shell(out.route("pass"), code=3)
    accepted = agent.plan(
        "qr",
        "accept",
        "--phase",
        "plan-design",
        "--by",
        "ann",
        "--reason",
        "tests come next sprint",
    )
    assert "NEXT: planner --step 5" in accepted.stderr and "--qr-status pass" in accepted.stderr
    report = json.loads((state_of(out) / "qr-plan-design.json").read_text())
    assert report["accepted"]["by"] == "ann" and report["accepted"]["items"]
    passed = agent.step(accepted.stderr.split("NEXT: ", 1)[1].strip())
    assert "with findings the user accepted" in passed.text
    assert passed.header.startswith("PLANNER 6/11")  # the gate printed step 6


@pytest.mark.parametrize("verdict", ["pass", "fail"])
def test_a_gate_needs_its_verdict_and_other_steps_refuse_one(project: Path, verdict) -> None:
    agent, out = at_design_review(project)
    gate = out.route(verdict).replace(f" --qr-status {verdict}", "")
    assert "needs --qr-status" in agent.shell(gate, code=2).stderr
    assert (
        "takes no --qr-status"
        in agent.shell(f"planner --step 4 --qr-status {verdict}", code=2).stderr
    )
