"""Drive a real session to a given point, the way an agent would, for focused tests."""

from __future__ import annotations

import re
from pathlib import Path

from bench.sample import DESIGN as DESIGN
from bench.sample import FAREWELL_DIFF
from tests.agent import Agent, Output

DOCS_ONLY = [
    {
        "op": "overview set",
        "args": {"title": "Docs", "problem": "README is thin.", "approach": "Document greet()."},
    },
    {"op": "milestone add", "args": {"name": "README", "file": ["README.md"], "doc_only": True}},
]


def start(project: Path, *flags: str, env: dict[str, str] | None = None) -> tuple[Agent, Output]:
    """A session at step 3; non-interactive (--non-interactive on step 1) unless `env` is
    given (an interactive session then)."""
    agent = Agent(project, env=env)
    if env is None:
        flags = (*flags, "--non-interactive")
    out = agent.step(" ".join(["planner --step 1 --task 'Add a farewell'", *flags]))  # and 2
    agent.plan("context", "set", "--goal", "say goodbye")
    return agent, agent.step(out.route())


def state_of(out: Output) -> Path:
    return Path(out.state_dir)


def review(
    agent: Agent,
    phase: str,
    status: str = "PASS",
    severity: str = "MUST",
    finding: str | None = None,
) -> str:
    qa = agent.plan(
        "qr", "add", "--phase", phase, "--check", f"checked {phase}", "--severity", severity
    ).stdout.strip()
    extra = ["--finding", finding] if finding else []
    agent.plan("qr", "set", qa, "--phase", phase, "--status", status, *extra)
    return qa


def to_code_step(project: Path, *flags: str) -> tuple[Agent, Output]:
    """A session whose design passed its gate: at step 6."""
    agent, out = start(project, *flags)
    agent.apply(DESIGN)
    out = agent.step(out.route())
    review(agent, "plan-design")
    return agent, agent.step(out.route("pass"))  # the gate prints step 6


def to_approval(project: Path) -> tuple[Agent, Output]:
    """A session through every planner step: approved as auto, frozen, routing to executor 1."""
    agent, out = to_code_step(project)
    add_farewell_change(agent, state_of(out))
    out = agent.step(out.route())
    review(agent, "plan-code")
    out = agent.step(out.route("pass"))  # the gate prints step 9
    agent.plan("doc", "set", "M-001", "--docstring", "farewell: say goodbye")
    out = agent.step(out.route())
    review(agent, "plan-docs")
    return agent, agent.step(out.route("pass"))


def add_farewell_change(agent: Agent, state: Path) -> None:
    """The developer's change for CI-001, from a diff file in the session directory."""
    diff = state / "app.diff"
    diff.write_text(FAREWELL_DIFF)
    agent.plan("change", "add", "--intent", "CI-001", "--file", "src/app.py", "--diff", str(diff))


RECHECK = re.compile(r'"op": "qr set", "args": \{"id": "(qa-\d+)", "phase": "([\w-]+)"')


def judge_todo(agent: Agent, out: Output, phase: str) -> None:
    """Pass every item a QR step lists as TODO, or a work step lists to re-check (what a
    re-review after a rejection or a fix needs)."""
    for line in out.text.splitlines():
        if line.lstrip().startswith("qa-") and " TODO " in line:
            agent.plan("qr", "set", line.split()[0], "--phase", phase, "--status", "PASS")
    listed = [{"op": "qr set", "args": {"id": i, "phase": p, "status": "PASS"}}
              for i, p in RECHECK.findall(out.text)]  # fmt: skip
    if listed:
        agent.apply(listed)
