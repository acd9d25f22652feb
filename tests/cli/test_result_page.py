"""The review page's result view, with starlette's TestClient on a real executed session in
result_review: what it shows, the same refusals as the plan view (token, Host, Origin, CSRF,
limits, a stale result), and the verdicts through state/ops/result_ops.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from cli.result_text import text
from cli.review_page.app import create_app
from state.ops.result_view import result_of
from state.rules.session_store import Store
from state.validation.limits import BODY_MAX, COMMENTS_MAX, FEEDBACK_MAX, NAME_MAX
from tests.cli.result_helpers import copy_of
from tests.conftest import git
from tests.conftest import run_in_process as run  # `plan` and `planner` in this process

TOKEN, CSRF, PORT = "t0ken-for-results", "csrf-for-results", 8125
ORIGIN = f"http://127.0.0.1:{PORT}"
ON_LINE_4 = {"anchor": "M-001", "file": "src/app.py", "line": 4, "text": "t"}


@pytest.fixture
def store(reviewing: Path, tmp_path: Path) -> Store:  # reviewing: tests/cli/conftest.py
    return Store(str(copy_of(reviewing, tmp_path)[1]))


@pytest.fixture
def client(store: Store) -> TestClient:
    return TestClient(create_app(store.dir, TOKEN, CSRF, PORT), base_url=ORIGIN)


def post(client: TestClient, path: str, body: object, **headers: str):
    sent = {"origin": ORIGIN, "x-csrf-token": CSRF, **headers}
    return client.post(f"{path}?token={TOKEN}", json=body, headers=sent)


def sha_of(store: Store) -> str:
    return str(result_of(store)["sha256"])


def test_the_result_view_shows_the_planned_diff_beside_the_commit(
    client: TestClient, store: Store
) -> None:
    page = client.get(f"/?token={TOKEN}")
    assert page.status_code == 200
    assert page.headers["x-result-sha256"] == sha_of(store)
    html = page.text
    head = git(Path(store.dir).parents[1], "rev-parse", "HEAD").strip()
    result = html.split('<section id="result"', 1)[1].split("</section>", 1)[0]
    planned, committed = result.split('<div class="committed">', 1)
    assert 'data-change="CC-001"' in planned and "+def farewell(name):" in planned
    assert f"{head[:12]}</code> M-001 Farewell" in committed
    assert 'data-anchor="M-001" data-file="src/app.py" data-line="4"' in committed
    assert "src/app.py</code>: ran" in result and "Evidence: farewell works" in result
    assert "DV-001</code> kept greet as it was" in result
    assert '<table class="reconcile">' in result and "1/1" in result
    assert 'data-in-result-review="1"' in html and f'data-result-sha256="{sha_of(store)}"' in html


def test_a_result_without_reconcile_json_shows_an_empty_table(
    client: TestClient, store: Store
) -> None:
    (Path(store.dir) / "reconcile.json").unlink()
    result = result_of(store)
    assert result["milestones"] and all(m["reconcile"] is None for m in result["milestones"])
    assert (result["base_commit"], result["unplanned_changes"]) == (None, [])
    shown = text(result, store.read("session"))
    assert "M-001    " in shown and " 0/0              -" in shown
    page = client.get(f"/?token={TOKEN}")
    assert page.status_code == 200 and "<td>0/0</td><td>-</td>" in page.text


@pytest.mark.parametrize("path", ["/accept", "/result/request-changes"])
def test_the_verdicts_are_refused_without_the_secrets(
    client: TestClient, store: Store, path: str
) -> None:
    body = {"sha256": sha_of(store), "by": "ann", "feedback": "x"}
    assert client.post(path, json=body, headers={"origin": ORIGIN}).status_code == 403  # token
    refusals = [
        ({"origin": "http://evil.example", "x-csrf-token": CSRF}, "wrong Origin"),
        ({"x-csrf-token": CSRF}, "a POST must say its Origin"),
        ({"origin": ORIGIN, "x-csrf-token": "wrong"}, "missing or wrong CSRF token"),
        ({"origin": ORIGIN, "x-csrf-token": CSRF, "host": "evil.example"}, "wrong Host"),
    ]
    for headers, reason in refusals:
        refused = client.post(f"{path}?token={TOKEN}", json=body, headers=headers)
        assert (refused.status_code, refused.text) == (403, f"403 Forbidden: {reason}")
    assert store.read("session")["status"] == "result_review"


def test_accept_needs_a_name_and_the_hash_shown(client: TestClient, store: Store) -> None:
    sha = sha_of(store)
    assert post(client, "/accept", {"sha256": sha}).status_code == 400
    assert post(client, "/accept", {"by": "ann"}).status_code == 400
    assert post(client, "/accept", {"sha256": sha, "by": "n" * (NAME_MAX + 1)}).status_code == 413
    stale = post(client, "/accept", {"sha256": "0" * 64, "by": "ann"})
    assert stale.status_code == 409 and stale.json()["stale"] is True
    assert store.read("session")["status"] == "result_review"
    done = post(client, "/accept", {"sha256": sha, "by": "ann"})
    assert done.status_code == 200, done.text
    session = store.read("session")
    assert session["status"] == "completed"
    assert session["result_reviews"][-1] | {"at": ""} == {
        **session["result_reviews"][-1],
        "at": "",
        "verdict": "accepted",
        "by": "ann",
        "sha256": sha,
    }
    after = client.get(f"/?token={TOKEN}").text
    assert "The result was accepted by ann" in after and 'data-in-result-review="0"' in after
    assert post(client, "/accept", {"sha256": sha, "by": "ann"}).status_code == 409  # decided


def test_request_changes_with_comments_on_commit_lines(client: TestClient, store: Store) -> None:
    sha = sha_of(store)
    comments = [
        {"anchor": "M-001", "file": "src/app.py", "line": 5, "text": "say goodbye"},
        {"anchor": "CC-001", "line": 4, "text": "planned too"},
        {"anchor": "DV-001", "text": "<b>why</b>?"},
    ]
    feedback = "farewell must say goodbye"
    done = post(
        client,
        "/result/request-changes",
        {"sha256": sha, "feedback": feedback, "comments": comments, "by": "ann"},
    )
    assert done.status_code == 200, done.text
    assert done.json()["next"].startswith("planner --step")
    session = store.read("session")
    assert session["status"] != "result_review"
    assert session["amendments"][-1]["task"] == feedback
    kept = session["result_reviews"][-1]["comments"]
    assert [(c["anchor"], c["file"], c["line"], c["text"]) for c in kept] == [
        ("M-001", "src/app.py", 5, "say goodbye"),
        ("CC-001", None, 4, "planned too"),
        ("DV-001", None, None, "<b>why</b>?"),
    ]


@pytest.mark.parametrize(
    ("body", "code", "says"),
    [
        ({"feedback": ""}, 400, "the overall feedback is required"),
        ({"feedback": "x" * (FEEDBACK_MAX + 1)}, 413, "over the limit"),
        ({"feedback": "x", "comments": "M-001"}, 400, "must be a list"),
        ({"feedback": "x", "comments": [{"anchor": "M-001"}]}, 400, "anchor and text"),
        (
            {"feedback": "x", "comments": [{**ON_LINE_4, "line": 77}]},
            400,
            "show lines 1-5",
        ),
        (
            {"feedback": "x", "comments": [{"anchor": "M-001", "text": "t"}] * (COMMENTS_MAX + 1)},
            413,
            "over the limit",
        ),
    ],
)  # fmt: skip
def test_bad_requests_for_changes_store_nothing(
    client: TestClient, store: Store, body: dict, code: int, says: str
) -> None:
    before = Path(store.path("session")).read_bytes()
    refused = post(client, "/result/request-changes", {"sha256": sha_of(store), **body})
    assert refused.status_code == code, refused.text
    assert says in refused.json()["error"]
    assert Path(store.path("session")).read_bytes() == before


def test_a_body_over_the_limit_is_refused_before_it_is_read(
    client: TestClient, store: Store
) -> None:
    huge = {"sha256": sha_of(store), "feedback": "x" * (BODY_MAX + 10)}
    for path in ("/accept", "/result/request-changes"):
        assert post(client, path, huge).status_code == 413
    assert store.read("session")["status"] == "result_review"


def test_the_plan_verdicts_are_refused_while_the_result_is_reviewed(
    client: TestClient, store: Store
) -> None:
    from state.rules.approval import plan_hash

    sha = plan_hash(store.read("plan"))
    assert post(client, "/approve", {"sha256": sha, "by": "ann"}).status_code == 409
    assert post(client, "/request-changes", {"feedback": "x"}).status_code == 409
    assert store.read("session")["status"] == "result_review"


@pytest.mark.slow
def test_review_wait_reports_the_result_verdict(store: Store) -> None:
    project = Path(store.dir).parents[1]
    waiting = run("plan", "review", "wait", "--timeout", "1s", cwd=project)
    assert waiting.returncode == 3 and "the result is still in review" in waiting.stderr
    assert run("plan", "result", "accept", "--by", "ann", cwd=project).returncode == 0
    done = run("plan", "review", "wait", cwd=project)
    assert (done.returncode, done.stdout.strip()) == (0, "DONE: the result is accepted")
    assert json.loads(run("plan", "review", "wait", "--json", cwd=project).stdout)["done"]


def test_a_wait_started_after_the_verdict_reports_it(store: Store) -> None:
    """Issue 35: the result sent back (an amendment: no approval on record), then its next
    round accepted, each before any wait started: a wait started then reports the verdict as
    one that was running does (the browser test starts one before the verdict)."""
    project = Path(store.dir).parents[1]
    sent = run("plan", "result", "request-changes", "--feedback", "say goodbye", cwd=project)
    assert sent.returncode == 0, sent.stderr
    late = run("plan", "review", "wait", "--json", cwd=project)
    assert late.returncode == 0, late.stderr
    session = json.loads(Path(store.path("session")).read_text())
    assert session["approval"] is None and session["next_command"]
    assert f"NEXT: {json.loads(late.stdout)['next']}" == session["next_command"]
    session.update(status="result_review", workflow="executor", step=9)  # executor step 9 again
    session["result_reviews"].append({**session["result_reviews"][0], "round": 2})
    session["result_reviews"][-1].update(verdict="submitted", sha256=None, comments=[])
    Path(store.path("session")).write_text(json.dumps(session))
    assert run("plan", "result", "accept", "--by", "ann", cwd=project).returncode == 0
    for args in (["wait"], ["wait", "--round", "2"], ["open", "--wait", "--no-browser"]):
        done = run("plan", "review", *args, cwd=project)
        assert (done.returncode, done.stdout) == (0, "DONE: the result is accepted\n"), args
    earlier = run("plan", "review", "wait", "--round", "1", cwd=project)
    assert earlier.returncode == 3, earlier.stderr
    assert "result review round 1 was changes_requested; round 2 is the latest" in earlier.stderr


def test_review_open_wait_stops_after_the_result_verdict(store: Store) -> None:
    import os
    import subprocess

    from tests.conftest import BIN

    project = Path(store.dir).parents[1]
    env = {k: v for k, v in os.environ.items() if k not in ("PLANNER_STATE_DIR", "CI")}
    server = subprocess.Popen(
        [str(BIN / "plan"), "review", "open", "--no-browser", "--wait"],
        cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        assert server.stdout.readline().startswith("http://127.0.0.1:")  # serving
        assert run("plan", "result", "accept", "--by", "ann", cwd=project).returncode == 0
        out, err = server.communicate(timeout=60)
        assert (server.returncode, out) == (0, "DONE: the result is accepted\n"), err
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
