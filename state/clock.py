"""Timestamps in UTC, ISO 8601 with Z; PLANNER_NOW (epoch seconds) fixes the clock for tests."""

from __future__ import annotations

import os
import time


def epoch() -> float:
    fixed = os.environ.get("PLANNER_NOW")
    return float(fixed) if fixed else time.time()


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch()))


def parse(stamp: str) -> float:
    """Epoch seconds of a timestamp written by now()."""
    import calendar  # imports locale and datetime: only when a timestamp is read back

    return float(calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S")))
