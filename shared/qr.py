"""The QR gate: mechanical items, blocking severities, pass and fail rules.

A pass is refused while blocking items are FAIL or TODO, when no item was recorded by a
reviewer, or when the report is missing; a fail is refused without a FAIL item that says
why. Each failed gate adds one iteration; at qr_max_iterations the loop stops and waits
for the user to accept the findings on record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.routing import argv_of, command, record
from state.errors import Finding, PreconditionFailed
from state.ops.qr_ops import add_item, open_report, unjudged
from state.rules.amendments import frozen_milestones
from state.storage.store import report_name
from state.vocab import ItemStatus, LoopState, Severity

if TYPE_CHECKING:
    from collections.abc import Collection

    from state.routes import StepRef
    from state.rules.session_store import Transaction
    from state.storage.documents import Plan, QRItem, QRLoop, QRReport, Session

OPEN = (ItemStatus.FAIL, ItemStatus.TODO)


def blocking_severities(iteration: int) -> tuple[str, ...]:
    """Iterations 1-2 block on everything, 3-4 on MUST and SHOULD, 5 and later on MUST."""
    if iteration <= 2:
        return (Severity.MUST, Severity.SHOULD, Severity.COULD)
    return (Severity.MUST, Severity.SHOULD) if iteration <= 4 else (Severity.MUST,)


def loop_of(session: Session, phase: str) -> QRLoop:
    return session["qr"].get(phase) or {"iteration": 1, "state": LoopState.INITIAL, "gate": None}


def record_mechanical_items(
    tx: Transaction, phase: str, findings: list[Finding], iteration: int
) -> QRReport:
    """Start the review round: validator findings become items, reviewer FAILs go back to TODO.

    A validator item is identified by its check and scope, so re-running the checks updates
    it (FAIL while the problem is there, PASS once fixed) and ids are never reused.
    """
    report = open_report(tx, phase)
    new_round = report["iteration"] < iteration
    report["iteration"] = max(report["iteration"], iteration)
    _mechanical(tx, report, findings)
    if new_round:
        for item in report["items"]:
            if item["source"] == "reviewer" and item["status"] == ItemStatus.FAIL:
                item["status"] = ItemStatus.TODO  # the finding stays: the reviewer re-checks it
    return report


def refresh_mechanical_items(tx: Transaction, phase: str, findings: list[Finding]) -> None:
    """The validator's items brought up to date (as at the review step), the reviewer's left
    as judged: what a gate does before it weighs the verdict."""
    _mechanical(tx, open_report(tx, phase), findings)


def _mechanical(tx: Transaction, report: QRReport, findings: list[Finding]) -> None:
    mechanical = {
        (i["check"], i["scope"]): i for i in report["items"] if i["source"] == "validator"
    }
    seen = set()
    for f in findings:
        key = (f.message, f.path or "*")
        seen.add(key)
        finding = f"fix: {f.fix}" if f.fix else f.message
        if key in mechanical:
            mechanical[key].update({"status": ItemStatus.FAIL, "finding": finding})
        else:
            add_item(
                tx,
                report,
                f.message,
                f.path or "*",
                Severity.MUST,
                source="validator",
                status=ItemStatus.FAIL,
                finding=finding,
            )
    for key, item in mechanical.items():
        if key not in seen and item["status"] == ItemStatus.FAIL:
            item.update({"status": ItemStatus.PASS, "finding": "fixed"})


def open_items(report: QRReport, iteration: int) -> list[QRItem]:
    """Items that block a pass at this iteration."""
    blocking = blocking_severities(iteration)
    return [i for i in report["items"] if i["severity"] in blocking and i["status"] in OPEN]


def refuse_pass(
    report: QRReport | None,
    phase: str,
    loop: QRLoop,
    fail_argv: str,
    plan: Plan | None = None,
    frozen: Collection[str] = (),
) -> list[Finding]:
    """Why the gate may not pass, as findings with the command that fixes each; in a planning
    phase, also each milestone no reviewer item judged (`plan`: qr_ops.unjudged, `frozen`
    its frozen milestones)."""
    name = f"{report_name(phase)}.json"
    if report is None:
        fix = f"run the review step, then: plan qr add --phase {phase} --check C"
        return [Finding(name, "missing: the review has not run", fix)]
    if loop["state"] == LoopState.ACCEPTED:
        return []
    found = [
        Finding(
            f"{name}:{i['id']}",
            f"{i['severity']} item is {i['status']}: {i['check']}",
            recheck(i, phase, fail_argv),
        )
        for i in open_items(report, loop["iteration"])
    ]
    if not any(i["source"] == "reviewer" for i in report["items"]):
        fix = f"plan qr add --phase {phase} --check C, then plan qr set"
        found.append(Finding(name, "no item recorded by the reviewer", fix))
    elif plan is not None and phase.startswith("plan-"):
        found += [
            Finding(
                name,
                f"{m}: no review item judged it as it is (added, reopened or changed since)",
                f"plan qr add --phase {phase} --scope {m} --check C --status PASS|FAIL",
            )
            for m in unjudged(plan, report["items"], phase, frozen)
        ]
    return found


def recheck(item: QRItem, phase: str, fail_argv: str) -> str:
    """What clears an open item: the finding fixed, then the reviewer's own verdict; never a
    nudge to flip it."""
    record = f"plan qr set {item['id']} --phase {phase} --status VERDICT [--finding F]"
    fix = (item["finding"] or "").removeprefix("fix: ")
    if item["source"] == "validator" and fix != (item["finding"] or ""):
        # a mechanical item: the gate checks it again itself; a reviewer's PASS cannot clear it
        return f"{fix}; the gate checks it again; or {fail_argv}"
    if item["status"] == ItemStatus.TODO:
        return f"the reviewer checks it and records the verdict: {record}; or {fail_argv}"
    return f"fix the finding, then the reviewer re-checks it: {record}; or {fail_argv}"


def refuse_fail(report: QRReport | None, phase: str) -> list[Finding]:
    if report and any(
        i["status"] == ItemStatus.FAIL and (i["finding"] or "").strip() for i in report["items"]
    ):
        return []
    fix = f"plan qr set qa-NNN --phase {phase} --status FAIL --finding F"
    return [Finding(f"{report_name(phase)}.json", "no FAIL item with a finding", fix)]


def judge(tx: Transaction, phase: str, verdict: str, max_iterations: int, gate: StepRef) -> QRLoop:
    """Apply the verdict to the session's loop for `phase`; raise when the record disagrees.
    `gate`: the gate step as it passes (a refusal names it as it fails)."""
    fail_argv = command(argv_of(gate._replace(qr_status="fail")))
    session = tx.edit("session")
    report = tx.read_or_none(report_name(phase))
    loop = loop_of(session, phase)
    if verdict == "pass":
        frozen = frozen_milestones(session, tx.read_or_none("execution"))
        problems = refuse_pass(report, phase, loop, fail_argv, tx.read_or_none("plan"), frozen)
        if problems:
            raise PreconditionFailed(f"{phase} gate: cannot pass", problems)
        if loop["state"] != LoopState.ACCEPTED:  # a pass after acceptance stays marked as such
            loop["state"] = LoopState.COMPLETE
    else:
        problems = refuse_fail(report, phase)
        if problems:
            raise PreconditionFailed(f"{phase} gate: cannot fail", problems)
        if loop["iteration"] >= max_iterations:
            loop["state"] = LoopState.ESCALATED
        else:
            loop["iteration"] += 1
            loop["state"] = LoopState.RETRY
    loop["gate"] = record(gate)
    session["qr"][phase] = loop
    tx.note(verdict=verdict, phase=phase, iteration=loop["iteration"], state=loop["state"])
    return loop
