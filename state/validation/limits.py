"""Limits on what a person types (review feedback, comments, names, answers, reasons): each
is stored in session.json or context.json and shown again in every later prompt, so a size
is refused before anything is written (exit 2; the review page answers 413)."""

from __future__ import annotations

from state.errors import UsageError

NAME_MAX = 100  # characters of a name: who approves, accepts, rejects
FEEDBACK_MAX = 10_000  # characters of a review round's overall feedback
COMMENT_MAX = 2_000  # characters of one review comment
COMMENTS_MAX = 50  # comments in one review round
ANSWER_MAX = 4_000  # characters of an answer to a question, its condition included
REASON_MAX = 2_000  # characters of a reason (qr accept, cancel, fail)
# The review page's request body: every text above at its limit, JSON-escaped, fits.
BODY_MAX = 1_048_576


class TooLarge(UsageError):
    """A person's input over its limit: exit 2, HTTP 413; nothing was stored."""


def check_text(what: str, text: str | None, limit: int, field: bool = False) -> None:
    """TooLarge when `text` has more than `limit` characters (`field`: `what` is the name of
    the argument it came in)."""
    if text is not None and len(text) > limit:
        raise TooLarge(
            f"{what}: {len(text):,} characters is over the limit of {limit:,}; "
            "nothing was stored (shorten it, or put the long text in a file of the project)",
            field=what if field else None,
        )


def check_count(what: str, count: int, limit: int, field: str | None = None) -> None:
    """TooLarge when there are more than `limit` of something (`field`: the argument)."""
    if count > limit:
        raise TooLarge(
            f"{what}: {count} is over the limit of {limit}; nothing was stored", field=field
        )
