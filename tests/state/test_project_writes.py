"""Issue 18: the commands that write the project are one transaction with the session's files,
and a retry converges. Each test is a reproduction from the issue, on a real session and real
git repository (tests/crashpoints.py builds them): the killed runs are real `plan` processes,
the recoveries and retries after them run in this process (tests/inprocess.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import crashpoints as cp

TITLE = "def title_case"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> cp.Fixture:
    root = tmp_path_factory.mktemp("writes") / "project"
    root.mkdir()
    fx = cp.Fixture(root, cp.executing(root))
    fx.save()
    return fx


@pytest.fixture
def fx(template: cp.Fixture) -> cp.Fixture:
    template.restore()
    return template


def plan(fx: cp.Fixture, *args: str, code: int = 0, env: dict[str, str] | None = None) -> str:
    """`plan ARGS` in this process (cp.here), or with `env` (a crash log) as a process."""
    done = cp.run(fx.root, ["plan", *args], env) if env else cp.here(fx.root, ["plan", *args])
    assert done.returncode == code, (args, done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    return done.stdout + done.stderr


def execution(fx: cp.Fixture) -> dict:
    return json.loads((fx.state / "execution.json").read_text())


def run_of(fx: cp.Fixture, milestone: str) -> dict:
    return next(m for m in execution(fx)["milestones"] if m["id"] == milestone)


def temps_in_project(fx: cp.Fixture) -> list[str]:
    return [r for r in cp.project_files(fx.root) if r.endswith(".tmp") or ".planner-" in r]


# ---------------------------------------------------------------- exec apply


@pytest.mark.slow
@pytest.mark.parametrize("phase", ["after-temps", "after-journal", "mid-rename"])
def test_a_killed_apply_then_a_retry_applies_once(fx: cp.Fixture, phase: str) -> None:
    done = cp.run(fx.root, ["plan", "exec", "apply", "M-002"], {"PLANNER_FAULT": phase})
    assert done.returncode == -9
    util = fx.root / "src" / "util.py"
    landed = phase != "after-temps"  # the journal is the commit point
    plan(fx, "status")  # the next command finishes or undoes it
    assert util.read_text() == (cp.EDITS["src/util.py"] if landed else cp.UTIL)
    assert temps_in_project(fx) == [] and not list(fx.state.rglob("*.tmp"))
    assert bool(run_of(fx, "M-002")["applied_at"]) is landed
    plan(fx, "exec", "apply", "M-002")
    assert util.read_text().count(TITLE) == 1
    assert util.read_text() == cp.EDITS["src/util.py"]


def test_a_second_apply_after_the_record_was_lost_is_recognised(fx: cp.Fixture) -> None:
    """The file holds the diff, execution.json does not say so: already applied, not again."""
    plan(fx, "exec", "apply", "M-002")
    doc = execution(fx)
    doc["milestones"][1]["applied_at"] = None
    (fx.state / "execution.json").write_text(json.dumps(doc, indent=2))
    out = plan(fx, "exec", "apply", "M-002")
    assert "already applied" in out
    assert (fx.root / "src" / "util.py").read_text().count(TITLE) == 1


def test_a_diff_applied_by_hand_with_git_apply_is_recognised(fx: cp.Fixture) -> None:
    diff = json.loads((fx.state / "plan.json").read_text())["milestones"][1]["code_changes"][0]
    patch = fx.root.parent / "by-hand.diff"
    patch.write_text(diff["diff"])
    subprocess.run(["git", "apply", str(patch)], cwd=fx.root, check=True)
    out = plan(fx, "exec", "apply", "M-002")
    assert "already applied" in out
    assert (fx.root / "src" / "util.py").read_text() == cp.EDITS["src/util.py"]
    assert run_of(fx, "M-002")["dirty_at_apply"] == []  # the plan's own diff: not the person's


def test_modes_are_kept_and_no_mode_change_is_committed(fx: cp.Fixture) -> None:
    plan(fx, "exec", "apply", "M-001")
    assert stat.S_IMODE((fx.root / "tools" / "run.sh").stat().st_mode) == 0o755
    assert (fx.root / "tools" / "run.sh").read_text() == cp.EDITS["tools/run.sh"]
    plan(fx, "exec", "commit", "M-001")
    summary = cp.git(fx.root, "show", "--summary", "--format=", "HEAD")
    assert "mode change" not in summary


def test_a_symlinked_file_is_written_through_to_its_target(fx: cp.Fixture) -> None:
    app = fx.root / "src" / "app.py"
    target = fx.root / "src" / "impl.py"
    shutil.move(app, target)
    app.symlink_to("impl.py")
    plan(fx, "exec", "apply", "M-001")
    assert app.is_symlink() and os.readlink(app) == "impl.py"
    assert target.read_text() == cp.EDITS["src/app.py"]


def test_a_file_replaced_by_a_directory_exits_3_naming_it(fx: cp.Fixture) -> None:
    util = fx.root / "src" / "util.py"
    util.unlink()
    util.mkdir()
    out = plan(fx, "exec", "apply", "M-002", code=3)
    assert "src/util.py" in out and "directory" in out
    assert run_of(fx, "M-002")["applied_at"] is None


@contextlib.contextmanager
def mounted(where: Path, size: str = "1m") -> Iterator[Path]:
    """A real tmpfs over `where` (its contents copied in): another file system, to fill or
    make read-only. Needs root; skips otherwise."""
    copy = where.parent / f".{where.name}.copy"
    shutil.copytree(where, copy, symlinks=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    )
    if done.returncode:
        shutil.rmtree(copy)
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        shutil.copytree(copy, where, symlinks=True, dirs_exist_ok=True)
        shutil.rmtree(copy)
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


@pytest.mark.parametrize("fault", ["read-only", "full"])
def test_tests_dir_read_only_or_full_writes_nothing_and_says_so(fx: cp.Fixture, fault: str) -> None:
    before = cp.project_files(fx.root)
    with mounted(fx.root / "tests") as tests:
        if fault == "read-only":
            subprocess.run(["mount", "-o", "remount,ro", str(tests)], check=True)
        else:
            fill(tests)
        out = plan(fx, "exec", "apply", "M-001", code=3)
        assert "tests/test_app.py" in out and "nothing was written" in out
        now = cp.project_files(fx.root)
        now.pop("tests/filler", None)
        assert now == before  # true: src/app.py and tools/run.sh are as they were
        assert run_of(fx, "M-001")["applied_at"] is None
        assert not [p for p in os.listdir(tests) if p.endswith(".tmp")]


@pytest.mark.slow
def test_a_file_on_another_file_system_is_staged_beside_it(fx: cp.Fixture) -> None:
    with mounted(fx.root / "tests", size="4m"):
        done = cp.run(fx.root, ["plan", "exec", "apply", "M-001"], {"PLANNER_FAULT": "after-temps"})
        assert done.returncode == -9
        assert [p for p in os.listdir(fx.root / "tests") if p.endswith(".tmp")]  # beside it
        plan(fx, "status")  # rolled back: the temp file beside it is found and removed
        assert temps_in_project(fx) == []
        plan(fx, "exec", "apply", "M-001")
        assert (fx.root / "tests" / "test_app.py").read_text() == cp.EDITS["tests/test_app.py"]
        assert temps_in_project(fx) == []


def fill(where: Path) -> None:
    with contextlib.suppress(OSError), open(where / "filler", "wb") as f:
        while True:
            f.write(b"x" * 65536)


def test_a_full_session_dir_on_its_own_mount_writes_nothing_to_the_project(
    fx: cp.Fixture,
) -> None:
    """The project's files are staged beside them (another file system), the session's
    temp file fails: every staged file is removed, the project is as it was."""
    before = cp.project_files(fx.root)
    with mounted(fx.state, size="8m") as state:
        fill(state)
        out = plan(fx, "exec", "apply", "M-002", code=3)
        assert "nothing was written" in out
        assert cp.project_files(fx.root) == before
        (state / "filler").unlink()
        plan(fx, "exec", "apply", "M-002")
        assert (fx.root / "src" / "util.py").read_text().count(TITLE) == 1
        assert temps_in_project(fx) == []


def test_an_audit_log_that_cannot_be_appended_to_writes_nothing_to_the_project(
    fx: cp.Fixture,
) -> None:
    (fx.state / "audit.jsonl").rename(fx.state / "audit.saved")
    (fx.state / "audit.jsonl").mkdir()  # the journal's check fails before its commit point
    out = plan(fx, "exec", "apply", "M-002", code=3)
    assert "nothing was written" in out
    assert (fx.root / "src" / "util.py").read_text() == cp.UTIL
    (fx.state / "audit.jsonl").rmdir()
    (fx.state / "audit.saved").rename(fx.state / "audit.jsonl")
    plan(fx, "exec", "apply", "M-002")
    assert (fx.root / "src" / "util.py").read_text().count(TITLE) == 1


# ---------------------------------------------------------------- exec commit


@pytest.mark.slow
def test_a_commit_killed_before_its_record_is_found_by_its_trailer(fx: cp.Fixture) -> None:
    plan(fx, "exec", "apply", "M-001")
    fx = cp.Fixture(fx.root, fx.state, "applied")
    fx.save()
    log = fx.root.parent / "commit.points"
    log.unlink(missing_ok=True)
    plan(fx, "exec", "commit", "M-001", env={"PLANNER_CRASH_LOG": str(log)})
    points = log.read_text().splitlines()
    after = next(n for n, p in enumerate(points, 1) if p.split()[1:3] == ["git", "commit"]) + 1
    fx.restore()
    killed = cp.run(fx.root, ["plan", "exec", "commit", "M-001"], {"PLANNER_CRASH_AT": str(after)})
    assert killed.returncode == -9
    head = cp.git(fx.root, "rev-parse", "HEAD").strip()
    assert "Planner-Milestone: M-001" in cp.git(fx.root, "log", "-1", "--format=%B")
    assert run_of(fx, "M-001")["commit"] is None
    out = plan(fx, "exec", "commit", "M-001")  # the retry records it, and makes no other
    assert "found by its trailer" in out
    assert run_of(fx, "M-001")["commit"] == head
    assert cp.git(fx.root, "rev-parse", "HEAD").strip() == head
    out = plan(fx, "exec", "commit", "M-001")  # a plain rerun: nothing to do, exit 0
    assert "already committed" in out
    assert cp.git(fx.root, "rev-list", "--count", "HEAD").strip() == "2"


def test_a_detached_head_is_refused_unless_allowed(fx: cp.Fixture) -> None:
    plan(fx, "exec", "apply", "M-001")
    cp.git(fx.root, "checkout", "-q", "--detach")
    out = plan(fx, "exec", "commit", "M-001", code=3)
    assert "detached" in out and "--allow-detached" in out
    assert run_of(fx, "M-001")["commit"] is None
    plan(fx, "exec", "commit", "M-001", "--allow-detached")
    assert run_of(fx, "M-001")["commit"] == cp.git(fx.root, "rev-parse", "HEAD").strip()


def test_the_persons_uncommitted_edit_is_refused_unless_included(fx: cp.Fixture) -> None:
    app = fx.root / "src" / "app.py"
    app.write_text("# mine, not the plan's\n" + app.read_text())
    plan(fx, "exec", "apply", "M-001")
    assert run_of(fx, "M-001")["dirty_at_apply"] == ["src/app.py"]
    out = plan(fx, "exec", "commit", "M-001", code=3)
    assert "src/app.py" in out and "--include-uncommitted" in out
    assert cp.git(fx.root, "rev-list", "--count", "HEAD").strip() == "1"
    plan(fx, "exec", "commit", "M-001", "--include-uncommitted")
    assert "# mine" in cp.git(fx.root, "show", "HEAD:src/app.py")


# ---------------------------------------------------------------- worktree and capture


def codes(fx: cp.Fixture) -> list[dict]:
    plan_doc = json.loads((fx.state / "plan.json").read_text())
    return [c for m in plan_doc["milestones"] for c in m["code_changes"]]


@pytest.mark.slow
def test_an_unfinished_checkout_is_never_handed_out_or_captured(planning: cp.Fixture) -> None:
    """git killed midway: registered, still `locked` (initializing), most files missing."""
    tree = Path(plan(planning, "worktree").splitlines()[0])
    admin = Path(cp.git(tree, "rev-parse", "--git-dir").strip())
    (admin / "locked").write_text("initializing")
    for rel in ("src/app.py", "src/util.py", "tests/test_app.py"):
        (tree / rel).unlink()
    out = plan(planning, "change", "capture", code=3)
    assert "did not finish" in out and codes(planning) == []  # no deletion recorded
    assert plan(planning, "worktree").splitlines()[0] == str(tree)  # made again
    assert (tree / "src" / "app.py").read_text() == cp.APP
    out = plan(planning, "change", "capture")
    assert "nothing captured" in out and codes(planning) == []


@pytest.mark.slow
def test_a_worktree_killed_before_git_registered_it_is_made_again(planning: cp.Fixture) -> None:
    (planning.state / "worktree").mkdir()
    tree = Path(plan(planning, "worktree").splitlines()[0])
    assert (tree / "README.md").exists()


def test_a_file_name_with_a_newline_is_captured_once(tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    odd = "src/odd\nname.py"
    (root / "src").mkdir()
    (root / odd).write_text("x = 1\n")
    cp.new_project(root)
    fx = cp.Fixture(root, cp.planning(root))
    batch = [{"op": "intent add", "args": {"milestone": "M-001", "file": odd, "behavior": "y"}}]
    intent = cp.ok(root, ["plan", "apply", "-"], json.dumps(batch)).strip()  # one op: "CI-n"
    tree = Path(plan(fx, "worktree").splitlines()[0])
    (tree / odd).write_text("x = 1\ny = 2\n")
    plan(fx, "change", "capture", "--intent", intent)
    (change,) = [c for c in codes(fx) if c["intent_ref"] == intent]
    assert "new file" not in change["diff"] and "+y = 2" in change["diff"]
    out = plan(fx, "change", "capture")  # every intent: nothing new, no new-file diff
    assert "nothing captured" in out and codes(fx) == [change]
