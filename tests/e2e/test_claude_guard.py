"""The guard in the real Claude Code (offline, ../shared/harness): what its answers do there.

Observed with Claude Code 2.1.330 and asserted here: an answer carrying only
`hookSpecificOutput.updatedInput` runs the rewritten (sandboxed) command, and the rewritten
command still goes through the normal permission rules (it is refused where Bash is not
allowed, and needs its own rule, `Bash(/usr/bin/bwrap:*)`, where only `Bash(python3:*)` was);
an `ask` is refused in `-p` mode, where no person can answer.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.e2e.conftest import run_claude, start_session

pytestmark = [
    pytest.mark.client,
    pytest.mark.usefixtures("plugin_environment"),
    pytest.mark.skipif(
        shutil.which("bwrap") is None,
        reason="bubblewrap is not installed (apt-get install -y bubblewrap; .ci/run does it)",
    ),
]
PYTHON_WRITE = "python3 -c \"open('README.md', 'a').write('changed')\""


def results(summary: dict) -> list[tuple[dict, dict]]:
    by_id = {r["tool_use_id"]: r for r in summary["tool_results"]}
    return [(c, by_id[c["id"]]) for c in summary["tool_calls"] if c["id"] in by_id]


def settings(tmp_path: Path, *allow: str) -> str:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"permissions": {"allow": ["Read", "Skill", *allow]}}))
    return str(path)


def test_planning_wraps_bash_and_keeps_approval_human(
    harness: Path, project: Path, isolated_path: str, tmp_path: Path
) -> None:
    state = start_session(project)
    readme = (project / "README.md").read_text()
    rc, s = run_claude(tmp_path, "guard_sandbox.json", "--path", isolated_path)
    assert rc == 0 and s["ok"], s["stderr_tail"]
    (write, wrote), (approve, approved), (active, _), (_, shown) = results(s)

    # The Bash write was rewritten into the sandbox, ran, and failed there, saying why.
    assert write["input"]["command"] == PYTHON_WRITE
    assert wrote["is_error"] and "Read-only file system" in wrote["text"]
    assert "planner: this command ran in the planning sandbox" in wrote["text"]
    assert (project / "README.md").read_text() == readme
    assert not shown["is_error"] and shown["text"].strip() == readme.strip()

    # The agent's own approval was answered ask, which -p mode refuses: nothing recorded.
    assert approve["input"]["command"] == "plan review approve --by user"
    assert approved["is_error"] and "person's decision" in approved["text"]
    [denied] = [d for d in s["denials"] if d["tool_name"] == "Bash"]
    assert denied["source"] == "config"  # the permission prompt no one could answer
    session = json.loads((state / "session.json").read_text())
    assert session["status"] == "discovery" and session.get("approval") is None

    # The session's state is out of reach of file tools.
    [hook_denial] = s["hook_denials"]
    assert hook_denial["tool_name"] == "Write" and active["name"] == "Write"
    assert "scratch worktree" in hook_denial["reason"]

    audit = [json.loads(line) for line in (state / "audit.jsonl").read_text().splitlines()]
    guard = [(a["event"], a["tool"], a["decision"]) for a in audit if a.get("by") == "guard"]
    assert guard == [
        ("sandboxed", "Bash", "sandboxed"),
        ("blocked", "Bash", "ask"),
        ("blocked", "Write", "deny"),
        ("sandboxed", "Bash", "sandboxed"),
    ]
    assert {a["session"] for a in audit if a.get("by") == "guard"} == {session["id"]}


def test_after_approval_the_same_write_goes_through(
    harness: Path, project: Path, isolated_path: str, tmp_path: Path
) -> None:
    state = start_session(project)
    session = json.loads((state / "session.json").read_text())
    session["status"] = "approved"  # the person approved (in their terminal)
    (state / "session.json").write_text(json.dumps(session))
    rc, s = run_claude(tmp_path, "guard_after_approval.json", "--path", isolated_path)
    assert rc == 0 and s["ok"], s["stderr_tail"]
    [(_, wrote)] = results(s)
    assert not wrote["is_error"] and not s["denials"]
    assert (project / "README.md").read_text().endswith("changed")


def test_the_wrapped_command_still_needs_the_users_permission(
    harness: Path, project: Path, isolated_path: str, tmp_path: Path
) -> None:
    start_session(project)
    readme = (project / "README.md").read_text()
    only_python = settings(tmp_path, "Bash(python3:*)", "Bash(cat:*)")
    rc, s = run_claude(
        tmp_path, "guard_after_approval.json", "--path", isolated_path, "--settings", only_python
    )
    assert rc == 0, s["stderr_tail"]
    [denied] = s["denials"]
    assert denied["source"] == "config" and denied["tool_input"]["command"] == PYTHON_WRITE
    assert (project / "README.md").read_text() == readme

    shutil.rmtree(tmp_path / "out")
    bwrap_allowed = settings(tmp_path, f"Bash({shutil.which('bwrap')}:*)")
    rc, s = run_claude(
        tmp_path, "guard_after_approval.json", "--path", isolated_path, "--settings", bwrap_allowed
    )
    assert rc == 0, s["stderr_tail"]
    [(_, wrote)] = results(s)
    assert wrote["is_error"] and "Read-only file system" in wrote["text"]
    assert (project / "README.md").read_text() == readme
