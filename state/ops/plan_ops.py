"""Operations on plan.json content: overview, decisions, risks, milestones, intents, changes, docs.

Set-operations change only what is given; a repeatable option given replaces its list.

Each operation takes the open transaction and the command's parameters as keywords, by their
click names (repeatable ones as lists); it returns the ids it created. cli/commands/ declares
the parameters; state/ parses none.
"""

from __future__ import annotations

from typing import Literal, get_args, overload

from state import clock
from state.errors import UsageError
from state.repo import unidiff
from state.rules.session_store import Transaction
from state.validation import waves
from state.validation.project_paths import check_diff, check_project_path, recorded_project

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import TypeVar

    from state.storage.documents import (
        Choice,
        CodeChange,
        CodeIntent,
        Constraint,
        Decision,
        Milestone,
        Plan,
        RejectedAlternative,
        Risk,
    )

    T = TypeVar("T")
    PlanItem = (
        Decision
        | RejectedAlternative
        | Constraint
        | Risk
        | Choice
        | Milestone
        | CodeIntent
        | CodeChange
    )

MilestoneRisk = Literal["low", "medium", "high"]  # as models.Milestone.risk
RISKS: tuple[str, ...] = get_args(MilestoneRisk)

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


@overload
def find(plan: Plan, item_id: str, kind: Literal["DL"]) -> Decision: ...
@overload
def find(plan: Plan, item_id: str, kind: Literal["RA"]) -> RejectedAlternative: ...
@overload
def find(plan: Plan, item_id: str, kind: Literal["C"]) -> Constraint: ...
@overload
def find(plan: Plan, item_id: str, kind: Literal["R"]) -> Risk: ...
@overload
def find(plan: Plan, item_id: str, kind: Literal["D"]) -> Choice: ...
@overload
def find(plan: Plan, item_id: str, kind: Literal["M"]) -> Milestone: ...
@overload
def find(plan: Plan, item_id: str, kind: Literal["CI"]) -> CodeIntent: ...
@overload
def find(plan: Plan, item_id: str, kind: Literal["CC"]) -> CodeChange: ...
@overload
def find(plan: Plan, item_id: str, kind: Literal[""] = "") -> PlanItem: ...
def find(plan: Plan, item_id: str, kind: str = "") -> PlanItem:
    """The plan item with this id, or UsageError naming it; with `kind` (an id prefix such
    as "M") an id of another kind is refused too, before anything reads its fields."""
    prefix = item_id.split("-", 1)[0]
    if kind and prefix != kind:
        raise UsageError(f"{item_id}: not a {KINDS[kind]} id ({kind}-n)")
    context = plan["planning_context"]
    groups: dict[str, Sequence[PlanItem]] = {
        "DL": context["decision_log"],
        "RA": context["rejected_alternatives"],
        "C": context["constraints"],
        "R": context["known_risks"],
        "D": context["choices"],
        "M": plan["milestones"],
        "CI": [i for m in plan["milestones"] for i in m["code_intents"]],
        "CC": [c for m in plan["milestones"] for c in m["code_changes"]],
    }
    items = groups.get(prefix)
    if items is None:
        raise UsageError(f"{item_id}: not a plan id (DL-, RA-, C-, R-, D-, M-, CI-, CC-)")
    for item in items:
        if item["id"] == item_id:
            return item
    raise UsageError(f"plan.json: no {item_id}")


def owner(plan: Plan, item_id: str) -> Milestone:
    """The milestone holding intent or change `item_id`."""
    for m in plan["milestones"]:
        held = m["code_intents"] if item_id.startswith("CI-") else m["code_changes"]
        if any(i["id"] == item_id for i in held):
            return m
    raise UsageError(f"plan.json: no {item_id}")


def some(*values: object) -> bool:
    """Whether any option was given: a value, or a non-empty list (`--depends ''` too)."""
    return any(value is not None and value != [] for value in values)


def keep(value: T | None, current: T) -> T:
    """The value given, else the current one."""
    return current if value is None else value


def keep_list(values: list[str], current: list[str]) -> list[str]:
    """The list given, else the current one; given only as empty strings (`--depends ''`)
    it clears the field."""
    return [v for v in values if v != ""] if values else current


def check_files(tx: Transaction, option: str, paths: list[str] | str | None) -> None:
    """Paths given for the plan stay in the project, out of .git/ and .planner/ (exit 2)."""
    project = recorded_project(tx.store.dir)
    for path in [paths] if isinstance(paths, str) else paths or []:
        if path:
            check_project_path(project, path, option, UsageError)


def require_some(given: bool, name: str) -> None:
    if not given:
        raise UsageError(f"{name}: give at least one option to change")


def overview_set(
    tx: Transaction, *, title: str | None, problem: str | None, approach: str | None
) -> None:
    """Set the plan's title, problem and approach."""
    overview = tx.edit("plan")["overview"]
    require_some(some(title, problem, approach), "overview set")
    overview["title"] = keep(title, overview["title"])
    overview["problem"] = keep(problem, overview["problem"])
    overview["approach"] = keep(approach, overview["approach"])


def decision_add(
    tx: Transaction, *, decision: str, reasoning: str, question: list[str]
) -> list[str]:
    """Record a decision (DL-NNN) with its chain of reasoning."""
    log = tx.edit("plan")["planning_context"]["decision_log"]
    item = new_decision(tx.new_id("plan", "DL", log), decision, reasoning, question)
    log.append(item)
    return [item["id"]]


def new_decision(
    id: str, decision: str, reasoning: str, question_refs: list[str] | None = None
) -> Decision:
    """A decision recorded now, superseded by nothing."""
    return {
        "id": id,
        "decision": decision,
        "reasoning_chain": reasoning,
        "timestamp": clock.now(),
        "question_refs": question_refs or [],
        "superseded_by": None,
        "superseded_reason": None,
    }


def decision_set(
    tx: Transaction, *, id: str, decision: str | None, reasoning: str | None, question: list[str]
) -> None:
    """Change a decision's text, reasoning or cited questions."""
    item = find(tx.edit("plan"), id, "DL")
    require_some(some(decision, reasoning, question), "decision set")
    item["decision"] = keep(decision, item["decision"])
    item["reasoning_chain"] = keep(reasoning, item["reasoning_chain"])
    item["question_refs"] = keep_list(question, item["question_refs"])


def decision_supersede(tx: Transaction, *, id: str, by: str, reason: str) -> None:
    """Mark a decision superseded by a later one; both stay on record."""
    plan = tx.edit("plan")
    old, new_one = find(plan, id, "DL"), find(plan, by, "DL")
    if old is new_one:
        raise UsageError(f"decision supersede: {id} cannot supersede itself")
    known = {d["id"] for d in plan["planning_context"]["decision_log"]}
    if old["superseded_by"] in known:  # a dangling superseded_by may be pointed elsewhere
        raise UsageError(
            f"decision supersede: {id} is already superseded by {old['superseded_by']}"
        )
    old["superseded_by"], old["superseded_reason"] = new_one["id"], reason


def alternative_add(tx: Transaction, *, alternative: str, reason: str, decision: str) -> list[str]:
    """Record an alternative that was rejected, and the decision that rejected it."""
    items = tx.edit("plan")["planning_context"]["rejected_alternatives"]
    item = new_alternative(tx.new_id("plan", "RA", items), alternative, reason, decision)
    items.append(item)
    return [item["id"]]


def new_alternative(id: str, alternative: str, reason: str, decision: str) -> RejectedAlternative:
    return {
        "id": id,
        "alternative": alternative,
        "rejection_reason": reason,
        "decision_ref": decision,
    }


def alternative_set(
    tx: Transaction, *, id: str, alternative: str | None, reason: str | None, decision: str | None
) -> None:
    """Change a rejected alternative, its reason or the decision that rejected it."""
    item = find(tx.edit("plan"), id, "RA")
    require_some(some(alternative, reason, decision), "alternative set")
    item["alternative"] = keep(alternative, item["alternative"])
    item["rejection_reason"] = keep(reason, item["rejection_reason"])
    item["decision_ref"] = keep(decision, item["decision_ref"])


def constraint_add(
    tx: Transaction, *, type: str, description: str, source: str | None
) -> list[str]:
    """Record a constraint the plan must respect."""
    items = tx.edit("plan")["planning_context"]["constraints"]
    item: Constraint = {
        "id": tx.new_id("plan", "C", items),
        "type": type,
        "description": description,
        "source": source or "",
    }
    items.append(item)
    return [item["id"]]


def constraint_set(
    tx: Transaction, *, id: str, type: str | None, description: str | None, source: str | None
) -> None:
    """Change a constraint's type, description or source."""
    item = find(tx.edit("plan"), id, "C")
    require_some(some(type, description, source), "constraint set")
    item["type"] = keep(type, item["type"])
    item["description"] = keep(description, item["description"])
    item["source"] = keep(source, item["source"])


def risk_add(
    tx: Transaction, *, risk: str, mitigation: str, anchor: str | None, decision: str | None
) -> list[str]:
    """Record a known risk and how it is mitigated."""
    items = tx.edit("plan")["planning_context"]["known_risks"]
    item: Risk = {
        "id": tx.new_id("plan", "R", items),
        "risk": risk,
        "mitigation": mitigation,
        "anchor": anchor,
        "decision_ref": decision,
    }
    items.append(item)
    return [item["id"]]


def risk_set(
    tx: Transaction,
    *,
    id: str,
    risk: str | None,
    mitigation: str | None,
    anchor: str | None,
    decision: str | None,
) -> None:
    """Change a risk, its mitigation, anchor or decision."""
    item = find(tx.edit("plan"), id, "R")
    require_some(some(risk, mitigation, anchor, decision), "risk set")
    item["risk"] = keep(risk, item["risk"])
    item["mitigation"] = keep(mitigation, item["mitigation"])
    item["anchor"] = keep(anchor, item["anchor"])
    item["decision_ref"] = keep(decision, item["decision_ref"])


def knowledge_set(
    tx: Transaction,
    *,
    architecture_diagram: str | None,
    architecture: str | None,
    data_flow_diagram: str | None,
    data_flow: str | None,
    structure_rationale: str | None,
) -> None:
    """Set the architecture and data-flow diagrams and descriptions, and the structure rationale."""
    ik = tx.edit("plan")["invisible_knowledge"]
    require_some(
        some(architecture_diagram, architecture, data_flow_diagram, data_flow, structure_rationale),
        "knowledge set",
    )
    arch, flow = ik["architecture"], ik["data_flow"]
    arch["diagram_ascii"] = keep(architecture_diagram, arch["diagram_ascii"])
    arch["description"] = keep(architecture, arch["description"])
    flow["diagram_ascii"] = keep(data_flow_diagram, flow["diagram_ascii"])
    flow["description"] = keep(data_flow, flow["description"])
    ik["structure_rationale"] = keep(structure_rationale, ik["structure_rationale"])


def invariant_add(tx: Transaction, *, text: str) -> None:
    """Add an invariant the code must keep."""
    tx.edit("plan")["invisible_knowledge"]["invariants"].append(text)


def tradeoff_add(tx: Transaction, *, text: str) -> None:
    """Add a tradeoff the design accepts."""
    tx.edit("plan")["invisible_knowledge"]["tradeoffs"].append(text)


def refresh_waves(plan: Plan) -> None:
    """Waves and their diagram are derived from depends_on after every change to it."""
    deps = plan["milestone_dependencies"]
    deps["waves"] = waves.compute_waves(plan["milestones"])
    deps["diagram_ascii"] = waves.diagram(deps["waves"], plan["milestones"])


def new_milestone(id: str, number: int, name: str) -> Milestone:
    """A milestone with nothing planned yet (the model's defaults)."""
    return {
        "id": id,
        "number": number,
        "name": name,
        "files": [],
        "flags": [],
        "requirements": [],
        "acceptance_criteria": [],
        "risk": "medium",
        "depends_on": [],
        "tests": {
            "files": [],
            "type": None,
            "backing": None,
            "scenarios": {"normal": [], "edge": [], "error": []},
            "skip_reason": None,
        },
        "code_intents": [],
        "code_changes": [],
        "documentation": {
            "module_comment": None,
            "docstrings": [],
            "algorithm_blocks": [],
            "inline_comments": [],
        },
        "is_documentation_only": False,
        "delegated_to": None,
    }


def fill_milestone(
    m: Milestone,
    *,
    name: str | None,
    file: list[str],
    requirement: list[str],
    acceptance: list[str],
    risk: MilestoneRisk | None,
    depends: list[str],
    doc_only: bool | None,
    flag: list[str],
    delegated_to: str | None,
) -> bool:
    """The options `milestone add` and `milestone set` share, onto `m`; True if any given."""
    m["name"] = keep(name, m["name"])
    m["files"] = keep_list(file, m["files"])
    m["requirements"] = keep_list(requirement, m["requirements"])
    m["acceptance_criteria"] = keep_list(acceptance, m["acceptance_criteria"])
    m["risk"] = keep(risk, m["risk"])
    m["depends_on"] = keep_list(depends, m["depends_on"])
    m["is_documentation_only"] = keep(doc_only, m["is_documentation_only"])
    m["flags"] = keep_list(flag, m["flags"])
    m["delegated_to"] = keep(delegated_to, m["delegated_to"])
    return some(name, file, requirement, acceptance, risk, depends, doc_only, flag, delegated_to)


def milestone_add(
    tx: Transaction,
    *,
    name: str,
    file: list[str],
    requirement: list[str],
    acceptance: list[str],
    risk: MilestoneRisk | None,
    depends: list[str],
    doc_only: bool | None,
    flag: list[str],
    delegated_to: str | None,
) -> list[str]:
    """Add a milestone (M-NNN)."""
    plan = tx.edit("plan")
    items = plan["milestones"]
    number = max((m["number"] for m in items), default=0) + 1
    item = new_milestone(tx.new_id("plan", "M", items), number, name)
    check_files(tx, "--file", file)
    fill_milestone(
        item,
        name=name,
        file=file,
        requirement=requirement,
        acceptance=acceptance,
        risk=risk,
        depends=depends,
        doc_only=doc_only,
        flag=flag,
        delegated_to=delegated_to,
    )
    items.append(item)
    after_committed(tx, plan, item)
    refresh_waves(plan)
    return [item["id"]]


def after_committed(tx: Transaction, plan: Plan, milestone: Milestone) -> None:
    """In an amendment, a milestone that changes a file a committed milestone changed comes
    after it (depends_on): its diffs build on that commit, and it is never in its wave."""
    from state.rules.amendments import committed, runs_by_id

    execution = tx.read_or_none("execution")
    runs = runs_by_id(execution)
    if not runs or committed(runs.get(milestone["id"], {})):
        return
    files = waves.changed_files(milestone)
    for other in plan["milestones"]:
        both = sorted(files & waves.changed_files(other))
        if other["id"] == milestone["id"] or other["id"] in milestone["depends_on"] or not both:
            continue
        if committed(runs.get(other["id"], {})):
            milestone["depends_on"].append(other["id"])
            tx.tell(
                f"{milestone['id']} comes after {other['id']} (committed; both change "
                f"{', '.join(both)})"
            )


# `milestone set --add-X T / --remove-X N`: (option name, what it is)
ITEM_EDITS = (
    ("requirement", "requirement"),
    ("acceptance", "acceptance criterion"),
    ("file", "file"),
)


def edit_items(
    m: Milestone, name: str, field: str, items: list[str], remove: list[int], add: list[str]
) -> list[str]:
    """`items` with the 1-based positions `remove` dropped (as the list was), then `add`
    appended (blank entries skipped)."""
    kept = list(items)
    for n in sorted(set(remove), reverse=True):
        if n > len(kept):
            raise UsageError(
                f"--remove-{name} {n}: {m['id']} has {len(kept)} {field} (counting from 1)"
            )
        del kept[n - 1]
    return kept + [v for v in add if v.strip()]


def milestone_set(
    tx: Transaction,
    *,
    id: str,
    name: str | None,
    file: list[str],
    requirement: list[str],
    acceptance: list[str],
    risk: MilestoneRisk | None,
    depends: list[str],
    doc_only: bool | None,
    flag: list[str],
    delegated_to: str | None,
    add_requirement: list[str],
    remove_requirement: list[int],
    add_acceptance: list[str],
    remove_acceptance: list[int],
    add_file: list[str],
    remove_file: list[int],
) -> None:
    """Change a milestone; a repeatable option replaces its list (given as '' it clears it);
    --add-X appends and --remove-X N drops the N-th (1-based) requirement, criterion or file."""
    plan = tx.edit("plan")
    m = find(plan, id, "M")
    check_files(tx, "--file", file)
    check_files(tx, "--add-file", add_file)
    given = fill_milestone(
        m,
        name=name,
        file=file,
        requirement=requirement,
        acceptance=acceptance,
        risk=risk,
        depends=depends,
        doc_only=doc_only,
        flag=flag,
        delegated_to=delegated_to,
    )
    m["requirements"] = edit_items(
        m, "requirement", "requirements", m["requirements"], remove_requirement, add_requirement
    )
    m["acceptance_criteria"] = edit_items(
        m,
        "acceptance",
        "acceptance_criteria",
        m["acceptance_criteria"],
        remove_acceptance,
        add_acceptance,
    )
    m["files"] = edit_items(m, "file", "files", m["files"], remove_file, add_file)
    added = [v for v in (*add_requirement, *add_acceptance, *add_file) if v.strip()]
    edited = some(remove_requirement, remove_acceptance, remove_file, added)
    require_some(given or edited, "milestone set")
    refresh_waves(plan)


def milestone_tests(
    tx: Transaction,
    *,
    id: str,
    file: list[str],
    type: str | None,
    backing: str | None,
    normal: list[str],
    edge: list[str],
    error: list[str],
    skip_reason: str | None,
) -> None:
    """Set the tests a milestone needs: files, type, backing, scenarios, or why none."""
    tests = find(tx.edit("plan"), id, "M")["tests"]
    check_files(tx, "--file", file)
    require_some(some(file, type, backing, normal, edge, error, skip_reason), "milestone tests")
    tests["files"] = keep_list(file, tests["files"])
    tests["type"] = keep(type, tests["type"])
    tests["backing"] = keep(backing, tests["backing"])
    tests["skip_reason"] = keep(skip_reason, tests["skip_reason"])
    scenarios = tests["scenarios"]
    scenarios["normal"] = keep_list(normal, scenarios["normal"])
    scenarios["edge"] = keep_list(edge, scenarios["edge"])
    scenarios["error"] = keep_list(error, scenarios["error"])


def intent_add(
    tx: Transaction,
    *,
    milestone: str,
    file: str,
    function: str | None,
    behavior: str,
    param: list[tuple[str, str]],
    decision: list[str],
) -> list[str]:
    """Add a code intent (CI-NNN): what a function in a file must do, and why."""
    plan = tx.edit("plan")
    m = find(plan, milestone, "M")
    check_files(tx, "--file", file)
    everything = (i for m in plan["milestones"] for i in m["code_intents"])
    item: CodeIntent = {
        "id": tx.new_id("plan", "CI", everything),
        "file": file,
        "function": function,
        "behavior": behavior,
        "decision_refs": keep_list(decision, []),
        "params": dict(param),  # the caller parsed KEY=VALUE
    }
    m["code_intents"].append(item)
    after_committed(tx, plan, m)
    refresh_waves(plan)
    return [item["id"]]


def intent_set(
    tx: Transaction,
    *,
    id: str,
    file: str | None,
    function: str | None,
    behavior: str | None,
    param: list[tuple[str, str]],
    decision: list[str],
) -> None:
    """Change a code intent."""
    item = find(tx.edit("plan"), id, "CI")
    check_files(tx, "--file", file)
    require_some(some(file, function, behavior, param, decision), "intent set")
    item["file"] = keep(file, item["file"])
    item["function"] = keep(function, item["function"])
    item["behavior"] = keep(behavior, item["behavior"])
    item["decision_refs"] = keep_list(decision, item["decision_refs"])
    item["params"] = dict(param) if param else item["params"]


def _check_diff(tx: Transaction, diff: str, file: str) -> None:
    check_files(tx, "--file", file)
    check_diff(recorded_project(tx.store.dir), diff, "--diff", UsageError)
    try:
        touched = unidiff.touched_files(diff)
    except unidiff.DiffError as e:
        raise UsageError(f"--diff: {e}") from None
    if touched != [file]:
        raise UsageError(f"--diff: touches {', '.join(touched) or 'nothing'}, expected {file}")


def new_change(
    id: str, intent_ref: str, file: str, diff: str, shared_intents: list[str] | None = None
) -> CodeChange:
    """A code change with the model's defaults (3 context lines, no WHY comments)."""
    return {
        "id": id,
        "intent_ref": intent_ref,
        "shared_intents": shared_intents or [],
        "file": file,
        "diff": diff,
        "context_lines": 3,
        "why_comments": [],
    }


def change_add(
    tx: Transaction, *, intent: str, file: str, diff: str, why: list[str], context_lines: int | None
) -> list[str]:
    """Add a code change (CC-NNN): a unified diff for one file, realising an intent."""
    plan = tx.edit("plan")
    _check_diff(tx, diff, file)
    find(plan, intent, "CI")
    milestone = owner(plan, intent)
    everything = (c for m in plan["milestones"] for c in m["code_changes"])
    item = new_change(tx.new_id("plan", "CC", everything), intent, file, diff)
    item["why_comments"] = keep_list(why, item["why_comments"])
    item["context_lines"] = keep(context_lines, item["context_lines"])
    milestone["code_changes"].append(item)
    return [item["id"]]


def change_set(
    tx: Transaction,
    *,
    id: str,
    intent: str | None,
    file: str | None,
    diff: str | None,
    why: list[str],
    context_lines: int | None,
) -> None:
    """Change a code change; a new --intent moves it to that intent's milestone."""
    plan = tx.edit("plan")
    item = find(plan, id, "CC")
    item["file"] = keep(file, item["file"])
    item["diff"] = keep(diff, item["diff"])
    item["why_comments"] = keep_list(why, item["why_comments"])
    item["context_lines"] = keep(context_lines, item["context_lines"])
    if intent:
        find(plan, intent, "CI")
        owner(plan, id)["code_changes"].remove(item)
        owner(plan, intent)["code_changes"].append(item)
        item["intent_ref"] = intent
        item["shared_intents"] = []  # it now implements the one intent it was given
    require_some(some(file, diff, why, context_lines) or bool(intent), "change set")
    _check_diff(tx, item["diff"], item["file"])


def doc_set(
    tx: Transaction,
    *,
    id: str,
    module_comment: str | None,
    docstring: list[str],
    algorithm: list[str],
    inline: list[str],
) -> None:
    """Set a milestone's documentation: module comment, docstrings, algorithm blocks, inline."""
    doc = find(tx.edit("plan"), id, "M")["documentation"]
    require_some(some(module_comment, docstring, algorithm, inline), "doc set")
    doc["module_comment"] = keep(module_comment, doc["module_comment"])
    doc["docstrings"] = keep_list(docstring, doc["docstrings"])
    doc["algorithm_blocks"] = keep_list(algorithm, doc["algorithm_blocks"])
    doc["inline_comments"] = keep_list(inline, doc["inline_comments"])
