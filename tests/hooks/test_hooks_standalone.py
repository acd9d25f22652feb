"""The two hooks run on the standard library alone: `python3 -S -I`, no site-packages, no
package installed, and on the oldest Python the product supports (3.8)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_layers import HOOKS_MAY_IMPORT

REPO = Path(__file__).resolve().parents[2]
# Every module the hooks run, theirs and the vocabulary they share (tests/test_layers.py).
HOOK_MODULES = sorted((REPO / "hooks").glob("*.py"))
HOOK_MODULES += [REPO / (name.replace(".", "/") + ".py") for name in HOOKS_MAY_IMPORT]
LAYERS = {"shared", "state", "skills", "cli"}
DEPENDENCIES = {"pydantic", "click", "jinja2", "filelock", "orjson"}
PY38 = [os.path.expanduser("~/.pyenv/versions/3.8.18/bin/python3.8"), "/usr/bin/python3.8"]
PY38 = [p for p in PY38 if os.path.exists(p)]  # real interpreters, not pyenv shims


def planning_project(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    state = project / ".planner" / "s1"
    (state / "worktree").mkdir(parents=True)
    session = {"id": "s1", "status": "design", "task": "Add a farewell", "step": 3}
    session["next_command"] = "planner --step 4"
    (state / "session.json").write_text(json.dumps(session))
    (project / ".planner" / "ACTIVE").write_text("s1\n")
    return project, state


def run_hook(python: str, script: str, payload: dict, project: Path, *flags: str):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(project.parent), "PLANNER_SANDBOX": "off"}
    return subprocess.run(
        [python, *flags, str(REPO / "hooks" / script)],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=project,
        env=env,
        timeout=60,
    )


@pytest.mark.parametrize("python", ["/usr/bin/python3", sys.executable])
def test_both_hooks_run_isolated_without_site_packages(tmp_path, python):
    if not os.path.exists(python):
        pytest.skip(f"{python} is not installed")
    project, state = planning_project(tmp_path)
    deny = run_hook(
        python,
        "guard.py",
        {"tool_name": "Bash", "tool_input": {"command": "rm -rf src"}, "cwd": str(project)},
        project,
        "-S",
        "-I",
        "-X",
        "importtime",
    )
    assert deny.returncode == 0, deny.stderr
    decision = json.loads(deny.stdout)["hookSpecificOutput"]["permissionDecision"]
    assert decision == "deny"
    imported = {line.rsplit("|", 1)[-1].strip() for line in deny.stderr.decode().splitlines()}
    assert "state.vocab_core" in imported  # the parsing below sees the package's modules
    assert {m for m in imported if m.split(".")[0] in LAYERS} <= {"state", *HOOKS_MAY_IMPORT}
    assert not {m.split(".")[0] for m in imported} & DEPENDENCIES
    start = run_hook(python, "session_start.py", {"cwd": str(project)}, project, "-S", "-I")
    assert start.returncode == 0, start.stderr
    assert f"STATE_DIR={state}" in start.stdout.decode()
    assert "NEXT: planner --step 4" in start.stdout.decode()


def test_hook_modules_are_python_3_8_syntax():
    assert len(HOOK_MODULES) > 10
    for path in HOOK_MODULES:
        if path.name in ("guard.py", "__init__.py"):  # the entry parses on 3.6 (round2 tests)
            continue
        tree = ast.parse(path.read_text(), feature_version=(3, 8))
        assert any(
            isinstance(node, ast.ImportFrom) and node.module == "__future__" for node in tree.body
        ), f"{path.relative_to(REPO)} needs `from __future__ import annotations` for 3.8"


@pytest.mark.skipif(not PY38, reason="no Python 3.8 interpreter here (pyenv or PATH)")
def test_both_hooks_run_on_python_3_8(tmp_path):
    project, _ = planning_project(tmp_path)
    commands = ["rm -rf src", "git log | head", "echo $[1<<2]", "plan status"]
    for command in commands:
        payload = {"tool_name": "Bash", "tool_input": {"command": command}, "cwd": str(project)}
        done = run_hook(PY38[0], "guard.py", payload, project, "-S", "-I")
        assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    write = {"tool_name": "Write", "tool_input": {"file_path": str(project / "a")}}
    done = run_hook(PY38[0], "guard.py", {**write, "cwd": str(project)}, project, "-S", "-I")
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    start = run_hook(PY38[0], "session_start.py", {"cwd": str(project)}, project, "-S", "-I")
    assert b"session s1: design" in start.stdout, start.stderr
