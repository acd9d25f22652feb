"""Revisions of plan.json in history/: names from the files that exist, never reused.

history/index.jsonl says when and by which command each revision was made; when it is lost
or garbled it is rebuilt from the revision files (their command is then unknown).
"""

from __future__ import annotations

import json
import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HISTORY_DIR = "history"
HISTORY_INDEX = "index.jsonl"
REV = re.compile(r"r([1-9][0-9]{0,8})")


def revision_numbers(state_dir: str) -> list[int]:
    """The numbers of the revision files in history/, ascending."""
    path = os.path.join(state_dir, HISTORY_DIR)
    try:
        names = os.listdir(path)
    except FileNotFoundError:
        return []
    except OSError as e:  # a file, a symlink loop, permissions: damage, reported by name
        from state.errors import DamagedFile

        raise DamagedFile(
            f"{path}: cannot be listed ({e.strerror}); damaged, left as it is"
        ) from None
    found = (REV.fullmatch(n[: -len(".json")]) for n in names if n.endswith(".json"))
    return sorted(int(m.group(1)) for m in found if m)


def next_revision(state_dir: str) -> str:
    numbers = revision_numbers(state_dir)
    return f"r{(numbers[-1] if numbers else 0) + 1}"


def entries(state_dir: str) -> list[dict[str, Any]]:
    """The index, one entry per revision file; rebuilt from the files when lost or garbled."""
    numbers = revision_numbers(state_dir)
    path = os.path.join(state_dir, HISTORY_DIR, HISTORY_INDEX)
    known: dict[str, dict[str, Any]] = {}
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError:  # lost, or not a file: rebuilt from the revision files
        raw = b""
    for line in raw.splitlines():
        try:
            entry = json.loads(line)
            rev = entry["rev"]
            if isinstance(rev, str) and REV.fullmatch(rev):
                known[rev] = {
                    "rev": rev,
                    "ts": str(entry.get("ts", "")),
                    "command": str(entry.get("command", "")),
                    "summary": str(entry.get("summary", "")),
                }
        except (ValueError, KeyError, TypeError, RecursionError):
            continue  # a garbled line: the revision file still speaks for itself
    return [known.get(f"r{n}") or _rebuilt(state_dir, f"r{n}") for n in numbers]


def _rebuilt(state_dir: str, rev: str) -> dict[str, Any]:
    import time

    path = os.path.join(state_dir, HISTORY_DIR, f"{rev}.json")
    try:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.stat(path).st_mtime))
    except OSError:
        stamp = ""
    return {"rev": rev, "ts": stamp, "command": "(unknown: index rebuilt)", "summary": ""}


def index_bytes(items: list[dict[str, Any]]) -> bytes:
    return b"".join((json.dumps(e, ensure_ascii=False) + "\n").encode() for e in items)
