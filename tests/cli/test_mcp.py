"""`plan mcp`, the review companion, through the MCP SDK's own client over stdio: every tool
on a real project (one session executed with a milestone commit, one in review), bad
arguments answered as tool errors, and the draft's way to the review page and to
`plan review reject --draft`."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from bench.sample import MCP_OPENING
from tests.cli.test_review_browser import browser  # noqa: F401 (the Chromium fixture)
from tests.conftest import BIN, git

VERDICT_WORDS = re.compile(r"approve|reject|accept|amend|cancel|resume|fail|verdict", re.I)
TOOLS = {
    "list_sessions",
    "session_status",
    "show_plan",
    "render_plan",
    "search_plan",
    "questions",
    "review_rounds",
    "history",
    "compare",
    "audit_log",
    "git_log",
    "git_show",
    "git_diff",
    "draft_feedback",
}


class Result:
    """A tool call's answer: its text, whether the server marked it an error, and the JSON."""

    def __init__(self, text: str, is_error: bool):
        self.text, self.is_error = text, is_error

    def json(self) -> Any:
        assert not self.is_error, self.text
        return json.loads(self.text)


def server(project: Path, *args: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if k not in ("PLANNER_STATE_DIR", "CI")}
    return StdioServerParameters(
        command=str(BIN / "plan"), args=["mcp", *args], cwd=str(project), env=env
    )


def session_calls(
    project: Path, calls: list[tuple[str, dict[str, Any]]], *args: str
) -> tuple[list[Any], list[Result]]:
    """One client session with `plan mcp`: the tools it lists, and each call's result."""

    async def talk() -> tuple[list[Any], list[Result]]:
        with open(os.devnull, "w") as quiet:
            async with (
                stdio_client(server(project, *args), errlog=quiet) as (read, write),
                ClientSession(read, write) as client,
            ):
                await client.initialize()
                tools = (await client.list_tools()).tools
                results = []
                for name, arguments in calls:
                    done = await client.call_tool(name, arguments)
                    text = "".join(getattr(c, "text", "") for c in done.content)
                    results.append(Result(text, bool(done.is_error)))
                return tools, results

    # A thread of its own: Playwright's sync API keeps an event loop running in this one.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, talk).result()


def call(project: Path, name: str, **arguments: Any) -> Result:
    return session_calls(project, [(name, arguments)])[1][0]


# -- one project for the module: an executed session, then one in review ----------------------


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Session A approved (non-interactive), executed: M-001 applied and committed; then
    session B, interactive, at step 11 waiting for the person (the active one)."""
    from tests.cli.review_helpers import to_review
    from tests.workflows.helpers import to_approval

    root = tmp_path_factory.mktemp("mcp") / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    (root / "README.md").write_text("# Demo\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-qm", "init")
    agent, out = to_approval(root)
    executed = Path(out.state_dir)
    agent.step(out.route())  # executor 1, 2, 3
    agent.plan("exec", "apply", "M-001")
    agent.plan("exec", "done", "M-001", "--evidence", "ran it", "--commit")
    git(root, "revert", "--no-edit", "HEAD")  # B plans the same change again, from here
    _, in_review = to_review(root)
    assert in_review.header.startswith("PLANNER 11/11")
    return {"project": root, "executed": executed, "review": Path(in_review.state_dir)}


@pytest.fixture
def shared(reviewed: dict[str, Any]) -> Path:
    """The module's project (its sessions are shared: tests here only read them). Making it
    costs more CPU than the quick tier allows a test, so every test that uses it is slow."""
    return reviewed["project"]


def session_json(state: Path) -> dict[str, Any]:
    return json.loads((state / "session.json").read_text())


@pytest.mark.slow
def test_the_tools_listed_are_the_companion_s_and_none_gives_a_verdict(shared: Path) -> None:
    tools, _ = session_calls(shared, [])
    assert {t.name for t in tools} == TOOLS
    for tool in tools:  # no name and no description offers a verdict or a lifecycle act
        assert not VERDICT_WORDS.search(tool.name), tool.name
        hints = tool.annotations
        assert hints is not None and hints.destructive_hint is False
        assert hints.read_only_hint is (tool.name != "draft_feedback"), tool.name
        assert tool.input_schema["additionalProperties"] is False, tool.name


@pytest.mark.slow
def test_sessions_status_and_the_plan_of_the_active_session(
    shared: Path, reviewed: dict[str, Any]
) -> None:
    calls = [
        ("list_sessions", {}),
        ("session_status", {}),
        ("show_plan", {}),
        ("show_plan", {"item_id": "M-001"}),
        ("show_plan", {"item_id": "Q-001"}),
        ("render_plan", {}),
        ("render_plan", {"full": True}),
    ]
    _, (rows, status, outline, milestone, question, compact, full) = session_calls(shared, calls)
    by_id = {r["session"]: r for r in rows.json()}
    assert by_id[reviewed["review"].name]["active"] and by_id[reviewed["review"].name]["status"]
    assert by_id[reviewed["executed"].name]["status"] == "executing"
    assert status.json()["status"] == "review" and status.json()["task"] == "Add a farewell"
    assert "M-001" in outline.text and "CI-001" in outline.text
    assert milestone.json()["id"] == "M-001"
    assert question.json()["text"] == "Should farewell() also wave?"
    assert "src/app.py" in compact.text and "+    return 'bye ' + name" in full.text


@pytest.mark.slow
def test_search_finds_items_and_the_diff_line_a_comment_anchors_to(shared: Path) -> None:
    found = call(shared, "search_plan", query="BYE").json()
    diff_hits = [h for h in found["shown"] if h["field"] == "diff"]
    assert diff_hits and diff_hits[0]["id"] == "CC-001"
    assert diff_hits[0]["line"] == 5 and "'bye '" in diff_hits[0]["text"]
    wave = call(shared, "search_plan", query="also wave").json()
    assert [h["id"] for h in wave["shown"]] == ["Q-001"]
    assert call(shared, "search_plan", query="no such words anywhere").json()["matches"] == 0


@pytest.mark.slow
def test_questions_reviews_history_compare_and_the_audit(shared: Path) -> None:
    calls = [
        ("questions", {}),
        ("review_rounds", {}),
        ("history", {}),
        ("compare", {"from_rev": "r1", "to_rev": "current"}),
        ("audit_log", {"limit": 5}),
        ("audit_log", {"contains": "question answer", "limit": 100}),
    ]
    _, (asked, reviews, revisions, changes, recent, added) = session_calls(shared, calls)
    [q] = asked.json()
    assert q["id"] == "Q-001" and q["answer"] == "no"
    rounds = reviews.json()
    assert rounds["status"] == "review" and rounds["rounds"][-1]["verdict"] == "submitted"
    assert "plan-design" in rounds["findings"] and rounds["draft_round"] == 1
    assert [r["rev"] for r in revisions.json()][:2] == ["r1", "r2"]
    what = {c["what"] for c in changes.json()["changes"]}
    assert {"M-001", "CI-001", "CC-001"} <= what
    assert len(recent.json()["records"]) == 5
    assert all("question answer" in json.dumps(r) for r in added.json()["records"])
    assert added.json()["records"]


@pytest.mark.slow
def test_git_log_show_and_diff_of_the_executed_session(
    shared: Path, reviewed: dict[str, Any]
) -> None:
    session = reviewed["executed"].name
    head = git(shared, "rev-parse", "HEAD~1").strip()  # HEAD reverts it for session B
    base = git(shared, "rev-parse", "HEAD~2").strip()
    commits = call(shared, "git_log", session=session).json()
    assert [(c["kind"], c["commit"]) for c in commits] == [("base", base), ("milestone", head)]
    assert commits[1]["milestone"] == "M-001" and commits[1]["subject"].startswith("M-001 ")
    assert commits[1]["files"] == ["M src/app.py"]
    calls = [
        ("git_show", {"commit": head[:8]}),
        ("git_show", {"commit": head, "path": "README.md"}),
        ("git_diff", {}),
        ("git_diff", {"from_commit": base, "to_commit": head, "path": "src/app.py"}),
    ]
    calls = [(name, {**arguments, "session": session}) for name, arguments in calls]
    _, (shown, elsewhere, whole, one_file) = session_calls(shared, calls)
    assert head in shown.text and "+def farewell(name):" in shown.text
    assert elsewhere.text == f"commit {head[:12]} changes nothing in README.md"
    assert "+def farewell(name):" in whole.text and whole.text == one_file.text
    late = call(shared, "draft_feedback", text="Too late for the plan.", session=session)
    assert late.is_error and "the session is executing: a draft is feedback" in late.text
    assert not (reviewed["executed"] / "drafts.json").exists()


BAD_ARGUMENTS = [
    ("git_show", {"commit": "--output=/tmp/x"}, "not one of this session's commits"),
    ("git_show", {"commit": "HEAD"}, "not one of this session's commits"),
    ("git_show", {"commit": "0" * 40}, "not one of this session's commits"),
    ("git_diff", {"path": "../outside"}, "relative to the project root"),
    ("git_diff", {"path": ":(top)src"}, "pathspec magic"),
    ("show_plan", {"item_id": "M-999"}, "no M-999"),
    ("show_plan", {"item_id": "rm -rf"}, "not an id plan show reads"),
    ("compare", {"from_rev": "round 9"}, "no review round 9"),
    ("compare", {"from_rev": "r999"}, "no revision r999"),
    ("search_plan", {"query": "  "}, "give the words"),
    ("search_plan", {"query": "x" * 201}, "over the limit"),
    ("audit_log", {"limit": 0}, "at least 1"),
    ("session_status", {"session": "../../etc"}, "not one of plan list"),
    ("draft_feedback", {"text": ""}, "needs text or at least one comment"),
    ("draft_feedback", {"text": "x", "comments": ["DL-999: why"]}, "no DL-999"),
    ("draft_feedback", {"text": "x", "comments": ["CC-001:99: off"]}, "its diff shows lines"),
    ("draft_feedback", {"text": "x" * 10_001}, "over the limit of 10,000"),
    ("git_show", {}, "commit"),
    ("search_plan", {"query": 3}, "query"),
    # an argument a tool does not take is refused, naming those it takes (not ignored)
    ("show_plan", {"id": "DL-999"}, "show_plan takes no id; it takes: item_id, session"),
    ("show_plan", {"item_id": "DL-999"}, "no DL-999"),
    ("compare", {"a": "r1", "b": "r2"}, "takes no a, b; it takes: from_rev, session, to_rev"),
    ("git_diff", {"a": "x", "b": "y"}, "it takes: from_commit, path, session, to_commit"),
]


@pytest.mark.slow
def test_bad_arguments_are_tool_errors_that_say_what_is_wrong(
    shared: Path, reviewed: dict[str, Any]
) -> None:
    """Every bad call in one client session (one server start): each is a tool error that
    says what is wrong, never a traceback, and nothing is written."""
    executed = reviewed["executed"].name
    calls = [
        (name, {"session": executed, **arguments} if name.startswith("git_") else arguments)
        for name, arguments, _ in BAD_ARGUMENTS
    ]
    before = sorted(p.name for p in reviewed["review"].iterdir())
    _, results = session_calls(shared, calls)
    for (name, arguments, says), result in zip(BAD_ARGUMENTS, results, strict=True):
        assert result.is_error and says in result.text, (name, arguments, result.text)
        assert "Traceback" not in result.text, result.text
    assert sorted(p.name for p in reviewed["review"].iterdir()) == before  # nothing written


@pytest.mark.slow
def test_reading_writes_nothing(shared: Path, reviewed: dict[str, Any]) -> None:
    def snapshot() -> dict[str, bytes]:
        return {
            str(p): p.read_bytes()
            for state in (reviewed["review"], reviewed["executed"])
            for p in state.rglob("*")
            if p.is_file() and p.name != ".lock"
        }

    before = snapshot()
    reading = [(t, {}) for t in sorted(TOOLS - {"draft_feedback", "git_show", "search_plan"})]
    _, results = session_calls(shared, reading)
    assert not any(r.is_error for r in results if r is not None), [r.text for r in results]
    assert snapshot() == before


@pytest.mark.slow
def test_a_draft_fills_the_review_page_and_plan_review_reject_draft_sends_it(
    tmp_path: Path,
) -> None:
    from starlette.testclient import TestClient

    from cli.review_page.app import create_app
    from tests.cli.review_helpers import to_review
    from tests.conftest import run_in_process as run

    root = new_project(tmp_path)
    _, out = to_review(root)
    state = Path(out.state_dir)
    status_before = session_json(state)["status"]
    plan_before = (state / "plan.json").read_bytes()
    made = call(
        root,
        "draft_feedback",
        text='Keep greet() as it is; <b>"bye"</b> should be translated',
        comments=["CC-001:5: say 'bye' in the user's language", "DL-001: why a function?"],
    ).json()["draft"]
    assert made["id"] == "FD-001" and made["round"] == 1
    assert made["comments"][0] == {
        "anchor": "CC-001", "line": 5, "text": "say 'bye' in the user's language",
    }  # fmt: skip
    # A draft changes neither the plan nor the status, and is on record.
    assert (state / "plan.json").read_bytes() == plan_before
    assert session_json(state)["status"] == status_before == "review"
    audit = [json.loads(line) for line in (state / "audit.jsonl").read_text().splitlines()]
    assert audit[-1]["command"] == "draft feedback" and audit[-1]["draft"] == "FD-001"

    client = TestClient(
        create_app(str(state), "tok", "csrf", 8123), base_url="http://127.0.0.1:8123"
    )
    page = client.get("/?token=tok").text
    assert (
        "&lt;b&gt;&#34;bye&#34;&lt;/b&gt; should be translated</textarea>" in page
    )  # escaped, inside the feedback form
    assert "Filled in from draft FD-001" in page
    [attribute] = re.findall(r"data-draft='([^']*)'", page)
    import html

    assert json.loads(html.unescape(attribute))[1] == {
        "anchor": "DL-001", "line": None, "text": "why a function?",
    }  # fmt: skip

    sent = run("plan", "review", "reject", "--draft", "--comment", "M-001: and a test", cwd=root)
    assert sent.returncode == 0, sent.stderr
    round_1 = session_json(state)["reviews"][0]
    assert round_1["verdict"] == "rejected"
    assert round_1["feedback"].startswith("Keep greet() as it is")
    assert [c["anchor"] for c in round_1["comments"]] == ["CC-001", "DL-001", "M-001"]
    drafts = json.loads((state / "drafts.json").read_text())["drafts"]
    assert drafts[0]["sent"] is True
    # Sent: the page no longer offers it, and --draft has nothing left to send.
    assert "Filled in from draft" not in client.get("/?token=tok").text
    again = run("plan", "review", "reject", "--draft", cwd=root)
    assert again.returncode in (2, 4) and "Traceback" not in again.stderr


def test_plan_review_reject_draft_without_a_draft_says_so(tmp_path: Path) -> None:
    from tests.cli.review_helpers import to_review
    from tests.conftest import run_in_process as run

    root = new_project(tmp_path)
    _, out = to_review(root)
    done = run("plan", "review", "reject", "--draft", cwd=root)
    assert done.returncode == 2 and "no unsent draft for review round 1" in done.stderr
    assert session_json(Path(out.state_dir))["status"] == "review"


@pytest.mark.slow
def test_plan_mcp_serves_stdio_until_the_client_closes(project: Path) -> None:
    """A client that closes stdin ends the server cleanly, with nothing on stdout but MCP;
    a --state-dir that names no session is a usage error before anything is served."""
    done = subprocess.run(
        [str(BIN / "plan"), "mcp"], cwd=project, input="", capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout == "" and "Traceback" not in done.stderr
    missing = subprocess.run(
        [str(BIN / "plan"), "mcp", "--state-dir", "nowhere"], cwd=project, input="",
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert missing.returncode == 2 and "no session here" in missing.stderr


@pytest.mark.slow  # `shared`: slow, as the fixture says
def test_a_second_start_answers_the_opening_as_the_sdk_did_before_loading_it(
    shared: Path,
) -> None:
    """initialize and tools/list: the SDK answers the first start and its answers are kept;
    the next start gives the same answers without importing the SDK, and loads it for the
    first other request (the connection so far replayed to it: a tool call works)."""
    Path(sys.prefix, "planner-mcp.json").unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}

    def opening() -> tuple[list[Any], str]:
        """The two answers, read before stdin closes (the SDK drops an answer under way)."""
        server = subprocess.Popen(
            [str(BIN / "plan"), "mcp"], cwd=shared, env=env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        assert server.stdin and server.stdout
        server.stdin.write("".join(json.dumps(m) + "\n" for m in MCP_OPENING))
        server.stdin.flush()
        answers = [json.loads(server.stdout.readline()) for _ in range(2)]
        _, imported = server.communicate(timeout=120)
        return answers, imported

    (first, first_imports), (second, second_imports) = opening(), opening()
    assert [a["id"] for a in first] == [1, 2] and first == second
    assert {t["name"] for t in first[1]["result"]["tools"]} == TOOLS
    assert "mcp.server.lowlevel" in first_imports
    assert "| mcp" not in second_imports and "mcp_types" not in second_imports
    tools, [history] = session_calls(shared, [("history", {})])
    assert {t.name for t in tools} == TOOLS and history.json()[0]["rev"] == "r1"


@pytest.mark.browser
def test_the_page_in_chromium_sends_the_draft_it_was_filled_with(
    browser: Any,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    """The draft's text in the feedback box and its comments on their item and line, as if
    the person had typed them; Request changes sends them as the round's feedback."""
    from tests.cli.review_helpers import to_review
    from tests.cli.test_review_browser import finished, start

    root = new_project(tmp_path)
    agent, out = to_review(root)
    state = Path(out.state_dir)
    comments = ["CC-001:5: translate 'bye'", "DL-001: why a function?"]
    call(root, "draft_feedback", text="Say goodbye politely.", comments=comments)
    server = start(["plan", "review", "open", "--no-browser"], root, agent.env)
    try:
        assert server.stdout is not None
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(server.stdout.readline().strip())
        assert page.input_value("#feedback") == "Say goodbye politely."
        assert page.locator("#comments li").count() == 2
        assert "translate 'bye'" in page.text_content("tr.pending-row")  # under line 5
        page.click("#request-changes")
        page.wait_for_selector("#message.ok:has-text('Changes requested')")
    finally:
        server.terminate()
        finished(server)
    [round_1] = session_json(state)["reviews"][:1]
    assert round_1["verdict"] == "rejected" and round_1["feedback"] == "Say goodbye politely."
    assert [(c["anchor"], c["line"]) for c in round_1["comments"]] == [
        ("CC-001", 5),
        ("DL-001", None),
    ]


def new_project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-qm", "init")
    return root


@pytest.mark.slow
def test_a_damaged_drafts_file_and_a_closed_session_are_tool_errors(
    project: Path, session_dir: Path
) -> None:
    """A fresh session (discovery): drafts may be made before review; a damaged drafts.json
    is reported with its path and left as it is; a closed session takes no draft."""
    made = call(project, "draft_feedback", text="Early thoughts.").json()["draft"]
    assert made["round"] == 1  # the round step 11 will open
    drafts = session_dir / "drafts.json"
    drafts.write_text('{"drafts": [{"id": "FD-001"}]}')
    for name, arguments in (("review_rounds", {}), ("draft_feedback", {"text": "x"})):
        result = call(project, name, **arguments)
        assert result.is_error and f"{drafts}:" in result.text and "damaged" in result.text
    assert drafts.read_text() == '{"drafts": [{"id": "FD-001"}]}'
    drafts.write_text('{"drafts": [{"id": "FD-0')  # cut short: json says "starting at"
    cut = call(project, "review_rounds")
    said = "not valid JSON (Unterminated string starting at line 1 column 20)"
    assert cut.is_error and said in cut.text, cut.text
    drafts.unlink()
    subprocess.run([str(BIN / "plan"), "cancel"], cwd=project, check=True, capture_output=True)
    closed = call(project, "draft_feedback", text="Too late.")
    assert closed.is_error and "the session is cancelled: a draft is feedback" in closed.text
    assert not drafts.exists()
