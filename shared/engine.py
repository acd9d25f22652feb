"""Walks a workflow table: decides whether a step may run, records the arrival, prints it.

Arriving at a step (by its routing, or back at one reached before) records state in one
transaction; running the step the session is at again only re-renders: nothing is written.
"""

from __future__ import annotations

import itertools
import json
import os
from typing import TYPE_CHECKING

from shared.kinds import Gate
from shared.paths import open_session
from shared.routing import Routing, RoutingJson, command
from shared.status import current_routing
from shared.words import answers_line, note_words, user_words, words_in_full, words_line
from shared.workflow import Context, Flags, Kind, Step, Workflow
from state import clock
from state.errors import Finding, PreconditionFailed, Refused, UsageError
from state.routes import StepRef
from state.rules.lifecycle import transition
from state.rules.session_store import Store, tampered
from state.vocab import ENDED, EngineMode

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NotRequired

    from state.rules.session_store import Transaction
    from state.storage.documents import Session

SHARED_TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")


class StepRecord(RoutingJson):
    """A step as printed: `--format json` shows it without "text" (and "state_dir" for the
    steps that ran before it in the same call); "next", "if_pass", "if_fail" or "done" are
    its routing (Routing.as_json)."""

    workflow: str
    step: int
    total: int
    name: str
    phase: str | None
    role: str | None
    state_dir: str
    prompt: str
    text: str
    verdict: NotRequired[str | None]
    note: NotRequired[str]


def open_for_steps(store: Store) -> Session:
    """The session, unless it is cancelled or failed: then no step runs (exit 4)."""
    return _refuse_closed(store, store.read("session"))


def _refuse_closed(store: Store, session: Session) -> Session:
    if session["status"] in ENDED:
        reason = f" ({session['reason']})" if session.get("reason") else ""
        raise Refused(f"{store.path('session')}: the session is {session['status']}{reason}")
    return session


def mode(workflow: Workflow, step: Step, store: Store, session: Session) -> EngineMode:
    """Arrive, re-render, or a refusal (raised)."""
    here = (session["workflow"], session["step"])
    if here == (workflow.name, step.number):
        return EngineMode.RERENDER
    if workflow.name != session["workflow"] and step.number == 1:
        return EngineMode.ARRIVE  # entering another workflow: its first step's check decides
    live = current_routing(store, session)
    if (workflow.name, step.name) in {(s.workflow, s.name) for s in live.steps()}:
        return EngineMode.ARRIVE
    reached = session["reached"].get(workflow.name, 0)
    if session["workflow"] == workflow.name and step.number <= reached:
        return EngineMode.ARRIVE  # back to a step reached before
    nxt = " / ".join(live.lines())  # one line in the finding
    raise PreconditionFailed(
        f"{workflow.name} step {step.number} is out of order: the session is at "
        f"{here[0]} step {here[1]}",
        [_next_finding(nxt)],
    )


def _next_finding(nxt: str) -> Finding:
    return Finding("session.json", "run the step the routing names", nxt)


def run(workflow: Workflow, number: int, flags: Flags, store: Store | None = None) -> str:
    """Run step `number` of `workflow`; returns what to print (cli/output.py prints it).

    Reading the session, deciding (out of order, re-render, arrival, the gate's verdict) and
    recording the arrival happen in one transaction, under the session's lock: the same step
    run 16 times at once arrives once. The prompt is printed after the commit. A step that
    needs no agent work (a gate, or a kind whose `chains` says so) arrives at the step its
    routing names in the same transaction and prints both: one call per phase, wholly there
    or wholly absent (docs/design.md, "One call per gate").
    """
    if store is None:
        store = open_session(flags.get("state_dir"))
    return show(decide(workflow, number, flags, store, follow=True), flags)


def show(chain: list[Decided], flags: Flags) -> str:
    """The steps one call decided, as printed (after its commit): the work a step needs done
    outside the lock first (`Kind.ready`), then each step, the last with its routing."""
    for ctx, step_kind, _ in chain:
        step_kind.ready(ctx)
    said = [any(kind.shows_words for _, kind, _ in chain[:n]) for n in range(len(chain))]
    # a verdict's chain is named once by its first line (`chained`): no "step N follows" lines
    then = not (flags.get("qr_status") and len(chain) > 1)
    earlier = [
        render_step(ctx, kind, routing, (nxt[0].workflow.name, nxt[0].step.number), said[n], then)
        for n, ((ctx, kind, routing), nxt) in enumerate(itertools.pairwise(chain))
    ]
    return printed(render_step(*chain[-1], words_said=said[-1]), flags, earlier=earlier)


def step_target(routing: Routing) -> StepRef | None:
    """The step a single NEXT line runs, when it runs a step."""
    return routing.next if isinstance(routing.next, StepRef) else None


Decided = tuple[Context, Kind, Routing]


def decide(
    workflow: Workflow,
    number: int,
    flags: Flags,
    store: Store,
    follow: bool = False,
    before: Callable[[Transaction], None] | None = None,
) -> list[Decided]:
    """Decide and record (or re-render) step `number`, and with `follow` the steps its routing
    leads to in the same workflow while the step just decided needs no agent work (`chains`),
    in one transaction; the contexts to print with, in order. `before` runs first in that
    transaction (`plan apply --verdict`: the review's records, then their gate)."""
    decided: list[Decided] = []
    with store.transaction(f"{workflow.name} step {number}") as tx:
        if before is not None:
            before(tx)
        decided.append(_decide_in(tx, workflow, number, flags, store))
        while follow and len(decided) <= workflow.total:
            ctx, kind, routing = decided[-1]
            target = step_target(routing) if kind.chains(ctx) else None
            if target is None or target.workflow != workflow.name:
                break
            following: Flags = {"state_dir": store.dir, "format": flags.get("format")}
            following["non_interactive"] = bool(flags.get("non_interactive"))
            decided.append(_decide_in(tx, workflow, target.number, following, store))
    for ctx, _, _ in decided:
        ctx.tx = None
        ctx.forget()
        ctx.session = store.read("session")
    return decided


def _decide_in(
    tx: Transaction, workflow: Workflow, number: int, flags: Flags, store: Store
) -> Decided:
    step = workflow.step(number)
    step_kind = step.kind()
    session = _refuse_closed(store, tx.read("session"))
    ctx = Context(workflow, step, store, session, flags)
    ctx.tx = tx
    verdict = flags.get("qr_status")
    if step_kind.needs_verdict(ctx) != bool(verdict):
        need = "needs --qr-status pass|fail" if verdict is None else "takes no --qr-status"
        raise UsageError(f"--qr-status: {workflow.name} step {number} ({step.name}) {need}")
    _check_approved(tx)
    if flags.get("non_interactive") and not ctx.non_interactive:
        raise Refused(
            f"--non-interactive: {session['id']} is interactive, and a session's mode is fixed"
            " when it is created (start a new one with planner --step 1 --non-interactive)"
        )
    if flags.get("new_session"):
        how = EngineMode.ARRIVE
    elif _gate_done(step_kind, ctx, verdict) or _passed_by_chain(step_kind, ctx):
        how = EngineMode.RERENDER  # the step ran and moved on: the same call again changes nothing
    else:
        how = mode(workflow, step, store, session)
    if how is EngineMode.RERENDER:
        _check_same_verdict(step_kind, ctx, verdict)
        return ctx, step_kind, step_kind.routing(ctx)
    return ctx, step_kind, arrive(ctx, step_kind)


def _gate_done(step_kind: Kind, ctx: Context, verdict: str | None) -> bool:
    """Whether this gate already ran with this verdict and the session is at the step its
    routing led to (the step the gate ran in the same call)."""
    if not isinstance(step_kind, Gate) or not verdict or step_kind.outcome(ctx) != verdict:
        return False
    here = (ctx.session["workflow"], ctx.session["step"])
    if here[0] != ctx.workflow.name or here[1] == ctx.step.number:
        return False
    target = step_target(step_kind.routing(ctx))
    return (
        target is not None
        and target.workflow == here[0]
        and _chain_reaches_here(ctx, target.number)
    )


def _passed_by_chain(step_kind: Kind, ctx: Context) -> bool:
    """Whether this step (not a gate) ran in a call that went on to the step the session is
    at: running it again re-renders the chain instead of arriving back here."""
    if isinstance(step_kind, Gate) or ctx.session["workflow"] != ctx.workflow.name:
        return False
    return ctx.step.number < ctx.session["step"] and _chain_reaches_here(ctx, ctx.step.number)


def _chain_reaches_here(ctx: Context, start: int) -> bool:
    """Whether every step from `start` up to the one the session is at needs no agent work,
    so that one call went through them all."""
    if start > ctx.session["step"]:
        return False  # the session went back since
    for number in range(start, ctx.session["step"]):
        step = ctx.workflow.step(number)
        there = Context(ctx.workflow, step, ctx.store, ctx.session, ctx.flags)
        there.tx = ctx.tx
        if not step.kind().chains(there):
            return False
    return True


RESTORE = "plan restore; to change the approved plan, after it: plan amend --reason '…'"


def _check_approved(tx: Transaction) -> None:
    """Frozen means approved: once approved, no step runs on a plan.json changed since."""
    reason = tampered(tx.read("session"), tx.read_or_none("plan"))
    if reason:
        raise PreconditionFailed(
            f"{tx.store.path('plan')}: {reason}", [Finding("plan.json", reason, RESTORE)]
        )


def _check_same_verdict(step_kind: Kind, ctx: Context, verdict: str | None) -> None:
    recorded = step_kind.outcome(ctx) if isinstance(step_kind, Gate) else None
    if verdict and recorded not in (None, "none", verdict):
        raise PreconditionFailed(
            f"{ctx.workflow.name} step {ctx.step.number}: the gate already ran with {recorded}",
            [_next_finding(ctx.session["next_command"] or "planner status")],
        )


def arrive(ctx: Context, step_kind: Kind) -> Routing:
    """Check and record the arrival and the routing in the transaction run() holds (ctx.tx);
    return the routing."""
    tx = ctx.tx
    assert tx is not None, "arrive() runs inside run()'s transaction"
    # what the step requires and the session does not have yet
    problems = [f for requirement in ctx.step.requires for f in requirement(ctx)]
    problems += step_kind.check(ctx)
    if problems:
        raise PreconditionFailed(
            f"{ctx.workflow.name} step {ctx.step.number} ({ctx.step.name}): not ready", problems
        )
    session = tx.edit("session")
    ctx.session = session
    if ctx.step.status:
        transition(session, ctx.step.status)
    for action in ctx.step.on_arrive:
        action(ctx, tx)
    step_kind.arrive(ctx, tx)
    note_words(ctx, step_kind, session)
    routing = step_kind.routing(ctx)
    reached = session["reached"]
    reached[ctx.workflow.name] = max(reached.get(ctx.workflow.name, 0), ctx.step.number)
    session["workflow"] = ctx.workflow.name
    session["step"] = ctx.step.number
    session["updated_at"] = clock.now()
    session["next_command"] = "\n".join(routing.lines())
    tx.note(step=ctx.step.name)
    return routing


def render_step(
    ctx: Context,
    step_kind: Kind,
    routing: Routing,
    follows: tuple[str, int] | None = None,
    words_said: bool = False,
    then: bool = True,
) -> StepRecord:
    """The step as printed: its JSON record, with "text" for the text form. A gate followed
    by the step it leads to (`follows`) keeps its verdict and leaves the routing to that step.
    `then`: say which step follows (a verdict's chain names them all in its first line
    instead)."""
    step, workflow = ctx.step, ctx.workflow
    prompt = step_prompt(ctx, step_kind, words_said)
    record: StepRecord = {
        "workflow": workflow.name,
        "step": step.number,
        "total": workflow.total,
        "name": step.name,
        "phase": step.phase,
        "role": step.role,
        "state_dir": ctx.state_dir,
        "prompt": prompt,
        "text": "",
    }
    header = f"{workflow.title} {step.number}/{workflow.total} {step.name}"
    note = [routing.note] if routing.note else []
    if routing.note:
        record["note"] = routing.note
    if follows is not None:
        record["verdict"] = ctx.flags.get("qr_status")
        follow = [f"{follows[0]} step {follows[1]} follows (run here: do not run it again)."]
        record["text"] = "\n".join([header, prompt, *note, *(follow if then else []), "", ""])
        return record
    record = {**record, **routing.as_json()}
    lines = [header, f"STATE_DIR={ctx.state_dir}", "", prompt, "", *note, *routing.shown()]
    record["text"] = "\n".join(lines) + "\n"
    return record


def step_prompt(ctx: Context, step_kind: Kind, words_said: bool) -> str:
    """The step's template rendered with the session, the user's words and the kind's own
    variables. `words_said`: a step printed before it in the same call showed the user's
    words (whole or as their one line), and they are not repeated."""
    from shared.render import render  # jinja2: only printing a step needs it, not `plan status`

    words = user_words(ctx.session, ctx.doc_or_none("context"))
    full = words_in_full(ctx, step_kind, words)
    variables = {
        "state_dir": ctx.state_dir,
        "session": ctx.session,
        "step": ctx.step,
        "role_command": command(ctx.role_argv(ctx.step.role)) if ctx.step.role else "",
        "interactive": not ctx.non_interactive,
        "policy": ctx.policy,
        **words,
        "words_line": "" if full else words_line(ctx, words),
        "answers_line": answers_line(ctx, words) if full else "",
        "words_said": words_said and not full,
        **step_kind.context(ctx),
    }
    return render(ctx.step.template, variables, ctx.workflow.templates).strip()


def printed(record: StepRecord, flags: Flags, earlier: list[StepRecord]) -> str:
    """A step as printed: its text, or one JSON object; the steps that ran before it in the
    same call come first (text) or under "gate" (JSON, the first of them; "before" lists them
    all: the object is the step the session is at, its routing what is next)."""
    if flags.get("format") == "json":
        shown = {k: v for k, v in record.items() if k != "text"}
        cut = [{k: v for k, v in e.items() if k not in ("text", "state_dir")} for e in earlier]
        if cut:
            shown["gate"] = cut[0]
            shown["before"] = cut
        return json.dumps(shown, ensure_ascii=False) + "\n"
    first = chained(earlier, record) if flags.get("qr_status") else ""
    return first + "".join(e["text"] for e in earlier) + record["text"]


def chained(earlier: list[StepRecord], record: StepRecord) -> str:
    """The first line of a verdict's call that ran several steps (its gate and the steps the
    gate leads to): which, and the one the work is at, before any of them is read."""
    if not earlier:
        return ""
    steps = [str(e["step"]) for e in [*earlier, record]]
    named = ", ".join(steps[:-1]) + " and " + steps[-1]
    return (
        f"{record['workflow']} steps {named} follow (run here: do not run them again); "
        f"work at step {record['step']}.\n\n"
    )
