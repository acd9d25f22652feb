"""What an agent pays: a scripted agent walks both
workflows in a real git project using only what the steps print: 2 milestones, 4 intents on
3 files (one is README); 3 questions asked in the chat and imported with their answers at
step 2; one design choice asked, then added and picked in the design's call; in each
planning phase (design, code, docs) a FAIL item, the gate's IF FAIL route, the fix in fix
mode, the re-check and the passing gate; then the review: the agent serves the review page
and waits, the person rejects with one comment on the README diff, the agent follows the
routing to the rework, re-judges what the prompts list as open, and waits again for the
approval; then the executor (apply, tests, done --ran, commit per milestone) and the result
review (the page served again, the person accepts). Every command (steps, `plan`, the tests
the agent runs) counts, and the characters of all its stdout+stderr; the agent's file-tool
edits in the worktree are counted apart, and so are the person's clicks on the page.

    python -m bench.bench_worktree [--verbose] [--costs]   (the transcript; each command's cost)
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.agent import Agent, Output
from bench.sample import (
    FAREWELL,
    GREET,
    IDENTITY,
    README_LINE,
    TEST,
    WAVE,
    edit,
)
from bench.sample import TWO_MILESTONES as DESIGN

COMMENT = "CC-003:1: credit ann for the idea"  # the person's comment on the README diff


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


def review(agent: Agent, phase: str) -> Output:
    """A passing review: the check with its verdict and the gate's in one call, as the prompt
    asks; what the gate and the step it leads to printed."""
    item = {"phase": phase, "check": "reviewed", "status": "PASS"}
    return agent.judge([{"op": "qr add", "args": item}], "pass")


QUESTIONS = [
    {
        "category": category,
        "kind": "choice",
        "text": text,
        "why": "changes the design",
        "options": options,
        "recommended": 1,
    }
    for category, text, options in (
        ("scope", "Document farewell in README?", ["yes", "no"]),
        ("technical", "Return or print?", ["return", "print"]),
        ("clarification", "Also a wave()?", ["yes", "no"]),
    )
]
OPTION = '{{"name": "{0}", "description": "{0}", "recommended": {1}}}'


FINDING = "the change is incomplete; fix it"


def failed_round(
    agent: Agent, out: Output, phase: str, fix: Callable[[list[dict[str, Any]]], Output]
) -> Output:
    """The reviewer fails one item with the gate's verdict (one call, which prints fix mode),
    then the fix, the re-check and the passing verdict in one call, as fix mode shows: it
    prints the next phase's step."""
    item = {"phase": phase, "check": "reviewed", "status": "FAIL", "finding": FINDING}
    out = agent.judge([{"op": "qr add", "args": item}], "fail")  # the gate prints fix mode
    qa = re.findall(r"(qa-\d+) MUST FAIL", out.text)[-1]
    assert '"op": "qr set"' in out.text and "--verdict" in out.text, out.text
    return fix([{"op": "qr set", "args": {"id": qa, "phase": phase, "status": "PASS"}}])


OPEN_ITEM = re.compile(r'"op": "qr set", "args": \{"id": "(qa-\d+)", "phase": "([\w-]+)"')


NEW_ITEM = re.compile(r'"op": "qr add", "args": \{"phase": "([\w-]+)", "scope": "(M-\d+)"')


def rechecks(out: Output) -> list[dict[str, Any]]:
    """The re-checks a prompt names (what the rework after a rejection asks to judge again),
    and the items it asks for on milestones no item judged yet."""
    return [
        {"op": "qr set", "args": {"id": i, "phase": phase, "status": "PASS"}}
        for i, phase in OPEN_ITEM.findall(out.text)
    ] + [
        {"op": "qr add", "args": {"phase": phase, "scope": m, "check": "judged", "status": "PASS"}}
        for phase, m in NEW_ITEM.findall(out.text)
    ]


class Person:
    """The person at the review page: their verdict is recorded as the page records it (the
    same state operation), and is not the agent's cost."""

    def __init__(self, agent: Agent):
        self.agent = agent

    def decide(self, *args: str) -> None:
        subprocess.run(
            ["plan", *args], cwd=self.agent.project, env=self.agent.env, check=True,
            capture_output=True,
        )  # fmt: skip


def review_round(agent: Agent, person: Person, *verdict: str, on: str = "review") -> Output:
    """The agent serves the review page until the verdict (`plan review open --no-browser
    --wait` in the background, as step 11 says) and gives the person its URL; the person
    decides; what the command printed is what the agent reads: one command per round."""
    page = subprocess.Popen(
        ["plan", "review", "open", "--no-browser", "--wait"], cwd=agent.project, env=agent.env,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert page.stdout is not None
    url = page.stdout.readline()  # the URL: the page is up
    person.decide(on, *verdict)
    printed, _ = page.communicate(timeout=120)  # the server stops after the verdict
    assert page.returncode == 0, printed
    agent.transcript.append(f"$ plan review open --no-browser --wait &\n{url}{printed}")
    return Output(printed)


def walk(project: Path) -> tuple[Agent, int, list[int]]:
    """Both workflows; returns the agent, how many transcript entries planning took, and
    the file-tool edits the agent made in each (counted apart from commands)."""
    agent = Agent(project, env=IDENTITY)
    edits = [0]

    def change(path: Path, text: str) -> None:
        edits[0] += 1
        edit(path, text)

    out = agent.step("planner --step 1 --task 'Add a farewell'")  # prints step 2 too
    answered = [{**q, "answer": "1"} for q in QUESTIONS]  # asked in the chat first
    agent.apply(  # the goal and the questions with the user's answers, in one call
        [
            {"op": "context set", "args": {"goal": "Users can say goodbye"}},
            {"op": "question import", "args": {"source": answered}},
        ]
    )
    out = agent.step(out.route())  # 3
    options = [
        {"name": name, "description": name, "recommended": rec}
        for name, rec in (("inline", True), ("helper", False))
    ]
    choice = {"op": "choice add", "args": {"topic": "Where farewell lives", "option_json": options}}
    k = len(DESIGN) + 1  # the user picked before it was recorded: the pick in the same call
    pick = {
        "op": "choice pick",
        "args": {"id": f"${k}", "option": "OPT-A", "rationale": "Simplest"},
    }
    agent.apply([*DESIGN, choice, pick])  # the design, the choice and the pick in one call
    out = agent.step(out.route())  # 4
    overview = {"op": "overview set", "args": {"approach": "Add farewell() next to greet()"}}
    out = failed_round(
        agent, out, "plan-design", lambda recheck: agent.judge([overview, *recheck], "pass")
    )
    shown = re.findall(r"captured edits\): (.+)$", out.text, re.M)[-1]
    tree = Path(shown.replace("STATE_DIR", out.state_dir, 1))
    change(tree / "src" / "app.py", FAREWELL)
    change(tree / "src" / "app.py", WAVE)
    change(tree / "tests" / "test_app.py", TEST)
    agent.shell(f"cd '{tree}' && python3 tests/test_app.py")
    agent.plan("change", "capture")  # one change on src/app.py for its two intents
    out = agent.step(out.route())  # 7

    def capture_and_recheck(
        path: Path, text: str, intent: str
    ) -> Callable[[list[dict[str, Any]]], Output]:
        def fix(recheck: list[dict[str, Any]]) -> Output:
            change(path, text)
            capture = {"op": "change capture", "args": {"intent": [intent]}}
            return agent.judge([capture, *recheck], "pass")

        return fix

    fix_code = capture_and_recheck(
        tree / "tests" / "test_app.py", "assert wave() != ''\n", "CI-003"
    )
    out = failed_round(agent, out, "plan-code", fix_code)  # prints step 9
    change(tree / "README.md", README_LINE)
    agent.plan("change", "capture")
    out = agent.step(out.route())  # 10
    fix_docs = capture_and_recheck(tree / "README.md", "`wave()` waves.\n", "CI-004")
    out = failed_round(agent, out, "plan-docs", fix_docs)  # 11: the plan is in review
    person = Person(agent)
    out = review_round(agent, person, "reject", "--comment", COMMENT)  # prints the rework step
    assert out.header.startswith("PLANNER 9/"), out.text
    change(tree / "README.md", "Thanks to ann for the idea.\n")
    recheck = rechecks(out)
    assert recheck, out.text
    out = agent.judge([{"op": "change capture", "args": {}}, *recheck], "pass")  # 11 again
    out = review_round(agent, person, "approve")  # which prints executor 1, 2 and 3
    planning = len(agent.transcript)
    assert "EXECUTOR 3/" in out.text, out.text
    for milestone in ("M-001", "M-002"):
        agent.plan("exec", "apply", milestone)
        ran = []
        if milestone == "M-001":
            agent.shell("python3 tests/test_app.py")
            ran = ["--ran", "tests/test_app.py"]
        done = agent.plan("exec", "done", milestone, "--evidence", "checked", *ran, "--commit")
        out = Output(done.stdout)  # its wave is done: it prints 3 again, then 4
        assert out.header.startswith("EXECUTOR "), out.text
    out = review(agent, "impl-code")  # 5, which prints 6 and 7 (nothing to write at 6)
    out = review(agent, "impl-docs")  # 8, which prints 9: the result waits for the person
    assert out.if_pass and out.if_pass.startswith("plan result accept"), out.text
    out = review_round(agent, person, "accept", "--by", "ann", on="result")
    assert out.text.startswith("DONE"), out.text
    return agent, planning, [edits[0], 0]  # the executor edits nothing itself


def cost(entries: list[str]) -> tuple[int, int]:
    """(commands, characters of output read)."""
    return len(entries), sum(len(e.split("\n", 1)[1]) if "\n" in e else 0 for e in entries)


APPROVED = "Approved: executor step 1 follows"


def split_approval(entries: list[str], planning: int) -> tuple[list[str], list[str], int]:
    """Planning's entries, execution's, and how many characters of planning's last one (the
    page's wait for the approval) the executor's first steps printed: they are execution's
    reading, and count there (the command stays planning's)."""
    printed = entries[planning - 1].split("\n", 1)[-1]
    at = printed.find(APPROVED)
    return entries[:planning], entries[planning:], 0 if at < 0 else len(printed) - at


def per_command(entries: list[str]) -> str:
    """One line per command: the characters of its output, then the command (--costs)."""
    lines = []
    for entry in entries:
        command, _, printed = entry.partition("\n")
        lines.append(f"{len(printed):>7,}  {command[:110]}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--verbose", action="store_true", help="print the transcript")
    parser.add_argument("--costs", action="store_true", help="each command's characters")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        agent, planning, edits = walk(make_project(Path(tmp) / "project"))
    planned, executed, moved = split_approval(agent.transcript, planning)
    for name, entries, limits, edited, shift in (
        ("planning", planned, (25, 18_000), edits[0], -moved),  # round 3
        ("execution", executed, (14, 12_000), edits[1], moved),
    ):
        commands, characters = cost(entries)
        characters += shift
        print(
            f"{name}: {commands} commands, {characters:,} characters "
            f"(targets <= {limits[0]} and <= {limits[1]:,}); "
            f"plus {edited} file-tool edits, not counted as commands"
        )
        if args.costs:
            print(per_command(entries))
        if args.verbose:
            for entry in entries:
                print(entry)


if __name__ == "__main__":
    main()
