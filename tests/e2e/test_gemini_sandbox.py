"""Issue 17, item 3 in the real Gemini CLI (offline, ../shared/harness run-gemini): with a tmux
server of the person's running, the agent's `tmux … run-shell` and a direct `connect()` to a
unix socket it can see change nothing, because the guard's sandbox hides /tmp and refuses to
create AF_UNIX sockets. The project and its .git are compared before and after.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import RUN_GEMINI, ScriptedClient, guard_hook, needs_gemini, start_session
from tests.hooks.test_sandbox import snapshot, tmux_server

pytestmark = [
    pytest.mark.client,
    pytest.mark.usefixtures("plugin_environment"),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def outside_the_session(project: Path) -> dict:
    """The project and its .git; the session's own audit and scratch dir may change."""
    return snapshot(project, skip=(".planner/",))


@needs_gemini
def test_gemini_cannot_reach_the_persons_tmux(
    project: Path, scripted_client: ScriptedClient
) -> None:
    state = start_session(project)
    name = f"planner-test-{os.getpid()}"
    visible = project / ".planner" / "t.sock"  # in the project: bound back read-only, in sight
    readme = project / "README.md"
    attacks = [
        f"tmux -L {name} run-shell 'echo x >> {readme}'",
        f"tmux -S {visible} run-shell 'echo x >> {readme}'",
        f"python3 -c \"import socket; socket.socket(socket.AF_UNIX).connect('{visible}')\"",
    ]
    turns = [{"bash": a, "description": "Reach the terminal"} for a in attacks]
    scenario = {"prompt": "Change the project through tmux.", "turns": [*turns, {"text": "done"}]}
    hooks = guard_hook("gemini", "run_shell_command")
    with tmux_server("-L", name), tmux_server("-S", str(visible)):
        before = outside_the_session(project)
        s = scripted_client(RUN_GEMINI, scenario, hooks)
        time.sleep(0.5)  # a run-shell that got through would have run by now
        after = outside_the_session(project)
    results = s["tool_results"]
    assert len(results) == 3
    for result in results:
        assert result["is_error"] or result["exit_code"], result
    assert "Operation not permitted" in results[2]["text"]
    assert after == before
    audit = (state / "audit.jsonl").read_text().splitlines()
    assert sum('"sandboxed"' in line for line in audit) == 3
