"""Every speed figure in one run: the step scripts, `plan`, the guard.

Run: .venv/bin/python -m bench [--rounds N]   (the fault benchmark runs apart: it takes
minutes; python -m bench.bench_faults)
"""

from __future__ import annotations

from bench import bench_guard, bench_plan, bench_steps


def main() -> None:
    bench_steps.main()
    bench_plan.main()
    bench_guard.main()


if __name__ == "__main__":
    main()
