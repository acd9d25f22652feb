"""A real interactive session brought past executor step 9: the result waits for the
person's review (result_review), for the result review tests."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.agent import Agent, Output
from tests.cli.review_helpers import to_review
from tests.conftest import git
from tests.workflows.helpers import review


def init_project(project: Path) -> Path:
    """A git project with src/app.py, the file the sample plan changes."""
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "init")
    return project


def execute(agent: Agent, out: Output, deviation: str = "") -> Output:
    """Executor steps 1 to 9 from the approval's routing: M-001 applied, tested, committed."""
    out = agent.step(out.route())  # executor 1, which prints 2 and 3
    agent.plan("exec", "apply", "M-001")
    agent.plan("exec", "done", "M-001", "--evidence", "farewell works", "--ran", "src/app.py")
    if deviation:
        agent.plan("exec", "deviation", "M-001", "--description", deviation)
    out = Output(agent.plan("exec", "commit", "M-001").stdout)  # the wave's last: prints 4
    review(agent, "impl-code")
    out = agent.step(out.route("pass"))  # 5, which prints 6 (M-001's docstring to write)
    out = agent.step(out.route())  # 7
    review(agent, "impl-docs")
    return agent.step(out.route("pass"))  # 8, which prints 9


def to_result_review(project: Path) -> tuple[Agent, Output]:
    """Planned, approved by the person, executed: the session waits in result_review."""
    agent, out = to_review(project)
    approved = agent.plan("review", "approve", "--by", "ann")
    assert "executor --step 1" in approved.stderr, approved.stderr
    out.next = approved.stderr.split("NEXT: ", 1)[1].strip()
    return agent, execute(agent, out, deviation="kept greet as it was: the plan missed a caller")


def copy_of(reviewing: Path, where: Path) -> tuple[Path, Path]:
    """A copy of the `reviewing` project under `where`: the project and its session's state."""
    project = where / "project"
    shutil.copytree(reviewing, project, symlinks=True)
    name = (project / ".planner" / "ACTIVE").read_text().strip()
    return project, project / ".planner" / name
