"""Quality-review records: items in qr-{phase}.json, added and judged through `plan qr`."""

from __future__ import annotations

import json

from state import clock
from state.errors import PreconditionFailed, UsageError
from state.routes import StepRef
from state.rules.amendments import frozen_milestones
from state.storage.ids import next_id
from state.storage.store import report_name
from state.validation.limits import NAME_MAX, REASON_MAX, check_text
from state.vocab import PLANNING_PHASES, ItemStatus, LoopState, Phase, Severity

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection
    from typing import Literal

    from state.rules.session_store import Store, Transaction
    from state.storage.documents import Milestone, Plan, QRItem, QRReport

    class FoundItem(QRItem):
        """A review item with the phase whose report holds it (`plan show qa-NNN`)."""

        phase: Phase


PHASES = tuple(Phase)
SEVERITIES = tuple(Severity)


def known_phase(phase: str) -> Phase:
    """`phase` as a review phase (what callers outside click name as text); UsageError when
    it is none."""
    if phase in PHASES:
        return Phase(phase)
    raise UsageError(f"phase: must be one of {', '.join(PHASES)}", field="phase")


def find_item(store: Store, item_id: str, phase: str | None) -> FoundItem:
    """Review item `item_id` of `phase`, or of the one phase that has it (else UsageError)."""
    phases = [known_phase(phase)] if phase else PHASES
    found: list[FoundItem] = [
        {"phase": p, **item}
        for p in phases
        if store.exists(report_name(p))
        for item in store.read(report_name(p))["items"]
        if item["id"] == item_id
    ]
    if len(found) > 1:
        where = ", ".join(f["phase"] for f in found)
        raise UsageError(
            f"phase: {item_id} is in several phases ({where}); give one", field="phase"
        )
    if not found:
        raise UsageError(f"no review item {item_id}" + (f" in {phase}" if phase else ""))
    return found[0]


def open_report(tx: Transaction, phase: str) -> QRReport:
    """qr-{phase}.json for editing, created at the loop's iteration when missing (1 before
    any gate ran)."""
    checked = known_phase(phase)
    session = tx.read_or_none("session")
    loop = session["qr"].get(phase) if session else None
    fresh: QRReport = {
        "schema_version": 1,
        "phase": checked,
        "iteration": loop["iteration"] if loop else 1,
        "items": [],
        "accepted": None,
    }
    return tx.edit_or_create(report_name(phase), fresh)


def add_item(
    tx: Transaction,
    report: QRReport,
    check: str,
    scope: str,
    severity: Severity,
    source: Literal["validator", "reviewer"] = "reviewer",
    status: ItemStatus = ItemStatus.TODO,
    finding: str | None = None,
) -> str:
    """Append a review item to `report` (one of tx's); its id is new across every phase's
    report, so that qa-002 of plan-code is never read as plan-design's qa-002 written over."""
    names = [report_name(p) for p in PHASES if tx.exists(report_name(p))]
    item_id = next_id([*report["items"], *(i for n in names for i in tx.read(n)["items"])], "qa")
    report["items"].append(
        {
            "id": item_id,
            "check": check,
            "scope": scope,
            "severity": severity,
            "status": status,
            "finding": finding,
            "source": source,
            "iteration": report["iteration"],
            "judged": None,
            "milestones": None,
        }
    )
    return item_id


def qr_add(
    tx: Transaction,
    *,
    phase: Phase,
    check: str,
    scope: str,
    severity: Severity,
    status: ItemStatus,
    finding: str | None,
) -> list[str]:
    """Record a review item (qa-NNN) for a phase: TODO, or judged at once with --status."""
    check_verdict("qr add", status, finding)
    report = open_report(tx, phase)
    item_id = add_item(tx, report, check, scope or "*", severity)
    judge(tx, report["items"][-1], status, finding, phase)
    return [item_id]


def check_verdict(command: str, status: ItemStatus, finding: str | None) -> None:
    if status == ItemStatus.FAIL and not (finding or "").strip():
        raise UsageError(
            f"finding is required with status FAIL ({command}): say what is wrong", field="finding"
        )


def judge(
    tx: Transaction, item: QRItem, status: ItemStatus, finding: str | None, phase: Phase
) -> None:
    """Record a verdict; a PASS remembers the hash of what its scope holds now, and of each
    milestone it judged (all for "*")."""
    item["status"] = status
    if finding is not None:
        item["finding"] = finding
    plan = tx.read_or_none("plan")
    if status != ItemStatus.PASS or plan is None:
        item["judged"] = item["milestones"] = None
        return
    item["judged"] = scope_hash(plan, item["scope"], phase)
    held = milestone_hashes(plan, phase)
    scope = item["scope"].strip()
    judged = held if scope in ("", "*") else milestones_of(plan, scope)
    item["milestones"] = {m: held[m] for m in held if m in judged}


def reset(item: QRItem) -> None:
    """The item is open again: TODO, judging nothing."""
    item.update({"status": ItemStatus.TODO, "judged": None, "milestones": None})


def qr_set(
    tx: Transaction, *, id: str, phase: Phase, status: ItemStatus, finding: str | None
) -> None:
    """Judge a review item: PASS, or FAIL with the finding."""
    check_verdict("qr set", status, finding)
    name = report_name(phase)
    if not tx.store.exists(name):
        raise UsageError(f"{tx.store.path(name)}: not found (record items with plan qr add)")
    for item in tx.edit(name)["items"]:
        if item["id"] == id:
            judge(tx, item, status, finding, phase)
            return
    raise UsageError(f"{tx.store.path(name)}: no item {id}")


# --- a PASS goes back to TODO when what it judged changes ---------------------------------


def scope_content(plan: Plan, scope: str, phase: Phase | None = None) -> list[object] | None:
    """What a review item's scope holds in the plan, or None when it is not tracked ("*",
    an unknown id or file). An id: the item, and for an intent its changes too (a milestone
    holds its intents, changes and docs). A file: every intent and change on it. The design's
    items judged no diff: for them, a milestone without its changes and an intent alone."""
    scope = scope.strip()
    if scope in ("", "*"):
        return None
    milestones = plan["milestones"]
    design = phase == Phase.PLAN_DESIGN
    if scope.split("-", 1)[0] in ("DL", "RA", "C", "R", "D", "M", "CI", "CC"):
        from state.ops.plan_ops import find  # on use: a step loads this module, ~11 M to import

        try:
            item = find(plan, scope)
        except UsageError:
            return None
        if scope.startswith("M-"):
            return [of_phase(item, phase)]  # type: ignore[arg-type]
        changes = [
            c
            for m in milestones
            for c in m["code_changes"]
            if scope in (c["intent_ref"], *c["shared_intents"]) and not design
        ]
        return [item, *changes]
    on_file: list[object] = [
        x
        for m in milestones
        for x in (*m["code_intents"], *([] if design else m["code_changes"]))
        if x["file"] == scope
    ]
    return on_file or None


def of_phase(milestone: Milestone, phase: Phase | None) -> dict[str, object]:
    """What a phase judges of a milestone: the design all but its diffs and docs, the code
    its intents, tests and diffs, the docs its intents, diffs and docs (others: all)."""
    drop = {"code_changes", "documentation"} if phase == Phase.PLAN_DESIGN else set()
    if phase in (Phase.PLAN_CODE, Phase.PLAN_DOCS):
        own = "tests" if phase == Phase.PLAN_CODE else "documentation"
        drop = set(milestone) - {"code_intents", "code_changes", own}
    return {k: v for k, v in milestone.items() if k not in drop}


def milestone_hashes(plan: Plan, phase: Phase | None) -> dict[str, str]:
    """Each milestone's id with the sha256 of what the phase judges of it (of_phase)."""
    return {m["id"]: _sha(of_phase(m, phase)) for m in plan["milestones"]}


def milestones_of(plan: Plan, scope: str) -> set[str]:
    """The milestones a review item's scope is in: a milestone, its intents and changes, or
    a file its intents or changes are on (none for "*" or what the plan does not hold)."""
    scope = scope.strip()
    found = set()
    for m in plan["milestones"]:
        inside = (*m["code_intents"], *m["code_changes"])
        if scope == m["id"] or any(scope in (x["id"], x["file"]) for x in inside):
            found.add(m["id"])
    return found


def standing(plan: Plan, item: QRItem, held: dict[str, str]) -> dict[str, str]:
    """The milestones a reviewer item judges now, with what they hold (`held`): an open one,
    those of its scope (all for "*") as they will be; a PASS, those it judged that hold what
    they held then (a milestone changed, added or reopened since is not one). A PASS
    recorded before the hashes: the ids it recorded, or (before those) its scope's."""
    scope = item["scope"].strip()
    names = set(held) if scope in ("", "*") else milestones_of(plan, scope)
    judged = item.get("milestones") if item["status"] == ItemStatus.PASS else None
    if isinstance(judged, dict):
        return {m: h for m, h in judged.items() if held.get(m) == h}
    return {m: held[m] for m in held if m in (names if judged is None else judged)}


def unjudged(
    plan: Plan, items: list[QRItem], phase: str = "", frozen: Collection[str] = ()
) -> list[str]:
    """The milestones no reviewer item of a phase judges as they are (`standing`): none open
    on them (by id, an item in them, or a file of theirs) and no PASS on them since they
    last changed. The code phase judges no documentation-only milestone; none judges a
    `frozen` one (amendments.frozen_milestones: committed while an amendment is open)."""
    held = milestone_hashes(plan, known_phase(phase) if phase else None)
    covered = {m for i in items if i["source"] == "reviewer" for m in standing(plan, i, held)}
    code = phase == Phase.PLAN_CODE
    skipped = {m["id"] for m in plan["milestones"] if code and m["is_documentation_only"]}
    return [m for m in held if m not in covered | skipped and m not in frozen]


def scope_hash(plan: Plan, scope: str, phase: Phase | None = None) -> str | None:
    content = scope_content(plan, scope, phase)
    return None if content is None else _sha(content)


def _sha(content: object) -> str:
    canonical = json.dumps(content, sort_keys=True, ensure_ascii=False).encode()
    import hashlib  # on use, as in state/storage/content.py

    return hashlib.sha256(canonical).hexdigest()


def reopen_changed(tx: Transaction) -> None:
    """After a change to plan.json: every PASS whose scope now holds something else than what
    was judged goes back to TODO (a change edited after its gate passed is checked again),
    and a planning PASS no longer stands for a milestone that changed since: in the phase at
    work (the first whose gate is still to pass), one that no item judges then is named with
    the `qr add` that judges it (docs/design.md, "Review items judge what they judged")."""
    if "plan" not in tx.edited:
        return
    plan = tx.read("plan")
    session = tx.read_or_none("session")
    loops = session["qr"] if session else {}
    done = (LoopState.COMPLETE, LoopState.ACCEPTED)
    working = next(
        (p for p in PLANNING_PHASES if p not in loops or loops[p]["state"] not in done), None
    )
    for phase in PHASES:
        name = report_name(phase)
        if not tx.exists(name):
            continue
        items = tx.read(name)["items"]
        stale = [
            item
            for item in items
            if item["status"] == ItemStatus.PASS
            and item["judged"]
            and scope_hash(plan, item["scope"], phase) != item["judged"]
        ]
        judged = [i["milestones"] for i in items if isinstance(i["milestones"], dict)]
        held = milestone_hashes(plan, phase) if judged and phase in PLANNING_PHASES else {}
        moved = {m for seen in judged for m, h in seen.items() if held.get(m, h) != h}
        if not stale and not moved:
            continue
        for item in tx.edit(name)["items"]:
            if any(item["id"] == i["id"] for i in stale):
                reset(item)
                tx.tell(
                    f"{item['id']} ({phase}) is TODO again: {item['scope']} changed after it passed"
                )
            elif isinstance(item["milestones"], dict):
                item["milestones"] = {m: h for m, h in item["milestones"].items() if m not in moved}
        if phase != working:
            continue  # a rework that reopens it, or its own step, lists what to judge
        frozen = frozen_milestones(session, tx.read_or_none("execution"))
        for m in unjudged(plan, tx.read(name)["items"], phase, frozen):
            if m in moved:
                tx.tell(
                    f"{m} changed after its {phase} review passed; judge it: plan qr add "
                    f"--phase {phase} --scope {m} --check C --status PASS|FAIL"
                )


def qr_accept(tx: Transaction, *, phase: Phase, by: str, reason: str) -> None:
    """Accept a stopped review loop's open findings on record; the gate may then pass."""
    check_text("by", by, NAME_MAX, field=True)
    check_text("reason", reason, REASON_MAX, field=True)
    loop = tx.edit("session")["qr"].get(phase)
    if not loop or loop["state"] != LoopState.ESCALATED:
        raise PreconditionFailed(
            f"qr accept: the {phase} review loop has not stopped at its "
            "last iteration; there is nothing to accept"
        )
    report = tx.edit(report_name(phase))
    still_open = [
        i["id"] for i in report["items"] if i["status"] in (ItemStatus.FAIL, ItemStatus.TODO)
    ]
    report["accepted"] = {"by": by, "reason": reason, "at": clock.now(), "items": still_open}
    loop["state"] = LoopState.ACCEPTED
    gate = loop["gate"]
    if gate is not None:  # the verdict that stopped the loop recorded it
        name, number, status = gate["name"] or "", gate["number"], gate["qr_status"]
        tx.next = StepRef(gate["workflow"], name, number, tx.store.dir, status)
