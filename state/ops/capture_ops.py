"""`plan change capture`: the scratch worktree's edits become code changes (CC-NNN), in plan
order, each diff applying on the one before; which intent takes which file: docs/design.md,
"Capture".
"""

from __future__ import annotations

import fnmatch
import os

from state.errors import PreconditionFailed, UsageError
from state.ops import plan_ops
from state.project import session_project
from state.repo import unidiff
from state.repo import worktree as wt
from state.rules.amendments import worktree_round
from state.validation.project_paths import check_diff, check_project_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from state.rules.session_store import Transaction
    from state.storage.documents import CodeChange, CodeIntent, Milestone, Plan

    Chain = list[tuple[Milestone, CodeChange]]  # a file's changes in plan order

SHOWN = 10  # unclaimed files named in the one-line report; the rest are counted
# What running tools in the worktree leaves behind when the project does not ignore it: never
# a planned change, so never reported as unclaimed.
BYPRODUCTS = (
    "__pycache__/",
    "*.py[cod]",
    ".pytest_cache/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".hypothesis/",
    "*.egg-info/",
    ".venv/",
    "node_modules/",
)


def is_byproduct(path: str) -> bool:
    """Whether `path` is one of the BYPRODUCTS, read as git reads them: a pattern ending in `/`
    names a directory anywhere on the path, another a file's name."""
    parts = path.split("/")
    return any(
        any(fnmatch.fnmatchcase(d, p[:-1]) for d in parts[:-1])
        if p.endswith("/")
        else fnmatch.fnmatchcase(parts[-1], p)
        for p in BYPRODUCTS
    )


def change_capture(tx: Transaction, *, intent: list[str], file: list[str]) -> list[str]:
    """Turn the worktree's edits into code changes (CC-NNN) for the given or the changed intents."""
    plan = tx.edit("plan")
    session = tx.read("session")
    project = session_project(tx.store.dir)
    base = wt.base_of(session, f"{tx.store.path('session')}:base_commit")
    tree = wt.path_of(tx.store.dir)
    wt.check_present(project, base, f"{tx.store.path('session')}:base_commit")
    admin = wt.admin_dir(project, tree)
    if not admin:
        raise PreconditionFailed(f"{tree}: no worktree yet (fix: plan worktree)")
    if not wt.ready(project, tree):  # its missing files were never checked out, not deleted
        raise PreconditionFailed(
            f"{tree}: the worktree's checkout did not finish (interrupted); nothing captured "
            "(fix: plan worktree, which makes it again)"
        )
    # An amendment's worktree starts from HEAD, which holds the committed milestones: their
    # changes are not chained again, and the files are read at the commit it started from.
    wanted, skip = worktree_round(session, tx.read_or_none("execution"))
    made_for = wt.made_for(admin)
    if made_for != wanted:
        raise PreconditionFailed(
            f"{tree}: made for {'amendment round ' + str(made_for) if made_for else 'planning'}"
            f", not {'amendment round ' + str(wanted) if wanted else 'planning'}; nothing "
            "captured (fix: plan worktree, which makes it again)"
        )
    if made_for:
        base = wt.start_of(project, tree) or base
        wt.check_present(project, base, tree, "the commit the worktree started from")
    capture = Capture(tx, plan, project, tree, wt.base_reader(project, base), skip)
    files = [f for f in file if f]
    for path in files:
        check_project_path(project, path, "FILE", UsageError)
    try:
        if intent:
            capture.named(intent, files)
        else:
            capture.changed(files)
    except unidiff.DiffError as e:  # a planned diff that no longer applies on the base
        raise PreconditionFailed(f"a planned diff does not apply: {e}; nothing captured") from None
    if not capture.touched:
        tx.tell("nothing captured: the worktree matches the plan's diffs")
    unclaimed = capture.unclaimed(base)
    if unclaimed:
        shown = ", ".join(unclaimed[:SHOWN]) + (
            f" and {len(unclaimed) - SHOWN} more" if len(unclaimed) > SHOWN else ""
        )
        tx.tell(f"unclaimed: {shown} (no intent names them: add an intent or revert)")
    return capture.created


def claims(plan: Plan) -> dict[str, list[str]]:
    """Each file capture records, with the intents that may take its edits, in plan order: the
    intents naming it; a milestone's test file no intent of the milestone names goes to the
    intent its name names (tested_by), else to the milestone's first; a file a change already
    holds, to that change's intents."""
    found: dict[str, list[str]] = {}
    by_milestone: dict[str, list[CodeIntent]] = {}
    milestones: dict[str, Milestone] = {}
    for m, i in wt.intent_order(plan):
        by_milestone.setdefault(m["id"], []).append(i)
        milestones[m["id"]] = m
    for mid, intents in by_milestone.items():
        for i in intents:
            found.setdefault(i["file"], []).append(i["id"])
        named = {i["file"] for i in intents}
        for path in milestones[mid]["tests"]["files"]:
            if path and path not in named:
                found.setdefault(path, []).append(tested_by(path, intents)["id"])
    for _, c in wt.ordered_changes(plan):
        on_file = found.setdefault(c["file"], [])
        on_file += [i for i in served(c) if i not in on_file]
    return found


def tested_by(path: str, intents: list[CodeIntent]) -> CodeIntent:
    """The intent whose function (its last dotted part) or file stem is the longest name in the
    test file's name; the first intent when none is."""
    stem = os.path.splitext(os.path.basename(path))[0].lower()

    def named(intent: CodeIntent) -> int:
        names = [(intent.get("function") or "").rsplit(".", 1)[-1], _stem(intent["file"])]
        return max((len(n) for n in names if len(n) > 2 and n.lower() in stem), default=0)

    return max(intents, key=named)  # the first of the longest: max keeps the first


def _stem(path: str) -> str:
    name = os.path.splitext(os.path.basename(path))[0]
    return "" if name == "__init__" else name


def served(change: CodeChange) -> list[str]:
    """The intents a change implements: its own, then those sharing its diff."""
    return [change["intent_ref"], *change.get("shared_intents", [])]


class Capture:
    def __init__(
        self,
        tx: Transaction,
        plan: Plan,
        project: str,
        tree: str,
        read_base: Callable[[Iterable[str]], dict[str, str | None]],
        skip: set[str] | None = None,
    ) -> None:
        self.tx, self.plan, self.tree, self.project = tx, plan, tree, project
        self.skip = skip or set()  # committed milestones: HEAD holds them (an amendment)
        self.repo = wt.common_dir(project)
        self.read_base = read_base
        self.created: list[str] = []
        self.touched: list[str] = []

    def named(self, intent_ids: list[str], files: list[str]) -> None:
        """--intent CI-n [FILE]...: each intent's files (default its own); intents of one
        milestone given together for one file share one change."""
        groups: dict[tuple[str, str], list[str]] = {}
        for intent_id in dict.fromkeys(intent_ids):
            intent = plan_ops.find(self.plan, intent_id, "CI")  # another kind's id: refused
            milestone = plan_ops.owner(self.plan, intent_id)["id"]
            for path in files or [intent["file"]]:
                groups.setdefault((path, milestone), []).append(intent_id)
        for (path, _), group in groups.items():
            self.one(group[0], path, group[1:])

    def changed(self, only: list[str]) -> None:
        """Every file capture records whose worktree text is not where its chain ends; its
        edits go to the intents on it that have no change yet (those of the first such
        milestone share one change), else to the last change on it."""
        named = self.claims()
        for path in dict.fromkeys(only or named):
            if only and path not in named:
                raise UsageError(
                    f"{path}: no intent names it (plan change capture --intent CI-n {path})"
                )
            chain = self.chain(path)
            if wt.read_tree_file(self.tree, path) == self.state_after(path, chain):
                continue
            has = {i for _, c in chain for i in served(c)}
            fresh = [i for i in named[path] if i not in has]
            if not fresh:
                self.one(chain[-1][1]["intent_ref"], path)
                continue
            first = plan_ops.owner(self.plan, fresh[0])["id"]
            group = [i for i in fresh if plan_ops.owner(self.plan, i)["id"] == first]
            self.one(group[0], path, group[1:])
            for other in fresh:
                if other not in group:
                    self.tx.tell(
                        f"{other}: shares {path} with {group[0]} (an earlier milestone), which "
                        f"took its whole diff; to split it, edit for {other} after capturing "
                        f"{group[0]}, then: plan change capture --intent {other} {path}"
                    )

    def claims(self) -> dict[str, list[str]]:
        """claims(), less a committed milestone's intents in an amendment: they take no new
        edit (a correction is a new milestone), and their files' edits are reported."""
        named = claims(self.plan)
        if not self.skip:
            return named
        owner = {i["id"]: m["id"] for m, i in wt.intent_order(self.plan)}
        return {
            p: kept
            for p, ids in named.items()
            if (kept := [i for i in ids if owner.get(i) not in self.skip])
        }

    def chain(self, path: str) -> Chain:
        return [
            (m, c)
            for m, c in wt.ordered_changes(self.plan)
            if c["file"] == path and m["id"] not in self.skip
        ]

    def state_after(self, path: str, chain: Chain) -> str | None:
        text = self.read_base([path]).get(path)
        for _, c in chain:
            text = _apply(c, text)
        return text

    def one(self, intent_id: str, path: str, also: list[str] | None = None) -> None:
        """(Re)capture the change of `path` serving intent_id (and `also`, intents of its
        milestone) at its place in the file's chain. A change already serving one of them is
        the one re-captured, with every intent it served."""
        if unidiff.unsafe(path, self.tree):
            raise UsageError(f"{path}: {unidiff.unsafe(path, self.tree)}")
        check_project_path(self.project, path, intent_id)  # a path the plan stored: exit 3
        group = [intent_id, *(also or [])]
        chain = self.chain(path)
        own = [c for _, c in chain if set(served(c)) & set(group)]
        group += [i for c in own for i in served(c) if i not in group]
        order = [i["id"] for _, i in wt.intent_order(self.plan)]
        group.sort(key=lambda i: order.index(i) if i in order else len(order))
        milestone = plan_ops.owner(self.plan, group[0])
        rest = [(m, c) for m, c in chain if not any(c is o for o in own)]
        key = _key(self.plan, milestone, group[0])
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
        if not diff and not own and rest:  # another change holds the file's edits
            holder = held(self.plan, before[-1] if before else after[0], group[0], path)
            self.tx.tell(f"{','.join(group)}: {path} has no edit to capture: {holder}")
            return
        check_diff(self.project, diff, intent_id)
        self._record(milestone, group, path, own, diff)
        for (_, c), old, new in zip(after, states, states[1:], strict=False):
            c["diff"] = wt.make_diff(self.repo, path, old, new) or c["diff"]

    def _record(
        self,
        milestone: Milestone,
        group: list[str],
        path: str,
        own: list[CodeChange],
        diff: str,
    ) -> None:
        for extra in own[1:]:  # one change per intent and file
            plan_ops.owner(self.plan, extra["id"])["code_changes"].remove(extra)
        names = ",".join(group)
        if not diff:
            if own:
                plan_ops.owner(self.plan, own[0]["id"])["code_changes"].remove(own[0])
                self.tx.tell(f"{own[0]['id']}: removed ({path} has no edit for {names})")
            else:
                self.tx.tell(f"{names}: {path} has no edit to capture")
            return
        self.touched.append(path)
        stats = _stats(diff)
        if own:
            home = plan_ops.owner(self.plan, own[0]["id"])
            if home is not milestone:  # its first intent moved: so does the change
                home["code_changes"].remove(own[0])
                milestone["code_changes"].append(own[0])
            own[0]["diff"], own[0]["intent_ref"] = diff, group[0]
            own[0]["shared_intents"] = group[1:]
            self.tx.tell(f"{own[0]['id']} {names} {path}: re-captured ({stats})")
            return
        items = (c for m in self.plan["milestones"] for c in m["code_changes"])
        item: CodeChange = {
            "id": self.tx.new_id("plan", "CC", items),
            "intent_ref": group[0],
            "shared_intents": group[1:],
            "file": path,
            "diff": diff,
            "context_lines": 3,  # the model's default
            "why_comments": [],
        }
        milestone["code_changes"].append(item)
        self.created.append(item["id"])
        self.tx.tell(f"{item['id']} {names} {path}: captured ({stats})")

    def unclaimed(self, base: str) -> list[str]:
        """Files the worktree changed from the base commit that capture records for no intent."""
        admin = wt.admin_dir(self.project, self.tree)
        if admin is None:
            return []
        named = self.claims()
        run = ("--no-optional-locks",)  # a read: git refreshes no index for it
        tracked = wt.git(
            admin,
            *run,
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            base,
            "--",
            work_tree=self.tree,
            cwd=self.tree,
        )
        untracked = wt.git(
            admin,
            *run,
            "ls-files",
            "-z",
            "--others",
            "--exclude-standard",
            *(f"--exclude={p}" for p in BYPRODUCTS),
            work_tree=self.tree,
            cwd=self.tree,
        )
        paths = (tracked + b"\0" + untracked).decode("utf-8", "surrogateescape").split("\0")
        candidates = sorted({p for p in paths if p and p not in named})
        at_base = self.read_base(candidates)
        return [p for p in candidates if self._differs(p, at_base.get(p))]

    def _differs(self, path: str, at_base: str | None) -> bool:
        try:
            return wt.read_tree_file(self.tree, path) != at_base
        except (PreconditionFailed, UsageError):  # a link, a directory, not text: changed
            return True


def held(plan: Plan, holder: tuple[Milestone, CodeChange], intent_id: str, path: str) -> str:
    """The change already holding the edits of `path` an intent asked for, and the commands
    that give them to it: moved, or (one milestone) shared with the intent it serves."""
    m, c = holder
    text = (
        f"{c['id']} ({c['intent_ref']}) already holds its edits; to give them to {intent_id}: "
        f"plan change set {c['id']} --intent {intent_id}"
    )
    if plan_ops.owner(plan, intent_id) is m:
        share = f"plan change capture --intent {c['intent_ref']} --intent {intent_id} {path}"
        text += f" (to share them: {share})"
    return text


def _key(plan: Plan, milestone: Milestone, intent_id: str) -> tuple[int, ...]:
    order = [i["id"] for _, i in wt.intent_order(plan)]
    return (order.index(intent_id),) if intent_id in order else (len(order),)


def _apply(change: CodeChange, text: str | None, undo: bool = False) -> str | None:
    for patch in unidiff.parse(change["diff"]):
        text = unidiff.apply(unidiff.reverse(patch) if undo else patch, text)
    return text


def _stats(diff: str) -> str:
    lines = diff.splitlines()
    added = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++"))
    removed = sum(1 for x in lines if x.startswith("-") and not x.startswith("---"))
    return f"+{added} -{removed}"
