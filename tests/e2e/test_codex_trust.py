"""A true status in the real Codex CLI (offline, ../shared/harness run-codex): with planner's
hooks not yet trusted nothing guards planning (Codex runs untrusted hooks silently inert),
and `planner status` says so and what to do; trusted, the guard is heard and it says what
guards."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import RUN_CODEX, ScriptedClient, guard_hook, needs_codex, start_session

pytestmark = pytest.mark.client


def codex(scripted_client: ScriptedClient, *extra: str) -> dict:
    scenario = {
        "prompt": "Where does the plan stand? Then note it in the README.",
        "turns": [
            {"bash": "planner status", "description": "Where the plan stands"},
            {"bash": "echo noted >> README.md", "description": "A note"},
            {"text": "done"},
        ],
    }
    return scripted_client(RUN_CODEX, scenario, guard_hook("codex"), *extra)


@needs_codex
def test_untrusted_hooks_the_status_says_planning_is_not_guarded(
    project: Path, scripted_client: ScriptedClient
) -> None:
    state = start_session(project)
    s = codex(scripted_client, "--no-hook-trust-bypass")
    said = s["tool_results"][0]["text"]
    assert "guard: planning is NOT guarded" in said and "/hooks" in said, said
    assert "noted" in (project / "README.md").read_text()  # nothing guarded: it was written
    assert not s["hook_denials"] and not (state / "guard.heard").exists()


@needs_codex
def test_trusted_hooks_the_status_says_what_guards(
    project: Path, scripted_client: ScriptedClient
) -> None:
    state = start_session(project)
    readme = (project / "README.md").read_text()
    s = codex(scripted_client)
    said = s["tool_results"][0]["text"]
    assert "NOT guarded" not in said and "guarded by command parsing only" in said, said
    assert len(s["hook_denials"]) == 1 and (project / "README.md").read_text() == readme
    assert (state / "guard.heard").exists()
