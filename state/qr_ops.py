"""Quality-review records: items in qr-{phase}.json, added and judged through `plan qr`.

Each operation is a function (tx, a): the open transaction and the arguments by name
(repeatable ones as lists); it returns the ids it created. cli/commands/ declares the
arguments; state/ parses none.
"""

from __future__ import annotations

from state import schema
from state.errors import UsageError
from state.ids import next_id
from state.store import report_name

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from state.store import Store, Transaction

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
    return session["qr"].get(phase, {}).get("iteration", 1)


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
    item = {
        "id": next_id(report["items"], "qa"),
        "check": check,
        "scope": scope,
        "severity": severity,
        "status": status,
        "finding": finding,
        "source": source,
        "iteration": report["iteration"],
    }
    report["items"].append(item)
    return item["id"]


def qr_add(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Record a review item (qa-NNN, status TODO) for a phase."""
    report = open_report(tx, a["phase"])
    return [add_item(report, a["check"], a["scope"] or "*", a["severity"] or "MUST")]


def qr_set(tx: Transaction, a: dict[str, Any]) -> None:
    """Judge a review item: PASS, or FAIL with the finding."""
    if a["status"] == "FAIL" and not (a["finding"] or "").strip():
        raise UsageError("qr set: --status FAIL needs --finding saying what is wrong")
    name = report_name(a["phase"])
    if not tx.store.exists(name):
        raise UsageError(f"{tx.store.path(name)}: not found (record items with plan qr add)")
    report = tx.edit(name)
    for item in report["items"]:
        if item["id"] == a["id"]:
            item["status"] = a["status"]
            if a["finding"] is not None:
                item["finding"] = a["finding"]
            return
    raise UsageError(f"{tx.store.path(name)}: no item {a['id']}")


def qr_accept(tx: Transaction, a: dict[str, Any]) -> None:
    """Accept a stopped review loop's open findings on record; the gate may then pass."""
    from state import clock
    from state.errors import PreconditionFailed

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
