"""Creating a session: its directory under .planner/, its first files, and ACTIVE."""

from __future__ import annotations

import os

from state import clock, gitinfo, schema
from state.store import Store, write_atomic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def new_session_id(task: str) -> str:
    """Readable and unique: date, a slug of the task, a short random part."""
    slug = "".join(c if c.isalnum() else "-" for c in task.lower()[:60])
    slug = "-".join(part for part in slug.split("-") if part)[:40].strip("-") or "plan"
    day = clock.now()[:10]
    return f"{day}-{slug}-{os.urandom(3).hex()}"


def new_plan_id() -> str:
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # a version-4 UUID without importing uuid
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def create(root: str, task: str, config: dict[str, Any], non_interactive: bool) -> Store:
    """Make .planner/<id>/ with session.json, plan.json and context.json; make it ACTIVE."""
    home = os.path.join(root, ".planner")
    os.makedirs(home, exist_ok=True)
    write_gitignore(home)
    session_id = new_session_id(task)
    state_dir = os.path.join(home, session_id)
    os.makedirs(state_dir)
    store = Store(state_dir)
    stamp = clock.now()
    with store.transaction("session create") as tx:
        tx.create(
            "session",
            {
                **schema.defaults("session"),
                "id": session_id,
                "task": task,
                "created_at": stamp,
                "updated_at": stamp,
                "project_root": root,
                "base_commit": gitinfo.head_commit(root),
                "non_interactive": non_interactive,
                "config": config,
            },
        )
        tx.create(
            "plan", {**schema.defaults("plan"), "plan_id": new_plan_id(), "created_at": stamp}
        )
        tx.create("context", schema.defaults("context"))
    make_active(root, session_id)
    return store


# What stays local (README, "Which files to commit"): the review record is plan.json,
# session.json, context.json, qr-*.json, execution.json and plan.md.
GITIGNORE = """\
# Written by planner when the first session started: these files are local.
# Commit plan.json, session.json, context.json, qr-*.json, execution.json and plan.md.
ACTIVE
.lock
*.lock
*.tmp
*.journal
journal*
audit.jsonl
history/
"""


def write_gitignore(home: str) -> None:
    """.planner/.gitignore, once: a file the user edited is theirs."""
    path = os.path.join(home, ".gitignore")
    if not os.path.exists(path):
        write_atomic(path, GITIGNORE.encode())


def make_active(root: str, session_id: str) -> None:
    write_atomic(os.path.join(root, ".planner", "ACTIVE"), (session_id + "\n").encode())
