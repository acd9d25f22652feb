"""One status: SessionStart, `planner status` and `plan status` print the same next command
from the same code, and a verdict given on the review page leaves the session exactly as the
CLI's does (plan.md re-rendered, the next command recorded)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from cli.review_page.app import create_app
from state.rules.approval import plan_hash
from tests.cli.result_helpers import copy_of, init_project
from tests.cli.review_helpers import to_review
from tests.conftest import REPO
from tests.conftest import run_in_process as run  # `plan` and `planner` in this process

HOOK = REPO / "hooks" / "session_start.py"
TOKEN, CSRF, PORT = "t0ken", "csrf", 8124
ORIGIN = f"http://127.0.0.1:{PORT}"
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")


@pytest.fixture(scope="module")
def in_review(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose session waits at step 11; each test works on a copy of the project."""
    project = init_project(tmp_path_factory.mktemp("status") / "project")
    to_review(project)
    return project


def three_views(project: Path, state: Path) -> list[str]:
    """The next command as SessionStart, `planner status` and `plan status` print it."""
    start = subprocess.run(
        [sys.executable, "-S", "-I", str(HOOK)],
        input=json.dumps({"cwd": str(project)}),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=project,
    )
    planner = run("planner", "status", cwd=project)
    plan = run("plan", "status", cwd=project)
    views = []
    for out in (start.stdout, planner.stdout, plan.stdout):
        body = out.split("STATE_DIR=", 1)[1]
        views.append(
            "\n".join(line for line in body.splitlines()[1:] if not line.startswith("guard:"))
        )
    return views


def test_every_view_agrees_in_review_and_after_the_cli_approves(in_review, tmp_path):
    project, state = copy_of(in_review, tmp_path)
    first = three_views(project, state)
    assert first[0] == first[1] == first[2]
    assert "IF PASS: plan review approve" in first[0]
    done = run("plan", "review", "approve", "--by", "ann", cwd=project)
    assert done.returncode == 0, done.stderr
    after = three_views(project, state)
    assert after[0] == after[1] == after[2]
    assert f"NEXT: executor --step 1 --state-dir {state}" in after[0]
    assert "review approve" not in after[0]


def test_the_page_and_the_cli_approve_alike(in_review, tmp_path):
    by_cli, cli_state = copy_of(in_review, tmp_path / "cli")
    by_page, page_state = copy_of(in_review, tmp_path / "page")
    done = run("plan", "review", "approve", "--by", "ann", cwd=by_cli)
    assert done.returncode == 0, done.stderr
    client = TestClient(create_app(str(page_state), TOKEN, CSRF, PORT), base_url=ORIGIN)
    sha = plan_hash(json.loads((page_state / "plan.json").read_text()))
    headers = {"origin": ORIGIN, "x-csrf-token": CSRF}
    answer = client.post(
        f"/approve?token={TOKEN}", json={"sha256": sha, "by": "ann"}, headers=headers
    )
    assert answer.status_code == 200, answer.text

    def same(path: Path, state: Path) -> str:
        return TIME.sub("T", path.read_text().replace(str(state), "S"))

    for name in ("session.json", "plan.json", "plan.md"):
        assert same(cli_state / name, cli_state) == same(page_state / name, page_state), name
    assert "Not approved yet" not in (page_state / "plan.md").read_text()
    assert (
        f"NEXT: executor --step 1 --state-dir {page_state}" in three_views(by_page, page_state)[0]
    )


def test_a_copied_project_shows_its_own_state_dir(in_review, tmp_path):
    project, state = copy_of(in_review, tmp_path)
    for view in three_views(project, state):
        assert f"IF PASS: plan review approve --state-dir {state}\n" in view
        assert str(in_review) not in view


@pytest.fixture(scope="module")
def result_review(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose executed session waits for the person's review of the result."""
    from tests.cli.result_helpers import init_project, to_result_review

    project = init_project(tmp_path_factory.mktemp("status") / "project")
    to_result_review(project)
    return project


@pytest.mark.slow
def test_every_view_agrees_in_result_review_and_after_accept(result_review, tmp_path):
    project, state = copy_of(result_review, tmp_path)
    first = three_views(project, state)
    assert first[0] == first[1] == first[2]
    assert f"IF PASS: plan result accept --state-dir {state}" in first[0]
    assert "IF FAIL: plan result request-changes" in first[0]
    status = run("plan", "status", "--json", cwd=project)
    assert json.loads(status.stdout)["status"] == "result_review"
    done = run("plan", "result", "accept", "--by", "ann", cwd=project)
    assert done.returncode == 0, done.stderr
    for view in ("planner", "plan"):  # SessionStart says nothing of a finished session
        assert run(view, "status", cwd=project).stdout.rstrip().endswith("DONE"), view


def test_the_page_and_the_cli_accept_the_result_alike(result_review, tmp_path):
    by_cli, cli_state = copy_of(result_review, tmp_path / "cli")
    by_page, page_state = copy_of(result_review, tmp_path / "page")
    done = run("plan", "result", "accept", "--by", "ann", cwd=by_cli)
    assert done.returncode == 0, done.stderr
    client = TestClient(create_app(str(page_state), TOKEN, CSRF, PORT), base_url=ORIGIN)
    shown = client.get(f"/?token={TOKEN}")
    sha = shown.headers["x-result-sha256"]
    headers = {"origin": ORIGIN, "x-csrf-token": CSRF}
    answer = client.post(
        f"/accept?token={TOKEN}", json={"sha256": sha, "by": "ann"}, headers=headers
    )
    assert answer.status_code == 200, answer.text

    def same(path: Path, state: Path) -> str:
        return TIME.sub("T", path.read_text().replace(str(state), "S"))

    for name in ("session.json", "plan.json", "plan.md"):
        assert same(cli_state / name, cli_state) == same(page_state / name, page_state), name
    assert run("plan", "status", cwd=by_page).stdout.rstrip().endswith("DONE")
