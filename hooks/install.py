"""Install planner into Codex CLI or Gemini CLI: `python3 /path/to/planner/hooks/install.py
codex|gemini` (Claude Code installs the plugin from this folder by itself).

What it writes for each client, and why not as a plugin: docs/clients.md. Standard library
only, like the hooks; it prints each thing it wrote, and last (where it is read) that Codex
guards nothing until the person trusts the new hooks (/hooks in Codex).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from contextlib import suppress

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypedDict

    class HookCommand(TypedDict):
        type: str
        command: str
        timeout: int

    class HookGroup(TypedDict):
        matcher: str
        hooks: list[HookCommand]


ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
LAUNCHERS = ("planner", "executor", "plan")
# What the Gemini CLI extension is made of: the product, no tests, caches or environments.
PRODUCT = ("bin", "cli", "commands", "hooks", "shared", "skills", "state")
PRODUCT_FILES = (
    os.path.join(".claude-plugin", "plugin.json"),  # bootstrap.py reads its version
    "gemini-extension.json",
    "pyproject.toml",
    "planner_entry.py",  # the console scripts' entry
    "README.md",
    "LICENSE",
    "SKILL.md",
)
# A hook command that holds one of these is planner's (of any clone): replaced on install.
# The hooks lived under cli/ before: an older install's entries are replaced too.
OURS = (
    "/hooks/guard.py",
    "/hooks/session_start.py",
    "/hooks/bootstrap.py",
    "/cli/guard.py",
    "/cli/session_start.py",
)
TRUST = (
    "IMPORTANT: Codex runs new hooks only after you trust them. Start codex, type /hooks,"
    " review and trust planner's PreToolUse and SessionStart hooks; until then NOTHING is"
    " guarded and planning is read-only only by the skill's instructions. Trust them again"
    " after each update of planner (their command or this file changes)."
)


def codex_hooks() -> dict[str, list[HookGroup]]:
    """planner's hook entries for Codex, by event (Claude Code's shape, timeouts in seconds)."""

    def command(*words: str) -> HookCommand:
        line = shlex.join(["python3", *words])
        return {"type": "command", "command": line, "timeout": 10}

    return {
        "PreToolUse": [
            {
                "matcher": "*",
                "hooks": [command("-S", "-I", f"{ROOT}/hooks/guard.py", "--dialect", "codex")],
            }
        ],
        "SessionStart": [
            {
                "matcher": "startup|resume|clear|compact",
                "hooks": [
                    command("-S", "-I", f"{ROOT}/hooks/session_start.py", "--dialect", "codex"),
                    command("-S", "-I", f"{ROOT}/hooks/bootstrap.py", "session-start"),
                ],
            }
        ],
    }


def is_ours(hook: object) -> bool:
    return isinstance(hook, dict) and any(part in str(hook.get("command", "")) for part in OURS)


def merged(existing: dict[str, Any], ours: dict[str, list[HookGroup]]) -> dict[str, Any]:
    """`existing` (the user's hooks.json, any JSON object) with planner's earlier entries
    removed and `ours` added; the rest kept."""
    hooks = existing.get("hooks")
    if not isinstance(hooks, dict):
        hooks = {}
    out: dict[str, list[object]] = {}
    for event, groups in hooks.items():
        kept = []
        for group in groups if isinstance(groups, list) else []:
            if not isinstance(group, dict):
                kept.append(group)
                continue
            inner = [h for h in group.get("hooks", []) if not is_ours(h)]
            if inner or not group.get("hooks"):
                kept.append({**group, "hooks": inner})
        if kept:
            out[event] = kept
    for event, groups in ours.items():
        out.setdefault(event, []).extend(groups)
    return {**existing, "hooks": out}


def write_if_changed(path: str, text: str) -> bool:
    with suppress(OSError), open(path, encoding="utf-8") as f:
        if f.read() == text:
            return False
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.planner-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
    return True


def link(target: str, path: str) -> str:
    """Make `path` a symlink to `target`; what happened, in words."""
    if os.path.islink(path) and os.readlink(path) == target:
        return "unchanged"
    if os.path.lexists(path) and not os.path.islink(path):
        return "left alone: a file that is not a link is there"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.planner-{os.getpid()}"
    os.symlink(target, tmp)
    os.replace(tmp, path)
    return "linked"


def link_launchers(source: str, bin_dir: str, say: Callable[[str], None]) -> bool:
    """Link planner, executor and plan from `source`/bin into bin_dir, saying so; whether
    bin_dir is on PATH."""
    for name in LAUNCHERS:
        where = os.path.join(bin_dir, name)
        made = link(os.path.join(source, "bin", name), where)
        say(f"command {where} -> {source}/bin/{name} ({made})")
    paths = os.environ.get("PATH", "").split(os.pathsep)
    return os.path.realpath(bin_dir) in {os.path.realpath(p) for p in paths if p}


def companion(config: str) -> str:
    """The review companion (`plan mcp`) as `[mcp_servers.planner]` in Codex's config.toml,
    added when that table is missing (one of the person's own is kept); what happened."""
    import tomllib

    try:
        with open(config, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        text = ""
    try:
        servers = tomllib.loads(text).get("mcp_servers", {})
    except tomllib.TOMLDecodeError as e:
        return f"mcp     {config}: not changed, it does not parse ({e}); the companion is not set"
    if isinstance(servers, dict) and "planner" in servers:
        return f"mcp     {config}: [mcp_servers.planner] (there already: kept)"
    table = (
        "\n[mcp_servers.planner]  # planner's review companion (hooks/install.py)\n"
        f"command = {json.dumps(os.path.join(ROOT, 'bin', 'plan'))}\n"
        'args = ["mcp"]\n'
    )
    before = text + "\n" if text and not text.endswith("\n") else text
    write_if_changed(config, before + table if before else table.lstrip("\n"))
    return f"mcp     {config}: [mcp_servers.planner], the review companion (written)"


def install_codex(codex_home: str, bin_dir: str, build: bool, say: Callable[[str], None]) -> int:
    skill = os.path.join(codex_home, "skills", "planner", "SKILL.md")
    if os.path.islink(skill):
        os.unlink(skill)  # Codex 0.169 does not list a skill whose SKILL.md is a link
    with open(os.path.join(ROOT, "SKILL.md"), encoding="utf-8") as f:
        copied = "written" if write_if_changed(skill, f.read()) else "unchanged"
    say(f"skill   {skill}: a copy of {ROOT}/SKILL.md ({copied})")

    hooks_path = os.path.join(codex_home, "hooks.json")
    try:
        with open(hooks_path, encoding="utf-8") as f:
            existing = json.load(f)
    except FileNotFoundError:
        existing = {}
    except (OSError, ValueError) as e:
        say(f"cannot read {hooks_path} ({e}); fix it or move it away, then run this again")
        return 3
    if not isinstance(existing, dict):
        say(f"{hooks_path} is not a JSON object; fix it or move it away, then run this again")
        return 3
    text = json.dumps(merged(existing, codex_hooks()), indent=2) + "\n"
    done = "written" if write_if_changed(hooks_path, text) else "unchanged"
    say(f"hooks   {hooks_path}: the guard and SessionStart ({done})")

    if not link_launchers(ROOT, bin_dir, say):
        say(f"note    {bin_dir} is not on PATH: add it in your shell's profile (bash -lc reads it)")

    say(companion(os.path.join(codex_home, "config.toml")))

    if build:
        say("environment: making it now (the first time takes a while)…")
        built = subprocess.run(
            [sys.executable, "-S", "-I", os.path.join(ROOT, "hooks", "bootstrap.py"), "ensure"],
            stdin=subprocess.DEVNULL,
        )
        if built.returncode != 0:
            say("environment: not made (above: why); the SessionStart hook tries again")
    say(TRUST)
    return 0


def stage_extension(dest: str) -> None:
    """The Gemini CLI extension in `dest`: the product's files, Gemini CLI's hooks."""
    import shutil

    junk = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in PRODUCT:
        shutil.copytree(os.path.join(ROOT, name), os.path.join(dest, name), ignore=junk)
    for name in PRODUCT_FILES:
        os.makedirs(os.path.dirname(os.path.join(dest, name)), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, name), os.path.join(dest, name))
    shutil.copy2(
        os.path.join(ROOT, "hooks", "gemini-hooks.json"), os.path.join(dest, "hooks", "hooks.json")
    )


def install_gemini(bin_dir: str, say: Callable[[str], None]) -> int:
    import shutil
    import tempfile

    gemini = shutil.which("gemini")
    if gemini is None:
        say("gemini is not on PATH: install Gemini CLI (npm install -g @google/gemini-cli) first")
        return 3
    extension = os.path.join(os.path.expanduser("~"), ".gemini", "extensions", "planner")
    with tempfile.TemporaryDirectory(prefix="planner-extension-") as tmp:
        staged = os.path.join(tmp, "planner")
        stage_extension(staged)
        say(f"staged  {staged}: {', '.join(PRODUCT)} and the manifests (no tests, no .venv)")
        if os.path.isdir(extension):
            gone = subprocess.run([gemini, "extensions", "uninstall", "planner"], check=False)
            say(f"removed the earlier install {extension} (exit {gone.returncode})")
        done = subprocess.run([gemini, "extensions", "install", staged, "--consent"], check=False)
        if done.returncode != 0:
            say(f"gemini extensions install failed (exit {done.returncode}; above: why)")
            return 3
    say(f"installed {extension}")
    if not link_launchers(extension, bin_dir, say):
        say(f"note    {bin_dir} is not on PATH: add it in your shell's profile")
    say("The first session makes the Python environment (SessionStart, in the background).")
    return 0


USAGE = (
    "usage: install.py codex [--codex-home DIR] [--bin-dir DIR] [--no-build]\n"
    "       install.py gemini [--bin-dir DIR]"
)


def main(argv: list[str]) -> int:
    def say(line: str) -> None:
        print(line, flush=True)

    if not argv or argv[0] not in ("codex", "gemini"):
        print(USAGE + "\n(Claude Code: the plugin, claude plugin install)")
        return 2
    client = argv[0]
    home = os.path.expanduser("~")
    codex_home = os.environ.get("CODEX_HOME") or os.path.join(home, ".codex")
    bin_dir, build = os.path.join(home, ".local", "bin"), True
    takes_value = {"codex": ("--codex-home", "--bin-dir"), "gemini": ("--bin-dir",)}[client]
    args = argv[1:]
    while args:
        flag = args.pop(0)
        if flag in takes_value and args:
            value = os.path.abspath(os.path.expanduser(args.pop(0)))
            if flag == "--codex-home":
                codex_home = value
            else:
                bin_dir = value
        elif flag == "--no-build" and client == "codex":
            build = False
        else:
            print(USAGE, file=sys.stderr)
            return 2
    if sys.version_info < (3, 11):  # noqa: UP036 (it must say so on an old Python)
        print("planner needs Python 3.11 or newer as python3", file=sys.stderr)
        return 2
    if client == "gemini":
        return install_gemini(bin_dir, say)
    return install_codex(codex_home, bin_dir, build, say)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
