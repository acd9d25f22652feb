"""The test tiers hold (docs/design.md, "Tests in tiers"): the quick loop leaves out the real
clients, the browser and the network; tests import bench/'s support modules (the scripted
agent, the sample, the guard's grammar), never a benchmark; a command run in this process
answers as the console script does; and `slow` means what it says: PLANNER_CHECK_TIERS=1
fails a quick test that spends more than ~2 s of CPU (tests/tiers.py; CPU, not wall-clock,
so that a loaded machine does not decide)."""

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
        text = path.read_text()
        if "bench" not in text:  # no import of bench/ (parsing every test file is costly)
            continue
        for node in ast.walk(ast.parse(text, str(path))):
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
        ("plan question add --text 'Why? (a) & $b; `c`'", ["plan", "question", "add", "--text", "Why? (a) & $b; `c`"]),  # noqa: E501
        ('plan decision add --decision "A (or b)?"', ["plan", "decision", "add", "--decision", "A (or b)?"]),  # noqa: E501
        ('plan decision add --decision "$HOME"', None),
        ("plan decision add --decision 'a' ; ls", None),
        ("plan decision add --decision 'a", None),
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


BURN = """
import time, pytest

def burn():
    end = time.process_time() + 0.2
    while time.process_time() < end:
        pass

def test_quick():
    burn()

@pytest.mark.slow
def test_marked():
    burn()

def test_cheap():
    pass
"""

PLUGIN = ("-p", "tests.tiers", "-W", "ignore::pytest.PytestAssertRewriteWarning")


def test_a_quick_test_over_its_cpu_budget_fails_when_tiers_are_checked(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_burn=BURN)
    pytester.makeini("[pytest]\nmarkers = slow: over the budget\n")
    monkeypatch.setenv("PLANNER_TIER_BUDGET", "0.1")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the made-up run needs none
    monkeypatch.delenv("PLANNER_CHECK_TIERS", raising=False)
    pytester.runpytest_inprocess(*PLUGIN).assert_outcomes(passed=3)
    monkeypatch.setenv("PLANNER_CHECK_TIERS", "1")
    checked = pytester.runpytest_inprocess(*PLUGIN)
    checked.assert_outcomes(passed=3, errors=1)  # test_quick: passed, then its error
    checked.stdout.fnmatch_lines(
        ["*test_quick spent * s of CPU*over the 0.1 s budget*", "*2 quick tests spent * s of CPU*"]
    )
