"""`plan` is one click application: help on every command, group and option; usage errors in
one line with exit 2; `plan apply` accepts and refuses exactly what the command line does."""

from __future__ import annotations

import io
import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli.base import COMMON, FILE_TEXT
from cli.commands.apply import batch_context, convert
from cli.main import main, plan
from state.errors import UsageError
from tests.cli import tree
from tests.conftest import Plan
from tests.state.builders import snapshot

OPERATIONS = tree.operations()


def test_every_command_group_and_option_has_help() -> None:
    assert plan.help
    everything = tree.walk()
    assert {"decision", "decision add", "apply", "status", "qr show"} <= set(everything)
    for name, command in everything.items():
        assert (command.help or "").strip(), f"plan {name} has no help"
        for param in command.params:
            if isinstance(param, click.Option):
                assert (param.help or "").strip(), f"plan {name} {param.opts[0]} has no help"


def test_every_command_takes_state_dir_and_json() -> None:
    for name, command in tree.commands().items():
        options = {o for p in command.params for o in p.opts}
        assert {"--state-dir", "--json"} <= options, name


def test_plan_version(project: Path) -> None:
    done = Plan(project)("--version")
    assert done.stdout == f"plan {version('planner')}\n"


@pytest.mark.parametrize("argv", [[], ["decision"], ["qr"]])
def test_a_group_alone_shows_its_help_and_exits_2(project: Path, argv: list[str]) -> None:
    done = Plan(project)(*argv, code=2)
    assert done.stderr.startswith(f"Usage: plan {' '.join(argv)}".rstrip() + " [OPTIONS]")
    assert "Commands:" in done.stderr and done.stdout == ""


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["decision", "add", "--decison", "x"], ["plan decision add:", "--decison", "--decision"]),
        (["milestone", "add", "--name", "n", "--risk", "extreme"], ["--risk", "extreme"]),
        (["log", "--limit", "many"], ["plan log:", "--limit", "many"]),
        (["qr", "add", "--phase", "plan-design"], ["plan qr add:", "--check"]),
        (["decision", "frob"], ["plan decision:", "frob"]),
    ],
)
def test_a_usage_error_exits_2_in_one_line_naming_the_option(
    plan: Plan, session_dir: Path, argv: list[str], words: list[str]
) -> None:
    before = snapshot(session_dir)
    done = plan(*argv, code=2)
    assert done.stderr.count("\n") == 1 and done.stdout == ""
    for word in words:
        assert word in done.stderr, (word, done.stderr)
    assert snapshot(session_dir) == before


# --- plan apply refuses what the command line refuses ---------------------------------------

REFUSED = [  # (op, its JSON args, the same as a command line, the argument a refusal names)
    (
        "milestone add",
        {"name": "n", "risk": "extreme"},
        ["--name", "n", "--risk", "extreme"],
        "--risk",
    ),
    (
        "change set",
        {"id": "CC-001", "context_lines": "x"},
        ["CC-001", "--context-lines", "x"],
        "--context-lines",
    ),
    ("decision add", {"decision": "d"}, ["--decision", "d"], "--reasoning"),
    (
        "decision add",
        {"decision": " ", "reasoning": "r"},
        ["--decision", " ", "--reasoning", "r"],
        "--decision",
    ),
    (
        "qr set",
        {"id": "qa-001", "phase": "plan-design", "status": "fail"},
        ["qa-001", "--phase", "plan-design", "--status", "fail"],
        "--status",
    ),
    ("exec done", {"evidence": ["e"]}, ["--evidence", "e"], "id"),
    (
        "decision add",
        {"decision": "d", "reasoning": "r", "why": "w"},
        ["--decision", "d", "--reasoning", "r", "--why", "w"],
        "unknown argument 'why'",
    ),
]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


def test_an_apply_error_names_its_command_once(
    session_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("[1,"))
    code, err = run(["apply", "-", "--state-dir", str(session_dir)], capsys)
    assert (code, err.split(" (")[0]) == (2, "plan apply: not valid JSON"), err
    monkeypatch.setattr("sys.stdin", io.StringIO("[]"))
    code, err = run(["apply", "-", "--verdict", "pass", "--state-dir", str(session_dir)], capsys)
    assert code == 3 and err.startswith("plan apply --verdict: the session is at no review"), err


@pytest.mark.parametrize(("op", "args", "argv", "option"), REFUSED)
def test_apply_refuses_what_the_command_line_refuses(
    session_dir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    op: str,
    args: dict[str, Any],
    argv: list[str],
    option: str,
) -> None:
    state = ["--state-dir", str(session_dir)]
    before = snapshot(session_dir)
    code, err = run([*op.split(), *argv, *state], capsys)
    # A command line names a positional by its metavar, and an unknown key as an option.
    named = {"id": "M-n", "unknown argument 'why'": "--why"}.get(option, option)
    assert code == 2 and err.startswith(f"plan {op}: ") and named in err, err
    batch = [{"op": "decision add", "args": {"decision": "d", "reasoning": "r"}}]
    batch.append({"op": op, "args": args})
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(batch)))
    code, err = run(["apply", "-", *state], capsys)
    assert code == 2 and err.startswith(f"plan apply: operation 2 ({op}): {option}"), err
    assert err.count("\n") == 1
    if "why" in option:
        assert "(known: decision, reasoning, question)" in err
    assert snapshot(session_dir) == before


# The same arguments, as JSON and as a command line: both accepted with the same values, or
# both refused. Values that start with "-" are left out: on a command line they are options.
VALUES = st.sampled_from(
    ["x", "", " ", "0", "12", "low", "extreme", "PASS", "fail", "plan-design", "MUST", "M-001"]
)


@st.composite
def arguments(draw: st.DrawFn) -> tuple[str, dict[str, Any], list[str]]:
    name = draw(st.sampled_from(sorted(OPERATIONS)))
    args: dict[str, Any] = {}
    options: list[str] = []
    positionals: list[str] = []
    gap = False  # positionals go in order: after one left out, the later ones are too
    for p in OPERATIONS[name].params:
        if p.name in COMMON or p.type is FILE_TEXT or draw(st.integers(0, 2)) == 0:
            gap |= isinstance(p, click.Argument)
            continue
        assert p.name is not None
        if isinstance(p, click.Argument):
            if gap:
                continue
            args[p.name] = draw(VALUES)
            positionals.append(args[p.name])
        elif isinstance(p, click.Option) and p.is_flag:
            args[p.name] = draw(st.booleans())
            if args[p.name]:
                options.append(p.opts[0])
            elif p.secondary_opts:
                options.append(p.secondary_opts[0])
        elif p.multiple:
            args[p.name] = draw(st.lists(VALUES, max_size=2))
            for value in args[p.name]:
                options += [p.opts[0], value]
        else:
            args[p.name] = draw(VALUES)
            options += [p.opts[0], args[p.name]]
    return name, args, [*positionals, *options]


@settings(max_examples=600, deadline=None)
@given(arguments())
def test_apply_and_the_command_line_agree_on_every_argument(
    case: tuple[str, dict[str, Any], list[str]],
) -> None:
    name, args, argv = case
    command = OPERATIONS[name]
    try:
        ctx = command.make_context(name.split()[-1], list(argv), parent=click.Context(plan))
        by_cli: dict[str, Any] | None = {
            k: list(v) if isinstance(v, tuple) else v
            for k, v in ctx.params.items()
            if k not in COMMON
        }
    except click.ClickException:
        by_cli = None
    try:
        by_apply: dict[str, Any] | None = convert(command, name, args, batch_context(plan), "w")
    except UsageError:
        by_apply = None
    assert by_cli == by_apply, (name, args, argv)


def test_cli_modules_import_downwards_without_cycles() -> None:
    """cli/main loads cli/commands/* by name; they and cli/base never import cli/main back."""
    import ast

    from tests.conftest import REPO

    graph: dict[str, set[str]] = {}
    for path in [*(REPO / "cli").glob("*.py"), *(REPO / "cli" / "commands").glob("*.py")]:
        module = ".".join(path.relative_to(REPO).with_suffix("").parts)
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
            elif isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
        graph[module] = {m for m in imported if m.startswith("cli.")}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, set()) - seen:
            if nxt == goal or reaches(nxt, goal, seen | {nxt}):
                return True
        return False

    for module in graph:
        assert not reaches(module, module, set()), f"{module} imports itself through a cycle"
    assert not any(reaches(m, "cli.main", set()) for m in graph if m.startswith("cli.commands"))
