"""Issue 18: the session's lock cannot be bypassed by deleting or replacing `.lock`, a lock held
past the timeout exits 3 naming the holder's pid, and each writer has its own temp names.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from state.rules.session_store import Store
from state.storage import journal
from tests.conftest import BIN, REPO, Plan, run

VANDAL = """
import os, sys
lock, stop = sys.argv[1:]
n = 0
while not os.path.exists(stop):
    n += 1
    try:
        if n % 2:
            os.unlink(lock)
        else:
            with open(lock + ".new", "w") as f:
                f.write("0 0\\n")
            os.replace(lock + ".new", lock)
    except OSError:
        pass
print(n)
"""


@pytest.mark.slow
def test_writers_stay_exclusive_while_the_lock_file_is_deleted_or_replaced(
    session_dir: Path, project: Path
) -> None:
    """The reproduction: 16 writers, `.lock` unlinked or replaced in a loop meanwhile; every
    acknowledged write is in plan.json and every revision name is used once."""
    stop = project / "stop"
    vandal = subprocess.Popen(
        [sys.executable, "-c", VANDAL, str(session_dir / ".lock"), str(stop)],
        stdout=subprocess.PIPE,
        text=True,
    )
    env = {k: v for k, v in os.environ.items() if k != "PLANNER_STATE_DIR"}
    writers = [
        subprocess.Popen(
            [str(BIN / "plan"), "decision", "add", "--decision", f"writer {n}", "--reasoning", "r"],
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(16)
    ]
    acknowledged = {}
    for n, writer in enumerate(writers):
        out, err = writer.communicate(timeout=300)
        assert "Traceback" not in err
        if writer.returncode == 0 and out.strip():
            acknowledged[out.strip()] = f"writer {n}"
    stop.touch()
    assert int(vandal.communicate(timeout=60)[0]) > 0  # it did delete and replace
    assert acknowledged, "no write was acknowledged"
    plan = json.loads((session_dir / "plan.json").read_text())
    landed = {d["id"]: d["decision"] for d in plan["planning_context"]["decision_log"]}
    assert {i: landed.get(i) for i in acknowledged} == acknowledged
    index_text = (session_dir / "history" / "index.jsonl").read_text()
    index = [json.loads(x) for x in index_text.splitlines()]
    revs = [e["rev"] for e in index]
    assert len(revs) == len(set(revs)) == 1 + len(landed)  # r1 is the session's creation
    assert len(Store(str(session_dir)).history()) == len(revs)
    mutations = [
        json.loads(x)
        for x in (session_dir / "audit.jsonl").read_text().splitlines()
        if '"decision add"' in x
    ]
    assert sorted(m["rev"] for m in mutations) == sorted(revs[1:])


HOLDER = """
import sys
from state.storage.lock import locked
with locked(sys.argv[1], directory=True):
    print("locked", flush=True)
    sys.stdin.read()
"""


@pytest.mark.parametrize(
    "argv",
    [
        ("plan", "decision", "add", "--decision", "D", "--reasoning", "R"),
        ("planner", "--step", "3"),
    ],
    ids=["plan-decision-add", "planner-step-3"],
)
def test_a_lock_held_past_the_timeout_exits_3_naming_the_holder(
    session_dir: Path, project: Path, argv: tuple[str, ...]
) -> None:
    before = {p: p.read_bytes() for p in session_dir.rglob("*") if p.is_file()}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(session_dir / ".lock")],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        done = run(*argv, cwd=project, env={"PLANNER_LOCK_TIMEOUT": "0.3"})
    finally:
        holder.communicate("", timeout=60)
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert f"session is busy: held by pid {holder.pid} (-c import sys" in done.stderr
    assert str(session_dir / ".lock") in done.stderr
    assert {p: p.read_bytes() for p in session_dir.rglob("*") if p.is_file()} == before


def test_a_bad_lock_timeout_is_a_usage_error(session_dir: Path, project: Path) -> None:
    done = run(
        "plan", "decision", "add", "--decision", "D", "--reasoning", "R",
        cwd=project, env={"PLANNER_LOCK_TIMEOUT": "soon"},
    )  # fmt: skip
    assert done.returncode == 2
    assert "PLANNER_LOCK_TIMEOUT='soon'" in done.stderr


def test_each_writer_stages_its_journal_under_its_own_name(
    session_dir: Path, plan: Plan, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No fixed `.journal.tmp` two writers could share; an old one left over is removed when
    the session is next opened."""
    written: list[str] = []
    real = journal.write_file

    def spy(path: str, data: bytes, flags: int = os.O_TRUNC) -> None:
        written.append(os.path.basename(path))
        real(path, data, flags)

    monkeypatch.setattr(journal, "write_file", spy)
    store = Store(str(session_dir))
    for n in range(2):
        with store.transaction("render") as tx:
            tx.put("plan.md", f"render {n}\n".encode())
    staged = [name for name in written if name.startswith(".journal")]
    assert len(staged) == 2 and len(set(staged)) == 2
    assert all(name.startswith(".journal.tx-") and name.endswith(".tmp") for name in staged)
    (session_dir / ".journal.tmp").write_text("{")  # left by a killed writer of an old version
    (session_dir / ".journal.tx-0123456789ab.tmp").write_text("{")  # and of this one
    plan("status")
    assert not list(session_dir.glob(".journal*"))
