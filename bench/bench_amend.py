"""What one amendment round costs an agent: a plan (farewell(), M-001) is approved by the
person on the review page and M-001 is carried out and committed; then the person wants a
wave() too. From there a scripted agent runs only what the steps print: `plan amend`, the
design rework (the new milestone, its intent, the re-checks the prompt lists, the gate),
the code rework (an edit in the worktree, capture, re-checks, the gate), the docs gate, the
review page until the person re-approves, and the executor for the new milestone (apply,
done --commit, the two reviews, reconcile). Every command and the characters of all its
stdout+stderr count; the file-tool edit and the person's verdict are counted apart.

    python -m bench.bench_amend [--verbose] [--costs]   (the transcript; each command's cost)
"""

from __future__ import annotations

import argparse
import re
import tempfile
from pathlib import Path

from bench import sample
from bench.agent import Agent, Output
from bench.bench_worktree import (
    Person,
    cost,
    make_project,
    per_command,
    rechecks,
    review,
    review_round,
    split_approval,
)
from bench.sample import FAREWELL, IDENTITY, WAVE, edit

WORKTREE = re.compile(r"captured edits\): (.+)$", re.M)
WAVE_MILESTONE = [
    {
        "op": "milestone add",
        "args": {
            "name": "Wave",
            "file": ["src/app.py"],
            "acceptance": ["wave() == 'o/'"],  # after M-001 (committed, same file) by itself
        },
    },
    {
        "op": "intent add",
        "args": {"milestone": "$1", "file": "src/app.py", "function": "wave", "behavior": "wave"},
    },
    {  # the new milestone's own review item, as the rework's prompt asks
        "op": "qr add",
        "args": {"phase": "plan-design", "scope": "$1", "check": "sound", "status": "PASS"},
    },
]


def worktree(out: Output) -> Path:
    return Path(WORKTREE.findall(out.text)[-1].replace("STATE_DIR", out.state_dir, 1))


def approved_and_committed(project: Path) -> tuple[Agent, Person, Path]:
    """The set-up, not measured: the plan approved, M-001 done and committed."""
    (project / "pyproject.toml").write_text("[tool.planner]\nquestions_min = 0\n")
    agent = Agent(project, env=IDENTITY)
    agent.shell("git add pyproject.toml && git commit -qm 'planner: no questions'")
    out = agent.step("planner --step 1 --task 'Add a farewell'")
    agent.plan("context", "set", "--goal", "Users can say goodbye")
    out = agent.step(out.route())  # 3
    agent.apply(sample.DESIGN)
    out = agent.step(out.route())  # 4
    out = review(agent, "plan-design")  # 5, which prints 6
    tree = worktree(out)
    edit(tree / "src" / "app.py", FAREWELL)
    agent.plan("change", "capture")
    out = agent.step(out.route())  # 7
    out = review(agent, "plan-code")  # 8, which prints 9
    out = agent.step(out.route())  # 10
    review(agent, "plan-docs")  # 11: in review
    person = Person(agent)
    review_round(agent, person, "approve")  # which prints executor 1, 2, 3
    agent.plan("exec", "apply", "M-001")
    agent.plan("exec", "done", "M-001", "--evidence", "checked", "--commit")
    return agent, person, tree


def amendment_round(agent: Agent, person: Person, tree: Path) -> tuple[int, int]:
    """The round, measured: returns the transcript index where execution starts and the
    file-tool edits the agent made."""
    opened = agent.plan("amend", "--reason", "the person wants a wave() too")
    out = Output(opened.stdout)  # which prints 3, the rework of the design
    out = agent.judge([*WAVE_MILESTONE, *rechecks(out)], "pass")  # 5, which prints 6
    edit(tree / "src" / "app.py", WAVE)
    capture = {"op": "change capture", "args": {"intent": ["CI-002"]}}
    out = agent.judge([capture, *rechecks(out)], "pass")  # 8, which prints 9
    out = agent.judge(rechecks(out), "pass")  # the docs phase judges M-002; 11: in review
    out = review_round(agent, person, "approve")  # which prints executor 1, 2 and 3
    execution = len(agent.transcript)
    assert "EXECUTOR 3/" in out.text and "M-002" in out.text, out.text
    agent.plan("exec", "apply", "M-002")
    done = agent.plan("exec", "done", "M-002", "--evidence", "checked", "--commit")
    out = Output(done.stdout)  # the wave is done: it prints 4
    assert out.header.startswith("EXECUTOR 4/"), out.text
    out = review(agent, "impl-code")  # 5, which prints 6 and 7
    out = review(agent, "impl-docs")  # 8, which prints 9: the result waits for the person
    out = review_round(agent, person, "accept", "--by", "ann", on="result")
    assert out.text.startswith("DONE"), out.text
    return execution, 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--verbose", action="store_true", help="print the transcript")
    parser.add_argument("--costs", action="store_true", help="each command's characters")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        agent, person, tree = approved_and_committed(make_project(Path(tmp) / "project"))
        start = len(agent.transcript)
        execution, edits = amendment_round(agent, person, tree)
    planned, executed, moved = split_approval(agent.transcript[start:], execution - start)
    parts = (
        ("amendment planning", planned, edits, -moved),
        ("amendment execution", executed, 0, moved),
        ("amendment round", agent.transcript[start:], edits, 0),
    )
    for name, entries, edited, shift in parts:
        commands, characters = cost(entries)
        characters += shift
        targets = " (targets <= 10 and <= 12,000)" if name == "amendment round" else ""
        print(
            f"{name}: {commands} commands, {characters:,} characters{targets}; "
            f"plus {edited} file-tool edits, not counted as commands"
        )
    if args.costs:
        print(per_command(agent.transcript[start:]))
    if args.verbose:
        for entry in agent.transcript[start:]:
            print(entry)


if __name__ == "__main__":
    main()
