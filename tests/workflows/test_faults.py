"""Issue 10 on the step scripts: gates and arrivals decide under the lock, frozen means
approved in every step, values from files never become git options, step 1 leaves no orphan.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from tests import crashpoints as cp
from tests.conftest import BIN, run
from tests.workflows.helpers import DESIGN, review, start, state_of, to_approval

pytestmark = pytest.mark.slow  # crash points: one process per write


def at_once(project: Path, command: str, n: int = 16) -> list[int]:
    """Run `command` n times at the same moment (with CI set, which changes nothing: the
    session's mode was fixed when it was created); their exit codes."""
    argv = shlex.split(command)
    procs = [
        subprocess.Popen(
            [str(BIN / argv[0]), *argv[1:]],
            cwd=project,
            env={**os.environ, "CI": "1"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(n)
    ]
    return [p.wait(timeout=300) for p in procs]


def next_of(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return next(ln[6:] for ln in done.stdout.splitlines() if ln.startswith("NEXT: "))


def audit(state: Path) -> list[dict]:
    return [json.loads(x) for x in (state / "audit.jsonl").read_text().splitlines()]


def test_16_identical_gate_runs_apply_once_and_an_arrival_is_recorded_once(project: Path) -> None:
    agent, out = start(project)
    state = state_of(out)
    agent.apply(DESIGN)
    step4 = out.route()
    codes = at_once(project, step4)
    assert codes == [0] * 16
    assert len([a for a in audit(state) if a.get("step") == "plan-design-qr"]) == 1
    out = agent.step(step4)  # a re-render: the routing again
    review(agent, "plan-design", status="FAIL", finding="missing names")
    codes = at_once(project, out.route("fail"))
    assert set(codes) == {0}
    session = json.loads((state / "session.json").read_text())
    assert session["qr"]["plan-design"]["iteration"] == 2
    assert session["qr"]["plan-design"]["state"] == "retry"


@pytest.fixture(scope="module")
def approved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """(project, state dir, executor step 1 command): one approved session for this module."""
    from tests.conftest import git

    root = tmp_path_factory.mktemp("approved") / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    (root / "README.md").write_text("# Demo\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-qm", "init")
    _agent, out = to_approval(root)
    return root, state_of(out), out.route()


@pytest.fixture
def restored(approved: tuple[Path, Path, str]):  # type: ignore[no-untyped-def]
    """The approved session, put back as it was after the test."""
    _, state, _ = approved
    saved = {p: p.read_bytes() for p in state.rglob("*") if p.is_file()}
    yield approved
    for p in list(state.rglob("*")):
        if p.is_file() and p not in saved:
            p.unlink()
    for p, data in saved.items():
        p.write_bytes(data)


@pytest.mark.parametrize("edit", ["frozen_at", "title", "revision"])
def test_a_plan_changed_after_approval_is_refused_by_writes_verify_and_steps(
    restored: tuple[Path, Path, str], edit: str
) -> None:
    project, state, exec1 = restored
    plan = json.loads((state / "plan.json").read_text())
    if edit == "frozen_at":
        plan["frozen_at"] = None
    elif edit == "title":
        plan["overview"]["title"] = "Edited by hand"
    if edit == "revision":
        (state / "plan.json").write_bytes((state / "history" / "r2.json").read_bytes())
    else:
        (state / "plan.json").write_text(json.dumps(plan, indent=2))
    before = (state / "plan.json").read_bytes()
    done = run("plan", "decision", "add", "--decision", "D", "--reasoning", "R", cwd=project)
    assert done.returncode == 4, done.stderr
    assert (state / "plan.json").read_bytes() == before
    done = run("plan", "verify", cwd=project)
    assert done.returncode == 3 and "changed after approval" in done.stdout + done.stderr
    done = run(*shlex.split(exec1), cwd=project)
    assert done.returncode == 3 and "changed after approval" in done.stderr


def test_an_executor_step_after_step_1_notices_an_edit(restored: tuple[Path, Path, str]) -> None:
    project, state, exec1 = restored
    out = run(*shlex.split(exec1), cwd=project)
    assert out.returncode == 0, out.stderr
    nxt = f"executor next --state-dir {state}"  # step 3's routing: step 4
    plan = json.loads((state / "plan.json").read_text())
    plan["overview"]["problem"] = "changed after the executor started"
    (state / "plan.json").write_text(json.dumps(plan, indent=2))
    for command in (nxt, exec1):  # the next step, and a re-render of step 1
        done = run(*shlex.split(command), cwd=project)
        assert done.returncode == 3 and "changed after approval" in done.stderr, done.stderr


def test_verify_checks_the_review_round_and_plan_md(restored: tuple[Path, Path, str]) -> None:
    project, state, _ = restored
    assert run("plan", "verify", cwd=project).returncode == 0
    (state / "plan.md").write_text("# edited by hand\n")
    done = run("plan", "verify", cwd=project)
    assert done.returncode == 3 and "plan.md" in done.stdout
    (state / "plan.md").unlink()
    session = json.loads((state / "session.json").read_text())
    session["reviews"][-1]["sha256"] = "0" * 64
    (state / "session.json").write_text(json.dumps(session, indent=2))
    done = run("plan", "verify", cwd=project)
    assert done.returncode == 3 and "review round" in done.stdout


@pytest.mark.parametrize("where", ["session", "execution"])
def test_a_base_commit_from_a_file_never_becomes_a_git_option(
    restored: tuple[Path, Path, str], tmp_path: Path, where: str
) -> None:
    project, state, exec1 = restored
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    nxt = exec1
    if where == "execution":  # to executor step 3 with M-001 done: step 4 reads the base
        nxt = next_of(run(*shlex.split(nxt), cwd=project))  # step 1 prints 2 and 3
        assert run("plan", "exec", "done", "M-001", "--evidence", "ok", cwd=project).returncode == 0
        nxt = next_of(run(*shlex.split(exec1.replace("step 1", "step 3")), cwd=project))
    doc = json.loads((state / f"{where}.json").read_text())
    doc["base_commit"] = f"--output={victim}"
    (state / f"{where}.json").write_text(json.dumps(doc, indent=2))
    done = run(*shlex.split(nxt), cwd=project)
    assert victim.read_text() == "precious\n"
    assert done.returncode == 3 and "base_commit" in done.stderr, done.stderr


def test_a_killed_step_1_leaves_no_orphan_session(project: Path) -> None:
    done = run(
        "planner",
        "--step",
        "1",
        "--task",
        "Add a farewell",
        cwd=project,
        env={"PLANNER_FAULT": "after-journal"},
    )
    assert done.returncode == -9
    assert run("plan", "list", cwd=project).stdout.startswith("No sessions")
    done = run("planner", "--step", "1", "--task", "Add a farewell", cwd=project)
    assert done.returncode == 0, done.stderr
    assert {p.name for p in (project / ".planner").iterdir()} == {
        ".gitignore",
        "ACTIVE",
        Path(done.stdout.split("STATE_DIR=")[1].split()[0]).name,
    }


def test_an_active_file_naming_a_path_outside_the_project_is_refused(
    project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (project / ".planner").mkdir()
    (project / ".planner" / "ACTIVE").write_text(str(outside) + "\n")
    for argv in (["plan", "status"], ["planner", "status"], ["plan", "list"]):
        done = run(*argv, cwd=project)
        assert done.returncode == 3 and "ACTIVE" in done.stderr, (argv, done.stderr)


# ---------------------------------------------------------------- crash-point enumeration
# Issue 18: every command that writes, killed at each of its writes, fsyncs, renames,
# unlinks and git calls in turn (tests/crashpoints.py). All points are run: the fixtures
# are small (the counts are in docs/design.md, "Transactions").


def _enumerate(fx: cp.Fixture, name: str, argv: list[str], **kw: object) -> cp.Outcome:
    outcome = cp.enumerate_crashes(fx, name, argv, **kw)  # type: ignore[arg-type]
    print(outcome)
    assert len(outcome.points) >= 3, outcome.points  # the enumeration is not vacuous
    assert outcome.failures == [], "\n".join(outcome.failures)
    return outcome


@pytest.fixture
def executing_fx(tmp_path: Path) -> cp.Fixture:
    root = tmp_path / "project"
    root.mkdir()
    fx = cp.Fixture(root, cp.executing(root))
    fx.save()
    return fx


@pytest.mark.parametrize("milestone", ["M-001", "M-002"])
def test_crash_points_of_exec_apply(executing_fx: cp.Fixture, milestone: str) -> None:
    outcome = _enumerate(
        executing_fx, f"exec apply {milestone}", ["plan", "exec", "apply", milestone]
    )
    assert any(p.split()[1] == "rename" and "/src/" in p for p in outcome.points)


def test_crash_points_of_exec_commit(executing_fx: cp.Fixture) -> None:
    executing_fx.restore()
    cp.ok(executing_fx.root, ["plan", "exec", "apply", "M-001"])
    executing_fx.save()
    # killed after `git commit`, before the record: git has it, the retry records it
    outcome = _enumerate(
        executing_fx, "exec commit M-001", ["plan", "exec", "commit", "M-001"], between=("git",)
    )
    assert any(p.split()[1:3] == ["git", "commit"] for p in outcome.points)


def test_crash_points_of_a_batch_that_applies_two_milestones(executing_fx: cp.Fixture) -> None:
    """Two exec apply in one `plan apply`: one transaction over both milestones' files."""
    batch = executing_fx.root.parent / "exec.json"
    ops = [{"op": "exec apply", "args": {"id": m}} for m in ("M-001", "M-002")]
    batch.write_text(json.dumps(ops))
    name = "plan apply (exec apply M-001, exec apply M-002)"
    _enumerate(executing_fx, name, ["plan", "apply", str(batch)])


@pytest.fixture
def planning_fx(tmp_path: Path) -> cp.Fixture:
    root = tmp_path / "project"
    root.mkdir()
    cp.new_project(root)
    fx = cp.Fixture(root, cp.planning(root))
    fx.save()
    return fx


def _capture_sees_no_deletion(fx: cp.Fixture, outcome: cp.Outcome, where: str) -> None:
    """After a killed `plan worktree`, capture records nothing (the worktree has no edits)."""
    done = cp.run(fx.root, ["plan", "change", "capture"])
    captured = [
        c
        for m in json.loads((fx.state / "plan.json").read_text())["milestones"]
        for c in m["code_changes"]
    ]
    if done.returncode not in (0, 3) or captured:
        outcome.failures.append(f"{where}: capture recorded {captured} ({done.stderr})")


def test_crash_points_of_plan_worktree(planning_fx: cp.Fixture) -> None:
    _enumerate(
        planning_fx, "plan worktree", ["plan", "worktree"], after_crash=_capture_sees_no_deletion
    )


@pytest.mark.parametrize(
    "argv", [["plan", "cancel"], ["plan", "fail", "--error", "broke"]], ids=["cancel", "fail"]
)
def test_crash_points_of_closing_a_session_with_its_worktree(
    planning_fx: cp.Fixture, argv: list[str]
) -> None:
    """The session closes and its worktree goes: killed anywhere, the next command leaves the
    session open with its worktree, or closed with none (closing twice is refused: a retry
    runs only when the close was lost)."""
    planning_fx.restore()
    cp.edit_worktree(planning_fx.root)
    planning_fx.save()
    outcome = _enumerate(
        planning_fx, " ".join(argv[:2]), argv, idempotent=False, after_crash=_closed_has_no_tree
    )
    assert any(p.split()[1] == "unlink" and p.endswith("/worktree") for p in outcome.points)


def _closed_has_no_tree(fx: cp.Fixture, outcome: cp.Outcome, where: str) -> None:
    """After the next command, a closed session has nothing of its worktree left (the
    fingerprint counts a half-removed one as absent), an open one has it whole."""
    status = json.loads((fx.state / "session.json").read_text())["status"]
    left = [n for n in ("worktree", "worktree.git") if (fx.state / n).exists()]
    closed = status in ("cancelled", "failed")
    whole = len(left) == 2 and cp.worktree_state(fx.root, fx.state) == "ready"
    if (closed and left) or (not closed and not whole):
        outcome.failures.append(f"{where}: status {status} with {left} left")


def test_crash_points_of_change_capture_and_plan_apply(planning_fx: cp.Fixture) -> None:
    batch = [
        {"op": "decision add", "args": {"decision": "Mirror greet()", "reasoning": "Obvious."}},
        {"op": "question add", "args": {"category": "scope", "kind": "text", "text": "Which?"}},
        {"op": "qr add", "args": {"phase": "plan-design", "check": "names"}},
    ]
    batch_file = planning_fx.root.parent / "batch.json"
    batch_file.write_text(json.dumps(batch))
    _enumerate(planning_fx, "plan apply", ["plan", "apply", str(batch_file)], idempotent=False)
    planning_fx.restore()
    cp.edit_worktree(planning_fx.root)
    planning_fx.save()
    _enumerate(planning_fx, "plan change capture", ["plan", "change", "capture"])


def test_crash_points_of_approve_and_a_gate(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    cp.new_project(root)
    state = cp.planning(root)
    cp.edit_worktree(root)
    cp.ok(root, ["plan", "change", "capture"])
    session = json.loads((state / "session.json").read_text())
    session.update(status="review", workflow="planner", step=11)
    (state / "session.json").write_text(json.dumps(session))
    fx = cp.Fixture(root, state)
    fx.save()
    # approving twice is refused (exit 4, "no plan in review"): retried only when it was lost
    _enumerate(fx, "plan review approve", ["plan", "review", "approve"], idempotent=False)
    gate_root = tmp_path / "gate"
    gate_root.mkdir()
    gate_state, gate = cp.at_gate(gate_root)
    gate_fx = cp.Fixture(gate_root, gate_state)
    gate_fx.save()
    # the gate prints step 6, which makes the worktree once the arrival is recorded
    _enumerate(gate_fx, "planner --step 5 --qr-status pass", gate, later=("worktree",))


def _checked_vouches_only_for_valid_bytes(fx: cp.Fixture, outcome: cp.Outcome, where: str) -> None:
    """A CHECKED line whose sha256 is that of the document on disk lets a read skip the schema
    walk: after any kill, the document it vouches for must pass that walk."""
    from state.storage import schema
    from state.storage.store import CHECKED, checked_line, schema_name

    path = fx.state / CHECKED
    lines = path.read_bytes().splitlines() if path.exists() else []
    for name in ("plan", "context", "session", "execution"):
        doc = fx.state / f"{name}.json"
        if not doc.exists():
            continue
        raw = doc.read_bytes()
        if checked_line(str(doc), schema_name(name), raw) in lines:
            problems = schema.check(schema_name(name), json.loads(raw))
            if problems:
                outcome.failures.append(f"{where}: {CHECKED} vouches for {doc.name}: {problems}")


@pytest.mark.slow
def test_crash_points_of_a_mutation_of_a_large_plan(planning_fx: cp.Fixture) -> None:
    """A plan over 256 KB is written compact, member by member, with a CHECKED line for the
    bytes the commit checked (docs/design.md, "Document encoding"): killed at each point, the
    invariants hold and CHECKED never vouches for bytes a walk would refuse."""
    planning_fx.restore()
    big = "a long reasoning " * 20_000  # 340 KB: past the indented size
    cp.ok(planning_fx.root, ["plan", "decision", "add", "--decision", "Big", "--reasoning", big])
    assert (planning_fx.state / ".checked").exists()
    planning_fx.save()
    argv = ["plan", "decision", "add", "--decision", "Small", "--reasoning", "r"]
    outcome = _enumerate(
        planning_fx,
        "decision add (large plan)",
        argv,
        idempotent=False,
        after_crash=_checked_vouches_only_for_valid_bytes,
    )
    assert any(".checked" in p for p in outcome.points), outcome.points
