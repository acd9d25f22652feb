"""The vocabulary (state/vocab.py) says what the pydantic models accept, word for word, so the
two cannot drift; its members behave as the plain strings the files hold."""

from __future__ import annotations

import json
from enum import Enum
from typing import Any, get_args

import pytest

from state import vocab
from state.storage import models

# Where the model declares each word list: a Literal alias, or a field's annotation.
LITERALS: list[tuple[type[Enum], Any]] = [
    (vocab.Phase, models.Phase),
    (vocab.Severity, models.Severity),
    (vocab.ItemStatus, models.QRItem.model_fields["status"].annotation),
    (vocab.LoopState, models.QRLoop.model_fields["state"].annotation),
    (vocab.ReviewVerdict, models.Review.model_fields["verdict"].annotation),
    (vocab.WorkflowName, models.Session.model_fields["workflow"].annotation),
]


@pytest.mark.parametrize(("enum", "literal"), LITERALS, ids=[e.__name__ for e, _ in LITERALS])
def test_each_enum_is_the_models_literal(enum: type[Enum], literal: Any) -> None:
    assert [m.value for m in enum] == list(get_args(literal))


def test_session_statuses_are_the_models() -> None:
    assert sorted(m.value for m in vocab.SessionStatus) == sorted(get_args(models.SessionStatus))


def test_the_status_classes_cover_every_status_once() -> None:
    statuses = set(vocab.SessionStatus)
    assert statuses == vocab.PLANNING | vocab.SETTLED
    assert not vocab.PLANNING & vocab.SETTLED
    assert vocab.ENDED | {vocab.SessionStatus.COMPLETED} == vocab.CLOSED
    assert not vocab.ENDED & vocab.APPROVED


def test_documents_are_the_models_session_files() -> None:
    assert {d.value for d in vocab.Document} == set(models.MODELS) - {"qr", "config"}


def test_a_word_is_its_string() -> None:
    word = vocab.SessionStatus.RESULT_REVIEW
    assert word == "result_review" and hash(word) == hash("result_review")
    assert "result_review" in vocab.APPROVED and word in {"result_review"}
    assert f"{word}" == str(word) == "result_review"
    assert json.dumps({"status": word}) == '{"status": "result_review"}'
    assert vocab.SessionStatus("design") is vocab.SessionStatus.DESIGN
    assert "bogus" not in vocab.SETTLED
