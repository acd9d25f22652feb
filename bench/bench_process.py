"""What each process an agent starts costs, through the real launchers as the clients run
them, as CPU-time ratios to `python -c pass` of interleaved pairs (targets: a step's re-render
and first arrival <= 8x, `plan status` and `plan decision add` <= 6x, the guard <= 1.8x,
`plan mcp` answering `initialize` + `tools/list` <= 15x, a mutation of a 3 MB plan <= 10x).
`plan mcp` is also measured as in a new environment, before the SDK's answers are kept.

Each round runs `python -c pass`, then the subject, for every subject in turn: a busy machine
hits both of a pair alike. A figure is the median CPU time (user + system of the child and its
children, getrusage(RUSAGE_CHILDREN)) of the subject over the median of its baselines; wall
time beside it. bin/ runs with the plugin environment ready (hooks/bootstrap.py ensure,
PLANNER_DATA_DIR named, PLANNER_PYTHON unset), the guard as hooks/hooks.json runs it.

Run: .venv/bin/python -m bench.bench_process [--rounds N]
"""

from __future__ import annotations

import json
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.bench_guard import COMMAND, hook_input
from bench.bench_plan import apply, normal_plan, start_session
from bench.bench_steps import Sample, Session, happy_path, plugin_environment, run_timed, timed
from bench.common import REPO, baseline, compile_package, environment_note, rounds
from bench.sample import MCP_OPENING

MCP_MESSAGES = [json.dumps(m).encode() + b"\n" for m in MCP_OPENING]


def as_a_client(
    argv: list[str], **kwargs: Any
) -> tuple[Sample, subprocess.CompletedProcess[bytes]]:
    """`plan mcp` driven as a client drives it, timed: a request's answer is read before the
    next message goes, the connection closed after the last answer. (Input closed at once ends
    the SDK's server before it answers tools/list, so nothing is kept: the kept-answers figure
    then measured the SDK half the time.)"""

    def talk() -> subprocess.CompletedProcess[bytes]:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, **kwargs)  # fmt: skip
        assert proc.stdin is not None and proc.stdout is not None
        answers = []
        for message in MCP_MESSAGES:
            proc.stdin.write(message)
            proc.stdin.flush()
            if b'"id"' in message:
                answers.append(proc.stdout.readline())
        proc.stdin.close()
        proc.stdin = None  # closed: communicate() reads what is left
        out, err = proc.communicate()
        if not all(b'"result"' in a for a in answers):
            sys.exit(f"plan mcp: no answer to every request: {answers} {err.decode()[-400:]}")
        return subprocess.CompletedProcess(argv, proc.returncode, b"".join(answers) + out, err)

    return timed(talk)


TARGETS: dict[str, float | None] = {
    "step re-render": 8.0,
    "first arrival": 8.0,
    "plan status": 6.0,
    "plan decision add": 6.0,
    "guard": 1.8,
    "plan mcp initialize + tools/list": 15.0,
    "plan mcp, the same, its answers not yet kept": None,
    "mutation of a 3 MB plan": 10.0,
}


def project(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    for args in (
        ["init", "-q"],
        ["add", "."],
        ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True)
    return root


def main() -> None:
    compile_package()
    print(environment_note())
    count = rounds(15)
    with tempfile.TemporaryDirectory() as tmp:
        root = project(Path(tmp) / "project")
        s: Session = happy_path(root, Path(tmp) / "snapshots")
        env = plugin_environment(s.agent.env)
        state = s.state
        assert state is not None
        plan = str(REPO / "bin" / "plan")
        big = start_session(project(Path(tmp) / "big"))  # the 3 MB plan, in a project of its own
        apply(big, normal_plan(milestones=1000, intents=10))
        raw = (big / "plan.json").read_bytes()
        indented = len(json.dumps(json.loads(raw), indent=2, ensure_ascii=False).encode()) / 1e6
        size = f"{indented:.1f} MB indented, {len(raw) / 1e6:.1f} MB as written"
        design = next(i for i in range(1, len(s.steps)) if " --step 3 " in s.steps[i][0] + " ")
        steps = range(1, len(s.steps))
        guard = [sys.executable, "-S", "-I", str(REPO / "hooks" / "guard.py")]
        allowed = hook_input(root, "Bash", {"command": COMMAND, "description": "Summarise"})

        pairs: dict[str, list[tuple[Sample, Sample]]] = {name: [] for name in TARGETS}
        # plan mcp answers initialize and tools/list with the SDK's answers kept in the
        # environment (cli/mcp_start.py); without them it loads the SDK
        answers = Path(env["PLANNER_DATA_DIR"]) / "venv" / "planner-mcp.json"

        def pair(name: str, argv: list[str], client: bool = False, **kwargs: object) -> None:
            base = run_timed(baseline())[0]
            took, done = (as_a_client if client else run_timed)(argv, env=env, **kwargs)
            if done.returncode not in (0, 1):  # a gate that fails exits 1
                sys.exit(f"{name}: exit {done.returncode}: {done.stderr.decode()[-800:]}")
            pairs[name].append((base, took))

        def launcher(command: str) -> list[str]:
            argv = shlex.split(command)
            return [str(REPO / "bin" / argv[0]), *argv[1:]]

        def restore(snapshot: Path) -> None:
            shutil.rmtree(state)
            shutil.copytree(snapshot, state)

        final = Path(tmp) / "final"
        shutil.copytree(state, final)
        for _ in range(count):
            for i in steps:
                command, snapshot, _ = s.steps[i]
                assert snapshot is not None
                restore(snapshot)
                pair("first arrival", launcher(command), cwd=root)
                pair("step re-render", launcher(command), cwd=root)
                if i == design:
                    pair("plan status", [plan, "status"], cwd=root)
                    decision = [plan, "decision", "add", "--decision", "d", "--reasoning", "r"]
                    pair("plan decision add", decision, cwd=root)
            pair("guard", guard, cwd=root, input=allowed)
            answers.unlink(missing_ok=True)  # as in a new environment: the SDK answers
            for name in (
                "plan mcp, the same, its answers not yet kept",
                "plan mcp initialize + tools/list",
            ):
                pair(name, [plan, "mcp"], client=True, cwd=root)
            mutation = [plan, "decision", "add", "--decision", "d", "--reasoning", "r"]
            pair("mutation of a 3 MB plan", [*mutation, "--state-dir", str(big)], cwd=root)
        restore(final)
    print(f"{count} rounds of interleaved pairs; CPU time (wall time beside it):")
    for name, target in TARGETS.items():
        values = pairs[name]
        base_cpu = statistics.median(b[1] for b, _ in values)
        cpu = statistics.median(t[1] for _, t in values)
        base_wall = statistics.median(b[0] for b, _ in values)
        wall = statistics.median(t[0] for _, t in values)
        label = f"{name} ({size})" if name.startswith("mutation") else name
        goal = f"target <= {target:g}x" if target else "once per environment, no target"
        print(
            f"  {label}: CPU {cpu:.1f} ms vs {base_cpu:.1f} ms = {cpu / base_cpu:.2f}x"
            f" ({goal}); wall {wall:.1f} ms vs {base_wall:.1f} ms = {wall / base_wall:.2f}x"
        )


if __name__ == "__main__":
    main()
