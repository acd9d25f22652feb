"""Routing and order: skips, refusals, next/status/role, JSON output."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from shared.routing import quote
from skills.planner.steps import refuse_gutted
from state.rules.session_store import Store
from tests.agent import Agent, Output
from tests.workflows.helpers import (
    DESIGN,
    DOCS_ONLY,
    review,
    start,
    state_of,
    to_approval,
    to_code_step,
)


def test_routing_lines_are_quoted_commands_that_run_from_anywhere(
    project: Path, tmp_path: Path
) -> None:
    spaced = tmp_path / "a project's dir"
    project.rename(spaced)
    agent = Agent(spaced, process=True)  # a real shell runs the routing lines
    out = agent.step("planner --step 1 --task 'Add \"quotes\" & more'")  # prints step 2
    assert shlex.split(out.route()) == [
        "planner",
        "--step",
        "3",
        "--state-dir",
        str(spaced / ".planner" / state_of(out).name),
    ]
    elsewhere = Agent(tmp_path, process=True)  # another directory: the routing line still works
    again = out.route().replace("--step 3", "--step 2", 1)
    assert elsewhere.step(again).header == "PLANNER 2/11 context-verify"


@given(st.text())
def test_quoting_matches_shlex(word: str) -> None:
    if word.startswith("<") and word.endswith(">"):  # placeholders are shown as they are
        assert quote(word) == f"'{word}'"
    else:
        assert quote(word) == shlex.quote(word)


def test_a_step_out_of_order_is_refused_with_the_next_command(project: Path) -> None:
    agent = Agent(project)
    out = agent.step("planner --step 1 --task t")
    refused = agent.shell(f"planner --step 4 --state-dir '{out.state_dir}'", code=3)
    assert "out of order" in refused.stderr and "planner --step 3" in refused.stderr
    agent.shell(f"planner --step 12 --state-dir '{out.state_dir}'", code=2)


def test_design_needs_the_goal_from_discovery(project: Path) -> None:
    agent = Agent(project)
    out = agent.step("planner --step 1 --task t --non-interactive")
    refused = agent.shell(out.route(), code=3)
    assert "task_spec.goal: empty (fix: plan context set --goal G)" in refused.stderr


def test_quick_depth_goes_from_the_design_gate_to_approval(project: Path) -> None:
    agent, out = start(project, "--depth", "quick")
    agent.apply(DESIGN)
    out = agent.step(out.route())
    review(agent, "plan-design")
    gate = agent.step(out.route("pass"))
    assert "Skipping steps 6 plan-code-execute, 7 plan-code-qr" in gate.text
    assert gate.text.startswith("planner steps 5 and 11 follow")
    assert gate.header.startswith("PLANNER 11/11")
    final = gate  # the gate ran step 11 (quick: no verdict) in the same call
    assert "approved by auto" in final.text and final.next.startswith("executor --step 1")
    assert (state_of(out) / "plan.md").read_text().startswith("# Farewell")


def test_a_documentation_only_plan_skips_plan_code(project: Path) -> None:
    agent, out = start(project)
    agent.apply(DOCS_ONLY)
    out = agent.step(out.route())
    review(agent, "plan-design")
    gate = agent.step(out.route("pass"))
    assert "Skipping steps 6 plan-code-execute, 7 plan-code-qr, 8 plan-code-qr-gate." in gate.text
    assert gate.header.startswith("PLANNER 9/11")  # the gate printed step 9


def test_after_approval_the_plan_and_the_planner_refuse_with_exit_4(project: Path) -> None:
    agent, out = to_approval(project)
    plan_json = state_of(out) / "plan.json"
    before = plan_json.read_bytes()
    assert "frozen" in agent.plan("milestone", "add", "--name", "late", code=4).stderr
    assert (
        "cannot become"
        in agent.shell(f"planner --step 9 --state-dir '{out.state_dir}'", code=4).stderr
    )
    agent.step(f"planner --step 11 --state-dir '{out.state_dir}' --qr-status pass")  # re-render
    assert plan_json.read_bytes() == before


def test_the_executor_refuses_a_plan_that_is_not_frozen(project: Path) -> None:
    agent, out = to_code_step(project)
    refused = agent.shell(f"executor --step 1 --state-dir '{out.state_dir}'", code=3)
    assert "not frozen" in refused.stderr


def test_the_executor_refuses_a_plan_edited_after_approval(project: Path) -> None:
    agent, out = to_approval(project)
    plan_json = state_of(out) / "plan.json"
    plan = json.loads(plan_json.read_text())
    plan["overview"]["title"] = "Edited by hand"
    plan_json.write_text(json.dumps(plan, indent=2))
    assert "content changed after approval" in agent.shell(out.route(), code=3).stderr
    assert agent.plan("verify", code=3).returncode == 3


def test_impl_review_waits_for_every_milestone(project: Path) -> None:
    agent, out = to_approval(project)
    wave = agent.step(out.route())  # executor 1, which prints 2 and 3
    assert wave.next and wave.next == "plan exec apply M-001"
    refused = agent.shell(f"executor next --state-dir {wave.state_dir}", code=3)  # step 4
    assert "milestone is pending (fix: plan exec done M-001" in refused.stderr


def test_drift_is_reported_at_executor_step_1(project: Path) -> None:
    agent, out = to_approval(project)
    (project / "src" / "app.py").write_text("# changed since planning\n")
    first = agent.step(out.route())
    assert "Drift" in first.text and "src/app.py" in first.text
    execution = json.loads((state_of(out) / "execution.json").read_text())
    assert execution["drift"] == ["src/app.py"]
    assert "no longer apply" in first.text  # step 2, printed by step 1


def test_next_status_and_role(project: Path) -> None:
    agent, out = start(project)
    state = out.state_dir
    agent.apply(DESIGN)
    status = json.loads(agent.shell("planner status --json").stdout)
    assert status["status"] == "design" and status["step"] == 3
    assert status["next"].startswith("NEXT: planner --step 4")
    assert "NEXT: planner --step 4" in agent.shell("planner status").stdout
    qr = agent.step("planner next")  # runs step 4
    assert qr.header == "PLANNER 4/11 plan-design-qr"
    assert "give --qr-status" in agent.shell("planner next", code=2).stderr
    review(agent, "plan-design")
    passed = agent.step("planner next --qr-status pass")  # the gate, then step 6
    first, _, rest = passed.text.partition("\n\n")
    assert first == (
        "planner steps 5 and 6 follow (run here: do not run them again); work at step 6."
    )  # said before the gate's text, so no reader stops at it
    assert rest.startswith("PLANNER 5/11") and passed.header.startswith("PLANNER 6/11")
    role = agent.shell(f"planner role architect --state-dir '{state}'").stdout
    assert role.startswith("You are the architect for: Add a farewell")
    assert "plan-code" in agent.shell("planner role quality-reviewer").stdout  # now at 6
    agent.shell("planner role poet", code=2)


def test_json_format(project: Path) -> None:
    agent, out = start(project)
    agent.apply(DESIGN)
    record = json.loads(agent.shell("planner next --format json").stdout)
    assert record["workflow"] == "planner" and record["step"] == 4 and record["total"] == 11
    assert record["name"] == "plan-design-qr" and record["role"] == "quality-reviewer"
    assert record["phase"] == "plan-design" and record["state_dir"] == out.state_dir
    assert record["if_pass"].endswith("--qr-status pass") and "IF PASS" not in record["prompt"]
    again = json.loads(
        agent.shell(f"planner --step 1 --state-dir '{out.state_dir}' --format json", code=4).stdout
        or "{}"
    )
    assert again == {}


def test_no_session_and_bad_flags_exit_2(project: Path) -> None:
    agent = Agent(project)
    assert "no session found" in agent.shell("planner --step 2", code=2).stderr
    assert "no session found" in agent.shell("planner status", code=2).stderr
    agent.shell("planner --step x", code=2)
    agent.shell("planner", code=2)
    agent.shell("executor --step 1 --task t", code=2)
    assert "--task and --depth" in agent.shell("planner --step 2 --depth quick", code=2).stderr
    agent.shell("planner --step 1 --task '  '", code=2)


def test_a_task_the_shell_gutted_is_refused_with_nothing_written(project: Path) -> None:
    """A trial's task in double quotes lost its `foo` to the shell ("add  command" stored):
    step 1 refuses such a task in one line, exit 2, and starts no session."""
    agent = Agent(project, process=True)  # the shell runs `nosuch-cmd` and leaves nothing
    done = agent.shell('planner --step 1 --task "add `nosuch-cmd` command"', code=2)
    [said] = [x for x in done.stderr.splitlines() if x.startswith("planner:")]
    assert "'add  command' looks cut by the shell" in said and "single quotes" in said
    assert not (project / ".planner").exists()
    for gutted in ("fix $1.", "`x` is slow", "make `a`, `b` work", "rename `x`"):
        refused = agent.shell(f'planner --step 1 --task "{gutted}"', code=2).stderr
        assert "looks cut by the shell" in refused, gutted
    # two spaces after a sentence, indented lines, a leading dot or French spacing are text
    for task in ("One.  Two", "Edit .gitignore", "Lists:\n  - a\n  - b", "Ajouter : x ; y !"):
        refuse_gutted(task)
    agent.step("planner --step 1 --task 'add `foo` command'")  # single quotes keep it whole


def test_usage_errors_name_the_option(project: Path) -> None:
    agent = Agent(project)
    swallowed = agent.shell("planner --step 8 --state-dir --qr-status fail", code=2).stderr
    assert swallowed == "planner: --state-dir took --qr-status as its value: give it one first\n"
    assert "--qr-status" in agent.shell("planner --step 5 --qr-status maybe", code=2).stderr
    assert "--bogus" in agent.shell("executor --step 2 --bogus", code=2).stderr
    assert "--step" in agent.shell("executor --step x", code=2).stderr
    assert agent.shell("planner", code=2).stdout.startswith("Usage: planner")


def test_version_and_help(project: Path) -> None:
    agent = Agent(project)
    for script in ("planner", "executor"):
        assert agent.shell(f"{script} --version").stdout.startswith(f"{script} 0.")
        assert "--state-dir" in agent.shell(f"{script} --help").stdout
    assert "--task" in agent.shell("planner --help").stdout
    assert "--task" not in agent.shell("executor --help").stdout


def test_the_rework_after_a_rejection_says_first_which_steps_its_verdict_runs(
    project: Path,
) -> None:
    """The trial: after the person's rejection, the rework step's `plan apply --verdict pass`
    ran the gate and the steps after it in one call; its first line says so."""
    from tests.cli.review_helpers import to_review

    agent, _ = to_review(project)
    sent = agent.plan("review", "reject", "--comment", "M-001: smaller")
    rework = agent.step(Output(sent.stderr + sent.stdout).route())
    assert rework.header.startswith("PLANNER 3/11"), rework.header
    batch = [
        {"op": "milestone set", "args": {"id": "M-001", "name": "Farewell, smaller"}},
        {
            "op": "qr set",
            "args": {"id": comment_item(rework), "phase": "plan-design", "status": "PASS"},
        },
    ]
    done = agent.shell(f"plan apply --verdict pass - <<'EOF'\n{json.dumps(batch)}\nEOF")
    first = done.stdout.splitlines()[0]
    after = Output(done.stdout)
    steps = re.findall(r"^PLANNER (\d+)/11", done.stdout, re.M)
    assert len(steps) > 1 and after.header.startswith(f"PLANNER {steps[-1]}/11"), done.stdout
    named = " and ".join([", ".join(steps[:-1]), steps[-1]])
    assert first == (
        f"planner steps {named} follow (run here: do not run them again); work at step {steps[-1]}."
    )


def comment_item(rework: Output) -> str:
    """The id of the item the rework asks to judge (the person's comment's)."""
    return re.findall(r'"id": "(qa-\d+)", "phase": "plan-design"', rework.text)[-1]


def test_with_nothing_left_to_judge_the_verdict_alone_runs_the_gate(project: Path) -> None:
    """The second trial: after the rework, the code step had no item open ("none open now")
    yet ended in `plan apply --verdict`; an empty list with a verdict runs the gate (without
    one it stays a usage error)."""
    from tests.cli.review_helpers import to_review

    agent, _ = to_review(project)
    sent = agent.plan("review", "reject", "--comment", "M-001: smaller")
    rework = agent.step(Output(sent.stderr + sent.stdout).route())
    batch = [
        {"op": "milestone set", "args": {"id": "M-001", "name": "Farewell, smaller"}},
        {
            "op": "qr set",
            "args": {"id": comment_item(rework), "phase": "plan-design", "status": "PASS"},
        },
    ]
    done = agent.shell(f"plan apply --verdict pass - <<'EOF'\n{json.dumps(batch)}\nEOF")
    assert "(none open now: with the fixes recorded, plan apply --verdict pass" in done.stdout
    at = Output(done.stdout).header
    alone = agent.shell("plan apply - <<'EOF'\n[]\nEOF", code=2)
    assert "expected a non-empty JSON list" in alone.stderr
    gate = agent.shell("plan apply --verdict pass - <<'EOF'\n[]\nEOF")
    after = Output(gate.stdout).header
    assert after.startswith("PLANNER ") and after != at, gate.stdout


def as_an_older_planner_wrote_it(state: Path, routing: dict[str, str]) -> None:
    """session.json with its routes as command lines, the form before StoredSteps: the last
    routing's lines, and a QR loop's gate (a loop that never ran a gate held [])."""
    path = state / "session.json"
    session = json.loads(path.read_text())
    session["routing"] = {key: shlex.split(line) for key, line in routing.items()}
    code_gate = ["planner", "--step", "8", "--state-dir", str(state), "--qr-status", "fail"]
    session["qr"] = {
        "plan-design": {"iteration": 1, "state": "initial", "gate": []},
        "plan-code": {"iteration": 2, "state": "retry", "gate": code_gate},
    }
    path.write_text(json.dumps(session))


def test_an_older_session_json_with_command_line_routes_is_read_and_used(project: Path) -> None:
    agent, out = start(project)
    agent.apply(DESIGN)
    out = agent.step(out.route())  # step 4: IF PASS / IF FAIL
    state = state_of(out)
    as_an_older_planner_wrote_it(state, {"if_pass": out.route("pass"), "if_fail": "plan x"})
    read = Store(str(state)).read("session")
    code_gate = {"workflow": "planner", "name": None, "number": 8, "qr_status": "fail"}
    assert read["qr"]["plan-design"]["gate"] is None
    assert read["qr"]["plan-code"]["gate"] == code_gate
    assert "routing" not in read  # the tables give it live
    assert "planner --step 5" in agent.plan("resume", "--state-dir", str(state)).stdout
    review(agent, "plan-design")
    done = agent.shell("plan apply --verdict pass - <<'EOF'\n[]\nEOF")  # runs the IF PASS
    assert Output(done.stdout).header.startswith("PLANNER 6/11"), done.stdout
    stored = json.loads((state / "session.json").read_text())  # written in the new form
    gate = {"workflow": "planner", "name": "plan-design-qr-gate", "number": 5, "qr_status": "pass"}
    assert stored["qr"]["plan-design"]["gate"] == gate and "routing" not in stored
    assert Store(str(state)).read("session")["qr"] == stored["qr"]  # the round trip


def test_planner_next_runs_an_older_session_json(project: Path) -> None:
    agent, out = start(project)  # at step 3: NEXT
    state = state_of(out)
    as_an_older_planner_wrote_it(state, {"next": out.route()})
    refused = agent.shell("plan apply --verdict pass - <<'EOF'\n[]\nEOF", code=3)
    assert "the session is at no review" in refused.stderr  # its NEXT is no gate
    agent.apply(DESIGN)
    assert agent.step(f"planner next --state-dir '{state}'").header.startswith("PLANNER 4/11")
