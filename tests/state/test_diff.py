"""state.validation.diff: two plan revisions compared by meaning, item by item, by id."""

from __future__ import annotations

import copy
import difflib
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from state.validation.diff import Change, _code, diff, stale_overview
from tests.state import builders as b

Plan = dict[str, Any]


def old() -> Plan:
    return b.rich_plan()


def after(edit: Callable[[Plan], Any], before: Plan | None = None) -> Plan:
    new = copy.deepcopy(before or old())
    edit(new)
    b.filled("plan", new)
    return new


def summary(changes: list[Change]) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(c.kind, c.what, c.fields) for c in changes]


def ctx(plan: Plan) -> Plan:
    return plan["planning_context"]


def m1(plan: Plan) -> Plan:
    return plan["milestones"][0]


def test_the_same_plan_has_no_changes() -> None:
    assert diff(old(), old()) == []


ADDED = [
    ("DL-004", lambda p: ctx(p)["decision_log"].append(b.decision(4))),
    ("RA-002", lambda p: ctx(p)["rejected_alternatives"].append(b.alternative(2))),
    ("C-002", lambda p: ctx(p)["constraints"].append(b.constraint(2))),
    ("R-003", lambda p: ctx(p)["known_risks"].append(b.risk(3))),
    ("D-002", lambda p: ctx(p)["choices"].append(b.choice(2))),
    ("M-003", lambda p: p["milestones"].append(b.milestone(3))),
    ("CI-002", lambda p: m1(p)["code_intents"].append(b.intent(2))),
    ("CC-002", lambda p: m1(p)["code_changes"].append(b.change(2, "CI-001"))),
]


@pytest.mark.parametrize(("item_id", "edit"), ADDED, ids=[a[0] for a in ADDED])
def test_an_added_item(item_id: str, edit: Callable[[Plan], Any]) -> None:
    assert summary(diff(old(), after(edit))) == [("added", item_id, ())]


@pytest.mark.parametrize(("item_id", "edit"), ADDED, ids=[a[0] for a in ADDED])
def test_a_removed_item(item_id: str, edit: Callable[[Plan], Any]) -> None:
    assert summary(diff(after(edit), old())) == [("removed", item_id, ())]


def test_labels_say_what_the_item_is() -> None:
    changes = diff(old(), after(lambda p: ctx(p)["decision_log"].append(b.decision(4))))
    assert changes[0].label == "'Decision 4'"
    assert changes[0].line() == "+ DL-004 'Decision 4'"
    removed = diff(old(), after(lambda p: p["milestones"].pop()))
    assert [c.line() for c in removed] == ["- M-002 'Milestone 2'"]


def test_a_long_label_is_cut_to_its_first_line_and_60_characters() -> None:
    text = "x" * 80 + "\nsecond line"
    changes = diff(
        old(), after(lambda p: ctx(p)["decision_log"].append(b.decision(4, decision=text)))
    )
    assert changes[0].label == repr("x" * 57 + "...")


CHANGED = [
    ("DL-001", ("decision",), lambda p: ctx(p)["decision_log"][0].update(decision="Other")),
    (
        "DL-001",
        ("decision", "reasoning_chain"),
        lambda p: ctx(p)["decision_log"][0].update(decision="Other", reasoning_chain="new"),
    ),
    ("R-001", ("mitigation",), lambda p: ctx(p)["known_risks"][0].update(mitigation="more")),
    ("D-001", ("picked",), lambda p: ctx(p)["choices"][0].update(picked="OPT-B")),
    ("M-001", ("risk",), lambda p: m1(p).update(risk="high")),
    ("M-001", ("tests",), lambda p: m1(p)["tests"]["scenarios"]["edge"].append("huge")),
    ("M-002", ("depends_on",), lambda p: p["milestones"][1].update(depends_on=[])),
    ("CI-001", ("behavior",), lambda p: m1(p)["code_intents"][0].update(behavior="Other")),
    ("CC-001", ("diff",), lambda p: m1(p)["code_changes"][0].update(diff="+x\n")),
    (
        "CC-001",
        ("why_comments",),  # context_lines is bookkeeping: not a change in meaning
        lambda p: m1(p)["code_changes"][0].update(context_lines=5, why_comments=[]),
    ),
]


BOOKKEEPING_ONLY = [
    lambda p: ctx(p)["decision_log"][0].update(timestamp="2030-01-01T00:00:00Z"),
    lambda p: m1(p).update(number=9),
    lambda p: m1(p)["code_changes"][0].update(context_lines=7),
]


@pytest.mark.parametrize("edit", BOOKKEEPING_ONLY, ids=["timestamp", "number", "context_lines"])
def test_bookkeeping_alone_is_no_change(edit: Callable[[Plan], Any]) -> None:
    assert diff(old(), after(edit)) == []


def test_an_added_milestone_shows_what_it_says_not_its_bookkeeping_or_empty_records() -> None:
    [added] = diff(old(), after(lambda p: p["milestones"].append(b.milestone(3))))
    shown = "\n".join(added.detail())
    assert "name: 'Milestone 3'" in shown
    for noise in ("number", "documentation", "tests", "flags", "delegated_to", "false"):
        assert noise not in shown, noise
    assert "number" not in added.after


def test_a_changed_code_change_shows_how_its_code_changed_not_a_diff_of_two_diffs() -> None:
    was = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1,2 @@\n def greet():\n+    pass\n"
    now = was.replace("+    pass", "+    return 1")
    before = after(lambda p: m1(p)["code_changes"][0].update(diff=was))
    [change] = diff(before, after(lambda p: m1(p)["code_changes"][0].update(diff=now), before))
    code = ["…", " def greet():", "-    pass", "+    return 1"]
    assert change.detail() == ["    code (- before, + now):", *(f"      {t}" for t in code)]
    [added] = diff(old(), after(lambda p: m1(p)["code_changes"].append(b.change(2, "CI-001", now))))
    shown = added.detail()
    at = shown.index("    diff:")
    assert shown[at + 1 : at + 6] == [f"      {t}" for t in now.splitlines()]  # no "++" lines


def test_a_changed_list_shows_the_entries_it_lost_and_gained_not_both_lists_whole() -> None:
    def grow(p: Plan) -> None:
        m1(p)["acceptance_criteria"].append("farewell('') == 'bye '")
        m1(p)["tests"]["scenarios"]["edge"].append("empty name")

    [change] = diff(old(), after(grow))
    assert change.detail() == [
        "    acceptance_criteria: + \"farewell('') == 'bye '\"",
        "    tests.scenarios.edge: + 'empty name'",
    ]
    [moved] = diff(old(), after(lambda p: m1(p)["acceptance_criteria"].insert(0, "x")))
    assert moved.detail() == ["    acceptance_criteria: + 'x'"]


def test_a_long_text_shows_its_changed_words_in_context() -> None:
    was = "Read the file given as FILE, one ITEM: DEP line each, and print the sets in order"
    now = was.replace("FILE,", "FILE, or standard input,").replace(" in order", "")
    [shown] = diff(after(lambda p: m1(p).update(name=was)), after(lambda p: m1(p).update(name=now)))
    assert shown.detail() == [
        "    name: … file given as FILE, {+or standard input,+} one ITEM: DEP line each, and print"
        " the sets [-in order-]"
    ]


BASE = [f"line {n}" for n in range(1, 40)]


def _patch(lines: list[str], path: str = "src/app.py") -> str:
    got = difflib.unified_diff(
        [f"{t}\n" for t in BASE], [f"{t}\n" for t in lines], f"a/{path}", f"b/{path}"
    )
    return "".join(got)


@given(
    st.lists(st.tuples(st.integers(0, 38), st.sampled_from(["x", "y", None])), max_size=4),
    st.lists(st.tuples(st.integers(0, 38), st.sampled_from(["x", "y", None])), max_size=4),
)
def test_a_re_captured_diff_shows_exactly_the_code_that_changed(
    edits_a: list[tuple[int, str | None]], edits_b: list[tuple[int, str | None]]
) -> None:
    """Two diffs of one base file, each made by editing lines: what the person sees is the
    difference between the two files they leave, line for line, with the lines neither diff
    shows as …"""

    def edited(edits: list[tuple[int, str | None]]) -> list[str]:
        lines = list(BASE)
        for at, text in sorted(dict(edits).items(), reverse=True):
            if text is None:
                del lines[at : at + 1]
            else:
                lines[at] = f"{text} {at}"
        return lines

    one, two = edited(edits_a), edited(edits_b)
    shown = _code(_patch(one), _patch(two))
    if one == BASE or two == BASE:
        return  # a diff with no hunks: not a re-capture
    assert shown is not None
    removed = [t[1:] for t in shown if t[:1] == "-"]
    added = [t[1:] for t in shown if t[:1] == "+"]
    expected = list(difflib.unified_diff(one, two, lineterm="", n=0))[2:]
    assert removed == [t[1:] for t in expected if t[:1] == "-"]
    assert added == [t[1:] for t in expected if t[:1] == "+"]


@pytest.mark.parametrize(
    ("item_id", "fields", "edit"), CHANGED, ids=[f"{c[0]}-{'-'.join(c[1])}" for c in CHANGED]
)
def test_a_changed_item_names_its_fields(
    item_id: str, fields: tuple[str, ...], edit: Callable[[Plan], Any]
) -> None:
    assert summary(diff(old(), after(edit))) == [("changed", item_id, fields)]


def test_a_changed_line_shows_label_and_fields() -> None:
    [change] = diff(old(), after(lambda p: m1(p).update(name="Renamed", risk="high")))
    assert change.line() == "~ M-001 'Renamed' (name, risk)"
    assert change.as_dict() == {
        "kind": "changed",
        "what": "M-001",
        "fields": ["name", "risk"],
        "label": "'Renamed'",
        "before": {"name": "Milestone 1", "risk": "low"},
        "after": {"name": "Renamed", "risk": "high"},
    }
    assert change.detail() == [
        "    name: 'Milestone 1' -> 'Renamed'",
        "    risk: 'low' -> 'high'",
    ]


def test_an_added_item_shows_its_fields_and_a_removed_one_only_its_id() -> None:
    [added] = diff(old(), after(lambda p: ctx(p)["decision_log"].append(b.decision(4))))
    assert added.after["decision"] == "Decision 4"
    assert "id" not in added.after and added.before == {}
    assert "    decision: 'Decision 4'" in added.detail()
    assert not [t for t in added.detail() if t.startswith("    superseded_by")]  # empty: left out
    [removed] = diff(old(), after(lambda p: p["milestones"].pop()))
    assert removed.detail() == [] and removed.as_dict()["after"] == {}


def test_a_text_of_several_lines_shows_its_changed_lines_in_context() -> None:
    text = "first\nsecond\nthird\nfourth\nfifth"
    before = after(lambda p: p["overview"].update(approach=text))
    [change] = diff(
        before,
        after(lambda p: p["overview"].update(approach=text.replace("second", "2nd")), before),
    )
    assert change.detail() == [
        "    approach (- before, + now):",
        "      …",
        "       first",
        "      -second",
        "      +2nd",
        "       third",
    ]


def test_an_intent_added_to_a_milestone_does_not_change_the_milestone() -> None:
    new = after(lambda p: m1(p)["code_intents"].append(b.intent(2)))
    assert summary(diff(old(), new)) == [("added", "CI-002", ())]


def test_a_change_moved_to_another_intent_changes_its_intent_ref() -> None:
    def move(p: Plan) -> None:
        p["milestones"][1]["code_intents"].append(b.intent(2))
        moved = m1(p)["code_changes"].pop()
        moved["intent_ref"] = "CI-002"
        p["milestones"][1]["code_changes"].append(moved)

    assert summary(diff(old(), after(move))) == [
        ("added", "CI-002", ()),
        ("changed", "CC-001", ("intent_ref",)),
    ]


def test_a_superseded_decision() -> None:
    new = after(
        lambda p: ctx(p)["decision_log"][0].update(superseded_by="DL-003", superseded_reason="x")
    )
    [change] = diff(old(), new)
    assert (change.kind, change.what, change.label) == ("superseded", "DL-001", "by DL-003")
    assert change.line() == "^ DL-001 by DL-003"


def test_a_superseded_decision_that_also_changed() -> None:
    new = after(
        lambda p: ctx(p)["decision_log"][0].update(
            superseded_by="DL-003", superseded_reason="x", decision="Edited"
        )
    )
    assert summary(diff(old(), new)) == [
        ("superseded", "DL-001", ()),
        ("changed", "DL-001", ("decision",)),
    ]


def test_clearing_superseded_by_is_a_change() -> None:
    """DL-002 is superseded in the rich plan; taking that back is a plain change."""
    new = after(
        lambda p: ctx(p)["decision_log"][1].update(superseded_by=None, superseded_reason=None)
    )
    assert summary(diff(old(), new)) == [
        ("changed", "DL-002", ("superseded_by", "superseded_reason"))
    ]


def test_overview_changes_name_their_fields() -> None:
    new = after(lambda p: p["overview"].update(title="New", approach="Other"))
    assert summary(diff(old(), new)) == [("changed", "overview", ("title", "approach"))]
    assert diff(old(), new)[0].line() == "~ overview (title, approach)"


def test_invisible_knowledge_changes_name_their_fields() -> None:
    def edit(p: Plan) -> None:
        p["invisible_knowledge"]["invariants"].append("no globals")
        p["invisible_knowledge"]["architecture"]["diagram_ascii"] = "[a] -> [b] -> [c]"

    assert summary(diff(old(), after(edit))) == [
        ("changed", "invisible_knowledge", ("architecture", "invariants"))
    ]


def test_freezing_and_unfreezing() -> None:
    thawed = after(lambda p: p.update(frozen_at=None))
    [frozen] = diff(thawed, old())
    assert (frozen.kind, frozen.what, frozen.label) == ("changed", "frozen_at", b.LATER)
    [unfrozen] = diff(old(), thawed)
    assert (unfrozen.what, unfrozen.label) == ("frozen_at", "None")


def test_changes_come_in_a_stable_order() -> None:
    """Added and changed items in plan order, then removed ones, then sections, then frozen_at."""

    def edit(p: Plan) -> None:
        ctx(p)["decision_log"][0]["decision"] = "Edited"
        ctx(p)["constraints"].clear()
        p["milestones"].append(b.milestone(3))
        p["overview"]["title"] = "New"
        p["invisible_knowledge"]["tradeoffs"] = []
        p["frozen_at"] = None

    changes = diff(old(), after(edit))
    assert summary(changes) == [
        ("changed", "DL-001", ("decision",)),
        ("added", "M-003", ()),
        ("removed", "C-001", ()),
        ("changed", "overview", ("title",)),
        ("changed", "invisible_knowledge", ("tradeoffs",)),
        ("changed", "frozen_at", ()),
    ]
    assert diff(old(), after(edit)) is not changes  # a fresh list each time
    assert [c.as_dict() for c in diff(old(), after(edit))] == [c.as_dict() for c in changes]


def test_stale_overview_names_decisions_and_choices_changed_while_the_overview_was_not() -> None:
    changed = after(lambda p: ctx(p)["decision_log"].append(b.decision(4)))
    assert stale_overview(old(), changed) == ["DL-004"]
    picked = after(lambda p: ctx(p)["choices"][0].update(rationale="the person's"))
    assert stale_overview(old(), picked) == ["D-001"]
    both = after(lambda p: p["overview"].update(approach="another"), changed)
    assert stale_overview(old(), both) == []  # the overview was set too
    assert stale_overview(old(), after(lambda p: m1(p).update(name="N"))) == []
