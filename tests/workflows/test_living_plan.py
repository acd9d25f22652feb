"""The whole living-plan cycle, end to end, driven by what the steps print: a plan approved,
executed in part, amended mid-execution (one milestone reopened, one added), re-approved and
carried out; the result reviewed, changes requested on one milestone, corrected in a new
milestone, re-approved, carried out and accepted. The commits hold exactly the approved diffs of
each round, and `plan verify` checks the chain of approvals."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from state.storage.content import plan_hash
from tests.agent import Agent, Output
from tests.workflows.helpers import review
from tests.workflows.test_amend import (
    BOW,
    WAVE_V2,
    add_change,
    approved_plan,
    git,
    through_gates,
)

BOW_FIX = (  # M-004's correction of what M-003 committed
    "--- a/src/bow.py\n+++ b/src/bow.py\n@@ -1,2 +1,2 @@\n"
    " def bow():\n-    return 'm(_ _)m'\n+    return 'm(. .)m'\n"
)
FEEDBACK = "bow() must bow lower: m(. .)m"


def changed_lines(diff: str) -> dict[str, list[str]]:
    """Each file's added and removed lines: what a diff changes, whatever its hunk headers."""
    files: dict[str, list[str]] = {}
    current: list[str] = []
    for line in diff.splitlines():
        if line.startswith("+++ "):
            current = files.setdefault(re.sub(r"^\+\+\+ (b/)?", "", line), [])
        elif line.startswith(("--- ", "diff --git", "index ", "new file mode")):
            continue
        elif line.startswith(("+", "-")):
            current.append(line)
    return files


def planned(plan: dict, mid: str) -> dict[str, list[str]]:
    [milestone] = [m for m in plan["milestones"] if m["id"] == mid]
    files: dict[str, list[str]] = {}
    for change in milestone["code_changes"]:
        for path, lines in changed_lines(change["diff"]).items():
            files.setdefault(path, []).extend(lines)
    return files


def approved(state: Path) -> dict:
    """plan.json as the person approved it (its hash is the approval's)."""
    plan = json.loads((state / "plan.json").read_text())
    session = json.loads((state / "session.json").read_text())
    assert plan_hash(plan) == session["approval"]["sha256"]
    return plan


def changed_since_on_the_page(state: Path) -> str:
    """The review page's "changed since" section, as text (starlette's TestClient)."""
    from starlette.testclient import TestClient

    from cli.review_page.app import create_app

    token, port = "t0ken-for-tests", 8123
    app = create_app(str(state), token, "csrf-for-tests", port)
    page = TestClient(app, base_url=f"http://127.0.0.1:{port}").get(f"/?token={token}")
    assert page.status_code == 200
    section = page.text.split('<section id="since"')[1].split("</section>")[0]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", section.split(">", 1)[1])).strip()


SINCE = "since the last approval:"


def execute_rest(agent: Agent, wave: Output, since: str = "") -> Output:
    """Executor steps 4 to 9 after the wave's milestones are committed: the reviews pass. With
    `since` (after an amendment whose earlier round the reviews judged), each review names
    those milestones, lists no item of the earlier rounds and says their PASS stands."""
    out = agent.step(f"executor --step 4 --state-dir {wave.state_dir}")  # 4 impl-code-qr again
    reviews = [out.text]
    review(agent, "impl-code")
    out = agent.step(out.route("pass"))  # 5, which prints 6 (and 7 when no docs are due)
    if "EXECUTOR 7/9" not in out.text:
        out = agent.step(out.route())  # 7
    reviews.append(out.text.split("EXECUTOR 7/9")[1])
    review(agent, "impl-docs")
    for text in reviews:
        if not since:  # the first review of the work judges all of it
            assert SINCE not in text and "stand" not in text, text
            continue
        named = text.split(SINCE)[1].split("The PASS items")[0]
        assert re.findall(r"M-\d{3}", named) == since.split(), text
        assert "The PASS items on record (1) judged earlier rounds and stand" in text, text
        assert "qa-001" not in text and "Re-check" not in text and '"op": "qr add"' in text
    return agent.step(out.route("pass"))  # 8, which prints 9


def run_wave(agent: Agent, routed: Output, *milestones: str) -> tuple[Output, str]:
    """Executor 1 from the approval's routing: the first wave with work left lists exactly
    `milestones`; each is applied and committed as the prompt says."""
    wave = agent.step(routed.route())  # executor 1, which prints 2 and 3
    assert wave.header.startswith("EXECUTOR 3/9"), wave.header
    listed = re.split(r"Wave \d+:", wave.text)[1].split("For each")[0]
    assert sorted(re.findall(r"M-\d{3}", listed)) == sorted(milestones), listed
    for mid in milestones:
        agent.plan("exec", "apply", mid)
        agent.plan("exec", "done", mid, "--evidence", "ran it", "--commit")
    return wave, listed


def commit_of(state: Path, mid: str) -> str:
    runs = json.loads((state / "execution.json").read_text())["milestones"]
    [run] = [r for r in runs if r["id"] == mid]
    assert run["status"] == "done" and run["commit"], run
    return str(run["commit"])


@pytest.mark.slow
def test_the_living_plan_from_approval_to_the_accepted_result(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.planner]\nquestions_min = 0\n")
    git(project, "add", "pyproject.toml")  # the project's own settings: not the plan's change
    git(project, "commit", "-qm", "init settings")
    agent, routed = approved_plan(project)  # M-001 farewell, M-002 wave; approved by ann
    state = Path(json.loads(agent.plan("status", "--json").stdout)["state_dir"])
    rounds = {"M-001": approved(state)}

    # Round 0: the executor commits M-001; M-002 is not done when the plan must change.
    wave = agent.step(routed.route())
    agent.plan("exec", "apply", "M-001")
    agent.plan("exec", "done", "M-001", "--evidence", "ran it", "--commit")
    assert "M-002" in wave.text
    opened = agent.plan("amend", "--reason", "wave twice; bow too", "--milestone", "M-002")
    out = Output(opened.stdout)  # planner 3, with the amendment
    assert out.header.startswith("PLANNER 3/11") and "Amendment round 1" in out.text
    agent.apply(
        [
            {"op": "milestone add", "args": {"name": "Bow", "file": ["src/bow.py"],
                                             "acceptance": ["bow() bows"]}},
            {"op": "intent add", "args": {"milestone": "$1", "file": "src/bow.py",
                                          "behavior": "bow"}},
        ]
    )  # fmt: skip

    def round_1(state: Path) -> None:
        wave2 = state / "wave2.diff"
        wave2.write_text(WAVE_V2)
        agent.plan("change", "set", "CC-002", "--diff", str(wave2))
        add_change(agent, state, "CI-003", "src/bow.py", BOW)

    in_review = through_gates(agent, out, round_1)
    assert "amendment round 1 (wave twice; bow too)" in in_review.text
    since = changed_since_on_the_page(state)  # the page says what step 11 printed
    assert since.startswith("Changed since the last approval (review round 1)")
    shown = agent.plan("review", "show").stdout  # the person at a terminal sees it too
    head = "Review round 2, amendment round 1 (wave twice; bow too).\nChanged since the approval"
    assert shown.startswith(head) and "\n  + M-003 'Bow'" in shown, shown
    assert "M-003" in since and "CC-002" in since and "M-001" not in since
    routed = Output(agent.shell(f"{in_review.if_pass} --by ann").stderr)  # the person
    rounds["M-002"] = rounds["M-003"] = approved(state)
    wave, _ = run_wave(agent, routed, "M-002", "M-003")
    out = execute_rest(agent, wave)
    assert out.header.startswith("EXECUTOR 9/9") and "plan result show" in out.text
    # changes requested lead to an amended plan: the prompt says the person approves it first
    assert "they approve the\namended plan before it is carried out" in out.text

    # Result round 1: the person asks for changes on one milestone.
    shown = agent.plan("result", "show").stdout
    assert "M-003 Bow" in shown
    status = json.loads(agent.plan("status", "--json").stdout)
    assert status["status"] == "result_review"
    asked = agent.shell(
        out.if_fail.replace('"<the user\'s words>"', f"'{FEEDBACK}'")  # type: ignore[union-attr]
        + " --comment 'M-003:src/bow.py:2=lower' --by ann"
    )
    assert "changes requested (result round 1)" in asked.stderr
    session = json.loads((state / "session.json").read_text())
    amendment = session["amendments"][-1]
    assert (amendment["round"], amendment["task"], amendment["milestones"]) == (2, FEEDBACK, [])
    [comment] = session["result_reviews"][-1]["comments"]
    assert (comment["anchor"], comment["file"], comment["line"]) == ("M-003", "src/bow.py", 2)
    out = agent.step(Output(asked.stderr).route())  # planner 3, with the feedback as the task
    assert out.header.startswith("PLANNER 3/11"), out.header
    assert FEEDBACK in out.text and "on M-003 src/bow.py line 2: lower" in out.text
    assert out.text.count(FEEDBACK) == 1  # once with its comments, not again as the task

    # A committed milestone cannot be reopened: the correction is a new milestone, M-004.
    refused = agent.plan("milestone", "set", "M-003", "--name", "Bow lower", code=4)
    assert "M-003 is committed: a correction is a new milestone" in refused.stderr
    agent.apply(
        [
            {"op": "milestone add", "args": {"name": "Bow lower", "file": ["src/bow.py"],
                                             "acceptance": ["bow() bows lower"],
                                             "depends": ["M-003"]}},  # its diff builds on M-003
            {"op": "intent add", "args": {"milestone": "$1", "file": "src/bow.py",
                                          "behavior": "bow lower"}},
        ]
    )  # fmt: skip
    in_review = through_gates(
        agent, out, lambda state: add_change(agent, state, "CI-004", "src/bow.py", BOW_FIX)
    )
    assert "amendment round 2" in in_review.text and "+ M-004 'Bow lower'" in in_review.text
    since = changed_since_on_the_page(state)
    assert since.startswith("Changed since the last approval (review round 2)")
    assert "M-004" in since and "M-003" not in since
    routed = Output(agent.shell(f"{in_review.if_pass} --by ann").stderr)
    rounds["M-004"] = approved(state)
    wave, _ = run_wave(agent, routed, "M-004")
    out = execute_rest(agent, wave, since="M-004")  # M-001 to M-003 were judged in round 1
    assert out.header.startswith("EXECUTOR 9/9")

    # Result round 2 shows what round 1 did not see (M-004), the rest one line each.
    shown = agent.plan("result", "show").stdout
    assert "since result round 1: M-004 (the others as round 1 showed them; everything: plan "\
        "result show --all)" in shown  # fmt: skip
    assert "M-003 Bow (done): as result round 1 saw it" in shown
    assert "M-004 Bow lower (done)\n planned" in shown and "m(. .)m" in shown
    assert "+def bow" not in shown  # M-003's diff is not printed again
    everything = agent.plan("result", "show", "--all").stdout
    assert "since result round" not in everything and "+def bow" in everything
    assert shown.split("sha256 ")[1][:64] == everything.split("sha256 ")[1][:64]
    (state / "history").rename(state / "history.away")  # a clone: the plan round 1 saw is unknown
    assert agent.plan("result", "show").stdout == everything
    (state / "history.away").rename(state / "history")

    # Result round 2: accepted; the session is complete.
    accepted = agent.shell(f"{out.if_pass} --by ann")
    assert "DONE: the result is accepted (round 2, by ann)" in accepted.stderr
    session = json.loads((state / "session.json").read_text())
    assert session["status"] == "completed"
    assert [r["verdict"] for r in session["result_reviews"]] == ["changes_requested", "accepted"]
    assert agent.plan("status").stdout.rstrip().endswith("DONE")

    # The commits hold exactly the approved diffs of the round that approved each milestone.
    subjects = git(project, "log", "--format=%s").splitlines()
    assert [s.split()[0] for s in subjects][:4] == ["M-004", "M-003", "M-002", "M-001"]
    for mid, plan in rounds.items():
        commit = git(project, "show", "--format=", "--no-renames", commit_of(state, mid))
        assert changed_lines(commit) == planned(plan, mid), mid
    assert (project / "src" / "bow.py").read_text() == "def bow():\n    return 'm(. .)m'\n"

    # The chain of approvals verifies; a tampered amendment does not.
    agent.plan("verify")
    session_path = state / "session.json"
    kept = session_path.read_text()
    tampered = json.loads(kept)
    tampered["amendments"][1]["approval"]["sha256"] = "0" * 64
    session_path.write_text(json.dumps(tampered))
    failed = agent.plan("verify", code=3)
    assert "session.json:amendments" in failed.stdout and "(amendment-chain)" in failed.stdout
    session_path.write_text(kept)
    agent.plan("verify")
    reviews = json.loads(kept)["reviews"]
    seen = [r["revision"] for r in reviews if r["verdict"] == "approved"]
    assert len(seen) == 3 and all(seen)  # the original approval and two re-approvals
    revision = state / "history" / f"{seen[1]}.json"  # what amendment round 1 approved
    kept_revision = revision.read_text()
    edited = json.loads(kept_revision)
    edited["milestones"][-1]["name"] = "Bow, approved by nobody"
    revision.write_text(json.dumps(edited))
    failed = agent.plan("verify", code=3)
    assert f"history/{seen[1]}" in failed.stdout and "(amendment-hash)" in failed.stdout
    revision.write_text(kept_revision)
    agent.plan("verify")
