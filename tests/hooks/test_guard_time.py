"""Bounded, fail-closed time (PRODUCT.md §7.2; docs/design.md, "The guard"): every input gets
a verdict from the guard itself, never the client's hook timeout (Codex and Gemini CLI run a
command whose hook timed out), and past the guard's own deadline the verdict is deny.

The attack: `cd d0/../e0; …; cd d19/../e19; echo PWNED > notes.txt` doubled the directories
the guard followed with every `cd`; it took minutes. Tests never assert wall-clock times: they
assert an answer (within the client's own timeout, as the client waits) and its verdict;
bench/bench_guard.py prints the slowest generated input's judging time.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from bench.guard_grammar import Grammar, Stress
from tests.hooks.guard_setup import (
    CLIENT_TIMEOUT,
    SHELL_TOOL,
    env_for,
    hook,
    judge,
    make_project,
    payload,
    snapshot,
    verdict,
)

DIALECTS = ("claude", "codex", "gemini")
CDS = "; ".join(f"cd d{i}/../e{i}" for i in range(20))
ATTACK = CDS + "; echo PWNED > notes.txt"
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="no bubblewrap here")
GENERATED = settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("time")
    project = make_project(base)
    for i in range(20):  # the directories the attack's cds name, so that each cd succeeds
        (project / f"d{i}").mkdir()
        (project / f"e{i}").mkdir()
    return base


def carry_out(out: str, dialect: str, command: str, project: Path, home: Path) -> None:
    """Run the call as the client would after this answer: the wrapped command when
    sandboxed, nothing when denied; an allowed command runs in bubblewrap with only the
    project and HOME writable (the client would run it on the host)."""
    kind, text = verdict(out, dialect)
    if kind in ("deny", "ask"):
        return
    if kind == "sandboxed":
        argv = ["bash", "-c", text]
    else:
        base = str(project.parent)
        argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        argv += ["--tmpfs", "/tmp", "--bind", base, base, "--chdir", str(project)]
        argv += ["bash", "-c", command]
    subprocess.run(
        argv, cwd=project, env=env_for(home), capture_output=True, timeout=60, check=False
    )


@needs_bwrap
@pytest.mark.parametrize("guard_mode", ["standard", "strict"])
@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("command", [ATTACK, CDS + "; git status"], ids=["write", "git"])
def test_twenty_cds_are_answered_and_change_nothing(
    tmp_path: Path, dialect: str, guard_mode: str, command: str
) -> None:
    project = make_project(tmp_path, guard_mode)
    home = tmp_path / "home"
    for i in range(20):
        (project / f"d{i}").mkdir()
        (project / f"e{i}").mkdir()
    before, home_before = snapshot(project), snapshot(home)
    raw = payload(SHELL_TOOL[dialect], {"command": command}, project)
    done = hook(raw, dialect, home, project)  # raises TimeoutExpired past the client's timeout
    assert done.returncode == 0 and not done.stderr, done.stderr
    kind, reason = verdict(done.stdout, dialect)
    if command == ATTACK:
        assert kind == "deny" and "writes a file" in reason, done.stdout
    elif dialect == "codex" or guard_mode == "strict":
        # no sandbox in codex, and strict denies the unknown: git in a place not followed
        assert kind == "deny" and "too many times" in reason, done.stdout
    else:
        assert kind == "sandboxed", done.stdout
    carry_out(done.stdout, dialect, command, project, home)
    assert snapshot(project) == before
    assert snapshot(home) == home_before
    assert (project / "notes.txt").read_text() == "x=1\n"


@pytest.mark.parametrize("dialect", DIALECTS)
def test_past_the_deadline_the_guard_denies(base: Path, dialect: str) -> None:
    """The deadline's own path: with no time left every call that needs judging is denied
    as too complex, whatever it is, in every dialect (the audit line says so too)."""
    project, home = base / "project", base / "home"
    worktree = project / ".planner" / "s1" / "worktree"
    patch = f"*** Begin Patch\n*** Add File: {worktree}/a.txt\n+a\n*** End Patch\n"
    calls = [
        (SHELL_TOOL[dialect], {"command": "ls"}),
        (SHELL_TOOL[dialect], {"command": "plan status"}),
        ("Write" if dialect != "gemini" else "write_file", {"file_path": f"{worktree}/a.txt"}),
    ]
    if dialect == "codex":
        calls.append(("apply_patch", {"command": patch}))
    for tool, tool_input in calls:
        assert verdict(judge(payload(tool, tool_input, project), dialect, home), dialect)[0] in (
            "allow",
            "sandboxed",
        )
        kind, reason = verdict(judge(payload(tool, tool_input, project), dialect, home, 0), dialect)
        assert kind == "deny" and "too complex to judge" in reason, (tool, tool_input)
    audit = (project / ".planner" / "s1" / "audit.jsonl").read_text()
    assert "too complex to judge" in audit


@pytest.mark.slow
@GENERATED
@given(seed=st.integers(0, 2**32 - 1), stressed=st.booleans())
def test_every_generated_input_gets_a_verdict(base: Path, seed: int, stressed: bool) -> None:
    """Commands of the round-2 grammar and the attacker's shapes, judged in every dialect as
    the hook's entry judges them: a verdict each time, never an exception; a deadline hit is
    a deny."""
    command = Stress(seed).command() if stressed else Grammar(seed).command_list()
    project, home = base / "project", base / "home"
    for dialect in DIALECTS:
        raw = payload(SHELL_TOOL[dialect], {"command": command}, project)
        kind, reason = verdict(judge(raw, dialect, home), dialect)
        assert kind in ("allow", "deny", "ask", "sandboxed")
        if "too complex to judge" in reason:
            assert kind == "deny"
            event("deadline")
        event(kind)


@GENERATED
@given(seed=st.integers(0, 2**32 - 1), stressed=st.booleans())
def test_every_generated_input_is_denied_past_the_deadline(
    base: Path, seed: int, stressed: bool
) -> None:
    command = Stress(seed).command() if stressed else Grammar(seed).command_list()
    project, home = base / "project", base / "home"
    for dialect in DIALECTS:
        raw = payload(SHELL_TOOL[dialect], {"command": command}, project)
        kind, reason = verdict(judge(raw, dialect, home, budget=0), dialect)
        assert kind == "deny" and "too complex to judge" in reason, command[:200]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_generated_inputs_through_the_hook_process(base: Path, seed: int) -> None:
    """A few of the attacker's shapes through `python3 -S -I hooks/guard.py` itself: an answer
    within the client's timeout, exit 0, nothing on stderr, a verdict the client reads."""
    command = Stress(seed).command()
    project, home = base / "project", base / "home"
    for dialect in DIALECTS:
        raw = payload(SHELL_TOOL[dialect], {"command": command}, project)
        done = hook(raw, dialect, home, project)
        assert done.returncode == 0 and not done.stderr, done.stderr
        assert verdict(done.stdout, dialect)[0] in ("allow", "deny", "ask", "sandboxed")


def test_the_client_timeout_is_what_the_hooks_file_gives() -> None:
    """The answer above is awaited as long as the clients wait (hooks/hooks.json), no longer."""
    import json

    from tests.conftest import REPO

    hooks = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["timeout"] == CLIENT_TIMEOUT
