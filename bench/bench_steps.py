"""Step scripts and `plan` as Claude Code runs them, as ratios to `python -c pass` (targets: a
step <= 8x, a `plan` command <= 6x), and the characters printed by the full happy path of
both workflows with every role instruction.

Everything is timed through the plugin's bin/ launchers with its environment ready (made
once by hooks/bootstrap.py, named by PLANNER_DATA_DIR, PLANNER_PYTHON unset): step 1 (a new
session), each later step's first arrival (timed by restoring a snapshot of the session taken
just before it) and its re-render, and `plan status` / `plan decision add`; a re-render by the
environment's console script beside them shows what the launcher adds. Each figure is the
median wall time, and beside it the median CPU time (user + system), which a machine busy
with other work inflates far less than wall time.
Run: .venv/bin/python -m bench.bench_steps [--rounds N]
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from bench.agent import Agent
from bench.common import BIN, REPO, baseline, compile_package, environment_note, rounds
from bench.sample import DESIGN
from bench.sample import FAREWELL_DIFF as DIFF  # the sample plan the tests use too


class Session:
    """Walks the happy path, keeping what each step printed and a snapshot before it."""

    def __init__(self, project: Path, snapshots: Path):
        self.project, self.snapshots = project, snapshots
        # the scripted agent the tests use; bin/ launchers run this interpreter (it has the deps)
        self.agent = Agent(project, env={"PLANNER_PYTHON": sys.executable})
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
                self.roles.append(self.sh(line.split("sub-agent: ", 1)[1].rstrip(")")))
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
    out = s.step("planner --step 1 --non-interactive --task 'Add a farewell'")  # 1, prints 2
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
    out = s.step("executor --step 4")  # step 3's NEXT is the wave's first command
    s.review("impl-code")
    out = s.follow(out, "pass")  # the gate runs the next step too
    out = s.follow(out)
    s.review("impl-docs")
    s.follow(out, "pass")
    return s


def plugin_environment(env: dict[str, str]) -> dict[str, str]:
    """The environment Claude Code's shell gives the bin/ launchers: the plugin's own Python
    environment, made once (`bootstrap.py ensure`, kept between runs), named by
    PLANNER_DATA_DIR (the SessionStart hook exports it), no PLANNER_PYTHON, and this
    benchmark's interpreter off PATH (python3 is the system's, as for a plugin user)."""
    env = {k: v for k, v in env.items() if k != "PLANNER_PYTHON"}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != str(BIN))
    bootstrap = ["python3", "-S", "-I", str(REPO / "hooks" / "bootstrap.py"), "ensure"]
    made = subprocess.run(bootstrap, env=env, capture_output=True, text=True, check=True)
    env["PLANNER_DATA_DIR"] = str(Path(made.stdout.strip()).parent)
    return env


T = TypeVar("T")
Sample = tuple[float, float]  # wall ms, CPU ms (user + system of the process and its children)


def timed(run: Callable[[], T]) -> tuple[Sample, T]:
    """run() and what it returned; its wall time, and the CPU time of the processes it waited
    for, which a busy machine inflates far less."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = run()
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000
    return (wall, cpu), done


def run_timed(argv: list[str], **kwargs: Any) -> tuple[Sample, subprocess.CompletedProcess[bytes]]:
    """Run argv, timed."""
    return timed(lambda: subprocess.run(argv, capture_output=True, check=False, **kwargs))


def median(samples: list[Sample]) -> Sample:
    return statistics.median(w for w, _ in samples), statistics.median(c for _, c in samples)


def time_steps(s: Session, rounds: int) -> tuple[Sample, list[tuple[str, Sample, Sample, Sample]]]:
    """Medians of the baseline, and per step (label, arrival, re-render, re-render by the
    environment's console script, without the launcher), all through bin/ as Claude Code
    runs them; then step 1 itself, `plan status` and `plan decision add` (labelled rows
    with the same figure in every column)."""
    env = plugin_environment(s.agent.env)
    scripts = Path(env["PLANNER_DATA_DIR"]) / "venv" / "bin"
    base: list[Sample] = []
    arrive: dict[int, list[Sample]] = {i: [] for i in range(1, len(s.steps))}
    render: dict[int, list[Sample]] = {i: [] for i in arrive}
    direct: dict[int, list[Sample]] = {i: [] for i in arrive}
    extra: dict[str, list[Sample]] = {"step 1": [], "plan status": [], "plan decision add": []}
    final = s.snapshots / "final"
    state = s.state
    assert state is not None, "the walk has started a session"
    shutil.copytree(state, final)
    # A design-phase snapshot: `plan decision add` is accepted there.
    design = next(i for i in arrive if " --step 3 " in s.steps[i][0] + " ")
    fresh = s.project.parent / "fresh"  # step 1 starts a new session: in a project of its own
    shutil.copytree(s.project, fresh, ignore=shutil.ignore_patterns(".planner"))

    def timed(command: str, bin_dir: Path = REPO / "bin", cwd: Path = s.project) -> Sample:
        argv = shlex.split(command)
        argv[0] = str(bin_dir / argv[0])
        took, done = run_timed(argv, cwd=cwd, env=env)
        if done.returncode not in (0, 1):  # a gate that fails exits 1; anything else is wrong
            sys.exit(f"{command}: exit {done.returncode}: {done.stderr.decode()[-500:]}")
        return took

    def restore(snapshot: Path) -> None:
        shutil.rmtree(state)
        shutil.copytree(snapshot, state)

    for _ in range(rounds):
        base.append(run_timed(baseline())[0])
        extra["step 1"].append(timed(s.steps[0][0], cwd=fresh))
        shutil.rmtree(fresh / ".planner")
        for i in arrive:
            command, snapshot, _ = s.steps[i]
            assert snapshot is not None, "every step after the first has a snapshot"
            restore(snapshot)
            arrive[i].append(timed(command))
            render[i].append(timed(command))  # the session is now at this step: a re-render
            direct[i].append(timed(command, scripts))
            if i == design:
                extra["plan status"].append(timed("plan status"))
                decision = "plan decision add --decision d --reasoning r"
                extra["plan decision add"].append(timed(decision))
    restore(final)
    rows = [
        (
            s.steps[i][0].split(" --state-dir")[0],
            median(arrive[i]),
            median(render[i]),
            median(direct[i]),
        )
        for i in arrive
    ]
    for label, values in extra.items():
        m = median(values)
        rows.append((label, m, m, m))
    return median(base), rows


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
        (base, base_cpu), rows = time_steps(s, rounds=rounds(15))
    steps, (first, status, mutation) = rows[:-3], rows[-3:]
    print("through bin/ with the plugin environment ready (as in Claude Code), wall time:")
    print(f"{'':30}{'arrive':>15}   {'re-render':>15}   {'venv script':>15}")
    for label, *samples in steps:
        print(f"  {label:<28}" + "   ".join(f"{ms:6.1f} ms {ms / base:4.2f}x" for ms, _ in samples))
    for what, values, target in (
        ("step 1 (a new session) through bin/", [first[1]], "8x"),
        ("first arrival through bin/", [row[1] for row in steps], "8x"),
        ("step re-render through bin/", [row[2] for row in steps], "8x"),
        ("step re-render, venv script (no launcher)", [row[3] for row in steps], "8x"),
        ("plan status through bin/", [status[1]], "6x"),
        ("plan decision add through bin/", [mutation[1]], "6x"),
    ):
        wall, cpu = median(values)
        slowest = f", slowest {max(w for w, _ in values) / base:.2f}x" if len(values) > 1 else ""
        print(
            f"{what}: median {wall:.1f} ms vs python -c pass {base:.1f} ms"
            f" = {wall / base:.2f}x{slowest}; CPU {cpu:.1f} ms vs {base_cpu:.1f} ms"
            f" = {cpu / base_cpu:.2f}x (target <= {target})"
        )


if __name__ == "__main__":
    main()
