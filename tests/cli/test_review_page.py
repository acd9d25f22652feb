"""The review page's refusals (token, Host, Origin, CSRF, stale approval, plan text as HTML)
and its verdicts through the review operations, with starlette's TestClient on a real
session in review; `plan review reject --comment` and `plan review wait` as subprocesses."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from cli.commands.apply import apply_batch, batch_context, convert
from cli.main import plan as plan_group
from cli.review_page.app import create_app, page_words
from cli.review_page.view import milestone_view
from state.rules.approval import plan_hash
from state.rules.session_store import Store
from tests.cli import tree
from tests.cli.review_helpers import to_review
from tests.conftest import git
from tests.conftest import run_in_process as run  # `plan` and `planner` in this process

TOKEN, CSRF, PORT = "t0ken-for-tests", "csrf-for-tests", 8123
ORIGIN = f"http://127.0.0.1:{PORT}"


@pytest.fixture(scope="module")
def in_review(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session at step 11, made once; each test works on a copy."""
    project = tmp_path_factory.mktemp("review") / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    (project / "README.md").write_text("# Demo\n")
    git(project, "init", "-q", "-b", "main")
    git(project, "add", ".")
    git(project, "commit", "-qm", "init")
    _, out = to_review(project)
    return Path(out.state_dir)


def run_op(store: Store, name: str, args: dict) -> list[str]:
    """One `plan` operation through the same click command `plan apply` runs."""
    return apply_batch(store, plan_group, [{"op": name, "args": args}])[0]


def act(store: Store, name: str, args: dict) -> None:
    """A person's act (which `plan apply` refuses), run as its command line runs it."""
    parent = batch_context(plan_group)
    command = tree.operations()[name]
    with store.transaction(name) as tx:
        command.run(tx, convert(command, name, args, parent, name))


@pytest.fixture
def store(in_review: Path, tmp_path: Path) -> Store:
    copy = tmp_path / "session"
    shutil.copytree(in_review, copy)
    return Store(str(copy))


@pytest.fixture
def client(store: Store) -> TestClient:
    return TestClient(create_app(store.dir, TOKEN, CSRF, PORT), base_url=ORIGIN)


def post(client: TestClient, path: str, body: dict, **headers: str) -> object:
    sent = {"origin": ORIGIN, "x-csrf-token": CSRF, **headers}
    return client.post(f"{path}?token={TOKEN}", json=body, headers=sent)


def test_the_page_shows_the_plan_and_the_hash_it_shows(client: TestClient, store: Store) -> None:
    page = client.get(f"/?token={TOKEN}")
    assert page.status_code == 200
    assert "Farewell" in page.text and "CC-001" in page.text and "Q-001" in page.text
    assert page.headers["x-plan-sha256"] == plan_hash(store.read("plan"))
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert client.get(f"/static/page.js?token={TOKEN}").status_code == 200


@pytest.mark.parametrize(
    "path", ["/", "/?token=", "/?token=wrong", "/static/page.js", "/events", "/content"]
)
def test_no_token_or_a_wrong_one_is_refused(client: TestClient, path: str) -> None:
    refused = client.get(path)
    assert refused.status_code == 403
    assert "token" in refused.text


@pytest.mark.parametrize("host", ["evil.example", f"evil.example:{PORT}", "127.0.0.1:9999"])
def test_a_wrong_host_is_refused(client: TestClient, host: str) -> None:
    refused = client.get(f"/?token={TOKEN}", headers={"host": host})  # DNS rebinding
    assert (refused.status_code, refused.text) == (403, "403 Forbidden: wrong Host")


def test_a_wrong_origin_is_refused(client: TestClient, store: Store) -> None:
    evil = {"origin": "http://evil.example"}
    assert client.get(f"/?token={TOKEN}", headers=evil).status_code == 403
    sha = plan_hash(store.read("plan"))
    refused = post(client, "/approve", {"sha256": sha}, **evil)
    assert (refused.status_code, refused.text) == (403, "403 Forbidden: wrong Origin")
    assert store.read("session")["status"] == "review"


@pytest.mark.parametrize("csrf", [None, "", "wrong"])
def test_a_post_without_the_csrf_token_is_refused(
    client: TestClient, store: Store, csrf: str | None
) -> None:
    headers = {"origin": ORIGIN} if csrf is None else {"origin": ORIGIN, "x-csrf-token": csrf}
    sha = plan_hash(store.read("plan"))
    for path, body in (("/approve", {"sha256": sha}), ("/request-changes", {"feedback": "x"})):
        refused = client.post(f"{path}?token={TOKEN}", json=body, headers=headers)
        assert (refused.status_code, refused.text) == (
            403,
            "403 Forbidden: missing or wrong CSRF token",
        )
    assert store.read("session")["status"] == "review"


def test_a_post_without_origin_is_refused(client: TestClient, store: Store) -> None:
    sha = plan_hash(store.read("plan"))
    refused = client.post(
        f"/approve?token={TOKEN}", json={"sha256": sha}, headers={"x-csrf-token": CSRF}
    )
    assert refused.status_code == 403
    assert store.read("session")["status"] == "review"


def test_a_stale_approval_is_refused_with_a_reload_prompt(client: TestClient, store: Store) -> None:
    shown = client.get(f"/?token={TOKEN}").headers["x-plan-sha256"]
    other = "0" * 64  # what a page left open on an earlier round still holds
    stale = post(client, "/approve", {"sha256": other, "by": "ann"})
    assert stale.status_code == 409
    assert stale.json()["stale"] is True and "reload" in stale.json()["error"]
    stale = post(client, "/request-changes", {"sha256": other, "feedback": "x"})
    assert stale.status_code == 409 and stale.json()["stale"] is True
    assert store.read("session")["status"] == "review"

    approved = post(client, "/approve", {"sha256": shown, "by": "ann"})
    assert approved.status_code == 200
    assert approved.json()["next"] == f"executor --step 1 --state-dir {store.dir}"
    session = store.read("session")
    assert session["status"] == "approved"
    assert session["approval"]["sha256"] == shown == plan_hash(store.read("plan"))
    assert session["approval"]["by"] == "ann" and session["reviews"][-1]["verdict"] == "approved"


def test_a_plan_in_review_is_frozen_to_the_agent(store: Store) -> None:
    """Every plan edit exits 4 until the person's verdict; the round keeps the hash it showed."""
    cwd, at = Path(store.dir), ["--state-dir", store.dir]
    shown = plan_hash(store.read("plan"))
    assert store.read("session")["reviews"][-1]["sha256"] == shown  # recorded at step 11
    for edit in (
        ["decision", "add", "--decision", "D", "--reasoning", "R"],
        ["risk", "add", "--risk", "R", "--mitigation", "M"],
        ["qr", "add", "--phase", "design", "--check", "C"],
    ):
        refused = run("plan", *edit, *at, cwd=cwd)
        assert refused.returncode == 4, (edit, refused.stderr)
        assert "in review, frozen until the person's verdict" in refused.stderr
    assert plan_hash(store.read("plan")) == shown and store.read("session")["status"] == "review"

    rejected = run("plan", "review", "reject", "--feedback", "log it", *at, cwd=cwd)
    assert rejected.returncode == 0, rejected.stderr
    last = store.read("session")["reviews"][-1]
    assert (last["verdict"], last["sha256"]) == ("rejected", shown)
    added = run("plan", "risk", "add", "--risk", "R", "--mitigation", "M", *at, cwd=cwd)
    assert added.returncode == 0, added.stderr  # back in design: the agent revises


def test_plan_text_is_escaped_never_html(client: TestClient, store: Store) -> None:
    act(store, "review reject", {"feedback": "say why"})  # the agent revises in design
    run_op(
        store,
        "decision add",
        {
            "decision": "<script>alert('decision')</script>",
            "reasoning": "<img src=x onerror=alert(1)> and [a link](javascript:alert(2))",
        },
    )
    page = client.get(f"/?token={TOKEN}").text
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(&#39;decision&#39;)&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert 'href="javascript:' not in page


def test_request_changes_records_structured_comments(client: TestClient, store: Store) -> None:
    comments = [
        {"anchor": "DL-001", "line": None, "text": "Why mirror greet()?"},
        {"anchor": "CC-001", "line": 4, "text": "Name it goodbye"},
        {"anchor": "DL-001", "line": None, "text": "CC-001:4: a head in the text stays text"},
    ]  # the page sends records: nothing in a text is read back as an anchor or a line
    done = post(client, "/request-changes", {"feedback": "Log farewells", "comments": comments})
    assert done.status_code == 200, done.text
    assert done.json()["next"] == f"planner --step 3 --state-dir {store.dir}"
    session = store.read("session")
    assert session["status"] == "design"
    last = session["reviews"][-1]
    assert (last["verdict"], last["feedback"]) == ("rejected", "Log farewells")
    assert last["comments"] == comments
    assert last["sha256"] == plan_hash(store.read("plan"))  # what the round showed

    shown = run("plan", "show", "--state-dir", store.dir, cwd=Path(store.dir)).stdout
    assert "Review round 1 rejected: Log farewells" in shown
    assert "  on CC-001 line 4: Name it goodbye" in shown
    prompt = run("planner", "--step", "3", "--state-dir", store.dir, cwd=Path(store.dir)).stdout
    assert "on DL-001: Why mirror greet()?" in prompt
    assert "on CC-001 line 4: Name it goodbye" in prompt
    rendered = run("plan", "render", "--state-dir", store.dir, cwd=Path(store.dir)).stdout
    assert "## Review" in rendered and "- on CC-001 line 4: Name it goodbye" in rendered


@pytest.mark.parametrize(
    ("comment", "error"),
    [
        ({"anchor": "DL-099", "text": "x"}, "no DL-099"),
        ({"anchor": "DL-001", "line": 2, "text": "x"}, "only a code change"),
        ({"anchor": "CC-001", "line": 99, "text": "x"}, "shows lines 1-5 of src/app.py"),
    ],
)
def test_a_comment_must_name_a_real_item(
    client: TestClient, store: Store, comment: dict, error: str
) -> None:
    refused = post(client, "/request-changes", {"feedback": "x", "comments": [comment]})
    assert refused.status_code == 400 and error in refused.json()["error"]
    assert store.read("session")["status"] == "review"


def test_the_cli_takes_comments_and_wait_prints_the_routing(store: Store) -> None:
    cwd, at = Path(store.dir), ["--state-dir", store.dir]
    waited = run("plan", "review", "wait", "--timeout", "1s", *at, cwd=cwd)
    assert waited.returncode == 3 and "no verdict within 1s" in waited.stderr
    bad = run("plan", "review", "reject", "--comment", "M-001 no id", *at, cwd=cwd)
    assert bad.returncode == 2 and "--comment 'M-001 no id': expected 'ID: text'" in bad.stderr
    rejected = run(
        "plan", "review", "reject", *at,
        "--comment", "DL-001: why?", "--comment", "CC-001:5: return a constant", cwd=cwd,
    )  # fmt: skip
    assert rejected.returncode == 0, rejected.stderr
    reviews = json.loads((cwd / "session.json").read_text())["reviews"]
    assert reviews[-1]["feedback"] is None
    assert reviews[-1]["comments"] == [
        {"anchor": "DL-001", "line": None, "text": "why?"},
        {"anchor": "CC-001", "line": 5, "text": "return a constant"},
    ]
    after = run("plan", "review", "wait", "--json", *at, cwd=cwd)  # the rejection, late
    assert after.returncode == 0 and json.loads(after.stdout)["next"].startswith("planner --step")


def test_wait_returns_the_executor_line_once_approved(store: Store) -> None:
    act(store, "review approve", {"by": "ann", "expect_sha256": plan_hash(store.read("plan"))})
    waited = run("plan", "review", "wait", "--state-dir", store.dir, cwd=Path(store.dir))
    assert waited.returncode == 0
    assert waited.stdout == f"NEXT: executor --step 1 --state-dir {store.dir}\n"
    as_json = run("plan", "review", "wait", "--json", "--state-dir", store.dir, cwd=Path(store.dir))
    assert json.loads(as_json.stdout) == {"next": f"executor --step 1 --state-dir {store.dir}"}


def test_history_compares_two_revisions_by_meaning(client: TestClient, store: Store) -> None:
    act(store, "review reject", {"feedback": "record the risk"})
    run_op(store, "risk add", {"risk": "Log noise", "mitigation": "debug level"})
    page = client.get(f"/?token={TOKEN}").text
    assert 'id="compare-form"' in page and 'id="audit-search"' in page
    compared = client.get(f"/compare?token={TOKEN}&a=r1&b=current")
    assert compared.status_code == 200
    assert "added" in compared.text and 'href="#R-001"' in compared.text
    assert client.get(f"/compare?token={TOKEN}&a=r999").status_code == 400


def test_the_server_listens_on_loopback_and_streams_changes(store: Store) -> None:
    """Real HTTP against uvicorn: the printed URL works, and a plan command is an event."""
    import http.client
    import subprocess
    from urllib.parse import urlsplit

    from tests.conftest import BIN

    server = subprocess.Popen(
        [str(BIN / "plan"), "review", "open", "--no-browser", "--state-dir", store.dir],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = urlsplit(server.stdout.readline().strip())
        assert url.hostname == "127.0.0.1" and url.query.startswith("token=")
        connection = http.client.HTTPConnection("127.0.0.1", url.port, timeout=20)
        connection.request("GET", f"/events?{url.query}")
        events = connection.getresponse()
        assert events.status == 200
        assert events.headers["content-type"].startswith("text/event-stream")
        assert events.readline() == b"retry: 1000\n"
        run("plan", "review", "reject", "--feedback", "F", "--state-dir", store.dir,
            cwd=Path(store.dir))  # fmt: skip
        lines = [events.readline() for _ in range(2)]
        assert b"event: change\n" in lines
        connection.close()
        bare = http.client.HTTPConnection("127.0.0.1", url.port, timeout=20)
        bare.request("GET", "/")
        assert bare.getresponse().status == 403
        import socket

        with socket.create_connection(("127.0.0.1", url.port or 0), timeout=20) as garbage:
            garbage.sendall(b"NOT HTTP AT ALL\r\n\r\n")  # uvicorn warns about this one
            garbage.recv(1024)
    finally:
        server.terminate()
        _, err = server.communicate(timeout=10)
    assert "Invalid HTTP request" not in err and "GET /" not in err, err  # quiet: no --verbose


def test_inputs_over_their_limits_are_refused_and_nothing_is_stored(
    client: TestClient, store: Store
) -> None:
    from state.validation.limits import (
        ANSWER_MAX,
        BODY_MAX,
        COMMENT_MAX,
        COMMENTS_MAX,
        FEEDBACK_MAX,
        NAME_MAX,
        REASON_MAX,
    )

    before = Path(store.path("session")).read_bytes()
    sha = plan_hash(store.read("plan"))
    one = {"anchor": "DL-001", "line": None, "text": "x"}
    for path, body in (
        ("/request-changes", {"feedback": "x" * (FEEDBACK_MAX + 1)}),
        ("/request-changes", {"comments": [{**one, "text": "x" * (COMMENT_MAX + 1)}]}),
        ("/request-changes", {"comments": [one] * (COMMENTS_MAX + 1)}),
        ("/approve", {"sha256": sha, "by": "n" * (NAME_MAX + 1)}),
        ("/request-changes", {"feedback": "x" * (BODY_MAX + 1)}),  # refused unread
    ):
        refused = post(client, path, body)
        assert refused.status_code == 413, (path, refused.text[:200])
        assert "limit" in refused.json()["error"] or "bytes" in refused.json()["error"]
    assert Path(store.path("session")).read_bytes() == before

    cwd, at = Path(store.dir), ["--state-dir", store.dir]
    for argv in (
        ["review", "reject", "--feedback", "x" * (FEEDBACK_MAX + 1)],
        ["review", "reject", "--comment", "DL-001: " + "x" * (COMMENT_MAX + 1)],
        ["review", "reject", *["--comment", "DL-001: x"] * (COMMENTS_MAX + 1)],
        ["review", "approve", "--by", "n" * (NAME_MAX + 1)],
        ["question", "answer", "Q-001", "no, but " + "x" * ANSWER_MAX],
        ["qr", "accept", "--phase", "design", "--by", "ann", "--reason", "x" * (REASON_MAX + 1)],
        ["cancel", "--reason", "x" * (REASON_MAX + 1)],
    ):
        refused = run("plan", *argv, *at, cwd=cwd)
        assert refused.returncode == 2 and "over the limit" in refused.stderr, refused.stderr
    assert Path(store.path("session")).read_bytes() == before
    assert store.read("context")["questions"][0]["answer"] == "no"
    at_limit = post(client, "/request-changes", {"feedback": "x" * FEEDBACK_MAX})
    assert at_limit.status_code == 200, at_limit.text


def test_approving_on_the_page_needs_a_name(client: TestClient, store: Store) -> None:
    sha = plan_hash(store.read("plan"))
    for by in (None, "", "   "):
        refused = post(client, "/approve", {"sha256": sha, "by": by})
        assert refused.status_code == 400 and "name is required" in refused.json()["error"]
    blank = run(
        "plan", "review", "approve", "--by", " ", "--state-dir", store.dir, cwd=Path(store.dir)
    )
    assert blank.returncode == 2 and "--by: may not be empty" in blank.stderr
    assert store.read("session")["status"] == "review"


def test_the_page_reads_as_a_code_review(client: TestClient, store: Store) -> None:
    """File line numbers (old and new) in diffs, one tab stop per diff, a <noscript> note,
    verdict buttons off until the script runs, audit and history collapsed."""
    import re

    page = client.get(f"/?token={TOKEN}").text
    rows = re.findall(r'<tr class="(\w+)"(?: data-line="(\d+)")?', page)
    assert [r for r in rows if r[0] in ("ctx", "add")] == [
        ("ctx", "1"), ("ctx", "2"), ("add", "3"), ("add", "4"), ("add", "5"),
    ]  # fmt: skip
    assert 'id="CC-001-L4"' in page
    assert len(re.findall(r'class="ln"[^>]*tabindex="0"', page)) == 1
    assert len(re.findall(r'class="ln"[^>]*tabindex="-1"', page)) == 4
    assert "<noscript>" in page and "plan review approve --by NAME" in page
    assert re.search(r'id="approve" class="approve" disabled', page)
    assert '<details id="audit-details">' in page and '<details id="history-details">' in page
    assert "{&#34;" not in page and '{"' not in page.split('id="audit"')[1]  # no raw JSON


def test_earlier_comments_show_on_their_item_and_line(client: TestClient, store: Store) -> None:
    act(
        store,
        "review reject",
        {"comment": ["DL-001: say why", "CC-001:4: name it goodbye"], "feedback": None},
    )
    page = client.get(f"/?token={TOKEN}").text
    assert '<p class="said">Round 1: say why</p>' in page
    line = page.index('id="CC-001-L4"')
    assert page.index("Round 1 on line 4: name it goodbye") > line
    assert page.index("Round 1 on line 4: name it goodbye") < page.index('id="CC-001-L5"')


def test_markdown_keeps_identifiers_and_loads_no_image() -> None:
    from cli.review_page.app import markdown

    md = markdown()
    html = str(md("Edit `x` in __init__.py and snake_case_name; *this* matters."))
    assert "__init__.py" in html and "snake_case_name" in html and "<strong>" not in html
    assert "<em>this</em>" in html
    html = str(md("![diagram](https://example.com/d.png) and ![local](d.png)"))
    assert "<img" not in html
    assert '<a class="image" href="https://example.com/d.png"' in html
    assert "[image: diagram]" in html
    assert '<span class="image">[image: local]</span>' in html


def test_the_page_shows_an_answer_with_its_condition(client: TestClient, store: Store) -> None:
    path = Path(store.path("context"))
    context = json.loads(path.read_text())
    context["questions"][0].update(answer="no", condition="log that it did not wave")
    path.write_text(json.dumps(context))  # as `plan question answer Q-001 "no, but …"` leaves it
    page = client.get(f"/?token={TOKEN}").text
    said = '<span class="condition">(condition: log that it did not wave)</span>'
    assert f"Answer: no {said}" in page


def test_a_shared_change_shows_once_and_its_other_intents_point_to_it() -> None:
    change = {"id": "CC-001", "intent_ref": "CI-001", "shared_intents": ["CI-002"]}
    milestone = {
        "code_intents": [{"id": "CI-001"}, {"id": "CI-002"}],
        "code_changes": [{**change, "file": "u.py", "diff": "--- /dev/null\n+++ b/u.py\n"}],
    }
    first, second = milestone_view(milestone)["intents"]
    assert [c["id"] for c in first["changes"]] == ["CC-001"] and first["shared"] == []
    assert second["changes"] == [] and second["shared"] == ["CC-001"]


def test_the_pages_errors_name_its_fields_not_the_clis_options(
    client: TestClient, store: Store
) -> None:
    empty = post(client, "/request-changes", {"feedback": "", "comments": []})
    assert empty.status_code == 400
    assert empty.json()["error"].startswith("a comment or the overall feedback is required")
    assert "--" not in empty.json()["error"]
    words = page_words("feedback is required and may not be empty")
    assert words == "the overall feedback is required and may not be empty"
    assert (
        page_words("comment M-001:a.py:9: its commits show lines 1-5 of a.py")
        == "the comment on M-001:a.py:9: its commits show lines 1-5 of a.py"
    )
    assert page_words("comment on DL-001: has no text") == "a comment on DL-001: has no text"
    assert "Request changes on this page" in page_words("again: plan review reject)")
