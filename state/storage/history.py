"""Revisions of plan.json in history/: names from the files that exist, never reused.

A revision is `rN.json` (the whole plan) or, for a plan of SNAPSHOT_MIN bytes or more,
`rN.delta.json` (what changed since r(N-1), state/storage/delta.py, with the sha256 of both), so
history grows with the change, not with the plan; a whole snapshot at least every CHAIN_MAX
revisions bounds what a read replays (docs/design.md, "History"). history/index.jsonl says
when and by which command each revision was made; when it is lost or garbled it is rebuilt
from the revision files (their command is then unknown).
"""

from __future__ import annotations

import json
import os
import re
import time
from typing import TypedDict

from state.errors import DamagedFile
from state.storage import delta

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from state.storage.documents import Plan

HISTORY_DIR = "history"
HISTORY_INDEX = "index.jsonl"
REV = re.compile(r"r([1-9][0-9]{0,8})")
FILE = re.compile(r"r([1-9][0-9]{0,8})(\.delta)?\.json")
DELTA_FORMAT = "planner-delta/1"
SNAPSHOT_MIN = 64 * 1024  # smaller plans are kept whole: cheap, and copyable with cp
CHAIN_MAX = 128  # deltas in a row before the next whole snapshot


class Entry(TypedDict):
    """One line of history/index.jsonl: which command made revision `rev`, and when."""

    rev: str
    ts: str
    command: str
    summary: str


def revision_files(state_dir: str) -> dict[int, str]:
    """Each revision's number and file name (rN.json or rN.delta.json)."""
    path = os.path.join(state_dir, HISTORY_DIR)
    try:
        names = os.listdir(path)
    except FileNotFoundError:
        return {}
    except OSError as e:  # a file, a symlink loop, permissions: damage, reported by name
        raise DamagedFile(
            f"{path}: cannot be listed ({e.strerror}); damaged, left as it is"
        ) from None
    found = {}
    for name in names:
        m = FILE.fullmatch(name)
        if m and (int(m.group(1)) not in found or not m.group(2)):  # both: the whole one
            found[int(m.group(1))] = name
    return found


def revision_numbers(state_dir: str) -> list[int]:
    """The numbers of the revision files in history/, ascending."""
    return sorted(revision_files(state_dir))


def next_revision(state_dir: str) -> str:
    numbers = revision_numbers(state_dir)
    return f"r{(numbers[-1] if numbers else 0) + 1}"


def entries(state_dir: str) -> list[Entry]:
    """The index, one entry per revision file; rebuilt from the files when lost or garbled."""
    files = revision_files(state_dir)
    path = os.path.join(state_dir, HISTORY_DIR, HISTORY_INDEX)
    known: dict[str, Entry] = {}
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
    return [known.get(f"r{n}") or _rebuilt(state_dir, f"r{n}", files[n]) for n in sorted(files)]


def _rebuilt(state_dir: str, rev: str, name: str) -> Entry:
    try:
        stamp = time.strftime(
            "%Y-%m-%dT%H:%M:%SZ",
            time.gmtime(os.stat(os.path.join(state_dir, HISTORY_DIR, name)).st_mtime),
        )
    except OSError:
        stamp = ""
    return {"rev": rev, "ts": stamp, "command": "(unknown: index rebuilt)", "summary": ""}


def index_bytes(items: list[Entry]) -> bytes:
    return b"".join((json.dumps(e, ensure_ascii=False) + "\n").encode() for e in items)


# --- deltas ----------------------------------------------------------------------------------


# The last bytes hashed, by id, each with its digest: a commit hashes the plan's bytes as read
# (.checked, the delta's base) and as written (.checked, the delta) twice each; the same bytes
# object is hashed once. Holding it keeps its id from being reused; four keep the memory bounded.
_hashed: dict[int, tuple[bytes, str]] = {}


def sha256(data: bytes) -> str:
    known = _hashed.get(id(data))
    if known is not None and known[0] is data:
        return known[1]
    import hashlib  # on use, as in state/storage/content.py

    digest = hashlib.sha256(data).hexdigest()
    _hashed[id(data)] = (data, digest)
    if len(_hashed) > 4:
        del _hashed[next(iter(_hashed))]
    return digest


def revision_file(
    state_dir: str,
    rev: str,
    before: bytes | None,
    after: bytes,
    doc: Plan,
    old: dict[str, Any] | None = None,
) -> tuple[str, bytes]:
    """The file name and bytes that store revision `rev` of the plan, whose bytes are `after`
    (`doc` parsed) and were `before` when the command read it: a delta against the previous
    revision when the plan is large and that revision is `before`, else the whole plan.
    `old`: the top-level members in which `before` differs from `after`, as `before` has them
    (state/storage/store.py Encoded), so that `before` need not be parsed again."""
    whole = (f"{rev}.json", after)
    if before is None or len(after) < SNAPSHOT_MIN:
        return whole
    files = revision_files(state_dir)
    number = int(rev[1:]) - 1
    if number not in files:
        return whole
    chain = 0
    while files.get(number - chain, "").endswith(".delta.json"):
        chain += 1
        if chain + 1 >= CHAIN_MAX:
            return whole
    base = sha256(before)
    if _sha_of(state_dir, files[number]) != base:  # plan.json was changed by hand meanwhile
        return whole
    record = {
        "format": DELTA_FORMAT,
        "base": f"r{number}",
        "base_sha256": base,
        "sha256": sha256(after),
        "op": delta.diff(json.loads(before), doc) if old is None else delta.members(old, doc),
    }
    return f"{rev}.delta.json", json.dumps(record, ensure_ascii=False).encode()


# A delta's first bytes as revision_file writes them: its sha256 is read from them, so the delta
# (about as large as the plan) is not parsed for it. Other bytes are parsed whole.
DELTA_HEAD = re.compile(
    rb'\{"format": "%s", "base": "r[0-9]+", "base_sha256": "[0-9a-f]{64}", '
    rb'"sha256": "([0-9a-f]{64})", "op": ' % DELTA_FORMAT.encode()
)


def _sha_of(state_dir: str, name: str) -> str | None:
    """The sha256 of a revision's whole bytes: a delta says it, a snapshot is hashed."""
    path = os.path.join(state_dir, HISTORY_DIR, name)
    try:
        with open(path, "rb") as f:
            if name.endswith(".delta.json") and (head := DELTA_HEAD.match(f.read(256))):
                return head[1].decode()
            f.seek(0)
            raw = f.read()
        if not name.endswith(".delta.json"):
            return sha256(raw)
        return str(json.loads(raw)["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # unreadable: the next revision is stored whole


def read_revision(state_dir: str, rev: str, dumps: Callable[[Any], bytes]) -> tuple[str, Any]:
    """Revision `rev` (r1, r2, …): the path to name in messages, and for a delta its document
    replayed from the last whole snapshot (each link checked by sha256; the schema is the
    caller's), else None: the caller loads the whole file at that path."""
    files = revision_files(state_dir)
    number = int(rev[1:])
    path = os.path.join(state_dir, HISTORY_DIR, files.get(number, f"{rev}.json"))
    if number not in files or not files[number].endswith(".delta.json"):
        return path, None
    chain = []
    while files.get(number, "").endswith(".delta.json"):
        chain.append(os.path.join(state_dir, HISTORY_DIR, files[number]))
        number -= 1
    if number not in files:
        raise DamagedFile(f"{chain[-1]}: its base r{number} is missing; damaged, left as it is")
    base = os.path.join(state_dir, HISTORY_DIR, files[number])
    try:
        with open(base, "rb") as f:
            raw = f.read()
        doc = json.loads(raw)
    except OSError as e:
        raise DamagedFile(f"{base}: cannot be read ({e.strerror})") from None
    except (ValueError, RecursionError):
        raise DamagedFile(f"{base}: not valid JSON; damaged, left as it is") from None
    sha = sha256(raw)
    for link in reversed(chain):
        doc, sha = _replay(link, doc, sha, dumps if link == chain[0] else None)
    return path, doc


def _replay(
    path: str, doc: Any, base_sha: str, dumps: Callable[[Any], bytes] | None
) -> tuple[Any, str]:
    """The document after the delta at `path`, and its sha256 (checked when `dumps` is given:
    the last link, so a replay that went wrong anywhere is caught)."""
    try:
        with open(path, "rb") as f:
            record = json.loads(f.read())
        if record.get("format") != DELTA_FORMAT or record.get("base_sha256") != base_sha:
            raise ValueError("not a delta of the revision before it")
        doc = delta.patch(doc, record["op"])
        if dumps is not None and sha256(dumps(doc)) != record["sha256"]:
            raise ValueError("the replayed plan does not match its sha256")
        return doc, str(record["sha256"])
    except OSError as e:
        raise DamagedFile(f"{path}: cannot be read ({e.strerror})") from None
    except (ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError) as e:
        raise DamagedFile(f"{path}: not a usable delta ({e}); damaged, left as it is") from None
