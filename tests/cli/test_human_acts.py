"""The person's acts (approve, reject, qr accept, cancel, fail, resume) are refused by `plan
apply` on the command an op resolves to, whatever its spelling: exit 4, nothing written."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli.base import Operation
from cli.main import main
from hooks.human_acts import HUMAN_ACTS, is_human_act
from tests.cli import tree
from tests.conftest import BIN, Plan
from tests.state.builders import snapshot

COMMANDS = tree.commands()
PRESENT = sorted(name for name in COMMANDS if is_human_act(name))

# Every operation an agent's batch may run. A new Operation must be classified: added here,
# or to HUMAN_ACTS (hooks/human_acts.py) when only the person may carry it out.
AGENT_OPERATIONS = {
    *("alternative add", "alternative set", "change add", "change capture", "change set"),
    *("choice add", "choice import", "choice pick", "constraint add", "constraint set"),
    *("context add", "context scan", "context set", "decision add", "decision set"),
    *("decision supersede", "doc set", "exec apply", "exec commit", "exec deviation"),
    *("exec done", "exec start", "intent add", "intent set", "intent remove", "invariant add"),
    "knowledge set",
    *("milestone add", "milestone set", "milestone tests", "overview set", "qr add", "qr set"),
    *("question add", "question answer", "question import", "risk add", "risk set"),
    "tradeoff add",
    "amend",  # not the person's act: they re-approve the amended plan anyway
    "rebase",  # changes no planned diff: where one must change, it names an amendment
    "restore",  # only back to what plan last wrote (approved: the approved plan)
}
ARGS = {"review approve": {"by": "agent"}, "qr accept": {"phase": "design", "by": "a"}}

# Separators str.split() (and so the op lookup) accepts: ASCII and Unicode whitespace.
SPACES = st.sampled_from([" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u2003"])


def in_review(session_dir: Path) -> None:
    """The session in review: without the refusal, an approve or a reject would land."""
    path = session_dir / "session.json"
    session = json.loads(path.read_text())
    session["status"] = "review"
    path.write_text(json.dumps(session, indent=2))


def refused(code: int, err: str, number: int, act: str) -> None:
    assert code == 4, err
    assert f"operation {number}" in err and f"`plan {act}` is the person's act" in err, err
    assert err.count("\n") == 1, err


@st.composite
def spellings(draw: st.DrawFn) -> tuple[str, str]:
    act = draw(st.sampled_from(PRESENT))
    gaps = st.lists(SPACES, min_size=1, max_size=3).map("".join)
    ends = st.lists(SPACES, max_size=3).map("".join)
    words = act.split()
    middle = "".join(w + draw(gaps) for w in words[:-1]) + words[-1]
    return act, draw(ends) + middle + draw(ends)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(spelling=spellings(), before=st.integers(0, 2))
def test_any_spelling_of_a_human_act_is_refused_and_nothing_is_written(
    session_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    spelling: tuple[str, str],
    before: int,
) -> None:
    in_review(session_dir)
    act, op = spelling
    batch = [{"op": "risk add", "args": {"risk": "r", "mitigation": "m"}}] * before
    batch.append({"op": op, "args": ARGS.get(act, {})})
    source = tmp_path / "ops.json"
    source.write_text(json.dumps(batch))
    was = snapshot(session_dir)
    code = main(["apply", str(source), "--state-dir", str(session_dir)])
    refused(code, capsys.readouterr().err, before + 1, act)
    assert snapshot(session_dir) == was


def test_every_human_command_of_the_tree_is_refused_and_every_operation_is_classified(
    session_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    in_review(session_dir)
    was = snapshot(session_dir)
    for name, command in COMMANDS.items():
        if is_human_act(name):
            source = tmp_path / "ops.json"
            source.write_text(json.dumps([{"op": name, "args": ARGS.get(name, {})}]))
            code = main(["apply", str(source), "--state-dir", str(session_dir)])
            refused(code, capsys.readouterr().err, 1, name)
        elif isinstance(command, Operation):
            assert name in AGENT_OPERATIONS, f"plan {name}: a person's act? classify it"
    assert {"review approve", "review reject", "qr accept", "cancel", "fail", "resume"} <= set(
        PRESENT
    )
    assert snapshot(session_dir) == was


def test_apply_help_lists_no_human_act(plan: Plan) -> None:
    text = plan("apply", "--help").stdout
    assert "review approve" not in text and "qr accept" not in text and "risk add" in text


def test_a_case_variant_resolves_to_nothing_and_exits_2(
    plan: Plan, session_dir: Path, tmp_path: Path
) -> None:
    in_review(session_dir)
    was = snapshot(session_dir)
    done = plan("apply", "-", input=json.dumps([{"op": "Review approve"}]), code=2)
    assert "unknown op 'Review approve'" in done.stderr
    assert snapshot(session_dir) == was


@pytest.mark.parametrize("op", ["review approve ", " cancel", "review\tapprove", "qr\naccept"])
def test_stdin_a_file_and_a_pipe_are_refused_alike(
    plan: Plan, session_dir: Path, tmp_path: Path, op: str
) -> None:
    in_review(session_dir)
    was = snapshot(session_dir)
    text = json.dumps([{"op": op, "args": {"by": "agent"} if "approve" in op else {}}])
    act = " ".join(op.split())
    done = plan("apply", "-", input=text, code=4)
    refused(done.returncode, done.stderr, 1, act)
    (tmp_path / "ops.json").write_text(text)
    done = plan("apply", str(tmp_path / "ops.json"), code=4)
    refused(done.returncode, done.stderr, 1, act)
    piped = subprocess.run(
        ["bash", "-c", f"echo {shlex.quote(text)} | {BIN / 'plan'} apply -"],
        cwd=plan.cwd,
        capture_output=True,
        text=True,
    )
    refused(piped.returncode, piped.stderr, 1, act)
    assert snapshot(session_dir) == was
    assert json.loads((session_dir / "session.json").read_text())["status"] == "review"


def test_the_act_itself_still_works_from_a_terminal(plan: Plan, session_dir: Path) -> None:
    in_review(session_dir)
    plan("review", "approve", "--by", "ann")
    assert json.loads((session_dir / "session.json").read_text())["status"] == "approved"


def test_future_acts_are_named_in_one_place() -> None:
    assert {"result accept", "result request-changes"} <= HUMAN_ACTS
    assert "amend" not in HUMAN_ACTS  # the person re-approves what an amendment changes
    assert is_human_act(" review \t approve\n") and not is_human_act("review")
