"""What a first session waits for: the plugin's environment made from an empty data dir.

The first launcher (`planner --help` through bin/, PLANNER_PYTHON unset, XDG_DATA_HOME an
empty temp dir, CLAUDE_PLUGIN_DATA and PLANNER_DATA_DIR unset) makes the first stage and
answers: its wall time is what the first step waits. The second stage (the review page's and
the companion's packages) goes on in the background: the time until its marker appears, and
until `plan review --help` (a command that needs it) answers. Needs the package index (the
network, or pip's configured mirrors).

Run: .venv/bin/python -m bench.bench_bootstrap
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import BIN, REPO

FULL = "planner-env.full"  # hooks/bootstrap.py FULL


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("PLANNER_PYTHON", "PLANNER_DATA_DIR", "CLAUDE_PLUGIN_DATA")
        }
        env["XDG_DATA_HOME"] = tmp
        # python3 is the system's, as for a plugin user: this benchmark's venv off PATH
        env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != str(BIN))
        started = time.monotonic()
        done = subprocess.run(
            [str(REPO / "bin" / "planner"), "--help"], env=env, capture_output=True, text=True
        )
        first = time.monotonic() - started
        if done.returncode:
            print(f"the first launcher failed: {done.stderr[-1000:]}", file=sys.stderr)
            return 1
        marker = None
        while time.monotonic() - started < 900:
            found = list(Path(tmp).glob(f"planner/*/venv/{FULL}"))
            if found:
                marker = time.monotonic() - started
                break
            time.sleep(0.2)
        page = subprocess.run(
            [str(REPO / "bin" / "plan"), "review", "--help"], env=env, capture_output=True
        )
        both = time.monotonic() - started
        print(f"first launcher (first stage made, then its answer): {first:.1f} s")
        if marker is None:
            print("second stage: not done within 900 s (see bootstrap.log)")
            return 1
        print(f"second stage in the background: done {marker:.1f} s after the first launch")
        print(f"`plan review --help` answered {both:.1f} s after it (exit {page.returncode})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
