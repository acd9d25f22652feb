"""state.storage.schema: committed schemas are fresh; check() agrees with jsonschema, pydantic.

The agreement is fuzzed: valid documents of every state file are mutated at random and the
three validators must give the same verdict. Known disagreements are pinned one by one.
"""

from __future__ import annotations

import copy
import json
import os
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, assume, event, given, note, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from state.storage import models, schema
from tests.state import builders

# --- freshness -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(models.MODELS))
def test_committed_schema_is_what_models_export(name: str) -> None:
    path = os.path.join(schema.SCHEMA_DIR, f"{name}.json")
    with open(path, encoding="utf-8") as f:
        committed = f.read()
    exported = json.dumps(models.export_schema(name), indent=1) + "\n"
    assert committed == exported, f"{path} is stale: run `python -m state.storage.models`"


@pytest.mark.parametrize("definition", sorted(schema.load_schema("plan")["$defs"]))
def test_a_blank_item_has_the_models_fields_in_their_order(definition: str) -> None:
    """plan_ops makes a new item from schema.blank: the model's fields in its order (as plan
    show prints them), its defaults, None where the command fills the field."""
    model = getattr(models, definition)
    blank = schema.blank("plan", definition)
    assert list(blank) == list(model.model_fields)
    for name, field in model.model_fields.items():
        expected = None if field.is_required() else field.get_default(call_default_factory=True)
        dumped = expected.model_dump() if isinstance(expected, BaseModel) else expected
        assert blank[name] == dumped, name
        if isinstance(dumped, dict):
            assert list(blank[name]) == list(dumped), name


def test_every_committed_schema_has_a_model() -> None:
    files = {f.removesuffix(".json") for f in os.listdir(schema.SCHEMA_DIR) if f.endswith(".json")}
    assert files == set(models.MODELS)


def test_committed_typed_dicts_are_what_the_models_say() -> None:
    """state/storage/documents.py: one TypedDict per model, field for field, type for type."""
    path = os.path.join(os.path.dirname(models.__file__), "documents.py")
    with open(path, encoding="utf-8") as f:
        assert f.read() == models.typed_dicts(), (
            f"{path} is stale: run `python -m state.storage.models`"
        )


def test_every_model_field_is_a_typed_dict_key() -> None:
    from state.storage import documents

    for name in ("Plan", "Milestone", "Context", "Question", "QRReport", "Session", "Execution"):
        model, typed = getattr(models, name), getattr(documents, name)
        assert list(typed.__annotations__) == list(model.model_fields), name
        assert typed.__required_keys__ == frozenset(model.model_fields), name  # defaults filled


def test_a_new_kind_of_field_type_is_refused_not_misspelt() -> None:
    with pytest.raises(TypeError, match="no TypedDict spelling"):
        models._annotation(set[str], [])


# --- three-way agreement, fuzzed -----------------------------------------------------------


def verdicts(name: str, doc: Any) -> tuple[list[str], bool, bool, Any]:
    """(check's problems, jsonschema's verdict, pydantic's verdict, the doc check filled)."""
    filled = copy.deepcopy(doc)
    problems = schema.check(name, filled)
    by_jsonschema = jsonschema.Draft202012Validator(schema.load_schema(name)).is_valid(
        copy.deepcopy(doc)
    )
    try:
        models.MODELS[name].model_validate(copy.deepcopy(doc), strict=True)
        by_pydantic = True
    except ValidationError:
        by_pydantic = False
    return problems, by_jsonschema, by_pydantic, filled


def _enum_strings() -> list[str]:
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            found.update(v for v in node.get("enum", []) if isinstance(v, str))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for name in models.MODELS:
        walk(schema.load_schema(name))
    return sorted(found)


# Other enums' values, near misses, and the empty string.
ENUM_LIKE = [*_enum_strings(), "LOW", "Medium", "must", "done ", "plan-design2", "auto", ""]
# Ids and timestamps broken in the ways people break them (plus a few valid ones).
ID_LIKE = [
    "DL-01",
    "DL-0001",
    "DL-1000",
    "dl-001",
    " DL-001",
    "DL-001 ",
    "DL-001x",
    "DL-١٢٣",  # Arabic-Indic digits: \d matches them in Python, Rust regex and so pydantic
    "M-001",
    "CI-001",
    "Q-001",
    "OPT-a",
    "OPT-",
    "OPT-AB",
    "qa-7",
    "QA-001",
    "DV-001",
    "2024-05-01T12:00:00Z",
    "2024-05-01 12:00:00Z",
    "2024-05-01T12:00:00",
    "2024-05-01T12:00:00.Z",
    "2024-5-1T12:00:00Z",
    "a" * 64,
    "A" * 64,
    "f" * 63,
]
UNKNOWN_KEYS = ["unknown", "Id", "extra_field", "x-note", ""]
# Floats with a zero fraction are left out: see test_known_disagreements.
FRACTIONAL = st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer())
JSON_SCALARS = st.none() | st.booleans() | st.integers() | FRACTIONAL | st.text(max_size=8)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
MUTATIONS = ("delete", "add_key", "retype", "enum", "id", "number", "nest")


def json_type(value: Any) -> str:
    return schema.type_name(value)


def all_paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    paths = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            paths += all_paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            paths += all_paths(value, (*prefix, index))
    return paths


def get(doc: Any, path: tuple) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def mutate(data: st.DataObject, doc: Any) -> tuple[Any, tuple, str]:
    """One random mutation: (the new doc, the path it touched, what it did)."""
    kind = data.draw(st.sampled_from(MUTATIONS), label="mutation")
    paths = all_paths(doc)
    if kind == "add_key":
        paths = [p for p in paths if isinstance(get(doc, p), dict)]
    if kind == "delete":
        paths = [p for p in paths if p]
    if not paths:
        return doc, (), "nothing"
    path = data.draw(st.sampled_from(paths), label="path")
    old = get(doc, path)
    if kind == "delete":
        del get(doc, path[:-1])[path[-1]]
        return doc, path, "delete"
    if kind == "add_key":
        key = data.draw(st.sampled_from(UNKNOWN_KEYS), label="key")
        old[key] = data.draw(JSON_VALUES, label="value")
        return doc, (*path, key), "add_key"
    if kind == "retype":
        new = data.draw(JSON_VALUES.filter(lambda v: json_type(v) != json_type(old)), label="new")
    elif kind == "enum":
        new = data.draw(st.sampled_from(ENUM_LIKE), label="new")
    elif kind == "id":
        new = data.draw(st.sampled_from(ID_LIKE), label="new")
    elif kind == "number":
        new = data.draw(st.sampled_from([-1, 0, 1, 2, 10**20]), label="new")
    else:
        new = data.draw(st.sampled_from([[old], {"value": old}, {"id": old}]), label="new")
    if not path:
        return new, path, kind
    get(doc, path[:-1])[path[-1]] = new
    return doc, path, kind


def known_disagreement(doc: Any) -> bool:
    """pydantic (strict) takes True for Literal[1] (schema_version); see the test below."""
    return isinstance(doc, dict) and isinstance(doc.get("schema_version"), bool)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(builders.VALID_DOCUMENTS))
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_check_agrees_with_jsonschema_and_pydantic(name: str, data: st.DataObject) -> None:
    doc = builders.fresh(name)
    touched = []
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        doc, path, kind = mutate(data, doc)
        touched.append((path, kind))
    assume(not known_disagreement(doc))
    note(f"mutations: {touched}")
    note(f"document: {json.dumps(doc)[:4000]}")

    problems, by_jsonschema, by_pydantic, filled = verdicts(name, doc)
    note(f"problems: {problems}")
    event("valid" if by_pydantic else "invalid")
    assert (not problems) == by_jsonschema == by_pydantic
    if by_pydantic:
        # The defaults check() filled in are exactly pydantic's.
        model = models.MODELS[name].model_validate(copy.deepcopy(doc), strict=True)
        assert filled == model.model_dump(mode="json")
    if problems and len(touched) == 1 and len(touched[0][0]) > 1:
        # Every problem is reported at or below the parent of what the mutation touched.
        parent = schema.format_path(list(touched[0][0][:-1]))
        assert all(p.startswith(parent) for p in problems), (parent, problems)


@pytest.mark.parametrize("name", sorted(builders.VALID_DOCUMENTS))
def test_the_starting_documents_are_valid_everywhere(name: str) -> None:
    problems, by_jsonschema, by_pydantic, _ = verdicts(name, builders.fresh(name))
    assert (problems, by_jsonschema, by_pydantic) == ([], True, True)


def _with(name: str, path: tuple, value: Any) -> Any:
    doc = builders.fresh(name)
    get(doc, path[:-1])[path[-1]] = value
    return doc


# (document, (check accepts, jsonschema accepts, pydantic accepts), why)
KNOWN_DISAGREEMENTS = [
    pytest.param(
        "plan",
        _with("plan", ("milestones", 0, "number"), 1.0),
        (False, True, False),
        id="integral-float-for-integer",  # JSON Schema's integer includes 1.0
    ),
    pytest.param(
        "plan",
        _with("plan", ("schema_version",), 2.0),
        (False, True, True),
        id="integral-float-for-const",  # pydantic's Literal[2] takes 2.0 even when strict
    ),
    pytest.param(
        "context",
        _with("context", ("schema_version",), True),
        (False, False, True),
        id="bool-for-const-1",  # pydantic's Literal[1] takes True (True == 1) even when strict
    ),
    pytest.param(
        "plan",
        _with("plan", ("milestones", 0, "id"), "M-001\n"),
        (False, True, False),
        id="trailing-newline-in-pattern",  # jsonschema uses Python's re, where $ allows "\n"
    ),
]


@pytest.mark.parametrize(("name", "doc", "expected"), KNOWN_DISAGREEMENTS)
def test_known_disagreements(name: str, doc: Any, expected: tuple[bool, bool, bool]) -> None:
    """check() follows the JSON types strictly; these are the libraries' own quirks."""
    problems, by_jsonschema, by_pydantic, _ = verdicts(name, doc)
    assert (not problems, by_jsonschema, by_pydantic) == expected


# --- defaults ------------------------------------------------------------------------------


def test_missing_overview_is_filled_with_the_default() -> None:
    doc = builders.fresh("plan")
    del doc["overview"]
    assert schema.check("plan", doc) == []
    assert doc["overview"] == {"title": "", "problem": "", "approach": ""}
    assert doc["overview"] == models.Overview().model_dump()


def test_nested_defaults_are_filled() -> None:
    doc = {
        "plan_id": "p",
        "created_at": builders.TS,
        "milestones": [{"id": "M-001", "number": 1, "name": "n"}],
    }
    assert schema.check("plan", doc) == []
    milestone = doc["milestones"][0]
    assert milestone["tests"]["scenarios"] == {"normal": [], "edge": [], "error": []}
    assert milestone["risk"] == "medium"
    assert milestone["documentation"]["module_comment"] is None
    assert doc == models.Plan.model_validate(doc, strict=True).model_dump(mode="json")


def test_milestone_defaults_cover_every_optional_field() -> None:
    defaults = schema.defaults("plan", "Milestone")
    optional = {k for k, f in models.Milestone.model_fields.items() if not f.is_required()}
    assert set(defaults) == optional
    assert {"id", "number", "name"}.isdisjoint(defaults)


def _definitions() -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    for name in sorted(models.MODELS):
        found.append((name, None))
        found += [(name, d) for d in sorted(schema.load_schema(name).get("$defs", {}))]
    return found


@pytest.mark.parametrize(("name", "definition"), _definitions())
def test_defaults_match_pydantic(name: str, definition: str | None) -> None:
    model: type[BaseModel] = getattr(models, definition) if definition else models.MODELS[name]
    expected = {}
    for key, field in model.model_fields.items():
        if field.is_required():
            continue
        value = field.get_default(call_default_factory=True)
        expected[key] = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
    assert schema.defaults(name, definition) == expected


def test_defaults_are_fresh_objects() -> None:
    first = schema.defaults("plan")
    first["milestones"].append("x")
    first["overview"]["title"] = "changed"
    second = schema.defaults("plan")
    assert second["milestones"] == []
    assert second["overview"]["title"] == ""


# --- messages name the JSON path -----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (
            ("milestones", 0, "risk"),
            "extreme",
            "milestones[0].risk: 'extreme' is not one of low, medium, high",
        ),
        (
            ("milestones", 0, "code_intents", 0, "params", "name"),
            3,
            "milestones[0].code_intents[0].params.name: expected string, got integer",
        ),
        (
            ("planning_context", "choices", 0, "picked"),
            7,
            "planning_context.choices[0].picked: expected string, got integer",
        ),
        (
            ("milestones", 1, "depends_on", 0),
            "M-1",
            r"milestones[1].depends_on[0]: 'M-1' does not match ^M-\d{3,}$",
        ),
        (
            ("milestones", 0, "number"),
            0,
            "milestones[0].number: 0 is less than 1",
        ),
        (
            ("schema_version",),
            1,
            "schema_version: 1 is not one of 2",
        ),
    ],
)
def test_messages_name_the_json_path(path: tuple, value: Any, message: str) -> None:
    assert schema.check("plan", _with("plan", path, value)) == [message]


def test_missing_and_unknown_fields_are_named() -> None:
    doc = builders.fresh("plan")
    del doc["milestones"][1]["name"]
    doc["planning_context"]["decision_log"][0]["extra"] = 1
    assert schema.check("plan", doc) == [
        "planning_context.decision_log[0].extra: unknown field",
        "milestones[1].name: missing",
    ]


def test_a_document_of_the_wrong_type_is_named_as_the_document() -> None:
    assert schema.check("plan", []) == ["(document): expected object, got array"]
