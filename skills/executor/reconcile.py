"""The plan against what git shows, mechanically: reconcile.json and the
facts the implementation reviews start from."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from state.errors import Finding
from state.repo import gitinfo
from state.vocab import RunStatus

if TYPE_CHECKING:
    from state.ops.result_view import ReconcileRecord, ReconcileRow, TestRun
    from state.storage.documents import Deviation, Execution, Milestone, Plan


def planned_files(milestone: Milestone) -> list[str]:
    files = list(milestone["files"])
    files += [i["file"] for i in milestone["code_intents"]]
    files += [c["file"] for c in milestone["code_changes"]]
    files += milestone["tests"]["files"]
    return sorted(set(files))


def build(plan: Plan, execution: Execution, root: str) -> ReconcileRecord:
    """reconcile.json: per milestone planned vs changed files, and everything unplanned."""
    from state.ops.capture_ops import is_byproduct  # with plan_ops, ~20 M: a step loads this

    base = execution["base_commit"]
    found = gitinfo.changed_files(root, base, "execution.json:base_commit") if base else []
    changed = {f for f in found if not is_byproduct(f)}  # what running the tests leaves
    runs = {m["id"]: m for m in execution["milestones"]}
    milestones: list[ReconcileRow] = []
    everything_planned: set[str] = set()
    for m in plan["milestones"]:
        planned = planned_files(m)
        everything_planned.update(planned)
        run = runs.get(m["id"])
        milestones.append(
            {
                "id": m["id"],
                "status": run["status"] if run else RunStatus.PENDING,
                "planned_files": planned,
                "changed_files": sorted(set(planned) & changed),
                "untouched_planned_files": sorted(set(planned) - changed),
                "untouched_intents": [
                    i["id"] for i in m["code_intents"] if i["file"] not in changed
                ],
                "commit": run["commit"] if run else None,
                "fix_commits": run["fix_commits"] if run else [],
            }
        )
    return {
        "base_commit": base,
        "head": gitinfo.head_commit(root),
        "milestones": milestones,
        "unplanned_changes": sorted(changed - everything_planned),
        "deviations": execution["deviations"],
        "tests": tests_of(plan, execution),
    }


def tests_of(plan: Plan, execution: Execution) -> list[TestRun]:
    """The tests each milestone names, and those `plan exec done --ran` recorded: ran or not."""
    runs = {m["id"]: m for m in execution["milestones"]}
    tests: list[TestRun] = []
    for m in plan["milestones"]:
        run = runs.get(m["id"])
        ran = run["tests_run"] if run else []
        for f in dict.fromkeys([*m["tests"]["files"], *ran]):
            everywhere = f in ran or f in execution["tests_run"]
            tests.append({"file": f, "milestone": m["id"], "ran": everywhere})
    return tests


def table(record: ReconcileRecord) -> str:
    """The record as a few aligned lines for the prompt."""
    lines = ["milestone  status       changed/planned  untouched"]
    for m in record["milestones"]:
        counts = f"{len(m['changed_files'])}/{len(m['planned_files'])}"
        untouched = ", ".join(m["untouched_planned_files"]) or "-"
        lines.append(f"{m['id']:<10} {m['status']:<12} {counts:<16} {untouched}")
    deviations = [f"{d['id']} ({d['milestone']}) {d['description']}" for d in record["deviations"]]
    ran = [f"{t['file']} ({t['milestone']})" for t in record["tests"] if t["ran"]]
    not_run = [t["file"] for t in record["tests"] if not t["ran"]]
    lines += [
        f"unplanned changes: {', '.join(record['unplanned_changes']) or 'none'}",
        f"deviations: {', '.join(deviations) or 'none'}",
        f"tests run: {', '.join(ran) or 'none'}",
        f"tests not run: {', '.join(not_run) or 'none'}",
    ]
    return "\n".join(lines)


def _explained(path: str, deviations: list[Deviation]) -> bool:
    return any(path in d["description"] for d in deviations)


def findings(record: ReconcileRecord, plan: Plan, docs: bool) -> list[Finding]:
    """What the implementation reviews check mechanically; a deviation naming a file explains it.

    docs=False covers code milestones, unplanned changes and tests; docs=True the
    documentation-only milestones.
    """
    doc_only = {m["id"] for m in plan["milestones"] if m["is_documentation_only"]}
    deviations = record["deviations"]
    found = [
        Finding(
            m["id"],
            f"planned file {path} is unchanged since the base commit",
            f"make the planned change: plan exec apply {m['id']}, then plan exec commit "
            f"{m['id']}; or plan exec deviation --description "
            f"{shlex.quote(path + ' left unchanged')} {m['id']}",
        )
        for m in record["milestones"]
        if (m["id"] in doc_only) == docs
        for path in m["untouched_planned_files"]
        if not _explained(path, deviations)
    ]
    if docs:
        return found
    code = [m["id"] for m in plan["milestones"] if m["id"] not in doc_only]
    last = code[-1] if code else "M-n"  # the deviation explains it; any milestone may carry it
    for path in record["unplanned_changes"]:
        if not _explained(path, deviations):
            explain = f"{path} changed outside the plan"  # a commit of the person's, say
            found.append(
                Finding(
                    path,
                    "changed, but no milestone plans it",
                    f"revert it, or plan exec deviation --description {shlex.quote(explain)} "
                    f"{last}",
                )
            )
    return found + [
        Finding(
            t["milestone"],
            f"test {t['file']} was not run",
            f"run it, then plan exec done {t['milestone']} --ran {t['file']}",
        )
        for t in record["tests"]
        if not t["ran"]
    ]
