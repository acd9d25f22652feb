"""The person's git moves between two executor commands (PRODUCT.md §17, issue 30 cases 1,
4-7): the executor decides from what the repository shows now, a refusal leaves the index
and the files as it found them, and following its fix reaches the milestone's commit.

Each test runs the real commands on a real git repository and does the person's act with
real git in between, exactly as the case describes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from state.repo import contention
from tests.cli.test_exec_refusals import executing
from tests.conftest import Plan, git

DONE = ("exec", "done", "M-001", "--commit")
NOTE = "Call farewell(name) to say goodbye."


def seen(project: Path) -> dict[str, str | bytes]:
    """What a refusal must leave as it found it: the index, HEAD and the working tree."""
    files: dict[str, str | bytes] = {
        str(p.relative_to(project)): p.read_bytes()
        for p in sorted(project.rglob("*"))
        if p.is_file() and not {".git", ".planner"} & set(p.relative_to(project).parts)
    }
    files["<index>"] = git(project, "ls-files", "-s", "--stage")
    files["<staged>"] = git(project, "diff", "--cached", "--name-status")
    files["<head>"] = git(project, "rev-parse", "HEAD")
    return files


def runs(state: Path) -> dict[str, dict[str, object]]:
    doc = json.loads((state / "execution.json").read_text())
    return {m["id"]: m for m in doc["milestones"]}


def audit(state: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (state / "audit.jsonl").read_text().splitlines()]


def committed_files(project: Path, sha: str = "HEAD") -> list[str]:
    return git(project, "show", "--name-only", "--format=", sha).split()


# ---------------------------------------------------------------- case 1: the base is gone


def test_a_base_commit_amended_and_pruned_is_exit_3_naming_it_and_plan_rebase(
    project: Path,
) -> None:
    state = executing(project)
    base = git(project, "rev-parse", "HEAD").strip()
    git(project, "commit", "--amend", "-qm", "init, reworded")
    git(project, "reflog", "expire", "--expire=now", "--all")
    git(project, "gc", "-q", "--prune=now")
    plan = Plan(project)
    before = seen(project), (state / "execution.json").read_bytes()
    for args in (("exec", "apply", "M-001"), ("exec", "commit", "M-001"), DONE):
        done = plan(*args, code=3)
        assert base[:12] in done.stderr and "no longer in the repository" in done.stderr
        assert "plan rebase" in done.stderr
    assert (seen(project), (state / "execution.json").read_bytes()) == before
    # the fix: plan rebase carries the plan onto HEAD, then the milestone goes through
    plan("rebase")
    plan("exec", "apply", "M-001")
    plan(*DONE)
    assert git(project, "log", "-1", "--format=%s").startswith("M-001 Docs")
    assert NOTE in git(project, "show", "HEAD:README.md")


# ---------------------------------------------------------------- case 4: a merge half done


def conflicted_merge(project: Path) -> None:
    """A branch and main both change src/app.py; merging it stops with a conflict."""
    git(project, "switch", "-qc", "other")
    (project / "src" / "app.py").write_text("x = 1\n")
    git(project, "commit", "-qm", "other", "--", "src/app.py")
    git(project, "switch", "-q", "main")
    (project / "src" / "app.py").write_text("x = 2\n")
    git(project, "commit", "-qm", "main", "--", "src/app.py")
    merge = subprocess.run(["git", "merge", "other"], cwd=project, capture_output=True)
    assert merge.returncode == 1 and (project / ".git" / "MERGE_HEAD").exists()


def test_a_merge_in_progress_is_refused_before_anything_is_staged(project: Path) -> None:
    state = executing(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    conflicted_merge(project)
    before, record = seen(project), (state / "execution.json").read_bytes()
    for args in (DONE, ("exec", "commit", "M-001"), ("exec", "apply", "M-001")):
        done = plan(*args, code=3)
        assert "a merge is in progress" in done.stderr and "MERGE_HEAD" in done.stderr
        assert "git merge --abort" in done.stderr and "partial commit" not in done.stderr
        assert seen(project) == before  # README.md not staged: the merge cannot take it
        assert (state / "execution.json").read_bytes() == record
    assert "README.md" not in before["<staged>"]
    # the fix as printed: finish the merge, then rerun: M-001 gets its own commit
    (project / "src" / "app.py").write_text("x = 3\n")
    git(project, "add", "src/app.py")
    git(project, "commit", "-qm", "merged", "--no-edit")
    assert "README.md" not in committed_files(project)
    plan(*DONE)
    assert committed_files(project) == ["README.md"]
    assert runs(state)["M-001"]["commit"] == git(project, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize(
    ("marker", "words"),
    [
        ("rebase-merge", "git rebase --abort"),
        ("CHERRY_PICK_HEAD", "git cherry-pick --abort"),
        ("REVERT_HEAD", "git revert --abort"),
    ],
)
def test_a_rebase_cherry_pick_or_revert_in_progress_is_refused(
    project: Path, marker: str, words: str
) -> None:
    """Marked as git marks them (a real rebase, cherry-pick and revert stop the same way)."""
    executing(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    path = project / ".git" / marker
    path.mkdir() if marker == "rebase-merge" else path.write_text("0" * 40 + "\n")
    before = seen(project)
    done = plan(*DONE, code=3)
    assert words in done.stderr and "nothing was changed" in done.stderr
    assert seen(project) == before


def test_a_refused_commit_puts_the_index_back_and_keeps_the_persons_staging(
    project: Path,
) -> None:
    """git refuses the commit after staging (no committer identity): the index is as found,
    including what the person had staged in the milestone's file themselves."""
    state = executing(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    (project / "src" / "app.py").write_text("# mine\n")
    git(project, "add", "src/app.py")
    before = seen(project)
    home = project.parent / "home"
    home.mkdir()
    anonymous = {"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "EMAIL": ""}
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        anonymous[key] = ""
    git(project, "config", "user.useConfigOnly", "true")
    done = Plan(project, process=True)("exec", "commit", "M-001", env=anonymous, code=3)
    assert "git commit" in done.stderr
    assert seen(project) == before
    assert runs(state)["M-001"]["commit"] is None
    git(project, "config", "--unset", "user.useConfigOnly")
    plan("exec", "commit", "M-001")
    assert committed_files(project) == ["README.md"]


# ---------------------------------------------------------------- case 5: the person undid it


@pytest.mark.parametrize("undo", [("stash",), ("checkout", "--", ".")])
def test_an_apply_undone_by_the_person_is_applied_again(project: Path, undo: tuple[str]) -> None:
    state = executing(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    git(project, *undo)
    assert NOTE not in (project / "README.md").read_text()
    again = plan("exec", "apply", "M-001")
    assert "applied again" in again.stderr and "nothing to do" not in again.stderr
    assert NOTE in (project / "README.md").read_text()
    assert any(a.get("applied_again") == "M-001" for a in audit(state))
    assert "nothing to do" in plan("exec", "apply", "M-001").stderr  # now it is applied
    plan(*DONE)
    assert committed_files(project) == ["README.md"]


def test_nothing_to_commit_points_at_an_apply_that_makes_progress(project: Path) -> None:
    executing(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    git(project, "checkout", "--", ".")
    before = seen(project)
    done = plan("exec", "commit", "M-001", code=3)
    assert "fix: plan exec apply M-001" in done.stderr
    assert seen(project) == before
    plan("exec", "apply", "M-001")  # the fix changes the files
    assert seen(project) != before
    plan("exec", "commit", "M-001")


# ---------------------------------------------------------------- case 6: committed by hand


def test_a_milestone_the_person_committed_is_recognised_and_recorded(project: Path) -> None:
    state = executing(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    git(project, "commit", "-qam", "my own words")
    mine = git(project, "rev-parse", "HEAD").strip()
    assert "nothing to do" in plan("exec", "apply", "M-001").stderr
    done = plan(*DONE)
    assert f"committed by hand as {mine[:12]}" in done.stderr
    assert git(project, "rev-parse", "HEAD").strip() == mine  # no empty commit on top
    run = runs(state)["M-001"]
    assert run["commit"] == mine and run["status"] == "done"
    assert any(a.get("recognised_commit") == mine for a in audit(state))
    assert "already committed" in plan("exec", "apply", "M-001").stderr
    assert "nothing else to do" in plan("exec", "commit", "M-001").stderr


# ---------------------------------------------------------------- case 7: another git's lock

HOLD = "import sys, time; f = open(sys.argv[1], 'w'); print('ready', flush=True); time.sleep(60)"


def test_a_lock_another_process_holds_is_waited_for_then_named_with_its_holder(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = executing(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    lock = project / ".git" / "index.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(lock)], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"ready\n"
        before, record = seen(project), (state / "execution.json").read_bytes()
        monkeypatch.setattr(contention, "LOCK_WAIT_S", 0.5)
        done = plan(*DONE, code=3)
    finally:
        holder.kill()
        holder.wait()
    assert str(lock) in done.stderr and f"pid {holder.pid}" in done.stderr
    assert "remove the file manually" not in done.stderr and "rm --" not in done.stderr
    assert (state / "execution.json").read_bytes() == record
    lock.unlink()
    assert seen(project) == before
    plan(*DONE)  # the fix: once the other git is done, rerun
    assert committed_files(project) == ["README.md"]


def test_a_lock_released_within_the_bound_is_waited_out(project: Path) -> None:
    executing(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    lock = project / ".git" / "index.lock"
    lock.write_text("")
    release = threading.Timer(0.3, lock.unlink)
    release.start()
    try:
        plan(*DONE)
    finally:
        release.join()
    assert committed_files(project) == ["README.md"]


def test_a_stale_lock_says_so_and_how_to_check(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    executing(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    lock = project / ".git" / "index.lock"
    lock.write_text("")
    before = seen(project)
    monkeypatch.setattr(contention, "LOCK_WAIT_S", 0.2)
    done = plan(*DONE, code=3)
    assert "no running process has it open" in done.stderr
    assert "ps -C git" in done.stderr and f"rm -- '{lock}'" in done.stderr
    assert seen(project) == before
    os.unlink(lock)
    plan(*DONE)
