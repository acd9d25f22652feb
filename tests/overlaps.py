"""Sessions that plan files, written as the store would, for the overlapping-plans tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def planning(
    project: Path,
    name: str,
    files: list[str] = [],  # noqa: B006 (never mutated)
    intents: list[tuple[str, str | None]] = [],  # noqa: B006 (file, function)
    status: str | None = None,
    created_at: str = "2024-05-01T12:00:00Z",
) -> Path:
    """A session .planner/NAME of `project` whose one milestone M-001 names `files` and has
    an intent CI-n per (file, function); its status and start time as given."""
    from state.ops import session

    store = session.create(str(project), f"Task {name}", {}, non_interactive=False)
    target = project / ".planner" / name
    Path(store.dir).rename(target)
    (project / ".planner" / "ACTIVE").unlink()
    milestone: dict[str, Any] = {"id": "M-001", "number": 1, "name": "One", "files": files}
    milestone["code_intents"] = [
        {"id": f"CI-{n:03d}", "file": file, "function": function, "behavior": "changes"}
        for n, (file, function) in enumerate(intents, 1)
    ]
    edit(target / "plan.json", milestones=[milestone])
    edit(target / "session.json", created_at=created_at, updated_at=created_at)
    if status:
        edit(target / "session.json", status=status)
    return target


def edit(path: Path, **fields: Any) -> None:
    doc = json.loads(path.read_text())
    doc.update(fields)
    path.write_text(json.dumps(doc, indent=2))
