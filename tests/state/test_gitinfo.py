"""What git knows: HEAD read from the files, changed files with and without new commits."""

from __future__ import annotations

from pathlib import Path

from state.repo.gitinfo import changed_files, head_commit
from tests.conftest import git


def test_head_is_read_from_loose_refs_packed_refs_and_worktrees(
    project: Path, tmp_path: Path
) -> None:
    head = git(project, "rev-parse", "HEAD").strip()
    assert head_commit(str(project)) == head
    git(project, "pack-refs", "--all")
    assert head_commit(str(project)) == head
    git(project, "worktree", "add", "-q", str(tmp_path / "wt"))
    assert head_commit(str(tmp_path / "wt")) == head
    git(project, "checkout", "-q", "--detach")
    assert head_commit(str(project)) == head
    assert head_commit(str(tmp_path)) is None  # not a repository


def test_head_is_none_before_the_first_commit(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    assert head_commit(str(tmp_path)) is None


def test_changed_files_see_edits_new_files_and_commits_since_base(project: Path) -> None:
    base = git(project, "rev-parse", "HEAD").strip()
    (project / "src" / "app.py").write_text("changed\n")
    (project / "src" / "new.py").write_text("new\n")
    (project / ".planner").mkdir()
    (project / ".planner" / "x.json").write_text("{}")
    assert changed_files(str(project), base) == ["src/app.py", "src/new.py"]
    git(project, "add", "src/app.py")
    git(project, "commit", "-qm", "milestone 1")  # HEAD moves past the base
    (project / "README.md").write_text("edited\n")
    assert changed_files(str(project), base) == ["README.md", "src/app.py", "src/new.py"]
    (project / "src" / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    assert changed_files(str(project), base) == ["README.md", "src/new.py"]  # back as it was
