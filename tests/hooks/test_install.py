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

import pytest

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
    assert done.returncode == 2 and "install.py gemini" in done.stdout


def test_the_gemini_extension_matches_the_plugin_and_its_hooks() -> None:
    extension = json.loads((REPO / "gemini-extension.json").read_text())
    plugin = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    assert extension["name"] == plugin["name"] and extension["version"] == plugin["version"]
    # Claude Code's hooks/hooks.json holds only its own events; Gemini CLI's are
    # hooks/gemini-hooks.json, which `install.py gemini` installs as the extension's hooks.json.
    claude = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
    assert sorted(claude) == ["PreToolUse", "SessionStart"]
    hooks = json.loads((REPO / "hooks" / "gemini-hooks.json").read_text())["hooks"]
    assert sorted(hooks) == ["BeforeTool", "SessionStart"]
    [guard] = hooks["BeforeTool"]
    assert guard["matcher"] == ".*"
    assert guard["hooks"][0]["command"].endswith('/hooks/guard.py" --dialect gemini')
    for hook in hooks["SessionStart"][0]["hooks"]:
        assert hook["command"].startswith('python3 -S -I "${extensionPath}/hooks/')
        assert hook["timeout"] == 10000  # milliseconds in Gemini CLI
    skills = sorted(p.parent.name for p in (REPO / "skills").glob("*/SKILL.md"))
    assert skills == ["executor", "planner"]  # what the extension and the plugin list


def test_the_gemini_extension_is_staged_from_the_product_alone(tmp_path: Path) -> None:
    """What `install.py gemini` hands to `gemini extensions install`: the product's files and
    Gemini CLI's hooks as hooks/hooks.json; no tests, no caches, no environment."""
    from hooks.install import stage_extension

    staged = tmp_path / "planner"
    stage_extension(str(staged))
    top = sorted(p.name for p in staged.iterdir())
    assert ".venv" not in top and "tests" not in top and ".git" not in top, top
    assert not list(staged.rglob("__pycache__")) and not list(staged.rglob("*.egg-info"))
    hooks = json.loads((staged / "hooks" / "hooks.json").read_text())
    assert hooks == json.loads((REPO / "hooks" / "gemini-hooks.json").read_text())
    commands = sorted(p.name for p in (staged / "commands" / "planner").glob("*.toml"))
    assert commands == ["cancel.toml", "plan.toml", "status.toml"]
    for needed in ("gemini-extension.json", ".claude-plugin/plugin.json", "pyproject.toml"):
        assert (staged / needed).is_file(), needed
    assert os.access(staged / "bin" / "plan", os.X_OK)


def test_gemini_install_without_gemini_on_path_says_so(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-S", "-I", str(INSTALL), "gemini"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"HOME": str(tmp_path), "PATH": str(tmp_path)},
    )
    assert done.returncode == 3 and "gemini is not on PATH" in done.stdout
    assert not (tmp_path / ".local").exists()


def test_the_chat_commands_say_the_same_in_claude_code_and_gemini_cli() -> None:
    """commands/NAME.md (Claude Code: /planner:NAME) and commands/planner/NAME.toml (Gemini CLI:
    /planner:NAME): one prompt, each client's argument placeholder."""
    import tomllib

    for name in ("plan", "status", "cancel"):
        md = (REPO / "commands" / f"{name}.md").read_text()
        _, front, body = md.split("---\n", 2)
        toml = tomllib.loads((REPO / "commands" / "planner" / f"{name}.toml").read_text())
        [description] = [ln for ln in front.splitlines() if ln.startswith("description: ")]
        assert description.removeprefix("description: ") == toml["description"]
        assert body.strip() == toml["prompt"].replace("{{args}}", "$ARGUMENTS").strip()


def test_codex_install_adds_the_companion_to_config_toml_once(tmp_path: Path) -> None:
    import tomllib

    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('model = "gpt-5.5"\n[mcp_servers.other]\ncommand = "x"')
    assert install(tmp_path).returncode == 0
    written = tomllib.loads(config.read_text())
    assert written["model"] == "gpt-5.5" and written["mcp_servers"]["other"] == {"command": "x"}
    assert written["mcp_servers"]["planner"] == {
        "command": str(REPO / "bin" / "plan"),
        "args": ["mcp"],
    }
    text = config.read_text()
    again = install(tmp_path)
    assert "[mcp_servers.planner] (there already: kept)" in again.stdout
    assert config.read_text() == text
    config.write_text("not = [toml")
    broken = install(tmp_path)
    assert broken.returncode == 0 and "does not parse" in broken.stdout
    assert config.read_text() == "not = [toml"


def test_the_gemini_extension_declares_the_companion() -> None:
    extension = json.loads((REPO / "gemini-extension.json").read_text())
    claude = json.loads((REPO / ".mcp.json").read_text())["mcpServers"]["planner"]
    assert extension["mcpServers"]["planner"] == {
        "command": claude["command"].replace("${CLAUDE_PLUGIN_ROOT}", "${extensionPath}"),
        "args": ["mcp"],
    }


@pytest.mark.parametrize(
    ("args", "full"),
    [(["mcp"], True), (["review", "open"], True), (["review", "wait"], True),
     (["review", "show"], False), (["status"], False)],
)  # fmt: skip
def test_the_persons_view_in_a_terminal_needs_no_second_stage(args: list[str], full: bool) -> None:
    from hooks.bootstrap import needs_full

    assert needs_full("plan", args) is full  # plan review show waits for no page's packages
