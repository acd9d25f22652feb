"""The SessionStart hook, run as hooks/hooks.json runs it: `python3 -S hooks/session_start.py`
(no site-packages) with the hook JSON on stdin.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO
from tests.conftest import run_in_process as run  # `plan` and `planner` in this process
from tests.hooks.guard_setup import guard_call

HOOK = REPO / "hooks" / "session_start.py"


def hook(
    cwd: Path, stdin: str | None = None, *args: str, env: dict | None = None
) -> subprocess.CompletedProcess[str]:
    payload = stdin if stdin is not None else json.dumps({"cwd": str(cwd), "source": "startup"})
    done = subprocess.run(
        [sys.executable, "-S", str(HOOK), *args],
        cwd=cwd,
        input=payload,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    return done


def start(project: Path) -> Path:
    done = run("planner", "--step", "1", "--task", "Add a farewell", cwd=project)
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.split("STATE_DIR=", 1)[1].split()[0])


def test_no_session_prints_nothing(project: Path) -> None:
    assert hook(project).stdout == ""
    on_path = {"PATH": f"{REPO / 'bin'}:/usr/bin:/bin"}
    assert hook(project, None, "--dialect", "codex", env=on_path).stdout == ""


def test_the_active_session_and_its_next_command(project: Path) -> None:
    state = start(project)
    out = hook(project / "src").stdout  # any directory of the project
    assert out.startswith("planner: an active session")
    assert f"STATE_DIR={state}" in out
    assert "discovery" in out and "Add a farewell" in out
    assert f"planner --step 3 --state-dir {state}" in out  # step 1 printed step 2


def test_the_hook_json_cwd_wins_over_the_process_directory(project: Path, tmp_path: Path) -> None:
    state = start(project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run(
        [sys.executable, "-S", str(HOOK)],
        cwd=elsewhere,
        input=json.dumps({"cwd": str(project)}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert f"STATE_DIR={state}" in done.stdout


def test_malformed_input_still_reports_the_process_directory(project: Path) -> None:
    state = start(project)
    assert f"STATE_DIR={state}" in hook(project, stdin="not json").stdout
    assert f"STATE_DIR={state}" in hook(project, stdin="").stdout


def test_a_finished_session_prints_nothing(project: Path) -> None:
    state = start(project)
    session = json.loads((state / "session.json").read_text())
    session["status"] = "completed"
    (state / "session.json").write_text(json.dumps(session))
    assert hook(project).stdout == ""


def test_a_damaged_session_is_one_line_not_a_traceback(project: Path) -> None:
    state = start(project)
    (state / "session.json").write_text("{ broken")
    out = hook(project).stdout
    assert out.count("\n") == 1 and "cannot be read" in out and str(state) in out


def test_gemini_gets_the_text_as_json_context(project: Path) -> None:
    state = start(project)
    out = json.loads(hook(project, None, "--dialect", "gemini").stdout)
    context = out["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart"
    assert f"STATE_DIR={state}" in context["additionalContext"]
    assert hook(project, None, "--dialect=codex").stdout.startswith("planner: an active session")


def test_the_guard_line_is_true_for_each_client(project: Path) -> None:
    """Codex runs no rewritten command: its status never claims a sandbox."""
    state = start(project)
    guard_call(project, "codex")
    codex = hook(project, None, "--dialect", "codex").stdout
    assert "command parsing only (Codex runs no rewritten command" in codex
    assert "sandbox except" not in codex and f"{state}/worktree" in codex
    claude = hook(project).stdout
    assert "Codex" not in claude and "guard: " in claude


def test_gemini_is_recognised_by_the_variables_it_gives_hooks(project: Path) -> None:
    """hooks/hooks.json serves Claude Code and Gemini CLI: one SessionStart command for both."""
    start(project)
    gemini = {"GEMINI_SESSION_ID": "s-1", "GEMINI_CWD": str(project)}
    out = json.loads(hook(project, None, env=gemini).stdout)
    assert "planner: an active session" in out["hookSpecificOutput"]["additionalContext"]
    assert hook(project).stdout.startswith("planner: an active session")


def test_gemini_context_holds_no_angle_brackets_to_escape() -> None:
    """Gemini CLI escapes < and > of additionalContext to &lt; &gt;: placeholders avoid them."""
    from hooks.session_start import render

    line = "IF FAIL: plan review reject --feedback '<the user's words>'"
    out = json.loads(render(line, "gemini"))["hookSpecificOutput"]["additionalContext"]
    assert "<" not in out and ">" not in out
    assert out.endswith("--feedback '\u2039the user's words\u203a'")
    assert render(line, "claude") == line


def test_plan_status_inside_codex_claims_no_sandbox(project: Path) -> None:
    """Codex gives its commands CODEX_THREAD_ID: `plan status` there has Codex's guard line."""
    start(project)
    guard_call(project, "codex")
    inside = run("plan", "status", cwd=project, env={"CODEX_THREAD_ID": "t-1"}).stdout
    assert "command parsing only (Codex runs no rewritten command" in inside
    assert "Codex" not in run("plan", "status", cwd=project).stdout


def test_gemini_and_codex_are_told_where_the_launchers_are_when_path_lacks_them(
    project: Path, tmp_path: Path
) -> None:
    """Gemini CLI does not put the extension's bin/ on PATH: the model gets the full paths."""
    gemini = {"GEMINI_SESSION_ID": "s-1", "GEMINI_CWD": str(project)}
    out = json.loads(hook(project, None, env=gemini).stdout)  # no session: only the note
    note = out["hookSpecificOutput"]["additionalContext"]
    assert f"run them as {REPO}/bin/planner" in note and "ln -s" in note
    assert "not on PATH" in hook(project, None, "--dialect", "codex").stdout
    assert hook(project).stdout == ""  # Claude Code puts bin/ on PATH itself
    on_path = {"PATH": f"{REPO / 'bin'}:/usr/bin:/bin"}
    assert hook(project, None, "--dialect", "codex", env=on_path).stdout == ""


def test_in_review_the_verdict_is_named_as_the_person_s_and_where_they_give_it(
    project: Path,
) -> None:
    """The guard refuses `plan review approve` to the agent: during review (and result review)
    the header names the person's verdict, not "run the NEXT command"."""
    state = start(project)
    session = json.loads((state / "session.json").read_text())
    for status, verdict in (("review", "plan review approve"), ("result_review", "result accept")):
        (state / "session.json").write_text(json.dumps({**session, "status": status}))
        out = hook(project).stdout
        first = out.splitlines()[0]
        assert "the person's verdict" in first and "not yours" in first, first
        assert verdict in first and "`plan review open`" in first, first
        assert "run the NEXT command" not in out
        gemini = json.loads(hook(project, None, "--dialect", "gemini").stdout)
        text = gemini["hookSpecificOutput"]["additionalContext"]
        assert "<" not in text and "\u2039what must change\u203a" in text
    (state / "session.json").write_text(json.dumps(session))
    assert hook(project).stdout.startswith("planner: an active session (run the NEXT command")
