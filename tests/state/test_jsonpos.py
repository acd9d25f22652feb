"""state.storage.jsonpos: the line and column of every key and element, and a finding's path."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from state.storage.jsonpos import line_col, pointer_of, positions

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=20,
)


def value_at(doc: object, pointer: tuple) -> object:
    for part in pointer:
        doc = doc[part]  # type: ignore[index]
    return doc


@given(JSON, st.sampled_from([None, 1, 2]))
def test_every_position_points_at_its_key_or_element(doc: object, indent: int | None) -> None:
    text = json.dumps(doc, indent=indent)
    decoder = json.JSONDecoder()
    for pointer, offset in positions(text).items():
        found, _ = decoder.raw_decode(text, offset)
        if pointer and isinstance(pointer[-1], str):  # a member: its key
            assert found == pointer[-1]
        else:  # the document or an element: its value
            assert found == value_at(doc, pointer)


@settings(max_examples=100, deadline=None)
@given(JSON, st.sampled_from([None, 1, 2]))
def test_every_value_ends_where_its_text_ends(doc: object, indent: int | None) -> None:
    """The end of each path is just after its value: the text up to it decodes to the value."""
    text = json.dumps(doc, indent=indent)
    decoder = json.JSONDecoder()
    ends: dict = {}
    starts = positions(text, ends)
    assert set(ends) == set(starts)
    for pointer, end in ends.items():
        found, stop = decoder.raw_decode(text, _value_start(text, starts[pointer], pointer))
        assert stop == end and found == value_at(doc, pointer)


def _value_start(text: str, offset: int, pointer: tuple) -> int:
    """Past a member's key and colon to its value (an element starts at its value)."""
    if pointer and isinstance(pointer[-1], str):
        _, offset = json.JSONDecoder().raw_decode(text, offset)
        offset = text.index(":", offset) + 1
        while text[offset] in " \n":
            offset += 1
    return offset


def test_finding_paths_by_index_by_id_and_missing_keys() -> None:
    text = '{\n  "milestones": [\n    {"id": "M-001", "risk": "x"},\n    {"id": "M-002"}\n  ]\n}'
    doc = json.loads(text)
    assert pointer_of(doc, "milestones[1].id") == ("milestones", 1, "id")
    assert pointer_of(doc, "milestones[M-002].depends_on") == ("milestones", 1, "depends_on")
    assert pointer_of(doc, "plan.json:milestones[M-001].risk") == ("milestones", 0, "risk")
    assert line_col(text, positions(text, {})[("milestones", 0, "risk")]) == (3, 21)
    assert line_col(text, 0) == (1, 1)
