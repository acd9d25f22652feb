"""Operations on plan.json content: overview, decisions, risks, milestones, intents, changes, docs.

One table of item kinds (KINDS) says, for each kind, where its items live, their id prefix and
which keyword fills which field; one path adds an item, one sets the fields given and one
removes an item of a kind whose `holder` is known (`ItemOp`). A set-operation changes only
what is given; a repeatable option given replaces its list, given as '' it clears it.
"""

from __future__ import annotations

import inspect
from typing import Literal, NamedTuple, cast, get_args, overload

from state import clock
from state.errors import PreconditionFailed, UsageError
from state.storage import schema
from state.validation import waves

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from state.rules.session_store import Transaction
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
    Args = Mapping[str, Any]  # an operation's keywords, as click converted them
    # What an operation does once the fields are filled (given the item); True if it counts
    # as a change although no field was given (`milestone set --remove-file 1`).
    Then = Callable[[Transaction, Plan, Any, Args], bool]

MilestoneRisk = Literal["low", "medium", "high"]  # as models.Milestone.risk
RISKS: tuple[str, ...] = get_args(MilestoneRisk)

NAMES = {
    "DL": "decision",
    "RA": "rejected alternative",
    "C": "constraint",
    "R": "risk",
    "D": "design choice",
    "M": "milestone",
    "CI": "code intent",
    "CC": "code change",
}


def every(plan: Plan, prefix: str) -> Sequence[PlanItem] | None:
    """Every item of the plan with this id prefix, or None for a prefix of no kind."""
    context = plan["planning_context"]
    milestones = plan["milestones"]
    groups: dict[str, Sequence[PlanItem]] = {
        "DL": context["decision_log"],
        "RA": context["rejected_alternatives"],
        "C": context["constraints"],
        "R": context["known_risks"],
        "D": context["choices"],
        "M": milestones,
        "CI": [i for m in milestones for i in m["code_intents"]],
        "CC": [c for m in milestones for c in m["code_changes"]],
    }
    return groups.get(prefix)


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
def find(plan: Plan, item_id: str, kind: str = "") -> PlanItem: ...
def find(plan: Plan, item_id: str, kind: str = "") -> PlanItem:
    """The plan item with this id, or UsageError naming it; with `kind` (an id prefix such
    as "M") an id of another kind is refused too, before anything reads its fields."""
    prefix = item_id.split("-", 1)[0]
    if kind and prefix != kind:
        raise UsageError(f"{item_id}: not a {NAMES[kind]} id ({kind}-n)")
    items = every(plan, prefix)
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


def require_some(given: bool, name: str) -> None:
    if not given:
        raise UsageError(f"{name}: give at least one option to change")


def fill(part: object, fields: Mapping[str, str], args: Args) -> bool:
    """The values `args` gives onto `part` (a plan item, or a part of the plan), field by
    field; whether any was given. None and [] are not given; False is, and a list given as
    empty strings ('') clears its field. `fields` maps a keyword to its field, "a.b" for
    field b of field a."""
    given = False
    for keyword, path in fields.items():
        value = args[keyword]
        if value is None or value == []:
            continue
        *parents, key = path.split(".")
        place = cast("dict[str, object]", part)  # a TypedDict, written by its field names
        for name in parents:
            place = cast("dict[str, object]", place[name])
        current = place.get(key)  # a new item holds its defaults only
        if isinstance(current, dict):  # KEY=VALUE pairs
            place[key] = dict(value)
        elif isinstance(current, list):
            place[key] = [v for v in value if v != ""]
        else:
            place[key] = value
        given = True
    return given


def check_paths(tx: Transaction, field: str, paths: list[str] | str | None) -> None:
    """Paths given for the plan stay in the project, out of .git/ and .planner/ (exit 2)."""
    from state.validation.project_paths import recorded_project, why_unsafe  # on use

    project = recorded_project(tx.store.dir)
    for path in [paths] if isinstance(paths, str) else paths or []:
        reason = why_unsafe(project, path) if path else ""
        if reason:
            raise UsageError(f"{field}: {path!r}: {reason}; nothing was written", field=field)


def check_diff(tx: Transaction, diff: str, file: str) -> None:
    """A planned diff names safe paths and touches `file` alone (exit 2)."""
    from state.repo import unidiff
    from state.validation.project_paths import diff_paths

    check_paths(tx, "file", file)
    check_paths(tx, "diff", diff_paths(diff))
    try:
        touched = unidiff.touched_files(diff)
    except unidiff.DiffError as e:
        raise UsageError(f"diff: {e}", field="diff") from None
    if touched != [file]:
        raise UsageError(
            f"diff: touches {', '.join(touched) or 'nothing'}, expected {file}", field="diff"
        )


class Kind(NamedTuple):
    """One kind of plan content: which keyword fills which field, and where it lives."""

    command: str  # its commands' group: "decision" (`decision add`, `decision set`)
    prefix: str  # the id prefix of its items ("DL"); "" for a part of the plan itself
    fields: dict[str, str]  # keyword → the field it fills ("a.b": field b of field a)
    part: str = ""  # the part of the plan or of the item that `set` changes ("tests")
    model: str = ""  # its items' model in plan.json's schema, whose defaults a new one has
    home: Callable[[Plan, Args], list[Any]] | None = None  # where `add` puts a new item
    paths: tuple[str, ...] = ()  # the keywords that name project files
    holder: Callable[[Plan, str], list[Any]] | None = None  # the list item id is in (`remove`)


class ItemOp:
    """`plan KIND add`, `plan KIND set|tests` or `plan KIND remove`: one operation over the
    kind's keywords.

    It declares them in its signature (what inspect reads, as tests/cli/test_operations.py
    does for every op): `id` first for a set-operation on an item, then the kind's fields
    (none for remove), then `extra` (keywords `then` reads). A removal's `then` runs after
    it and may refuse it (nothing is written)."""

    def __init__(
        self, kind: Kind, verb: str, extra: tuple[str, ...] = (), then: Then | None = None
    ):
        self.kind, self.verb, self.then = kind, verb, then
        self.__name__ = f"{kind.command.replace(' ', '_')}_{verb}"
        fields = [] if verb == "remove" else list(kind.fields)
        self.keywords = ["id"] * bool(verb != "add" and kind.prefix) + [*fields, *extra]

    @property
    def __signature__(self) -> inspect.Signature:
        """Built when read (inspect.signature): the ops are made at import, ~40 of them."""
        keyword = inspect.Parameter.KEYWORD_ONLY
        return inspect.Signature(
            [
                inspect.Parameter("tx", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                *(inspect.Parameter(k, keyword) for k in self.keywords),
            ]
        )

    def __call__(self, tx: Transaction, **args: Any) -> list[str]:
        if sorted(args) != sorted(self.keywords):
            raise TypeError(f"{self.__name__}: takes {self.keywords}, given {sorted(args)}")
        plan, kind = tx.edit("plan"), self.kind
        item: Any = plan  # the kinds' items differ: each kind names its own fields
        if self.verb == "add":
            assert kind.home is not None, kind.command
            home = kind.home(plan, args)
            item = schema.blank("plan", kind.model)
            item["id"] = tx.new_id("plan", kind.prefix, every(plan, kind.prefix) or [])
        elif kind.prefix:
            item = find(plan, args["id"], kind.prefix)
        if self.verb == "remove":
            assert kind.holder is not None, kind.command
            kind.holder(plan, item["id"]).remove(item)
            if self.then:
                self.then(tx, plan, item, args)
            return []
        for keyword in kind.paths:
            check_paths(tx, keyword, args[keyword])
        given = fill(item[kind.part] if kind.part else item, kind.fields, args)
        if self.verb == "add":
            home.append(item)
        edited = bool(self.then and self.then(tx, plan, item, args))
        if self.verb == "add":
            return [item["id"]]
        require_some(given or edited, f"{kind.command} {self.verb}")
        return []


def refresh_waves(plan: Plan) -> None:
    """Waves and their diagram are derived from depends_on after every change to it."""
    deps = plan["milestone_dependencies"]
    deps["waves"] = waves.compute_waves(plan["milestones"])
    deps["diagram_ascii"] = waves.diagram(deps["waves"], plan["milestones"])


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
                f"{milestone['id']} depends on {other['id']} now, added for you ({other['id']} is "
                f"committed; both change {', '.join(both)})"
            )


def decision_added(tx: Transaction, plan: Plan, item: Decision, args: Args) -> bool:
    item["timestamp"] = clock.now()
    return True


def milestone_added(tx: Transaction, plan: Plan, m: Milestone, args: Args) -> bool:
    m["number"] = max((o["number"] for o in plan["milestones"] if o is not m), default=0) + 1
    after_committed(tx, plan, m)
    refresh_waves(plan)
    return True


# `milestone set --add-X T / --remove-X N|T`: (option name, its field, what it is)
ITEM_EDITS = (
    ("requirement", "requirements", "requirement"),
    ("acceptance", "acceptance_criteria", "acceptance criterion"),
    ("file", "files", "file"),
)


def milestone_edited(tx: Transaction, plan: Plan, m: Milestone, args: Args) -> bool:
    """--add-X appends (blank entries skipped) and --remove-X drops a requirement, criterion
    or file, given as its 1-based position or as its exact text, counted as the list was;
    True if any was given."""
    check_paths(tx, "add_file", args["add_file"])
    edited = False
    for name, field, _ in ITEM_EDITS:
        lists = cast("dict[str, list[str]]", m)  # the three list fields, by name
        kept, add = list(lists[field]), [v for v in args[f"add_{name}"] if v.strip()]
        remove = [
            position(m["id"], field, kept, str(v), f"remove_{name}") for v in args[f"remove_{name}"]
        ]
        for n in sorted(set(remove), reverse=True):
            del kept[n - 1]
        lists[field] = kept + add
        edited = edited or bool(remove or add)
    refresh_waves(plan)
    return edited


def position(owner_id: str, field: str, listed: list[str], given: str, option: str) -> int:
    """The 1-based position `given` names in `listed`: digits are a position, anything else
    the exact text of an entry; else UsageError naming what is listed."""
    if given.isdigit() and 1 <= int(given) <= len(listed):
        return int(given)
    if not given.isdigit() and given in listed:
        return listed.index(given) + 1
    shown = "; ".join(f"{n} {v!r}" for n, v in enumerate(listed, 1)) or "none"
    raise UsageError(
        f"{option} {given!r}: not a position (from 1) or an entry of {owner_id}'s {field}: {shown}",
        field=option,
    )


def intent_added(tx: Transaction, plan: Plan, item: CodeIntent, args: Args) -> bool:
    after_committed(tx, plan, find(plan, args["milestone"], "M"))
    refresh_waves(plan)
    return True


def intent_removed(tx: Transaction, plan: Plan, item: CodeIntent, args: Args) -> bool:
    """An intent goes only once no change points at it (its own, or one it shares)."""
    for c in every(plan, "CC") or []:
        change = cast("CodeChange", c)
        if change["intent_ref"] == item["id"]:
            fix = f"plan change set {change['id']} --intent CI-n (another intent)"
        elif item["id"] in change["shared_intents"]:
            fix = f"plan change set {change['id']} --intent {change['intent_ref']} (its own alone)"
        else:
            continue
        raise PreconditionFailed(
            f"{item['id']}: {change['id']} still points at it; nothing removed (fix: {fix}, "
            f"then plan intent remove {item['id']})"
        )
    refresh_waves(plan)
    return True


def change_moved(tx: Transaction, plan: Plan, item: CodeChange, args: Args) -> bool:
    """A new change realises its --intent; a change given another moves to that intent's
    milestone. Its diff is checked as it now stands."""
    intent = args["intent"]
    if intent and item.get("intent_ref"):
        find(plan, intent, "CI")
        owner(plan, item["id"])["code_changes"].remove(item)
        owner(plan, intent)["code_changes"].append(item)
        item["shared_intents"] = []  # it now implements the one intent it was given
    item["intent_ref"] = intent or item["intent_ref"]  # (a new one: its --intent)
    check_diff(tx, item["diff"], item["file"])
    return bool(intent)


def change_home(plan: Plan, args: Args) -> list[CodeChange]:
    find(plan, args["intent"], "CI")
    return owner(plan, args["intent"])["code_changes"]


def context(field: str) -> Callable[[Plan, Args], list[Any]]:
    """The list of the planning context that `add` puts a new item in."""
    return lambda plan, args: cast("dict[str, list[Any]]", plan["planning_context"])[field]


MILESTONE = dict(
    name="name",
    file="files",
    requirement="requirements",
    acceptance="acceptance_criteria",
    risk="risk",
    depends="depends_on",
    doc_only="is_documentation_only",
    flag="flags",
    delegated_to="delegated_to",
)
TESTS = dict(
    file="files",
    type="type",
    backing="backing",
    normal="scenarios.normal",
    edge="scenarios.edge",
    error="scenarios.error",
    skip_reason="skip_reason",
)
KNOWLEDGE = dict(
    architecture_diagram="architecture.diagram_ascii",
    architecture="architecture.description",
    data_flow_diagram="data_flow.diagram_ascii",
    data_flow="data_flow.description",
    structure_rationale="structure_rationale",
)
INTENT = dict(
    file="file", function="function", behavior="behavior", param="params", decision="decision_refs"
)
CHANGE = dict(file="file", diff="diff", why="why_comments", context_lines="context_lines")
DOC = dict(
    module_comment="module_comment",
    docstring="docstrings",
    algorithm="algorithm_blocks",
    inline="inline_comments",
)
KINDS = {
    "overview": Kind(
        "overview", "", dict(title="title", problem="problem", approach="approach"), "overview"
    ),
    "decision": Kind(
        "decision",
        "DL",
        dict(decision="decision", reasoning="reasoning_chain", question="question_refs"),
        model="Decision",
        home=context("decision_log"),
    ),
    "alternative": Kind(
        "alternative",
        "RA",
        dict(alternative="alternative", reason="rejection_reason", decision="decision_ref"),
        model="RejectedAlternative",
        home=context("rejected_alternatives"),
    ),
    "constraint": Kind(
        "constraint",
        "C",
        dict(type="type", description="description", source="source"),
        model="Constraint",
        home=context("constraints"),
    ),
    "risk": Kind(
        "risk",
        "R",
        dict(risk="risk", mitigation="mitigation", anchor="anchor", decision="decision_ref"),
        model="Risk",
        home=context("known_risks"),
    ),
    "knowledge": Kind("knowledge", "", KNOWLEDGE, "invisible_knowledge"),
    "milestone": Kind(
        "milestone",
        "M",
        MILESTONE,
        model="Milestone",
        home=lambda plan, args: plan["milestones"],
        paths=("file",),
    ),
    "milestone tests": Kind("milestone", "M", TESTS, "tests", paths=("file",)),
    "intent": Kind(
        "intent",
        "CI",
        INTENT,
        model="CodeIntent",
        home=lambda plan, args: find(plan, args["milestone"], "M")["code_intents"],
        paths=("file",),
        holder=lambda plan, item_id: owner(plan, item_id)["code_intents"],
    ),
    "change": Kind("change", "CC", CHANGE, model="CodeChange", home=change_home),
    "doc": Kind("doc", "M", DOC, "documentation"),
}

overview_set = ItemOp(KINDS["overview"], "set")
decision_add = ItemOp(KINDS["decision"], "add", then=decision_added)
decision_set = ItemOp(KINDS["decision"], "set")
alternative_add = ItemOp(KINDS["alternative"], "add")
alternative_set = ItemOp(KINDS["alternative"], "set")
constraint_add = ItemOp(KINDS["constraint"], "add")
constraint_set = ItemOp(KINDS["constraint"], "set")
risk_add = ItemOp(KINDS["risk"], "add")
risk_set = ItemOp(KINDS["risk"], "set")
knowledge_set = ItemOp(KINDS["knowledge"], "set")
milestone_add = ItemOp(KINDS["milestone"], "add", then=milestone_added)
EDITS = tuple(f"{verb}_{name}" for name, _, _ in ITEM_EDITS for verb in ("add", "remove"))
milestone_set = ItemOp(KINDS["milestone"], "set", EDITS, then=milestone_edited)
milestone_tests = ItemOp(KINDS["milestone tests"], "tests")
intent_add = ItemOp(KINDS["intent"], "add", ("milestone",), then=intent_added)
intent_set = ItemOp(KINDS["intent"], "set")
intent_remove = ItemOp(KINDS["intent"], "remove", then=intent_removed)
change_add = ItemOp(KINDS["change"], "add", ("intent",), then=change_moved)
change_set = ItemOp(KINDS["change"], "set", ("intent",), then=change_moved)
doc_set = ItemOp(KINDS["doc"], "set")


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


def invariant_add(tx: Transaction, *, text: str) -> None:
    """Add an invariant the code must keep."""
    tx.edit("plan")["invisible_knowledge"]["invariants"].append(text)


def tradeoff_add(tx: Transaction, *, text: str) -> None:
    """Add a tradeoff the design accepts."""
    tx.edit("plan")["invisible_knowledge"]["tradeoffs"].append(text)
