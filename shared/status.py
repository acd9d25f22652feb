"""Where a session stands (state/status_view.py says it for every caller), and what every
commit that moves a session keeps true: the recorded next command is the live routing, and
plan.md shows an approval in the commit that gives it (docs/design.md, "One status")."""

from __future__ import annotations

import json

from state.rules.session_store import Store
from state.status_view import summary
from state.vocab import CLOSED, ENDED, Document, ItemStatus, LoopState, ReviewVerdict, WorkflowName
from state.vocab import SessionStatus as S

TYPE_CHECKING = False
if TYPE_CHECKING:
    from shared.routing import Routing
    from state.rules.session_store import Transaction
    from state.status_view import Status
    from state.storage.documents import Session

MOVES_THE_SESSION = frozenset({Document.SESSION, Document.EXECUTION})


def current_routing(store: Store, session: Session, tx: Transaction | None = None) -> Routing:
    """Where the step the session is at leads now (it can change: the executor's waves);
    with `tx`, as that open transaction leaves the session's documents."""
    from shared.workflow import Context, workflow_named  # see settle

    workflow = workflow_named(session["workflow"])
    step = workflow.step(session["step"])
    ctx = Context(workflow, step, store, session, {})
    ctx.tx = tx
    return step.kind().routing(ctx)


def session_status(store: Store) -> Status:
    """Where the session stands, and what git shows now that its record cannot: commits it
    relies on that are gone (history rewritten and pruned), named with the fix."""
    session = store.read("session")
    found = summary(session, store.dir, store.read_or_none("context"))
    if session["status"] in CLOSED:
        return found
    problems = [*_hand_edit(store, session), *_underway(store), *_mechanical(store, session)]
    if session["status"] == S.EXECUTING and not problems:
        problems += _undone(store)
    if session["base_commit"] or store.exists("execution"):
        from state.errors import PreconditionFailed
        from state.repo import session_git  # runs git: only for an open session

        try:
            lost = session_git.gone(store)
        except PreconditionFailed:  # not in a project, or a damaged record: the commands
            lost = []  # that read it say so; status still answers
        if lost:
            problems.append(session_git.gone_text(lost))
        elif store.exists("execution"):
            problems += _off_history(store)
    if problems:
        found["problems"] = problems
    return found


def _hand_edit(store: Store, session: Session) -> list[str]:
    """plan.json changed outside `plan` commands after approval: every command refuses it."""
    from state.errors import PlannerError
    from state.rules.amendments import open_amendment
    from state.rules.session_store import RESTORE_FIX, tampered

    try:
        reason = tampered(session, store.read_or_none("plan"))
        if not reason and open_amendment(session) is not None:  # the round checks against it
            reason = _unrecorded(store)
        if not reason and session["status"] == S.REVIEW:
            return _unreviewed(store, session)
    except PlannerError as e:  # unreadable: the commands that read it say so
        return [f"{e} (fix: plan restore)"]
    return [f"{store.path('plan')}: {reason} ({RESTORE_FIX})"] if reason else []


def _unrecorded(store: Store) -> str:
    """Why plan.json is not the newest revision in history/ ("" when it is, or there is none)."""
    from state.storage.store import dumps

    revisions = store.history()
    if not revisions or not store.exists("plan"):
        return ""
    rev = revisions[-1]["rev"]
    if dumps(store.revision(rev)) == dumps(store.read("plan")):
        return ""
    return f"changed outside plan commands since {rev} (history/{rev})"


def _underway(store: Store) -> list[str]:
    """A merge, rebase, cherry-pick … half done in the project (files in .git, no git run)."""
    from state.errors import PlannerError
    from state.project import session_project
    from state.repo import contention, gitinfo

    try:
        project = session_project(store.dir)
    except PlannerError:
        return []
    git_dir = gitinfo.git_dir(project)
    found = contention.underway(git_dir) if git_dir else None
    if not found:
        return []
    marker, what, fix = found
    return [f"{project}: {what} is in progress ({marker}) (fix: finish or abort it: {fix})"]


def settle(tx: Transaction) -> None:
    """Before a commit: resolve the routes an operation named (state/routes.py); refresh
    session.next_command from the routing of the step the session is at, as the commit leaves
    it (and hand its target to an operation that asked for it, tx.routed); re-render plan.md
    when the approval changed."""
    if not tx.edited & MOVES_THE_SESSION:
        return
    # the workflow tables' module (~10 M instructions): a change that leaves the session
    # alone, most mutations, never loads it (docs/design.md, "Process time")
    from shared.workflow import registered, step_ref

    if tx.move_to is not None:  # an operation moved the session to a step it names
        moved = tx.edit("session")
        moved["workflow"] = WorkflowName(tx.move_to.workflow)
        moved["step"] = step_ref(tx.move_to, tx.store.dir).number
    if tx.next_route is not None:
        tx.next = step_ref(tx.next_route, tx.store.dir)

    session = tx.read("session")
    if session["status"] not in ENDED and registered(session["workflow"]):
        routing = current_routing(tx.store, session, tx)
        lines = "\n".join(routing.lines())
        if lines != session["next_command"]:
            tx.edit("session")["next_command"] = lines
        if tx.routed:  # e.g. a rejection: the workflow's table says which step takes it
            tx.next = routing.next
    before = tx.original.get(Document.SESSION)
    was = json.loads(before) if before else {}
    if (was.get("approval") or None) != (session["approval"] or None):
        from shared.plan_md import put_plan_md  # jinja2: only when the approval changed

        put_plan_md(tx)


def _undone(store: Store) -> list[str]:
    """Milestones recorded as applied and not committed whose files show no change from HEAD
    (git stash, git checkout -- ., or a commit of the person's): exec done cannot commit them.
    One `git status` over their files, only while such a milestone exists."""
    from state.errors import PlannerError
    from state.ops.exec_apply import gitinfo_dir, milestone_paths
    from state.project import session_project
    from state.repo import worktree as wt

    execution = store.read_or_none("execution")
    recorded = execution["milestones"] if execution else []
    runs = [r for r in recorded if r["applied_at"] and not r["commit"]]
    if not runs:
        return []
    try:
        project = session_project(store.dir)
        repo = gitinfo_dir(project)
        milestones = {m["id"]: m for m in store.read("plan")["milestones"]}
    except PlannerError:
        return []
    paths = {
        r["id"]: milestone_paths(milestones[r["id"]], project)
        for r in runs
        if r["id"] in milestones and milestones[r["id"]]["code_changes"]
    }
    every = sorted({p for ps in paths.values() for p in ps})
    if not every:
        return []
    status = ("--no-optional-locks", "status", "--porcelain", "-z", "-uall", "--", *every)
    done = wt.run(repo, *status, work_tree=project, cwd=project)
    if done.returncode:
        return []
    changed = {e[3:] for e in done.stdout.decode("utf-8", "surrogateescape").split("\0")}
    return [
        f"{mid}: recorded as applied, but none of its files differ from HEAD (undone, or "
        f"committed by hand) (fix: plan exec apply {mid})"
        for mid, ps in paths.items()
        if not changed & set(ps)
    ]


def _unreviewed(store: Store, session: Session) -> list[str]:
    """plan.json in review is not what the open review round shows: approval is refused."""
    from state.storage.content import plan_hash

    rounds = session["reviews"]
    current = rounds[-1] if rounds and rounds[-1]["verdict"] == ReviewVerdict.SUBMITTED else None
    if current is None or not current["sha256"] or not store.exists("plan"):
        return []
    if plan_hash(store.read("plan")) == current["sha256"]:
        return []
    return [
        f"{store.path('plan')}: changed outside plan commands since review round "
        f"{current['round']} showed it; it cannot be approved (fix: plan restore, which puts "
        "back what the round shows; or send it back to planning, where the edit is recorded "
        "and reviewed again: plan review reject --feedback TEXT)"
    ]


def _mechanical(store: Store, session: Session) -> list[str]:
    """A gate's mechanical items that fail (a refused gate recorded them), with their fix:
    a reviewer's PASS cannot clear them, so status names them."""
    from state.storage.store import report_name
    from state.vocab import Phase

    found = []
    for phase in Phase:
        loop = session["qr"].get(phase.value)
        if loop is not None and loop["state"] in (LoopState.COMPLETE, LoopState.ACCEPTED):
            continue
        name = report_name(phase.value)
        report = store.read_or_none(name)
        for item in report["items"] if report else []:
            if item["source"] == "validator" and item["status"] == ItemStatus.FAIL:
                fix = item["finding"] or ""
                shown = f" ({fix})" if fix.startswith("fix: ") else ""
                found.append(f"{name}.json:{item['id']}: {item['check']}{shown}")
    return found


def _off_history(store: Store) -> list[str]:
    """The execution's base commit not in HEAD's history (an amend, rebase, reset or switch
    since): every executor command refuses it. One `git merge-base --is-ancestor`."""
    from state.errors import PlannerError
    from state.project import session_project
    from state.repo import gitinfo

    base = store.read("execution")["base_commit"]
    try:
        project = session_project(store.dir)
        if not base or gitinfo.contains(project, base):
            return []
    except PlannerError:
        return []
    return [
        f"the base commit {base[:12]} is not in HEAD's history (the branch was rebased, "
        "reset or switched) (fix: switch back to the branch the plan is on; or plan rebase, "
        "which carries the plan onto HEAD)"
    ]
