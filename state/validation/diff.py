"""Plan revisions compared by meaning: items added, removed, changed or superseded, by id."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Change:
    """One difference: kind is added | removed | changed | superseded; what is an id or a path."""

    __slots__ = ("fields", "kind", "label", "what")

    def __init__(self, kind: str, what: str, fields: tuple[str, ...] = (), label: str = ""):
        self.kind, self.what, self.fields, self.label = kind, what, fields, label

    def as_dict(self) -> dict[str, Any]:
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


def _items(plan: dict[str, Any]) -> dict[str, dict[str, Any]]:
    ctx = plan["planning_context"]
    items: dict[str, dict[str, Any]] = {}
    for group in ("decision_log", "rejected_alternatives", "constraints", "known_risks", "choices"):
        items.update((i["id"], i) for i in ctx[group])
    for m in plan["milestones"]:
        items[m["id"]] = {k: v for k, v in m.items() if k not in ("code_intents", "code_changes")}
        items.update((i["id"], i) for i in m["code_intents"])
        items.update((c["id"], c) for c in m["code_changes"])
    return items


def _label(item: dict[str, Any]) -> str:
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
        if isinstance(item.get(key), str) and item[key]:
            text = item[key].splitlines()[0]
            return repr(text if len(text) <= 60 else text[:57] + "...")
    return ""


def diff(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
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
    for section in ("overview", "invisible_knowledge"):
        fields = tuple(k for k in new[section] if new[section][k] != old[section].get(k))
        if fields:
            changes.append(Change("changed", section, fields))
    if new.get("frozen_at") != old.get("frozen_at"):
        changes.append(Change("changed", "frozen_at", label=str(new.get("frozen_at"))))
    return changes
