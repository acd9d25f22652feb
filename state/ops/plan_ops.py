"""Operations on plan.json content: overview, decisions, risks, milestones, intents, changes, docs.

Set-operations change only what is given; a repeatable option given replaces its list.

Each operation is a function (tx, a): the open transaction and the arguments by name
(repeatable ones as lists); it returns the ids it created. cli/commands/ declares the
arguments; state/ parses none.
"""

from __future__ import annotations

from state import clock
from state.errors import UsageError
from state.storage import schema
from state.storage.store import Transaction
from state.validation import waves

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_GROUPS = {
    "DL": ("planning_context", "decision_log"),
    "RA": ("planning_context", "rejected_alternatives"),
    "C": ("planning_context", "constraints"),
    "R": ("planning_context", "known_risks"),
    "D": ("planning_context", "choices"),
}


def new(definition: str, **fields: Any) -> dict[str, Any]:
    """A plan item with the schema's defaults and the given fields."""
    return {**schema.defaults("plan", definition), **fields}


KINDS = {
    "DL": "decision",
    "RA": "rejected alternative",
    "C": "constraint",
    "R": "risk",
    "D": "design choice",
    "M": "milestone",
    "CI": "code intent",
    "CC": "code change",
}


def find(plan: dict[str, Any], item_id: str, kind: str = "") -> dict[str, Any]:
    """The plan item with this id, or UsageError naming it; with `kind` (an id prefix such
    as "M") an id of another kind is refused too, before anything reads its fields."""
    prefix = item_id.split("-", 1)[0]
    if kind and prefix != kind:
        raise UsageError(f"{item_id}: not a {KINDS[kind]} id ({kind}-n)")
    if prefix in _GROUPS:
        section, group = _GROUPS[prefix]
        items: list[dict[str, Any]] = plan[section][group]
    elif prefix == "M":
        items = plan["milestones"]
    elif prefix == "CI":
        items = [i for m in plan["milestones"] for i in m["code_intents"]]
    elif prefix == "CC":
        items = [c for m in plan["milestones"] for c in m["code_changes"]]
    else:
        raise UsageError(f"{item_id}: not a plan id (DL-, RA-, C-, R-, D-, M-, CI-, CC-)")
    for item in items:
        if item["id"] == item_id:
            return item
    raise UsageError(f"plan.json: no {item_id}")


def owner(plan: dict[str, Any], item_id: str) -> dict[str, Any]:
    """The milestone holding intent or change `item_id`."""
    key = "code_intents" if item_id.startswith("CI-") else "code_changes"
    milestones: list[dict[str, Any]] = plan["milestones"]
    for m in milestones:
        if any(i["id"] == item_id for i in m[key]):
            return m
    raise UsageError(f"plan.json: no {item_id}")


def update(item: dict[str, Any], args: dict[str, Any], fields: dict[str, str]) -> bool:
    """Copy given args onto item fields ({arg: field}); True when anything was given.

    A list given only as empty strings (`--depends ''`) clears the field.
    """
    given = False
    for arg, field in fields.items():
        value = args[arg]
        if value is None or value == []:
            continue
        item[field] = [v for v in value if v != ""] if isinstance(value, list) else value
        given = True
    return given


def check_files(tx: Transaction, option: str, paths: list[str] | str | None) -> None:
    """Paths given for the plan stay in the project, out of .git/ and .planner/ (exit 2)."""
    from state.validation.project_paths import check_project_path, recorded_project

    project = recorded_project(tx.store.dir)
    for path in [paths] if isinstance(paths, str) else paths or []:
        if path:
            check_project_path(project, path, option, UsageError)


def require_some(given: bool, name: str) -> None:
    if not given:
        raise UsageError(f"{name}: give at least one option to change")


def _context(tx: Transaction) -> dict[str, Any]:
    context: dict[str, Any] = tx.edit("plan")["planning_context"]
    return context


def overview_set(
    tx: Transaction, *, title: str | None, problem: str | None, approach: str | None
) -> None:
    """Set the plan's title, problem and approach."""
    overview = tx.edit("plan")["overview"]
    given = {"title": title, "problem": problem, "approach": approach}
    require_some(update(overview, given, {k: k for k in given}), "overview set")


DECISION_FIELDS = {
    "decision": "decision",
    "reasoning": "reasoning_chain",
    "question": "question_refs",
}


def decision_add(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Record a decision (DL-NNN) with its chain of reasoning."""
    log = _context(tx)["decision_log"]
    item = new(
        "Decision",
        id=tx.new_id("plan", "DL", log),
        decision=a["decision"],
        reasoning_chain=a["reasoning"],
        timestamp=clock.now(),
        question_refs=a["question"],
    )
    log.append(item)
    return [item["id"]]


def decision_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Change a decision's text, reasoning or cited questions."""
    require_some(update(find(tx.edit("plan"), a["id"], "DL"), a, DECISION_FIELDS), "decision set")


def decision_supersede(tx: Transaction, a: dict[str, Any]) -> None:
    """Mark a decision superseded by a later one; both stay on record."""
    plan = tx.edit("plan")
    old, new_one = find(plan, a["id"], "DL"), find(plan, a["by"], "DL")
    if old is new_one:
        raise UsageError(f"decision supersede: {a['id']} cannot supersede itself")
    known = {d["id"] for d in plan["planning_context"]["decision_log"]}
    if old["superseded_by"] in known:  # a dangling superseded_by may be pointed elsewhere
        raise UsageError(
            f"decision supersede: {a['id']} is already superseded by {old['superseded_by']}"
        )
    old["superseded_by"], old["superseded_reason"] = new_one["id"], a["reason"]


def alternative_add(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Record an alternative that was rejected, and the decision that rejected it."""
    items = _context(tx)["rejected_alternatives"]
    item = new(
        "RejectedAlternative",
        id=tx.new_id("plan", "RA", items),
        alternative=a["alternative"],
        rejection_reason=a["reason"],
        decision_ref=a["decision"],
    )
    items.append(item)
    return [item["id"]]


def alternative_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Change a rejected alternative, its reason or the decision that rejected it."""
    fields = {
        "alternative": "alternative",
        "reason": "rejection_reason",
        "decision": "decision_ref",
    }
    require_some(update(find(tx.edit("plan"), a["id"], "RA"), a, fields), "alternative set")


def constraint_add(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Record a constraint the plan must respect."""
    items = _context(tx)["constraints"]
    item = new(
        "Constraint",
        id=tx.new_id("plan", "C", items),
        type=a["type"],
        description=a["description"],
        source=a["source"] or "",
    )
    items.append(item)
    return [item["id"]]


def constraint_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Change a constraint's type, description or source."""
    fields = {k: k for k in ("type", "description", "source")}
    require_some(update(find(tx.edit("plan"), a["id"], "C"), a, fields), "constraint set")


RISK_FIELDS = {
    "risk": "risk",
    "mitigation": "mitigation",
    "anchor": "anchor",
    "decision": "decision_ref",
}


def risk_add(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Record a known risk and how it is mitigated."""
    items = _context(tx)["known_risks"]
    item = new("Risk", id=tx.new_id("plan", "R", items))
    update(item, a, RISK_FIELDS)
    items.append(item)
    return [item["id"]]


def risk_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Change a risk, its mitigation, anchor or decision."""
    require_some(update(find(tx.edit("plan"), a["id"], "R"), a, RISK_FIELDS), "risk set")


def knowledge_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Set the architecture and data-flow diagrams and descriptions, and the structure rationale."""
    ik = tx.edit("plan")["invisible_knowledge"]
    given = update(
        ik["architecture"],
        a,
        {"architecture_diagram": "diagram_ascii", "architecture": "description"},
    )
    given |= update(
        ik["data_flow"], a, {"data_flow_diagram": "diagram_ascii", "data_flow": "description"}
    )
    given |= update(ik, a, {"structure_rationale": "structure_rationale"})
    require_some(given, "knowledge set")


def invariant_add(tx: Transaction, a: dict[str, Any]) -> None:
    """Add an invariant the code must keep."""
    tx.edit("plan")["invisible_knowledge"]["invariants"].append(a["text"])


def tradeoff_add(tx: Transaction, a: dict[str, Any]) -> None:
    """Add a tradeoff the design accepts."""
    tx.edit("plan")["invisible_knowledge"]["tradeoffs"].append(a["text"])


MILESTONE_FIELDS = {
    "name": "name",
    "file": "files",
    "requirement": "requirements",
    "acceptance": "acceptance_criteria",
    "risk": "risk",
    "depends": "depends_on",
    "doc_only": "is_documentation_only",
    "flag": "flags",
    "delegated_to": "delegated_to",
}


def refresh_waves(plan: dict[str, Any]) -> None:
    """Waves and their diagram are derived from depends_on after every change to it."""
    deps = plan["milestone_dependencies"]
    deps["waves"] = waves.compute_waves(plan["milestones"])
    deps["diagram_ascii"] = waves.diagram(deps["waves"], plan["milestones"])


def milestone_add(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Add a milestone (M-NNN)."""
    plan = tx.edit("plan")
    items = plan["milestones"]
    number = max((m["number"] for m in items), default=0) + 1
    item = new("Milestone", id=tx.new_id("plan", "M", items), number=number, name=a["name"])
    check_files(tx, "--file", a["file"])
    update(item, a, MILESTONE_FIELDS)
    items.append(item)
    refresh_waves(plan)
    return [item["id"]]


# `milestone set --add-X T / --remove-X N`: (option name, what it is), field from MILESTONE_FIELDS
ITEM_EDITS = (
    ("requirement", "requirement"),
    ("acceptance", "acceptance criterion"),
    ("file", "file"),
)


def edit_items(milestone: dict[str, Any], a: dict[str, Any]) -> bool:
    """Remove the 1-based positions given (as the list was), then append; True if any given."""
    given = False
    for name, _ in ITEM_EDITS:
        field = MILESTONE_FIELDS[name]
        removed = sorted(set(a.get(f"remove_{name}") or []), reverse=True)
        for n in removed:
            if n > len(milestone[field]):
                raise UsageError(
                    f"--remove-{name} {n}: {milestone['id']} has {len(milestone[field])} "
                    f"{MILESTONE_FIELDS[name]} (counting from 1)"
                )
            del milestone[field][n - 1]
        added = [v for v in a.get(f"add_{name}") or [] if v.strip()]
        milestone[field] += added
        given |= bool(removed or added)
    return given


def milestone_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Change a milestone; a repeatable option replaces its list (given as '' it clears it);
    --add-X appends and --remove-X N drops the N-th (1-based) requirement, criterion or file."""
    plan = tx.edit("plan")
    milestone = find(plan, a["id"], "M")
    check_files(tx, "--file", a["file"])
    check_files(tx, "--add-file", a.get("add_file"))
    given = update(milestone, a, MILESTONE_FIELDS)
    require_some(edit_items(milestone, a) or given, "milestone set")
    refresh_waves(plan)


def milestone_tests(tx: Transaction, a: dict[str, Any]) -> None:
    """Set the tests a milestone needs: files, type, backing, scenarios, or why none."""
    tests = find(tx.edit("plan"), a["id"], "M")["tests"]
    check_files(tx, "--file", a["file"])
    given = update(
        tests,
        a,
        {"file": "files", "type": "type", "backing": "backing", "skip_reason": "skip_reason"},
    )
    given |= update(tests["scenarios"], a, {k: k for k in ("normal", "edge", "error")})
    require_some(given, "milestone tests")


def _params(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """The intent's parameters from (key, value) pairs (the caller parsed KEY=VALUE)."""
    return dict(pairs)


INTENT_FIELDS = {
    "file": "file",
    "function": "function",
    "behavior": "behavior",
    "decision": "decision_refs",
}


def intent_add(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Add a code intent (CI-NNN): what a function in a file must do, and why."""
    plan = tx.edit("plan")
    milestone = find(plan, a["milestone"], "M")
    everything = (i for m in plan["milestones"] for i in m["code_intents"])
    item = new(
        "CodeIntent",
        id=tx.new_id("plan", "CI", everything),
        file="",
        behavior="",
        params=_params(a["param"]),
    )
    check_files(tx, "--file", a["file"])
    update(item, a, INTENT_FIELDS)
    milestone["code_intents"].append(item)
    return [item["id"]]


def intent_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Change a code intent."""
    item = find(tx.edit("plan"), a["id"], "CI")
    check_files(tx, "--file", a["file"])
    given = update(item, a, INTENT_FIELDS)
    if a["param"]:
        item["params"] = _params(a["param"])
    require_some(given or bool(a["param"]), "intent set")


def _check_diff(tx: Transaction, diff: str, file: str) -> None:
    from state.repo import unidiff
    from state.validation.project_paths import check_diff, recorded_project

    check_files(tx, "--file", file)
    check_diff(recorded_project(tx.store.dir), diff, "--diff", UsageError)
    try:
        touched = unidiff.touched_files(diff)
    except unidiff.DiffError as e:
        raise UsageError(f"--diff: {e}") from None
    if touched != [file]:
        raise UsageError(f"--diff: touches {', '.join(touched) or 'nothing'}, expected {file}")


CHANGE_FIELDS = {
    "file": "file",
    "diff": "diff",
    "why": "why_comments",
    "context_lines": "context_lines",
}


def change_add(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Add a code change (CC-NNN): a unified diff for one file, realising an intent."""
    plan = tx.edit("plan")
    _check_diff(tx, a["diff"], a["file"])
    find(plan, a["intent"], "CI")
    milestone = owner(plan, a["intent"])
    everything = (c for m in plan["milestones"] for c in m["code_changes"])
    item = new(
        "CodeChange",
        id=tx.new_id("plan", "CC", everything),
        intent_ref=a["intent"],
        file="",
        diff="",
    )
    update(item, a, CHANGE_FIELDS)
    milestone["code_changes"].append(item)
    return [item["id"]]


def change_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Change a code change; a new --intent moves it to that intent's milestone."""
    plan = tx.edit("plan")
    item = find(plan, a["id"], "CC")
    given = update(item, a, CHANGE_FIELDS)
    if a["intent"]:
        find(plan, a["intent"], "CI")
        owner(plan, a["id"])["code_changes"].remove(item)
        owner(plan, a["intent"])["code_changes"].append(item)
        item["intent_ref"] = a["intent"]
        item["shared_intents"] = []  # it now implements the one intent it was given
    require_some(given or bool(a["intent"]), "change set")
    _check_diff(tx, item["diff"], item["file"])


def doc_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Set a milestone's documentation: module comment, docstrings, algorithm blocks, inline."""
    doc = find(tx.edit("plan"), a["milestone"], "M")["documentation"]
    require_some(
        update(
            doc,
            a,
            {
                "module_comment": "module_comment",
                "docstring": "docstrings",
                "algorithm": "algorithm_blocks",
                "inline": "inline_comments",
            },
        ),
        "doc set",
    )
