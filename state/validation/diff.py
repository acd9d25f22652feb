"""Plan revisions compared by meaning: items added, removed, changed or superseded, by id,
with what they held: a changed field before and after, an added item whole."""

from __future__ import annotations

import json
from typing import TypedDict

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from state.storage.documents import Plan


class ChangeRecord(TypedDict):
    """A Change as `plan diff --json` prints it."""

    kind: str
    what: str
    fields: list[str]
    label: str
    before: dict[str, object]
    after: dict[str, object]


class Change:
    """One difference: kind is added | removed | changed | superseded; what is an id or a path;
    before and after: the changed fields' values (an added item's every field in after)."""

    __slots__ = ("after", "before", "fields", "kind", "label", "what")

    def __init__(
        self,
        kind: str,
        what: str,
        fields: tuple[str, ...] = (),
        label: str = "",
        before: Mapping[str, object] | None = None,
        after: Mapping[str, object] | None = None,
    ):
        self.kind, self.what, self.fields, self.label = kind, what, fields, label
        self.before, self.after = dict(before or {}), dict(after or {})

    def as_dict(self) -> ChangeRecord:
        return {
            "kind": self.kind,
            "what": self.what,
            "fields": list(self.fields),
            "label": self.label,
            "before": self.before,
            "after": self.after,
        }

    def detail(self) -> list[str]:
        """What the change holds, indented under its line: `field: old -> new`, an added
        item's fields; a changed code change as the lines of code its diff now leaves
        different from what it left before (not a diff of two diffs), another text of several
        lines as its changed lines in context; nothing for a removal, nor for an empty field
        of an added item."""
        lines = []
        for key, new in self.after.items():
            if _empty(new) and key not in self.before:
                continue
            old = self.before.get(key)
            if isinstance(new, str) and "\n" in new + (old if isinstance(old, str) else ""):
                head, body = f"{key}, now:" if key in self.before else f"{key}:", new.splitlines()
                changed = None
                if isinstance(old, str):  # the changed lines, in context
                    changed = _code(old, new) if key == "diff" else _lines(old, new)
                if changed is not None:
                    head = (
                        "code (- before, + now):" if key == "diff" else f"{key} (- before, + now):"
                    )
                    body = changed
                lines += [f"    {head}", *(f"      {t}" for t in body)]
            elif key in self.before:
                lines += [f"    {t}" for t in _changed(key, old, new)]
            else:
                lines.append(f"    {key}: {_value(new)}")
        return lines

    def line(self) -> str:
        mark = {"added": "+", "removed": "-", "changed": "~", "superseded": "^"}[self.kind]
        detail = f" ({', '.join(self.fields)})" if self.fields else ""
        label = f" {self.label}" if self.label else ""
        return f"{mark} {self.what}{label}{detail}"


def _changed(key: str, old: object, new: object) -> list[str]:
    """A changed field: a long text as its changed words, a list as the entries it lost and
    gained, a record as its changed fields (`tests.scenarios.edge: + 'x'`), anything else
    `old -> new`."""
    if isinstance(old, dict) and isinstance(new, dict):
        subs = [k for k in {**old, **new} if old.get(k) != new.get(k)]
        return [t for k in subs for t in _changed(f"{key}.{k}", old.get(k), new.get(k))]
    if isinstance(old, str) and isinstance(new, str) and len(old) + len(new) > 120:
        return [f"{key}: {_words(old, new)}"]
    if isinstance(old, list) and isinstance(new, list):
        gone = [f"{key}: - {_value(t)}" for t in old if t not in new]
        came = [f"{key}: + {_value(t)}" for t in new if t not in old]
        if gone or came:  # else the same entries in another order
            return gone + came
    return [f"{key}: {_value(old)} -> {_value(new)}"]


def _words(old: str, new: str) -> str:
    """A long text's change as `git diff --word-diff` shows it: [-removed-]{+added+}, with
    four words of context; … for the words between."""
    import difflib  # on use: every store loads this module

    was, now = old.split(" "), new.split(" ")
    parts: list[str] = []
    for tag, i, j, k, m in difflib.SequenceMatcher(None, was, now, autojunk=False).get_opcodes():
        if tag == "equal":
            same = was[i:j]
            first, last = i == 0, j == len(was)
            keep = (0 if first else 4) + (0 if last else 4)
            if len(same) > keep + 1:
                same = [*(same[:4] if not first else []), "…", *(same[-4:] if not last else [])]
            parts += same
            continue
        if i < j:
            parts.append(f"[-{' '.join(was[i:j])}-]")
        if k < m:
            parts.append(f"{{+{' '.join(now[k:m])}+}}")
    return " ".join(parts)


def _lines(old: str, new: str) -> list[str]:
    """The lines that differ, with one line of context; … between the runs."""
    import difflib  # on use: every store loads this module

    got = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=1)
    return ["…" if t[:2] == "@@" else t for t in list(got)[2:]]


def _code(old: str, new: str) -> list[str] | None:
    """How the code a changed diff leaves differs from what the earlier diff left. Both apply
    to the same base file, and together they show the base's lines they touch; the lines
    neither shows are the same on both sides (stand-ins, shown as …). None when the two are
    not one file patched from the same start (the diff is then shown whole)."""
    from state.repo import unidiff

    try:
        [was], [now] = unidiff.parse(old), unidiff.parse(new)
    except (unidiff.DiffError, ValueError):  # unparsable, or not one file each
        return None
    if (was.old_path is None) != (now.old_path is None):
        return None
    base = None
    if was.old_path is not None:
        known: dict[int, str] = {}
        for hunk in (*was.hunks, *now.hunks):
            number = hunk.old_start
            for kind, text in unidiff.hunk_entries(hunk):
                if kind != "+":
                    known[number], number = text, number + 1
        last = max(known, default=0)
        base = "".join(known.get(n, f"\0{n}\n") for n in range(1, last + 1))
    try:
        before, after = unidiff.apply(was, base) or "", unidiff.apply(now, base) or ""
    except unidiff.DiffError:
        return None
    shown: list[str] = (
        [] if before != after else ["(the same code; only the diff's context differs)"]
    )
    for line in _lines(before, after):
        line = "…" if line[1:2] == "\0" else line
        if line != "…" or shown[-1:] != ["…"]:
            shown.append(line)
    return shown


def _value(value: object) -> str:
    if isinstance(value, dict):  # a milestone's tests or documentation: what it holds
        value = {k: v for k, v in value.items() if not _empty(v)}
    return repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _empty(value: object) -> bool:
    """Nothing in it: None, "", [], {}, False, or a record of empty fields."""
    if isinstance(value, dict):
        return all(_empty(v) for v in value.values())
    return value is None or value is False or value == "" or value == []


# Fields the planner keeps for itself, not what the plan says: when a decision was recorded,
# a milestone's ordinal (its id says it), the context a diff was captured with (the diff
# shows it). A comparison by meaning leaves them out.
BOOKKEEPING = frozenset({"timestamp", "number", "context_lines"})


def _items(plan: Plan) -> dict[str, Mapping[str, object]]:
    """Every item with an id, by id, without its bookkeeping (a milestone without its intents
    and changes)."""
    ctx = plan["planning_context"]
    found: list[Mapping[str, object]] = [
        *ctx["decision_log"],
        *ctx["rejected_alternatives"],
        *ctx["constraints"],
        *ctx["known_risks"],
        *ctx["choices"],
    ]
    for m in plan["milestones"]:
        found += [m, *m["code_intents"], *m["code_changes"]]
    inner = BOOKKEEPING | {"code_intents", "code_changes"}
    return {str(i["id"]): {k: v for k, v in i.items() if k not in inner} for i in found}


LABELS = ("name", "decision", "topic", "behavior", "risk", "alternative", "description", "file")


def _label(item: Mapping[str, object]) -> str:
    for key in LABELS:
        value = item.get(key)
        if isinstance(value, str) and value:
            text = value.splitlines()[0]
            return repr(text if len(text) <= 60 else text[:57] + "...")
    return ""


def diff(old: Plan, new: Plan) -> list[Change]:
    """What changed from `old` to `new`, in a stable order."""
    changes: list[Change] = []
    before, after = _items(old), _items(new)
    for item_id, item in after.items():
        if item_id not in before:
            whole = {k: v for k, v in item.items() if k != "id"}
            changes.append(Change("added", item_id, label=_label(item), after=whole))
            continue
        was = before[item_id]
        fields = tuple(k for k in item if item.get(k) != was.get(k))
        if "superseded_by" in fields and item["superseded_by"]:
            why = {"superseded_reason": item.get("superseded_reason")}
            label = f"by {item['superseded_by']}"
            changes.append(Change("superseded", item_id, label=label, after=why))
            fields = tuple(f for f in fields if f not in ("superseded_by", "superseded_reason"))
        if fields:
            changes.append(
                Change("changed", item_id, fields, _label(item), *_sides(was, item, fields))
            )
    changes += [Change("removed", i, label=_label(before[i])) for i in before if i not in after]
    sections: tuple[tuple[str, Mapping[str, object], Mapping[str, object]], ...] = (
        ("overview", old["overview"], new["overview"]),
        ("invisible_knowledge", old["invisible_knowledge"], new["invisible_knowledge"]),
    )
    for section, was_in, now_in in sections:
        fields = tuple(k for k in now_in if now_in[k] != was_in.get(k))
        if fields:
            changes.append(Change("changed", section, fields, "", *_sides(was_in, now_in, fields)))
    if new["frozen_at"] != old["frozen_at"]:
        changes.append(Change("changed", "frozen_at", label=str(new["frozen_at"])))
    return changes


def stale_overview(before: Plan, now: Plan) -> list[str]:
    """The decisions and choices added, changed, superseded or removed from `before` to `now`
    while the overview stayed as it was ([] once the overview changed too)."""
    if now["overview"] == before["overview"]:
        ids = {
            i["id"]
            for plan in (before, now)
            for group in ("decision_log", "choices")
            for i in plan["planning_context"][group]
        }
        return [c.what for c in diff(before, now) if c.what in ids]
    return []


def _sides(
    was: Mapping[str, object], now: Mapping[str, object], fields: tuple[str, ...]
) -> tuple[dict[str, object], dict[str, object]]:
    """The fields' values before and after."""
    return {f: was.get(f) for f in fields}, {f: now.get(f) for f in fields}
