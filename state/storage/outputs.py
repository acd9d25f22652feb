"""Where `plan render -o FILE` may write, and the write itself.

While planning only inside the session directory (planning is read-only for the project);
after approval anywhere. Never over one of the session's state files; always atomic.
"""

from __future__ import annotations

import os

from state.errors import Refused, UsageError
from state.storage.store import CHECKED, write_atomic
from state.vocab import APPROVED, ENDED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.storage.store import DocumentStore

STATE_NAMES = frozenset(
    {"session.json", "plan.json", "context.json", "execution.json", "reconcile.json"}
    | {"audit.jsonl", ".lock", ".journal", "history", CHECKED}
)


def render_target(store: DocumentStore, output: str, status: str) -> tuple[str, str | None]:
    """(the absolute path `plan render -o output` may write, its path relative to the session
    directory or None when outside it), or UsageError/Refused."""
    path = os.path.abspath(output)
    session_dir = os.path.realpath(store.dir)
    where = os.path.realpath(os.path.dirname(path))
    inside = where == session_dir or where.startswith(session_dir + os.sep)
    rel = os.path.relpath(os.path.join(where, os.path.basename(path)), session_dir)
    first = rel.split(os.sep)[0]
    if inside and (first in STATE_NAMES or (first.startswith("qr-") and first.endswith(".json"))):
        raise UsageError(f"-o {output}: is one of the session's state files; choose another name")
    if not inside and status not in APPROVED | ENDED:
        raise Refused(
            f"-o {output}: while planning (status {status}) plan render writes only inside "
            f"the session directory {store.dir} (e.g. -o {os.path.join(store.dir, 'plan.md')})"
        )
    if os.path.isdir(path):
        raise UsageError(f"-o {output}: is a directory")
    return path, rel if inside else None


def write_render(store: DocumentStore, output: str, text: str) -> str:
    """Write the rendered plan where render_target allows: inside the session in one
    transaction (journaled, audited), elsewhere atomically. Returns the path written."""
    with store.transaction("render") as tx:
        path, rel = render_target(store, output, tx.read("session")["status"])
        if rel is not None:
            tx.put(rel, text.encode())
        else:
            write_atomic(path, text.encode())
    return path
