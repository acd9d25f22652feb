"""Quality-review records: items in qr-{phase}.json, added and judged through `plan qr`.

Each operation is a function (tx, a): the open transaction and the arguments by name
(repeatable ones as lists); it returns the ids it created. cli/commands/ declares the
arguments; state/ parses none.
"""

from __future__ import annotations

from state.errors import UsageError
from state.storage import schema
from state.storage.ids import next_id
from state.storage.store import report_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from state.storage.store import Store, Transaction

PHASES = ("plan-design", "plan-code", "plan-docs", "impl-code", "impl-docs")
SEVERITIES = ("MUST", "SHOULD", "COULD")


def find_item(store: Store, item_id: str, phase: str | None) -> dict[str, Any]:
    """Review item `item_id` of `phase`, or of the one phase that has it (else UsageError)."""
    phases = [phase] if phase else [p for p in PHASES if store.exists(report_name(p))]
    if phase and phase not in PHASES:
        raise UsageError(f"--phase: must be one of {', '.join(PHASES)}")
    found = [
        {"phase": p, **item}
        for p in phases
        if store.exists(report_name(p))
        for item in store.read(report_name(p))["items"]
        if item["id"] == item_id
    ]
    if len(found) > 1:
        where = ", ".join(f["phase"] for f in found)
        raise UsageError(f"{item_id}: in several phases ({where}); give --phase")
    if not found:
        raise UsageError(f"no review item {item_id}" + (f" in {phase}" if phase else ""))
    return found[0]


def loop_iteration(tx: Transaction, phase: str) -> int:
    """The iteration the session's QR loop for `phase` is at (1 before any gate ran)."""
    session = tx.read_or_none("session") or {"qr": {}}
    iteration: int = session["qr"].get(phase, {}).get("iteration", 1)
    return iteration


def open_report(tx: Transaction, phase: str) -> dict[str, Any]:
    """qr-{phase}.json for editing, created at the loop's iteration when missing."""
    fresh = {**schema.defaults("qr"), "phase": phase, "iteration": loop_iteration(tx, phase)}
    return tx.edit_or_create(report_name(phase), fresh)


def add_item(
    report: dict[str, Any],
    check: str,
    scope: str,
    severity: str,
    source: str = "reviewer",
    status: str = "TODO",
    finding: str | None = None,
) -> str:
    item_id = next_id(report["items"], "qa")
    item = {
        "id": item_id,
        "check": check,
        "scope": scope,
        "severity": severity,
        "status": status,
        "finding": finding,
        "source": source,
        "iteration": report["iteration"],
    }
    report["items"].append(item)
    return item_id


def qr_add(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Record a review item (qa-NNN) for a phase: TODO, or judged at once with --status."""
    status = a.get("status") or "TODO"
    check_verdict("qr add", status, a.get("finding"))
    report = open_report(tx, a["phase"])
    item_id = add_item(report, a["check"], a["scope"] or "*", a["severity"] or "MUST")
    judge(tx, report["items"][-1], status, a.get("finding"))
    return [item_id]


def check_verdict(command: str, status: str, finding: str | None) -> None:
    if status == "FAIL" and not (finding or "").strip():
        raise UsageError(f"{command}: --status FAIL needs --finding saying what is wrong")


def judge(tx: Transaction, item: dict[str, Any], status: str, finding: str | None) -> None:
    """Record a verdict; a PASS remembers the hash of what its scope holds now."""
    item["status"] = status
    if finding is not None:
        item["finding"] = finding
    plan = tx.read_or_none("plan")
    item["judged"] = scope_hash(plan, item["scope"]) if status == "PASS" and plan else None


def qr_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Judge a review item: PASS, or FAIL with the finding."""
    check_verdict("qr set", a["status"], a["finding"])
    name = report_name(a["phase"])
    if not tx.store.exists(name):
        raise UsageError(f"{tx.store.path(name)}: not found (record items with plan qr add)")
    report = tx.edit(name)
    for item in report["items"]:
        if item["id"] == a["id"]:
            judge(tx, item, a["status"], a["finding"])
            return
    raise UsageError(f"{tx.store.path(name)}: no item {a['id']}")


# --- a PASS goes back to TODO when what it judged changes ---------------------------------


def scope_content(plan: dict[str, Any], scope: str) -> Any:
    """What a review item's scope holds in the plan, or None when it is not tracked ("*",
    an unknown id or file). An id: the item, and for an intent its changes too (a milestone
    holds its intents, changes and docs). A file: every intent and change on it."""
    from state.ops.plan_ops import find

    scope = scope.strip()
    if scope in ("", "*"):
        return None
    milestones = plan["milestones"]
    if scope.split("-", 1)[0] in ("DL", "RA", "C", "R", "D", "M", "CI", "CC"):
        try:
            item = find(plan, scope)
        except UsageError:
            return None
        changes = [
            c
            for m in milestones
            for c in m["code_changes"]
            if scope in (c["intent_ref"], *c["shared_intents"])
        ]
        return [item, *changes]
    on_file = [
        x
        for m in milestones
        for x in (*m["code_intents"], *m["code_changes"])
        if x["file"] == scope
    ]
    return on_file or None


def scope_hash(plan: dict[str, Any], scope: str) -> str | None:
    import hashlib
    import json

    content = scope_content(plan, scope)
    if content is None:
        return None
    canonical = json.dumps(content, sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(canonical).hexdigest()


def reopen_changed(tx: Transaction) -> None:
    """After a change to plan.json: every PASS whose scope now holds something else than what
    was judged goes back to TODO (a change edited after its gate passed is checked again)."""
    plan = tx.docs.get("plan")
    if plan is None or "plan" not in tx.edited:
        return
    for phase in PHASES:
        name = report_name(phase)
        if not (name in tx.docs or tx.store.exists(name)):
            continue
        stale = [
            item
            for item in tx.read(name)["items"]
            if item["status"] == "PASS"
            and item.get("judged")
            and scope_hash(plan, item["scope"]) != item["judged"]
        ]
        if not stale:
            continue
        items = {i["id"]: i for i in tx.edit(name)["items"]}
        for item in stale:
            items[item["id"]].update(status="TODO", judged=None)
            tx.tell(
                f"{item['id']} ({phase}) is TODO again: {item['scope']} changed after it passed"
            )


def qr_accept(tx: Transaction, a: dict[str, Any]) -> None:
    """Accept a stopped review loop's open findings on record; the gate may then pass."""
    from state import clock
    from state.errors import PreconditionFailed
    from state.validation.limits import NAME_MAX, REASON_MAX, check_text

    check_text("by", a["by"], NAME_MAX, field=True)
    check_text("reason", a["reason"], REASON_MAX, field=True)
    phase = a["phase"]
    loop = tx.edit("session")["qr"].get(phase)
    if not loop or loop["state"] != "escalated":
        raise PreconditionFailed(
            f"qr accept: the {phase} review loop has not stopped at its "
            "last iteration; there is nothing to accept"
        )
    report = tx.edit(report_name(phase))
    still_open = [i["id"] for i in report["items"] if i["status"] in ("FAIL", "TODO")]
    report["accepted"] = {
        "by": a["by"],
        "reason": a["reason"],
        "at": clock.now(),
        "items": still_open,
    }
    loop["state"] = "accepted"
    tx.next_argv = loop["gate"]
