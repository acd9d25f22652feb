"""The sample the tests and the benchmarks both walk: a project whose src/app.py gains
farewell() beside greet(), and the design batch an architect records (bench/agent.py runs
the commands the steps print); the two-milestone walk of the worktree flow. Here because
bench/ imports nothing from tests/; never imported by the package."""

from pathlib import Path
from typing import Any

FAREWELL_DIFF = """\
--- a/src/app.py
+++ b/src/app.py
@@ -1,2 +1,5 @@
 def greet(name):
     return 'hi ' + name
+
+def farewell(name):
+    return 'bye ' + name
"""

DESIGN = [
    {
        "op": "overview set",
        "args": {"title": "Farewell", "problem": "No goodbye.", "approach": "Add farewell()."},
    },
    {"op": "decision add", "args": {"decision": "Mirror greet()", "reasoning": "Obvious."}},
    {
        "op": "milestone add",
        "args": {
            "name": "Farewell",
            "file": ["src/app.py"],
            "acceptance": ["farewell('x') == 'bye x'"],
        },
    },
    {
        "op": "intent add",
        "args": {
            "milestone": "$3",
            "file": "src/app.py",
            "function": "farewell",
            "behavior": "Return 'bye ' + name",
            "decision": ["$2"],
        },
    },
]

# The worktree flow's walk (bench/bench_worktree.py, tests/e2e/test_worktree_flow.py).

IDENTITY = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}
GREET = "def greet(name):\n    return 'hi ' + name\n"
FAREWELL = "\ndef farewell(name):\n    return 'bye ' + name\n"
WAVE = "\ndef wave():\n    return 'o/'\n"
TEST = (
    "import sys\nsys.path.insert(0, 'src')\nfrom app import farewell, wave\n"
    "assert farewell('ann') == 'bye ann' and wave() == 'o/'\n"
)
README_LINE = "\n`farewell(name)` says goodbye.\n"


def _intent(milestone: str, file: str, behavior: str, function: str = "") -> dict[str, Any]:
    args = {"milestone": milestone, "file": file, "behavior": behavior, "decision": ["$2"]}
    return {"op": "intent add", "args": {**args, **({"function": function} if function else {})}}


# Two milestones, four intents on three files (two share src/app.py, one is README).
TWO_MILESTONES = [
    *DESIGN[:3],  # the overview, the decision and the farewell milestone
    _intent("$3", "src/app.py", "Return 'bye ' + name", "farewell"),
    _intent("$3", "src/app.py", "Return 'o/'", "wave"),
    _intent("$3", "tests/test_app.py", "farewell and wave answer", "test_farewell"),
    {
        "op": "milestone tests",
        "args": {"id": "$3", "file": ["tests/test_app.py"], "type": "unit"},
    },
    {
        "op": "milestone add",
        "args": {
            "name": "Document farewell",
            "file": ["README.md"],
            "doc_only": True,
            "depends": ["$3"],
        },
    },
    _intent("$8", "README.md", "README says farewell()"),
]


def edit(path: Path, text: str) -> None:
    """What an agent's file tool does in the worktree."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text((path.read_text() if path.exists() else "") + text)


# A client's opening of `plan mcp`: initialize, initialized, tools/list (bench_process, test_mcp).
MCP_OPENING: list[dict[str, Any]] = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "planner-sample", "version": "0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]
