"""History at 10,000 intents: bytes a mutation adds to history/ (a delta, not a 3 MB copy) and
the time of a mutation and of `plan diff` as ratios to `python -c pass`, in one run.

Run: .venv/bin/python -m bench.bench_history [--rounds N]
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from bench.bench_plan import apply, make_project, normal_plan, start_session
from bench.common import BIN, baseline, compile_package, environment_note, interleaved, rounds
from state.storage.history import CHAIN_MAX


def history_bytes(state_dir: Path) -> int:
    return sum(p.stat().st_size for p in (state_dir / "history").iterdir())


def main() -> None:
    compile_package()
    print(environment_note())
    count = rounds(10)
    with tempfile.TemporaryDirectory() as tmp:
        root = make_project(Path(tmp) / "p")
        state_dir = start_session(root)
        apply(state_dir, normal_plan(milestones=1000, intents=10))
        plan = str(BIN / "plan")
        size = (state_dir / "plan.json").stat().st_size
        before = history_bytes(state_dir)
        times = interleaved(
            {
                "base": baseline(),
                "decision add": [plan, "decision", "add", "--decision", "d", "--reasoning", "r"],
            },
            rounds=count,
            cwd=root,
        )
        added = (history_bytes(state_dir) - before) / count
        diff = interleaved(
            {"base": baseline(), "diff": [plan, "diff"]}, rounds=min(count, 5), cwd=root
        )
        base = times["base"]
        print(f"history at 1,000 milestones and 10,000 intents ({size / 1e6:.1f} MB plan.json):")
        print(
            f"bytes added to history/ per mutation: {added:,.0f} "
            f"({added / size:.2%} of plan.json; a whole copy would be {size:,})"
        )
        print(
            f"plus one whole snapshot every {CHAIN_MAX} revisions: {size / CHAIN_MAX:,.0f} bytes "
            "a mutation on average"
        )
        print(
            f"plan decision add: {times['decision add']:.0f} ms vs python -c pass {base:.1f} ms "
            f"= {times['decision add'] / base:.1f}x"
        )
        print(
            f"plan diff (previous revision vs now, replayed from deltas): {diff['diff']:.0f} ms "
            f"vs python -c pass {diff['base']:.1f} ms = {diff['diff'] / diff['base']:.1f}x"
        )


if __name__ == "__main__":
    main()
