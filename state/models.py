"""The pydantic v2 models: the single source of every state file's schema (PRODUCT.md §3).

Hot paths never import this module (it costs ~15x `python -c pass`); they check documents
against the JSON Schema exported from it (state/schemas/, kept fresh by a test).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


def _id(prefix: str) -> Any:
    return Field(pattern=rf"^{prefix}-\d{{3,}}$")


Timestamp = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")]
DecisionId = Annotated[str, _id("DL")]
MilestoneId = Annotated[str, _id("M")]
IntentId = Annotated[str, _id("CI")]
QuestionId = Annotated[str, _id("Q")]
Severity = Literal["MUST", "SHOULD", "COULD"]
Phase = Literal["plan-design", "plan-code", "plan-docs", "impl-code", "impl-docs"]


# ---------------------------------------------------------------- plan.json


class Overview(Strict):
    title: str = ""
    problem: str = ""
    approach: str = ""


class Decision(Strict):
    id: DecisionId
    decision: str
    reasoning_chain: str
    timestamp: Timestamp
    question_refs: list[QuestionId] = []
    superseded_by: DecisionId | None = None
    superseded_reason: str | None = None


class RejectedAlternative(Strict):
    id: Annotated[str, _id("RA")]
    alternative: str
    rejection_reason: str
    decision_ref: DecisionId


class Constraint(Strict):
    id: Annotated[str, _id("C")]
    type: str
    description: str
    source: str = ""


class Risk(Strict):
    id: Annotated[str, _id("R")]
    risk: str
    mitigation: str
    anchor: str | None = None
    decision_ref: DecisionId | None = None


class ChoiceOption(Strict):
    id: Annotated[str, Field(pattern=r"^OPT-[A-Z]+$")]
    name: str
    description: str = ""
    pros: list[str] = []
    cons: list[str] = []
    recommended: bool = False


class Choice(Strict):
    id: Annotated[str, _id("D")]
    topic: str
    options: list[ChoiceOption]
    picked: str | None = None
    rationale: str | None = None
    decision_ref: DecisionId | None = None


class PlanningContext(Strict):
    decision_log: list[Decision] = []
    rejected_alternatives: list[RejectedAlternative] = []
    constraints: list[Constraint] = []
    known_risks: list[Risk] = []
    choices: list[Choice] = []


class Diagram(Strict):
    diagram_ascii: str = ""
    description: str = ""


class InvisibleKnowledge(Strict):
    architecture: Diagram = Diagram()
    data_flow: Diagram = Diagram()
    structure_rationale: str = ""
    invariants: list[str] = []
    tradeoffs: list[str] = []


class Scenarios(Strict):
    normal: list[str] = []
    edge: list[str] = []
    error: list[str] = []


class Tests(Strict):
    files: list[str] = []
    type: str | None = None
    backing: str | None = None
    scenarios: Scenarios = Scenarios()
    skip_reason: str | None = None


class CodeIntent(Strict):
    id: IntentId
    file: str
    function: str | None = None
    behavior: str
    decision_refs: list[DecisionId] = []
    params: dict[str, str] = {}


class CodeChange(Strict):
    id: Annotated[str, _id("CC")]
    intent_ref: IntentId
    file: str
    diff: str
    context_lines: Annotated[int, Field(ge=0)] = 3
    why_comments: list[str] = []


class Documentation(Strict):
    module_comment: str | None = None
    docstrings: list[str] = []
    algorithm_blocks: list[str] = []
    inline_comments: list[str] = []


class Milestone(Strict):
    id: MilestoneId
    number: Annotated[int, Field(ge=1)]
    name: str
    files: list[str] = []
    flags: list[str] = []
    requirements: list[str] = []
    acceptance_criteria: list[str] = []
    risk: Literal["low", "medium", "high"] = "medium"
    depends_on: list[MilestoneId] = []
    tests: Tests = Tests()
    code_intents: list[CodeIntent] = []
    code_changes: list[CodeChange] = []
    documentation: Documentation = Documentation()
    is_documentation_only: bool = False
    delegated_to: str | None = None


class Wave(Strict):
    wave: Annotated[int, Field(ge=1)]
    milestones: list[MilestoneId]


class MilestoneDependencies(Strict):
    diagram_ascii: str = ""
    waves: list[Wave] = []


class Plan(Strict):
    schema_version: Literal[2] = 2
    plan_id: str
    created_at: Timestamp
    frozen_at: Timestamp | None = None
    overview: Overview = Overview()
    planning_context: PlanningContext = PlanningContext()
    invisible_knowledge: InvisibleKnowledge = InvisibleKnowledge()
    milestones: list[Milestone] = []
    milestone_dependencies: MilestoneDependencies = MilestoneDependencies()


# ---------------------------------------------------------------- context.json


class TaskSpec(Strict):
    goal: str = ""
    scope: str = ""
    out_of_scope: str = ""


class QuestionOption(Strict):
    label: str
    description: str = ""


class Question(Strict):
    id: QuestionId
    category: Literal["clarification", "scope", "technical", "priority", "constraint"]
    kind: Literal["choice", "yes_no", "text"]
    text: str
    why: str = ""
    options: list[QuestionOption] = []
    recommended: str | None = None
    asked_at: Timestamp
    answer: str | None = None
    answered_at: Timestamp | None = None
    skipped: bool = False
    assumed: bool = False


class Gathered(Strict):
    base: str | None = None
    scanned_at: Timestamp | None = None
    documents: list[str] = []
    changed_files: list[str] = []
    change_types: list[str] = []
    relevant_documents: dict[str, list[str]] = {}
    summary: str = ""


class Context(Strict):
    schema_version: Literal[1] = 1
    task_spec: TaskSpec = TaskSpec()
    constraints: list[str] = []
    entry_points: list[str] = []
    rejected_alternatives: list[str] = []
    current_understanding: list[str] = []
    assumptions: list[str] = []
    invisible_knowledge: list[str] = []
    user_quotes: list[str] = []
    gathered: Gathered = Gathered()
    questions: list[Question] = []


# ---------------------------------------------------------------- qr-{phase}.json


class QRItem(Strict):
    id: Annotated[str, _id("qa")]
    check: str
    scope: str = "*"
    severity: Severity = "MUST"
    status: Literal["TODO", "PASS", "FAIL"] = "TODO"
    finding: str | None = None
    source: Literal["validator", "reviewer"] = "reviewer"
    iteration: Annotated[int, Field(ge=1)] = 1


class Acceptance(Strict):
    by: str
    reason: str
    at: Timestamp
    items: list[str]


class QRReport(Strict):
    schema_version: Literal[1] = 1
    phase: Phase
    iteration: Annotated[int, Field(ge=1)] = 1
    items: list[QRItem] = []
    accepted: Acceptance | None = None


# ---------------------------------------------------------------- session.json


class Config(Strict):
    """Effective settings (PRODUCT.md §6.6); durations are seconds, 0 = none."""

    interactive: bool = True
    questions_min: Annotated[int, Field(ge=0)] = 3
    questions_max: Annotated[int, Field(ge=0)] = 5
    max_rejects: Annotated[int, Field(ge=1)] = 3
    approval_timeout: Annotated[int, Field(ge=0)] = 1800
    question_timeout: Annotated[int, Field(ge=0)] = 0
    qr_max_iterations: Annotated[int, Field(ge=1)] = 5
    depth: Literal["quick", "standard"] = "standard"
    guard: Literal["standard", "strict"] = "standard"


class QRLoop(Strict):
    iteration: Annotated[int, Field(ge=1)] = 1
    state: Literal["initial", "retry", "complete", "escalated", "accepted"] = "initial"
    gate: list[str] = []  # the gate command that passes once findings are accepted


class ReviewComment(Strict):
    """A reviewer's remark anchored to a plan item (DL-003, M-002) or a line of a change's diff."""

    anchor: Annotated[str, Field(pattern=r"^[A-Za-z]+-\d+$")]
    line: Annotated[int, Field(ge=1)] | None = None  # a line of CC-nnn's diff (1-based)
    text: Annotated[str, Field(min_length=1)]


class Review(Strict):
    round: Annotated[int, Field(ge=1)]
    verdict: Literal["submitted", "approved", "rejected"]
    at: Timestamp
    by: str | None = None
    feedback: str | None = None
    comments: list[ReviewComment] = []
    sha256: str | None = None
    revision: str | None = None


class Approval(Strict):
    by: str
    at: Timestamp
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


SessionStatus = Literal[
    "discovery",
    "design",
    "detailing",
    "review",
    "approved",
    "executing",
    "completed",
    "cancelled",
    "failed",
]


class Session(Strict):
    schema_version: Literal[1] = 1
    id: str
    task: str
    created_at: Timestamp
    updated_at: Timestamp
    status: SessionStatus = "discovery"
    project_root: str
    base_commit: str | None = None
    workflow: Literal["planner", "executor"] = "planner"
    step: Annotated[int, Field(ge=1)] = 1
    reached: dict[str, int] = {}
    next_command: str | None = None
    routing: dict[str, list[str]] = {}  # argv of the last routing, for `planner next`
    non_interactive: bool = False
    config: Config = Config()
    qr: dict[str, QRLoop] = {}
    rejects: Annotated[int, Field(ge=0)] = 0
    reviews: list[Review] = []
    review_started_at: Timestamp | None = None
    approval: Approval | None = None
    reason: str | None = None


# ---------------------------------------------------------------- execution.json


class MilestoneRun(Strict):
    id: MilestoneId
    status: Literal["pending", "in_progress", "done"] = "pending"
    started_at: Timestamp | None = None
    done_at: Timestamp | None = None
    evidence: list[str] = []


class Deviation(Strict):
    id: Annotated[str, _id("DV")]
    milestone: MilestoneId
    description: str
    at: Timestamp


class Execution(Strict):
    schema_version: Literal[1] = 1
    base_commit: str | None = None
    started_at: Timestamp | None = None
    drift: list[str] = []
    stale_diffs: list[str] = []  # planned diffs that no longer apply at executor step 1
    milestones: list[MilestoneRun] = []
    deviations: list[Deviation] = []
    tests_run: list[str] = []


MODELS: dict[str, type[BaseModel]] = {
    "plan": Plan,
    "context": Context,
    "qr": QRReport,
    "session": Session,
    "execution": Execution,
    "config": Config,
}


def export_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of one state file, as pydantic generates it."""
    return MODELS[name].model_json_schema()


if __name__ == "__main__":  # python -m state.models: regenerate state/schemas/
    import json
    import os

    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemas")
    for schema_name in MODELS:
        with open(os.path.join(here, f"{schema_name}.json"), "w", encoding="utf-8") as f:
            json.dump(export_schema(schema_name), f, indent=1, sort_keys=True)
            f.write("\n")
