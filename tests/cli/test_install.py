"""hooks/install.py codex, run as a person runs it (`python3 hooks/install.py codex`) into a
scratch HOME: what it writes, that a second run changes nothing, that other hooks are kept;
and the manifests every client reads agree with one another.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

INSTALL = REPO / "hooks" / "install.py"


def install(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-S", "-I", str(INSTALL), "codex", "--no-build", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
    )


def test_codex_install_writes_the_skill_hooks_and_launchers_once(tmp_path: Path) -> None:
    done = install(tmp_path)
    assert done.returncode == 0, done.stderr
    codex = tmp_path / ".codex"
    skill = codex / "skills" / "planner"
    assert [p.name for p in skill.iterdir()] == ["SKILL.md"]  # the skill alone: one `planner`
    assert not (skill / "SKILL.md").is_symlink()  # Codex 0.169 skips a linked SKILL.md
    assert (skill / "SKILL.md").read_text() == (REPO / "SKILL.md").read_text()
    hooks = json.loads((codex / "hooks.json").read_text())["hooks"]
    [guard] = hooks["PreToolUse"]
    assert guard["matcher"] == "*"
    assert guard["hooks"][0]["command"].endswith("/hooks/guard.py --dialect codex")
    starts = [h["command"] for h in hooks["SessionStart"][0]["hooks"]]
    assert starts[0].endswith("/hooks/session_start.py --dialect codex")
    assert starts[1].endswith("/hooks/bootstrap.py session-start")
    for name in ("planner", "executor", "plan"):
        link = tmp_path / ".local" / "bin" / name
        assert os.readlink(link) == str(REPO / "bin" / name)
    lines = done.stdout.splitlines()
    assert any("hooks.json: the guard and SessionStart (written)" in ln for ln in lines)
    assert any("is not on PATH" in ln for ln in lines)
    assert lines[-1].startswith("IMPORTANT: Codex runs new hooks only after you trust them")

    again = install(tmp_path)
    assert again.returncode == 0, again.stderr
    assert "(written)" not in again.stdout and "(linked)" not in again.stdout
    assert json.loads((codex / "hooks.json").read_text())["hooks"] == hooks


def test_codex_install_keeps_other_hooks_and_replaces_its_own(tmp_path: Path) -> None:
    codex = tmp_path / ".codex"
    codex.mkdir()
    theirs = {"type": "command", "command": "my-audit-hook"}
    stale = {"type": "command", "command": "python3 -S /old/planner/hooks/guard.py --dialect codex"}
    older = {"type": "command", "command": "python3 -S /old/planner/cli/guard.py"}  # before hooks/
    mixed = {"matcher": "*", "hooks": [theirs, stale, older]}
    (codex / "hooks.json").write_text(json.dumps({"hooks": {"PreToolUse": [mixed]}, "x": 1}))
    assert install(tmp_path).returncode == 0
    written = json.loads((codex / "hooks.json").read_text())
    assert written["x"] == 1
    commands = [h["command"] for g in written["hooks"]["PreToolUse"] for h in g["hooks"]]
    assert commands[0] == "my-audit-hook"
    assert len(commands) == 2 and "/old/planner/" not in commands[1]


def test_codex_install_refuses_a_hooks_file_it_cannot_read(tmp_path: Path) -> None:
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "hooks.json").write_text("{ not json")
    done = install(tmp_path)
    assert done.returncode == 3 and "Traceback" not in done.stdout + done.stderr
    assert "fix it or move it away" in done.stdout
    assert (tmp_path / ".codex" / "hooks.json").read_text() == "{ not json"


def test_usage_names_the_other_clients_installs(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-S", "-I", str(INSTALL)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "gemini extensions install" in done.stdout


def test_the_gemini_extension_matches_the_plugin_and_its_hooks() -> None:
    extension = json.loads((REPO / "gemini-extension.json").read_text())
    plugin = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    assert extension["name"] == plugin["name"] and extension["version"] == plugin["version"]
    hooks = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
    [guard] = hooks["BeforeTool"]
    assert guard["matcher"] == ".*"
    assert guard["hooks"][0]["command"].endswith('/hooks/guard.py" --dialect gemini')
    for hook in hooks["SessionStart"][0]["hooks"]:
        # Shared by Claude Code (seconds) and Gemini CLI (milliseconds): no timeout at all.
        assert "timeout" not in hook and hook["env"] == {"CLAUDE_PLUGIN_ROOT": "${extensionPath}"}
    skills = sorted(p.parent.name for p in (REPO / "skills").glob("*/SKILL.md"))
    assert skills == ["executor", "planner"]  # what the extension and the plugin list
