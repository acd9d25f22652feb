"""Issue 32: large documents are encoded and read through orjson, and nothing else changes:
the bytes are json's compact bytes (history's and .checked's sha256s depend on them, old
sessions read back unchanged), and a read gives json's document or json's error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from state.errors import DamagedFile, UsageError
from state.storage import store
from state.vocab import Phase

# Every JSON value a document can hold: no floats (no schema admits one, see below), and what
# json and orjson might write differently: control characters, U+2028, lone surrogates,
# characters beyond the BMP, ints beyond 64 bits, empty keys, nesting, str Enums.
texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=6) | st.sampled_from(
    ["", "\u2028\u2029", "\x00\x1f\x7f", '"\\/', "😀\U0010ffff", "\ud800", "a\udfffb", "é"]
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([2**63 - 1, -(2**63), 2**64 - 1, 2**64, -(2**63) - 1, 10**30]),
    texts,
    st.sampled_from(list(Phase)),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=20,
)


def json_bytes(value: Any) -> bytes | str:
    """What the store wrote before orjson: json's compact bytes, or the message it refused with."""
    return _or_message(lambda: json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _or_message(encode: Any) -> bytes | str:
    try:
        return store._utf8(encode())
    except UsageError as e:
        return str(e)


@settings(max_examples=500, deadline=None)
@given(values)
@example(2**64)
@example("\ud800")
@example({"": ["\u2028", {"x": -(2**63)}]})
def test_the_compact_encoding_is_jsons_byte_for_byte(value: Any) -> None:
    assert _or_message(lambda: store._compact(value)) == json_bytes(value)
    # a member as the store encoded it: f'{json.dumps(key)}:{compact}'
    member = f'"k":{json.dumps(value, ensure_ascii=False, separators=(",", ":"))}'
    assert _or_message(lambda: store._member("k", value)) == _or_message(lambda: member)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(texts, values, max_size=5), st.sampled_from([0, 40, 256 * 1024]))
def test_dumps_writes_what_it_wrote_with_json_alone(doc: dict[str, Any], limit: int) -> None:
    """Indented up to INDENT_UP_TO characters (not bytes), compact above; the same refusal of a
    lone surrogate, quoting the same text."""

    def before() -> bytes | str:
        text = json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n"
        if len(text) <= limit:
            text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        return _or_message(lambda: text)

    saved, store.INDENT_UP_TO = store.INDENT_UP_TO, limit
    try:
        assert _or_message(lambda: store.dumps(doc)) == before()
        if isinstance(written := before(), bytes) and limit == 40:
            assert store.Encoded(doc, None).data == written
    finally:
        store.INDENT_UP_TO = saved


def test_no_schema_admits_a_float() -> None:
    """Why floats need not be encoded as json does (orjson writes 1e-05 as 1e-5, NaN as null):
    no document field is a number, and `integer` refuses a float (state/storage/schema.py), so a
    document holding one is refused before it is written, and none is read."""
    types = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            kind = node.get("type")  # or a default's field named type
            types.update([kind] if isinstance(kind, str) else kind or [])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in Path(store.schema.SCHEMA_DIR).glob("*.json"):
        walk(json.loads(path.read_text()))
    assert "integer" in types and "number" not in types, types
    refused = store.schema.check("qr", {"iteration": 1.0})
    assert "iteration: " in " ".join(refused) and store.schema.check("qr", {"iteration": 1}) == [
        p for p in refused if not p.startswith("iteration: ")
    ]


def read(raw: bytes) -> tuple[str, Any]:
    """A read's outcome, comparable: the document with every value's type, or the error."""
    try:
        return "doc", typed(json.loads(raw))
    except (ValueError, RecursionError) as e:
        return "error", f"{type(e).__name__}: {e}"


def typed(value: Any) -> Any:
    if isinstance(value, dict):
        return [(k, typed(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [typed(v) for v in value]
    return type(value).__name__, repr(value)


def store_read(raw: bytes) -> tuple[str, Any]:
    try:
        return "doc", typed(store.loads(raw))
    except (ValueError, RecursionError) as e:
        return "error", f"{type(e).__name__}: {e}"


json_texts = st.one_of(
    values.map(lambda v: json.dumps(v, ensure_ascii=False).encode(errors="surrogatepass")),
    values.map(lambda v: json.dumps(v).encode()),
    st.floats().map(lambda f: json.dumps([f]).encode()),
    st.from_regex(rb"\A-?[0-9]{1,25}(\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?\Z"),
    st.binary(max_size=12),
    st.lists(st.sampled_from([b"{", b"}", b"[", b"]", b'"a"', b":", b",", b"1", b" ", b"\n"])).map(
        b"".join
    ),
)


@settings(max_examples=1000, deadline=None)
@given(json_texts)
@example(b'{"a":1,"b":2,"a":3}')
@example(b"[NaN, Infinity, -Infinity]")
@example(b"18446744073709551616")
@example(b"1e400")
@example(b'"\\ud800"')
@example(b"\xef\xbb\xbf{}")
@example('{"a": 1}'.encode("utf-16"))
@example(b"[" * 2000 + b"]" * 2000)
@example(b'{"a": 1,}')
@example(b'["\xff"]')
def test_a_large_read_gives_jsons_document_or_jsons_error(raw: bytes) -> None:
    saved, store.INDENT_UP_TO = store.INDENT_UP_TO, 0  # every document is "large"
    try:
        assert store_read(raw) == read(raw)
    finally:
        store.INDENT_UP_TO = saved


@pytest.mark.parametrize(
    "raw", [b'{"a": 1', b'{"id": "x", "n": 123456789012345678901234}', b"[1, 2]", b"{} {}"]
)
def test_a_large_documents_read_says_what_a_small_ones_says(
    tmp_path: Path, raw: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "qr-plan-design.json"
    path.write_bytes(raw)
    said = []
    for limit in (store.INDENT_UP_TO, 0):
        monkeypatch.setattr(store, "INDENT_UP_TO", limit)
        with pytest.raises(DamagedFile) as caught:
            store.load(str(path), "qr")
        said.append(str(caught.value))
    assert said[0] == said[1]
    assert "line 1 column 8" in said[0] or not raw.endswith(b"1")
