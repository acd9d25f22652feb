"""state.validation.validate and .waves: integrity, completeness per phase, meaning, waves, scale.

Every finding names a JSON path, says what is wrong, and (for integrity and completeness)
carries the `plan` command that fixes it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from state.errors import Finding
from state.validation import validate
from state.validation.waves import compute_waves, diagram, find_cycle
from tests.cli import tree
from tests.plans import FAREWELL_DIFF
from tests.state import builders as b

Plan = dict[str, Any]


def base() -> Plan:
    """A plan where every kind of reference is used once, and every one resolves."""
    return b.plan(
        overview={"title": "Farewell", "problem": "No goodbye.", "approach": "Add farewell()."},
        decisions=[b.decision(1, question_refs=["Q-001"]), b.decision(2)],
        alternatives=[b.alternative(1, decision_ref="DL-001")],
        constraints=[b.constraint(1)],
        risks=[b.risk(1, decision_ref="DL-001")],
        choices=[b.choice(1, picked="OPT-A", decision_ref="DL-001")],
        milestones=[
            b.milestone(
                1,
                acceptance_criteria=["farewell('x') == 'bye x'"],
                code_intents=[b.intent(1, decision_refs=["DL-001"])],
                code_changes=[b.change(1, "CI-001", diff=FAREWELL_DIFF)],
                documentation={"module_comment": "greetings"},
            ),
            b.milestone(
                2,
                depends_on=["M-001"],
                is_documentation_only=True,
                documentation={"module_comment": "README"},
            ),
        ],
        milestone_dependencies={
            "waves": [{"wave": 1, "milestones": ["M-001"]}, {"wave": 2, "milestones": ["M-002"]}]
        },
    )


def changed(edit: Callable[[Plan], Any]) -> Plan:
    plan = base()
    edit(plan)
    return plan


def ctx(plan: Plan) -> Plan:
    return plan["planning_context"]


def m1(plan: Plan) -> Plan:
    return plan["milestones"][0]


def paths(findings: list[Finding]) -> list[str]:
    return [f.path for f in findings]


def assert_actionable(findings: list[Finding]) -> None:
    for finding in findings:
        assert finding.path, finding
        assert finding.message, finding
        assert finding.fix.startswith("plan "), finding


@pytest.fixture
def root(tmp_path: Path) -> str:
    """A project root holding the file the diffs change."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    return str(tmp_path)


def test_the_base_plan_is_valid_in_every_phase(root: str) -> None:
    plan = base()
    assert validate.integrity(plan, {"Q-001"}) == []
    assert validate.meaning(plan) == []
    for phase in validate.PHASES:
        assert validate.validate(plan, phase, root, {"Q-001"}) == []


# --- integrity: one test per reference kind --------------------------------

REFERENCES = [
    pytest.param(
        lambda p: m1(p)["code_changes"][0].update(intent_ref="CI-009"),
        "milestones[M-001].code_changes[CC-001].intent_ref",
        "intent CI-009",
        "plan change set CC-001 --intent",
        id="intent_ref",
    ),
    pytest.param(
        lambda p: m1(p)["code_intents"][0].update(decision_refs=["DL-001", "DL-009"]),
        "milestones[M-001].code_intents[CI-001].decision_refs",
        "decision DL-009",
        "plan intent set CI-001 --decision",
        id="intent-decision_refs",
    ),
    pytest.param(
        lambda p: ctx(p)["rejected_alternatives"][0].update(decision_ref="DL-009"),
        "planning_context.rejected_alternatives[RA-001].decision_ref",
        "decision DL-009",
        "plan alternative set RA-001 --decision",
        id="alternative-decision_ref",
    ),
    pytest.param(
        lambda p: ctx(p)["known_risks"][0].update(decision_ref="DL-009"),
        "planning_context.known_risks[R-001].decision_ref",
        "decision DL-009",
        "plan risk set R-001 --decision",
        id="risk-decision_ref",
    ),
    pytest.param(
        lambda p: ctx(p)["choices"][0].update(decision_ref="DL-009"),
        "planning_context.choices[D-001].decision_ref",
        "decision DL-009",
        "plan choice pick D-001",
        id="choice-decision_ref",
    ),
    pytest.param(
        lambda p: ctx(p)["choices"][0].update(picked="OPT-Z"),
        "planning_context.choices[D-001].picked",
        "option OPT-Z",
        "plan choice pick D-001",
        id="choice-picked",
    ),
    pytest.param(
        lambda p: p["milestones"][1].update(depends_on=["M-009"]),
        "milestones[M-002].depends_on",
        "milestone M-009",
        "plan milestone set M-002 --depends",
        id="depends_on",
    ),
    pytest.param(
        lambda p: ctx(p)["decision_log"][0].update(question_refs=["Q-009"]),
        "planning_context.decision_log[DL-001].question_refs",
        "question Q-009",
        "plan decision set DL-001 --question",
        id="question_refs",
    ),
    pytest.param(
        lambda p: ctx(p)["decision_log"][0].update(superseded_by="DL-009"),
        "planning_context.decision_log[DL-001].superseded_by",
        "decision DL-009",
        "plan decision supersede DL-001",
        id="superseded_by",
    ),
    pytest.param(
        lambda p: p["milestone_dependencies"]["waves"][1].update(milestones=["M-002", "M-009"]),
        "milestone_dependencies.waves[2]",
        "milestone M-009",
        "plan milestone set",
        id="waves",
    ),
]


@pytest.mark.parametrize(("edit", "path", "target", "fix"), REFERENCES)
def test_a_dangling_reference_is_found(
    edit: Callable[[Plan], Any], path: str, target: str, fix: str
) -> None:
    findings = validate.integrity(changed(edit), {"Q-001"})
    assert len(findings) == 1, findings
    [finding] = findings
    assert finding.path == path
    assert finding.message == f"refers to {target}, which does not exist"
    assert finding.fix.startswith(fix)
    assert_actionable(findings)


def test_question_refs_are_checked_only_when_question_ids_are_given() -> None:
    plan = changed(lambda p: ctx(p)["decision_log"][0].update(question_refs=["Q-009"]))
    assert validate.integrity(plan) == []
    assert paths(validate.integrity(plan, set())) == [
        "planning_context.decision_log[DL-001].question_refs"
    ]


def test_a_decision_superseded_by_an_existing_one_is_fine() -> None:
    plan = changed(lambda p: ctx(p)["decision_log"][0].update(superseded_by="DL-002"))
    assert validate.integrity(plan, {"Q-001"}) == []


DUPLICATES = [
    ("planning_context.decision_log", lambda p: ctx(p)["decision_log"].append(b.decision(1))),
    (
        "planning_context.rejected_alternatives",
        lambda p: ctx(p)["rejected_alternatives"].append(b.alternative(1)),
    ),
    ("planning_context.constraints", lambda p: ctx(p)["constraints"].append(b.constraint(1))),
    ("planning_context.known_risks", lambda p: ctx(p)["known_risks"].append(b.risk(1))),
    ("planning_context.choices", lambda p: ctx(p)["choices"].append(b.choice(1))),
    ("milestones", lambda p: p["milestones"].append(b.milestone(1))),
    # intents and changes are unique across milestones, not just within one
    ("code_intents", lambda p: p["milestones"][1]["code_intents"].append(b.intent(1))),
    ("code_changes", lambda p: p["milestones"][1]["code_changes"].append(b.change(1, "CI-001"))),
]


@pytest.mark.parametrize(("group", "edit"), DUPLICATES, ids=[d[0] for d in DUPLICATES])
def test_a_duplicate_id_is_found(group: str, edit: Callable[[Plan], Any]) -> None:
    plan = changed(edit)
    b.filled("plan", plan)  # the appended item gets its defaults, as on every write
    duplicates = [f for f in validate.integrity(plan, {"Q-001"}) if f.message == "duplicate id"]
    assert len(duplicates) == 1, duplicates
    assert duplicates[0].path.startswith(f"{group}[")
    # No `plan` command removes or renumbers an item, so there is no fix to offer (yet).
    assert duplicates[0].fix == ""


def test_a_dependency_cycle_is_found_and_shown() -> None:
    plan = b.plan(
        milestones=[
            b.milestone(1, depends_on=["M-003"]),
            b.milestone(2, depends_on=["M-001"]),
            b.milestone(3, depends_on=["M-002"]),
            b.milestone(4, depends_on=["M-001"]),
        ]
    )
    [finding] = validate.integrity(plan)
    assert finding.path == "milestones[M-001].depends_on"
    assert finding.message == "dependency cycle M-001 -> M-003 -> M-002 -> M-001"
    assert_actionable([finding])


def test_a_milestone_depending_on_itself_is_a_cycle() -> None:
    plan = b.plan(milestones=[b.milestone(1, depends_on=["M-001"])])
    messages = [f.message for f in validate.integrity(plan)]
    assert "dependency cycle M-001 -> M-001" in messages
    assert "M-001 refers to itself" in messages


# --- completeness per phase ----------------------------------------------------------------


def design_paths(plan: Plan, root: str) -> list[str]:
    findings = validate.completeness(plan, "design", root)
    assert_actionable(findings)
    return paths(findings)


@pytest.mark.parametrize("field", ["problem", "approach"])
@pytest.mark.parametrize("text", ["", "  \n"])
def test_design_needs_problem_and_approach(root: str, field: str, text: str) -> None:
    plan = changed(lambda p: p["overview"].update({field: text}))
    findings = validate.completeness(plan, "design", root)
    assert paths(findings) == [f"overview.{field}"]
    assert findings[0].fix == f"plan overview set --{field} TEXT"


def test_design_needs_a_milestone(root: str) -> None:
    plan = changed(lambda p: p.update(milestones=[]))
    assert design_paths(plan, root) == ["milestones"]


def test_design_needs_intents_and_acceptance_criteria(root: str) -> None:
    plan = changed(lambda p: m1(p).update(code_intents=[], code_changes=[]))
    assert design_paths(plan, root) == ["milestones[M-001].code_intents"]
    plan = changed(lambda p: m1(p).update(acceptance_criteria=[]))
    assert design_paths(plan, root) == ["milestones[M-001].acceptance_criteria"]


@pytest.mark.parametrize("behavior", ["", " \t"])
def test_design_needs_a_behaviour_for_every_intent(root: str, behavior: str) -> None:
    plan = changed(lambda p: m1(p)["code_intents"][0].update(behavior=behavior))
    assert design_paths(plan, root) == ["milestones[M-001].code_intents[CI-001].behavior"]


def test_a_documentation_only_milestone_needs_no_intents_or_criteria(root: str) -> None:
    plan = base()
    doc_only = plan["milestones"][1]
    assert doc_only["code_intents"] == [] and doc_only["acceptance_criteria"] == []
    assert design_paths(plan, root) == []
    doc_only["code_intents"] = [b.intent(5, behavior="")]  # not even an empty behaviour counts
    b.filled("plan", plan)
    assert design_paths(plan, root) == []


def test_code_needs_a_change_for_every_intent(root: str) -> None:
    plan = changed(lambda p: m1(p).update(code_changes=[]))
    findings = validate.completeness(plan, "code", root)
    assert paths(findings) == ["milestones[M-001].code_intents[CI-001]"]
    assert findings[0].message == "no code change"
    assert findings[0].fix == "plan change capture --intent CI-001 src/app.py"


def test_code_does_not_ask_changes_of_a_documentation_only_milestone(root: str) -> None:
    plan = base()
    plan["milestones"][1]["code_intents"] = [b.intent(5)]
    b.filled("plan", plan)
    assert validate.completeness(plan, "code", root) == []


def test_code_accepts_a_diff_that_applies(root: str) -> None:
    assert validate.completeness(base(), "code", root) == []


BROKEN_DIFFS = [
    pytest.param(FAREWELL_DIFF.replace(" def greet(name):", " def hello(name):"), id="context"),
    pytest.param(FAREWELL_DIFF.replace("src/app.py", "src/other.py"), id="other-file"),
    pytest.param("not a diff at all\n", id="garbage"),
    pytest.param(FAREWELL_DIFF.replace("src/app.py", "../app.py"), id="outside-root"),
]


@pytest.mark.parametrize("diff", BROKEN_DIFFS)
def test_code_reports_a_diff_that_does_not_apply(root: str, diff: str) -> None:
    before = Path(root, "src", "app.py").read_bytes()
    plan = changed(lambda p: m1(p)["code_changes"][0].update(diff=diff))
    findings = validate.completeness(plan, "code", root)
    assert findings, diff
    assert set(paths(findings)) == {"milestones[M-001].code_changes[CC-001].diff"}
    assert all(f.fix == "plan change capture --intent CI-001 src/app.py" for f in findings)
    assert Path(root, "src", "app.py").read_bytes() == before  # checking never writes


def test_docs_needs_documentation_for_every_milestone(root: str) -> None:
    plan = base()
    plan["milestones"][1]["documentation"] = {
        "module_comment": None,
        "docstrings": [],
        "algorithm_blocks": [],
        "inline_comments": [],
    }
    findings = validate.completeness(plan, "docs", root)
    assert paths(findings) == ["milestones[M-002].documentation"]
    assert_actionable(findings)


@pytest.mark.parametrize(
    "kind", ["module_comment", "docstrings", "algorithm_blocks", "inline_comments"]
)
def test_any_kind_of_documentation_is_enough(root: str, kind: str) -> None:
    plan = base()
    value = "text" if kind == "module_comment" else ["text"]
    plan["milestones"][1]["documentation"] = {
        "module_comment": None,
        "docstrings": [],
        "algorithm_blocks": [],
        "inline_comments": [],
        kind: value,
    }
    assert validate.completeness(plan, "docs", root) == []


def test_phases_are_cumulative(root: str) -> None:
    plan = base()
    plan["overview"]["problem"] = ""  # design
    m1(plan)["code_intents"].append(b.intent(2))  # code: no change for CI-002
    plan["milestones"][1]["documentation"]["module_comment"] = None  # docs
    b.filled("plan", plan)
    design = ["overview.problem"]
    code = ["milestones[M-001].code_intents[CI-002]"]
    docs = ["milestones[M-002].documentation"]
    assert paths(validate.completeness(plan, "design", root)) == design
    assert paths(validate.completeness(plan, "code", root)) == design + code
    assert paths(validate.completeness(plan, "docs", root)) == design + code + docs
    assert paths(validate.completeness(plan, "final", root)) == design + code + docs


# --- meaning -------------------------------------------------------------------------------

PLACES = [
    ("overview.title", lambda p, t: p["overview"].update(title=t)),
    (
        "planning_context.decision_log[DL-001].reasoning_chain",
        lambda p, t: ctx(p)["decision_log"][0].update(reasoning_chain=t),
    ),
    (
        "planning_context.choices[D-001].options[OPT-B].description",
        lambda p, t: ctx(p)["choices"][0]["options"][1].update(description=t),
    ),
    ("milestones[M-001].requirements[0]", lambda p, t: m1(p).update(requirements=[t])),
    (
        "milestones[M-001].code_intents[CI-001].behavior",
        lambda p, t: m1(p)["code_intents"][0].update(behavior=t),
    ),
    (
        "milestones[M-001].code_intents[CI-001].params.name",
        lambda p, t: m1(p)["code_intents"][0].update(params={"name": t}),
    ),
    (
        "milestones[M-001].tests.scenarios.edge[0]",
        lambda p, t: m1(p)["tests"]["scenarios"].update(edge=[t]),
    ),
    (
        "invisible_knowledge.invariants[0]",
        lambda p, t: p["invisible_knowledge"]["invariants"].append(t),
    ),
]


@pytest.mark.parametrize(
    "text", ["TBD", "fill in TODO later", "who knows ???", "(TODO)", "FIXME: say", "TODO."]
)
@pytest.mark.parametrize(("path", "put"), PLACES, ids=[p[0] for p in PLACES])
def test_a_placeholder_in_any_text_is_found(
    text: str, path: str, put: Callable[[Plan, str], Any]
) -> None:
    plan = base()
    put(plan, text)
    [finding] = validate.meaning(plan)
    assert finding.path == path
    word = next(w for w in ("TBD", "TODO", "FIXME", "???") if w in text)
    assert finding.message.startswith(f"placeholder {word!r} left in ")
    assert finding.fix


@pytest.mark.parametrize("text", ["MASTODON", "todo", "TBDs", "a question?", "??"])
def test_words_that_only_contain_a_placeholder_are_fine(text: str) -> None:
    plan = changed(lambda p: p["overview"].update(title=text))
    assert validate.meaning(plan) == []


def with_diff(*body: str) -> Plan:
    diff = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n" + "".join(
        line + "\n" for line in body
    )
    return changed(lambda p: m1(p)["code_changes"][0].update(diff=diff))


@pytest.mark.parametrize(
    "body",
    [
        (" def greet(name):", "+    # TODO: say bye", "     return 'hi ' + name"),
        (" # TODO: context line", "-x", "+y"),
        ("-# TODO: removed line", "+fixed"),
        (" ???", "-TBD", "+done"),
    ],
    ids=["added", "context", "removed", "both"],
)
def test_diffs_are_code_not_prose_and_are_not_searched(body: tuple[str, ...]) -> None:
    # Code may well say TODO (a parser of TODO comments, a TODO.txt reader): issue 12.
    assert validate.meaning(with_diff(*body)) == []


@pytest.mark.parametrize(
    "text",
    ["read TODO.txt at start", "see docs/TODO and TODO.md", "src/TBD-notes.md", "a FIXME_ID"],
)
def test_paths_named_like_placeholders_are_fine(text: str) -> None:
    plan = changed(lambda p: p["overview"].update(title=text))
    assert validate.meaning(plan) == []


def test_file_lists_are_paths_not_prose() -> None:
    plan = changed(lambda p: m1(p).update(files=["src/app.py", "TODO.txt", "TODO"]))
    assert validate.meaning(plan) == []


def test_a_placeholder_in_a_diff_header_is_fine() -> None:
    plan = changed(
        lambda p: m1(p)["code_changes"][0].update(
            diff="--- a/TODO.md\n+++ b/TODO.md\n@@ -1 +1 @@\n-a\n+b\n"
        )
    )
    assert validate.meaning(plan) == []


def test_ids_and_timestamps_are_not_text() -> None:
    plan = changed(lambda p: p.update(plan_id="TODO"))
    assert validate.meaning(plan) == []


@pytest.mark.parametrize(
    ("group", "field"),
    [
        ("decision_log", "decision"),
        ("decision_log", "reasoning_chain"),
        ("rejected_alternatives", "alternative"),
        ("rejected_alternatives", "rejection_reason"),
        ("constraints", "description"),
        ("known_risks", "risk"),
        ("choices", "topic"),
    ],
)
def test_empty_text_is_found(group: str, field: str) -> None:
    plan = base()
    item = ctx(plan)[group][0]
    item[field] = "  "
    [finding] = validate.meaning(plan)
    assert finding.path == f"planning_context.{group}[{item['id']}].{field}"
    assert finding.message == "empty text"


def test_an_empty_milestone_name_is_found() -> None:
    plan = changed(lambda p: m1(p).update(name=""))
    [finding] = validate.meaning(plan)
    assert (finding.path, finding.message) == ("milestones[M-001].name", "empty text")
    assert_actionable([finding])


def test_a_risk_without_mitigation_is_found() -> None:
    plan = changed(lambda p: ctx(p)["known_risks"][0].update(mitigation=" "))
    [finding] = validate.meaning(plan)
    assert finding.path == "planning_context.known_risks[R-001].mitigation"
    assert finding.message == "risk without mitigation"
    assert finding.fix == "plan risk set R-001 --mitigation M"


def test_validate_combines_integrity_meaning_and_the_phase(root: str) -> None:
    plan = base()
    ctx(plan)["known_risks"][0]["decision_ref"] = "DL-009"  # integrity
    plan["overview"]["title"] = "TBD"  # meaning
    plan["overview"]["problem"] = ""  # design completeness
    assert paths(validate.validate(plan, "design", root, {"Q-001"})) == [
        "planning_context.known_risks[R-001].decision_ref",
        "overview.title",
        "overview.problem",
    ]
    assert paths(validate.validate(plan, None, root, {"Q-001"})) == [
        "planning_context.known_risks[R-001].decision_ref",
        "overview.title",
    ]


def test_fix_commands_name_real_operations(root: str) -> None:
    """Every fix of a very broken plan starts with a `plan` command that exists."""
    plan = base()
    for edit, *_ in (r.values for r in REFERENCES):
        edit(plan)
    plan["overview"]["problem"] = ""
    m1(plan)["acceptance_criteria"] = []
    m1(plan)["code_intents"].append(b.intent(2, behavior=""))
    plan["milestones"][1]["documentation"]["module_comment"] = None
    ctx(plan)["known_risks"][0]["mitigation"] = ""
    m1(plan)["name"] = ""
    b.filled("plan", plan)
    findings = validate.validate(plan, "final", root, set())
    known = set(tree.commands())
    for finding in findings:
        if not finding.fix.startswith("plan "):
            continue
        words = finding.fix.split()[1:3]
        assert " ".join(words) in known or words[0] in known, finding


# --- milestones of one wave that change one file (a warning) -------------------------------


def second_milestone(**fields: Any) -> Plan:
    """M-001 changes src/app.py by a diff; M-002 has `fields` (and no intent unless given)."""
    first = b.milestone(
        1,
        code_intents=[b.intent(1)],
        code_changes=[b.change(1, "CI-001", diff=FAREWELL_DIFF)],
    )
    return b.plan(milestones=[first, b.milestone(2, **fields)])


@pytest.mark.parametrize(
    "fields",
    [
        {"files": ["src/app.py"]},
        {"code_intents": [b.intent(2, file="src/app.py")]},
        {
            "code_intents": [b.intent(2, file="src/other.py")],
            "code_changes": [b.change(2, "CI-002", file="src/app.py")],
        },
    ],
    ids=["named", "intended", "diffed"],
)
def test_two_milestones_of_one_wave_changing_one_file_are_a_warning(
    fields: dict[str, Any],
) -> None:
    [found] = validate.same_file_same_wave(second_milestone(**fields))
    assert (found.path, found.level, found.rule) == (
        "milestones[M-002].depends_on",
        "warning",
        "same-file-same-wave",
    )
    assert found.message.startswith("M-001 and M-002 both change src/app.py in wave 1:")
    assert found.fix == "plan milestone set M-002 --depends M-001"
    assert " ".join(found.fix.split()[1:3]) in set(tree.commands())


@pytest.mark.parametrize(
    "fields",
    [
        {"files": ["src/app.py"], "depends_on": ["M-001"]},  # the next wave: after M-001
        {"files": ["src/other.py"]},
        {"files": ["README.md"], "tests": {"files": ["src/app.py"]}},  # a test it only runs
    ],
    ids=["depends", "other-file", "test-file"],
)
def test_no_warning_without_a_file_changed_twice_in_one_wave(fields: dict[str, Any]) -> None:
    assert validate.same_file_same_wave(second_milestone(**fields)) == []


BOTH = "both change README.md, src/app.py in wave 1"


def test_each_milestone_is_named_with_the_one_before_it_on_the_file() -> None:
    """Three on the same files: two findings whose fixes chain them, with every file both
    change; a fourth on one of them is named with the third."""
    plan = second_milestone(files=["src/app.py", "README.md"])
    plan["milestones"][0]["files"] = ["README.md"]
    plan["milestones"].append(b.milestone(3, files=["README.md", "src/app.py"]))
    plan["milestones"].append(b.milestone(4, files=["README.md", "src/four.py"]))
    found = validate.same_file_same_wave(b.filled("plan", plan))
    assert [(f.path, f.message.split(":")[0]) for f in found] == [
        ("milestones[M-002].depends_on", f"M-001 and M-002 {BOTH}"),
        ("milestones[M-003].depends_on", f"M-002 and M-003 {BOTH}"),
        ("milestones[M-004].depends_on", "M-003 and M-004 both change README.md in wave 1"),
    ]
    for finding in found:  # the fixes applied: one chain, no warning left
        later, first = finding.fix.split()[3], finding.fix.split()[-1]
        next(m for m in plan["milestones"] if m["id"] == later)["depends_on"] = [first]
    assert validate.same_file_same_wave(plan) == []
    # plan validate warns; the planner's gates, which block on what validate() finds, do not
    assert not [f for f in validate.validate(plan, None, ".") if f.rule == "same-file-same-wave"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sets(st.sampled_from("abc")), st.sets(st.integers(0, 7), max_size=2)),
        min_size=1,
        max_size=8,
    )
)
def test_the_fixes_leave_no_two_milestones_of_a_wave_on_one_file(
    shape: list[tuple[set[str], set[int]]],
) -> None:
    """Any milestones on files a, b, c, each depending on some earlier ones: every warning names
    two of one wave that share the files it lists, at most one per milestone and earlier one;
    applying them round after round leaves none (each moves a milestone to a later wave)."""
    milestones = [
        {"id": f"M-{n:03d}", "files": sorted(files), "code_intents": [], "code_changes": [],
         "depends_on": [f"M-{d + 1:03d}" for d in sorted(deps) if d < n - 1]}
        for n, (files, deps) in enumerate(shape, 1)
    ]  # fmt: skip
    plan = {"milestones": milestones}
    by_id = {m["id"]: m for m in milestones}
    for _ in range(len(milestones) ** 2):
        found = validate.same_file_same_wave(plan)
        if not found:
            break
        wave_of = {mid: w["wave"] for w in compute_waves(milestones) for mid in w["milestones"]}
        pairs = [(f.fix.split()[-1], f.fix.split()[3]) for f in found]
        assert len(set(pairs)) == len(pairs)
        for finding, (first, later) in zip(found, pairs, strict=True):
            assert wave_of[first] == wave_of[later]
            both = finding.message.split(" both change ")[1].split(" in wave ")[0].split(", ")
            assert set(both) <= set(by_id[first]["files"]) & set(by_id[later]["files"])
            by_id[later]["depends_on"].append(first)
    assert validate.same_file_same_wave(plan) == []


# --- waves ---------------------------------------------------------------------------------


def ms(*deps: tuple[str, ...]) -> list[dict[str, Any]]:
    """Milestones M-001, M-002, … where the n-th depends on deps[n]."""
    return [{"id": f"M-{n:03d}", "depends_on": list(d)} for n, d in enumerate(deps, 1)]


def layers(milestones: list[dict[str, Any]]) -> list[list[str]]:
    waves = compute_waves(milestones)
    assert [w["wave"] for w in waves] == list(range(1, len(waves) + 1))
    return [w["milestones"] for w in waves]


def test_waves_of_a_chain() -> None:
    assert layers(ms((), ("M-001",), ("M-002",))) == [["M-001"], ["M-002"], ["M-003"]]


def test_waves_of_a_diamond() -> None:
    diamond = ms((), ("M-001",), ("M-001",), ("M-002", "M-003"))
    assert layers(diamond) == [["M-001"], ["M-002", "M-003"], ["M-004"]]


def test_waves_of_independent_milestones_keep_plan_order() -> None:
    milestones = ms((), (), ())
    milestones.reverse()
    assert layers(milestones) == [["M-003", "M-002", "M-001"]]


def test_waves_within_a_wave_keep_plan_order() -> None:
    milestones = [
        {"id": "M-001", "depends_on": []},
        {"id": "M-003", "depends_on": ["M-001"]},
        {"id": "M-002", "depends_on": ["M-001"]},
    ]
    assert layers(milestones) == [["M-001"], ["M-003", "M-002"]]


def test_waves_ignore_unknown_dependencies() -> None:
    assert layers(ms((), ("M-009",), ("M-002", "M-042"))) == [["M-001", "M-002"], ["M-003"]]


def test_waves_leave_out_milestones_in_a_cycle_and_after_it() -> None:
    milestones = ms((), ("M-003",), ("M-002",), ("M-002",))
    assert layers(milestones) == [["M-001"]]


def test_waves_of_nothing() -> None:
    assert compute_waves([]) == []


def test_diagram_shows_each_wave_and_what_it_waits_for() -> None:
    milestones = ms((), (), ("M-001", "M-002"))
    assert diagram(compute_waves(milestones), milestones) == (
        "wave 1: M-001 | M-002\nwave 2: M-003 (after M-001, M-002)"
    )


@pytest.mark.parametrize(
    ("depends", "cycle"),
    [
        ({}, []),
        ({"a": []}, []),
        ({"a": ["a"]}, ["a", "a"]),
        ({"a": ["b"], "b": ["a"]}, ["a", "b", "a"]),
        ({"a": ["b"], "b": ["c"], "c": ["d"], "d": ["b"]}, ["b", "c", "d", "b"]),
        ({"a": ["b", "c"], "b": ["d"], "c": ["d"], "d": []}, []),  # a diamond is no cycle
        ({"a": ["zzz"], "b": ["a"]}, []),  # unknown nodes end a path
        ({"x": [], "y": ["x"], "z": ["z"]}, ["z", "z"]),
    ],
)
def test_find_cycle(depends: dict[str, list[str]], cycle: list[str]) -> None:
    assert find_cycle(depends) == cycle


def test_find_cycle_on_a_long_chain_does_not_recurse() -> None:
    n = 5000
    depends = {f"m{i}": [f"m{i + 1}"] for i in range(n)}
    assert find_cycle(depends) == []
    depends[f"m{n}"] = ["m0"]
    cycle = find_cycle(depends)
    assert cycle[0] == cycle[-1] == "m0" and len(cycle) == n + 2


# --- scale ---------------------------------------------------------------------------------


def test_a_big_plan_validates(root: str) -> None:
    """1,000 milestones, 10,000 intents each with a change: correctness only, never time."""
    decisions = [b.decision(n) for n in range(1, 51)]
    milestones = []
    for n in range(1, 1001):
        first = (n - 1) * 10 + 1
        milestones.append(
            b.milestone(
                n,
                depends_on=[f"M-{n - 1:03d}"] if n > 1 else [],
                acceptance_criteria=[f"criterion {n}"],
                code_intents=[
                    b.intent(i, decision_refs=[f"DL-{i % 50 + 1:03d}"])
                    for i in range(first, first + 10)
                ],
                code_changes=[b.change(i, f"CI-{i:03d}") for i in range(first, first + 10)],
            )
        )
    plan = b.plan(
        overview={"title": "Big", "problem": "Much to do.", "approach": "One step at a time."},
        decisions=decisions,
        milestones=milestones,
    )
    plan["milestone_dependencies"]["waves"] = compute_waves(plan["milestones"])
    assert len(plan["milestone_dependencies"]["waves"]) == 1000
    assert validate.validate(plan, "design", root) == []
    assert validate.same_file_same_wave(plan) == []  # all change src/app.py, one a wave
    # one broken reference deep inside is still found
    broken = copy.deepcopy(plan)
    broken["milestones"][999]["code_changes"][9]["intent_ref"] = "CI-99999"
    assert paths(validate.integrity(broken)) == [
        "milestones[M-1000].code_changes[CC-10000].intent_ref"
    ]


# --- integrity after a change to a sound plan: only what changed is walked (issue 32) -------

ids = st.integers(1, 4)


@st.composite
def sound_plans(draw: st.DrawFn) -> Plan:
    """A plan of every kind of reference, drawn among existing ids (sound, mostly)."""
    dl = [f"DL-{n:03d}" for n in range(1, draw(st.integers(0, 4)) + 1)]
    known = st.sampled_from(dl) if dl else st.nothing()
    questions = st.lists(st.sampled_from(["Q-001", "Q-002"]), max_size=1)
    ref = st.one_of(st.none(), known)
    intents, milestones = 0, []
    for m in range(1, draw(st.integers(0, 4)) + 1):
        refs = st.lists(known, max_size=2 if dl else 0)
        mine = [b.intent(intents + i, decision_refs=draw(refs)) for i in range(1, draw(ids))]
        intents += len(mine)
        earlier = [f"M-{e:03d}" for e in range(1, m)]
        changes = [b.change(10 * m + n, i["id"], shared_intents=[]) for n, i in enumerate(mine)]
        depends = draw(st.lists(st.sampled_from(earlier or [""]), max_size=2 if earlier else 0))
        milestones.append(
            b.milestone(m, code_intents=mine, code_changes=changes, depends_on=depends)
        )
    waves = [{"wave": 1, "milestones": [m["id"] for m in milestones]}] if milestones else []
    return b.plan(
        decisions=[
            b.decision(int(d[3:]), superseded_by=draw(ref), question_refs=draw(questions))
            for d in dl
        ],
        alternatives=[b.alternative(n, decision_ref=draw(known)) for n in range(len(dl))],
        risks=[b.risk(n, decision_ref=draw(ref)) for n in range(draw(ids))],
        choices=[b.choice(1, picked=draw(st.sampled_from([None, "OPT-A", "OPT-Z"])))],
        milestones=milestones,
        milestone_dependencies={"waves": waves},
    )


def one_op(plan: Plan, draw: st.DrawFn) -> None:
    """One change a command or a hand could make: refs added, removed, dangling; ids added,
    removed, renamed, duplicated; dependencies and waves changed."""
    log = plan["planning_context"]["decision_log"]
    some = st.sampled_from(["DL-001", "DL-002", "DL-009", "M-001", "M-002", "M-009", "CI-001"])
    intents = [i for m in plan["milestones"] for i in m["code_intents"]]
    choices = ["add decision", "risk ref", "supersede", "intent ref", "depends", "wave"]
    choices += ["remove decision", "rename decision"] if log else []
    choices += ["remove milestone", "remove intent"] if intents else []
    op = draw(st.sampled_from(choices))
    if op == "add decision":
        log.append(b.decision(draw(st.integers(1, 9)), superseded_by=None, question_refs=[]))
    elif op == "remove decision":
        log.pop(draw(st.integers(0, len(log) - 1)))
    elif op == "rename decision":
        log[draw(st.integers(0, len(log) - 1))]["id"] = draw(some)
    elif op == "risk ref":
        plan["planning_context"]["known_risks"].append(b.risk(9, decision_ref=draw(some)))
    elif op == "supersede" and log:
        log[0]["superseded_by"] = draw(st.one_of(st.none(), some))
    elif op == "intent ref" and intents:
        intents[0]["decision_refs"].append(draw(some))
    elif op == "depends" and plan["milestones"]:
        plan["milestones"][0]["depends_on"].append(draw(some))
    elif op == "wave":
        plan["milestone_dependencies"]["waves"].append({"wave": 9, "milestones": [draw(some)]})
    elif op == "remove milestone":
        plan["milestones"].pop(0)
    elif op == "remove intent":
        next(m for m in plan["milestones"] if m["code_intents"])["code_intents"].pop()


@settings(max_examples=500, deadline=None)
@given(sound_plans(), st.data(), st.sampled_from([None, set(), {"Q-001"}]))
def test_integrity_after_a_change_to_a_sound_plan_is_the_whole_checks(
    before: Plan, data: st.DataObject, questions: set[str] | None
) -> None:
    """What validate.integrity finds walking only the planning context, when the change left
    the milestones and waves alone and removed no decision, is what the whole walk finds."""
    if validate.integrity(before, questions):  # not sound: a commit would have refused it
        return
    after = copy.deepcopy(before)
    for _ in range(data.draw(st.integers(1, 2))):
        one_op(after, data.draw)
    touched = {k: v for k, v in before.items() if after[k] != v}  # as Encoded.old has them
    whole = validate.integrity(after, questions)
    assert validate.integrity(after, questions, touched) == whole
