"""The review companion in the real Claude Code, offline through ../shared/harness: the plugin's
.mcp.json starts `plan mcp` through the bin/ launcher; a scripted model finds the tools with
ToolSearch, calls them and reads their answers, drafts feedback, and cannot approve through
them (there is no such tool; the session stays in review)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.cli.test_mcp import TOOLS, VERDICT_WORDS
from tests.conftest import REPO
from tests.e2e.conftest import run_claude

pytestmark = [pytest.mark.client, pytest.mark.usefixtures("plugin_environment")]

SERVER = "mcp__plugin_planner_planner__"  # Claude Code's names for the plugin's server's tools


def test_mcp_json_starts_plan_mcp_through_the_plugin_s_launcher() -> None:
    servers = json.loads((REPO / ".mcp.json").read_text())["mcpServers"]
    assert servers == {
        "planner": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/plan", "args": ["mcp"]}
    }  # the guard lets the tools of a server named planner run while planning


def test_claude_calls_the_companion_s_tools_and_cannot_approve_through_them(
    harness: Path, project: Path, isolated_path: str, tmp_path: Path
) -> None:
    from tests.cli.review_helpers import to_review

    _, out = to_review(project)
    state = Path(out.state_dir)
    scenario = {
        "prompt": "Help me review the plan.",
        "turns": [
            {"tool": "ToolSearch", "input": {"query": "planner", "max_results": 30}},
            {"tool": f"{SERVER}session_status", "input": {}},
            {"tool": f"{SERVER}search_plan", "input": {"query": "bye"}},
            {"tool": f"{SERVER}approve", "input": {}},
            {"tool": f"{SERVER}review_approve", "input": {"by": "model"}},
            {
                "tool": f"{SERVER}draft_feedback",
                "input": {"text": "Translate 'bye'.", "comments": ["CC-001:5: translate"]},
            },
            {"text": "I drafted feedback for you to send."},
        ],
    }
    rc, summary = run_claude(
        tmp_path,
        scenario,
        "--path",
        isolated_path,
        "--env",
        "PLANNER_DATA_DIR=" + os.environ["PLANNER_DATA_DIR"],
        "--allow",
        SERVER.rstrip("_"),  # the person allows the companion's tools (the harness runs -p)
        timeout=180,
    )
    assert rc == 0 and summary["ok"], (rc, summary["stderr_tail"], summary["requests"])

    # ToolSearch shows the server's tools: the companion's, none of them a verdict.
    stream = (tmp_path / "out" / "stream.jsonl").read_text()
    offered = {
        ref["tool_name"]
        for line in stream.splitlines()
        for ref in tool_references(json.loads(line))
        if ref["tool_name"].startswith(SERVER)
    }
    assert {name.removeprefix(SERVER) for name in offered} == TOOLS
    assert not any(VERDICT_WORDS.search(name.removeprefix(SERVER)) for name in offered)

    results = {r["tool_use_id"]: r for r in summary["tool_results"]}
    answered = [(c["name"], results[c["id"]]) for c in summary["tool_calls"] if c["id"] in results]
    by_tool = dict(answered)
    status = by_tool[f"{SERVER}session_status"]
    assert not status["is_error"] and '"status": "review"' in status["text"]
    search = by_tool[f"{SERVER}search_plan"]
    assert not search["is_error"] and '"id": "CC-001"' in search["text"]
    for missing in ("approve", "review_approve"):
        refused = by_tool[f"{SERVER}{missing}"]
        assert refused["is_error"] and "No such tool available" in refused["text"]
    drafted = by_tool[f"{SERVER}draft_feedback"]
    assert not drafted["is_error"] and '"id": "FD-001"' in drafted["text"]

    session = json.loads((state / "session.json").read_text())
    assert session["status"] == "review" and session["approval"] is None
    assert session["reviews"][-1]["verdict"] == "submitted"
    drafts = json.loads((state / "drafts.json").read_text())["drafts"]
    assert [d["text"] for d in drafts] == ["Translate 'bye'."]


def tool_references(event: dict) -> list[dict]:
    """The tool_reference blocks (what ToolSearch found) in one stream-json event."""
    found = []
    for block in (event.get("message") or {}).get("content") or []:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            content = block.get("content")
            for inner in content if isinstance(content, list) else []:
                if isinstance(inner, dict) and inner.get("type") == "tool_reference":
                    found.append(inner)
    return found
