"""The quick tier kept honest (docs/design.md, "Tests in tiers"): with PLANNER_CHECK_TIERS=1 a
test not marked slow fails when its set-up, call and tear-down spend more CPU than the budget
(PLANNER_TIER_BUDGET seconds, 2 by default), and the run ends with the CPU the quick tests
spent in all and the most expensive of them.

CPU, not wall-clock: a loaded machine stretches the wall clock of every test alike, while
the CPU a test spends (this process and every child process it waited for: git, the hooks,
the console scripts) is what it costs on an idle one. A module- or session-scoped fixture
is charged to the first test that uses it, which is what it costs the quick tier. A test
that only waits (a sleep, a timeout) spends no CPU and is not seen here.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Generator

import pytest

CHECK = "PLANNER_CHECK_TIERS"
BUDGET = "PLANNER_TIER_BUDGET"
QUICK_CPU = "quick_cpu_seconds"  # a report's user property, carried from an xdist worker
_STARTED = pytest.StashKey[tuple[float, float]]()


def cpu_seconds() -> float:
    """CPU spent so far by this process and the children it has waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    import time

    item.stash[_STARTED] = (cpu_seconds(), time.monotonic())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    import time

    outcome = yield
    report = outcome.get_result()
    if call.when != "teardown" or os.environ.get(CHECK) != "1" or _STARTED not in item.stash:
        return
    if item.get_closest_marker("slow"):
        return
    cpu, wall = item.stash[_STARTED]
    spent, budget = cpu_seconds() - cpu, float(os.environ.get(BUDGET) or 2)
    report.user_properties.append((QUICK_CPU, spent))  # to the controller (xdist)
    if spent > budget and report.passed:
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} spent {spent:.1f} s of CPU ({time.monotonic() - wall:.1f} s wall) "
            f"in the quick tier, over the {budget:g} s budget: mark it @pytest.mark.slow or "
            "make it cheaper"
        )


class Spent:
    """The CPU of each quick test of this run, as the reports (from every xdist worker) say."""

    def __init__(self) -> None:
        self.spent: list[tuple[float, str]] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.spent += [(v, report.nodeid) for k, v in report.user_properties if k == QUICK_CPU]

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.spent:
            return
        total = sum(spent for spent, _ in self.spent)
        terminalreporter.write_sep("-", f"{len(self.spent)} quick tests spent {total:.0f} s of CPU")
        for spent, nodeid in sorted(self.spent, reverse=True)[:10]:
            terminalreporter.write_line(f"{spent:5.1f} s  {nodeid}")


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get(CHECK) == "1":
        config.pluginmanager.register(Spent(), "planner-tier-spent")
