"""The chat commands (PRODUCT.md §18) in the real clients, offline (../shared/harness):
`/planner:plan [task]`, `/planner:status` and `/planner:cancel` as Claude Code plugin commands
(commands/*.md) and Gemini CLI extension commands (commands/planner/*.toml), and the skill's
verbs in Codex (`$planner status`, ...; Codex 0.169 has no custom prompts).

Each run types the command as the person would (the prompt); the scripted model then makes
the calls the command's text asks for. What is checked: the client knows the command, the
model receives its text with the arguments in place, its shell command runs, and a cancel is
never the agent's own: the guard refuses it (asks, in Claude Code; `-p` turns the ask into a
refusal) and the session stays open. The launchers run the checkout's code with this test's
Python (PLANNER_PYTHON): the environment's build is tested in test_clients_install.py.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import RUN_GEMINI, needs_codex, needs_gemini, run_claude, start_session
from tests.e2e.test_clients_install import (
    codex_shim,
    gemini_bundle,
    gemini_shims,
    results,
    run_client,
    run_codex,
)

pytestmark = pytest.mark.client

TASK = "Add a farewell"
PYTHON = f"PLANNER_PYTHON={sys.executable}"


def model_inputs(out: Path) -> str:
    """Everything the model was sent, as the fake logged it (the command's expanded text)."""
    return (out / "requests.jsonl").read_text()


def status_of(state: Path) -> str:
    return str(json.loads((state / "session.json").read_text())["status"])


# -- Claude Code: plugin commands -------------------------------------------------------------


def claude_command(tmp_path: Path, prompt: str, turns: list[dict]) -> tuple[dict, str]:
    rc, s = run_claude(
        tmp_path,
        {"turns": [*turns, {"text": "done"}]},
        "--prompt",
        prompt,
        "--env",
        PYTHON,
    )
    assert rc == 0 and s["ok"], s["stderr_tail"]
    return s, model_inputs(tmp_path / "out")


def test_claude_code_plan_starts_a_plan_for_the_task(
    claude_bin: str, project: Path, tmp_path: Path
) -> None:
    s, sent = claude_command(
        tmp_path,
        f"/planner:plan {TASK}",
        [{"bash": f"planner --step 1 --task '{TASK}'", "description": "Start the plan"}],
    )
    assert {"planner:plan", "planner:status", "planner:cancel"} <= set(s["slash_commands"])
    assert "<command-name>/planner:plan</command-name>" in sent
    assert f"Plan this change with planner before changing any code: {TASK}" in sent
    [result] = s["tool_results"]
    assert not result["is_error"] and "PLANNER 1/11" in result["text"], result
    assert "STATE_DIR=" in result["text"]


def test_claude_code_status_prints_the_one_status_view(
    claude_bin: str, project: Path, tmp_path: Path
) -> None:
    state = start_session(project)
    s, sent = claude_command(
        tmp_path, "/planner:status", [{"bash": "planner status", "description": "Status"}]
    )
    assert "<command-name>/planner:status</command-name>" in sent
    assert "Run `planner status` and show the person its output as printed" in sent
    [result] = s["tool_results"]
    assert not result["is_error"] and f"STATE_DIR={state}" in result["text"], result
    assert "NEXT: planner --step 3" in result["text"]


def test_claude_code_cancel_is_asked_of_the_person_never_done_by_the_agent(
    claude_bin: str, project: Path, tmp_path: Path
) -> None:
    state = start_session(project)
    cancel = "plan cancel --reason 'not needed any more'"
    s, sent = claude_command(
        tmp_path,
        "/planner:cancel not needed any more",
        [{"bash": cancel, "description": "Cancel the session"}],
    )
    assert "<command-name>/planner:cancel</command-name>" in sent
    assert "Reason: not needed any more" in sent and "the person's act" in sent
    # The guard asks the person (Claude Code's prompt); `-p` cannot answer it: a refusal
    # that gives the model the guard's reason.
    [denial] = s["denials"]
    assert denial["tool_input"]["command"] == cancel, denial
    assert "is the person's decision" in denial["reason"], denial
    assert status_of(state) == "discovery"


# -- Gemini CLI: extension commands, installed by the README's line ---------------------------


def gemini_command(
    tmp_path: Path, path: str, prompt: str, turns: list[dict], out: str
) -> tuple[dict, str]:
    """One Gemini CLI run with the extension installed by `install.py gemini`."""
    rc, s = run_client(
        RUN_GEMINI,
        tmp_path,
        {"turns": [*turns, {"text": "done"}]},
        path,
        (PYTHON,),
        out,
        {"GEMINI_BIN": str(gemini_installing_shim(tmp_path))},
        *("--extension-dir", str(tmp_path / "planner")),
        "--prompt",
        prompt,
    )
    assert rc == 0 and s["ok"], (rc, s["stderr_tail"], s["requests"])
    return s, model_inputs(tmp_path / out)


def gemini_installing_shim(tmp_path: Path) -> Path:
    """GEMINI_BIN whose `extensions link` runs the README's install lines (made once)."""
    shim = tmp_path / "gemini.mjs"
    return shim if shim.exists() else gemini_shims(tmp_path)


@needs_gemini
@pytest.mark.skipif(gemini_bundle() is None, reason="no Gemini CLI bundle in the harness cache")
def test_gemini_cli_commands_status_cancel_and_plan(
    project: Path, tmp_path: Path, isolated_path: str
) -> None:
    """Gemini CLI's `-p` prepends SessionStart's context to the prompt, and a prompt that does
    not start with `/` is not a command: with `-p` the commands are typed before a session
    exists (interactive sessions show the context apart). The guard's refusal of the agent's
    cancel, once a session is active, is the last run."""
    s, sent = gemini_command(
        tmp_path, isolated_path, "/planner:status", [{"bash": "planner status"}], "status"
    )
    installed = (tmp_path / "status" / "extension-install.log").read_text()
    assert "installed" in installed and "no tests, no .venv" in installed, installed
    assert "Run `planner status` and show the person its output as printed" in sent
    [(_, text)] = results(s)
    assert "no session found" in text, text  # the status view's answer, from the launcher

    cancel = "plan cancel --reason 'not needed any more'"
    s, sent = gemini_command(
        tmp_path, isolated_path, "/planner:cancel not needed any more", [{"bash": cancel}], "cancel"
    )
    assert "Reason: not needed any more" in sent and "the person's act" in sent
    [(command, text)] = results(s)
    assert command == cancel and "no session" in text, text

    s, sent = gemini_command(
        tmp_path,
        isolated_path,
        f"/planner:plan {TASK}",
        [{"bash": f"planner --step 1 --task '{TASK}'", "description": "Start the plan"}],
        "plan",
    )
    assert f"Plan this change with planner before changing any code: {TASK}" in sent
    [(_, text)] = results(s)
    assert "PLANNER 1/11" in text and not text.startswith("Exit code"), text
    state = Path(text.split("STATE_DIR=", 1)[1].split()[0])

    s, _ = gemini_command(tmp_path, isolated_path, "Cancel it.", [{"bash": cancel}], "refused")
    [denial] = s["hook_denials"]
    assert "person's decision" in denial["reason"], denial
    assert status_of(state) == "discovery"


# -- Codex: the skill's verbs ----------------------------------------------------------------


@needs_codex
def test_codex_skill_verbs_status_plan_and_cancel(
    project: Path, tmp_path: Path, isolated_path: str, outside_tmp: Path
) -> None:
    python = shutil.which("python3", path=isolated_path)
    assert python
    shim = codex_shim(tmp_path, python, "--no-build")
    runs = [
        (f"$planner plan {TASK}", {"bash": f"planner --step 1 --task '{TASK}'"}),
        ("$planner status", {"bash": "planner status"}),
        ("$planner cancel not needed any more", {"bash": "plan cancel --reason 'not needed'"}),
    ]
    got = []
    for i, (prompt, turn) in enumerate(runs):
        scenario = {"prompt": prompt, "turns": [turn, {"text": "done"}]}
        rc, s = run_codex(
            tmp_path, scenario, shim, outside_tmp, isolated_path, PYTHON, out=f"run{i}"
        )
        assert rc == 0 and s["ok"], (rc, s["stderr_tail"])
        assert [m["name"] for m in s["skill_messages"]] == ["planner"], s["skill_messages"]
        sent = model_inputs(tmp_path / f"run{i}")  # the skill's whole body, then the prompt
        assert "When invoked with a word (`$planner status` in Codex)" in sent
        assert json.dumps(prompt)[1:-1] in sent
        got.append((s, results(s)))

    [(_, started)] = got[0][1]
    assert "PLANNER 1/11" in started and not started.startswith("Exit code"), started
    state = Path(started.split("STATE_DIR=", 1)[1].split()[0])
    [(_, status)] = got[1][1]
    assert f"STATE_DIR={state}" in status, status
    cancelled = got[2][0]
    [denial] = cancelled["hook_denials"]
    assert "person" in denial["reason"], denial
    assert status_of(state) == "discovery"
