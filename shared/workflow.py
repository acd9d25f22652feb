"""What a workflow is made of: a table of Steps, each of a Kind that knows how to act, and
the registry through which the entry points hand the engine its workflows.

A Kind is a small class: what must hold to arrive (check), what arriving records
(arrive), what its template sees (context) and where it leads (routing). The engine walks
any table; a row names its kind, requirements, actions and skip rules as objects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypedDict, overload

from shared.registry import LOADERS
from shared.registry import register as register
from shared.routing import Routing
from state.errors import Finding, PreconditionFailed, UsageError
from state.routes import Route, StepRef
from state.vocab import Phase, SessionStatus, WorkflowName

if TYPE_CHECKING:
    from collections.abc import Mapping

    from state.rules.session_store import Store, Transaction
    from state.storage.documents import Config, Execution, Plan, QRReport, Session
    from state.storage.documents import Context as ContextDoc
    from state.storage.store import DocName, Document, QRName

Requirement = Callable[["Context"], list[Finding]]  # what must hold to arrive at a step
Action = Callable[["Context", "Transaction"], None]  # what arriving at a step records
SkipRule = Callable[["Context"], bool]  # whether the step is left out


class Flags(TypedDict, total=False):
    """A step script's options, as click names them (cli/steps.py); absent means not given."""

    state_dir: str | None
    step: int
    format: str | None
    qr_status: str | None
    non_interactive: bool
    new_session: bool
    task: str | None
    depth: Literal["quick", "standard"] | None


@dataclass(frozen=True)
class Step:
    """One row of a workflow table."""

    number: int
    name: str
    kind: type[Kind]
    template: str
    role: str | None = None  # who does the work: architect, developer, technical-writer, …
    phase: Phase | None = None  # the QR phase the step executes, reviews or gates
    skip: tuple[SkipRule, ...] = ()  # rules that leave this step out
    on_fail: str | None = None  # the step (by name) a failed gate sends the session back to
    on_reject: dict[Phase, str] | None = None  # phase -> the step (by name) a rejection reopens
    status: SessionStatus | None = None  # the session status arriving here sets
    requires: tuple[Requirement, ...] = ()  # what must hold to arrive
    on_arrive: tuple[Action, ...] = ()  # what arriving records, before the kind's own arrive


@dataclass
class Workflow:
    """A workflow's table of steps and what its steps share (a docstring: without one,
    dataclass builds one from inspect.signature at import)."""

    name: WorkflowName
    title: str
    steps: tuple[Step, ...]
    templates: list[str]  # template search path: the workflow's dir, then shared
    checks: dict[Phase, Requirement]  # QR phase -> what the validator checks before the reviewer
    start: Callable[[Workflow, Flags], str] | None = None  # step 1 with --task: what to print
    by_number: dict[int, Step] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.by_number = {s.number: s for s in self.steps}
        for step in self.steps:  # the table names its targets by name: each one exists
            for name in (step.on_fail or step.name, *(step.on_reject or {}).values()):
                self.named(name)

    def named(self, name: str) -> Step:
        """The step called `name` (routes name steps; numbers are the table's business)."""
        for step in self.steps:
            if step.name == name:
                return step
        raise UsageError(f"{self.name} has no step named {name!r}")

    def skipped(self, step: Step, ctx: Context) -> bool:
        return any(rule(ctx) for rule in step.skip)

    def mechanical_checks(self, ctx: Context) -> list[Finding]:
        return self.checks[ctx.step.phase](ctx) if ctx.step.phase else []

    @property
    def total(self) -> int:
        return len(self.steps)

    def step(self, number: int) -> Step:
        if number not in self.by_number:
            raise UsageError(f"--step: {self.name} has steps 1 to {self.total}, not {number}")
        return self.by_number[number]

    def following(self, number: int, ctx: Context) -> tuple[Step | None, list[Step]]:
        """The next step after `number` that is not skipped, and the steps skipped on the way."""
        skipped: list[Step] = []
        for step in (s for s in self.steps if s.number > number):
            if not self.skipped(step, ctx):
                return step, skipped
            skipped.append(step)
        return None, skipped


def registered(name: str) -> Workflow | None:
    """The workflow registered as `name` (shared/registry.py), or None when this process
    registered none such."""
    load = LOADERS.get(name)
    found = load() if load else None
    if found is not None and not isinstance(found, Workflow):
        raise TypeError(f"workflow {name!r} was registered with a loader of {found!r}")
    return found


def workflow_named(name: str) -> Workflow:
    found = registered(name)
    if found is None:
        raise UsageError(f"no workflow named {name!r} is registered in this process")
    return found


def step_ref(route: Route, state_dir: str) -> StepRef:
    """The step `route` names (state/routes.py), in the session at `state_dir`."""
    row = workflow_named(route.workflow).named(route.step)
    return StepRef(route.workflow, row.name, row.number, state_dir)


class Context:
    """One invocation: the workflow, the step, the session, the flags; documents read lazily."""

    def __init__(
        self, workflow: Workflow, step: Step, store: Store, session: Session, flags: Flags
    ):
        self.workflow, self.step, self.store, self.session = workflow, step, store, session
        self.flags = flags  # qr_status, format, non_interactive, …
        self.tx: Transaction | None = None  # set while an arrival is being recorded
        self.worktree = ""  # where a kind's ready() made the session's worktree, if it did
        self._docs: dict[str, Document | None] = {}

    @overload
    def doc(self, name: Literal["plan"]) -> Plan: ...
    @overload
    def doc(self, name: Literal["context"]) -> ContextDoc: ...
    @overload
    def doc(self, name: Literal["execution"]) -> Execution: ...
    def doc(self, name: Literal["plan", "context", "execution"]) -> Document:
        found = self.doc_or_none(name)
        if found is None:
            raise PreconditionFailed(f"{self.store.path(name)}: not found")
        return found

    @overload
    def doc_or_none(self, name: Literal["plan"]) -> Plan | None: ...
    @overload
    def doc_or_none(self, name: Literal["context"]) -> ContextDoc | None: ...
    @overload
    def doc_or_none(self, name: Literal["execution"]) -> Execution | None: ...
    @overload
    def doc_or_none(self, name: Literal["session"]) -> Session | None: ...
    @overload
    def doc_or_none(self, name: QRName) -> QRReport | None: ...
    def doc_or_none(self, name: DocName) -> Document | None:
        if self.tx is not None:
            return self.tx.read_or_none(name)
        if name not in self._docs:
            self._docs[name] = self.store.read_or_none(name)
        return self._docs[name]

    def report(self) -> QRReport | None:
        """The QR report of the step's phase (None when it has none, or none yet)."""
        from state.storage.store import report_name  # the store loads when a step reads

        return self.doc_or_none(report_name(self.step.phase)) if self.step.phase else None

    def forget(self) -> None:
        """Drop cached documents after a write, so the template sees what was recorded."""
        self._docs.clear()

    @property
    def state_dir(self) -> str:
        return self.store.dir

    @property
    def config(self) -> Config:
        return self.session["config"]

    @property
    def policy(self) -> str:
        """Why nobody is asked, or "" when the session is interactive: the mode recorded when
        the session was created, never the environment (`CI`) or a later step's flags
        (docs/design.md, "Who approves")."""
        recorded = self.session.get("policy")
        if recorded:
            return recorded
        if self.session["non_interactive"]:  # a session made before `policy` was recorded
            return "--non-interactive"
        return "" if self.config["interactive"] else "interactive = false in the configuration"

    @property
    def non_interactive(self) -> bool:
        return bool(self.policy)

    def to(self, step: Step | str, qr_status: Literal["pass", "fail"] | None = None) -> StepRef:
        """The step of this workflow named `step` (or that row of its table), as a target."""
        row = self.workflow.named(step) if isinstance(step, str) else step
        return StepRef(self.workflow.name, row.name, row.number, self.state_dir, qr_status)

    def role_argv(self, role: str) -> list[str]:
        return ["planner", "role", role, "--state-dir", self.state_dir]


class Kind:
    """The base every step kind extends; the defaults suit a step that only prints a prompt."""

    shows_words = True
    """Whether the step's prompt shows the user's words (its template includes _user.j2):
    only such a step counts as having shown them whole (shared/words.py)."""

    def needs_verdict(self, ctx: Context) -> bool:
        """Whether the step is run with --qr-status pass|fail."""
        return False

    def check(self, ctx: Context) -> list[Finding]:
        """What must hold before the session may arrive here (exit 3 lists the rest)."""
        return []

    def arrive(self, ctx: Context, tx: Transaction) -> None:
        """What arriving records (first arrival only; re-rendering records nothing)."""

    def context(self, ctx: Context) -> Mapping[str, object]:
        """Variables for the step's template (a kind may return its own TypedDict)."""
        return {}

    def chains(self, ctx: Context) -> bool:
        """Whether the step needs no agent work before the step its routing names, which then
        runs in the same call (a gate's verdict, a start that only says where things are)."""
        return False

    def ready(self, ctx: Context) -> None:
        """Work done after the arrival is committed and before the prompt is printed, outside
        the session's lock (a checkout); it must be idempotent: a re-render runs it again."""

    def routing(self, ctx: Context) -> Routing:
        following, skipped = ctx.workflow.following(ctx.step.number, ctx)
        note = skipped_note(skipped)
        if following is None:
            return Routing(done=True, note=note)
        return Routing(next=ctx.to(following), note=note)


def skipped_note(skipped: list[Step]) -> str:
    if not skipped:
        return ""
    names = ", ".join(f"{s.number} {s.name}" for s in skipped)
    return f"Skipping step{'s' if len(skipped) > 1 else ''} {names}."
