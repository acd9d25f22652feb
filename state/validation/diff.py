"""Plan revisions compared by meaning: items added, removed, changed or superseded, by id."""

from __future__ import annotations

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


class Change:
    """One difference: kind is added | removed | changed | superseded; what is an id or a path."""

    __slots__ = ("fields", "kind", "label", "what")

    def __init__(self, kind: str, what: str, fields: tuple[str, ...] = (), label: str = ""):
        self.kind, self.what, self.fields, self.label = kind, what, fields, label

    def as_dict(self) -> ChangeRecord:
        return {
            "kind": self.kind,
            "what": self.what,
            "fields": list(self.fields),
            "label": self.label,
        }

    def line(self) -> str:
        mark = {"added": "+", "removed": "-", "changed": "~", "superseded": "^"}[self.kind]
        detail = f" ({', '.join(self.fields)})" if self.fields else ""
        label = f" {self.label}" if self.label else ""
        return f"{mark} {self.what}{label}{detail}"


def _items(plan: Plan) -> dict[str, Mapping[str, object]]:
    """Every item with an id, by id (a milestone without its intents and changes)."""
    ctx = plan["planning_context"]
    items: dict[str, Mapping[str, object]] = {}
    for group in (
        ctx["decision_log"],
        ctx["rejected_alternatives"],
        ctx["constraints"],
        ctx["known_risks"],
        ctx["choices"],
    ):
        items.update((i["id"], i) for i in group)
    for m in plan["milestones"]:
        items[m["id"]] = {k: v for k, v in m.items() if k not in ("code_intents", "code_changes")}
        items.update((i["id"], i) for i in m["code_intents"])
        items.update((c["id"], c) for c in m["code_changes"])
    return items


def _label(item: Mapping[str, object]) -> str:
    for key in (
        "name",
        "decision",
        "topic",
        "behavior",
        "risk",
        "alternative",
        "description",
        "file",
    ):
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
            changes.append(Change("added", item_id, label=_label(item)))
            continue
        was = before[item_id]
        fields = tuple(k for k in item if item.get(k) != was.get(k))
        if "superseded_by" in fields and item["superseded_by"]:
            changes.append(Change("superseded", item_id, label=f"by {item['superseded_by']}"))
            fields = tuple(f for f in fields if f not in ("superseded_by", "superseded_reason"))
        if fields:
            changes.append(Change("changed", item_id, fields, _label(item)))
    changes += [Change("removed", i, label=_label(before[i])) for i in before if i not in after]
    sections: tuple[tuple[str, Mapping[str, object], Mapping[str, object]], ...] = (
        ("overview", old["overview"], new["overview"]),
        ("invisible_knowledge", old["invisible_knowledge"], new["invisible_knowledge"]),
    )
    for section, was_in, now_in in sections:
        fields = tuple(k for k in now_in if now_in[k] != was_in.get(k))
        if fields:
            changes.append(Change("changed", section, fields))
    if new["frozen_at"] != old["frozen_at"]:
        changes.append(Change("changed", "frozen_at", label=str(new["frozen_at"])))
    return changes
