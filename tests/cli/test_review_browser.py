"""The review page in a real headless Chromium (Debian's, driven by Playwright): open at
1280 px, comment on a decision and on a diff line (the form opens there, Escape closes it,
Ctrl+Enter adds, focus stays put, the comment shows on its line), request changes; the
scripted agent revises; the page updates by itself; then at 390 px (no horizontal scroll)
approve with a name and a confirmation. At both widths a milestone's checkbox sits by its
heading and a comment under a diff line wraps inside the diff; the overall feedback
survives a reload, leaving with unsent words warns, and "Approved. Next: …" stays.
`plan review wait` runs beside it and returns each verdict's route; no console errors; the
limits hold in the browser too.

Screenshots of each stage go to tests/artifacts/review-page/ (git-ignored; docs/ keeps a
copy of both widths). Skips, saying why, when Playwright or Chromium cannot start
(apt-get install -y chromium).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from state.rules.approval import plan_hash
from tests.agent import Output
from tests.cli.review_helpers import back_to_review, to_review
from tests.conftest import BIN, REPO

pytestmark = pytest.mark.browser

ARTIFACTS = REPO / "tests" / "artifacts" / "review-page"
TIMEOUT_MS = 15_000


def chromium_path() -> str:
    return os.environ.get("PLANNER_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture
def browser() -> Any:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[test]')")
    path = chromium_path()
    if not os.path.exists(path):
        pytest.skip(f"no Chromium at {path} (apt-get install -y chromium, or set PLANNER_CHROMIUM)")
    with sync_playwright() as p:
        try:
            chromium = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        except Exception as e:  # any launch failure means: no browser here
            pytest.skip(f"Chromium at {path} cannot start: {str(e).splitlines()[0]}")
        yield chromium
        chromium.close()


def start(command: list[str], project: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(BIN / command[0]), *command[1:]],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def settle(page: Any) -> None:
    """Wait until the page has stopped reloading its content (a few seconds at most)."""
    last = None
    for _ in range(20):
        version = page.get_attribute("body", "data-version")
        if version == last:
            return
        last = version
        page.wait_for_timeout(400)


def finished(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=30)
    return process.returncode, out, err


def overflow(page: Any) -> int:
    """How many pixels the page is wider than the window (0: no horizontal scroll)."""
    return int(
        page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    )


def focused(page: Any) -> str:
    """The focused element as tag#id.class [data-anchor:data-line]."""
    return str(
        page.evaluate(
            """() => { const e = document.activeElement;
            return e.tagName + '#' + e.id + '.' + e.className
              + ' [' + (e.dataset.anchor || '') + ':' + (e.dataset.line || '') + ']'; }"""
        )
    )


def gap(page: Any, above: str, below: str) -> float:
    """Pixels from the bottom of `above` to the top of `below` (both on screen)."""
    a, b = page.locator(above).bounding_box(), page.locator(below).bounding_box()
    return float(b["y"] - (a["y"] + a["height"]))


def beside_its_heading(page: Any) -> bool:
    """A milestone's done checkbox sits at the start of its heading, not across from it."""
    box = page.locator(".milestone h3 input[type=checkbox]").first.bounding_box()
    code = page.locator(".milestone h3 code").first.bounding_box()
    return bool(0 <= code["x"] - (box["x"] + box["width"]) < 24 and box["width"] < 40)


def within_its_diff(page: Any, selector: str) -> bool:
    """The comment under a diff line wraps inside the diff's box: its right edge is in the
    box, and it is more than one line high."""
    page.evaluate(  # a code line far wider than a phone, as real diffs have
        """() => { for (const t of document.querySelectorAll('table.diff tbody')) {
          const tr = document.createElement('tr'); tr.className = 'ctx wide';
          tr.innerHTML = '<td class=old></td><td class=new></td><td class=text><pre>'
            + 'wide_name = 1; '.repeat(30) + '</pre></td>';
          t.prepend(tr); } }"""
    )
    note = page.locator(selector).first
    inside = note.evaluate(
        """(n) => { const box = n.closest('.diff-box').getBoundingClientRect();
        const r = n.getBoundingClientRect();
        return r.left >= box.left - 1 && r.right <= box.right + 1 && r.width > 100; }"""
    )
    return bool(inside)


def watch_console(page: Any, errors: list[str]) -> None:
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))


def test_review_in_the_browser(browser: Any, project: Path) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    agent, review = to_review(project)
    state_dir = Path(review.state_dir)
    server = start(["plan", "review", "open", "--no-browser"], project, agent.env)
    first_wait = start(["plan", "review", "wait", "--timeout", "5m"], project, agent.env)
    errors: list[str] = []
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "?token=" in url, server.stderr
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(TIMEOUT_MS)
        watch_console(page, errors)

        def shot(name: str, at: str, on: Any = page) -> None:
            settle(on)
            on.evaluate(f"document.getElementById('{at}').scrollIntoView()")
            on.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=False)

        page.goto(url)
        page.wait_for_selector("body[data-live='1']")  # the event stream is open
        assert page.title() == "Review: Farewell"
        assert overflow(page) == 0
        assert beside_its_heading(page)
        shot("1-opened", "status")

        # A comment on a decision: the form opens in the decision; Escape closes it.
        page.click("button.comment[data-anchor='DL-001']")
        assert page.evaluate("document.getElementById('comment-form').closest('#DL-001') !== null")
        page.keyboard.type("draft")
        page.keyboard.press("Escape")
        assert page.evaluate("document.getElementById('comment-form').closest('#content')") is None
        assert focused(page).startswith("BUTTON#.comment [DL-001:")
        page.keyboard.press("Enter")  # the focused Comment button opens it again
        page.keyboard.type("Why mirror greet()? Say why in the decision.")
        page.keyboard.press("Control+Enter")  # adds it
        assert focused(page).startswith("BUTTON#.comment [DL-001:")
        assert "Why mirror greet()" in page.text_content("#DL-001 .pending")

        # A comment on line 4 of src/app.py: the form opens right under that line.
        page.locator("button.ln[data-anchor='CC-001'][data-line='4']").focus()
        page.keyboard.press("Enter")
        assert 0 <= gap(page, "#CC-001-L4", "#comment-form") < 20
        page.fill("#comment-text", "Log every farewell here")
        page.click("#comment-form button[type=submit]")
        assert page.text_content("#comment-count") == "2"
        assert focused(page) == "BUTTON#.ln [CC-001:4]"
        assert 0 <= gap(page, "#CC-001-L4", "#CC-001 tr.pending-row") < 5  # on its line
        assert "Log every farewell here" in page.text_content("#CC-001 tr.pending-row")

        # Removing one keeps the focus on the page; one tab stop per diff.
        page.click("#comments li:first-child button.remove")
        assert page.text_content("#comment-count") == "1"
        assert not focused(page).startswith("BODY")
        page.click("button.comment[data-anchor='DL-001']")
        page.fill("#comment-text", "Why mirror greet()? Say why in the decision.")
        page.keyboard.press("Control+Enter")
        tab_stops = page.evaluate(
            "document.querySelectorAll('button.ln:not([tabindex=\"-1\"])').length"
        )
        assert tab_stops == page.evaluate("document.querySelectorAll('table.diff').length")

        # The limits hold against a page that skips its own checks.
        too_big = page.evaluate(
            """async () => (await fetch('request-changes?token=' + document.body.dataset.token, {
                method: 'POST',
                headers: {'Content-Type': 'application/json',
                          'X-CSRF-Token': document.body.dataset.csrf},
                body: JSON.stringify({feedback: 'x'.repeat(2000000)})})).status"""
        )
        assert too_big == 413
        assert page.get_attribute("#comment-text", "maxlength") == "2000"

        page.fill("#feedback", "Add logging, and record the risk of noisy logs.")
        page.reload()  # unsent words survive a reload: the comments and the overall feedback
        page.wait_for_selector("body[data-live='1']")
        assert page.input_value("#feedback") == "Add logging, and record the risk of noisy logs."
        assert page.text_content("#comment-count") == "2"
        assert page.evaluate(  # leaving with unsent words asks first
            """() => { const e = new Event('beforeunload', {cancelable: true});
            window.dispatchEvent(e); return e.defaultPrevented; }"""
        )
        shot("2-commented", "CC-001")
        page.screenshot(path=str(ARTIFACTS / "review-page-1280.png"), full_page=False)

        first_shown = page.get_attribute("#state", "data-sha256")
        page.click("#request-changes")
        page.wait_for_selector("#message.ok:has-text('Changes requested')")
        page.wait_for_selector("#state[data-status='design']", state="attached")
        shot("3-changes-requested", "status")
        code, out, err = finished(first_wait)
        assert code == 0, err  # the wait printed the rework step, which has run
        assert out.startswith("Sent back: planner step 3 follows (run here: do not run it again).")

        session = json.loads((state_dir / "session.json").read_text())
        assert session["reviews"][0]["comments"] == [
            {"anchor": "CC-001", "line": 4, "text": "Log every farewell here"},
            {
                "anchor": "DL-001",
                "line": None,
                "text": "Why mirror greet()? Say why in the decision.",
            },
        ]
        assert session["reviews"][0]["sha256"] == first_shown  # what round 1 showed
        design = Output(out)
        assert design.header.startswith("PLANNER 3/11") and str(state_dir) in out
        assert "on CC-001 line 4: Log every farewell here" in design.text
        agent.plan("risk", "add", "--risk", "Noisy logs", "--mitigation", "log at debug level")
        round_two = back_to_review(agent, design)
        assert "Review round 2" in round_two.text

        page.wait_for_selector("#R-001")  # arrived by server-sent event, no reload
        page.wait_for_selector("#state[data-in-review='1']", state="attached")
        assert "Changed since review round 1" in page.text_content("#since")
        assert page.text_content("#message") == ""  # "changes requested" is old news now
        assert "Round 1 on line 4: Log every farewell here" in page.text_content("#CC-001")
        shot("4-revised", "since")

        # The same review at 390 px: nothing wider than the window; the form by its line.
        phone = browser.new_page(viewport={"width": 390, "height": 844})
        phone.set_default_timeout(TIMEOUT_MS)
        watch_console(phone, errors)
        phone.goto(url)
        phone.wait_for_selector("body[data-live='1']")
        assert overflow(phone) == 0
        phone.locator("button.ln[data-anchor='CC-001'][data-line='5']").scroll_into_view_if_needed()
        before = phone.evaluate("window.scrollY")
        phone.click("button.ln[data-anchor='CC-001'][data-line='5']")
        assert abs(phone.evaluate("window.scrollY") - before) < 400  # no jump to the sidebar
        assert 0 <= gap(phone, "#CC-001-L5", "#comment-form") < 20
        assert overflow(phone) == 0
        assert beside_its_heading(phone)
        phone.keyboard.type("Return a constant? " + "Say why the greeting must stay short. " * 4)
        phone.keyboard.press("Control+Enter")
        assert within_its_diff(phone, "#CC-001 tr.pending-row .pending")
        assert within_its_diff(phone, "#CC-001 tr.said-row .said")  # round 1's, too
        phone.click("button.ln[data-anchor='CC-001'][data-line='5']")
        phone.keyboard.type("Return a constant?")
        shot("review-page-390", "CC-001", phone)
        phone.keyboard.press("Escape")
        assert focused(phone) == "BUTTON#.ln [CC-001:5]"
        phone.evaluate("document.getElementById('audit-details').open = true")
        phone.evaluate("document.getElementById('history-details').open = true")
        assert overflow(phone) == 0

        second_wait = start(["plan", "review", "wait", "--timeout", "5m"], project, agent.env)
        shown = phone.get_attribute("#state", "data-sha256")
        phone.click("#approve")  # no name: nothing is sent
        assert phone.is_hidden("#approve-confirm")
        phone.fill("#approver", "ann")
        phone.click("#approve")
        confirm = phone.text_content("#confirm-text")
        assert f"sha256 {shown}" in confirm and "review round 2" in confirm and "ann" in confirm
        assert focused(phone).startswith("BUTTON#approve-yes")
        shot("5-confirm", "verdict", phone)
        phone.evaluate("sessionStorage.clear()")
        phone.click("#approve-yes")
        phone.wait_for_selector("#message.ok:has-text('Approved. Next: executor --step 1')")
        # approved, or already executing: the agent's `plan review wait` runs executor step 1
        approved = "#state[data-status='approved'], #state[data-status='executing']"
        phone.wait_for_selector(approved, state="attached")
        settle(phone)
        phone.wait_for_timeout(1500)  # the page's own reloads after the verdict
        assert "Approved. Next: executor --step 1" in phone.text_content("#message")
        shot("6-approved", "status", phone)

        code, out, err = finished(second_wait)
        # the agent's wait runs executor step 1 in the same call (docs/design.md, "One call
        # per gate"), as the approval's NEXT line would have had it run next
        assert code == 0, err
        assert out.startswith("Approved: executor step 1 follows") and "EXECUTOR 1/9" in out
        session = json.loads((state_dir / "session.json").read_text())
        plan = json.loads((state_dir / "plan.json").read_text())
        assert session["status"] == "executing" and session["approval"]["by"] == "ann"
        assert session["approval"]["sha256"] == shown == plan_hash(plan)
        assert session["reviews"][-1]["sha256"] == shown
        # 413s are the limits working, not page errors; nothing else may be logged.
        assert [e for e in errors if "413" not in e] == []
        print(f"screenshots: {ARTIFACTS}")
    finally:
        for process in (server, first_wait):
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=10)
