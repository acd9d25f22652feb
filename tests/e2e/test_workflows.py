"""Both workflows end to end, driven only by the commands the steps print."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent import Agent, Output
from tests.workflows.helpers import DESIGN as FAREWELL_DESIGN
from tests.workflows.helpers import add_farewell_change

# The shared farewell design, plus the tests its milestone names and a documentation milestone.
pytestmark = pytest.mark.slow  # both workflows through a real shell


DESIGN = [
    *FAREWELL_DESIGN,
    {
        "op": "milestone tests",
        "args": {
            "id": "$3",
            "file": ["tests/test_app.py"],
            "type": "unit",
            "normal": ["farewell('ann')"],
        },
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
]
TEST = "tests/test_app.py"
TEST_DIFF = f"--- /dev/null\n+++ b/{TEST}\n@@ -0,0 +1 @@\n+from src.app import farewell\n"


class Walk:
    """Runs each routed step twice: the second run must print the same and write nothing."""

    def __init__(self, agent: Agent):
        self.agent = agent
        self.state: Path | None = None

    def go(self, command: str) -> Output:
        out = self.agent.step(command)
        self.state = self.state or Path(out.state_dir)
        before = (self.state / "session.json").read_bytes()
        if "--task" in command:  # step 1 with --task starts a session; it re-renders without
            command = f"planner --step 1 --state-dir {self.state}"
        again = self.agent.step(command)
        assert again.text == out.text, command
        assert (self.state / "session.json").read_bytes() == before, command
        return out


def review(agent: Agent, phase: str, verdict: str = "PASS", finding: str | None = None) -> str:
    qa = agent.plan("qr", "add", "--phase", phase, "--check", f"{phase} reviewed").stdout.strip()
    extra = ["--finding", finding] if finding else []
    agent.plan("qr", "set", qa, "--phase", phase, "--status", verdict, *extra)
    return qa


def test_planner_then_executor_following_the_printed_routing(project: Path) -> None:
    agent = Agent(project, process=True)
    walk = Walk(agent)
    out = walk.go("planner --step 1 --task 'Add a farewell' --non-interactive")  # which prints 2
    assert "PLANNER 1/11 plan-init" in out.text and out.header == "PLANNER 2/11 context-verify"
    state = Path(out.state_dir)
    assert state.parent == project / ".planner"
    assert (project / ".planner" / "ACTIVE").read_text().strip() == state.name

    agent.plan("context", "set", "--goal", "Users can say goodbye", "--scope", "src/app.py")
    out = walk.go(out.route())  # 3 plan-design-execute
    assert out.header == "PLANNER 3/11 plan-design-execute"
    assert "planner role architect" in out.text
    agent.apply(DESIGN)

    out = walk.go(out.route())  # 4 plan-design-qr
    qa = review(agent, "plan-design", "FAIL", "No risk is on record")
    out = walk.go(out.route("fail"))  # 5 gate: fail -> back to 3 in fix mode, one call
    assert "iteration 2" in out.text
    assert out.header == "PLANNER 3/11 plan-design-execute"
    assert "FIX MODE" in out.text and "No risk is on record" in out.text
    agent.plan("risk", "add", "--risk", "Name clash", "--mitigation", "grep shows none")

    assert f'"id": "{qa}"' in out.text  # fix mode names the re-check, then the gate
    agent.plan("qr", "set", qa, "--phase", "plan-design", "--status", "PASS")
    out = walk.go(out.route("pass"))  # 5 pass, which prints 6 plan-code-execute
    assert out.header == "PLANNER 6/11 plan-code-execute"
    add_farewell_change(agent, state)
    (state / "test.diff").write_text(TEST_DIFF)  # the test file the milestone names
    agent.plan(
        "change", "add", "--intent", "CI-001", "--file", TEST, "--diff", str(state / "test.diff")
    )
    out = walk.go(out.route())  # 7
    review(agent, "plan-code")
    out = walk.go(out.route("pass"))  # 8, which prints 9 plan-docs-execute
    assert (state / "plan.md").exists()
    agent.plan("doc", "set", "M-001", "--docstring", "farewell: say goodbye")
    agent.plan("doc", "set", "M-002", "--module-comment", "README: farewell")
    out = walk.go(out.route())  # 10
    review(agent, "plan-docs")
    out = walk.go(out.route("pass"))  # 11: approved as auto, frozen
    assert out.next and out.next.startswith("executor --step 1")
    session = json.loads((state / "session.json").read_text())
    assert session["status"] == "approved" and session["approval"]["by"] == "auto"
    assert json.loads((state / "plan.json").read_text())["frozen_at"]
    agent.plan("verify")

    out = walk.go(out.route())  # executor 1, which prints 2 and 3 (wave 1)
    assert "EXECUTOR 1/9 init" in out.text and "EXECUTOR 2/9 load-verify" in out.text
    assert "Wave 1" in out.text and "M-001" in out.text
    assert out.next and out.next == "plan exec apply M-001"
    agent.plan("exec", "start", "M-001")
    diff = json.loads(agent.plan("show", "CC-001", "--json").stdout)["diff"]
    agent.shell("git apply", input=diff)
    (project / "tests").mkdir()
    (project / "tests" / "test_app.py").write_text("from src.app import farewell\n")
    (project / "src" / "util.py").write_text("# not in the plan\n")  # an unplanned file
    agent.plan(
        "exec",
        "done",
        "M-001",
        "--evidence",
        "farewell('x') == 'bye x'",
        "--ran",
        "tests/test_app.py",
    )
    agent.plan(
        "exec",
        "deviation",
        "M-001",
        "--description",
        "src/util.py added for a helper the plan missed",
    )
    out = agent.step(f"executor --step 3 --state-dir {state}")  # 3 again (no --commit): wave 2
    assert "Wave 2" in out.text and "M-002" in out.text
    assert out.next and out.next == "plan exec apply M-002"
    agent.plan("exec", "done", "M-002", "--evidence", "README left as is")  # README untouched
    agent.plan(
        "exec",
        "deviation",
        "M-002",
        "--description",
        "README.md unchanged: the docstring is enough",
    )

    out = walk.go(f"executor --step 4 --state-dir {state}")  # 4 impl-code-qr: step 3 routes here
    review(agent, "impl-code")
    out = walk.go(out.route("pass"))  # 5, which prints 6
    out = walk.go(out.route())  # 7
    review(agent, "impl-docs")
    out = walk.go(out.route("pass"))  # 8, which prints 9 reconcile
    assert out.done and out.header == "EXECUTOR 9/9 reconcile"

    record = json.loads((state / "reconcile.json").read_text())
    assert record["unplanned_changes"] == ["src/util.py"]
    by_id = {m["id"]: m for m in record["milestones"]}
    assert by_id["M-002"]["untouched_planned_files"] == ["README.md"]
    assert by_id["M-001"]["changed_files"] == ["src/app.py", "tests/test_app.py"]
    assert record["tests"] == [{"file": "tests/test_app.py", "milestone": "M-001", "ran": True}]
    assert [d["id"] for d in record["deviations"]] == ["DV-001", "DV-002"]
    assert json.loads((state / "session.json").read_text())["status"] == "completed"
