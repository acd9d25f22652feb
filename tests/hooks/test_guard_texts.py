"""What the guard's refusals tell the model, per client (the hook run as the clients run it):
true for the client's tools and sandbox, advice for a model where nobody is asked, whole
sentences, and no period of their own where Codex adds one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hooks import guard_hook as guard
from hooks.guard_tools import MUTATE, UNKNOWN, Hint, Verdict
from hooks.hookstate import Session
from tests.hooks import test_guard
from tests.hooks.test_guard import GUARD, bash, make_session

pytestmark = pytest.mark.usefixtures("home")
home, project = test_guard.home, test_guard.project  # the fixtures, shared


def reason(hook: dict, dialect: str) -> str:
    done = subprocess.run(
        [sys.executable, "-S", "-I", str(GUARD), "--dialect", dialect],
        input=json.dumps(hook),
        capture_output=True,
        text=True,
        timeout=60,
    )
    out = json.loads(done.stdout)
    if dialect == "gemini":
        assert out["decision"] == "deny"
        return out["reason"]
    assert out["hookSpecificOutput"]["permissionDecision"] in ("deny", "ask")
    return out["hookSpecificOutput"]["permissionDecisionReason"]


def test_the_person_s_acts_are_one_sentence_each(project: Path) -> None:
    make_session(project, "s1")
    for dialect in ("claude", "codex", "gemini"):
        text = reason(bash("plan review approve --by me", project), dialect)
        assert "is the person's decision. The person runs it themselves" in text, text
        assert "decision. the person" not in text


def test_codex_reasons_end_without_a_period(project: Path) -> None:
    """Codex shows "Command blocked by PreToolUse hook: REASON. Command: CMD"."""
    make_session(project, "s1")
    for command in ("rm -rf src", "plan review approve --by me", "python3 -c 'print(1)'"):
        text = reason(bash(command, project), "codex")
        assert not text.endswith("."), text
    assert reason(bash("rm -rf src", project), "claude").endswith(".")


def test_an_unjudgeable_command_tells_the_model_what_to_do_where_nobody_is_asked(
    project: Path,
) -> None:
    make_session(project, "s1")
    command = bash("python3 -c 'print(1)'", project)
    codex = reason(command, "codex")
    assert "allow it only if" not in codex
    assert "read-only commands (cat, grep, ls, git show, …)" in codex and "record" in codex
    assert "allow it only if it changes nothing" in reason(command, "claude")  # a person's prompt


def test_an_unknown_tool_names_the_client_s_own_tools(project: Path) -> None:
    make_session(project, "s1")
    hook = {"tool_name": "SomeToolOfNextYear", "tool_input": {}, "cwd": str(project)}
    codex = reason(hook, "codex")
    assert "apply_patch" in codex and "never sandboxed" in codex and "Read/Grep" not in codex
    gemini = reason(hook, "gemini")
    assert "run_shell_command" in gemini and "write_file/replace" in gemini
    assert "Read/Grep/Glob" in reason(hook, "claude")


def test_the_hint_is_the_rules_choice_not_found_in_its_words(tmp_path: Path) -> None:
    """A rule's words may mention a person or the worktree; what to do instead is the hint the
    rule chose (hooks/guard_tools.Verdict), whatever its words say."""
    session = Session(str(tmp_path), {"status": "design"})
    why = "writes to the person's worktree"
    plain = guard.explain(Verdict(MUTATE, "x", why), guard.DENY, session)
    assert guard.DENY_HINT in plain and guard.HUMAN_HINT not in plain
    assert guard.WRITE_HINT not in plain
    asked = guard.explain(Verdict(UNKNOWN, "x", why), guard.ASK, session, "codex")
    assert guard.MODEL_ASK_HINT in asked
    person = guard.explain(Verdict(MUTATE, "x", "y", hint=Hint.PERSON), guard.ASK, session)
    assert guard.HUMAN_HINT in person and guard.HINT not in person
    write = guard.explain(Verdict(MUTATE, "x", "y", hint=Hint.WRITE), guard.DENY, session)
    assert guard.WRITE_HINT in write
    tools = guard.explain(Verdict(MUTATE, "x", "y", hint=Hint.TOOLS), guard.DENY, session, "gemini")
    assert guard.UNKNOWN_TOOL_HINTS["gemini"] in tools
    own = guard.explain(Verdict(MUTATE, "x", "y", hint="do this"), guard.DENY, session)
    assert own.endswith(f"{guard.HINT}do this; the session is {tmp_path}.")
