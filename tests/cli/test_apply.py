"""`plan apply` batches: ops looked up in the click group, arguments through each command's
click parameters, "$K" references, and one transaction.

A batch runs in one transaction: any bad operation, or a result that breaks the plan,
leaves every file of the session as it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from cli.base import Operation
from cli.commands.apply import apply_batch, batch_context, convert, find_operation
from cli.commands.design import decision_command
from cli.main import main, plan
from state.errors import PreconditionFailed, Refused, UsageError
from state.rules.session_store import Store
from state.storage.store import dumps
from state.validation import validate
from tests.plans import batch as farewell_batch
from tests.state import builders as b
from tests.state.builders import snapshot


@pytest.fixture
def store(session_dir: Path) -> Store:
    return Store(str(session_dir))


def apply(store: Store, batch: Any) -> list[str]:
    return [i for ids in apply_batch(store, plan, batch) for i in ids]


def decision(text: str = "Mirror greet()") -> dict[str, Any]:
    return {"op": "decision add", "args": {"decision": text, "reasoning": "same shape"}}


def milestone(name: str = "Farewell", **args: Any) -> dict[str, Any]:
    return {"op": "milestone add", "args": {"name": name, **args}}


def audit(store: Store) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(store.dir, "audit.jsonl").read_text().splitlines()]


# --- "$K" references -----------------------------------------------------------------------


def test_references_name_the_id_an_earlier_operation_created(store: Store) -> None:
    created = apply(
        store,
        [
            decision(),
            milestone(),
            {
                "op": "intent add",
                "args": {
                    "milestone": "$2",
                    "file": "src/app.py",
                    "behavior": "say bye",
                    "decision": ["$1"],  # inside a list too
                },
            },
            {"op": "risk add", "args": {"risk": "clash", "mitigation": "grep", "decision": "$1"}},
            milestone("Docs", depends=["$2"], doc_only=True),
        ],
    )
    assert created == ["DL-001", "M-001", "CI-001", "R-001", "M-002"]
    plan = store.read("plan")
    intent = plan["milestones"][0]["code_intents"][0]
    assert intent["decision_refs"] == ["DL-001"]
    assert plan["planning_context"]["known_risks"][0]["decision_ref"] == "DL-001"
    assert plan["milestones"][1]["depends_on"] == ["M-001"]
    assert plan["milestone_dependencies"]["waves"] == [
        {"wave": 1, "milestones": ["M-001"]},
        {"wave": 2, "milestones": ["M-002"]},
    ]


def test_a_reference_is_the_first_id_of_that_operation(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An operation that creates several ids is referred to by its first."""

    def pair(tx: Any) -> list[str]:
        log = tx.edit("plan")["planning_context"]["decision_log"]
        made = []
        for text in ("first", "second"):
            item = {**b.decision(0, decision=text), "id": tx.new_id("plan", "DL", log)}
            log.append(item)
            made.append(item["id"])
        return made

    monkeypatch.setitem(decision_command.commands, "pair", Operation("pair", op=pair))
    created = apply(
        store,
        [
            {"op": "decision pair"},
            {"op": "risk add", "args": {"risk": "r", "mitigation": "m", "decision": "$1"}},
        ],
    )
    assert created == ["DL-001", "DL-002", "R-001"]
    assert store.read("plan")["planning_context"]["known_risks"][0]["decision_ref"] == "DL-001"


def test_a_batch_may_be_an_object_with_ops(store: Store) -> None:
    assert apply(store, {"ops": [decision()]}) == ["DL-001"]


def test_text_that_only_looks_like_a_reference_is_kept(store: Store) -> None:
    apply(store, [decision("costs $5 or $ 5"), decision("$")])
    log = store.read("plan")["planning_context"]["decision_log"]
    assert [d["decision"] for d in log] == ["costs $5 or $ 5", "$"]


def test_ids_continue_from_the_plan_and_the_batch_is_one_commit(store: Store) -> None:
    apply(store, [decision(), decision()])
    before = len(audit(store))
    assert apply(store, [decision(), milestone()]) == ["DL-003", "M-001"]
    [line] = audit(store)[before:]
    assert line["command"] == "apply"
    assert line["ids"] == ["DL-003", "M-001"]
    assert line["ops"] == 2


def test_the_complete_farewell_batch_makes_a_valid_plan(store: Store, project: Path) -> None:
    apply(store, farewell_batch())
    plan = store.read("plan")
    assert validate.validate(plan, "final", str(project), set()) == []


# --- bad batches write nothing -------------------------------------------------------------

BAD = [
    pytest.param([decision(), {"op": "decision ad", "args": {}}], 2, "unknown op", id="unknown-op"),
    pytest.param(
        [{"op": "decision ad"}],
        1,
        "unknown op 'decision ad' (did you mean 'decision add'?)",
        id="close-to-an-op",
    ),
    pytest.param([{"op": "status"}], 1, "'status' does not change the session", id="reader"),
    pytest.param([{"op": "decision"}], 1, "unknown op 'decision'", id="group"),
    pytest.param(
        [{"op": "decision add", "args": {"decision": "d", "reasoning": "r", "why": "x"}}],
        1,
        "unknown argument 'why'",
        id="unknown-arg",
    ),
    pytest.param(
        [decision(), milestone(risk="extreme")],
        2,
        "--risk: 'extreme' is not one of",
        id="bad-choice",
    ),
    pytest.param([milestone(doc_only="yes")], 1, "--doc-only must be true or false", id="flag"),
    pytest.param(
        [{"op": "decision add", "args": {"decision": 5, "reasoning": "r"}}],
        1,
        "--decision must be text",
        id="int-for-str",
    ),
    pytest.param([milestone(name=["a", "b"])], 1, "--name must be text", id="list-for-scalar"),
    pytest.param([milestone(file=["a.py", 3])], 1, "--file must be text", id="bad-list-element"),
    pytest.param(
        [{"op": "decision add", "args": {"decision": "d"}}],
        1,
        "--reasoning is required",
        id="missing-required",
    ),
    pytest.param(
        [decision(), {"op": "decision add", "args": {"decision": " ", "reasoning": "r"}}],
        2,
        "--decision: may not be empty",
        id="blank-required",
    ),
    pytest.param(
        [
            decision(),
            {"op": "risk add", "args": {"risk": "r", "mitigation": "m", "decision": "$9"}},
        ],
        2,
        "$9 does not name an earlier operation",
        id="reference-to-nothing",
    ),
    pytest.param(
        [decision(), milestone(depends=["$2"])],
        2,
        "$2 does not name an earlier operation",
        id="reference-to-itself",
    ),
    pytest.param(
        [{"op": "overview set", "args": {"title": "t"}}, milestone(depends=["$1"])],
        2,
        "$1 does not name an earlier operation that created an id",
        id="reference-to-no-id",
    ),
    pytest.param([decision(), milestone(depends=["$0"])], 2, "$0 does not", id="reference-0"),
    pytest.param(
        [decision(), "decision add"], 2, 'expected an object with a string "op"', id="str"
    ),
    pytest.param([{"args": {}}], 1, 'expected an object with a string "op"', id="no-op"),
    pytest.param([{"op": "decision add", "args": []}], 1, '"args" must be an object', id="args"),
    pytest.param(
        [
            decision(),
            {"op": "intent add", "args": {"milestone": "M-009", "file": "f", "behavior": "b"}},
        ],
        2,
        "operation 2 (intent add): plan.json: no M-009",
        id="operation-refuses",
    ),
]


@pytest.mark.parametrize(("entries", "number", "problem"), BAD)
def test_a_bad_operation_is_a_usage_error_and_nothing_is_written(
    store: Store, session_dir: Path, entries: list[Any], number: int, problem: str
) -> None:
    apply(store, [decision("already there")])  # history and audit exist and must not move
    before = snapshot(session_dir)
    with pytest.raises(UsageError) as caught:
        apply(store, entries)
    assert f"plan apply: operation {number}" in caught.value.message
    assert problem in caught.value.message
    assert caught.value.exit_code == 2
    assert snapshot(session_dir) == before


@pytest.mark.parametrize("batch", [[], {}, {"ops": []}, "decision add", None, {"op": "x"}])
def test_a_batch_must_be_a_non_empty_list(store: Store, session_dir: Path, batch: Any) -> None:
    before = snapshot(session_dir)
    with pytest.raises(UsageError, match="non-empty JSON list"):
        apply(store, batch)
    assert snapshot(session_dir) == before


def test_a_batch_whose_last_operation_breaks_integrity_writes_nothing(
    store: Store, session_dir: Path
) -> None:
    before = snapshot(session_dir)
    entries = [
        decision(),
        milestone(),
        {
            "op": "alternative add",
            "args": {"alternative": "a class", "reason": "too much", "decision": "DL-009"},
        },
    ]
    with pytest.raises(PreconditionFailed) as caught:
        apply(store, entries)
    assert [f.path for f in caught.value.findings] == [
        "planning_context.rejected_alternatives[RA-001].decision_ref"
    ]
    assert snapshot(session_dir) == before


def test_a_frozen_plan_refuses_a_batch(store: Store, session_dir: Path) -> None:
    plan = store.read("plan")
    plan["frozen_at"] = b.LATER
    (session_dir / "plan.json").write_bytes(dumps(plan))
    before = snapshot(session_dir)
    with pytest.raises(Refused, match=r"operation 1 \(decision add\):.*frozen"):
        apply(store, [decision()])
    assert snapshot(session_dir) == before


# --- arguments through the command's click parameters ---------------------------------------


def recorded(op: str, args: dict[str, Any]) -> dict[str, Any]:
    """The arguments the op's function would get in a batch."""
    parent = batch_context(plan)
    return convert(find_operation(parent, op, "w"), op, args, parent, "w")


def test_defaults_are_filled_as_on_the_command_line() -> None:
    assert recorded("qr add", {"phase": "plan-design", "check": "c"}) == {
        "phase": "plan-design",
        "check": "c",
        "scope": "*",
        "severity": "MUST",
        "status": "TODO",
        "finding": None,
    }
    assert recorded("milestone add", {"name": "n"}) == {
        "name": "n",
        "file": [],
        "requirement": [],
        "acceptance": [],
        "risk": None,
        "depends": [],
        "doc_only": None,
        "flag": [],
        "delegated_to": None,
    }


def test_a_single_value_of_a_repeatable_option_is_wrapped() -> None:
    assert recorded("milestone add", {"name": "n", "file": "a.py"})["file"] == ["a.py"]


def test_given_values_are_kept_and_numbers_converted() -> None:
    args = {"intent": "CI-001", "file": "f", "diff": "d", "context_lines": 0, "why": ["w"]}
    assert recorded("change add", args) == {**args, "why": ["w"]}
    assert recorded("change add", {**args, "context_lines": "3"})["context_lines"] == 3
    with pytest.raises(UsageError, match="--context-lines must be a number or text"):
        recorded("change add", {**args, "context_lines": True})
    with pytest.raises(UsageError, match="--context-lines: 'x' is not a valid integer"):
        recorded("change add", {**args, "context_lines": "x"})


def test_a_command_is_one_transaction_with_its_own_audit_line(
    store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["decision", "add", "--decision", "d", "--reasoning", "r", "--state-dir", store.dir]
    assert main(argv) == 0
    assert capsys.readouterr().out == "DL-001\n"
    assert store.read("plan")["planning_context"]["decision_log"][0]["id"] == "DL-001"
    last = audit(store)[-1]
    assert (last["command"], last["ids"], last["files"]) == ("decision add", ["DL-001"], ["plan"])


# --- an id of the wrong kind ----------------------------------------------------------------

# Each op's argument that names an item, with the kind it must be (its id prefix).
TYPED = [
    ("decision set", {"decision": "x"}, "id", "DL"),
    ("alternative set", {"reason": "x"}, "id", "RA"),
    ("constraint set", {"description": "x"}, "id", "C"),
    ("risk set", {"risk": "x"}, "id", "R"),
    ("milestone set", {"name": "x"}, "id", "M"),
    ("milestone tests", {"type": "unit"}, "id", "M"),
    ("intent add", {"file": "src/app.py", "behavior": "x"}, "milestone", "M"),
    ("intent set", {"behavior": "x"}, "id", "CI"),
    ("change set", {"why": ["x"]}, "id", "CC"),
    ("doc set", {"module_comment": "x"}, "id", "M"),
]
PRESENT = ["DL-001", "RA-001", "C-001", "R-001", "M-001", "CI-001", "CC-001"]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=st.sampled_from(TYPED), wrong=st.sampled_from(PRESENT))
def test_an_id_of_another_kind_is_a_usage_error_and_nothing_is_written(
    session_dir: Path, case: tuple[str, dict[str, Any], str, str], wrong: str
) -> None:
    """A batch naming, say, an intent where a milestone belongs is refused by name (exit 2),
    never a crash on the item's missing fields (it was a KeyError, exit 1)."""
    op, args, slot, kind = case
    assume(not wrong.startswith(kind + "-"))
    store = Store(str(session_dir))
    if not Path(session_dir, "plan.json").read_text().count("CC-001"):
        apply(store, farewell_batch())
    before = snapshot(session_dir)
    with pytest.raises(UsageError, match=f"{wrong}: not a .* id \\({kind}-n\\)"):
        apply(store, [{"op": op, "args": {**args, slot: wrong}}])
    assert snapshot(session_dir) == before
