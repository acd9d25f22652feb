"""Where a value sits in a JSON text: line and column of every member and element.

A small scanner over text that json.loads already accepted; it records, for each path of
keys and indexes, the position of the member's key (or of the array element).
"""

from __future__ import annotations

from json.decoder import scanstring as _scanstring  # type: ignore[attr-defined]  # (not in typeshed)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Pointer = tuple[str | int, ...]

# (the string's text, the offset after its closing quote): its signature, which typeshed lacks
scanstring: Callable[[str, int], tuple[str, int]] = _scanstring

_SPACE = " \t\n\r"


def positions(text: str, ends: dict[Pointer, int] | None = None) -> dict[Pointer, int]:
    """Offset of every path in `text` (a valid JSON document): () is the document itself;
    `ends`, if given, receives the offset just after each path's value."""
    found: dict[Pointer, int] = {}
    _value(text, _skip(text, 0), (), found, ends)
    return found


def line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column (in characters) of an offset."""
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def pointer_of(doc: Any, path: str) -> Pointer:
    """The keys and indexes a finding's path names: `milestones[M-001].depends_on`,
    `milestones[0].risk` or `plan.json:overview` (a file prefix is dropped); an `[ID]`
    selects the list element with that id. Stops at the first part it cannot resolve."""
    path = path.rpartition(":")[2] if ".json:" in path else path
    parts: list[str | int] = []
    node = doc
    for token in _tokens(path):
        if isinstance(node, dict) and isinstance(token, str) and not token.startswith("["):
            parts.append(token)
            node = node.get(token)
            continue
        if isinstance(node, list) and isinstance(token, str) and token.startswith("["):
            key = token[1:-1]
            index = _index(node, key)
            if index is not None:
                parts.append(index)
                node = node[index]
                continue
        if isinstance(node, dict) and isinstance(token, str):
            parts.append(token)  # a missing key: a finding falls back to its parent (ci_checks)
        break
    return tuple(parts)


def _index(items: list[Any], key: str) -> int | None:
    if key.isdecimal() and int(key) < len(items):
        return int(key)
    for i, item in enumerate(items):
        if isinstance(item, dict) and (item.get("id") == key or str(item.get("wave")) == key):
            return i
    return None


def _tokens(path: str) -> list[str]:
    tokens: list[str] = []
    word = ""
    i = 0
    while i < len(path):
        c = path[i]
        if c == "[":
            end = path.find("]", i)
            end = len(path) - 1 if end < 0 else end
            if word:
                tokens.append(word)
                word = ""
            tokens.append(path[i : end + 1])
            i = end + 1
            continue
        if c == ".":
            if word:
                tokens.append(word)
            word = ""
        else:
            word += c
        i += 1
    if word and word != "(document)":
        tokens.append(word)
    return tokens


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _SPACE:
        i += 1
    return i


def _value(
    text: str, i: int, here: Pointer, found: dict[Pointer, int], ends: dict[Pointer, int] | None
) -> int:
    """Scan the value at i (recording positions below `here`); the offset after it."""
    found.setdefault(here, i)
    end = _scan(text, i, here, found, ends)
    if ends is not None:
        ends[here] = end
    return end


def _scan(
    text: str, i: int, here: Pointer, found: dict[Pointer, int], ends: dict[Pointer, int] | None
) -> int:
    c = text[i]
    if c == "{":
        i = _skip(text, i + 1)
        if text[i] == "}":
            return i + 1
        while True:
            key_at = i
            key, i = scanstring(text, i + 1)
            found[(*here, key)] = key_at
            i = _skip(text, _skip(text, i) + 1)  # past the colon
            i = _skip(text, _value(text, i, (*here, key), found, ends))
            if text[i] == "}":
                return i + 1
            i = _skip(text, i + 1)  # past the comma
    if c == "[":
        i = _skip(text, i + 1)
        if text[i] == "]":
            return i + 1
        index = 0
        while True:
            i = _skip(text, _value(text, i, (*here, index), found, ends))
            index += 1
            if text[i] == "]":
                return i + 1
            i = _skip(text, i + 1)
    if c == '"':
        return scanstring(text, i + 1)[1]
    while i < len(text) and text[i] not in ",]}" + _SPACE:
        i += 1
    return i
