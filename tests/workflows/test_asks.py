"""The executor asks the person: a significant deviation holds the implementation gate until
the person answers continue, amend or stop; a milestone whose files another planner session
applied since the base commit is refused until the person agrees. Real git repositories,
real `plan` and `executor` processes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from state.ops import asks
from tests import crashpoints as cp
from tests.agent import Agent, Output
from tests.conftest import git
from tests.workflows.helpers import review, state_of, to_approval


def executing(project: Path) -> tuple[Agent, Output, Path]:
    """A session approved and at executor step 3, M-001 applied."""
    agent, out = to_approval(project)
    first = agent.step(out.route())  # executor 1, 2, 3
    agent.plan("exec", "apply", "M-001")
    return agent, first, state_of(out)


def to_gate(agent: Agent, first: Output) -> Output:
    """Executor step 4 with the reviewer's PASS recorded: the gate is next."""
    out = agent.step(f"executor --step 4 --state-dir {first.state_dir}")  # 4
    review(agent, "impl-code")
    return out


def doc(state: Path, name: str) -> dict[str, Any]:
    return json.loads((state / f"{name}.json").read_text())


def question(state: Path, qid: str) -> dict[str, Any]:
    return next(q for q in doc(state, "context")["questions"] if q["id"] == qid)


def commit_done(agent: Agent) -> None:
    agent.plan("exec", "done", "M-001", "--evidence", "ran it", "--commit")


KINDS = {
    "acceptance": ("--drops-acceptance", "farewell('x') == 'bye x'"),
    "dependency": ("--adds-dependency", "requests"),
}


@pytest.mark.parametrize("kind", ["acceptance", "dependency", "outside"])
def test_each_significant_kind_asks_and_the_gate_holds_until_answered(
    project: Path, kind: str
) -> None:
    agent, first, state = executing(project)
    if kind == "outside":  # committed by hand with the trailers, found in that commit
        (project / "src" / "extra.py").write_text("X = 1\n")
        agent.plan("exec", "done", "M-001", "--evidence", "e")
        me = doc(state, "session")["id"]
        trailers = f"Planner-Session: {me}\nPlanner-Milestone: M-001\n"
        git(project, "add", "src")
        git(project, "commit", "-qm", f"M-001 Farewell\n\n{trailers}")
        done = agent.plan("exec", "commit", "M-001")
        assert "found by its trailer" in done.stderr
        assert "DV-001 is significant (changes files outside M-001: src/extra.py)" in done.stderr
    else:
        flag, value = KINDS[kind]
        told = agent.plan("exec", "deviation", "M-001", "--description", "why", flag, value)
        assert told.stdout.strip() == "DV-001"
        assert "DV-001 is significant" in told.stderr and "Q-" in told.stderr
        commit_done(agent)
    deviation = doc(state, "execution")["deviations"][0]
    assert deviation["significant"] and deviation["question"]
    q = question(state, deviation["question"])
    assert q["about"] == "DV-001" and q["kind"] == "choice" and q["answer"] is None
    assert [o["label"] for o in q["options"]] == ["continue", "amend", "stop"]
    assert "DV-001" in q["text"] and "significant" in q["why"]
    out = to_gate(agent, first)
    held = agent.step(out.route("pass"), code=3)
    assert held.text == ""
    refused = agent.shell(out.route("pass"), code=3).stderr
    assert f"{q['id']} waits for the person's answer" in refused
    assert "plan ask" in refused and f"plan question answer {q['id']}" in refused
    assert doc(state, "session")["step"] == 4  # held: nothing recorded
    agent.plan("question", "answer", q["id"], "continue")
    passed = agent.step(out.route("pass"))
    assert passed.header.startswith("EXECUTOR")
    assert doc(state, "session")["step"] > 5


def test_amend_prints_the_amend_command_and_stop_stops(project: Path) -> None:
    agent, first, state = executing(project)
    agent.plan(
        "exec", "deviation", "M-001", "--description", "needs requests",
        "--adds-dependency", "requests",
    )  # fmt: skip
    commit_done(agent)
    out = to_gate(agent, first)
    qid = doc(state, "execution")["deviations"][0]["question"]
    agent.plan("question", "answer", qid, "amend")
    amend = agent.shell(out.route("pass"), code=3).stderr
    assert "the person answered amend" in amend
    # M-001 is committed: the amendment corrects it with a new milestone, so none is named
    assert "(fix: plan amend --reason 'DV-001: needs requests')" in amend
    agent.plan("question", "answer", qid, "stop")  # the person changes their mind
    stop = agent.shell(out.route("pass"), code=4).stderr
    assert f"the person answered stop to DV-001 ({qid})" in stop
    assert doc(state, "session")["status"] == "executing"
    assert doc(state, "session")["step"] == 4


def test_a_commit_adding_an_unplanned_dependency_asks(project: Path) -> None:
    manifest = project / "requirements.txt"
    manifest.write_text("click\n")
    git(project, "add", "requirements.txt")
    git(project, "commit", "-qm", "deps")
    agent, _, state = executing(project)
    manifest.write_text("click\nrequests>=2\n")
    agent.plan(
        "exec", "deviation", "M-001", "--description", "uses requests",
    )  # fmt: skip
    agent.plan("exec", "done", "M-001", "--evidence", "e")
    me = doc(state, "session")["id"]
    trailers = f"Planner-Session: {me}\nPlanner-Milestone: M-001\nPlanner-Deviation: DV-001\n"
    git(project, "add", "src", "requirements.txt")
    git(project, "commit", "-qm", f"M-001 Farewell\n\n{trailers}")  # by hand, then recorded
    done = agent.plan("exec", "commit", "M-001")
    assert "adds a dependency the plan does not: requirements.txt: requests>=2" in done.stderr
    deviation = doc(state, "execution")["deviations"][0]
    assert deviation["id"] == "DV-001" and deviation["question"]  # the one the commit carried
    assert any("requirements.txt" in r for r in deviation["significant"])


def test_an_ordinary_deviation_does_not_ask(project: Path) -> None:
    agent, first, state = executing(project)
    told = agent.plan("exec", "deviation", "M-001", "--description", "renamed a local")
    assert "significant" not in told.stderr
    commit_done(agent)
    assert doc(state, "execution")["deviations"][0]["question"] is None
    assert doc(state, "context")["questions"] == [] or all(
        not q["about"] for q in doc(state, "context")["questions"]
    )
    out = to_gate(agent, first)
    assert agent.step(out.route("pass")).header.startswith("EXECUTOR")


def test_a_hand_commit_outside_the_milestone_is_found_at_the_gate(project: Path) -> None:
    agent, first, state = executing(project)
    commit_done(agent)
    (project / "src" / "extra.py").write_text("X = 1\n")
    git(project, "add", "src")
    git(project, "commit", "-qm", "by hand")
    head = git(project, "rev-parse", "HEAD").strip()
    store_run = doc(state, "execution")["milestones"][0]
    assert store_run["commit"] != head
    # a fix commit recorded by hand would name it; the gate reads the recorded commits
    (project / "src" / "app.py").write_text((project / "src" / "app.py").read_text() + "# x\n")
    (project / "src" / "more.py").write_text("Y = 2\n")
    agent.plan("exec", "commit", "M-001")  # commits app.py: in the milestone
    git(project, "add", "src/more.py")
    git(project, "commit", "--amend", "--no-edit", "-q")  # slips more.py into that fix
    fixed = git(project, "rev-parse", "HEAD").strip()
    path = state / "execution.json"
    data = json.loads(path.read_text())
    data["milestones"][0]["fix_commits"] = [fixed]
    path.write_text(json.dumps(data))
    out = to_gate(agent, first)
    held = agent.shell(out.route("pass"), code=3).stderr
    assert "changes files outside M-001: src/more.py" in held
    deviation = doc(state, "execution")["deviations"][0]  # recorded by the refusal
    assert deviation["significant"] and deviation["question"]
    assert "found in its commit" in deviation["description"]
    agent.plan("question", "answer", deviation["question"], "continue")
    after = agent.shell(out.route("pass"), code=3).stderr  # the reviewer's record decides now
    assert "waits for the person" not in after and "no milestone plans it" in after
    assert len(doc(state, "execution")["deviations"]) == 1  # recorded once


def test_the_executors_question_cannot_be_skipped_and_discovery_stays_frozen(
    project: Path,
) -> None:
    agent, _, state = executing(project)
    agent.plan(
        "exec", "deviation", "M-001", "--description", "d",
        "--adds-dependency", "requests",
    )  # fmt: skip
    qid = doc(state, "execution")["deviations"][0]["question"]
    skipped = agent.plan("question", "answer", qid, "--skip", code=2)
    assert "cannot be skipped" in skipped.stderr
    other = agent.plan("question", "answer", qid, "other: ship it anyway", code=2)
    assert "1) continue" in other.stderr and "none fits" not in other.stderr  # routes: no other
    frozen = agent.plan("question", "add", "--category", "scope", "--kind", "text",
                        "--text", "Anything else?", code=4)  # fmt: skip
    assert "frozen" in frozen.stderr
    asked = agent.plan("ask", code=3)  # no terminal: asks nothing, says how to answer
    assert qid in asked.stderr and "plan question answer" in asked.stderr
    assert question(state, qid)["answer"] is None


def test_plan_ask_in_a_terminal_asks_the_executors_question(project: Path) -> None:
    """Enter neither skips nor picks: the executor waits for the person's own answer."""
    import os

    import pexpect

    from tests.conftest import BIN

    agent, _, state = executing(project)
    agent.plan(
        "exec", "deviation", "M-001", "--description", "needs requests",
        "--adds-dependency", "requests",
    )  # fmt: skip
    qid = doc(state, "execution")["deviations"][0]["question"]
    child = pexpect.spawn(
        str(BIN / "plan"),
        ["ask"],
        cwd=str(project),
        encoding="utf-8",
        timeout=30,
        env={**{k: v for k, v in os.environ.items() if k != "CI"}, "TERM": "xterm"},
    )
    child.expect(rf"{qid} \(scope\) DV-001 \(M-001\) departs from the approved plan")
    child.expect("why it matters: it is significant: adds a dependency: requests")
    child.expect(r"1\) continue")
    child.expect(r"number or text > ")
    child.sendline("")
    child.expect("the executor waits for your answer about DV-001")
    child.sendline("2")
    child.expect("recorded: amend")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert question(state, qid)["answer"] == "amend"


# ---------------------------------------------------------------- another session's commits


def other_session_commit(project: Path, text: str, session: str = "other-session") -> str:
    app = project / "src" / "app.py"
    app.write_text(text)
    message = f"M-001 Other\n\nPlanner-Session: {session}\nPlanner-Milestone: M-001\n"
    git(project, "commit", "-qam", message)
    return git(project, "rev-parse", "HEAD").strip()


def test_another_sessions_commit_refuses_until_the_person_agrees(project: Path) -> None:
    agent, out = to_approval(project)
    first = agent.step(out.route())  # executor 1, 2, 3: the base commit is recorded
    state = state_of(out)
    app = (project / "src" / "app.py").read_text()
    sha = other_session_commit(project, "# header\n" + app)
    started = agent.plan("exec", "start", "M-001", code=4).stderr  # starting asks
    assert "other-session" in started and "asks the person whether to apply it" in started
    refused = agent.plan("exec", "apply", "M-001", code=4).stderr  # asked once: it waits
    me = doc(state, "session")["id"]
    assert "other-session" in refused and me in refused and sha[:12] in refused
    assert "src/app.py" in refused and "nothing was applied" in refused
    qid = doc(state, "execution")["milestones"][0]["overlap_question"]
    assert qid and qid in refused
    q = question(state, qid)
    assert q["kind"] == "yes_no" and q["about"] == "M-001" and q["answer"] is None
    assert (project / "src" / "app.py").read_text() == "# header\n" + app
    assert f"{qid} waits for the person's answer" in refused
    assert len(doc(state, "context")["questions"]) == 1
    agent.plan("question", "answer", qid, "no")
    no = agent.plan("exec", "apply", "M-001", code=4).stderr
    assert f"the person answered no to {qid}" in no
    agent.plan("question", "answer", qid, "yes")
    agent.plan("exec", "apply", "M-001")  # three-way: the header stays, farewell lands
    text = (project / "src" / "app.py").read_text()
    assert text.startswith("# header\n") and "def farewell" in text
    assert first.header.startswith("EXECUTOR 3/9")


def test_agreed_but_conflicting_is_still_refused(project: Path) -> None:
    agent, out = to_approval(project)
    agent.step(out.route())
    state = state_of(out)
    other_session_commit(project, "def greet(name):\n    return 'hello ' + name\n\ndef x(): pass\n")
    agent.plan("exec", "apply", "M-001", code=4)
    qid = doc(state, "execution")["milestones"][0]["overlap_question"]
    agent.plan("question", "answer", qid, "yes")
    conflict = agent.plan("exec", "apply", "M-001", code=3).stderr
    assert "conflict" in conflict and "nothing was applied" in conflict


def test_own_and_unmarked_commits_do_not_ask(project: Path) -> None:
    agent, out = to_approval(project)
    agent.step(out.route())
    state = state_of(out)
    me = doc(state, "session")["id"]
    app = (project / "src" / "app.py").read_text()
    other_session_commit(project, "# mine\n" + app, session=me)
    (project / "src" / "app.py").write_text("# by hand\n# mine\n" + app)
    git(project, "commit", "-qam", "a person's commit")
    agent.plan("exec", "apply", "M-001")
    assert doc(state, "execution")["milestones"][0]["overlap_question"] is None


# ---------------------------------------------------------------- dependency manifests


@pytest.mark.parametrize(
    ("path", "before", "after", "added"),
    [
        ("pyproject.toml", '[project]\nname="a"\ndependencies=["click"]\n',
         '[project]\nname="a"\ndependencies=["click", "requests"]\n',
         {"project.dependencies: requests"}),
        ("pyproject.toml", '[project]\ndependencies=["click"]\n[tool.ruff]\nx=1\n',
         '[project]\ndependencies=["click"]\n[tool.ruff]\nx=2\n', set()),
        ("package.json", '{"dependencies": {"a": "1"}}', '{"dependencies": {"a": "1", "b": "2"}}',
         {"b@2"}),
        ("Cargo.toml", '[dependencies]\nserde = "1"\n',
         '[dependencies]\nserde = "1"\nrand = "0.8"\n', {'dependencies: rand "0.8"'}),
        ("go.mod", "module m\n\nrequire (\n\tgithub.com/a/b v1.0.0\n)\n",
         "module m\n\nrequire (\n\tgithub.com/a/b v1.0.0\n\tgithub.com/c/d v2.0.0\n)\n",
         {"github.com/c/d v2.0.0"}),
        ("setup.cfg", "[options]\ninstall_requires =\n    click\n",
         "[options]\ninstall_requires =\n    click\n    requests\n", {"requests"}),
        ("requirements-dev.txt", "pytest\n", "pytest\n# note\n", set()),
    ],
)  # fmt: skip
def test_dependencies_read_from_each_manifest(
    path: str, before: str, after: str, added: set[str]
) -> None:
    assert asks.is_manifest(path)
    assert asks.dependencies(path, after) - asks.dependencies(path, before) == added


NAMES = st.from_regex(r"[a-z][a-z0-9_-]{0,12}", fullmatch=True)


@settings(max_examples=30, deadline=None)
@given(st.dictionaries(NAMES, st.from_regex(r"\^?[0-9]\.[0-9]", fullmatch=True), max_size=5),
       NAMES, st.sampled_from(["dependencies", "devDependencies"]))  # fmt: skip
def test_a_package_json_dependency_added_is_found_whatever_the_formatting(
    deps: dict[str, str], new: str, table: str
) -> None:
    before = {"name": "a", table: dict(deps)}
    after = {"name": "a", table: {**deps, new: "9.9"}, "scripts": {"x": "y"}}
    found = asks.dependencies("package.json", json.dumps(after, indent=4)) - asks.dependencies(
        "package.json", json.dumps(before)
    )
    assert found == ({f"{new}@9.9"} if deps.get(new) != "9.9" else set())


def test_not_every_file_is_a_manifest() -> None:
    assert not asks.is_manifest("src/requirements.py") and not asks.is_manifest("README.md")
    assert asks.is_manifest("sub/requirements.txt") and asks.is_manifest("web/package.json")


# ---------------------------------------------------------------- crash points


@pytest.fixture
def executing_fx(tmp_path: Path) -> cp.Fixture:
    root = tmp_path / "project"
    root.mkdir()
    fx = cp.Fixture(root, cp.executing(root))
    fx.save()
    return fx


@pytest.mark.slow
def test_crash_points_of_a_significant_deviation(executing_fx: cp.Fixture) -> None:
    """The deviation and its question land in one transaction, killed anywhere."""
    argv = ["plan", "exec", "deviation", "M-001", "--description", "d",
            "--adds-dependency", "requests"]  # fmt: skip
    outcome = cp.enumerate_crashes(executing_fx, "significant deviation", argv, idempotent=False)
    assert len(outcome.points) >= 3 and outcome.failures == [], "\n".join(outcome.failures)
    assert any("context.json" in p for p in outcome.points)


@pytest.mark.slow
def test_crash_points_of_a_refusal_that_asks(executing_fx: cp.Fixture) -> None:
    """Another session's commit: killed anywhere, the question is there once or not at all,
    nothing of the project is written, and the retry is refused and asks once."""
    fx = executing_fx
    fx.restore()
    app = fx.root / "src" / "app.py"
    app.write_text("# theirs\n" + app.read_text())
    cp.git(fx.root, "commit", "-qam", "M-001 X\n\nPlanner-Session: other-session\n")
    fx.save()
    argv = ["plan", "exec", "apply", "M-001"]
    log = fx.root.parent / "asks.points"
    done = cp.run(fx.root, argv, {"PLANNER_CRASH_LOG": str(log)})
    assert done.returncode == 4 and "other-session" in done.stderr
    refused = cp.fingerprint(fx)
    points = log.read_text().splitlines()
    assert any("context.json" in p for p in points)

    def questions() -> list[str]:
        context = json.loads((fx.state / "context.json").read_text())
        return [q["id"] for q in context["questions"] if q["about"]]

    for n in range(1, len(points) + 1):
        fx.restore()
        before = cp.fingerprint(fx)
        killed = cp.run(fx.root, argv, {"PLANNER_CRASH_AT": str(n)})
        assert killed.returncode == -9, (n, killed.stderr)
        assert cp.run(fx.root, ["plan", "status"]).returncode == 0
        assert cp.leftovers(fx) == []
        assert cp.fingerprint(fx) in (before, refused), points[n - 1]
        again = cp.run(fx.root, argv)
        assert again.returncode == 4
        assert len(questions()) == 1
        assert cp.project_files(fx.root) == before["project"]


def test_an_amend_answer_is_settled_by_a_later_approval() -> None:
    q = {"answer": "amend", "answered_at": "2026-11-26T01:00:00Z"}
    earlier = {"approval": {"at": "2026-11-26T00:00:00Z"}}
    later = {"approval": {"at": "2026-11-26T02:00:00Z"}}  # the amendment was re-approved
    assert asks.answered_since_approval(q, earlier)
    assert not asks.answered_since_approval(q, later)
    assert asks.answered_since_approval(q, {"approval": None})


def test_a_commit_of_the_persons_own_is_recorded_by_the_gate_with_a_runnable_fix(
    project: Path,
) -> None:
    """The person commits an unrelated file before the gate: the refused gate records the
    item it names, and the fix it names (a deviation explaining the file) lets it pass."""
    agent, first, state = executing(project)
    commit_done(agent)
    out = to_gate(agent, first)
    (project / "NOTES.md").write_text("notes of mine\n")
    git(project, "add", "NOTES.md")
    git(project, "commit", "-qm", "notes", "--", "NOTES.md")
    held = agent.shell(out.route("pass"), code=3).stderr
    named = re.search(r"qr-impl-code\.json:(qa-\d+): MUST item is FAIL: changed, but", held)
    assert named, held
    items = {i["id"]: i for i in doc(state, "qr-impl-code")["items"]}
    assert items[named[1]]["status"] == "FAIL"  # the refusal recorded the item it names
    fix = re.search(r"(plan exec deviation --description '[^']*' M-\d+)", held)
    assert fix and "NOTES.md" in fix[1] and "…" not in fix[1], held
    agent.shell(fix[1])
    assert agent.step(out.route("pass")).header.startswith("EXECUTOR")
