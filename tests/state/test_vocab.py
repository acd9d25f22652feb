"""The vocabulary (state/vocab.py) is what the pydantic models accept, word for word (their
Literals are made from it); its members behave as the plain strings the files hold."""

from __future__ import annotations

import json
import re
from enum import Enum
from typing import get_args

import pytest
from pydantic import BaseModel

from state import vocab
from state.storage import models
from tests.conftest import REPO


@pytest.mark.parametrize("enum", models.WORDS, ids=[e.__name__ for e in models.WORDS])
def test_each_enum_types_a_model_field(enum: type[Enum]) -> None:
    kinds = [m for m in vars(models).values() if isinstance(m, type) and issubclass(m, BaseModel)]
    fields = [f for m in kinds for f in m.model_fields.values()]
    assert any(get_args(f.annotation) == tuple(enum) for f in fields)


def test_every_enum_is_used_by_the_product() -> None:
    """No Enum is left unused: each is named by a module of the product besides vocab.py."""
    sources = [
        p.read_text(encoding="utf-8")
        for layer in ("cli", "shared", "state", "skills", "hooks")
        for p in (REPO / layer).rglob("*.py")
        if p.name not in ("vocab.py", "documents.py")  # documents.py: generated from models
    ]
    enums = [e for e in vars(vocab).values() if isinstance(e, type) and issubclass(e, vocab.Word)]
    unused = [
        e.__name__
        for e in enums
        if e is not vocab.Word and not any(re.search(rf"\b{e.__name__}\b", s) for s in sources)
    ]
    assert unused == []


def test_session_statuses_are_the_models() -> None:
    annotation = models.Session.model_fields["status"].annotation
    assert list(get_args(annotation)) == list(vocab.SessionStatus)


def test_the_status_classes_cover_every_status_once() -> None:
    statuses = set(vocab.SessionStatus)
    assert statuses == vocab.PLANNING | vocab.SETTLED
    assert not vocab.PLANNING & vocab.SETTLED
    assert vocab.DRAFTING == vocab.PLANNING - vocab.APPROVED
    assert statuses == vocab.DRAFTING | vocab.APPROVED | vocab.CLOSED
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
    assert json.dumps({word: 1}) == '{"result_review": 1}'
    assert vocab.SessionStatus("design") is vocab.SessionStatus.DESIGN
    assert "bogus" not in vocab.SETTLED
