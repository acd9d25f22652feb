"""state/repo/session_git.py: what a caller names reaches git only as one of the session's own
commits, or as a relative path after `--`; generated names never get through otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from state.errors import UsageError
from state.repo import session_git
from state.rules.session_store import Store
from state.storage import schema
from tests.conftest import git

HEX = "0123456789abcdef"


@pytest.fixture
def store(project: Path, session_dir: Path) -> Store:
    """The session executing, with M-001 committed on top of its base commit."""
    base = git(project, "rev-parse", "HEAD").strip()
    (project / "src" / "app.py").write_text("def greet(name):\n    return 'bye ' + name\n")
    git(project, "commit", "-qam", "M-001 farewell")
    head = git(project, "rev-parse", "HEAD").strip()
    store = Store(str(session_dir))
    with store.transaction("test") as tx:
        tx.edit("session")["status"] = "executing"
        run = {**schema.defaults("execution", "MilestoneRun"), "id": "M-001", "commit": head}
        tx.create(
            "execution", {**schema.defaults("execution"), "base_commit": base, "milestones": [run]}
        )
    return store


def test_the_session_s_commits_resolve_by_id_or_prefix(store: Store, project: Path) -> None:
    head = git(project, "rev-parse", "HEAD").strip()
    assert [c["kind"] for c in session_git.commits(store)] == ["base", "milestone"]
    assert session_git.resolve(store, head[:7]) == session_git.resolve(store, head.upper()) == head
    assert "bye" in session_git.show(store, head[:10], "src/app.py")
    assert session_git.show(store, head, "README.md").endswith("changes nothing in README.md")


@settings(  # the store is only read: one for every input is right
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(name=st.one_of(st.text(max_size=50), st.text(alphabet=HEX + "-~^@{}:", max_size=45)))
def test_any_other_name_is_refused_before_git_runs(store: Store, name: str) -> None:
    known = [c["commit"] for c in session_git.commits(store)]
    try:
        found = session_git.resolve(store, name)
    except UsageError as e:
        assert "not one of this session's commits" in e.message or "more than one" in e.message
        return
    assert found in known and found.startswith(name.strip().lower())


@settings(max_examples=300, deadline=None)
@given(path=st.text(max_size=40))
def test_a_path_is_relative_and_inside_the_project(path: str) -> None:
    try:
        clean = session_git.checked_path(path)
    except UsageError:
        return
    parts = clean.replace("\\", "/").split("/")
    assert clean and not clean.startswith(("/", ":")) and ".." not in parts and "\x00" not in clean
