"""The state files as TypedDicts, generated from state/storage/models.py (do not
edit; run `python -m state.storage.models`). What the store reads and edits has these shapes:
validation fills every default, so every key is present. tests/state/test_schema.py keeps this
file fresh. No `from __future__ import annotations`: typing would compile every field's
string annotation when the classes are made (~300 of them), which each step paid.
"""

from typing import Literal, TypedDict

from state.vocab import (
    ItemStatus,
    LoopState,
    Phase,
    QuestionKind,
    ResultVerdict,
    ReviewVerdict,
    RunStatus,
    SessionStatus,
    Severity,
    WorkflowName,
)


class Overview(TypedDict):
    title: str
    problem: str
    approach: str


class Decision(TypedDict):
    id: str
    decision: str
    reasoning_chain: str
    timestamp: str
    question_refs: list[str]
    superseded_by: str | None
    superseded_reason: str | None


class RejectedAlternative(TypedDict):
    id: str
    alternative: str
    rejection_reason: str
    decision_ref: str


class Constraint(TypedDict):
    id: str
    type: str
    description: str
    source: str


class Risk(TypedDict):
    id: str
    risk: str
    mitigation: str
    anchor: str | None
    decision_ref: str | None


class ChoiceOption(TypedDict):
    id: str
    name: str
    description: str
    pros: list[str]
    cons: list[str]
    recommended: bool


class Choice(TypedDict):
    id: str
    topic: str
    options: list[ChoiceOption]
    picked: str | None
    rationale: str | None
    decision_ref: str | None


class PlanningContext(TypedDict):
    decision_log: list[Decision]
    rejected_alternatives: list[RejectedAlternative]
    constraints: list[Constraint]
    known_risks: list[Risk]
    choices: list[Choice]


class Diagram(TypedDict):
    diagram_ascii: str
    description: str


class InvisibleKnowledge(TypedDict):
    architecture: Diagram
    data_flow: Diagram
    structure_rationale: str
    invariants: list[str]
    tradeoffs: list[str]


class Scenarios(TypedDict):
    normal: list[str]
    edge: list[str]
    error: list[str]


class Tests(TypedDict):
    files: list[str]
    type: str | None
    backing: str | None
    scenarios: Scenarios
    skip_reason: str | None


class CodeIntent(TypedDict):
    id: str
    file: str
    function: str | None
    behavior: str
    decision_refs: list[str]
    params: dict[str, str]


class CodeChange(TypedDict):
    id: str
    intent_ref: str
    shared_intents: list[str]
    file: str
    diff: str
    context_lines: int
    why_comments: list[str]


class Documentation(TypedDict):
    module_comment: str | None
    docstrings: list[str]
    algorithm_blocks: list[str]
    inline_comments: list[str]


class Milestone(TypedDict):
    id: str
    number: int
    name: str
    files: list[str]
    flags: list[str]
    requirements: list[str]
    acceptance_criteria: list[str]
    risk: Literal["low", "medium", "high"]
    depends_on: list[str]
    tests: Tests
    code_intents: list[CodeIntent]
    code_changes: list[CodeChange]
    documentation: Documentation
    is_documentation_only: bool
    delegated_to: str | None


class Wave(TypedDict):
    wave: int
    milestones: list[str]


class MilestoneDependencies(TypedDict):
    diagram_ascii: str
    waves: list[Wave]


class Plan(TypedDict):
    schema_version: Literal[2]
    plan_id: str
    created_at: str
    frozen_at: str | None
    overview: Overview
    planning_context: PlanningContext
    invisible_knowledge: InvisibleKnowledge
    milestones: list[Milestone]
    milestone_dependencies: MilestoneDependencies


class TaskSpec(TypedDict):
    goal: str
    scope: str
    out_of_scope: str


class Gathered(TypedDict):
    base: str | None
    scanned_at: str | None
    documents: list[str]
    changed_files: list[str]
    change_types: list[str]
    relevant_documents: dict[str, list[str]]
    summary: str


class QuestionOption(TypedDict):
    label: str
    description: str


class Question(TypedDict):
    id: str
    category: Literal["clarification", "scope", "technical", "priority", "constraint"]
    kind: QuestionKind
    text: str
    why: str
    options: list[QuestionOption]
    recommended: str | None
    asked_at: str
    answer: str | None
    condition: str | None
    answered_at: str | None
    skipped: bool
    assumed: bool
    about: str


class Context(TypedDict):
    schema_version: Literal[1]
    task_spec: TaskSpec
    constraints: list[str]
    entry_points: list[str]
    rejected_alternatives: list[str]
    current_understanding: list[str]
    assumptions: list[str]
    invisible_knowledge: list[str]
    user_quotes: list[str]
    gathered: Gathered
    questions: list[Question]


class QRItem(TypedDict):
    id: str
    check: str
    scope: str
    severity: Severity
    status: ItemStatus
    finding: str | None
    source: Literal["validator", "reviewer"]
    iteration: int
    judged: str | None
    milestones: dict[str, str] | list[str] | None


class Acceptance(TypedDict):
    by: str
    reason: str
    at: str
    items: list[str]


class QRReport(TypedDict):
    schema_version: Literal[1]
    phase: Phase
    iteration: int
    items: list[QRItem]
    accepted: Acceptance | None


class Config(TypedDict):
    interactive: bool
    questions_min: int
    questions_max: int
    max_rejects: int
    approval_timeout: int
    question_timeout: int
    qr_max_iterations: int
    depth: Literal["quick", "standard"]
    guard: Literal["standard", "strict"]
    commit: Literal["milestone", "none"]


class StoredStep(TypedDict):
    workflow: WorkflowName
    name: str | None
    number: int
    qr_status: Literal["pass", "fail"] | None


class QRLoop(TypedDict):
    iteration: int
    state: LoopState
    gate: StoredStep | None


class ReviewComment(TypedDict):
    anchor: str
    line: int | None
    text: str


class Review(TypedDict):
    round: int
    verdict: ReviewVerdict
    at: str
    by: str | None
    feedback: str | None
    comments: list[ReviewComment]
    sha256: str | None
    revision: str | None


class Signature(TypedDict):
    format: Literal["ssh", "openpgp"]
    version: int
    fingerprint: str
    key: str
    signature: str


class Approval(TypedDict):
    by: str
    at: str
    sha256: str
    signature: Signature | None


class ResultComment(TypedDict):
    anchor: str
    file: str | None
    line: int | None
    text: str


class ResultReview(TypedDict):
    round: int
    verdict: ResultVerdict
    at: str
    by: str | None
    feedback: str | None
    comments: list[ResultComment]
    sha256: str | None
    policy: bool


class Amendment(TypedDict):
    round: int
    reason: str
    task: str | None
    opened_at: str
    from_status: str
    milestones: list[str]
    approval: Approval
    approved: Approval | None


class Session(TypedDict):
    schema_version: Literal[1]
    id: str
    task: str
    created_at: str
    updated_at: str
    status: SessionStatus
    project_root: str
    base_commit: str | None
    workflow: WorkflowName
    step: int
    reached: dict[str, int]
    next_command: str | None
    non_interactive: bool
    policy: str | None
    config: Config
    qr: dict[str, QRLoop]
    rejects: int
    reviews: list[Review]
    review_started_at: str | None
    approval: Approval | None
    reason: str | None
    result_reviews: list[ResultReview]
    amendments: list[Amendment]
    words_shown: str | None


class MilestoneRun(TypedDict):
    id: str
    status: RunStatus
    started_at: str | None
    done_at: str | None
    evidence: list[str]
    tests_run: list[str]
    applied_at: str | None
    commit: str | None
    fix_commits: list[str]
    dirty_at_apply: list[str]
    overlap_question: str | None


class Deviation(TypedDict):
    id: str
    milestone: str
    description: str
    at: str
    commit: str | None
    significant: list[str]
    question: str | None


class Execution(TypedDict):
    schema_version: Literal[1]
    base_commit: str | None
    started_at: str | None
    drift: list[str]
    stale_diffs: list[str]
    milestones: list[MilestoneRun]
    deviations: list[Deviation]
    tests_run: list[str]
