"""state/ names fields, cli/ names options: KEY=VALUE is parsed by click, and an error about
a field is told with the option the user typed."""

from __future__ import annotations

import click
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from cli.base import KEY_VALUE, relabel, run_click
from state.errors import UsageError


@click.command()
@click.option("--param", multiple=True, type=KEY_VALUE)
@click.option("--expect-sha256", "expect_sha256")
def echo(param: tuple[tuple[str, str], ...], expect_sha256: str | None) -> None:
    click.echo(repr(dict(param)))


@settings(max_examples=40, deadline=None)
@given(st.text(st.characters(blacklist_characters="=\x00"), min_size=1), st.text())
def test_key_value_splits_at_the_first_equals(key: str, value: str) -> None:
    assert KEY_VALUE.convert(f"{key}={value}", None, None) == (key, value)


def test_key_value_without_equals_is_a_usage_error(capsys) -> None:
    assert run_click(echo, ["--param", "novalue"], "echo") == 2
    assert "expected KEY=VALUE, got 'novalue'" in capsys.readouterr().err
    assert run_click(echo, ["--param", "=v"], "echo") == 2


def test_key_value_pairs_reach_the_command() -> None:
    done = CliRunner().invoke(echo, ["--param", "a=1", "--param", "b=x=y"])
    assert done.exit_code == 0 and done.output == "{'a': '1', 'b': 'x=y'}\n"


def test_a_field_error_is_told_with_the_option() -> None:
    error = UsageError("expect_sha256: no such plan", field="expect_sha256")
    relabel(echo, error)
    assert error.message == "--expect-sha256: no such plan" and error.field is None


def test_only_a_field_the_message_starts_with_is_relabelled() -> None:
    error = UsageError("the comment: too long", field="comment")
    assert error.field is None
    error.relabel("--comment")
    assert error.message == "the comment: too long"


def test_params_reach_plan_json_from_the_cli_and_from_apply(plan, session_dir) -> None:
    """`--param K=V` as typed and as `plan apply` passes it; a bad one names the option."""
    import json

    plan.ids("milestone", "add", "--name", "A", "--acceptance", "ok")
    base = ["--milestone", "M-001", "--file", "a.py", "--behavior", "b"]
    plan.ids("intent", "add", *base, "--param", "n=1", "--param", "s=a=b")
    ops = [
        {
            "op": "intent add",
            "args": {"milestone": "M-001", "file": "b.py", "behavior": "c", "param": ["k=v"]},
        }
    ]
    plan.ids("apply", "-", input=json.dumps(ops))
    intents = json.loads((session_dir / "plan.json").read_text())["milestones"][0]["code_intents"]
    assert [i["params"] for i in intents] == [{"n": "1", "s": "a=b"}, {"k": "v"}]
    assert "'--param'" in plan("intent", "add", *base, "--param", "nokey", code=2).stderr
    ops[0]["args"]["param"] = ["nokey"]
    bad = plan("apply", "-", input=json.dumps(ops), code=2).stderr
    assert "--param: expected KEY=VALUE, got 'nokey'" in bad


def test_a_field_error_from_state_names_the_option(plan) -> None:
    """state/ says `by: …`; the user typed --by and reads --by."""
    told = plan("review", "approve", "--by", " ", code=2).stderr
    assert told.startswith("plan: --by: may not be empty")
