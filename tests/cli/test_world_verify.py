"""The world moves (PRODUCT.md §17), the planning and review half: the person rewrites the
history a session relies on (amend or rebase, then prune), and every command says so in one
line naming the commit and the fix, or carries on with what it can still show; the verdict on
a result is always the person's to give. Each test carries out the person's act on a real
repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.result_helpers import copy_of
from tests.cli.test_worktree import DESIGN as WORKTREE_DESIGN
from tests.conftest import Plan, git

DESIGN = WORKTREE_DESIGN[:3]  # one milestone, src/app.py, one intent


def prune(project: Path) -> None:
    """What makes a rewritten commit really gone: no reflog keeps it, gc drops it."""
    git(project, "reflog", "expire", "--expire=now", "--all")
    git(project, "gc", "-q", "--prune=now")


def one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    return lines[0]


def test_a_base_commit_amended_and_pruned_while_planning(
    plan: Plan, project: Path, session_dir: Path
) -> None:
    plan("apply", "-", input=json.dumps(DESIGN))
    tree = Path(plan("worktree").stdout.strip())
    (tree / "src" / "app.py").write_text("def greet(name):\n    return 'bye ' + name\n")
    base = json.loads((session_dir / "session.json").read_text())["base_commit"]
    git(project, "commit", "-q", "--amend", "-m", "init, reworded")
    prune(project)

    # plan worktree never hands out a tree whose HEAD does not resolve
    refused = plan("worktree", code=3)
    assert refused.stdout == ""
    line = one_line(refused.stderr)
    assert base[:12] in line and "plan rebase" in line and "gone from git" in line
    # capture: one line naming the commit and the fix, nothing written
    before = (session_dir / "plan.json").read_bytes()
    line = one_line(plan("change", "capture", code=3).stderr)
    assert base[:12] in line and "plan rebase" in line and "git --no-optional-locks" not in line
    assert (session_dir / "plan.json").read_bytes() == before
    # plan status tells the truth
    status = plan("status").stdout
    assert f"{base[:12]} (base)" in status and "plan rebase" in status
    assert plan.json("status")["problems"]  # type: ignore[index]


def test_status_says_nothing_of_commits_that_are_there(plan: Plan) -> None:
    assert "gone from git" not in plan("status").stdout
    assert "problems" not in plan.json("status")  # type: ignore[operator]


def milestone_commit(state: Path) -> str:
    runs = json.loads((state / "execution.json").read_text())["milestones"]
    return str(runs[0]["commit"])


@pytest.mark.slow
def test_a_milestone_commit_reworded_and_pruned_in_result_review(
    reviewing: Path, tmp_path: Path
) -> None:
    project, state = copy_of(reviewing, tmp_path)
    plan = Plan(project)
    sha = milestone_commit(state)
    assert git(project, "rev-parse", "HEAD").strip() == sha
    git(project, "commit", "-q", "--amend", "-m", "M-001 farewell, reworded")
    prune(project)

    shown = plan("result", "show").stdout
    assert f"commit gone: {sha}" in shown and "M-001" in shown
    assert "planned CC-001 src/app.py" in shown and "+def farewell" in shown
    assert "plan rebase" in shown
    status = plan("status").stdout
    assert f"{sha[:12]} (M-001)" in status and "plan rebase" in status
    as_json = plan.json("result", "show")
    [commit] = as_json["milestones"][0]["commits"]  # type: ignore[index]
    assert commit["gone"] is True and commit["sha"] == sha
    accepted = plan("result", "accept", "--by", "ann", "--expect-sha256", as_json["sha256"])  # type: ignore[index]
    assert "accepted" in accepted.stderr
    session = json.loads((state / "session.json").read_text())
    assert session["status"] == "completed"
    assert session["result_reviews"][-1]["sha256"] == as_json["sha256"]  # type: ignore[index]


@pytest.mark.slow
def test_a_branch_rebased_in_result_review_can_still_be_sent_back(
    reviewing: Path, tmp_path: Path
) -> None:
    project, state = copy_of(reviewing, tmp_path)
    plan = Plan(project)
    sha = milestone_commit(state)
    base = git(project, "rev-list", "--max-parents=0", "HEAD").strip()
    # every sha changes: the root is rewritten and the milestone's commit replayed on it
    amend = "git commit -q --amend --no-edit --author='Rebased <r@example.com>'"
    git(project, "rebase", "-q", "--root", "--exec", amend)
    prune(project)
    assert git(project, "rev-list", "--max-parents=0", "HEAD").strip() != base
    status = plan("status").stdout
    assert sha[:12] in status and base[:12] in status and "plan rebase" in status
    sent = plan(
        "result", "request-changes", "--feedback", "say it warmly", "--comment", "M-001=why?"
    )
    assert "an amendment is open" in sent.stderr
    session = json.loads((state / "session.json").read_text())
    assert session["status"] == "design" and session["result_reviews"][-1]["verdict"] == (
        "changes_requested"
    )


@pytest.mark.slow
def test_the_result_page_shows_a_gone_commit_and_still_takes_the_verdict(
    reviewing: Path, tmp_path: Path
) -> None:
    from starlette.testclient import TestClient

    from cli.review_page.app import create_app
    from tests.cli.test_result_page import CSRF, ORIGIN, PORT, TOKEN, post

    project, state = copy_of(reviewing, tmp_path)
    sha = milestone_commit(state)
    git(project, "commit", "-q", "--amend", "-m", "M-001 farewell, reworded")
    prune(project)
    client = TestClient(create_app(str(state), TOKEN, CSRF, PORT), base_url=ORIGIN)
    page = client.get(f"/?token={TOKEN}")
    assert page.status_code == 200 and "commit gone from git" in page.text
    assert sha[:12] in page.text
    shown = page.headers["x-result-sha256"]
    accepted = post(client, "/accept", {"sha256": shown, "by": "ann"})
    assert accepted.status_code == 200, accepted.text
    assert json.loads((state / "session.json").read_text())["status"] == "completed"
