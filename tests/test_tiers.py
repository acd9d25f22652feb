"""The test tiers hold (docs/design.md, "Tests in tiers"): the quick loop leaves out the real
clients, the browser and the network; tests import bench/'s support modules (the scripted
agent, the sample, the guard's grammar), never a benchmark; and a command run in this process
answers as the console script does."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, run, run_in_process
from tests.inprocess import simple_command

# What bench/ holds that the tests use too (bench/ imports nothing from tests/: test_layers.py).
BENCH_SUPPORT = {"bench.agent", "bench.sample", "bench.guard_grammar"}


def test_tests_import_bench_support_never_a_benchmark() -> None:
    found = []
    for path in (REPO / "tests").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                module = node.module or ""
                names = [f"{module}.{a.name}" if module == "bench" else module for a in node.names]
            found += [
                f"{path.relative_to(REPO)}: {n}"
                for n in names
                if n.split(".")[0] == "bench" and ".".join(n.split(".")[:2]) not in BENCH_SUPPORT
            ]
    assert found == []


def collected(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_clients_browser_and_network_are_slow() -> None:
    where = ["tests/e2e", "tests/cli/test_review_browser.py", "tests/test_packaging.py"]
    marked = collected("-m", "client or browser or network", *where)
    assert marked.returncode == 0, marked.stdout + marked.stderr
    assert "tests/e2e/test_claude.py" in marked.stdout and "test_bootstrap.py" in marked.stdout
    quick = collected("-m", "(client or browser or network) and not slow", *where)
    assert quick.returncode == 5, quick.stdout  # 5: no tests collected


@pytest.mark.parametrize(
    "args",
    [
        ("status",),
        ("validate",),  # findings: exit 3, one line per check
        ("decision", "add"),  # a usage error: exit 2, one line
        ("no-such-command",),
        ("--help",),
    ],
)
def test_in_process_answers_as_the_console_script(
    project: Path, session_dir: Path, args: tuple[str, ...]
) -> None:
    here = run_in_process("plan", *args, cwd=project)
    there = run("plan", *args, cwd=project)
    assert here.returncode == there.returncode
    assert (here.stdout, here.stderr) == (there.stdout, there.stderr)


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("planner --step 3 --state-dir '/tmp/a b'", ["planner", "--step", "3", "--state-dir", "/tmp/a b"]),  # noqa: E501
        ("plan milestone add --name 'it'\"'\"'s'", ["plan", "milestone", "add", "--name", "it's"]),
        ("cd /tmp && plan status", None),
        ("plan status > out", None),
        ("plan show $HOME", None),
        ("git status", None),
    ],
)  # fmt: skip
def test_only_plain_calls_of_the_scripts_run_in_process(
    command: str, words: list[str] | None
) -> None:
    assert simple_command(command) == words
