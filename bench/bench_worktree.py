"""What an agent pays for the worktree flow (PRODUCT.md §8 "Agent cost", §11): both workflows
walked with only the commands the steps print (plan worktree, edits, plan change capture;
plan exec apply, done, commit), in a real git project. Prints commands and characters read.

    python -m bench.bench_worktree
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from bench.agent import Agent

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


def _intent(milestone: str, file: str, behavior: str, function: str = "") -> dict:
    args = {"milestone": milestone, "file": file, "behavior": behavior, "decision": ["$2"]}
    return {"op": "intent add", "args": {**args, **({"function": function} if function else {})}}


# Two milestones, four intents on three files (two share src/app.py, one is README).
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


def make_project(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(GREET)
    (root / "README.md").write_text("# Demo\n")
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, env=_git_env())
    return root


def _git_env() -> dict[str, str]:
    import os

    return {**os.environ, **IDENTITY}


def edit(path: Path, text: str) -> None:
    """What an agent's file tool does in the worktree."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text((path.read_text() if path.exists() else "") + text)


def review(agent: Agent, phase: str) -> None:
    qa = agent.plan("qr", "add", "--phase", phase, "--check", "reviewed").stdout.strip()
    agent.plan("qr", "set", qa, "--phase", phase, "--status", "PASS")


def walk(project: Path) -> tuple[Agent, int]:
    """Both workflows; returns the agent and how many transcript entries planning took."""
    agent = Agent(project, env={"CI": "1", **IDENTITY})
    out = agent.step("planner --step 1 --task 'Add a farewell'")
    out = agent.step(out.route())  # 2
    agent.plan("context", "set", "--goal", "Users can say goodbye")
    out = agent.step(out.route())  # 3
    agent.apply(DESIGN)
    out = agent.step(out.route())  # 4
    review(agent, "plan-design")
    out = agent.step(agent.step(out.route("pass")).route())  # 5, 6
    tree = Path(agent.plan("worktree").stdout.strip())
    edit(tree / "src" / "app.py", FAREWELL)
    agent.plan("change", "capture", "--intent", "CI-001")
    edit(tree / "src" / "app.py", WAVE)
    edit(tree / "tests" / "test_app.py", TEST)
    agent.shell(f"cd '{tree}' && python3 tests/test_app.py")
    agent.plan("change", "capture")
    out = agent.step(out.route())  # 7
    review(agent, "plan-code")
    out = agent.step(agent.step(out.route("pass")).route())  # 8, 9
    edit(tree / "README.md", README_LINE)
    agent.plan("change", "capture")
    out = agent.step(out.route())  # 10
    review(agent, "plan-docs")
    out = agent.step(out.route("pass"))  # 11: approved as auto
    planning = len(agent.transcript)

    out = agent.step(out.route())  # executor 1
    out = agent.step(out.route())  # 2
    out = agent.step(out.route())  # 3
    for milestone in ("M-001", "M-002"):
        agent.plan("exec", "apply", milestone)
        ran = []
        if milestone == "M-001":
            agent.shell("python3 tests/test_app.py")
            ran = ["--ran", "tests/test_app.py"]
        agent.plan("exec", "done", milestone, "--evidence", "checked", *ran)
        agent.plan("exec", "commit", milestone)
        out = agent.step(out.route())  # 3 again, then 4
    review(agent, "impl-code")
    out = agent.step(agent.step(out.route("pass")).route())  # 5, 6
    out = agent.step(out.route())  # 7
    review(agent, "impl-docs")
    out = agent.step(agent.step(out.route("pass")).route())  # 8, 9
    assert out.done, out.text
    return agent, planning


def cost(entries: list[str]) -> tuple[int, int]:
    """(commands, characters of output read)."""
    return len(entries), sum(len(e.split("\n", 1)[1]) if "\n" in e else 0 for e in entries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--verbose", action="store_true", help="print the commands run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        agent, planning = walk(make_project(Path(tmp) / "project"))
    for name, entries, limits in (
        ("planning", agent.transcript[:planning], (45, 45_000)),
        ("execution", agent.transcript[planning:], (20, 20_000)),
    ):
        commands, characters = cost(entries)
        print(
            f"{name}: {commands} commands (target ≤ {limits[0]}), "
            f"{characters:,} characters read (target ≤ {limits[1]:,})"
        )
        if args.verbose:
            for entry in entries:
                print("   " + entry.split("\n", 1)[0])


if __name__ == "__main__":
    main()
