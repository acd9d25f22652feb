"""The pydantic v2 models: the single source of every state file's schema.

Hot paths never import this module (it costs ~15x `python -c pass`); they check documents
against the JSON Schema exported from it (state/storage/schemas/, kept fresh by a test).
"""

from __future__ import annotations

import json
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field

from state import vocab

# The words of state/vocab.py that the files hold. The type checker sees each Enum itself;
# pydantic sees a Literal of its members, so the JSON Schema holds the plain words (an `enum`,
# no $defs) and a file's string validates in strict mode: schemas and files are what string
# Literals gave (tests/test_vocabulary.py).
WORDS: tuple[type[vocab.Word], ...] = (
    vocab.ItemStatus,
    vocab.LoopState,
    vocab.Phase,
    vocab.QuestionKind,
    vocab.ResultVerdict,
    vocab.ReviewVerdict,
    vocab.RunStatus,
    vocab.SessionStatus,
    vocab.Severity,
    vocab.WorkflowName,
)
TYPE_CHECKING = False
if TYPE_CHECKING:
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
else:
    globals().update({e.__name__: Literal[tuple(e)] for e in WORDS})


class Strict(BaseModel):
    # A field's docstring is its description in the exported JSON Schema (plan schema NAME).
    model_config = ConfigDict(extra="forbid", strict=True, use_attribute_docstrings=True)


def _id(prefix: str) -> Any:
    return Field(pattern=rf"^{prefix}-\d{{3,}}$")


Timestamp = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")]
DecisionId = Annotated[str, _id("DL")]
MilestoneId = Annotated[str, _id("M")]
IntentId = Annotated[str, _id("CI")]
QuestionId = Annotated[str, _id("Q")]


# ---------------------------------------------------------------- plan.json


class Overview(Strict):
    title: str = ""
    """The plan's title, the first line of plan.md."""
    problem: str = ""
    """What is wrong or missing today, in the user's terms."""
    approach: str = ""
    """How the plan solves it, in a few sentences."""


class Decision(Strict):
    id: DecisionId
    """DL-NNN, assigned by the CLI."""
    decision: str
    """What was decided."""
    reasoning_chain: str
    """Why: the reasoning that led to the decision."""
    timestamp: Timestamp
    """When it was recorded (UTC, ISO 8601)."""
    question_refs: list[QuestionId] = []
    """The questions (Q-NNN) whose answers this decision rests on."""
    superseded_by: DecisionId | None = None
    """The decision (DL-NNN) that replaced this one, if any."""
    superseded_reason: str | None = None
    """Why it was superseded."""


class RejectedAlternative(Strict):
    id: Annotated[str, _id("RA")]
    """RA-NNN, assigned by the CLI."""
    alternative: str
    """The option that was not taken."""
    rejection_reason: str
    """Why it was rejected."""
    decision_ref: DecisionId
    """The decision (DL-NNN) it lost to."""


class Constraint(Strict):
    id: Annotated[str, _id("C")]
    """C-NNN, assigned by the CLI."""
    type: str
    """Its kind, e.g. MUST or SHOULD, technical or organisational."""
    description: str
    """What must hold."""
    source: str = ""
    """Where it comes from (the user, a document, the code)."""


class Risk(Strict):
    id: Annotated[str, _id("R")]
    """R-NNN, assigned by the CLI."""
    risk: str
    """What could go wrong."""
    mitigation: str
    """What the plan does about it."""
    anchor: str | None = None
    """Where in the code the risk lives, if anywhere."""
    decision_ref: DecisionId | None = None
    """The decision (DL-NNN) the risk follows from, if any."""


class ChoiceOption(Strict):
    id: Annotated[str, Field(pattern=r"^OPT-[A-Z]+$")]
    """OPT-X: the option's letter."""
    name: str
    """A short name for the option."""
    description: str = ""
    """What the option means."""
    pros: list[str] = []
    """Its advantages."""
    cons: list[str] = []
    """Its drawbacks."""
    recommended: bool = False
    """Whether the architect recommends it."""


class Choice(Strict):
    id: Annotated[str, _id("D")]
    """D-NNN, assigned by the CLI."""
    topic: str
    """The design question the options answer."""
    options: list[ChoiceOption]
    """The options put to the user (OPT-A, OPT-B, ...)."""
    picked: str | None = None
    """The option picked (OPT-X), once the user chose."""
    rationale: str | None = None
    """Why that option was picked."""
    decision_ref: DecisionId | None = None
    """The decision (DL-NNN) recorded for the pick."""


class PlanningContext(Strict):
    decision_log: list[Decision] = []
    """Every decision with its reasoning (DL-NNN)."""
    rejected_alternatives: list[RejectedAlternative] = []
    """Alternatives considered and rejected (RA-NNN)."""
    constraints: list[Constraint] = []
    """What the plan must respect (C-NNN)."""
    known_risks: list[Risk] = []
    """Risks and their mitigations (R-NNN)."""
    choices: list[Choice] = []
    """Design choices put to the user (D-NNN)."""


class Diagram(Strict):
    diagram_ascii: str = ""
    """An ASCII diagram."""
    description: str = ""
    """What the diagram shows, in words."""


class InvisibleKnowledge(Strict):
    architecture: Diagram = Diagram()
    """The architecture the change lives in."""
    data_flow: Diagram = Diagram()
    """How data moves through it."""
    structure_rationale: str = ""
    """Why the code is structured this way."""
    invariants: list[str] = []
    """What must stay true."""
    tradeoffs: list[str] = []
    """Trade-offs made knowingly."""


class Scenarios(Strict):
    normal: list[str] = []
    """Scenarios of normal use the tests cover."""
    edge: list[str] = []
    """Edge cases the tests cover."""
    error: list[str] = []
    """Error cases the tests cover."""


class Tests(Strict):
    files: list[str] = []
    """Test files to write or change."""
    type: str | None = None
    """The kind of tests (unit, integration, end-to-end, ...)."""
    backing: str | None = None
    """What backs the tests (real services, fakes, fixtures)."""
    scenarios: Scenarios = Scenarios()
    """The scenarios the tests cover."""
    skip_reason: str | None = None
    """Why the milestone has no tests, if it has none."""


class CodeIntent(Strict):
    id: IntentId
    """CI-NNN, assigned by the CLI."""
    file: str
    """The file to change, relative to the project root."""
    function: str | None = None
    """The function or class to change, if one."""
    behavior: str
    """The behaviour the change must produce."""
    decision_refs: list[DecisionId] = []
    """The decisions (DL-NNN) the intent implements."""
    params: dict[str, str] = {}
    """Named parameters of the intent."""


class CodeChange(Strict):
    id: Annotated[str, _id("CC")]
    """CC-NNN, assigned by the CLI."""
    intent_ref: IntentId
    """The intent (CI-NNN) this change implements."""
    shared_intents: list[IntentId] = []
    """Other intents (CI-NNN) of its milestone this one diff implements too (intents that
    change one file together, captured at once)."""
    file: str
    """The file the diff applies to, relative to the project root."""
    diff: str
    """A unified diff against the file as earlier waves leave it."""
    context_lines: Annotated[int, Field(ge=0)] = 3
    """Context lines in the diff's hunks."""
    why_comments: list[str] = []
    """Comments that say why, to go into the code."""


class Documentation(Strict):
    module_comment: str | None = None
    """The module comment to write or update."""
    docstrings: list[str] = []
    """Docstrings to write or update."""
    algorithm_blocks: list[str] = []
    """Explanations of algorithms to put beside them."""
    inline_comments: list[str] = []
    """Inline comments to add."""


class Milestone(Strict):
    id: MilestoneId
    """M-NNN, assigned by the CLI."""
    number: Annotated[int, Field(ge=1)]
    """Its position, from 1."""
    name: str
    """A short name."""
    files: list[str] = []
    """Files the milestone touches."""
    flags: list[str] = []
    """Free-form flags."""
    requirements: list[str] = []
    """What the milestone must achieve."""
    acceptance_criteria: list[str] = []
    """How to tell it is done."""
    risk: Literal["low", "medium", "high"] = "medium"
    """How risky it is: low, medium or high."""
    depends_on: list[MilestoneId] = []
    """Milestones (M-NNN) that must be done first."""
    tests: Tests = Tests()
    """The tests that prove it."""
    code_intents: list[CodeIntent] = []
    """What to change, file by file (CI-NNN)."""
    code_changes: list[CodeChange] = []
    """The planned diffs that implement the intents (CC-NNN)."""
    documentation: Documentation = Documentation()
    """The documentation the milestone writes."""
    is_documentation_only: bool = False
    """True when it changes documentation only."""
    delegated_to: str | None = None
    """Who or which agent carries it out, if delegated."""


class Wave(Strict):
    wave: Annotated[int, Field(ge=1)]
    """The wave's number, from 1."""
    milestones: list[MilestoneId]
    """Milestones (M-NNN) that can run in this wave, in parallel."""


class MilestoneDependencies(Strict):
    diagram_ascii: str = ""
    """The dependency graph as ASCII."""
    waves: list[Wave] = []
    """Waves computed from depends_on (never set by hand)."""


class Plan(Strict):
    schema_version: Literal[2] = 2
    """The plan.json format: 2."""
    plan_id: str
    """A UUID, assigned when the session starts."""
    created_at: Timestamp
    """When the plan was created (UTC, ISO 8601)."""
    frozen_at: Timestamp | None = None
    """When the plan was approved and frozen; null while it may change."""
    overview: Overview = Overview()
    """Title, problem and approach."""
    planning_context: PlanningContext = PlanningContext()
    """Decisions, rejected alternatives, constraints, risks and choices."""
    invisible_knowledge: InvisibleKnowledge = InvisibleKnowledge()
    """What the code does not show: architecture, data flow, invariants."""
    milestones: list[Milestone] = []
    """The milestones, in order (M-NNN)."""
    milestone_dependencies: MilestoneDependencies = MilestoneDependencies()
    """The dependency diagram and waves."""


# ---------------------------------------------------------------- context.json


class TaskSpec(Strict):
    goal: str = ""
    """What the task must achieve."""
    scope: str = ""
    """What is in scope."""
    out_of_scope: str = ""
    """What is explicitly out of scope."""


class QuestionOption(Strict):
    label: str
    """The answer as the user picks it."""
    description: str = ""
    """What picking it means."""


class Question(Strict):
    id: QuestionId
    """Q-NNN, assigned by the CLI."""
    category: Literal["clarification", "scope", "technical", "priority", "constraint"]
    """clarification, scope, technical, priority or constraint."""
    kind: QuestionKind
    """choice, yes_no or text: how it is answered."""
    text: str
    """The question as the user sees it."""
    why: str = ""
    """Why the answer matters for the plan."""
    options: list[QuestionOption] = []
    """The options of a choice question."""
    recommended: str | None = None
    """The recommended answer, if any."""
    asked_at: Timestamp
    """When it was asked (UTC, ISO 8601)."""
    answer: str | None = None
    """The user's answer, once given (a choice's option label, yes or no, or the text)."""
    condition: str | None = None
    """What the user attached to the answer ("yes, but only for admins": but only for
    admins), shown with the answer wherever the user's words are."""
    answered_at: Timestamp | None = None
    """When it was answered."""
    skipped: bool = False
    """True when the user skipped it."""
    assumed: bool = False
    """True when the recommended answer was assumed (non-interactive, or a timeout)."""
    about: str = ""
    """What the executor asks the person about ("DV-001", "M-001"); empty for discovery's
    questions. Only these may be added and answered once the plan is approved."""


class Gathered(Strict):
    base: str | None = None
    """The git ref the scan compared against."""
    scanned_at: Timestamp | None = None
    """When the project was scanned."""
    documents: list[str] = []
    """Documentation files found in the project."""
    changed_files: list[str] = []
    """Files changed since the base."""
    change_types: list[str] = []
    """Kinds of change found (code, docs, config, ...)."""
    relevant_documents: dict[str, list[str]] = {}
    """Documents relevant to each changed file."""
    summary: str = ""
    """The scan in one paragraph."""


class Context(Strict):
    schema_version: Literal[1] = 1
    """The context.json format: 1."""
    task_spec: TaskSpec = TaskSpec()
    """Goal, scope and what is out of scope."""
    constraints: list[str] = []
    """MUST and SHOULD lines from the user and the project."""
    entry_points: list[str] = []
    """Where in the code the task starts."""
    rejected_alternatives: list[str] = []
    """Approaches ruled out during discovery."""
    current_understanding: list[str] = []
    """What is known about the code so far."""
    assumptions: list[str] = []
    """What is assumed without confirmation."""
    invisible_knowledge: list[str] = []
    """What the code does not show."""
    user_quotes: list[str] = []
    """The user's own words, verbatim."""
    gathered: Gathered = Gathered()
    """What the project scan found."""
    questions: list[Question] = []
    """Questions for the user and their answers (Q-NNN)."""


# ---------------------------------------------------------------- qr-{phase}.json


class QRItem(Strict):
    id: Annotated[str, _id("qa")]
    """qa-NNN, assigned by the CLI."""
    check: str
    """What the reviewer checks."""
    scope: str = "*"
    """What it applies to (a milestone, a file, or * for all)."""
    severity: Severity = vocab.Severity.MUST
    """MUST, SHOULD or COULD: which iterations it blocks."""
    status: ItemStatus = vocab.ItemStatus.TODO
    """TODO, PASS or FAIL."""
    finding: str | None = None
    """What the reviewer found, for a FAIL."""
    source: Literal["validator", "reviewer"] = "reviewer"
    """validator (from plan validate) or reviewer."""
    iteration: Annotated[int, Field(ge=1)] = 1
    """The review iteration that added it."""
    judged: str | None = None
    """For a PASS: the sha256 of what its scope held when it passed (an item and its
    changes, or a file's intents and changes); when that content changes, back to TODO."""
    milestones: dict[str, str] | list[str] | None = None
    """For a PASS: each milestone it judged (its scope's; for *, all the plan held) with the
    sha256 of what the milestone held for the phase; one changed, added or reopened since
    needs another judgement. (A list: the ids, recorded before the hashes.)"""


class Acceptance(Strict):
    by: str
    """Who accepted the open findings."""
    reason: str
    """Why they were accepted."""
    at: Timestamp
    """When (UTC, ISO 8601)."""
    items: list[str]
    """The items (qa-NNN) accepted."""


class QRReport(Strict):
    schema_version: Literal[1] = 1
    """The qr-{phase}.json format: 1."""
    phase: Phase
    """The review phase this report belongs to."""
    iteration: Annotated[int, Field(ge=1)] = 1
    """The current review iteration, from 1."""
    items: list[QRItem] = []
    """The review items (qa-NNN)."""
    accepted: Acceptance | None = None
    """Findings accepted without a fix, if any."""


# ---------------------------------------------------------------- session.json


class Config(Strict):
    """Effective settings; durations are seconds, 0 = none."""

    interactive: bool = True
    """Whether the agent asks the user questions."""
    questions_min: Annotated[int, Field(ge=0)] = 3
    """The fewest questions discovery asks."""
    questions_max: Annotated[int, Field(ge=0)] = 5
    """The most questions discovery asks."""
    max_rejects: Annotated[int, Field(ge=1)] = 3
    """Rejections after which the session is cancelled."""
    approval_timeout: Annotated[int, Field(ge=0)] = 1800
    """Seconds to wait for approval before cancelling (0 = forever)."""
    question_timeout: Annotated[int, Field(ge=0)] = 0
    """Seconds to wait for an answer before assuming the recommended one (0 = forever)."""
    qr_max_iterations: Annotated[int, Field(ge=1)] = 5
    """Review iterations before a loop escalates to the user."""
    depth: Literal["quick", "standard"] = "standard"
    """quick or standard planning."""
    guard: Literal["standard", "strict"] = "standard"
    """standard or strict read-only guard while planning."""
    commit: Literal["milestone", "none"] = "milestone"
    """milestone: `plan exec commit` commits each milestone; none: changes stay uncommitted."""


class StoredStep(Strict):
    """A step a routing leads to (state/routes.py StepRef, without the session's directory)."""

    workflow: WorkflowName
    """The step's workflow."""
    name: str | None
    """The step's name in its table (None: converted from an older planner's command line)."""
    number: Annotated[int, Field(ge=1)]
    """The step's number in its table."""
    qr_status: Literal["pass", "fail"] | None = None
    """The verdict a gate step runs with."""


class QRLoop(Strict):
    iteration: Annotated[int, Field(ge=1)] = 1
    """The loop's current iteration, from 1."""
    state: LoopState = vocab.LoopState.INITIAL
    """initial, retry, complete, escalated or accepted."""
    gate: StoredStep | None = None
    """The gate step that passes once findings are accepted."""


class ReviewComment(Strict):
    """A reviewer's remark anchored to a plan item (DL-003, M-002) or a line of a change's diff."""

    anchor: Annotated[str, Field(pattern=r"^[A-Za-z]+-\d+$")]
    """The id of the item the remark is on: DL-003, M-002, CC-004, Q-001."""
    line: Annotated[int, Field(ge=1)] | None = None
    """For a CC- anchor: the changed file's line (new-file numbering) the diff shows."""
    text: Annotated[str, Field(min_length=1)]
    """The remark."""


class Review(Strict):
    round: Annotated[int, Field(ge=1)]
    """The review round, from 1."""
    verdict: ReviewVerdict
    """submitted, approved or rejected."""
    at: Timestamp
    """When the verdict was given (UTC, ISO 8601)."""
    by: str | None = None
    """Who gave it."""
    feedback: str | None = None
    """The user's words on a rejection."""
    comments: list[ReviewComment] = []
    """Remarks anchored to items or diff lines (the review page, plan review reject --comment)."""
    sha256: str | None = None
    """The hash of the plan content the verdict was on."""
    revision: str | None = None
    """The plan revision (history/rN) the round saw."""


class Signature(Strict):
    format: Literal["ssh", "openpgp"]
    """ssh or openpgp: git's gpg.format of the signer."""
    version: int = 1
    """What is signed: 2 the session, by, at and sha256 (canonical JSON); 1 (older sessions)
    the session and sha256 only."""
    fingerprint: str = ""
    """The signing key's fingerprint (SHA256:… for ssh, the OpenPGP fingerprint)."""
    key: str = ""
    """Version 1 only: the signing key as user.signingkey named it (a local path; now empty)."""
    signature: str
    """The armored detached signature of what `version` says."""


class Approval(Strict):
    by: str
    """Who approved."""
    at: Timestamp
    """When (UTC, ISO 8601)."""
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    """The sha256 of the canonical plan content that was approved."""
    signature: Signature | None = None
    """A signature of the approval with the approver's git signing key, if signed."""


class ResultComment(Strict):
    """A reviewer's remark on the result: a milestone (M-002), a line of its commit's diff
    (M-002, a file and its new-file line), a planned change's line (CC-004) or a deviation."""

    anchor: Annotated[str, Field(pattern=r"^[A-Za-z]+-\d+$")]
    """The id the remark is on: M-002, CC-004, DV-001, DL-003."""
    file: str | None = None
    """For an M- anchor on its commit's diff: the changed file."""
    line: Annotated[int, Field(ge=1)] | None = None
    """The changed file's line (new-file numbering) the diff shows."""
    text: Annotated[str, Field(min_length=1)]
    """The remark."""


class ResultReview(Strict):
    round: Annotated[int, Field(ge=1)]
    """The result review round, from 1."""
    verdict: ResultVerdict
    """submitted (waiting for the person), accepted or changes_requested."""
    at: Timestamp
    """When the round opened or the verdict was given (UTC, ISO 8601)."""
    by: str | None = None
    """Who gave the verdict ("policy" when nobody was asked)."""
    feedback: str | None = None
    """The person's words on a request for changes (the amendment's task)."""
    comments: list[ResultComment] = []
    """Remarks anchored to milestones, commit diff lines, planned changes, deviations."""
    sha256: str | None = None
    """The hash of the result the person was shown (state/ops/result_view.py)."""
    policy: bool = False
    """True when a non-interactive session was accepted by policy, nobody asked."""


class Amendment(Strict):
    """A round of changes to an approved plan (`plan amend`): what it reopens, the approval it
    amends and, once the person re-approves, its own approval (docs/design.md, "Amendments")."""

    round: Annotated[int, Field(ge=1)]
    """The amendment round, from 1."""
    reason: str
    """Why the plan is amended."""
    task: str | None = None
    """The person's words when a result review asked for changes."""
    opened_at: Timestamp
    """When the round was opened (UTC, ISO 8601)."""
    from_status: str
    """The session's status when it was opened: approved, executing or result_review."""
    milestones: list[MilestoneId]
    """The not-yet-committed milestones (M-NNN) it reopens; new milestones are open anyway."""
    approval: Approval
    """The approval it amends: the previous link of the chain of approvals."""
    approved: Approval | None = None
    """Its own re-approval, once the person gave it."""


class Session(Strict):
    schema_version: Literal[1] = 1
    """The session.json format: 1."""
    id: str
    """The session's id: date, a slug of the task, a random part."""
    task: str
    """The task as the user gave it."""
    created_at: Timestamp
    """When the session started (UTC, ISO 8601)."""
    updated_at: Timestamp
    """When it last changed."""
    status: SessionStatus = vocab.SessionStatus.DISCOVERY
    """Where the session is in its lifecycle."""
    project_root: str
    """The project the session plans for."""
    base_commit: str | None = None
    """The git commit the session started from."""
    workflow: WorkflowName = vocab.WorkflowName.PLANNER
    """planner or executor: the workflow running now."""
    step: Annotated[int, Field(ge=1)] = 1
    """The current step of the workflow."""
    reached: dict[str, int] = {}
    """The furthest step reached, per workflow."""
    next_command: str | None = None
    """The command to run next."""
    non_interactive: bool = False
    """True when no user answers questions (fixed when the session is created)."""
    policy: str | None = None
    """Why nobody is asked, fixed when the session was created: "--non-interactive on step 1"
    or "interactive = false in FILE" (committed); None: the person is asked and approves."""
    config: Config = Config()
    """The effective settings."""
    qr: dict[str, QRLoop] = {}
    """The review loops by phase."""
    rejects: Annotated[int, Field(ge=0)] = 0
    """How many times the plan was rejected."""
    reviews: list[Review] = []
    """The review rounds and their verdicts."""
    review_started_at: Timestamp | None = None
    """When the plan went into review."""
    approval: Approval | None = None
    """The approval record, once approved."""
    reason: str | None = None
    """Why the session was cancelled or failed."""
    result_reviews: list[ResultReview] = []
    """The result review rounds after executor step 9 and their verdicts."""
    amendments: list[Amendment] = []
    """The amendment rounds, oldest first; the last is open until re-approved."""
    words_shown: str | None = None
    """Where the user's words were last shown whole, and what they were then:
    "workflow:step:sha256" (a step shows them whole again only when they changed)."""


# ---------------------------------------------------------------- execution.json


class MilestoneRun(Strict):
    id: MilestoneId
    """The milestone (M-NNN)."""
    status: RunStatus = vocab.RunStatus.PENDING
    """pending, in_progress or done."""
    started_at: Timestamp | None = None
    """When work on it started."""
    done_at: Timestamp | None = None
    """When it was done."""
    evidence: list[str] = []
    """What shows it is done (test runs, commits)."""
    tests_run: list[str] = []
    """Test files run for it (`plan exec done --ran`)."""
    applied_at: Timestamp | None = None
    """When `plan exec apply` applied its planned diffs."""
    commit: str | None = None
    """The commit `plan exec commit` made of it."""
    fix_commits: list[str] = []
    """Commits `plan exec commit` made of it after that one (fixes, naming their deviations)."""
    dirty_at_apply: list[str] = []
    """Its files that held uncommitted edits of the person's when `plan exec apply` ran:
    `plan exec commit` refuses them unless --include-uncommitted."""
    overlap_question: QuestionId | None = None
    """The yes/no question (Q-NNN) asking the person whether to apply it over commits another
    planner session made to its files since the base commit."""


class Deviation(Strict):
    id: Annotated[str, _id("DV")]
    """DV-NNN, assigned by the CLI."""
    milestone: MilestoneId
    """The milestone (M-NNN) that deviated."""
    description: str
    """What was done differently from the plan, and why."""
    at: Timestamp
    """When it was recorded."""
    commit: str | None = None
    """The commit that carried it out (`plan exec commit` names it there)."""
    significant: list[str] = []
    """Why it is significant, one reason a line (a file outside its milestone, an acceptance
    criterion dropped, a dependency added); empty for an ordinary deviation."""
    question: QuestionId | None = None
    """The question (Q-NNN) asking the person about it: continue, amend or stop."""


class Execution(Strict):
    schema_version: Literal[1] = 1
    """The execution.json format: 1."""
    base_commit: str | None = None
    """The commit execution started from."""
    started_at: Timestamp | None = None
    """When execution started."""
    drift: list[str] = []
    """Files changed since planning that the plan touches."""
    stale_diffs: list[str] = []
    """Planned diffs that no longer apply at executor step 1."""
    milestones: list[MilestoneRun] = []
    """Each milestone's progress."""
    deviations: list[Deviation] = []
    """Deviations from the plan (DV-NNN)."""
    tests_run: list[str] = []
    """Test commands run and their results."""


MODELS: dict[str, type[BaseModel]] = {
    "plan": Plan,
    "context": Context,
    "qr": QRReport,
    "session": Session,
    "execution": Execution,
    "config": Config,
}


SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def export_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of one state file, as pydantic generates it, with its dialect and id."""
    schema = MODELS[name].model_json_schema()
    return {"$schema": SCHEMA_DIALECT, "$id": f"urn:planner:schema:{name}", **schema}


def _annotation(tp: Any, nested: list[type[BaseModel]]) -> str:
    """A field's type as a TypedDict spells it: models by name, Annotated constraints dropped."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return _annotation(args[0], nested)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        nested.append(tp)
        return tp.__name__
    if origin is Literal and all(isinstance(a, vocab.Word) for a in args):
        return type(args[0]).__name__  # a word of state/vocab.py: the Enum by name
    if origin is Literal:
        return f"Literal[{', '.join(json.dumps(a) for a in args)}]"
    if origin in (Union, UnionType):
        return " | ".join(_annotation(a, nested) for a in args)
    if origin in (list, dict):
        return f"{origin.__name__}[{', '.join(_annotation(a, nested) for a in args)}]"
    if tp is type(None):
        return "None"
    if tp in (str, int, bool, float):
        return str(tp.__name__)
    raise TypeError(f"no TypedDict spelling for {tp!r}")


def _field(name: str, spelled: str) -> str:
    """One field's line; a Literal too long for a line, one value a line (as ruff formats it)."""
    line = f"    {name}: {spelled}"
    if len(line) <= 100 or not spelled.startswith("Literal["):
        return line
    values = "".join(f"        {v},\n" for v in spelled[len("Literal[") : -1].split(", "))
    return f"    {name}: Literal[\n{values}    ]"


def typed_dicts() -> str:
    """state/storage/documents.py: every model as a TypedDict, dependencies first."""
    done: dict[type[BaseModel], str] = {}

    def emit(model: type[BaseModel]) -> None:
        if model in done:
            return
        nested: list[type[BaseModel]] = []
        fields = [
            _field(n, _annotation(f.annotation, nested)) for n, f in model.model_fields.items()
        ]
        for inner in nested:
            emit(inner)
        done[model] = f"class {model.__name__}(TypedDict):\n" + "\n".join(fields) + "\n"

    for model in MODELS.values():
        emit(model)
    words = ",\n".join(f"    {e.__name__}" for e in WORDS)
    return DOCUMENTS_HEAD.format(words=words) + "\n\n".join(done.values())


DOCUMENTS_HEAD = '''"""The state files as TypedDicts, generated from state/storage/models.py (do not
edit; run `python -m state.storage.models`). What the store reads and edits has these shapes:
validation fills every default, so every key is present. tests/state/test_schema.py keeps this
file fresh. No `from __future__ import annotations`: typing would compile every field's
string annotation when the classes are made (~300 of them), which each step paid.
"""

from typing import Literal, TypedDict

from state.vocab import (
{words},
)


'''


if __name__ == "__main__":  # python -m state.storage.models: regenerate schemas/, documents.py
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    for schema_name in MODELS:
        with open(os.path.join(here, "schemas", f"{schema_name}.json"), "w", encoding="utf-8") as f:
            json.dump(export_schema(schema_name), f, indent=1)  # field order kept (schema.blank)
            f.write("\n")
    with open(os.path.join(here, "documents.py"), "w", encoding="utf-8") as f:
        f.write(typed_dicts())
