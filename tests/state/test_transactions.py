"""Issue 10: every command all or nothing across files, under SIGKILL, full disks and read-only
files, with real `plan` processes on real sessions (PLANNER_FAULT kills at a journal phase).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from state.rules.session_store import Store
from tests.conftest import BIN, Plan, run

PHASES = ["after-temps", "after-journal", "after-audit", "mid-rename", "before-cleanup"]
BATCH = [
    {"op": "decision add", "args": {"decision": "Mirror greet()", "reasoning": "Obvious."}},
    {
        "op": "question add",
        "args": {"category": "scope", "kind": "text", "text": "Which greeting?"},
    },
    {"op": "qr add", "args": {"phase": "plan-design", "check": "names", "severity": "MUST"}},
]


def audit(state: Path) -> list[dict]:
    path = state / "audit.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def ids_everywhere(state: Path) -> dict[str, bool]:
    """Whether each part of BATCH landed: the decision, the question, the qr item."""
    plan = json.loads((state / "plan.json").read_text())
    context = json.loads((state / "context.json").read_text())
    qr = state / "qr-plan-design.json"
    return {
        "plan": bool(plan["planning_context"]["decision_log"]),
        "context": bool(context["questions"]),
        "qr": qr.exists() and bool(json.loads(qr.read_text())["items"]),
    }


def in_review(state: Path) -> None:
    session = json.loads((state / "session.json").read_text())
    session.update(status="review", workflow="planner", step=11)
    (state / "session.json").write_text(json.dumps(session, indent=2))


def every_file_validates(state: Path) -> None:
    store = Store(str(state))
    for name in ("session", "plan", "context", "qr-plan-design"):
        if store.exists(name):
            store.read(name)
    for rev in store.history():
        store.revision(rev["rev"])
    assert not list(state.rglob("*.tmp")), "temp files left"
    assert not (state / ".journal").exists()


@pytest.mark.slow
@pytest.mark.parametrize("phase", PHASES)
def test_a_killed_batch_lands_whole_or_not_at_all(
    project: Path, session_dir: Path, plan: Plan, phase: str
) -> None:
    done = run(
        "plan", "apply", "-", cwd=project, input=json.dumps(BATCH), env={"PLANNER_FAULT": phase}
    )
    assert done.returncode == -signal.SIGKILL
    plan("status")  # the next command touches the session: roll forward or back
    landed = ids_everywhere(session_dir)
    committed = phase != "after-temps"
    assert landed == dict.fromkeys(landed, committed)
    lines = [a for a in audit(session_dir) if a.get("command") == "apply"]
    assert len(lines) == int(committed)
    assert (session_dir / "history" / "r2.json").exists() == committed  # r1: the creation
    every_file_validates(session_dir)
    if not committed:  # the retry after a rollback lands once
        plan("apply", "-", input=json.dumps(BATCH))
    decisions = json.loads((session_dir / "plan.json").read_text())["planning_context"]
    assert len(decisions["decision_log"]) == 1


@pytest.mark.slow
@pytest.mark.parametrize("phase", PHASES)
def test_a_killed_approval_leaves_review_or_approved_never_half(
    project: Path, session_dir: Path, plan: Plan, phase: str
) -> None:
    in_review(session_dir)
    done = run("plan", "review", "approve", cwd=project, env={"PLANNER_FAULT": phase})
    assert done.returncode == -signal.SIGKILL
    status = plan.json("status")["status"]  # type: ignore[index]
    frozen = json.loads((session_dir / "plan.json").read_text())["frozen_at"]
    if phase == "after-temps":
        assert (status, frozen) == ("review", None)
        plan("review", "approve")  # not stuck: the approval can be given again
    else:
        assert status == "approved" and frozen
    plan("verify")
    every_file_validates(session_dir)


@pytest.mark.slow
def test_approvals_killed_at_random_moments_never_leave_a_stuck_session(
    project: Path, session_dir: Path, plan: Plan
) -> None:
    pristine = {p.name: p.read_bytes() for p in session_dir.glob("*.json")}
    rng = random.Random(10)
    for _ in range(6):
        for p in session_dir.glob("*"):
            if p.is_dir():
                shutil.rmtree(p)
            elif p.name not in pristine:
                p.unlink()
        for name, data in pristine.items():
            (session_dir / name).write_bytes(data)
        in_review(session_dir)
        proc = subprocess.Popen(
            [str(BIN / "plan"), "review", "approve"],
            cwd=project,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.05, 0.4))
        proc.send_signal(signal.SIGKILL)
        acknowledged = proc.wait() == 0
        status = plan.json("status")["status"]  # type: ignore[index]
        assert status in ("review", "approved")
        if acknowledged:
            assert status == "approved"
        if status == "review":
            plan("review", "approve")
        plan("verify")
        every_file_validates(session_dir)


def snapshot(state: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in state.rglob("*") if p.is_file() and p.name != ".lock"}


@pytest.mark.parametrize("how", ["chattr", "directory"])
def test_a_read_only_audit_log_fails_the_write_and_leaves_nothing(
    project: Path, session_dir: Path, plan: Plan, how: str
) -> None:
    """audit.jsonl made immutable (chattr +i: root ignores permissions), or a directory."""
    log = session_dir / "audit.jsonl"
    if how == "directory":
        log.unlink()
        log.mkdir()
    elif subprocess.run(["chattr", "+i", str(log)], capture_output=True).returncode:
        pytest.skip("chattr +i does not work on this file system")
    before = snapshot(session_dir)
    try:
        done = plan("decision", "add", "--decision", "D", "--reasoning", "R", code=3)
    finally:
        subprocess.run(["chattr", "-i", str(log)], capture_output=True)
    assert "audit.jsonl" in done.stderr and "nothing was written" in done.stderr
    assert snapshot(session_dir) == before
    if how == "directory":
        log.rmdir()
    assert plan.ids("decision", "add", "--decision", "D", "--reasoning", "R") == ["DL-001"]
    plan_doc = json.loads((session_dir / "plan.json").read_text())
    assert [d["id"] for d in plan_doc["planning_context"]["decision_log"]] == ["DL-001"]


def test_a_read_only_audit_log_as_an_unprivileged_user() -> None:
    """chmod a-w audit.jsonl, the command run as nobody (setpriv); skipped where it cannot be."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv to run the command as an unprivileged user")
    import tempfile

    from state.ops import session
    from tests.conftest import git

    top = Path(tempfile.mkdtemp(prefix="planner-ro-"))  # world-traversable, unlike tmp_path
    try:
        os.chmod(top, 0o755)
        project = top / "project"
        project.mkdir()
        git(project, "init", "-q", "-b", "main")
        store = session.create(str(project), "Add a farewell", {}, non_interactive=False)
        for p in [top, *top.rglob("*")]:
            os.chown(p, 65534, 65534)
        log = Path(store.dir) / "audit.jsonl"
        log.write_text("")
        os.chown(log, 0, 0)
        os.chmod(log, 0o644)
        before = snapshot(Path(store.dir))
        argv = [str(BIN / "plan"), "decision", "add", "--decision", "D", "--reasoning", "R"]
        done = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv],
            cwd=project,
            capture_output=True,
            text=True,
            env={**os.environ, "HOME": str(top)},
        )
        if done.returncode != 3 and "audit" not in done.stderr:
            pytest.skip(f"nobody cannot run the package here: {done.stderr[-200:]}")
        assert done.returncode == 3, done.stderr
        assert "audit.jsonl" in done.stderr
        assert snapshot(Path(store.dir)) == before
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_a_full_disk_exits_3_naming_the_file_with_nothing_written(tmp_path: Path) -> None:
    """A 1 MiB tmpfs (root only), filled to the last byte before a write."""
    mount = tmp_path / "small"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()[:120]}")
    try:
        from state.ops import session
        from tests.conftest import git

        root = mount / "project"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        store = session.create(str(root), "Fill the disk", {}, non_interactive=False)
        state = Path(store.dir)
        plan = Plan(root)
        plan("decision", "add", "--decision", "first", "--reasoning", "R")
        before = {p.name: p.read_bytes() for p in state.iterdir() if p.is_file()}
        filler = mount / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
        try:
            for size in (65536, 4096, 1):
                with contextlib.suppress(OSError):
                    while os.write(fd, b"x" * size):
                        pass
        finally:
            os.close(fd)
        done2 = plan("decision", "add", "--decision", "x" * 20000, "--reasoning", "R", code=3)
        assert "nothing was written" in done2.stderr and str(state) in done2.stderr
        after = {p.name: p.read_bytes() for p in state.iterdir() if p.is_file()}
        assert after == before
        assert not list(state.rglob("*.tmp"))
        filler.unlink()
        assert plan.ids("decision", "add", "--decision", "x", "--reasoning", "R") == ["DL-002"]
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_lost_history_index_never_overwrites_a_revision(session_dir: Path, plan: Plan) -> None:
    plan("decision", "add", "--decision", "one", "--reasoning", "R")
    r1 = (session_dir / "history" / "r1.json").read_bytes()
    r2 = (session_dir / "history" / "r2.json").read_bytes()
    (session_dir / "history" / "index.jsonl").unlink()
    plan("decision", "add", "--decision", "two", "--reasoning", "R")
    assert (session_dir / "history" / "r1.json").read_bytes() == r1
    assert (session_dir / "history" / "r2.json").read_bytes() == r2
    assert (session_dir / "history" / "r3.json").exists()
    revs = [r["rev"] for r in plan.json("history")]  # type: ignore[union-attr]
    assert revs == ["r1", "r2", "r3"]


def test_a_garbled_history_index_is_rebuilt_from_the_files(session_dir: Path, plan: Plan) -> None:
    plan("decision", "add", "--decision", "one", "--reasoning", "R")
    (session_dir / "history" / "index.jsonl").write_bytes(b"{not json\n\xff\xfe\n")
    assert "r1" in plan("history").stdout
    plan("decision", "add", "--decision", "two", "--reasoning", "R")
    assert [r["rev"] for r in plan.json("history")] == ["r1", "r2", "r3"]  # type: ignore[union-attr]


@pytest.mark.slow
def test_temp_files_of_killed_writes_are_removed_when_the_session_is_opened(
    project: Path, session_dir: Path, plan: Plan
) -> None:
    (session_dir / "plan.json.4242.tmp").write_text("half")
    (session_dir / "history").mkdir(exist_ok=True)
    (session_dir / "history" / "r9.json.tx-abc.tmp").write_text("half")
    run(
        "plan",
        "decision",
        "add",
        "--decision",
        "D",
        "--reasoning",
        "R",
        cwd=project,
        env={"PLANNER_FAULT": "after-temps"},
    )
    assert list(session_dir.rglob("*.tmp"))
    plan("status")
    assert not list(session_dir.rglob("*.tmp"))


def test_a_filelock_held_elsewhere_excludes_the_store(session_dir: Path) -> None:
    """state/storage/lock.py takes the same flock filelock does: either excludes the other."""
    from filelock import FileLock

    from state.errors import PlannerError
    from state.storage.lock import locked

    held = FileLock(str(session_dir / ".lock"))
    with held, pytest.raises(PlannerError), locked(str(session_dir / ".lock"), timeout=0.2):
        pass
