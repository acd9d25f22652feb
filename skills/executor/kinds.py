"""The executor's own parts: what its steps require and the kinds of its steps (initialisation
against the approved plan, loading, implementing wave by wave, the reviews, reconciling)."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, TypedDict

from shared import qr
from shared.kinds import Execute, Gate, Review, loop
from shared.paths import project_root
from shared.routing import Routing, command
from shared.workflow import Context, Kind, Requirement
from skills.executor import reconcile
from state import clock
from state.errors import Finding, PreconditionFailed, Refused
from state.ops.exec_ops import new_run
from state.repo import gitinfo
from state.rules.amendments import approved_revision, committed, runs_by_id
from state.rules.approval import verify
from state.validation.validate import completeness
from state.vocab import ItemStatus, LoopState, RunStatus
from state.vocab import SessionStatus as S

if TYPE_CHECKING:
    from shared.kinds import ExecuteVariables, ReviewVariables
    from state.ops.result_view import ReconcileRecord
    from state.rules.session_store import Transaction
    from state.storage.documents import Amendment, Execution, Plan

    # What steps 3, 4/7 and 6 render: the shared kinds' variables and the executor's own
    # (for annotations only, as the shared kinds' TypedDicts they extend).

    class ImplementVariables(ExecuteVariables):
        wave: int
        milestones: list[WaveMilestone]
        again: bool

    class ImplReviewVariables(ReviewVariables):
        since: list[MilestoneName]
        round: int  # the amendment round, and the PASS items standing from before it
        standing: int

    class DocsImplementVariables(ExecuteVariables):
        to_write: list[str]


class MilestoneName(TypedDict):
    """A milestone as a prompt names it (since_review)."""

    id: str
    name: str


class WaveMilestone(TypedDict):
    """A milestone of the wave step 3 implements."""

    id: str
    name: str
    status: str
    changes: list[str]
    tests: list[str]


class InitVariables(TypedDict):
    title: str
    base: str | None
    drift: list[str]
    short_sha: str
    commits: bool  # milestones are committed (config `commit`): the plan is committed first
    again: bool


class LoadVariables(TypedDict):
    diagram: str
    problems: list[str]
    again: bool


class ReconcileVariables(TypedDict):
    path: str
    table: str
    review: bool


def root(ctx: Context) -> str:
    return project_root(ctx.state_dir)


def again(ctx: Context) -> bool:
    """Whether a milestone is done: the agent has read how the executor works (at the first
    wave, or in the execution an amendment resumes), so steps 1-3 say it in a line."""
    execution = ctx.doc_or_none("execution")
    return execution is not None and any(
        r["status"] == RunStatus.DONE for r in execution["milestones"]
    )


def all_done(ctx: Context) -> list[Finding]:
    return [
        Finding(
            f"execution.json:{m['id']}",
            f"milestone is {m['status']}",
            f"plan exec done {m['id']} --evidence E",
        )
        for m in ctx.doc("execution")["milestones"]
        if m["status"] != RunStatus.DONE
    ]


def record(ctx: Context) -> ReconcileRecord:
    return reconcile.build(ctx.doc("plan"), ctx.doc("execution"), root(ctx))


def review_findings(docs: bool) -> Requirement:
    def findings(ctx: Context) -> list[Finding]:
        return reconcile.findings(record(ctx), ctx.doc("plan"), docs)

    return findings


class ExecInit(Kind):
    """Step 1: the plan is frozen and approved as is; record the base commit and any drift."""

    shows_words = False

    def chains(self, ctx: Context) -> bool:
        return True  # loading follows in the same call

    def check(self, ctx: Context) -> list[Finding]:
        problems = verify(ctx.doc("plan"), ctx.session)
        if not problems and gitinfo.head_commit(root(ctx)) is None:
            problems.append(
                Finding(
                    root(ctx),
                    "not a git repository with a commit: the executor reconciles against git",
                    "git init && git commit",
                )
            )
        return problems

    def arrive(self, ctx: Context, tx: Transaction) -> None:
        plan, project = ctx.doc("plan"), root(ctx)
        if ctx.doc_or_none("execution") is not None:
            resume_amended(plan, tx.edit("execution"), project)
            return
        planned = {f for m in plan["milestones"] for f in reconcile.planned_files(m)}
        since = ctx.session["base_commit"]
        where = f"{ctx.store.path('session')}:base_commit"
        changed = gitinfo.changed_files(project, since, where) if since else []
        execution: Execution = {
            "schema_version": 1,
            "base_commit": gitinfo.head_commit(project),
            "started_at": clock.now(),
            "drift": sorted(planned & set(changed)),
            "stale_diffs": stale_diffs(plan, project),
            "milestones": [new_run(m["id"]) for m in plan["milestones"]],
            "deviations": [],
            "tests_run": [],
        }
        tx.edit_or_create("execution", execution)

    def context(self, ctx: Context) -> InitVariables:
        execution = ctx.doc("execution")
        approval = ctx.session["approval"]
        return {
            "title": ctx.doc("plan")["overview"]["title"],
            "base": execution["base_commit"],
            "drift": execution["drift"],
            "short_sha": approval["sha256"][:12] if approval else "",
            "commits": ctx.session["config"]["commit"] != "none",
            "again": again(ctx),
        }


def resume_amended(plan: Plan, execution: Execution, project: str) -> None:
    """Executor step 1 again, after an amendment's re-approval: milestones done stay done, new
    ones get a run; the base commit stays (the planned diffs build on it, and reconcile reads
    every round's commits from it). Only the work left is checked for stale diffs."""
    runs = {r["id"] for r in execution["milestones"]}
    for m in plan["milestones"]:
        if m["id"] not in runs:
            execution["milestones"].append(new_run(m["id"]))
    done = {r["id"] for r in execution["milestones"] if r["status"] == RunStatus.DONE}
    left: Plan = {**plan, "milestones": [m for m in plan["milestones"] if m["id"] not in done]}
    execution["stale_diffs"] = stale_diffs(left, project)


def stale_diffs(plan: Plan, project: str) -> list[str]:
    """Planned diffs that no longer apply to the files as they are now."""
    return [f.line() for f in completeness(plan, "code", project) if ".diff" in f.path]


class Load(Kind):
    """Step 2: read the plan; the waves, and the diffs step 1 found no longer apply."""

    shows_words = False

    def chains(self, ctx: Context) -> bool:
        return True  # the first wave follows in the same call

    def context(self, ctx: Context) -> LoadVariables:
        return {
            "diagram": ctx.doc("plan")["milestone_dependencies"]["diagram_ascii"],
            "problems": ctx.doc("execution")["stale_diffs"],
            "again": again(ctx),
        }


class Implement(Execute):
    """Step 3: the developer implements the first wave that is not done; it repeats per wave."""

    def current(self, ctx: Context) -> tuple[int, list[str], bool]:
        """(wave number, its milestones not done, whether later waves still wait); (0, [],
        False) at the end (one done before an amendment is never redone)."""
        status = {m["id"]: m["status"] for m in ctx.doc("execution")["milestones"]}
        waves = ctx.doc("plan")["milestone_dependencies"]["waves"]
        for index, wave in enumerate(waves):
            if any(status.get(mid) != RunStatus.DONE for mid in wave["milestones"]):
                # a later wave done already (committed before an amendment) does not wait
                later = [m for w in waves[index + 1 :] for m in w["milestones"]]
                return (
                    wave["wave"],
                    [m for m in wave["milestones"] if status.get(m) != RunStatus.DONE],
                    any(status.get(m) != RunStatus.DONE for m in later),
                )
        return 0, [], False

    def context(self, ctx: Context) -> ImplementVariables:
        from state.ops.plan_ops import find  # on use, as asks and result_ops below

        number, ids, _ = self.current(ctx)
        plan = ctx.doc("plan")
        status = {m["id"]: m["status"] for m in ctx.doc("execution")["milestones"]}
        milestones: list[WaveMilestone] = [
            {
                "id": m["id"],
                "name": m["name"],
                "status": status.get(m["id"], RunStatus.PENDING),
                "changes": [c["id"] for c in m["code_changes"]],
                "tests": m["tests"]["files"],
            }
            for m in (find(plan, mid, "M") for mid in ids)
        ]
        return {
            **super().context(ctx),
            "wave": number,
            "milestones": milestones,
            "again": again(ctx),
        }

    def rechecking(self, ctx: Context) -> bool:
        return amended_rechecking(self, ctx)

    def routing(self, ctx: Context) -> Routing:
        """NEXT names the wave's first command, runnable as printed (the step's text says the
        rest): its last `plan exec done --commit` prints the step that follows (the JSON and
        session.json name that step)."""
        _, ids, later = self.current(ctx)
        routing = Routing(next=ctx.to("impl-execute")) if later else super().routing(ctx)
        if ids and routing.next is not None:
            routing.work = f"plan exec apply {ids[0]}"
        return routing


class ImplReview(Review):
    """Steps 4 and 7. After an amendment the items on record judged the earlier rounds' work,
    and their PASS stands: the prompt names the milestones carried out since, for new checks,
    and lists only the items still open."""

    def context(self, ctx: Context) -> ImplReviewVariables:
        found = super().context(ctx)
        rounds = ctx.session["amendments"]
        if not (rounds and found["rechecking"] and loop(ctx)["state"] == LoopState.INITIAL):
            return {**found, "since": [], "round": 0, "standing": 0}
        items = found["items"]
        return {
            **found,
            "since": since_review(ctx),
            "round": rounds[-1]["round"],
            "standing": sum(i["status"] == ItemStatus.PASS for i in items),
            "items": [i for i in items if i["status"] in qr.OPEN],
            "rechecking": False,  # new work: new checks, not `qr set` on the old ones
        }


def since_review(ctx: Context) -> list[MilestoneName]:
    """The milestones the amendment rounds reopened or added since the review last judged all
    the work: back to a round opened at the result review, which came after the review (a
    round opened earlier may bring back some already judged, which are judged again). Every
    milestone when history/ lacks the revision those rounds amended."""
    rounds: list[Amendment] = []
    for amendment in reversed(ctx.session["amendments"]):
        rounds.append(amendment)
        if amendment["from_status"] == S.RESULT_REVIEW:
            break
    found = approved_revision(ctx.store, rounds[-1]["approval"]["sha256"], ctx.session)
    before = {m["id"] for m in found[1]["milestones"]} if found else set()
    reopened = {mid for amendment in rounds for mid in amendment["milestones"]}
    return [
        {"id": m["id"], "name": m["name"]}
        for m in ctx.doc("plan")["milestones"]
        if m["id"] not in before or m["id"] in reopened
    ]


class ImplGate(Gate):
    """Step 5: the implementation gate. A pass waits for the person's answer to every
    significant deviation (state/ops/asks.py): continue goes on, amend prints
    `plan amend` and holds, stop refuses (exit 4) and leaves the session executing."""

    def check(self, ctx: Context) -> list[Finding]:
        if ctx.flags.get("qr_status") != "pass" or ctx.tx is None:
            return []
        from state.ops import asks  # ~20 M to import: only a gate's pass needs it

        tx, execution = ctx.tx, ctx.tx.read("execution")
        found = {r["id"]: asks.unrecorded(tx, r["id"]) for r in execution["milestones"]}
        if any(found.values()):
            raise held_for_questions(found)
        session, waiting, stopped = tx.read("session"), [], []
        for d in execution["deviations"]:
            q = asks.question_of(tx, d["question"]) if d["significant"] else None
            if q is None:
                continue
            where = f"execution.json:{d['id']}"
            why = f"{d['milestone']}: significant ({'; '.join(d['significant'])})"
            if q["answer"] is None:
                answer = f"plan question answer {q['id']} continue|amend|stop"
                waiting.append(
                    Finding(
                        where,
                        f"{why}; {q['id']} waits for the person's answer",
                        f"ask the person (`plan ask` in their terminal), then {answer}",
                    )
                )
            elif q["answer"] == asks.AMEND and asks.answered_since_approval(q, session):
                amend = command(["plan", "amend", "--reason", f"{d['id']}: {d['description']}"])
                run = runs_by_id(execution).get(d["milestone"])
                # a committed one stays; its correction is a new one
                if run is None or not committed(run):
                    amend += f" --milestone {d['milestone']}"
                waiting.append(
                    Finding(where, f"{why}; the person answered amend ({q['id']})", amend)
                )
            elif q["answer"] == asks.STOP:
                stopped.append(f"{d['id']} ({q['id']})")
        if stopped:
            raise Refused(
                f"the person answered stop to {', '.join(stopped)}: the executor stops here; "
                "the session stays executing (plan amend changes the plan; plan fail closes it)"
            )
        return waiting


def held_for_questions(found: dict[str, list[str]]) -> PreconditionFailed:
    """The gate held: what git shows significant in each milestone's commits (`found`) and no
    deviation records, recorded once the refusal is (a question to the person each)."""
    from state.ops import asks  # as in ImplGate.check

    def record(tx: Transaction) -> None:
        for m in found:
            asks.record_detected(tx, m)

    held = PreconditionFailed(
        "the milestones' commits hold significant deviations no one recorded: each is "
        "now recorded with a question to the person (continue / amend / stop); the "
        "gate waits for the answers",
        [Finding(f"git:{m}", "; ".join(r), "plan question list") for m, r in found.items() if r],
    )
    held.then_record = record
    return held


class DocsImplement(Execute):
    """Step 6: plan-level documentation that has no file yet; when there is none (documentation
    in files came with the milestones' diffs), the review follows in the same call."""

    def context(self, ctx: Context) -> DocsImplementVariables:
        return {**super().context(ctx), "to_write": to_write(ctx)}

    def chains(self, ctx: Context) -> bool:
        return not to_write(ctx) and loop(ctx)["state"] == LoopState.INITIAL

    def rechecking(self, ctx: Context) -> bool:
        return amended_rechecking(self, ctx)


def amended_rechecking(kind: Execute, ctx: Context) -> bool:
    """Only a failed gate's fix round re-checks a few items and goes to the gate. The executor's
    loop is "initial" with items on record only after an amendment (state/ops/amend_ops.py): the
    last round's items judged other work, the amended and new milestones were never reviewed,
    so the review step runs in full."""
    return loop(ctx)["state"] != LoopState.INITIAL and Execute.rechecking(kind, ctx)


def to_write(ctx: Context) -> list[str]:
    """The milestones whose plan-level documentation (no file) is to be written."""
    return [m["id"] for m in ctx.doc("plan")["milestones"] if any(m["documentation"].values())]


class Reconcile(Kind):
    """Step 9: reconcile.json from git and execution.json; an interactive session waits for
    the person's review of the result (result_review), a non-interactive one is completed,
    accepted by policy on record."""

    shows_words = False

    def arrive(self, ctx: Context, tx: Transaction) -> None:
        from state.ops import result_ops  # ~25 M to import: only step 9's arrival needs it
        from state.ops.result_view import assemble

        facts = record(ctx)
        data = json.dumps(facts, indent=2, ensure_ascii=False) + "\n"
        tx.put("reconcile.json", data.encode())  # lands with the arrival or not at all
        shown = assemble(ctx.doc("plan"), ctx.doc("execution"), facts, root(ctx))["sha256"]
        session = tx.edit("session")
        if ctx.non_interactive:
            result_ops.accept_by_policy(session, shown)
        else:
            result_ops.submit_result(session, shown)

    def context(self, ctx: Context) -> ReconcileVariables:
        path = os.path.join(ctx.state_dir, "reconcile.json")
        with open(path, encoding="utf-8") as f:
            table = reconcile.table(json.load(f))
        return {"path": path, "table": table, "review": ctx.session["status"] == S.RESULT_REVIEW}

    def routing(self, ctx: Context) -> Routing:
        if ctx.session["status"] == S.RESULT_REVIEW:
            at = ["--state-dir", ctx.state_dir]
            return Routing(
                if_pass=["plan", "result", "accept", *at],
                if_fail=[
                    *("plan", "result", "request-changes", *at),
                    *("--feedback", "<the user's words>"),
                ],
            )
        return super().routing(ctx)
