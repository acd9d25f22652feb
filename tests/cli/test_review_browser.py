"""The review page in a real headless Chromium (Debian's, driven by Playwright): open, comment
on a decision and on a diff line, request changes; the scripted agent revises; the page
updates by itself; approve. `plan review wait` runs beside it and returns each verdict's route.

Screenshots of each stage go to tests/artifacts/review-page/ (git-ignored). Skips, saying
why, when Playwright or Chromium cannot start (apt-get install -y chromium).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from bench.agent import Output
from state.approval import plan_hash
from tests.cli.review_helpers import back_to_review, to_review
from tests.conftest import BIN, REPO

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


def test_review_in_the_browser(browser: Any, project: Path) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    agent, review = to_review(project)
    state_dir = Path(review.state_dir)
    server = start(["plan", "review", "open", "--no-browser"], project, agent.env)
    first_wait = start(["plan", "review", "wait", "--timeout", "5m"], project, agent.env)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "?token=" in url, server.stderr
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(TIMEOUT_MS)

        def shot(name: str, at: str) -> None:
            settle(page)
            page.evaluate(f"document.getElementById('{at}').scrollIntoView()")
            page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=False)

        page.goto(url)
        page.wait_for_selector("body[data-live='1']")  # the event stream is open
        assert page.title() == "Review: Farewell"
        shot("1-opened", "status")

        page.click("button.comment[data-anchor='DL-001']")
        page.keyboard.type("Why mirror greet()? Say why in the decision.")
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")  # Add comment, by keyboard
        page.locator("button.ln[data-anchor='CC-001'][data-line='7']").focus()
        page.keyboard.press("Enter")
        page.fill("#comment-text", "Log every farewell here")
        page.click("#comment-form button[type=submit]")
        assert page.text_content("#comment-count") == "2"
        page.fill("#feedback", "Add logging, and record the risk of noisy logs.")
        shot("2-commented", "M-001")

        page.click("#request-changes")
        page.wait_for_selector("#message.ok:has-text('Changes requested')")
        page.wait_for_selector("#state[data-status='design']", state="attached")
        shot("3-changes-requested", "status")
        code, out, err = finished(first_wait)
        assert code == 0, err  # the wait printed the rework step, which has run
        assert out.startswith("Sent back: planner step 3 follows (run here: do not run it again).")

        session = json.loads((state_dir / "session.json").read_text())
        assert session["reviews"][0]["comments"] == [
            {
                "anchor": "DL-001",
                "line": None,
                "text": "Why mirror greet()? Say why in the decision.",
            },
            {"anchor": "CC-001", "line": 7, "text": "Log every farewell here"},
        ]
        design = Output(out)
        assert design.header.startswith("PLANNER 3/11") and str(state_dir) in out
        assert "on CC-001 line 7: Log every farewell here" in design.text
        agent.plan("risk", "add", "--risk", "Noisy logs", "--mitigation", "log at debug level")
        round_two = back_to_review(agent, design)
        assert "Review round 2" in round_two.text

        page.wait_for_selector("#R-001")  # arrived by server-sent event, no reload
        page.wait_for_selector("#state[data-in-review='1']", state="attached")
        assert "Changed since review round 1" in page.text_content("#since")
        shot("4-revised", "since")

        second_wait = start(["plan", "review", "wait", "--timeout", "5m"], project, agent.env)
        shown = page.get_attribute("#state", "data-sha256")
        page.fill("#approver", "ann")
        page.click("#approve")
        page.wait_for_selector("#message.ok:has-text('Approved')")
        page.wait_for_selector("#state[data-status='approved']", state="attached")
        shot("5-approved", "status")

        code, out, err = finished(second_wait)
        assert (code, out) == (0, f"NEXT: executor --step 1 --state-dir {state_dir}\n"), err
        session = json.loads((state_dir / "session.json").read_text())
        plan = json.loads((state_dir / "plan.json").read_text())
        assert session["status"] == "approved" and session["approval"]["by"] == "ann"
        assert session["approval"]["sha256"] == shown == plan_hash(plan)
        print(f"screenshots: {ARTIFACTS}")
    finally:
        for process in (server, first_wait):
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=10)
