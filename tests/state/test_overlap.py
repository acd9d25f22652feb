"""state/validation/overlap.find on real git repositories: which open sessions plan the same
files or functions in this work tree and its others; closed and damaged ones skipped."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from state.validation.overlap import find, repository_path
from tests.conftest import git
from tests.overlaps import edit, planning

TS = "2024-05-01T12:00:00Z"
LATER = "2024-05-02T08:30:00Z"


def pairs(project: Path) -> list[tuple[str, str, str, str | None]]:
    return [
        (o.first.session, o.second.session, o.file, o.function) for o in find(str(project)).overlaps
    ]


def test_two_sessions_planning_one_file_overlap_with_both_sides_named(project: Path) -> None:
    planning(project, "a", files=["src/app.py", "README.md"])
    planning(project, "b", files=["./src/app.py", "docs/x.md"], created_at=LATER)
    planning(project, "c", files=["docs/y.md"])
    [o] = find(str(project)).overlaps
    assert (o.first.session, o.second.session, o.file, o.function) == ("a", "b", "src/app.py", None)
    assert o.first.milestones == ("M-001",) and o.first.where == "milestones[M-001].files[0]"
    assert o.other("a") is o.second and o.other("b") is o.first
    assert find(str(project)).of("c") == []


def test_the_same_function_is_named_and_different_functions_are_the_file_only(
    project: Path,
) -> None:
    planning(project, "a", intents=[("src/app.py", "greet"), ("src/app.py", "wave")])
    planning(project, "b", intents=[("src/app.py", "greet()")], created_at=LATER)
    [o] = find(str(project)).overlaps
    assert (o.file, o.function) == ("src/app.py", "greet")
    assert o.first.intents == ("CI-001",) and o.second.intents == ("CI-001",)
    assert o.second.where == "milestones[M-001].code_intents[CI-001].function"

    edit(project / ".planner" / "b" / "plan.json", milestones=[])
    planning(project, "c", intents=[("src/app.py", "farewell")], created_at=LATER)
    [o] = find(str(project)).overlaps
    assert (o.first.session, o.second.session, o.file, o.function) == ("a", "c", "src/app.py", None)
    assert o.first.intents == ("CI-001", "CI-002")  # both of its intents on the file


def test_test_files_and_planned_diffs_count_as_planned_changes(project: Path) -> None:
    planning(project, "a", intents=[("src/app.py", "greet")])
    planning(project, "b", created_at=LATER)
    milestone = {
        "id": "M-002",
        "number": 1,
        "name": "Tests and a diff",
        "tests": {"files": ["tests/test_app.py"]},
        # The diff changes another file than its intent's: not the intent's function there.
        "code_intents": [{"id": "CI-004", "file": "lib.py", "function": "greet", "behavior": "b"}],
        "code_changes": [
            {"id": "CC-001", "intent_ref": "CI-004", "file": "src/app.py", "diff": "--- a\n"}
        ],
    }
    edit(project / ".planner" / "b" / "plan.json", milestones=[milestone])
    planning(project, "c", files=["tests/test_app.py"], created_at=LATER)
    found = {
        (o.first.session, o.second.session, o.file, o.function): o
        for o in find(str(project)).overlaps
    }
    assert set(found) == {("a", "b", "src/app.py", None), ("b", "c", "tests/test_app.py", None)}
    diff = found[("a", "b", "src/app.py", None)].second
    assert (
        diff.intents == ("CI-004",) and diff.where == "milestones[M-002].code_changes[CC-001].file"
    )
    assert (
        found[("b", "c", "tests/test_app.py", None)].first.where
        == "milestones[M-002].tests.files[0]"
    )


def test_a_session_in_another_git_worktree_is_found(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-tree"
    git(project, "worktree", "add", "-q", "-b", "other", str(other))
    planning(project, "here", files=["src/app.py"])
    planning(other, "there", files=[str(other / "src" / "app.py")], created_at=LATER)
    expected = [("here", "there", "src/app.py", None)]
    assert pairs(project) == expected  # an absolute path in its own work tree is the same file
    assert pairs(other) == expected  # seen from either work tree
    [o] = find(str(project)).overlaps
    assert Path(o.second.worktree).resolve() == other.resolve()

    shutil.rmtree(other)  # a work tree that vanished (git still lists it) is skipped
    assert pairs(project) == []


@pytest.mark.parametrize("status", ["completed", "cancelled", "failed"])
def test_a_closed_session_overlaps_nothing(project: Path, status: str) -> None:
    planning(project, "a", files=["src/app.py"], status=status)
    planning(project, "b", files=["src/app.py"], created_at=LATER)
    assert pairs(project) == []
    edit(project / ".planner" / "a" / "session.json", status="executing")
    assert pairs(project) == [("a", "b", "src/app.py", None)]


def test_a_session_committed_into_two_worktrees_is_one_and_its_newest_copy_counts(
    project: Path, tmp_path: Path
) -> None:
    planning(project, "a", files=["src/app.py"], status="executing")
    planning(project, "b", files=["src/app.py"], created_at=LATER)
    git(project, "add", ".planner")
    git(project, "commit", "-qm", "plans")
    other = tmp_path / "other-tree"
    git(project, "worktree", "add", "-q", "-b", "other", str(other))
    assert pairs(project) == [("a", "b", "src/app.py", None)]  # never "a overlaps a"
    edit(project / ".planner" / "a" / "session.json", status="completed", updated_at=LATER)
    assert pairs(project) == pairs(other) == []  # the stale copy in other-tree does not count


def test_a_damaged_session_is_skipped_with_a_note(project: Path) -> None:
    planning(project, "a", files=["src/app.py"])
    planning(project, "b", files=["src/app.py"], created_at=LATER)
    bad = planning(project, "c-bad-plan", files=["src/app.py"])
    (bad / "plan.json").write_text('{"milestones": [')
    worse = planning(project, "d-bad-session", files=["src/app.py"])
    (worse / "session.json").write_bytes(b"\xff\xfe")
    found = find(str(project))
    assert [(o.first.session, o.second.session) for o in found.overlaps] == [("a", "b")]
    notes = {n.session: n.message for n in found.notes}
    assert set(notes) == {"c-bad-plan", "d-bad-session"}
    assert "plan.json: not valid JSON" in notes["c-bad-plan"]
    assert "session.json: not valid" in notes["d-bad-session"]


def test_outside_git_only_the_project_itself_is_read(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert find(str(tmp_path / "plain")).overlaps == []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("src/app.py", "src/app.py"),
        ("./src//app.py", "src/app.py"),
        ("src/../README.md", "README.md"),
        ("  src/app.py ", "src/app.py"),
        ("/work/tree/src/app.py", "src/app.py"),
        ("/elsewhere/app.py", "/elsewhere/app.py"),
        ("", ""),
        (".", ""),
    ],
)
def test_planned_paths_are_compared_as_the_repository_names_them(raw: str, expected: str) -> None:
    assert repository_path(raw, "/work/tree") == expected


NAMES = st.sampled_from(["a.py", "b.py", "src/c.py", "./src/c.py", "d/e.md", "f.txt"])


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(first=st.lists(NAMES, max_size=4), second=st.lists(NAMES, max_size=4))
def test_an_overlap_is_reported_iff_the_planned_files_intersect(
    project: Path, first: list[str], second: list[str]
) -> None:
    # One repository for every example: each one plans both sessions' files anew.
    for name, files in (("a", first), ("b", second)):
        if not (project / ".planner" / name).exists():
            planning(project, name, created_at=LATER if name == "b" else TS)
        milestone = {"id": "M-001", "number": 1, "name": "One", "files": files}
        edit(project / ".planner" / name / "plan.json", milestones=[milestone])
    same = {repository_path(f, str(project)) for f in first} & {
        repository_path(f, str(project)) for f in second
    }
    reported = pairs(project)
    assert {file for *_, file, _ in reported} == same
    assert all(p[:2] == ("a", "b") for p in reported)
    assert len(reported) == len(same)  # one per file, no function planned
