"""Round 2 of `plan validate` / `plan verify` (PRODUCT.md §13, §16; issue 22): paths named
as people and GitHub read them, one JSON document for every outcome, session.json checked,
signatures that cover who and when, SARIF, --strict, and `plan ask` ending on Ctrl-D.

Every test drives the real `plan` console script in a real git repository.
"""

from __future__ import annotations

import os
from pathlib import Path

import pexpect

from tests.conftest import BIN, Plan

# ---------------------------------------------------------------- plan ask: Ctrl-D


def test_plan_ask_ctrl_d_with_questions_open_exits_130_keeping_answers(
    plan: Plan, project: Path
) -> None:
    for text in ("One?", "Two?", "Three?"):
        plan("question", "add", "--category", "scope", "--kind", "yes_no", "--text", text)
    env = {**{k: v for k, v in os.environ.items() if k != "CI"}, "TERM": "xterm"}
    child = pexpect.spawn(
        str(BIN / "plan"), ["ask"], cwd=str(project), encoding="utf-8", timeout=30, env=env
    )
    child.expect("Enter skips > ")
    child.sendline("yes")
    child.expect("recorded: yes")
    child.expect(r"\(2/3\) Q-002")
    child.sendeof()  # Ctrl-D on an empty line: end of input
    child.expect("Stopped; the answers given so far are saved.")
    child.expect("1 answered, 0 skipped, 2 still open")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert plan.json("show", "Q-001")["answer"] == "yes"
    assert plan.json("show", "Q-002")["answer"] is None
