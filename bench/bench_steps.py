"""Step scripts: a first arrival and a re-render as ratios to `python -c pass` (target <= 8x),
and the characters printed by the full happy path of both workflows with every role
instruction.

Arrivals record state, so each is timed by restoring a snapshot of the session taken just
before it; re-renders are timed as they are, through the installed console scripts (whose
pip-made wrapper imports `re`, ~0.5x on its own) and through the plugin's bin/ launchers.
Run: .venv/bin/python -m bench.bench_steps [--rounds N]
"""

from __future__ import annotations

import json
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.agent import Agent
from bench.common import BIN, REPO, baseline, compile_package, environment_note, rounds
from bench.sample import DESIGN
from bench.sample import FAREWELL_DIFF as DIFF  # the sample plan the tests use too


class Session:
    """Walks the happy path, keeping what each step printed and a snapshot before it."""

    def __init__(self, project: Path, snapshots: Path):
        self.project, self.snapshots = project, snapshots
        # the scripted agent the tests use; bin/ launchers run this interpreter (it has the deps)
        self.agent = Agent(project, env={"CI": "1", "PLANNER_PYTHON": sys.executable})
        self.state: Path | None = None
        self.steps: list[tuple[str, Path | None, str]] = []  # command, snapshot, output
        self.roles: list[str] = []

    def sh(self, command: str, input: str | None = None) -> str:
        return self.agent.shell(command, input=input).stdout

    def step(self, command: str) -> str:
        snapshot = None
        if self.state:
            snapshot = self.snapshots / str(len(self.steps))
            shutil.copytree(self.state, snapshot)
        output = self.sh(command)
        self.steps.append((command, snapshot, output))
        if not self.state:
            self.state = Path(
                next(
                    line.split("=", 1)[1]
                    for line in output.splitlines()
                    if line.startswith("STATE_DIR=")
                )
            )
        for line in output.splitlines():
            if line.startswith("Role: "):
                self.roles.append(self.sh(line.split("first runs: ", 1)[1]))
        return output

    def follow(self, output: str, verdict: str | None = None) -> str:
        prefix = {"pass": "IF PASS: ", "fail": "IF FAIL: ", None: "NEXT: "}[verdict]
        line = next(ln for ln in output.splitlines() if ln.startswith(prefix))
        return self.step(line[len(prefix) :])

    def review(self, phase: str) -> None:
        qa = self.sh(f"plan qr add --phase {phase} --check 'checked'").strip()
        self.sh(f"plan qr set {qa} --phase {phase} --status PASS")


def happy_path(project: Path, snapshots: Path) -> Session:
    s = Session(project, snapshots)
    out = s.step("planner --step 1 --task 'Add a farewell'")  # 1, which prints 2
    s.sh("plan context set --goal 'say goodbye'")
    out = s.follow(out)
    s.sh("plan apply -", input=json.dumps(DESIGN))
    out = s.follow(out)
    s.review("plan-design")
    out = s.follow(out, "pass")  # the gate runs the next step too
    assert s.state is not None
    (s.state / "app.diff").write_text(DIFF)
    s.sh(f"plan change add --intent CI-001 --file src/app.py --diff {s.state}/app.diff")
    out = s.follow(out)
    s.review("plan-code")
    out = s.follow(out, "pass")  # the gate runs the next step too
    s.sh("plan doc set --milestone M-001 --docstring 'farewell: say goodbye'")
    out = s.follow(out)
    s.review("plan-docs")
    out = s.follow(s.follow(out, "pass"))  # 11, then executor 1, which prints 2 and 3
    s.sh("plan exec start M-001")
    s.sh("git apply", input=DIFF)
    s.sh("plan exec done M-001 --evidence 'farewell works'")
    out = s.follow(out)
    s.review("impl-code")
    out = s.follow(out, "pass")  # the gate runs the next step too
    out = s.follow(out)
    s.review("impl-docs")
    s.follow(out, "pass")
    return s


def time_steps(s: Session, rounds: int) -> tuple[float, list[tuple[str, float, float, float]]]:
    """Median ms of the baseline, and per step (label, arrival ms, re-render ms, re-render ms
    through bin/)."""
    base: list[float] = []
    arrive: dict[int, list[float]] = {i: [] for i in range(1, len(s.steps))}
    render: dict[int, list[float]] = {i: [] for i in arrive}
    launcher: dict[int, list[float]] = {i: [] for i in arrive}
    final = s.snapshots / "final"
    state = s.state
    assert state is not None, "the walk has started a session"
    shutil.copytree(state, final)

    def timed(command: str, bin_dir: Path = BIN) -> float:
        argv = shlex.split(command)
        argv[0] = str(bin_dir / argv[0])
        start = time.perf_counter()
        subprocess.run(
            argv,
            cwd=s.project,
            env=s.agent.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        return (time.perf_counter() - start) * 1000

    # The launchers run in the plugin's own environment: make it (once) before timing them.
    bootstrap = ["python3", "-S", "-I", str(REPO / "hooks" / "bootstrap.py"), "ensure"]
    subprocess.run(bootstrap, env=s.agent.env, capture_output=True, check=True)
    for _ in range(rounds):
        start = time.perf_counter()
        subprocess.run(baseline(), check=False)
        base.append((time.perf_counter() - start) * 1000)
        for i in arrive:
            command, snapshot, _ = s.steps[i]
            assert snapshot is not None, "every step after the first has a snapshot"
            shutil.rmtree(state)
            shutil.copytree(snapshot, state)
            arrive[i].append(timed(command))
            render[i].append(timed(command))  # the session is now at this step: a re-render
            launcher[i].append(timed(command, REPO / "bin"))
    shutil.rmtree(state)
    shutil.copytree(final, state)
    rows = [
        (
            s.steps[i][0].split(" --state-dir")[0],
            statistics.median(arrive[i]),
            statistics.median(render[i]),
            statistics.median(launcher[i]),
        )
        for i in arrive
    ]
    return statistics.median(base), rows


def main() -> None:
    compile_package()
    print(environment_note())
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        (project / "src").mkdir(parents=True)
        (project / "src" / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
        for args in (
            ["init", "-q"],
            ["add", "."],
            ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init"],
        ):
            subprocess.run(["git", *args], cwd=project, check=True)
        s = happy_path(project, Path(tmp) / "snapshots")
        step_chars = sum(len(out) for _, _, out in s.steps)
        role_chars = sum(len(text) for text in s.roles)
        print(
            f"happy path: {len(s.steps)} steps printed {step_chars:,} characters, "
            f"{len(s.roles)} role instructions {role_chars:,}; total "
            f"{step_chars + role_chars:,} (target <= 40,000)"
        )
        base, rows = time_steps(s, rounds=rounds(15))
    print(f"{'':30}{'arrive':>15}   {'re-render':>15}   {'bin/ re-render':>15}")
    for label, *times in rows:
        print(f"  {label:<28}" + "   ".join(f"{ms:6.1f} ms {ms / base:4.2f}x" for ms in times))
    for what, values in (
        ("first arrival", [row[1] for row in rows]),
        ("step re-render", [row[2] for row in rows]),
        ("step re-render through bin/", [row[3] for row in rows]),
    ):
        median = statistics.median(values)
        print(
            f"{what}: median {median:.1f} ms vs python -c pass {base:.1f} ms"
            f" = {median / base:.2f}x, slowest {max(values) / base:.2f}x (target <= 8x)"
        )


if __name__ == "__main__":
    main()
