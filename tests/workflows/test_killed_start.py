"""Issue 35: `planner --step 1 --task` killed at each of its crash points (tests/crashpoints.py)
in a project where another session lives; then that session's command, or `plan list`, finishes
or discards what the killed start left (state/ops/session.py recover_starts): no temp file or
journal anywhere under .planner/, the new session whole or gone, one line on stderr naming its
directory when there was something to do, and nothing said by the command after."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from state.errors import PlannerError
from state.rules.session_store import Store
from tests import crashpoints as cp
from tests.conftest import BIN

pytestmark = pytest.mark.slow  # one killed process per crash point

SECOND = ["planner", "--step", "1", "--task", "Add a wave"]


def state_dir(out: str) -> Path:
    return Path(next(ln[10:] for ln in out.splitlines() if ln.startswith("STATE_DIR=")))


def left(home: Path) -> list[str]:
    """What a finished recovery must not leave in .planner/ (worktrees aside)."""
    found = [p for p in home.rglob("*") if "worktree" not in p.relative_to(home).parts]
    return [
        str(p.relative_to(home))
        for p in found
        if p.name.endswith((".tmp", ".building")) or p.name.startswith(".journal")
    ]


def broken(state: Path) -> str:
    """Why the session is not whole ("" when its documents are all there and valid, read as
    every command reads them)."""
    if state.name.startswith("."):
        return "a directory still being built"
    store = Store(str(state))
    try:
        store.read("session"), store.read("plan"), store.read("context")
    except PlannerError as e:
        return str(e)
    return ""


def said(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("planner: ")]


def test_a_killed_session_start_is_finished_or_discarded_by_the_next_command(
    tmp_path: Path,
) -> None:
    root = cp.new_project(tmp_path / "project")
    first = state_dir(cp.ok(root, ["planner", "--step", "1", "--task", "Add a farewell"]))
    home = root / ".planner"
    fx = cp.Fixture(root, first)
    fx.save()
    log = tmp_path / "start.points"
    done = cp.run(root, SECOND, {"PLANNER_CRASH_LOG": str(log)})
    assert done.returncode == 0, done.stderr
    points = log.read_text().splitlines()
    assert len(points) > 30  # the start's transaction, step 1's, git's calls, ACTIVE
    failures: list[str] = []
    recoveries = 0
    for n, point in enumerate(points, 1):
        fx.restore()
        killed = cp.run(root, SECOND, {"PLANNER_CRASH_AT": str(n)})
        where = f"killed at {point!r}"
        if killed.returncode != -9:
            failures.append(f"{where}: not killed (exit {killed.returncode})")
            continue
        news = [p for p in home.iterdir() if p.is_dir() and p.name != first.name]
        unfinished = left(home)
        # another session's command, or the project's list: either recovers every session
        command = ["plan", "list"] if n % 2 else ["plan", "status", "--state-dir", str(first)]
        after = cp.here(root, command)
        if after.returncode != 0:
            failures.append(f"{where}: {command} exits {after.returncode}: {after.stderr}")
        if left(home):
            failures.append(f"{where}: {command} left {left(home)}")
        lines = said(after.stderr)
        dirs = [p for p in news if any(line.startswith(f"planner: {p}: ") for line in lines)]
        expected = [p for p in news if any(u.split("/")[0] == p.name for u in unfinished)]
        if len(lines) != len(expected) or dirs != expected:
            failures.append(f"{where}: said {lines} for {unfinished}")
        recoveries += bool(lines)
        for p in (p for p in home.iterdir() if p.is_dir() and p.name != first.name):
            if broken(p):
                failures.append(f"{where}: {p.name} neither whole nor gone: {broken(p)}")
        again = cp.here(root, ["plan", "list"])
        if again.returncode != 0 or said(again.stderr):
            failures.append(f"{where}: the command after said {said(again.stderr)}")
    assert failures == []
    assert recoveries >= len(points) // 2  # most points leave something to finish or discard


def test_a_start_under_way_is_left_alone(tmp_path: Path) -> None:
    """A start holds .planner/ shared (state/ops/session.py `starting`): a command meanwhile
    leaves its directory be, even one that looks killed; the next command after it recovers."""
    from state.ops.session import starting

    root = cp.new_project(tmp_path / "project")
    home = root / ".planner"
    building = home / ".2026-01-01-live-000000.building"
    building.mkdir(parents=True)
    (building / "session.json.tx-000000000000.tmp").write_text("{")
    with starting(str(home)):
        during = cp.run(root, ["plan", "list"])
        assert (during.returncode, said(during.stderr)) == (0, []), during.stderr
        assert building.exists()
    after = cp.run(root, ["plan", "list"])
    assert said(after.stderr) == [
        f"planner: {building}: a session start killed before the session was made: removed"
    ]
    assert not building.exists()


def test_starts_and_lists_at_once_lose_nothing(tmp_path: Path) -> None:
    """Four starts and four `plan list` at the same moment: every start makes its session,
    whole, and no list says it recovered anything (nothing was killed)."""
    root = cp.new_project(tmp_path / "project")
    env = {k: v for k, v in os.environ.items() if k not in cp.DROP}
    argvs = [["planner", "--step", "1", "--task", f"Task {n}"] for n in range(4)]
    argvs += [["plan", "list"]] * 4
    procs = [
        subprocess.Popen(
            [str(BIN / a[0]), *a[1:]],
            cwd=root,
            env={**env, **cp.GIT_ID},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for a in argvs
    ]
    results = [(p.wait(timeout=300), p.stderr.read() if p.stderr else "") for p in procs]
    assert [code for code, _ in results] == [0] * 8, results
    assert [said(err) for _, err in results] == [[]] * 8
    home = root / ".planner"
    made = [p for p in home.iterdir() if p.is_dir()]
    assert len(made) == 4 and [broken(p) for p in made] == [""] * 4
    assert left(home) == []
