"""Nothing executes while planning: any session of the project whose status is not known to
be settled (approved or later, or closed) refuses `plan exec` (state/rules/planning.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from state.errors import Refused
from state.rules.planning import refuse_while_planning, unsettled

# Nothing is being planned: the plan is approved (result_review included) or the session closed.
SETTLED = {"approved", "executing", "result_review", "completed", "cancelled", "failed"}

STATUSES = st.one_of(
    st.sampled_from(sorted(SETTLED | {"discovery", "design", "detailing", "review"})),
    st.text(max_size=12),
    st.none(),
    st.integers(),
    st.lists(st.text(max_size=3), max_size=2),
)


@settings(max_examples=60, deadline=None)
@given(status=STATUSES)
def test_only_a_settled_status_lets_exec_through(
    tmp_path_factory: pytest.TempPathFactory, status: object
) -> None:
    project = tmp_path_factory.mktemp("p")
    home = project / ".planner"
    (home / "older").mkdir(parents=True)
    (home / "older" / "session.json").write_text(json.dumps({"status": "executing"}))
    (home / "other").mkdir()
    (home / "other" / "session.json").write_text(json.dumps({"status": status}))
    if isinstance(status, str) and status in SETTLED:
        assert unsettled(str(home)) == []
        refuse_while_planning(str(home / "older"), cwd=str(project))
    else:
        assert [name for name, _ in unsettled(str(home))] == ["other"]
        with pytest.raises(Refused, match="session other "):
            refuse_while_planning(str(home / "older"), cwd=str(project))


@pytest.mark.parametrize(
    "content", [b"{not json", b"[]", b"\xff\xfe", b'{"status": {"x": 1}}', b'"approved"']
)
def test_a_damaged_session_counts_as_planning(tmp_path: Path, content: bytes) -> None:
    home = tmp_path / ".planner"
    (home / "s").mkdir(parents=True)
    (home / "s" / "session.json").write_bytes(content)
    assert [name for name, _ in unsettled(str(home))] == ["s"]


def test_the_project_the_command_runs_in_counts_too(tmp_path: Path) -> None:
    """A session copied elsewhere names another .planner/; the cwd's project still counts."""
    here = tmp_path / "here"
    (here / ".git").mkdir(parents=True)
    (here / ".planner" / "new").mkdir(parents=True)
    (here / ".planner" / "new" / "session.json").write_text('{"status": "design"}')
    elsewhere = tmp_path / "elsewhere" / ".planner" / "old"
    elsewhere.mkdir(parents=True)
    (elsewhere / "session.json").write_text('{"status": "executing"}')
    with pytest.raises(Refused, match=r"session new is planning \(status design\)"):
        refuse_while_planning(str(elsewhere), cwd=str(here))
    refuse_while_planning(str(elsewhere), cwd=str(tmp_path / "elsewhere"))
