"""Stored paths are verified: one check (state/validation/project_paths.py) refuses .git, .planner,
absolute paths, '..' and anything symlinks in the project lead out of it or into .git."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from state.errors import PreconditionFailed, UsageError
from state.project import session_project
from state.validation.project_paths import check_project_path, diff_paths, why_unsafe

NAME = st.text(alphabet="abcXYZ019_-.", min_size=1, max_size=8).filter(
    lambda s: s not in (".", "..") and s.rstrip(". ").casefold() not in (".git", ".planner", "")
)
SAFE = st.lists(NAME, min_size=1, max_size=4).map("/".join)


def spellings(word: str) -> st.SearchStrategy[str]:
    """`word` in any case, maybe with trailing dots or spaces or an HFS+-ignorable code point."""
    cased = st.tuples(*(st.sampled_from([c.lower(), c.upper()]) for c in word)).map("".join)
    tail = st.sampled_from(["", ".", " ", ". ", "\u200c", "\ufeff"])
    return st.tuples(cased, tail).map("".join)


FORBIDDEN = st.one_of(spellings(".git"), spellings(".planner"), st.just("GIT~1"))


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("project"))


@settings(max_examples=60, deadline=None)
@given(rel=SAFE)
def test_ordinary_relative_paths_pass(root: str, rel: str) -> None:
    assert why_unsafe(root, rel) == ""
    check_project_path(root, rel)


@settings(max_examples=80, deadline=None)
@given(before=st.lists(NAME, max_size=2), bad=FORBIDDEN, after=st.lists(NAME, max_size=2))
def test_a_git_or_planner_component_anywhere_in_any_spelling_is_refused(
    root: str, before: list[str], bad: str, after: list[str]
) -> None:
    rel = "/".join([*before, bad, *after])
    assert "inside .git/ or .planner/" in why_unsafe(root, rel)
    assert why_unsafe(None, rel)  # also where the project is unknown: the spelling alone


@settings(max_examples=40, deadline=None)
@given(rel=SAFE, sep=st.sampled_from(["/", "\\"]))
def test_absolute_and_dotdot_paths_are_refused(root: str, rel: str, sep: str) -> None:
    assert "absolute" in why_unsafe(root, sep + rel)
    assert "absolute" in why_unsafe(root, "C:" + sep + rel)
    assert "'..'" in why_unsafe(root, f"{rel}{sep}..{sep}x")
    assert "'..'" in why_unsafe(root, f"..{sep}{rel}")


def test_symlinks_are_resolved_inside_the_project(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / "src").mkdir()
    (project / "src" / "gitdir").symlink_to("../.git")
    (project / "src" / "out").symlink_to(tmp_path)
    (project / "src" / "self").symlink_to(".")
    assert "once its symlinks are resolved" in why_unsafe(str(project), "src/gitdir/config")
    assert "outside the project" in why_unsafe(str(project), "src/out/elsewhere.txt")
    assert why_unsafe(str(project), "src/self/app.py") == ""
    assert why_unsafe(str(project), "src/gitdir") != ""
    with pytest.raises(UsageError, match="--file: 'src/gitdir/hooks/x'"):
        check_project_path(str(project), "src/gitdir/hooks/x", "--file", UsageError)
    with pytest.raises(PreconditionFailed, match=r"CC-001: '\.git/config'"):
        check_project_path(str(project), ".git/config", "CC-001")


def test_every_header_of_a_diff_is_read_renames_and_copies_included() -> None:
    diff = (
        "diff --git a/src/app.py b/.git/hooks/post-commit\n"
        "similarity index 100%\n"
        "copy from src/app.py\n"
        "copy to .git/hooks/post-commit\n"
    )
    assert ".git/hooks/post-commit" in diff_paths(diff)
    renamed = diff.replace("copy ", "rename ")
    assert ".git/hooks/post-commit" in diff_paths(renamed)
    plain = "--- a/x.py\n+++ b/.planner/ACTIVE2\n@@ -1 +1 @@\n-a\n+b\n"
    assert ".planner/ACTIVE2" in diff_paths(plain)


def test_a_session_belongs_to_the_project_whose_planner_dir_holds_it(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".git").mkdir(parents=True)
    session = project / ".planner" / "s1"
    session.mkdir(parents=True)
    assert session_project(str(session)) == str(project)
    assert session_project(str(session) + "/") == str(project)
    for outside in (tmp_path / "loose", project / "other" / "s1"):
        outside.mkdir(parents=True)
        with pytest.raises(PreconditionFailed, match=r"not inside a project's \.planner/"):
            session_project(str(outside))
    os.rename(project / ".git", project / "no-git")
    with pytest.raises(PreconditionFailed, match=r"not inside a project's \.planner/"):
        session_project(str(session))
