"""Both workflows with the scratch worktree, only from what the steps print:
planning edits real files and captures them; the executor applies and commits each milestone."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bench.sample import FAREWELL, IDENTITY, README_LINE, TEST, WAVE, edit
from bench.sample import TWO_MILESTONES as DESIGN
from tests.agent import Agent, Output
from tests.conftest import git
from tests.workflows.helpers import review

pytestmark = pytest.mark.slow  # both workflows through a real shell


def says(out: Output, *commands: str) -> None:
    for command in commands:
        assert command in out.text, (command, out.text)


def test_plan_from_worktree_edits_then_apply_and_commit(project: Path) -> None:
    agent = Agent(project, env=IDENTITY, process=True)
    base = git(project, "rev-parse", "HEAD").strip()
    out = agent.step("planner --step 1 --task 'Add a farewell' --non-interactive")
    state = Path(out.state_dir)  # step 1 printed step 2
    agent.plan("context", "set", "--goal", "Users can say goodbye")
    out = agent.step(out.route())  # 3
    agent.apply(DESIGN)
    out = agent.step(out.route())  # 4
    review(agent, "plan-design")
    out = agent.step(out.route("pass"))  # 5, which prints 6
    assert out.header == "PLANNER 6/11 plan-code-execute"
    says(out, "STATE_DIR/worktree", "plan change capture", "--intent CI-n")

    tree = Path(agent.plan("worktree").stdout.strip())
    assert tree == state / "worktree"
    assert Path(agent.plan("worktree").stdout.strip()) == tree  # once
    assert (
        git(project, "status", "--porcelain", "--untracked-files=all", "--", ".planner/*/worktree")
        == ""
    )
    edit(tree / "src" / "app.py", FAREWELL)
    assert agent.plan("change", "capture", "--intent", "CI-001").stdout.split() == ["CC-001"]
    edit(tree / "src" / "app.py", WAVE)
    edit(tree / "tests" / "test_app.py", TEST)
    agent.shell(f"cd {tree} && python3 tests/test_app.py")  # tests run in the worktree
    assert agent.plan("change", "capture").stdout.split() == ["CC-002", "CC-003"]
    assert (project / "src" / "app.py").read_text() == git(project, "show", "HEAD:src/app.py")

    out = agent.step(out.route())  # 7
    review(agent, "plan-code")
    out = agent.step(out.route("pass"))  # 8, which prints 9
    assert out.header == "PLANNER 9/11 plan-docs-execute"
    says(out, "plan change capture")
    edit(tree / "README.md", README_LINE)
    assert agent.plan("change", "capture").stdout.split() == ["CC-004"]
    out = agent.step(out.route())  # 10
    review(agent, "plan-docs")
    out = agent.step(out.route("pass"))  # 11: approved as auto
    plan = json.loads((state / "plan.json").read_text())
    assert [c["intent_ref"] for m in plan["milestones"] for c in m["code_changes"]] == [
        "CI-001", "CI-002", "CI-003", "CI-004",
    ]  # fmt: skip

    planned = {p: (tree / p).read_text() for p in ("src/app.py", "tests/test_app.py", "README.md")}
    out = agent.step(out.route())  # executor 1, which prints 2 and 3 (wave 1)
    says(out, "plan exec apply M-n", "plan exec done M-n", "--ran", "plan exec commit M-n")
    for wave, milestone in ((1, "M-001"), (2, "M-002")):
        assert f"Wave {wave}" in out.text and milestone in out.text
        agent.plan("exec", "apply", milestone)
        evidence = ["--evidence", "README read"]
        if milestone == "M-001":
            agent.shell("python3 tests/test_app.py")
            evidence = ["--evidence", "tests pass", "--ran", "tests/test_app.py"]
        agent.plan("exec", "done", milestone, *evidence)
        agent.plan("exec", "commit", milestone)
        out = agent.step(f"executor --step {2 + wave} --state-dir {out.state_dir}")  # 3, then 4
    assert out.header == "EXECUTOR 4/9 impl-code-qr"
    review(agent, "impl-code")
    out = agent.step(out.route("pass"))  # 5, which prints 6 (nothing to write) and 7
    says(out, "do not write it again")
    review(agent, "impl-docs")
    out = agent.step(out.route("pass"))  # 8, which prints 9
    assert out.done
    assert "tests run: tests/test_app.py (M-001)" in out.text

    # The commits hold exactly the planned diffs, one commit per milestone.
    log = git(project, "log", "--format=%H %s", f"{base}..HEAD").splitlines()
    assert [line.split(" ", 1)[1] for line in reversed(log)] == [
        "M-001 Farewell: CI-001, CI-002, CI-003",
        "M-002 Document farewell: CI-004",
    ]
    first, second = (line.split()[0] for line in reversed(log))
    files = git(project, "diff", "--name-only", base, first).split()
    assert files == ["src/app.py", "tests/test_app.py"]
    assert git(project, "diff", "--name-only", first, second).split() == ["README.md"]
    for path, text in planned.items():
        assert git(project, "show", f"HEAD:{path}") == text
    leftovers = ":(exclude,glob)**/__pycache__/**"  # what running the tests leaves
    assert git(project, "status", "--porcelain", "--", "src", "tests", "README.md", leftovers) == ""

    record = json.loads((state / "reconcile.json").read_text())
    assert record["tests"] == [{"file": "tests/test_app.py", "milestone": "M-001", "ran": True}]
    assert [m["commit"] for m in record["milestones"]] == [first, second]
    assert record["head"] == second
    # The plan still validates now that its implementation is merged.
    agent.plan("validate", "--phase", "final")
    # The completed session kept no worktree, and git never registered one.
    assert not tree.exists() and not (state / "worktree.git").exists()
    assert not (project / ".git" / "worktrees").exists()
    done = subprocess.run(["git", "worktree", "list"], cwd=project, capture_output=True)
    assert done.returncode == 0 and len(done.stdout.splitlines()) == 1
