"""Bad input gets a clear answer: fuzzed arguments and fuzzed plan.json, never a traceback."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cli.main import main
from tests.cli.tree import commands

pytestmark = pytest.mark.slow  # hundreds of generated commands and documents


TABLE = commands()
EXIT_CODES = {0, 2, 3, 4}
WORDS = st.sampled_from(
    [
        "--phase",
        "--status",
        "--id",
        "M-001",
        "DL-001",
        "CI-001",
        "qa-001",
        "--risk",
        "--file",
        "--",
        "-",
        "--json",
        "plan-design",
        "FAIL",
        "",
    ]
)
ARG = st.one_of(WORDS, st.text(max_size=12))


@pytest.fixture
def in_session(session_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(session_dir.parent.parent)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    return session_dir


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=st.sampled_from(sorted(TABLE)), args=st.lists(ARG, max_size=8))
@example(name="mcp", args=[])  # a server with no byte stream to serve on: exit 2, not a bug
@example(name="question import", args=["\x00"])  # a NUL in a file name: open() ValueError
def test_fuzzed_arguments_get_an_exit_code_and_one_line_reason(
    in_session: Path, capsys: pytest.CaptureFixture[str], name: str, args: list[str]
) -> None:
    if name in ("schema", "review open") or "--help" in args:
        return  # review open serves until interrupted (tests/cli/test_review_page.py has it)
    code, _, err = run([*name.split(), *args], capsys)
    assert code in EXIT_CODES, (name, args, err)
    assert "Traceback" not in err
    if code:
        assert err.startswith("plan"), err


def rich_plan() -> dict:
    from state.storage import schema

    milestone = {
        **schema.defaults("plan", "Milestone"),
        "id": "M-001",
        "number": 1,
        "name": "m",
        "code_intents": [
            {
                **schema.defaults("plan", "CodeIntent"),
                "id": "CI-001",
                "file": "a.py",
                "behavior": "b",
            }
        ],
    }
    return {
        **schema.defaults("plan"),
        "plan_id": "p",
        "created_at": "2026-11-22T10:00:00Z",
        "milestones": [milestone],
    }


VALID = rich_plan()


def json_values() -> st.SearchStrategy:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8))
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
        ),
        max_leaves=10,
    )


@st.composite
def damaged_plans(draw: st.DrawFn) -> bytes:
    doc = json.loads(json.dumps(VALID))
    how = draw(st.sampled_from(["replace", "delete", "add", "truncate", "garbage"]))
    if how == "truncate":
        text = json.dumps(doc)
        return text[: draw(st.integers(0, len(text) - 1))].encode()
    if how == "garbage":
        return draw(st.binary(max_size=40))
    node = doc
    for _ in range(draw(st.integers(0, 3))):
        children = [k for k, v in node.items() if isinstance(v, dict)]
        if not children:
            break
        node = node[draw(st.sampled_from(children))]
    key = draw(st.sampled_from(sorted(node)))
    if how == "replace":
        node[key] = draw(json_values())
    elif how == "delete":
        del node[key]
    else:
        node[draw(st.text(min_size=1, max_size=8))] = draw(json_values())
    return json.dumps(doc).encode()


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_fuzzed_plan_json_is_reported_never_overwritten(
    in_session: Path, capsys: pytest.CaptureFixture[str], data: st.DataObject
) -> None:
    path = in_session / "plan.json"
    content = data.draw(damaged_plans())
    path.write_bytes(content)
    for argv in (
        ["validate"],
        ["show"],
        ["decision", "add", "--decision", "d", "--reasoning", "r"],
    ):
        code, out, err = run(argv, capsys)
        assert code in EXIT_CODES and "Traceback" not in err, (argv, err)
        if code == 3:
            assert "plan.json" in err + out
            assert path.read_bytes() == content
