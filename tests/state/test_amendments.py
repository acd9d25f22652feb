"""What an open amendment round may change (state/validation/amendments.scope_refusal) and the
chain of approvals `plan verify` checks (chain_findings), on documents built in memory."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from state.rules.amendments import chain_findings, open_amendment, scope_refusal
from tests.state.builders import TS, decision, milestone, plan


def approval(n: int) -> dict[str, Any]:
    return {"by": "ann", "at": TS, "sha256": f"{n:x}" * 64}


def amendment(n: int, milestones: list[str], approved: int | None) -> dict[str, Any]:
    return {
        "round": n,
        "reason": "r",
        "task": None,
        "opened_at": TS,
        "from_status": "executing",
        "milestones": milestones,
        "approval": approval(n),
        "approved": approval(n + 1) if approved else None,
    }


def approved_plan() -> dict[str, Any]:
    return plan(milestones=[milestone(1), milestone(2)], decisions=[decision(1)])


EXECUTION = {"milestones": [{"id": "M-001", "status": "done", "commit": "a" * 40}]}
ROUND = amendment(1, ["M-002"], None)


def refusal(change: Any) -> str:
    old = approved_plan()
    new = copy.deepcopy(old)
    change(new)
    return scope_refusal(ROUND, old, new, EXECUTION)


def test_new_milestones_the_reopened_one_and_new_decisions_are_open() -> None:
    def change(new: dict[str, Any]) -> None:
        new["milestones"].append(milestone(3, name="Bow"))
        new["milestones"][1]["name"] = "Wave twice"
        new["planning_context"]["decision_log"].append(decision(2))
        new["planning_context"]["decision_log"][0].update(
            superseded_by="DL-002", superseded_reason="waves too"
        )
        new["frozen_at"] = None

    assert refusal(change) == ""


def test_a_committed_milestone_is_refused_by_name() -> None:
    said = refusal(lambda new: new["milestones"][0].update(name="Kinder"))
    assert said == "M-001 is committed: a correction is a new milestone (plan milestone add)"


def test_what_the_round_does_not_name_stays() -> None:
    closed = amendment(1, [], None)
    old = approved_plan()
    new = copy.deepcopy(old)
    new["milestones"][1]["name"] = "Wave twice"
    assert "M-002 is not open in amendment round 1" in scope_refusal(closed, old, new, EXECUTION)
    assert "reopened by amendment round 1" in refusal(lambda new: new["milestones"].pop(1))
    assert "overview is not open" in refusal(lambda new: new["overview"].update(title="T"))
    rewrite = refusal(lambda n: n["planning_context"]["decision_log"][0].update(decision="X"))
    assert "DL-001 is not open in amendment round 1" in rewrite
    gone = refusal(lambda n: n["planning_context"]["decision_log"].clear())
    assert "DL-001 stays in amendment round 1" in gone


def session(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """A session whose approvals chain: the original, then each round's re-approval."""
    approved = [approval(1)] + [r["approved"] for r in rounds if r["approved"]]
    reviews = [
        {"round": i + 1, "verdict": "approved", "at": TS, "sha256": a["sha256"]}
        for i, a in enumerate(approved)
    ]
    last = rounds[-1]["approved"] if rounds else approval(1)
    return {"amendments": rounds, "reviews": reviews, "approval": last}


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=1, max_value=5), st.data())
def test_a_chain_holds_and_any_broken_link_is_found(count: int, data: st.DataObject) -> None:
    rounds = [amendment(n, [], n) for n in range(1, count + 1)]
    whole = session(rounds)
    known = {approval(n)["sha256"] for n in range(1, count + 2)}
    assert chain_findings(whole, lambda: known) == []
    assert open_amendment(whole) is None
    broken = copy.deepcopy(whole)
    index = data.draw(st.integers(min_value=0, max_value=count - 1))
    field = data.draw(st.sampled_from(["approval", "approved"]))
    broken["amendments"][index][field]["sha256"] = "e" * 64
    rules = {f.rule for f in chain_findings(broken, lambda: known)}
    assert "amendment-chain" in rules
    if field == "approved":
        assert "amendment-hash" in rules


def test_only_the_last_round_may_be_open() -> None:
    rounds = [amendment(1, [], 1), amendment(2, [], None)]
    opened = {**session(rounds[:1]), "amendments": rounds, "approval": None}
    assert chain_findings(opened) == [] and open_amendment(opened) == rounds[1]
    rounds[0]["approved"] = None
    rules = [f.rule for f in chain_findings(opened)]
    assert rules and set(rules) == {"amendment-chain"}
