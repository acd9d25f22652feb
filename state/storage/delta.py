"""A structural delta between two JSON documents, and its application: what history/ stores
for a revision of a large plan instead of the whole plan (state/storage/history.py).

An op is a list: ["=", value] (replace), ["{", {key: op}, [removed keys]] (a dict: changed
and added keys, added ones in order), ["[", prefix, suffix, "=", [values]] (a list whose
middle is replaced), ["[", prefix, suffix, "~", [op, ...]] (a middle of the same length,
one op per element) or ["[", prefix, suffix, "@", [[start, stop, op], ...]] (a long middle
aligned by difflib: hunks on the old middle's indices, each ["=", values] or ["~", ops]).
Applying a delta to the old document gives the new one with its keys in the same order and
its values of the same JSON types, so it serialises to the same bytes (history.py checks a
sha256 anyway).
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SAME = None  # diff()'s answer for equal documents
MATCH_MIN = 8  # list middles longer than this are aligned item by item (difflib)


def diff(old: Any, new: Any) -> list[Any] | None:
    """The op turning `old` into `new`, or None when they are equal."""
    if _same(old, new):
        return SAME
    if isinstance(old, dict) and isinstance(new, dict):
        return _diff_dict(old, new)
    if isinstance(old, list) and isinstance(new, list):
        return _diff_list(old, new)
    return ["=", new]


def members(old: dict[str, Any], new: Any) -> list[Any]:
    """diff() of a dict and `new`, the same keys in the same order, which differ only in the
    members `old` holds (as JSON: each op is a change)."""
    return ["{", {k: diff(v, new[k]) or ["=", new[k]] for k, v in old.items()}, []]


def _diff_dict(old: dict[str, Any], new: dict[str, Any]) -> list[Any]:
    kept = [k for k in old if k in new]
    added = [k for k in new if k not in old]
    if list(new) != kept + added:  # keys reordered: a patch could not keep the order
        return ["=", new]
    ops = {k: diff(old[k], v) if k in old else ["=", v] for k, v in new.items()}
    changes = {k: op for k, op in ops.items() if op is not SAME}
    return ["{", changes, [k for k in old if k not in new]]


def _diff_list(old: list[Any], new: list[Any]) -> list[Any]:
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and _same(old[prefix], new[prefix]):
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and _same(old[-1 - suffix], new[-1 - suffix]):
        suffix += 1
    old_mid = old[prefix : len(old) - suffix]
    new_mid = new[prefix : len(new) - suffix]
    if len(old_mid) == len(new_mid):  # items changed in place: recurse into each
        ops = [diff(a, b) for a, b in zip(old_mid, new_mid, strict=True)]
        return ["[", prefix, suffix, "~", ops]
    if min(len(old_mid), len(new_mid)) > MATCH_MIN:  # changes far apart: align the middles
        return ["[", prefix, suffix, "@", _hunks(old_mid, new_mid)]
    return ["[", prefix, suffix, "=", new_mid]


def _hunks(old: list[Any], new: list[Any]) -> list[Any]:
    """[start, stop, op] on `old`'s indices, ascending: what replaces old[start:stop]."""
    import difflib  # only for the long list middles of a large plan's revision

    matcher = difflib.SequenceMatcher(
        None, [_compact(x) for x in old], [_compact(x) for x in new], False
    )
    hunks: list[Any] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 - i1 == j2 - j1:
            ops = [diff(a, b) for a, b in zip(old[i1:i2], new[j1:j2], strict=True)]
            hunks.append([i1, i2, ["~", ops]])
        else:
            hunks.append([i1, i2, ["=", new[j1:j2]]])
    return hunks


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON: `==` alone takes 0 for False and 1 for 1.0, which serialise apart."""
    if a is b:
        return True
    if type(a) is not type(b) or a != b:
        return False
    return not isinstance(a, (dict, list)) or _compact(a) == _compact(b)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), check_circular=False)


def patch(doc: Any, op: list[Any] | None) -> Any:
    """`doc` changed by `op` (in place where it can be); the new document."""
    if op is SAME:
        return doc
    kind = op[0]
    if kind == "=":
        return op[1]
    if kind == "{" and isinstance(doc, dict):
        _, changes, removed = op
        for key in removed:
            del doc[key]
        for key, sub in changes.items():
            doc[key] = patch(doc.get(key), sub)
        return doc
    if kind == "[" and isinstance(doc, list):
        _, prefix, suffix, how, middle = op
        end = len(doc) - suffix
        if how == "~":
            middle = [patch(item, sub) for item, sub in zip(doc[prefix:end], middle, strict=True)]
        elif how == "@":
            middle = _apply_hunks(doc[prefix:end], middle)
        doc[prefix:end] = middle
        return doc
    raise ValueError(f"delta op {kind!r} does not fit a {type(doc).__name__}")


def _apply_hunks(items: list[Any], hunks: list[Any]) -> list[Any]:
    for start, stop, (how, payload) in reversed(hunks):  # from the end: indices stay valid
        if how == "~":
            payload = [patch(a, sub) for a, sub in zip(items[start:stop], payload, strict=True)]
        items[start:stop] = payload
    return items
