"""drafts.json is its TypedDicts, validated by pydantic as they are (state/ops/drafts.py): a file
the product wrote loads as written; a missing key, an extra key or a bad value is damage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from state.errors import DamagedFile
from state.ops import drafts

DRAFT = {
    "id": "FD-001",
    "round": 1,
    "at": "2026-01-01T00:00:00Z",
    "text": "Why not a dict?",
    "comments": [{"anchor": "CC-004", "line": 7, "text": "off by one"}],
    "sent": False,
}


def write(state: Path, doc: Any) -> None:
    (state / drafts.DRAFTS_FILE).write_text(json.dumps(doc))


def test_no_file_is_no_draft(tmp_path: Path) -> None:
    assert drafts.load(str(tmp_path)) == {"schema_version": 1, "drafts": []}


def test_a_written_file_loads_as_it_was_written(tmp_path: Path) -> None:
    doc = {"schema_version": 1, "drafts": [DRAFT, {**DRAFT, "id": "FD-002", "comments": []}]}
    write(tmp_path, doc)
    assert drafts.load(str(tmp_path)) == doc


@pytest.mark.parametrize("key", list(DRAFT))
@pytest.mark.parametrize("change", ["drop", "extra", "wrong type"])
def test_a_key_missing_added_or_mistyped_is_damage(tmp_path: Path, key: str, change: str) -> None:
    draft: dict[str, Any] = {k: v for k, v in DRAFT.items() if not (change == "drop" and k == key)}
    if change == "extra":
        draft[key + "_x"] = None
    elif change == "wrong type":
        draft[key] = [1] if isinstance(draft[key], str) else "x"
    write(tmp_path, {"schema_version": 1, "drafts": [draft]})
    with pytest.raises(DamagedFile, match=r"drafts\.json: .*damaged, left as it is"):
        drafts.load(str(tmp_path))


@pytest.mark.parametrize(
    "comment",
    [
        {"anchor": "CC 4", "line": 7, "text": "x"},
        {"anchor": "CC-004", "line": 0, "text": "x"},
        {"anchor": "CC-004", "line": None, "text": ""},
        {"anchor": "CC-004", "line": "7", "text": "x"},
    ],
)
def test_a_comment_is_checked_as_review_reject_checks_it(
    tmp_path: Path, comment: dict[str, Any]
) -> None:
    write(tmp_path, {"schema_version": 1, "drafts": [{**DRAFT, "comments": [comment]}]})
    with pytest.raises(DamagedFile):
        drafts.load(str(tmp_path))
