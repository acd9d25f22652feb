"""Issue 18: history grows with the change, not with the plan. A large plan's revisions are
deltas (state/storage/delta.py) replayed from a whole snapshot; every revision reads back as it was
written, whole revisions of older sessions still read, a damaged delta exits 3 naming it.
"""

from __future__ import annotations

import contextlib
import gc
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from state.errors import DamagedFile, PreconditionFailed
from state.rules.session_store import Store
from state.storage import delta, history
from state.storage import store as store_module
from state.storage.store import dumps
from state.validation import validate
from tests.conftest import Plan
from tests.state import builders

# --- the delta itself ------------------------------------------------------------------------

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(-2, 2, allow_nan=False),
    st.text(max_size=3),
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.sampled_from("abcde"), inner, max_size=4)
    ),
    max_leaves=25,
)


@st.composite
def edited(draw: st.DrawFn) -> tuple[Any, Any]:
    """A document and a version of it: edited in a few places, or drawn anew."""
    old = draw(documents)
    new = json.loads(json.dumps(old))
    for _ in range(draw(st.integers(0, 3))):
        new = _edit(new, draw)
    return old, draw(st.one_of(st.just(new), documents))


def _edit(doc: Any, draw: st.DrawFn) -> Any:
    if isinstance(doc, list) and doc and draw(st.booleans()):
        i = draw(st.integers(0, len(doc) - 1))
        how = draw(st.sampled_from(["insert", "delete", "deeper"]))
        if how == "insert":
            doc.insert(i, draw(documents))
        elif how == "delete":
            del doc[i]
        else:
            doc[i] = _edit(doc[i], draw)
        return doc
    if isinstance(doc, dict) and doc and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(doc)))
        if draw(st.booleans()):
            del doc[key]
        else:
            doc[key] = _edit(doc[key], draw)
        return doc
    return draw(documents)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(edited(), st.sampled_from([0, delta.MATCH_MIN]))
def test_a_delta_replays_to_the_same_bytes(pair: tuple[Any, Any], match_min: int) -> None:
    """match_min 0: every list middle is aligned with difflib (the "@" hunks)."""
    old, new = pair
    saved, delta.MATCH_MIN = delta.MATCH_MIN, match_min
    try:
        op = json.loads(json.dumps(delta.diff(old, new)))  # as history/ stores it
    finally:
        delta.MATCH_MIN = saved
    replayed = delta.patch(json.loads(json.dumps(old)), op)
    assert json.dumps(replayed) == json.dumps(new)


def test_a_one_item_change_in_a_long_list_is_a_small_delta() -> None:
    old = {"items": [{"id": n, "text": "x" * 50} for n in range(1000)], "title": "t"}
    new = json.loads(json.dumps(old))
    new["items"][500]["text"] = "changed"
    new["items"].insert(800, {"id": -1, "text": "new"})
    assert len(json.dumps(delta.diff(old, new))) < 300
    assert delta.diff(old, json.loads(json.dumps(old))) is None


# --- history/ in a session -------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    """A session whose plan counts as large from the first byte, with a short chain."""
    monkeypatch.setattr(history, "SNAPSHOT_MIN", 0)
    monkeypatch.setattr(history, "CHAIN_MAX", 4)
    directory = tmp_path / "session"
    directory.mkdir()
    (directory / "session.json").write_bytes(dumps(builders.session(str(tmp_path))))
    (directory / "plan.json").write_bytes(dumps(builders.plan()))
    return Store(str(directory))


def add_decision(store: Store, n: int) -> bytes:
    """One mutation; the plan's bytes after it."""
    with store.transaction("decision add") as tx:
        tx.edit("plan")["planning_context"]["decision_log"].append(builders.decision(n))
    return Path(store.path("plan")).read_bytes()


def names(store: Store) -> list[str]:
    return sorted(
        history.revision_files(store.dir).values(), key=lambda n: int(n[1:].split(".")[0])
    )


def test_revisions_of_a_large_plan_are_deltas_that_read_back_exactly(store: Store) -> None:
    written = {f"r{n}": add_decision(store, n) for n in range(1, 11)}
    assert names(store) == [
        "r1.json", "r2.delta.json", "r3.delta.json", "r4.delta.json",
        "r5.json", "r6.delta.json", "r7.delta.json", "r8.delta.json",
        "r9.json", "r10.delta.json",
    ]  # fmt: skip
    for rev, data in written.items():
        assert dumps(store.revision(rev)) == data, rev
    assert [e["rev"] for e in store.history()] == list(written)
    whole = len(written["r10"])
    deltas = [p for p in Path(store.dir, "history").glob("*.delta.json")]
    assert all(p.stat().st_size < whole for p in deltas)


def test_a_deltas_sha256_is_read_from_its_head_or_else_from_the_whole_file(store: Store) -> None:
    """The next revision chains to a delta by the sha256 in its first bytes (the delta is not
    parsed for it); a delta in another layout is parsed whole and chains all the same."""
    add_decision(store, 1)
    add_decision(store, 2)
    r2 = Path(store.dir, "history", "r2.delta.json")
    head = history.DELTA_HEAD.match(r2.read_bytes())
    assert head is not None and head[1].decode() == json.loads(r2.read_bytes())["sha256"]
    r2.write_text(json.dumps(json.loads(r2.read_bytes()), indent=1))  # the same record
    after = add_decision(store, 3)
    assert names(store)[-1] == "r3.delta.json"
    assert dumps(store.revision("r3")) == after


def test_a_plan_edited_by_hand_gets_a_whole_revision(store: Store) -> None:
    add_decision(store, 1)
    add_decision(store, 2)
    plan = json.loads(Path(store.path("plan")).read_text())
    plan["overview"]["title"] = "edited by hand"
    Path(store.path("plan")).write_bytes(dumps(plan))
    after = add_decision(store, 3)
    assert names(store)[-1] == "r3.json"
    assert dumps(store.revision("r3")) == after
    assert store.revision("r2")["overview"]["title"] != "edited by hand"


def test_whole_revisions_of_older_sessions_still_read(store: Store) -> None:
    """Sessions written before deltas hold only rN.json; a delta can follow them."""
    first = add_decision(store, 1)
    history.SNAPSHOT_MIN = 1 << 40  # type: ignore[attr-defined]  # (monkeypatch undoes it)
    second = add_decision(store, 2)
    history.SNAPSHOT_MIN = 0  # type: ignore[attr-defined]
    third = add_decision(store, 3)
    assert names(store) == ["r1.json", "r2.json", "r3.delta.json"]
    assert [dumps(store.revision(r)) for r in ("r1", "r2", "r3")] == [first, second, third]


@pytest.mark.parametrize("damage", ["garbage", "wrong-base", "missing-base", "bad-op"])
def test_a_damaged_delta_exits_3_naming_the_file(store: Store, damage: str) -> None:
    for n in range(1, 4):
        add_decision(store, n)
    hist = Path(store.dir, "history")
    target = hist / "r3.delta.json"
    record = json.loads(target.read_text())
    if damage == "garbage":
        target.write_bytes(b"\xff{")
    elif damage == "wrong-base":
        record["base_sha256"] = "0" * 64
        target.write_text(json.dumps(record))
    elif damage == "bad-op":
        record["op"] = ["[", 0, 0, "~", [None, None, None]]
        target.write_text(json.dumps(record))
    else:
        (hist / "r1.json").unlink()
    with pytest.raises(DamagedFile) as caught:
        store.revision("r3")
    assert str(hist) in caught.value.message


@pytest.mark.slow
def test_plan_history_and_diff_work_on_a_large_plan(
    project: Path, session_dir: Path, plan: Plan
) -> None:
    """Through the real CLI, with the real threshold: a plan over SNAPSHOT_MIN bytes."""
    ops = [{"op": "decision add", "args": {"decision": "d", "reasoning": "r"}}]
    for m in range(30):
        ops.append({"op": "milestone add", "args": {"name": f"m{m}", "file": [f"src/m{m}.py"]}})
        anchor = f"${len(ops)}"
        ops += [
            {
                "op": "intent add",
                "args": {"milestone": anchor, "file": f"src/m{m}.py", "behavior": f"does {i}" * 5},
            }
            for i in range(10)
        ]
    plan("apply", "-", input=json.dumps(ops))
    size = (session_dir / "plan.json").stat().st_size
    assert size > history.SNAPSHOT_MIN
    [new_id] = plan.ids("decision", "add", "--decision", "later", "--reasoning", "r")
    delta_file = session_dir / "history" / "r3.delta.json"
    assert delta_file.exists() and delta_file.stat().st_size < size / 20
    assert "r3" in plan("history").stdout
    shown = plan("diff", "r2", "r3").stdout
    assert new_id in shown
    assert plan("diff", "r1", "r3").stdout.count("CI-") >= 300
    plan("validate")
    restored = plan("history", "--show", "r2").stdout
    assert json.loads(restored)["milestones"][29]["name"] == "m29"
    assert new_id not in restored


# --- a large plan's commit: encoded once, checked and diffed by member (issue 32) ------------

tops = st.dictionaries(st.sampled_from("abcdef"), documents, min_size=1, max_size=6)


@pytest.mark.slow  # 300 large documents: over 3 s of CPU
@settings(max_examples=300, deadline=None)
@given(tops, st.data())
def test_a_large_document_is_encoded_as_dumps_and_its_changed_members_found(
    old: dict[str, Any], data: st.DataObject
) -> None:
    """Compact as a large document is (INDENT_UP_TO 0): the bytes are dumps' bytes, and `old`
    holds exactly the members whose bytes changed, as the file had them, or None when the
    keys changed; their delta replays to the new bytes."""
    new = json.loads(json.dumps(old))
    for key in data.draw(st.lists(st.sampled_from(sorted(new)), max_size=3)):
        new[key] = _edit(new[key], data.draw)
    if data.draw(st.booleans()):
        new = data.draw(st.one_of(st.just(new), tops))
    saved, store_module.INDENT_UP_TO = store_module.INDENT_UP_TO, 0
    try:
        raw = dumps(old)
        encoded = store_module.Encoded(new, raw)
        assert encoded.data == dumps(new)
    finally:
        store_module.INDENT_UP_TO = saved
    if list(old) != list(new):
        assert encoded.old is None
        return
    compact = {k: json.dumps(v, separators=(",", ":")) for k, v in old.items()}
    differ = {k for k, v in new.items() if json.dumps(v, separators=(",", ":")) != compact[k]}
    if not differ:
        assert encoded.old is None
        return
    assert encoded.old == {k: old[k] for k in old if k in differ}
    assert list(encoded.old) == [k for k in old if k in differ]
    replayed = delta.patch(json.loads(raw), json.loads(json.dumps(delta.members(encoded.old, new))))
    assert json.dumps(replayed) == json.dumps(new)


@pytest.fixture
def large(store: Store, monkeypatch: pytest.MonkeyPatch) -> Store:
    monkeypatch.setattr(store_module, "INDENT_UP_TO", 0)  # every document is "large"
    return store


def test_a_large_plan_commit_checks_diffs_and_fills_only_what_changed(large: Store) -> None:
    written = {f"r{n}": add_decision(large, n) for n in range(1, 6)}
    assert written["r5"].count(b"\n") == 1  # compact
    # builders.decision leaves out defaults: the schema filled them in, and they were written
    log = json.loads(written["r5"])["planning_context"]["decision_log"]
    assert all(d["superseded_by"] is None for d in log)
    for rev, data in written.items():
        assert dumps(large.revision(rev)) == data, rev
    record = json.loads(Path(large.dir, "history", "r3.delta.json").read_text())
    assert list(record["op"][1]) == ["planning_context"]


def test_an_invalid_change_to_a_large_plan_is_refused_as_a_small_ones(large: Store) -> None:
    add_decision(large, 1)
    before = Path(large.path("plan")).read_bytes()
    with pytest.raises(PreconditionFailed) as caught, large.transaction("decision add") as tx:
        tx.edit("plan")["planning_context"]["decision_log"].append(builders.decision(2, id=7))
    lines = [f.line() for f in caught.value.findings]
    assert any("plan.json:planning_context.decision_log[1].id" in line for line in lines), lines
    assert Path(large.path("plan")).read_bytes() == before


def test_a_large_document_is_walked_at_a_read_unless_a_commit_checked_these_bytes(
    large: Store,
) -> None:
    """.checked names the bytes a commit checked, with the schema's fingerprint: a read walks
    anything else (an edit by hand, another schema) and refuses it as before."""
    written = add_decision(large, 1)
    checked = Path(large.dir, store_module.CHECKED)
    assert checked.read_bytes().splitlines() == [
        store_module.checked_line(large.path("plan"), "plan", written),
        f"plan.json {history.sha256(written)} integrity-{validate.fingerprint()}".encode(),
    ]
    plan = json.loads(written)
    plan["planning_context"]["decision_log"][0]["id"] = 7  # by hand: invalid
    bad = dumps(plan)
    Path(large.path("plan")).write_bytes(bad)
    with pytest.raises(DamagedFile, match=r"decision_log\[0\]\.id"):
        large.read("plan")
    checked.write_bytes(
        store_module.checked_line(large.path("plan"), "plan", bad).replace(b" ", b" 0", 2) + b"\n"
    )  # these bytes, but another schema's fingerprint
    with pytest.raises(DamagedFile, match=r"decision_log\[0\]\.id"):
        large.read("plan")
    checked.write_bytes(store_module.checked_line(large.path("plan"), "plan", bad) + b"\n")
    assert large.read("plan")["planning_context"]["decision_log"][0]["id"] == 7  # trusted
    Path(large.path("plan")).write_bytes(written)  # put back: walked, valid
    after = add_decision(large, 2)  # the commit records its bytes in place of the lines
    assert checked.read_bytes().splitlines()[0] == store_module.checked_line(
        large.path("plan"), "plan", after
    )
    assert checked.read_bytes().count(b"plan.json") == 2


def test_a_large_plans_integrity_walks_its_milestones_unless_a_commit_found_them_sound(
    large: Store,
) -> None:
    """After a commit (.checked's integrity line), a change to the planning context walks only
    that; a decision removed, or bytes edited by hand, walk the whole plan: a milestone's
    dangling reference is refused (exit 3, or 4 when the command made it) as before."""
    with large.transaction("milestone add") as tx:
        plan = tx.edit("plan")
        plan["planning_context"]["decision_log"].append(builders.decision(1))
        intent = builders.intent(1, decision_refs=["DL-001"])
        plan["milestones"].append(builders.milestone(1, code_intents=[intent]))
    add_decision(large, 2)
    with pytest.raises(PreconditionFailed) as caught, large.transaction("decision remove") as tx:
        tx.edit("plan")["planning_context"]["decision_log"].pop(0)
    assert "refers to decision DL-001, which does not exist" in str(caught.value.findings)
    plan = json.loads(Path(large.path("plan")).read_bytes())
    plan["milestones"][0]["code_intents"][0]["decision_refs"] = ["DL-009"]
    Path(large.path("plan")).write_bytes(dumps(plan))  # by hand: valid for the schema
    with pytest.raises(DamagedFile, match=r"DL-009, which does not exist.*it was so before"):
        add_decision(large, 3)


def test_a_large_documents_objects_are_out_of_the_collectors_walks_for_the_transaction(
    large: Store,
) -> None:
    """Frozen while the transaction reads and commits it, back in the collector's walks after
    it, whether it committed or failed; the collector is on throughout."""
    for fail in (False, True):
        with contextlib.suppress(ValueError), large.transaction("decision add") as tx:
            tx.edit("plan")["planning_context"]["decision_log"].append(builders.decision(1))
            assert gc.isenabled() and gc.get_freeze_count() > 0
            if fail:
                raise ValueError
        assert gc.isenabled() and gc.get_freeze_count() == 0
