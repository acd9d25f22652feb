"""plan.json edited on disk while the plan is in review (PRODUCT.md §17): found before any
approval, on the page (409 with the message) and in the CLI (exit 4 naming plan.json);
sending it back records the edit as its own revision with an audit line; `verify` names the
file that changed, and a signature covers each review round's `by`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from state.rules.approval import plan_hash
from state.rules.session_store import Store
from tests.agent import Output
from tests.cli.review_helpers import back_to_review, to_review
from tests.cli.test_ci import approved
from tests.cli.test_ci_signatures import ssh_signer
from tests.cli.test_review_page import CSRF, PORT, TOKEN, post
from tests.cli.test_review_page import in_review as in_review  # a fixture: made once here too
from tests.conftest import Plan


@pytest.fixture
def reviewed(in_review: Path, tmp_path: Path) -> Store:
    copy = tmp_path / "session"
    shutil.copytree(in_review, copy)
    return Store(str(copy))


@pytest.fixture
def page(reviewed: Store) -> TestClient:
    from cli.review_page.app import create_app

    return TestClient(
        create_app(reviewed.dir, TOKEN, CSRF, PORT), base_url=f"http://127.0.0.1:{PORT}"
    )


def edit_on_disk(state: Path) -> str:
    """The person's editor changes plan.json (every `plan` command refuses a plan in review)."""
    path = state / "plan.json"
    doc = json.loads(path.read_text())
    doc["overview"]["title"] = "Edited in an editor"
    path.write_text(json.dumps(doc, indent=2))
    return plan_hash(doc)


def test_the_page_refuses_to_approve_an_edit_made_on_disk(
    page: TestClient, reviewed: Store
) -> None:
    before = (Path(reviewed.dir) / "session.json").read_bytes()
    edited = edit_on_disk(Path(reviewed.dir))
    shown = page.get(f"/?token={TOKEN}").headers["x-plan-sha256"]  # the page reloads
    assert shown == edited
    refused = post(page, "/approve", {"sha256": shown, "by": "ann"})
    assert refused.status_code == 409 and not refused.json().get("stale")
    error = refused.json()["error"]
    assert "plan.json" in error and "changed outside plan commands" in error
    assert "Request changes on this page" in error  # the fix in the page's words
    assert (Path(reviewed.dir) / "session.json").read_bytes() == before


@pytest.mark.slow
def test_an_edit_on_disk_in_review_is_refused_then_recorded_and_reviewed_again(
    project: Path,
) -> None:
    agent, out = to_review(project)
    state = Path(out.state_dir)
    session_before = (state / "session.json").read_bytes()
    edited = edit_on_disk(state)
    refused = agent.plan("review", "approve", "--by", "ann", code=4)
    assert f"{state}/plan.json: changed outside plan commands" in refused.stderr
    assert (state / "session.json").read_bytes() == session_before  # nothing written

    # The fix it names: send it back; the edit becomes its own revision, with its audit line.
    sent = agent.plan("review", "reject", "--feedback", "look at the title")
    assert "recorded as its own revision" in sent.stderr
    history = Store(str(state))
    rev = history.last_revision()
    assert rev and plan_hash(history.revision(rev)) == edited
    last = json.loads((state / "audit.jsonl").read_text().splitlines()[-1])
    assert last["rev"] == rev and last["changed_outside_plan_commands"]["now"] == edited
    session = json.loads((state / "session.json").read_text())
    rejected = session["reviews"][-1]
    assert rejected["verdict"] == "rejected" and rejected["sha256"] != edited  # what it showed

    design = agent.step(Output(sent.stderr).route())  # planner step 3, the rework
    back_to_review(agent, design)
    agent.plan("review", "approve", "--by", "ann")
    session = json.loads((state / "session.json").read_text())
    for r in session["reviews"]:
        if r["revision"] and r["verdict"] == "approved":
            assert plan_hash(history.revision(r["revision"])) == r["sha256"]
    assert session["approval"]["sha256"] == edited
    agent.plan("verify")


def test_verify_names_session_json_when_only_approval_by_changed(
    project: Path, tmp_path: Path
) -> None:
    directory = approved(project, "s", "--by", "ann")
    path = directory / "session.json"
    doc = json.loads(path.read_text())
    doc["reviews"] = [
        {
            "round": 1, "verdict": "approved", "at": doc["approval"]["at"], "by": "ann",
            "feedback": None, "comments": [], "sha256": doc["approval"]["sha256"],
            "revision": None,
        }
    ]  # fmt: skip
    path.write_text(json.dumps(doc, indent=2))
    Plan(project)("verify", ".planner/s")
    doc["approval"]["by"] = "mallory"
    path.write_text(json.dumps(doc, indent=2))
    done = Plan(project)("verify", ".planner/s", code=3)
    assert "session.json:approval.by" in done.stdout and "'mallory'" in done.stdout
    assert "restore session.json from git" in done.stdout
    assert "restore plan.md from git" not in done.stdout  # plan.md was not touched


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen")
def test_a_signature_covers_each_review_rounds_by(project: Path, tmp_path: Path) -> None:
    ssh_signer(project, tmp_path)
    directory = approved(project, "s", "--by", "ann@example.com", "--sign")
    plan = Plan(project)
    plan("verify", ".planner/s", "--require-signature")
    path = directory / "session.json"
    doc = json.loads(path.read_text())
    assert doc["approval"]["signature"]["version"] == 3
    doc["reviews"][-1]["by"] = "mallory"
    doc["approval"]["by"] = "mallory"
    path.write_text(json.dumps(doc, indent=2))
    (directory / "plan.md").unlink()
    done = plan("verify", ".planner/s", "--require-signature", code=3)
    assert "(signature-invalid)" in done.stdout


def test_an_edit_made_before_step_11_is_found_by_the_revision_the_round_names(
    page: TestClient, reviewed: Store
) -> None:
    """Edited on disk while planning, then put in review with no `plan` command between:
    the round records the edited hash but names a revision that holds another."""
    edited = edit_on_disk(Path(reviewed.dir))
    path = Path(reviewed.dir) / "session.json"
    doc = json.loads(path.read_text())
    assert doc["reviews"][-1]["revision"]
    doc["reviews"][-1]["sha256"] = edited  # what step 11 records from plan.json as found
    path.write_text(json.dumps(doc, indent=2))
    refused = post(page, "/approve", {"sha256": edited, "by": "ann"})
    assert refused.status_code == 409 and "changed outside plan commands" in refused.json()["error"]
