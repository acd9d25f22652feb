"""What git no longer has, asked of git itself (PRODUCT.md §17): the one check every
planning and review command makes before it reads a session's commit."""

from __future__ import annotations

from pathlib import Path

import pytest

from state.errors import PreconditionFailed
from state.repo import worktree
from state.repo.git import missing_commits
from state.rules.session_store import Store
from tests.conftest import git


def rewrite_and_prune(project: Path) -> None:
    git(project, "commit", "-q", "--amend", "-m", "init, reworded")
    git(project, "reflog", "expire", "--expire=now", "--all")
    git(project, "gc", "-q", "--prune=now")


def test_missing_commits_names_exactly_those_git_dropped(project: Path) -> None:
    old = git(project, "rev-parse", "HEAD").strip()
    (project / "README.md").write_text("# Demo, kept\n")
    git(project, "commit", "-qam", "second")
    kept = git(project, "rev-parse", "HEAD").strip()
    assert missing_commits(str(project), [old, kept]) == []
    git(project, "rebase", "-q", "--root", "--exec", "git commit -q --amend -m again")
    git(project, "reflog", "expire", "--expire=now", "--all")
    git(project, "gc", "-q", "--prune=now")
    assert missing_commits(str(project), [old, kept, old]) == [old, kept]
    now = git(project, "rev-parse", "HEAD").strip()
    assert missing_commits(str(project), [now]) == []
    blob = git(project, "rev-parse", "HEAD:README.md").strip()
    assert missing_commits(str(project), [blob]) == [blob]  # there, but not a commit


def test_ensure_never_makes_a_worktree_of_a_gone_base(project: Path, session_dir: Path) -> None:
    store = Store(str(session_dir))
    session = store.read("session")
    base = session["base_commit"]
    assert base
    rewrite_and_prune(project)
    with pytest.raises(PreconditionFailed) as refused:
        worktree.ensure(store, session, 0, set())
    assert base[:12] in refused.value.message and "plan rebase" in refused.value.message
    assert not (session_dir / "worktree").exists()
    assert not (session_dir / "worktree.git").exists()
