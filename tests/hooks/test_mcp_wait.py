"""hooks/mcp_wait.py, in process: the stand-in's answers while the environment is not made."""

from __future__ import annotations

import io
import json

import pytest

from hooks import mcp_wait


def test_a_start_that_fails_is_what_the_tool_says(monkeypatch: pytest.MonkeyPatch) -> None:
    """start() raising (a data dir it cannot write) leaves nothing being made: the reason
    stays the tool's answer (a watch started anyway overwrote it with "" at its first poll)."""
    calls = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": mcp_wait.TOOL}},
    ]
    out = io.StringIO()
    monkeypatch.setattr("sys.stdin", io.StringIO("".join(json.dumps(c) + "\n" for c in calls)))
    monkeypatch.setattr("sys.stdout", out)

    def start() -> None:
        raise OSError("data dir /x is read-only")

    assert mcp_wait.serve(["mcp"], "/x", lambda: None, start, lambda t: "") == 0
    answer = json.loads(out.getvalue().splitlines()[1])["result"]
    assert answer["isError"] is True
    text = answer["content"][0]["text"]
    assert text == "planner's review companion cannot start: data dir /x is read-only"
