"""Timing helpers for the benchmarks: ratios to `python -c pass`, measured in one run.

Commands are interleaved round by round so machine noise hits all of them alike; the
figure is the median. The package is byte-compiled first, as `pip install` does.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PACKAGES = ("cli", "shared", "state", "skills", "hooks")


def compile_package() -> None:
    """Write .pyc files like an install does (PYTHONDONTWRITEBYTECODE would hide them)."""
    for package in PACKAGES:
        compileall.compile_dir(REPO / package, quiet=1)


def environment_note() -> str:
    finder = any(
        "__editable__" in p.name and p.suffix == ".py"
        for p in Path(sys.prefix).glob("lib/python*/site-packages/*")
    )
    note = f"python {sys.version.split()[0]} at {sys.executable}"
    if finder:
        note += (
            " (WARNING: an editable-install finder runs at every start and inflates the "
            "baseline; install with --config-settings editable_mode=compat)"
        )
    return note


def interleaved(
    commands: dict[str, list[str]],
    rounds: int = 30,
    cwd: Path | None = None,
    stdin: bytes | None = None,
) -> dict[str, float]:
    """Median wall time in ms of each command, run round-robin `rounds` times."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    env = {k: v for k, v in os.environ.items() if k != "PLANNER_DEBUG"}
    for _ in range(rounds):
        for name, argv in commands.items():
            start = time.perf_counter()
            subprocess.run(
                argv,
                cwd=cwd,
                input=stdin,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
                check=False,
            )
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) * 1000 for name, values in times.items()}


def rounds(default: int) -> int:
    """`--rounds N` from the command line (the smoke test passes 1), else default."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=default)
    return max(1, parser.parse_args().rounds)


def baseline() -> list[str]:
    return [sys.executable, "-c", "pass"]


def ratio_line(label: str, ms: float, base_ms: float, target: str) -> str:
    return (
        f"{label}: {ms:.1f} ms vs python -c pass {base_ms:.1f} ms = {ms / base_ms:.2f}x "
        f"(target {target})"
    )
