"""state/repo/contention.py on real git: the words git uses for a held lock, the half-done
operations of a linked worktree found in its own git dir, and the lock's holder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from state.errors import PreconditionFailed
from state.repo import contention, gitinfo
from state.repo import git as git_runner
from tests.conftest import git


def test_git_words_for_a_held_lock_are_recognised(project: Path) -> None:
    lock = project / ".git" / "index.lock"
    lock.write_text("")
    (project / "README.md").write_text("changed\n")
    done = subprocess.run(["git", "add", "README.md"], cwd=project, capture_output=True)
    assert done.returncode != 0
    assert contention.lock_of(done.stderr) == str(lock)
    assert contention.raced(done.stderr) is None
    assert contention.lock_of(b"fatal: pathspec 'x' did not match any files") is None


def test_the_runner_gives_up_after_the_bound_naming_the_holder(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = project / ".git" / "index.lock"
    hold = (
        "import sys, time; f = open(sys.argv[1], 'w'); print('ready', flush=True); time.sleep(60)"
    )
    holder = subprocess.Popen([sys.executable, "-c", hold, str(lock)], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"ready\n"
        monkeypatch.setattr(contention, "LOCK_WAIT_S", 0.2)
        (project / "README.md").write_text("changed\n")
        with pytest.raises(PreconditionFailed) as refused:
            git_runner.output(str(project), "add", "README.md")
    finally:
        holder.kill()
        holder.wait()
    assert f"pid {holder.pid}" in str(refused.value) and "rm --" not in str(refused.value)
    assert "remove the file manually" not in str(refused.value)
    lock.unlink()
    assert git(project, "diff", "--cached", "--name-only") == ""


def test_a_merge_in_a_linked_worktree_is_found_in_its_own_git_dir(project: Path) -> None:
    other = project.parent / "other"
    git(project, "worktree", "add", "-q", "-b", "side", str(other))
    (other / "README.md").write_text("side\n")
    git(other, "commit", "-qam", "side")
    (project / "README.md").write_text("main\n")
    git(project, "commit", "-qam", "main")
    merge = subprocess.run(["git", "merge", "main"], cwd=other, capture_output=True)
    assert merge.returncode == 1
    here = gitinfo.git_dir(str(other))
    assert here is not None
    found = contention.underway(here)
    assert found is not None and found[1] == "a merge" and found[0].startswith(here)
    main_dir = gitinfo.git_dir(str(project))
    assert main_dir is not None and contention.underway(main_dir) is None
