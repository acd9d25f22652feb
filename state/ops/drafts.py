"""Drafts of review feedback (FD-NNN) that the review companion writes for the person to send:
drafts.json in the session, one transaction with its audit line; which round a draft belongs
to and who sends it: docs/design.md, "The review companion" (Drafts, not verdicts).
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict  # pydantic validates typing's only from Python 3.12

from state import clock
from state.errors import DamagedFile, UsageError
from state.storage.journal import read_if_any
from state.storage.store import dumps
from state.vocab import ReviewVerdict

if TYPE_CHECKING:
    from state.rules.session_store import Store, Transaction
    from state.storage.documents import ReviewComment, Session

DRAFTS_FILE = "drafts.json"
DRAFTS_KEPT = 50  # the newest drafts kept; the audit log records every one that was made
# The statuses a plan review is open or to come in: a draft is feedback on that review.
STRICT = ConfigDict(extra="forbid", strict=True)


# drafts.json as its TypedDicts, validated by pydantic as they are: one definition of the file.
# Every key is required: the product has always written every one.
@with_config(STRICT)
class DraftComment(TypedDict):
    """A comment as `plan review reject --comment` records it (a ReviewComment)."""

    anchor: Annotated[str, Field(pattern=r"^[A-Za-z]+-\d+$")]
    line: Annotated[int, Field(ge=1)] | None
    text: Annotated[str, Field(min_length=1)]


@with_config(STRICT)
class Draft(TypedDict):
    id: Annotated[str, Field(pattern=r"^FD-\d{3,}$")]
    round: Annotated[int, Field(ge=1)]
    """The review round the feedback is for."""
    at: str
    text: str
    comments: list[DraftComment]
    sent: bool
    """True once `plan review reject --draft` sent it."""


@with_config(STRICT)
class Drafts(TypedDict):
    schema_version: Literal[1]
    drafts: list[Draft]


DRAFTS = TypeAdapter(Drafts)


def load(state_dir: str) -> Drafts:
    """drafts.json ({"drafts": []} when there is none); DamagedFile names the file."""
    path = os.path.join(state_dir, DRAFTS_FILE)
    raw = read_if_any(path)
    if raw is None:
        return {"schema_version": 1, "drafts": []}
    try:
        return DRAFTS.validate_python(json.loads(raw))
    except json.JSONDecodeError as e:  # said as store.py says it of the other files
        problem = (
            f"not valid JSON ({e.msg.removesuffix(' at')} at line {e.lineno} column {e.colno})"
        )
        raise DamagedFile(f"{path}: {problem}; damaged, left as it is") from None
    except (ValueError, ValidationError, RecursionError) as e:
        problem = str(e).splitlines()[0]
        raise DamagedFile(f"{path}: {problem}; damaged, left as it is") from None


def feedback_round(session: Session) -> int:
    """The review round feedback given now would close: the open one, else the next."""
    reviews = session["reviews"]
    if reviews and reviews[-1]["verdict"] == ReviewVerdict.SUBMITTED:
        return reviews[-1]["round"]
    return len(reviews) + 1


def latest(state_dir: str, session: Session) -> Draft | None:
    """The newest unsent draft for the round feedback would close now, or None."""
    round_ = feedback_round(session)
    found = [d for d in load(state_dir)["drafts"] if d["round"] == round_ and not d["sent"]]
    return found[-1] if found else None


def add(tx: Transaction, session: Session, text: str, comments: list[ReviewComment]) -> str:
    """Store a draft of already checked feedback (state/ops/review_ops.py draft_feedback) for the
    round feedback would close now; its id. The oldest beyond DRAFTS_KEPT are dropped."""
    doc = load(tx.store.dir)
    number = max((int(d["id"][3:]) for d in doc["drafts"]), default=0) + 1
    draft: Draft = {
        "id": f"FD-{number:03d}",
        "round": feedback_round(session),
        "at": clock.now(),
        "text": text,
        "comments": list(comments),
        "sent": False,
    }
    doc["drafts"] = [*doc["drafts"], draft][-DRAFTS_KEPT:]
    tx.put(DRAFTS_FILE, dumps(doc))
    tx.note(draft=draft["id"], round=draft["round"])
    return draft["id"]


def take(tx: Transaction, session: Session) -> Draft:
    """The draft `plan review reject --draft` sends, marked sent in the same transaction;
    UsageError when the open round has none."""
    draft = latest(tx.store.dir, session)
    if draft is None:
        raise UsageError(
            f"draft: no unsent draft for review round {feedback_round(session)} (the review "
            "companion's draft_feedback makes one)",
            field="draft",
        )
    doc = load(tx.store.dir)
    for d in doc["drafts"]:
        if d["id"] == draft["id"]:
            d["sent"] = True
    tx.put(DRAFTS_FILE, dumps(doc))
    tx.note(draft=draft["id"])
    return draft


def drafts_of(store: Store) -> list[Draft]:
    return list(load(store.dir)["drafts"])
