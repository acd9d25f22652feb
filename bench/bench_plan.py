"""`plan` speed: status and a mutation (both through click) as ratios to `python -c pass`
measured in the same run; validate on a huge plan.

Run: .venv/bin/python -m bench.bench_plan
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import (
    BIN,
    baseline,
    compile_package,
    environment_note,
    interleaved,
    ratio_line,
    rounds,
)


def make_project(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def normal_plan(milestones: int, intents: int) -> list[dict[str, Any]]:
    """A batch for a plan of the given size: decisions, milestones, intents with refs."""
    ops: list[dict[str, Any]] = [
        {"op": "overview set", "args": {"title": "t", "problem": "p", "approach": "a"}},
        {"op": "decision add", "args": {"decision": "d", "reasoning": "r"}},
    ]
    for m in range(milestones):
        ops.append(
            {
                "op": "milestone add",
                "args": {
                    "name": f"milestone {m}",
                    "file": [f"src/m{m}.py"],
                    "acceptance": ["it works"],
                },
            }
        )
        anchor = f"${len(ops)}"
        for i in range(intents):
            ops.append(
                {
                    "op": "intent add",
                    "args": {
                        "milestone": anchor,
                        "file": f"src/m{m}.py",
                        "function": f"f{i}",
                        "behavior": "does it",
                        "decision": ["$2"],
                    },
                }
            )
    return ops


def start_session(root: Path) -> Path:
    from shared import config
    from state.ops import session

    settings = config.load(str(root))
    return Path(session.create(str(root), "Benchmark", settings, non_interactive=True).dir)


def apply(state_dir: Path, ops: list[dict[str, Any]]) -> None:
    subprocess.run(
        [str(BIN / "plan"), "apply", "-", "--state-dir", str(state_dir)],
        input=json.dumps(ops),
        text=True,
        check=True,
        capture_output=True,
    )


def main() -> None:
    compile_package()
    print(environment_note())
    with tempfile.TemporaryDirectory() as tmp:
        root = make_project(Path(tmp) / "p")
        state_dir = start_session(root)
        apply(state_dir, normal_plan(milestones=8, intents=4))
        plan = str(BIN / "plan")
        times = interleaved(
            {
                "base": baseline(),
                "status": [plan, "status"],
                "decision add": [plan, "decision", "add", "--decision", "d", "--reasoning", "r"],
            },
            rounds=rounds(30),
            cwd=root,
        )
        base = times["base"]
        print("normal plan: 8 milestones, 32 intents")
        print(ratio_line("plan status", times["status"], base, "<= 8x"))
        print(ratio_line("plan decision add", times["decision add"], base, "<= 8x"))

        big_dir = start_session(root)
        started = time.perf_counter()
        apply(big_dir, normal_plan(milestones=1000, intents=10))
        built = time.perf_counter() - started
        command = [plan, "validate", "--phase", "design", "--state-dir", str(big_dir)]
        walls = []
        for _ in range(5):
            started = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True)
            walls.append(time.perf_counter() - started)
        if done.returncode:
            sys.exit(f"validate failed: {done.stdout[-500:]}{done.stderr[-500:]}")
        size = (big_dir / "plan.json").stat().st_size / 1e6
        print(
            f"plan validate --phase design, 1,000 milestones and 10,000 intents "
            f"({size:.1f} MB plan.json, built by one plan apply in {built:.1f} s): "
            f"{min(walls):.2f} s wall, best of 5 (target < 1 s)"
        )


if __name__ == "__main__":
    main()
