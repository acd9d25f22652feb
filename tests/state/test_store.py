"""state.storage.store, .lock and .ids on real session directories in temp dirs.

A write is all or nothing; damaged files are reported and never written; frozen plans and
closed sessions refuse; history and audit record every committed change; locks exclude.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from state.errors import DamagedFile, PlannerError, PreconditionFailed, Refused, UsageError
from state.ops import plan_ops
from state.rules.session_store import PLANNING_FILES, Store
from state.storage import schema
from state.storage.ids import next_id, option_letter
from state.storage.lock import locked
from state.storage.store import DocumentStore, dumps, load, report_name
from state.vocab import CLOSED, Phase
from tests.state import builders
from tests.state.builders import snapshot

REPO = Path(__file__).resolve().parents[2]


def write(state_dir: Path, name: str, doc: Any) -> None:
    (state_dir / f"{name}.json").write_bytes(dumps(doc))


def lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    """A session directory written by hand: session, an empty plan, an empty context."""
    directory = tmp_path / "session"
    directory.mkdir()
    write(directory, "session", builders.session(str(tmp_path)))
    write(directory, "plan", builders.plan())
    write(directory, "context", builders.filled("context", {}))
    return directory


@pytest.fixture
def store(state_dir: Path) -> Store:
    return Store(str(state_dir))


def set_title(store: Store, title: str, command: str = "overview set") -> None:
    with store.transaction(command) as tx:
        tx.edit("plan")["overview"]["title"] = title


# --- atomic writes -------------------------------------------------------------------------


def test_a_commit_writes_a_parseable_file_and_no_temp_file(store: Store, state_dir: Path) -> None:
    set_title(store, "Farewell")
    raw = (state_dir / "plan.json").read_bytes()
    assert json.loads(raw)["overview"]["title"] == "Farewell"
    assert raw == dumps(store.read("plan"))
    assert list(state_dir.rglob("*.tmp")) == []


def test_an_exception_inside_the_transaction_writes_nothing(store: Store, state_dir: Path) -> None:
    before = snapshot(state_dir)
    with pytest.raises(RuntimeError), store.transaction("overview set") as tx:
        tx.edit("plan")["overview"]["title"] = "Farewell"
        raise RuntimeError("boom")
    assert snapshot(state_dir) == before


def test_a_transaction_needs_an_existing_directory(tmp_path: Path) -> None:
    missing = Store(str(tmp_path / "missing"))
    with pytest.raises(UsageError, match="no such session directory"), missing.transaction("x"):
        pass


# --- validation before the write -----------------------------------------------------------


def test_a_change_failing_the_schema_is_refused_and_nothing_is_written(
    store: Store, state_dir: Path
) -> None:
    set_title(store, "first")  # so history/ and audit.jsonl exist and must stay as they are
    before = snapshot(state_dir)
    with pytest.raises(PreconditionFailed) as caught, store.transaction("milestone add") as tx:
        tx.edit("plan")["milestones"].append(builders.milestone(1, risk="extreme"))
    assert caught.value.exit_code == 3
    assert "nothing was written" in caught.value.message
    [finding] = caught.value.findings
    assert finding.path == "plan.json:milestones[0].risk"
    assert "'extreme' is not one of low, medium, high" in finding.message
    assert snapshot(state_dir) == before


def test_a_change_breaking_integrity_is_refused_and_nothing_is_written(
    store: Store, state_dir: Path
) -> None:
    set_title(store, "first")
    before = snapshot(state_dir)
    with pytest.raises(PreconditionFailed) as caught, store.transaction("milestone add") as tx:
        tx.edit("plan")["milestones"].append(builders.milestone(1, depends_on=["M-009"]))
    [finding] = caught.value.findings
    assert finding.path == "milestones[M-001].depends_on"
    assert "M-009" in finding.message
    assert snapshot(state_dir) == before


def test_question_refs_are_checked_against_context(store: Store, state_dir: Path) -> None:
    before = snapshot(state_dir)
    with pytest.raises(PreconditionFailed) as caught, store.transaction("decision add") as tx:
        tx.edit("plan")["planning_context"]["decision_log"].append(
            builders.decision(1, question_refs=["Q-001"])
        )
    assert [f.path for f in caught.value.findings] == [
        "planning_context.decision_log[DL-001].question_refs"
    ]
    assert snapshot(state_dir) == before


def test_only_edited_documents_are_validated(store: Store, state_dir: Path) -> None:
    """A change to context.json commits even when plan.json (read, not edited) is broken."""
    with store.transaction("context add") as tx:
        plan = tx.read("plan")
        plan["milestones"].append(builders.milestone(1, depends_on=["M-009"]))  # not edited
        tx.edit("context")["assumptions"].append("ascii names")
    assert store.read("context")["assumptions"] == ["ascii names"]
    assert store.read("plan")["milestones"] == []


# --- damaged files -------------------------------------------------------------------------

PLAN_BYTES = dumps(builders.plan())
DAMAGED = [
    pytest.param(PLAN_BYTES[:40], "not valid JSON", id="truncated"),
    pytest.param(b"", "empty file", id="empty"),
    pytest.param(b"  \n", "empty file", id="blank"),
    pytest.param(b"[]\n", "(document): expected object, got array", id="array"),
    pytest.param(
        PLAN_BYTES.replace(b'"plan_id": "', b'"plan_id": 5, "x": "'),
        "plan_id: expected string, got integer",
        id="wrong-field-type",
    ),
    pytest.param(b'{"plan_id": "\xff\xfe"}\n', "not valid UTF-8", id="not-utf-8"),
]


@pytest.mark.parametrize(("content", "problem"), DAMAGED)
def test_a_damaged_file_is_reported_with_path_and_problem(
    store: Store, state_dir: Path, content: bytes, problem: str
) -> None:
    path = state_dir / "plan.json"
    path.write_bytes(content)
    with pytest.raises(DamagedFile) as caught:
        store.read("plan")
    assert str(path) in caught.value.message
    assert problem in caught.value.message
    assert caught.value.exit_code == 3
    assert path.read_bytes() == content


@pytest.mark.parametrize(("content", "problem"), DAMAGED)
def test_a_damaged_file_is_never_written(
    store: Store, state_dir: Path, content: bytes, problem: str
) -> None:
    (state_dir / "plan.json").write_bytes(content)
    before = snapshot(state_dir)
    with pytest.raises(DamagedFile, match="left as it is"), store.transaction("x") as tx:
        tx.edit("plan")["overview"]["title"] = "x"
    with pytest.raises(DamagedFile), store.transaction("overview set") as tx:
        plan_ops.overview_set(tx, title="x", problem=None, approach=None)
    assert snapshot(state_dir) == before


def test_an_unreadable_file_is_damaged(store: Store, state_dir: Path) -> None:
    (state_dir / "plan.json").unlink()
    (state_dir / "plan.json").mkdir()
    with pytest.raises(DamagedFile, match="cannot be read"):
        store.read("plan")


def test_a_missing_file_is_a_usage_error(store: Store, state_dir: Path) -> None:
    (state_dir / "plan.json").unlink()
    with pytest.raises(UsageError, match=r"plan\.json: not found"):
        store.read("plan")
    assert store.read_or_none("plan") is None


# --- who may write -------------------------------------------------------------------------


def qr(phase: str) -> dict[str, Any]:
    return {**schema.defaults("qr"), "phase": phase}


def freeze(state_dir: Path) -> None:
    """A plan approved as it is: frozen_at, and the session's approval record of its hash."""
    from state.rules.approval import plan_hash

    plan = builders.plan(frozen_at=builders.LATER)
    write(state_dir, "plan", plan)
    session = json.loads((state_dir / "session.json").read_text())
    session.update(
        status="approved", approval={"by": "u", "at": builders.LATER, "sha256": plan_hash(plan)}
    )
    write(state_dir, "session", session)


@pytest.mark.parametrize("name", sorted(PLANNING_FILES))
def test_a_frozen_plan_refuses_planning_files(store: Store, state_dir: Path, name: str) -> None:
    freeze(state_dir)
    if name.startswith("qr-"):
        write(state_dir, name, qr(name.removeprefix("qr-")))
    before = snapshot(state_dir)
    with pytest.raises(Refused) as caught, store.transaction("x") as tx:
        tx.edit(name)
    assert caught.value.exit_code == 4
    assert "frozen" in caught.value.message
    assert snapshot(state_dir) == before


def test_the_document_store_knows_no_rule_the_session_store_keeps_them(state_dir: Path) -> None:
    """state/storage/store.py writes what it is given (schemas checked); the freeze is the
    session's rule (state/rules/session_store.py): the same edit, refused there."""
    freeze(state_dir)
    with pytest.raises(Refused), Store(str(state_dir)).transaction("x") as tx:
        tx.edit("plan")["overview"]["title"] = "changed"
    with DocumentStore(str(state_dir)).transaction("x") as raw:
        raw.edit("plan")["overview"]["title"] = "changed"
    assert load(str(state_dir / "plan.json"), "plan")["overview"]["title"] == "changed"
    assert not hasattr(raw, "tell") and not hasattr(raw, "next_route")


def test_a_frozen_plan_refuses_a_new_plan_review(store: Store, state_dir: Path) -> None:
    freeze(state_dir)
    with pytest.raises(Refused), store.transaction("qr add") as tx:
        tx.create("qr-plan-design", qr("plan-design"))
    assert not store.exists("qr-plan-design")


def test_a_frozen_plan_still_takes_execution_records(store: Store, state_dir: Path) -> None:
    freeze(state_dir)
    with store.transaction("executor") as tx:
        tx.create("qr-impl-code", qr("impl-code"))
        tx.create("execution", {**schema.defaults("execution"), "base_commit": "abc"})
        tx.edit("session")["status"] = "executing"
    assert store.read("qr-impl-code")["phase"] == "impl-code"
    assert store.read("execution")["base_commit"] == "abc"
    assert store.read("session")["status"] == "executing"


@pytest.mark.parametrize("name", ["plan", "context", "qr-plan-design", "qr-impl-code", "execution"])
def test_a_cancelled_session_refuses_edits(store: Store, state_dir: Path, name: str) -> None:
    write(state_dir, "session", builders.session(str(state_dir), status="cancelled"))
    if name.startswith("qr-"):
        write(state_dir, name, qr(name.removeprefix("qr-")))
    if name == "execution":
        write(state_dir, name, schema.defaults("execution"))
    before = snapshot(state_dir)
    with (
        pytest.raises(Refused, match="the session is cancelled") as caught,
        store.transaction("x") as tx,
    ):
        tx.edit(name)
    assert caught.value.exit_code == 4
    assert snapshot(state_dir) == before


@pytest.mark.parametrize("status", sorted(s.value for s in CLOSED))
def test_a_closed_session_refuses_new_files_but_not_itself(
    store: Store, state_dir: Path, status: str
) -> None:
    write(state_dir, "session", builders.session(str(state_dir), status=status))
    with pytest.raises(Refused, match=f"the session is {status}"), store.transaction("x") as tx:
        tx.create("execution", schema.defaults("execution"))
    with store.transaction("x") as tx:
        tx.edit("session")["reason"] = "done"
    assert store.read("session")["reason"] == "done"


# --- history and audit ---------------------------------------------------------------------


def test_every_committed_plan_change_adds_a_revision(store: Store, state_dir: Path) -> None:
    history = state_dir / "history"
    for number, title in enumerate(["one", "two", "three"], 1):
        set_title(store, title, command=f"overview set {number}")
        assert (history / f"r{number}.json").read_bytes() == (state_dir / "plan.json").read_bytes()
    index = lines(history / "index.jsonl")
    assert [(r["rev"], r["command"]) for r in index] == [
        ("r1", "overview set 1"),
        ("r2", "overview set 2"),
        ("r3", "overview set 3"),
    ]
    assert all(set(r) == {"rev", "ts", "command", "summary"} for r in index)
    assert store.revision("r2")["overview"]["title"] == "two"
    with pytest.raises(UsageError, match="no revision r9"):
        store.revision("r9")


def test_an_unchanged_commit_adds_nothing(store: Store, state_dir: Path) -> None:
    set_title(store, "same")
    before = snapshot(state_dir)
    set_title(store, "same")
    with store.transaction("read only") as tx:
        tx.edit("plan")
        tx.edit("context")
    assert snapshot(state_dir) == before


def test_a_change_outside_the_plan_adds_no_revision(store: Store, state_dir: Path) -> None:
    with store.transaction("context add") as tx:
        tx.edit("context")["assumptions"].append("x")
    assert not (state_dir / "history").exists()
    [line] = lines(state_dir / "audit.jsonl")
    assert line["files"] == ["context"]
    assert "rev" not in line and "ids" not in line


def test_the_audit_has_one_line_per_commit(store: Store, state_dir: Path) -> None:
    with store.transaction("decision add") as tx:
        tx.edit("plan")["planning_context"]["decision_log"].append(builders.decision(1))
        tx.edit("context")["assumptions"].append("x")
        tx.created.append("DL-001")
        tx.note(ops=2)
    set_title(store, "second")
    first, second = lines(state_dir / "audit.jsonl")
    assert first["event"] == "mutation"
    assert first["command"] == "decision add"
    assert first["files"] == ["context", "plan"]
    assert first["ids"] == ["DL-001"]
    assert first["rev"] == "r1"
    assert first["ops"] == 2
    assert {"command": "overview set", "files": ["plan"], "rev": "r2"}.items() <= second.items()
    assert "ids" not in second
    [r1, _] = lines(state_dir / "history" / "index.jsonl")
    assert r1["summary"] == "DL-001"


# --- many writers --------------------------------------------------------------------------

WRITER = """
import sys
from state.ops import plan_ops
from state.rules.session_store import Store
store = Store(sys.argv[1])
for n in range(int(sys.argv[2])):
    with store.transaction("decision add") as tx:
        decision = f"{sys.argv[3]}-{n}"
        tx.created.extend(plan_ops.decision_add(tx, decision=decision, reasoning="r", question=[]))
"""


def test_concurrent_writers_lose_nothing(store: Store, state_dir: Path) -> None:
    writers, each = 4, 10
    children = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(state_dir), str(each), f"w{w}"],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        for w in range(writers)
    ]
    assert [child.wait(timeout=120) for child in children] == [0] * writers
    log = store.read("plan")["planning_context"]["decision_log"]
    assert sorted(d["id"] for d in log) == [f"DL-{n:03d}" for n in range(1, writers * each + 1)]
    assert len({d["decision"] for d in log}) == writers * each
    assert len(lines(state_dir / "history" / "index.jsonl")) == writers * each
    assert len(lines(state_dir / "audit.jsonl")) == writers * each


# --- locks ---------------------------------------------------------------------------------

COUNTER = """
import sys
from state.storage.lock import locked
lock, counter, backend, times = sys.argv[1:]
for _ in range(int(times)):
    with locked(lock, backend=None if backend == "fcntl" else backend):
        with open(counter) as f:
            value = int(f.read())
        with open(counter, "w") as f:
            f.write(str(value + 1))
"""


@pytest.mark.parametrize(
    "backends",
    [("fcntl",) * 4, ("filelock",) * 4, ("fcntl", "filelock") * 2],
    ids=["fcntl", "filelock", "mixed"],
)
def test_locks_exclude_each_other_across_processes(
    tmp_path: Path, backends: tuple[str, ...]
) -> None:
    lock, counter = tmp_path / ".lock", tmp_path / "counter"
    counter.write_text("0")
    children = [
        subprocess.Popen(
            [sys.executable, "-c", COUNTER, str(lock), str(counter), backend, "50"],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        for backend in backends
    ]
    assert [child.wait(timeout=120) for child in children] == [0] * len(backends)
    assert counter.read_text() == str(50 * len(backends))


BACKENDS = [None, "filelock"]


@pytest.mark.parametrize("holder", BACKENDS)
@pytest.mark.parametrize("waiter", BACKENDS)
def test_a_held_lock_times_out_with_the_path(
    tmp_path: Path, holder: str | None, waiter: str | None
) -> None:
    path = str(tmp_path / ".lock")
    with locked(path, backend=holder):
        with pytest.raises(PlannerError) as caught, locked(path, timeout=0.05, backend=waiter):
            pass
        assert path in caught.value.message
        assert "still locked" in caught.value.message
    with locked(path, timeout=0.05, backend=waiter):  # free again once released
        pass


HOLDER = """
import sys
from state.storage.lock import locked
with locked(sys.argv[1], backend=sys.argv[2] or None):
    print("locked", flush=True)
    sys.stdin.read()
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_lock_held_by_another_process_times_out(tmp_path: Path, backend: str | None) -> None:
    path = str(tmp_path / ".lock")
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, path, backend or ""],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "locked\n"
        for waiter in BACKENDS:
            with (
                pytest.raises(PlannerError, match="still locked") as caught,
                locked(path, timeout=0.1, backend=waiter),
            ):
                pass
            assert path in caught.value.message
    finally:
        child.communicate("", timeout=60)
    assert child.returncode == 0


# --- ids -----------------------------------------------------------------------------------


def ids(*values: str) -> list[dict[str, str]]:
    return [{"id": v} for v in values]


@pytest.mark.parametrize(
    ("existing", "expected"),
    [
        ([], "M-001"),
        (["M-001"], "M-002"),
        (["M-003", "M-001"], "M-004"),  # max + 1, never a gap filled
        (["M-009"], "M-010"),
        (["M-099"], "M-100"),
        (["M-999"], "M-1000"),
        (["M-1000", "M-002"], "M-1001"),
        (["M-x", "M-", "M-01a", "M- 12", "M--5", "M-5.0", "M-²"], "M-001"),  # malformed tails
        (["M-004", "M-abc"], "M-005"),
    ],
)
def test_next_id(existing: list[str], expected: str) -> None:
    assert next_id(ids(*existing), "M") == expected


def test_next_id_reads_only_its_prefix_length() -> None:
    assert next_id(ids("DL-007", "DL-010"), "DL") == "DL-011"
    assert next_id(ids("qa-002"), "qa") == "qa-003"


@pytest.mark.parametrize(
    ("index", "letters"),
    [
        (0, "A"),
        (1, "B"),
        (25, "Z"),
        (26, "AA"),
        (27, "AB"),
        (51, "AZ"),
        (52, "BA"),
        (701, "ZZ"),
        (702, "AAA"),
    ],
)
def test_option_letter(index: int, letters: str) -> None:
    assert option_letter(index) == letters


def test_a_transaction_hands_out_increasing_ids(store: Store) -> None:
    with store.transaction("x") as tx:
        log = tx.edit("plan")["planning_context"]["decision_log"]
        log.append(builders.decision(7))
        assert tx.new_id("plan", "DL", log) == "DL-008"
        assert tx.new_id("plan", "DL", log) == "DL-009"  # scanned once, never handed out twice
        assert tx.new_id("plan", "M", []) == "M-001"


def test_a_committed_document_is_written_with_its_defaults(store: Store, state_dir: Path) -> None:
    with store.transaction("milestone add") as tx:
        tx.edit("plan")["milestones"].append({"id": "M-001", "number": 1, "name": "n"})
    raw = (state_dir / "plan.json").read_bytes()
    assert json.loads(raw)["milestones"][0]["risk"] == "medium"
    assert raw == dumps(store.read("plan"))
    before = snapshot(state_dir)
    with store.transaction("nothing") as tx:
        tx.edit("plan")
    assert snapshot(state_dir) == before  # no second revision of the same plan


def test_report_name_is_a_qr_document_name_for_each_phase_and_nothing_else() -> None:
    assert [report_name(p) for p in Phase] == [f"qr-{p}" for p in Phase]
    for wrong in ("", "plan", "qr-plan-design", "plan-design "):
        with pytest.raises(UsageError, match="not a QR phase"):
            report_name(wrong)


def test_load_reads_raw_bytes_given_as_the_file_would_give_them(tmp_path: Path) -> None:
    path = tmp_path / "context.json"
    raw = json.dumps(schema.defaults("context")).encode()
    path.write_bytes(b"damaged")  # not what is read: the bytes given are
    assert load(str(path), "context", raw)["questions"] == []
    with pytest.raises(DamagedFile, match="empty file"):
        load(str(path), "context", b"  ")
