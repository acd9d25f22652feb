"""The fast parser answers only where click would answer the same."""

from __future__ import annotations

from typing import Any

import click
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from cli.fastargs import parse
from cli.main import build_click, table

TABLE = table()
CAPTURED: list[tuple[str, dict[str, Any]]] = []
GROUP = build_click(TABLE, run=lambda command, args: CAPTURED.append((command.name, args)))

TRICKY = st.sampled_from(
    [
        "",
        "-",
        "-x",
        "--",
        "a=b",
        "--json",
        "M-001",
        "DL-001",
        "0",
        "12",
        "1_0",
        " 3",
        "low",
        "high",
        "PASS",
        "design",
        "text",
        "ünï",
        "a b",
        "--state-dir",
        "=",
        "plan-design",
    ]
)


def click_parse(argv: list[str]) -> tuple[str, dict[str, Any]] | None:
    CAPTURED.clear()
    try:
        GROUP.main(args=argv, prog_name="plan", standalone_mode=False)
    except (click.ClickException, click.exceptions.Exit):
        return None
    return CAPTURED[0] if CAPTURED else None


def valid_value(draw: st.DrawFn, p: Any) -> str:
    if isinstance(p.type, tuple):
        return draw(st.sampled_from(p.type))
    if p.type is int:
        return str(draw(st.integers(0, 999)))
    return draw(st.sampled_from(["M-001", "a.py", "some text", "x=y", "-", "ünï"]))


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    """Mostly well-formed command lines (so the fast path answers), with some noise."""
    name = draw(st.sampled_from(sorted(TABLE)))
    argv = name.split()
    params = TABLE[name].params
    for p in params:
        if p.required or draw(st.integers(0, 3)) == 0:
            value = valid_value(draw, p)
            argv += [value] if p.positional else [p.option, value]
    for p in draw(st.lists(st.sampled_from(params), max_size=4)):
        if p.positional:
            argv.append(draw(TRICKY))
        elif p.flag:
            argv.append(draw(st.sampled_from([p.option, "--no-" + p.option[2:]])))
        elif p.switch:
            argv.append(p.option)
        elif draw(st.booleans()):
            argv += [p.option, draw(TRICKY)]
        else:
            argv.append(f"{p.option}={draw(TRICKY)}")
    if draw(st.integers(0, 3)) == 0:
        argv.insert(draw(st.integers(0, len(argv))), draw(TRICKY))
    return argv


@settings(max_examples=1500, deadline=None)
@given(command_lines())
def test_fast_parser_agrees_with_click(argv: list[str]) -> None:
    fast = parse(argv, TABLE)
    event("fast path" if fast else "left to click")
    if fast is not None:
        command, args = fast
        assert click_parse(argv) == (command.name, args), argv


@pytest.mark.parametrize(
    "argv",
    [
        ["decision", "add", "--decision", "d", "--reasoning", "r"],
        ["milestone", "add", "--name", "n", "--file", "a", "--file", "b", "--doc-only"],
        ["milestone", "set", "M-001", "--no-doc-only", "--risk=high"],
        ["qr", "add", "--phase", "plan-design", "--check", "c", "--json", "--state-dir", "x"],
        ["validate", "--phase", "code", "--format", "github", "some/dir"],
        ["log", "--limit", "3"],
        ["status"],
        ["apply", "-"],
        ["schema", "qr"],
    ],
)
def test_common_command_lines_take_the_fast_path(argv: list[str]) -> None:
    fast = parse(argv, TABLE)
    assert fast is not None and click_parse(argv) == (fast[0].name, fast[1])


@pytest.mark.parametrize(
    "argv",
    [
        ["decision", "add", "--help"],
        ["decision", "add", "-h"],
        ["status", "--frob"],
        ["decision", "add", "--decision", "d"],
        ["log", "--limit", "x"],
        ["nothing"],
        ["milestone", "add", "--name", "n", "--risk", "extreme"],
        ["decision"],
    ],
)
def test_anything_unusual_is_left_to_click(argv: list[str]) -> None:
    assert parse(argv, TABLE) is None
