"""A person's comments as text: `--comment` of `plan review reject` and `plan result
request-changes`, and the review companion's draft_feedback. Parsed here into the records
state/ takes (ReviewComment, ResultComment); the review page sends the records themselves.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import click

from state.errors import UsageError
from state.validation.limits import COMMENT_MAX, check_text

if TYPE_CHECKING:
    from collections.abc import Callable

    from state.storage.documents import ResultComment, ReviewComment

    CommentParamType = click.ParamType[Any, Any]  # generic from click 8.4 (cli/base.py)
else:
    CommentParamType = click.ParamType

# A comment's head: ID, then (a result's) an optional FILE, then an optional LINE, then the
# separator. The text is the rest, so a blank text is refused, never read as a shorter head
# ("DV-001:3=" is not DV-001 saying "3=").
REVIEW_HEAD = re.compile(r"\s*([A-Za-z]+-\d+)(?::(\d+))?\s*[:=]")
RESULT_HEAD = re.compile(r"\s*([A-Za-z]+-\d+)(?::((?!\d+\s*[:=])[^\s:=][^:=]*))?(?::(\d+))?\s*[:=]")
REVIEW_FORMS = (
    "'ID: text' or 'CC-nnn:LINE: text' (e.g. 'DL-003: why not a dict?', 'CC-004:7: off by one')"
)
RESULT_FORMS = (
    "'ID=TEXT', 'ID:LINE=TEXT' or 'M-nnn:FILE:LINE=TEXT' "
    "(e.g. 'M-001:src/app.py:7=off by one', 'DV-001=why?')"
)


def split(text: str, head: re.Pattern[str], forms: str) -> tuple[list[str | None], str]:
    """The head's groups (the anchor upper-cased) and the comment's text; UsageError, naming
    the field `comment`, when the head is missing or nothing follows it."""
    check_text("comment", text, COMMENT_MAX + 300, field=True)  # before the pattern reads it
    match = head.match(text)
    if not match:
        raise UsageError(f"comment {text[:40]!r}: expected {forms}", field="comment")
    anchor, *rest = match.groups()
    words = text[match.end() :].strip()
    if not words:
        raise UsageError(
            f"comment {text[:40]!r}: the comment on {anchor.upper()} has no text", field="comment"
        )
    return [anchor.upper(), *rest], words


def review_comment(text: str) -> ReviewComment:
    """`DL-003: text` or `CC-004:7: text` (line 7 of the changed file, as the diff shows it)."""
    (anchor, line), words = split(text, REVIEW_HEAD, REVIEW_FORMS)
    assert anchor is not None
    return {"anchor": anchor, "line": int(line) if line else None, "text": words}


def result_comment(text: str) -> ResultComment:
    """`M-001=text`, `M-001:src/app.py:7=text` (a line of the milestone's commit diff),
    `CC-004:7=text` (a line of the planned diff) or `DV-001: text`."""
    (anchor, path, line), words = split(text, RESULT_HEAD, RESULT_FORMS)
    assert anchor is not None
    return {
        "anchor": anchor,
        "file": path.strip() if path else None,
        "line": int(line) if line else None,
        "text": words,
    }


class Comment(CommentParamType):
    """--comment TEXT as a comment record; a malformed one is a usage error naming the option."""

    name = "comment"

    def __init__(self, parse: Callable[[str], Any]) -> None:
        self.parse = parse

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, dict):  # already a record
            return value
        try:
            return self.parse(str(value))
        except UsageError as e:
            if isinstance(param, click.Option):
                e.relabel(param.opts[0])
            raise click.UsageError(e.message, ctx) from None


REVIEW_COMMENT = Comment(review_comment)
RESULT_COMMENT = Comment(result_comment)
