"""Every benchmark runs to the end with one round and prints its ratios (the figures are
measured by hand; tests never judge wall-clock time)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each benchmark runs to the end


REPO = Path(__file__).resolve().parents[1]


def test_worktree_benchmark_prints_what_the_agent_paid():
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_worktree"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for phase in ("planning", "execution"):
        assert re.search(
            rf"{phase}: \d+ commands, [\d,]+ characters \(targets <= \d+ and <= [\d,]+\); "
            r"plus \d+ file-tool edits",
            done.stdout,
        ), done.stdout


def test_amend_benchmark_prints_what_one_round_costs():
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_amend"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for part in ("amendment planning", "amendment execution", "amendment round"):
        assert re.search(rf"{part}: \d+ commands, [\d,]+ characters[^;]*; plus \d+", done.stdout)


@pytest.mark.parametrize("bench", ["bench_plan", "bench_steps", "bench_guard", "bench_process"])
def test_benchmark_runs(bench):
    done = subprocess.run(
        [sys.executable, "-m", f"bench.{bench}", "--rounds", "1"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(r"\d+\.\d\dx", done.stdout), done.stdout


def test_fault_benchmark_runs_tiny_and_finds_nothing_lost():
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.bench_faults",
            "--rounds",
            "1",
            "--writers",
            "4",
            "--gates",
            "3",
            "--files",
            "50",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "lost 0, batches half-applied 0, sessions stuck 0, files invalid 0" in done.stdout
    assert "lost 0, duplicated 0" in done.stdout
    assert (
        "lost 0, half-applied 0, stuck 0, corrupted projects 0, deletions recorded 0" in done.stdout
    )
    assert "times applied 1" in done.stdout


@pytest.mark.network  # it makes the plugin's environment from the package index
def test_bootstrap_benchmark_prints_both_stages_in_seconds():
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_bootstrap"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert re.search(r"first launcher .*: \d+\.\d s", done.stdout), done.stdout
    assert re.search(r"second stage in the background: done \d+\.\d s", done.stdout)
