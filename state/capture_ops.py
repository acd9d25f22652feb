"""`plan change capture`: the scratch worktree's edits become code changes (CC-NNN), in plan order.

A file several intents change is a chain: intent k's diff goes from the base commit plus the
diffs ordered before it to the worktree with the diffs ordered after it undone, so each diff
applies on the one before and re-capturing replaces (never duplicates). Without --intent, a
file's new edits go to the first intent naming it that has no change yet (else to the last
one that has); other intents on that file are captured with --intent after editing for them.
"""

from __future__ import annotations

from state import plan_ops, unidiff
from state import worktree as wt
from state.errors import PreconditionFailed, UsageError
from state.project import session_project
from state.project_paths import check_diff, check_project_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from state.store import Transaction


def change_capture(tx: Transaction, a: dict[str, Any]) -> list[str]:
    """Turn the worktree's edits into code changes (CC-NNN) for the given or the changed intents."""
    plan = tx.edit("plan")
    session = tx.read("session")
    project = session_project(tx.store.dir)
    base = wt.base_of(session, f"{tx.store.path('session')}:base_commit")
    tree = wt.path_of(tx.store.dir)
    if not wt.admin_dir(project, tree):
        raise PreconditionFailed(f"{tree}: no worktree yet (fix: plan worktree)")
    if not wt.ready(project, tree):  # its missing files were never checked out, not deleted
        raise PreconditionFailed(
            f"{tree}: the worktree's checkout did not finish (interrupted); nothing captured "
            "(fix: plan worktree, which makes it again)"
        )
    capture = Capture(tx, plan, project, tree, wt.base_reader(project, base))
    files = [f for f in a["file"] if f]
    for path in files:
        check_project_path(project, path, "FILE", UsageError)
    try:
        if a["intent"]:
            for intent_id in a["intent"]:
                intent = plan_ops.find(plan, intent_id)
                for path in files or [intent["file"]]:
                    capture.one(intent_id, path)
        else:
            capture.changed(files)
    except unidiff.DiffError as e:  # a planned diff that no longer applies on the base
        raise PreconditionFailed(f"a planned diff does not apply: {e}; nothing captured") from None
    if not capture.touched:
        tx.tell("nothing captured: the worktree matches the plan's diffs")
    return capture.created


class Capture:
    def __init__(
        self, tx: Transaction, plan: dict[str, Any], project: str, tree: str, read_base: Any
    ) -> None:
        self.tx, self.plan, self.tree, self.project = tx, plan, tree, project
        self.repo = wt.common_dir(project)
        self.read_base = read_base
        self.created: list[str] = []
        self.touched: list[str] = []

    def changed(self, only: list[str]) -> None:
        """Every file an intent or change names whose worktree text is not where its chain ends."""
        intents = wt.intent_order(self.plan)
        names = [i["file"] for _, i in intents] + [
            c["file"] for _, c in wt.ordered_changes(self.plan)
        ]
        for path in dict.fromkeys(only or names):
            if only and path not in names:
                raise UsageError(
                    f"{path}: no intent names it (plan change capture --intent CI-n {path})"
                )
            chain = self.chain(path)
            if wt.read_tree_file(self.tree, path) == self.state_after(path, chain):
                continue
            has = {c["intent_ref"] for _, c in chain}
            on_file = [i["id"] for _, i in intents if i["file"] == path]
            fresh = [i for i in on_file if i not in has]
            target = fresh[0] if fresh else chain[-1][1]["intent_ref"] if chain else on_file[0]
            self.one(target, path)
            for other in fresh[1:]:
                self.tx.tell(
                    f"{other}: shares {path} with {target}, which took its whole diff; "
                    f"to split it, edit for {other} after capturing {target}, then: "
                    f"plan change capture --intent {other} {path}"
                )

    def chain(self, path: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        return [(m, c) for m, c in wt.ordered_changes(self.plan) if c["file"] == path]

    def state_after(self, path: str, chain: list[Any]) -> str | None:
        text = self.read_base([path]).get(path)
        for _, c in chain:
            text = _apply(c, text)
        return text

    def one(self, intent_id: str, path: str) -> None:
        """(Re)capture intent_id's change of `path` at its place in the file's chain."""
        if unidiff.unsafe(path, self.tree):
            raise UsageError(f"{path}: {unidiff.unsafe(path, self.tree)}")
        check_project_path(self.project, path, intent_id)  # a path the plan stored: exit 3
        milestone = plan_ops.owner(self.plan, intent_id)
        chain = self.chain(path)
        own = [c for _, c in chain if c["intent_ref"] == intent_id]
        rest = [(m, c) for m, c in chain if c["intent_ref"] != intent_id]
        key = _key(self.plan, milestone, intent_id)
        before = [p for p in rest if _key(self.plan, p[0], p[1]["intent_ref"]) <= key]
        after = [p for p in rest if _key(self.plan, p[0], p[1]["intent_ref"]) > key]
        start = self.state_after(path, before)
        states = [wt.read_tree_file(self.tree, path)]  # the worktree, then later diffs undone
        for _, c in reversed(after):
            try:
                states.append(_apply(c, states[-1], undo=True))
            except unidiff.DiffError:
                raise PreconditionFailed(
                    f"{path}: {c['id']} ({c['intent_ref']}) comes after {intent_id} in plan order "
                    f"and its diff no longer matches the worktree; capture {c['intent_ref']} "
                    f"before editing for {intent_id}, or move the edit to it"
                ) from None
        states.reverse()  # states[0]: after intent_id; states[j + 1]: after after[j]
        diff = wt.make_diff(self.repo, path, start, states[0])
        check_diff(self.project, diff, intent_id)
        self._record(milestone, intent_id, path, own, diff)
        for (_, c), old, new in zip(after, states, states[1:], strict=False):
            c["diff"] = wt.make_diff(self.repo, path, old, new) or c["diff"]

    def _record(
        self,
        milestone: dict[str, Any],
        intent_id: str,
        path: str,
        own: list[dict[str, Any]],
        diff: str,
    ) -> None:
        for extra in own[1:]:  # one change per intent and file
            plan_ops.owner(self.plan, extra["id"])["code_changes"].remove(extra)
        if not diff:
            if own:
                plan_ops.owner(self.plan, own[0]["id"])["code_changes"].remove(own[0])
                self.tx.tell(f"{own[0]['id']}: removed ({path} has no edit for {intent_id})")
            else:
                self.tx.tell(f"{intent_id}: {path} has no edit to capture")
            return
        self.touched.append(path)
        stats = _stats(diff)
        if own:
            own[0]["diff"] = diff
            self.tx.tell(f"{own[0]['id']} {intent_id} {path}: re-captured ({stats})")
            return
        items = (c for m in self.plan["milestones"] for c in m["code_changes"])
        item = plan_ops.new(
            "CodeChange",
            id=self.tx.new_id("plan", "CC", items),
            intent_ref=intent_id,
            file=path,
            diff=diff,
        )
        milestone["code_changes"].append(item)
        self.created.append(item["id"])
        self.tx.tell(f"{item['id']} {intent_id} {path}: captured ({stats})")


def _key(plan: dict[str, Any], milestone: dict[str, Any], intent_id: str) -> tuple[int, ...]:
    order = [i["id"] for _, i in wt.intent_order(plan)]
    return (order.index(intent_id),) if intent_id in order else (len(order),)


def _apply(change: dict[str, Any], text: str | None, undo: bool = False) -> str | None:
    for patch in unidiff.parse(change["diff"]):
        text = unidiff.apply(unidiff.reverse(patch) if undo else patch, text)
    return text


def _stats(diff: str) -> str:
    lines = diff.splitlines()
    added = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++"))
    removed = sum(1 for x in lines if x.startswith("-") and not x.startswith("---"))
    return f"+{added} -{removed}"
