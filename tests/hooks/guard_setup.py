"""A planning project for the guard's tests: a real git repository whose active session is
planning, a throw-away HOME, the hook called as hooks/hooks.json calls it or in-process, and
snapshots of the project, its .git and HOME to compare before and after an attack."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

from hooks import guard_hook as guard
from tests.conftest import REPO, from_template

GUARD = [sys.executable, "-S", "-I", str(REPO / "hooks" / "guard.py")]
CLIENT_TIMEOUT = 10  # seconds: the hook timeout hooks/hooks.json gives the clients
FILES = {"README.md": "# demo\n", "src/app.py": "print('hi')\n", "notes.txt": "x=1\n"}
SHELL_TOOL = {"claude": "Bash", "codex": "Bash", "gemini": "run_shell_command"}


def make_tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def committed(project: Path) -> None:
    """FILES in a git repository, committed."""
    make_tree(project, FILES)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=project, check=True)
    subprocess.run([*git, "add", "."], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=project, check=True)


def make_project(base: Path, guard_mode: str = "standard") -> Path:
    """`base/project` (committed, planning session s1 with an empty worktree) and `base/home`."""
    project = from_template("guard-project", committed, base / "project")
    state = project / ".planner" / "s1"
    (state / "worktree").mkdir(parents=True)
    session = {"id": "s1", "status": "design", "config": {"guard": guard_mode}}
    (state / "session.json").write_text(json.dumps(session))
    (project / ".planner" / "ACTIVE").write_text("s1\n")
    make_tree(base / "home", {".bashrc": "# rc\n", ".gitconfig": "[user]\n\tname = t\n"})
    return project


def env_for(home: Path, **extra: str) -> dict[str, str]:
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), **extra}


def payload(tool: str, tool_input: dict[str, object], cwd: Path) -> bytes:
    return json.dumps({"tool_name": tool, "tool_input": tool_input, "cwd": str(cwd)}).encode()


def judge(raw: bytes, dialect: str, home: Path, budget: float = guard.BUDGET, **extra: str) -> str:
    """The guard's answer in-process, as its entry computes it (an exception propagates)."""
    return guard.run(raw, dialect, env_for(home, **extra), budget)


def hook(raw: bytes, dialect: str, home: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The guard as the clients run it: `python3 -S -I hooks/guard.py --dialect D`, JSON in."""
    return subprocess.run(
        [*GUARD, "--dialect", dialect],
        input=raw.decode(),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env_for(home),
        timeout=CLIENT_TIMEOUT,
    )


def verdict(out: str, dialect: str) -> tuple[str, str]:
    """(allow | deny | ask | sandboxed, the reason or the wrapped command) of an answer."""
    if not out.strip():
        return "allow", ""
    data = json.loads(out)
    if dialect == "gemini":
        if data.get("decision") == "deny":
            return "deny", data["reason"]
        return "sandboxed", data["hookSpecificOutput"]["tool_input"]["command"]
    inner = data["hookSpecificOutput"]
    if "updatedInput" in inner:
        return "sandboxed", inner["updatedInput"]["command"]
    return inner["permissionDecision"], inner["permissionDecisionReason"]


def snapshot(root: Path) -> dict[str, object]:
    """Every file's type, mode and content (links by target), but git's index (refreshed by
    `git status`), the session's audit log and trace (the guard's own) and its scratch dir (made by
    the sandbox wrapper, writable in the sandbox by design); in HOME, the guard's own cache
    of its sandbox probe (~/.cache/planner)."""
    found: dict[str, object] = {}
    for here, dirs, files in os.walk(root):
        for name in sorted(dirs + files):
            full = os.path.join(here, name)
            rel = os.path.relpath(full, root)
            own = rel.endswith((".git/index", "audit.jsonl", "guard.heard"))
            if own or "/s1/scratch" in "/" + rel:
                continue
            if rel == ".cache" or rel.startswith(".cache/planner"):
                continue
            info = os.lstat(full)
            if os.path.islink(full):
                found[rel] = ("link", os.readlink(full))
            elif os.path.isfile(full):
                with open(full, "rb") as f:
                    found[rel] = (info.st_mode, hashlib.sha1(f.read()).hexdigest())
            else:
                found[rel] = (info.st_mode, "dir")
    return found


def guard_call(project: Path, dialect: str = "claude") -> None:
    """One tool call through the real guard, as hooks/hooks.json runs it: it leaves the
    session's trace (the status then says the guard is heard)."""
    payload = {"tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": str(project)}
    done = subprocess.run(
        [sys.executable, "-S", "-I", str(REPO / "hooks" / "guard.py"), "--dialect", dialect],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
