"""Fewer calls for the same walk (issue 19, the agent-cost walk round 2): steps that need no
agent work print the next step, fix rounds re-check and go to the gate, step 6 makes the
worktree, the review page stops after the verdict it waited for, `exec done --commit`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.agent import Agent, Output
from tests.cli.review_helpers import to_review
from tests.workflows.helpers import DESIGN, add_farewell_change, review, start, state_of


def test_step_1_prints_discovery_and_discovery_leads_to_design(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.planner]\nquestions_min = 1\n")
    agent = Agent(project, env={})
    out = agent.step("planner --step 1 --task 'Add a farewell'")
    assert "planner step 2 follows (run here: do not run it again)." in out.text
    assert out.text.startswith("PLANNER 1/11 plan-init\n")  # no verdict: its chain as it was
    assert out.header == "PLANNER 2/11 context-verify"
    assert out.route().startswith("planner --step 3 ")  # never back to itself
    assert "With the answers recorded, run NEXT" in out.text
    refused = agent.shell(out.route(), code=3)  # design waits for the answers
    assert "more question(s) must be answered" in refused.stderr
    agent.plan("context", "set", "--goal", "say goodbye")
    question = [{"category": "scope", "kind": "text", "text": "Who says it?", "why": "w"}]
    agent.apply([{"op": "question import", "args": {"source": question}}])  # JSON as JSON
    agent.plan("question", "answer", "Q-001", "the app")
    assert agent.step(out.route()).header == "PLANNER 3/11 plan-design-execute"


def test_fix_mode_names_the_recheck_and_the_gate_refuses_an_unchanged_fail(
    project: Path,
) -> None:
    agent, out = start(project)
    agent.apply(DESIGN)
    out = agent.step(out.route())  # 4
    qa = review(agent, "plan-design", "FAIL", finding="DL-001 gives no reason")
    fix = agent.step(out.route("fail"))  # 5 fail, which prints 3 in fix mode
    assert fix.header.startswith("PLANNER 3/11") and "FIX MODE" in fix.text
    assert f'{{"op": "qr set", "args": {{"id": "{qa}", "phase": "plan-design"' in fix.text
    assert fix.route("pass").startswith("planner --step 5 ") and fix.next is None
    assert "a full review instead: planner --step 4" in fix.text
    refused = agent.shell(fix.route("pass"), code=3)  # the item is still FAIL
    assert f"{qa}" in refused.stderr and "set it to PASS" not in refused.stderr
    fixed = {"op": "decision set", "args": {"id": "DL-001", "reasoning": "Same shape."}}
    recheck = {"op": "qr set", "args": {"id": qa, "phase": "plan-design", "status": "PASS"}}
    agent.apply([fixed, recheck])  # the fix and the re-check in one call
    code = agent.step(fix.route("pass"))
    assert code.header.startswith("PLANNER 6/11") and "Gate plan-design passed" in code.text


def test_the_gate_runs_the_validators_checks_itself(project: Path) -> None:
    """A fix round that skips the review step cannot pass what the validator refuses."""
    agent, out = start(project)
    agent.apply(DESIGN)
    out = agent.step(out.route())  # 4
    qa = review(agent, "plan-design", "FAIL", finding="too vague")
    fix = agent.step(out.route("fail"))
    broken = {"op": "milestone add", "args": {"name": "Empty", "file": ["src/x.py"]}}
    recheck = {"op": "qr set", "args": {"id": qa, "phase": "plan-design", "status": "PASS"}}
    agent.apply([broken, recheck])
    refused = agent.shell(fix.route("pass"), code=3)
    assert "MUST item is FAIL: no code intent" in refused.stderr  # the validator's new item


def test_step_6_makes_the_worktree_and_names_it(project: Path) -> None:
    agent, out = start(project)
    agent.apply(DESIGN)
    out = agent.step(out.route())
    review(agent, "plan-design")
    code = agent.step(out.route("pass"))  # 5, which prints 6
    tree = state_of(out) / "worktree"
    assert "captured edits): STATE_DIR/worktree" in code.text
    assert (tree / "src" / "app.py").read_text() == (project / "src" / "app.py").read_text()
    assert "plan worktree prints" not in code.text
    again = agent.step(f"planner --step 6 --state-dir '{state_of(out)}'")  # a re-render
    assert "STATE_DIR/worktree" in again.text
    assert subprocess.run(  # the project's own status does not show it
        ["git", "status", "--porcelain"], cwd=project, capture_output=True, text=True
    ).stdout.strip() in ("", "?? .planner/")


def _serve(agent: Agent, *extra: str) -> subprocess.Popen[str]:
    page = subprocess.Popen(
        ["plan", "review", "open", "--no-browser", *extra], cwd=agent.project, env=agent.env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert page.stdout is not None
    assert page.stdout.readline().startswith("http://127.0.0.1:")  # serving
    return page


@pytest.mark.slow
def test_the_review_server_stops_after_the_verdict_and_prints_the_rework_step(
    project: Path,
) -> None:
    agent, _ = to_review(project)
    page = _serve(agent, "--wait")
    agent.plan("review", "reject", "--comment", "M-001: smaller")
    printed, errors = page.communicate(timeout=60)  # it exits by itself
    assert page.returncode == 0, errors
    assert "Sent back: planner step 3 follows (run here: do not run it again)." in printed
    rework = Output(printed)
    assert rework.header.startswith("PLANNER 3/11") and "smaller" in rework.text
    assert rework.route("pass").startswith("planner --step 5 ")  # re-check, then the gate
    session = json.loads((Path(rework.state_dir) / "session.json").read_text())
    assert session["step"] == 3  # the rework step has run: do not run it again


@pytest.mark.slow
def test_the_review_server_stops_after_an_approval_with_the_executor_line(
    project: Path,
) -> None:
    """After the approval the page's wait runs executor step 1 (which prints 2 and 3), as
    step 11 told the agent to: its routing is the first wave's."""
    agent, out = to_review(project)
    page = _serve(agent, "--wait")
    agent.shell(f"{out.if_pass} --by ann")
    printed, errors = page.communicate(timeout=60)
    assert page.returncode == 0, errors
    assert "Approved: executor step 1 follows (run here: do not run it again)." in printed
    assert "EXECUTOR 1/9 init" in printed and "EXECUTOR 3/9 impl-execute" in printed
    assert printed.splitlines()[-1] == "NEXT: plan exec apply M-001"


@pytest.mark.slow
def test_the_review_server_stops_cleanly_with_the_page_still_open(project: Path) -> None:
    """The page open in a browser holds /events; after the verdict the server stops without
    a word of its own: the rework step's prompt is all it prints."""
    import http.client
    from urllib.parse import urlsplit

    agent, _ = to_review(project)
    page = subprocess.Popen(
        ["plan", "review", "open", "--no-browser", "--wait"], cwd=agent.project, env=agent.env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert page.stdout is not None
    url = urlsplit(page.stdout.readline().strip())
    browser = http.client.HTTPConnection("127.0.0.1", url.port, timeout=60)
    browser.request("GET", f"/events?{url.query}")
    events = browser.getresponse()
    assert events.readline() == b"retry: 1000\n"  # the stream is open
    agent.plan("review", "reject", "--comment", "M-001: smaller")
    printed, errors = page.communicate(timeout=60)
    browser.close()
    assert page.returncode == 0, errors
    for word in ("Traceback", "CancelledError", "graceful shutdown"):
        assert word not in printed and word not in errors, errors
    rework = Output(printed)
    assert rework.header.startswith("PLANNER 3/11")
    assert printed.splitlines()[-1].startswith("IF FAIL: planner --step 5 ")  # its last line


@pytest.mark.slow
def test_a_page_without_wait_keeps_serving(project: Path) -> None:
    agent, out = to_review(project)
    page = _serve(agent)
    try:
        agent.shell(f"{out.if_pass} --by ann")
        try:
            page.wait(timeout=2)
            raise AssertionError("the page stopped without --wait")
        except subprocess.TimeoutExpired:
            pass
    finally:
        page.terminate()
        page.wait(timeout=10)


def asleep_in_its_poll(proc: subprocess.Popen[str]) -> None:
    """Until `proc` sleeps (Linux: its wchan), which `plan review wait` does only in its poll
    loop, after reading the open round; a fixed delay is too short on a busy machine."""
    import time

    wchan = Path(f"/proc/{proc.pid}/wchan")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if wchan.read_text() == "hrtimer_nanosleep":
                return
        except OSError:  # no /proc: fall back to a generous delay
            time.sleep(2)
            return
        time.sleep(0.05)


@pytest.mark.slow
def test_review_wait_prints_the_rework_steps_prompt(project: Path) -> None:
    agent, _ = to_review(project)
    waiting = subprocess.Popen(
        ["plan", "review", "wait", "--timeout", "60s"], cwd=agent.project, env=agent.env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    asleep_in_its_poll(waiting)  # the wait has read the open round
    agent.process = True  # the verdict as a process too: it starts no sooner than the wait did
    agent.plan("review", "reject", "--feedback", "not like this")
    printed, errors = waiting.communicate(timeout=60)
    assert waiting.returncode == 0, errors
    assert Output(printed).header.startswith("PLANNER 3/11") and "not like this" in printed


def late_wait(agent: Agent, *args: str) -> subprocess.CompletedProcess[str]:
    """`plan review …` as its own process, started after the verdict landed."""
    return subprocess.run(
        ["plan", "review", *args], cwd=agent.project, env=agent.env,
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.slow
def test_a_wait_started_after_the_rejection_reports_it(project: Path) -> None:
    """Issue 35: the person's verdict came before the wait did; it prints what a running
    wait would have (test_review_wait_prints_the_rework_steps_prompt), from the state."""
    agent, _ = to_review(project)
    agent.process = True
    agent.plan("review", "reject", "--feedback", "not like this")
    named = late_wait(agent, "wait", "--round", "1", "--json")
    assert named.returncode == 0, named.stderr
    assert json.loads(named.stdout)["next"].startswith("planner --step 3 ")
    beyond = late_wait(agent, "wait", "--round", "2")
    assert beyond.returncode == 3 and "no plan review round 2 (the latest is round 1" in (
        beyond.stderr
    )
    late = late_wait(agent, "wait", "--timeout", "60s")
    assert late.returncode == 0, late.stderr
    assert Output(late.stdout).header.startswith("PLANNER 3/11") and "not like this" in late.stdout


@pytest.mark.slow
def test_a_wait_started_after_the_approval_runs_executor_step_1(project: Path) -> None:
    """Issue 35: `plan review open --wait` and `plan review wait` after the approval: the
    page is not served, and the wait runs executor step 1 as a running one would have."""
    agent, _ = to_review(project)
    agent.process = True
    agent.plan("review", "approve", "--by", "ann")
    opened = late_wait(agent, "open", "--wait", "--no-browser", "--json")
    assert opened.returncode == 0, opened.stderr
    assert json.loads(opened.stdout)["next"].startswith("executor --step 1 ")  # no URL
    assert "Serving" not in opened.stderr
    late = late_wait(agent, "wait", "--timeout", "60s")
    assert late.returncode == 0, late.stderr
    assert late.stdout.startswith("Approved: executor step 1 follows")
    assert "EXECUTOR 1/9" in late.stdout


def test_the_executor_chains_to_the_work_and_done_commits(project: Path) -> None:
    from tests.workflows.helpers import to_approval

    agent, out = to_approval(project)
    first = agent.step(out.route())  # executor 1, which prints 2 and 3
    assert "executor step 2 follows" in first.text and "executor step 3 follows" in first.text
    assert first.header.startswith("EXECUTOR 3/9")
    # Step 1 says to commit .planner/ first (planner step 1 said it would): the agent does
    first_line = "First, before any other command, commit the"
    [line] = [x for x in first.text.splitlines() if x.startswith(first_line)]
    agent.shell(line.split(": ", 1)[1])
    tracked = subprocess.run(
        ["git", "ls-files", ".planner"], cwd=project, capture_output=True, text=True
    ).stdout.split()
    names = {t.rsplit("/", 1)[-1] for t in tracked}
    assert {"plan.json", "session.json", "execution.json", "plan.md"} <= names, tracked
    assert not {"ACTIVE", "audit.jsonl", ".lock"} & names, tracked
    agent.plan("exec", "apply", "M-001")
    done = agent.plan("exec", "done", "M-001", "--evidence", "ran it", "--commit")
    assert "M-001 done" in done.stderr and "committed" in done.stderr
    log = subprocess.run(
        ["git", "log", "--format=%s", "-1"], cwd=project, capture_output=True, text=True
    ).stdout
    assert log.startswith("M-001 ")
    out = Output(done.stdout)  # the wave's last done printed 4: step 3's NEXT said so
    assert first.next == "plan exec apply M-001", first.next
    review(agent, "impl-code")
    docs = agent.step(out.route("pass"))  # 5, which prints 6 (documentation to write)
    assert docs.header.startswith("EXECUTOR 6/9") and "M-001" in docs.text


def test_exec_step_6_chains_to_its_review_when_nothing_is_to_write(project: Path) -> None:
    agent, out = start(project)
    agent.apply(DESIGN)
    out = agent.step(out.route())
    review(agent, "plan-design")
    out = agent.step(out.route("pass"))  # 6
    add_farewell_change(agent, state_of(out))
    out = agent.step(out.route())
    review(agent, "plan-code")
    out = agent.step(out.route("pass"))  # 9: no plan-level documentation
    out = agent.step(out.route())
    review(agent, "plan-docs")
    out = agent.step(out.route("pass"))  # 11, approved (non-interactive)
    out = agent.step(out.route())  # executor 1, 2, 3
    agent.plan("exec", "apply", "M-001")
    out = Output(agent.plan("exec", "done", "M-001", "--evidence", "e", "--commit").stdout)  # 4
    review(agent, "impl-code")
    out = agent.step(out.route("pass"))  # 5, 6, 7
    assert out.header.startswith("EXECUTOR 7/9") and "nothing to write here" in out.text


def test_running_a_chained_step_again_changes_nothing(project: Path) -> None:
    from tests.workflows.helpers import to_approval

    agent = Agent(project)
    first = agent.step(
        "planner --step 1 --task 'Add a farewell' --non-interactive"
    )  # 1, which prints 2
    session = Path(first.state_dir) / "session.json"
    before = session.read_bytes()
    again = agent.step(f"planner --step 1 --state-dir '{first.state_dir}'")
    assert again.text == first.text and session.read_bytes() == before
    agent.plan("cancel")
    agent, out = to_approval(project)
    agent.step(out.route())  # executor 1, 2 and 3
    before = (state_of(out) / "execution.json").read_bytes()
    for step in (1, 2):  # each ran on to step 3: a re-render of the chain from there
        rerun = agent.step(f"executor --step {step} --state-dir '{out.state_dir}'")
        assert rerun.header.startswith("EXECUTOR 3/9")
        assert (state_of(out) / "execution.json").read_bytes() == before


def test_the_design_batch_takes_the_choice_with_options_as_json(project: Path) -> None:
    agent, out = start(project)
    assert '{"op": "choice add", "args": {"topic": "T", "option_json": [{' in out.text
    options = [{"name": "inline", "recommended": True}, {"name": "helper", "cons": ["more"]}]
    choice = {"op": "choice add", "args": {"topic": "Where", "option_json": options}}
    created = agent.apply([*DESIGN, choice])
    assert created[-3:] == ["D-001", "D-001/OPT-A", "D-001/OPT-B"]
    shown = json.loads(agent.plan("show", "D-001", "--json").stdout)
    assert [o["name"] for o in shown["options"]] == ["inline", "helper"]
    assert shown["options"][1]["cons"] == ["more"]


def test_the_users_words_once_in_a_session_then_one_line(project: Path) -> None:
    from tests.workflows.test_cost import README_DIFF, interactive

    agent, out = interactive(project)  # Q-001 answered "the app"
    later = {"name": "Document farewell", "file": ["README.md"], "doc_only": True}
    readme = {"milestone": "M-002", "file": "README.md"}
    agent.apply(
        [
            *DESIGN,
            {"op": "milestone add", "args": {**later, "depends": ["M-001"]}},
            {"op": "intent add", "args": {**readme, "behavior": "README says farewell()"}},
        ]
    )
    out = agent.step(out.route())  # 4
    review(agent, "plan-design")
    out = agent.step(out.route("pass"))  # 6
    add_farewell_change(agent, state_of(out))
    out = agent.step(out.route())  # 7
    review(agent, "plan-code")
    out = agent.step(out.route("pass"))  # 9
    (state_of(out) / "readme.diff").write_text(README_DIFF)
    agent.plan("change", "add", "--intent", "CI-002", "--file", "README.md",
               "--diff", str(state_of(out) / "readme.diff"))  # fmt: skip
    out = agent.step(out.route())  # 10
    review(agent, "plan-docs")
    out = agent.step(out.route("pass"))  # 11
    approved = agent.shell(f"{out.if_pass} --by ann")
    wave_1 = agent.step(approved.stderr.split("NEXT: ", 1)[1].strip())  # executor 1, 2, 3
    line = "The user's words (Q-001) unchanged since planner step 3: plan show --answers"
    assert "Wave 1" in wave_1.text and "-> the app" not in wave_1.text and line in wave_1.text
    agent.plan("exec", "apply", "M-001")
    wave_2 = Output(agent.plan("exec", "done", "M-001", "--evidence", "e", "--commit").stdout)
    assert "Wave 2" in wave_2.text and "-> the app" not in wave_2.text
    assert line in wave_2.text
