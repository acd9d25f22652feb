"""What a workflow is made of: a table of Steps, each of a Kind that knows how to act.

A Kind is a small class: what must hold to arrive (check), what arriving records
(arrive), what its template sees (context) and where it leads (routing). The engine walks
any table; workflows register their own kinds.
"""

from __future__ import annotations

from shared.routing import Routing, step_argv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from state.errors import Finding
    from state.store import Store, Transaction

KINDS: dict[str, Kind] = {}


class Step:
    """One row of a workflow table."""

    __slots__ = (
        "kind",
        "name",
        "number",
        "on_arrive",
        "on_fail",
        "phase",
        "requires",
        "role",
        "skip",
        "status",
        "template",
    )

    def __init__(
        self,
        number: int,
        name: str,
        kind: str,
        template: str,
        role: str | None = None,
        phase: str | None = None,
        skip: tuple[str, ...] = (),
        on_fail: int | None = None,
        status: str | None = None,
        requires: tuple[str, ...] = (),
        on_arrive: tuple[str, ...] = (),
    ):
        self.number, self.name, self.kind, self.template = number, name, kind, template
        self.requires = requires  # names of the workflow's checks that must pass to arrive
        self.on_arrive = on_arrive  # names of the workflow's actions that arriving runs
        self.status = status  # the session status arriving here sets
        self.role = role  # who does the work: architect, developer, technical-writer, …
        self.phase = phase  # the QR phase the step executes, reviews or gates
        self.skip = skip  # names of the workflow's skip rules that leave this step out
        self.on_fail = on_fail  # where a failed gate sends the session back


class Workflow:
    def __init__(
        self,
        name: str,
        title: str,
        steps: tuple[Step, ...],
        templates: list[str],
        skip_rules: dict[str, Callable[[Context], bool]],
        checks: dict[str, Callable[[Context], list[Finding]]],
        requirements: dict[str, Callable[[Context], list[Finding]]],
        actions: dict[str, Callable[[Context, Transaction], None]] | None = None,
    ):
        self.name, self.title, self.steps = name, title, steps
        self.templates = templates  # template search path: the workflow's dir, then shared
        self.skip_rules = skip_rules
        self.checks = checks  # QR phase -> what the validator checks before the reviewer
        self.requirements = requirements  # name -> what must hold to arrive at a step
        self.actions = actions or {}  # name -> what arriving at a step records
        self.by_number = {s.number: s for s in steps}

    def mechanical_checks(self, ctx: Context) -> list[Finding]:
        return self.checks[ctx.step.phase or ""](ctx)

    def unmet(self, ctx: Context) -> list[Finding]:
        """What the step requires and the session does not have yet."""
        return [f for name in ctx.step.requires for f in self.requirements[name](ctx)]

    @property
    def total(self) -> int:
        return len(self.steps)

    def step(self, number: int) -> Step:
        from state.errors import UsageError

        if number not in self.by_number:
            raise UsageError(f"--step: {self.name} has steps 1 to {self.total}, not {number}")
        return self.by_number[number]

    def following(self, number: int, ctx: Context) -> tuple[Step | None, list[Step]]:
        """The next step after `number` that is not skipped, and the steps skipped on the way."""
        skipped = []
        for step in self.steps:
            if step.number <= number:
                continue
            if any(self.skip_rules[rule](ctx) for rule in step.skip):
                skipped.append(step)
                continue
            return step, skipped
        return None, skipped


class Context:
    """One invocation: the workflow, the step, the session, the flags; documents read lazily."""

    def __init__(
        self,
        workflow: Workflow,
        step: Step,
        store: Store,
        session: dict[str, Any],
        flags: dict[str, Any],
    ):
        self.workflow, self.step, self.store, self.session = workflow, step, store, session
        self.flags = flags  # qr_status, format, non_interactive, …
        self.tx: Transaction | None = None  # set while an arrival is being recorded
        self._docs: dict[str, dict[str, Any] | None] = {}

    def doc(self, name: str) -> dict[str, Any]:
        found = self.doc_or_none(name)
        if found is None:
            from state.errors import PreconditionFailed

            raise PreconditionFailed(f"{self.store.path(name)}: not found")
        return found

    def doc_or_none(self, name: str) -> dict[str, Any] | None:
        if self.tx is not None:
            return self.tx.read_or_none(name)
        if name not in self._docs:
            self._docs[name] = self.store.read_or_none(name)
        return self._docs[name]

    def forget(self) -> None:
        """Drop cached documents after a write, so the template sees what was recorded."""
        self._docs.clear()

    @property
    def state_dir(self) -> str:
        return self.store.dir

    @property
    def config(self) -> dict[str, Any]:
        return self.session["config"]

    @property
    def policy(self) -> str:
        """Why nobody is asked (PRODUCT.md §6.4), or "" when the session is interactive."""
        import os

        if self.flags.get("non_interactive") or self.session["non_interactive"]:
            return "--non-interactive"
        if not self.config["interactive"]:
            return "interactive = false in the configuration"
        return "CI is set" if os.environ.get("CI") else ""

    @property
    def non_interactive(self) -> bool:
        return bool(self.policy)

    def argv(self, number: int, qr_status: str | None = None) -> list[str]:
        return step_argv(self.workflow.name, number, self.state_dir, qr_status)

    def role_argv(self, role: str) -> list[str]:
        return ["planner", "role", role, "--state-dir", self.state_dir]


class Kind:
    """The base every step kind extends; the defaults suit a step that only prints a prompt."""

    name = "prompt"

    def needs_verdict(self, ctx: Context) -> bool:
        """Whether the step is run with --qr-status pass|fail."""
        return False

    def check(self, ctx: Context) -> list[Finding]:
        """What must hold before the session may arrive here (exit 3 lists the rest)."""
        return []

    def arrive(self, ctx: Context, tx: Transaction) -> None:
        """What arriving records (first arrival only; re-rendering records nothing)."""

    def context(self, ctx: Context) -> dict[str, Any]:
        """Variables for the step's template."""
        return {}

    def routing(self, ctx: Context) -> Routing:
        following, skipped = ctx.workflow.following(ctx.step.number, ctx)
        note = skipped_note(skipped)
        if following is None:
            return Routing(done=True, note=note)
        return Routing(next=ctx.argv(following.number), note=note)


def skipped_note(skipped: list[Step]) -> str:
    if not skipped:
        return ""
    names = ", ".join(f"{s.number} {s.name}" for s in skipped)
    return f"Skipping step{'s' if len(skipped) > 1 else ''} {names}."


def kind(cls: type[Kind]) -> type[Kind]:
    """Register a step kind by its name."""
    KINDS[cls.name] = cls()
    return cls
