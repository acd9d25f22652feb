"""An amendment's scratch worktree starts from HEAD (PRODUCT.md §17): the committed milestones
and the commits made since (fixes) are there, so what is tried there is the project as it now
is; the milestones not committed yet are there as planned; capture records only the new edits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent import Output
from tests.workflows.helpers import judge_todo, review
from tests.workflows.test_amend import approved_plan, git, to_review


@pytest.mark.slow
def test_an_amendment_worktree_starts_from_head(project: Path) -> None:
    agent, approved = approved_plan(project)
    state = Path(json.loads(agent.plan("status", "--json").stdout)["state_dir"])
    agent.step(approved.route())  # executor 1, 2, 3
    agent.plan("exec", "apply", "M-001")
    agent.plan("exec", "done", "M-001", "--evidence", "ran it", "--commit")
    # a fix the execution needed, committed by the person: the amendment must see it
    (project / "src" / "util.py").write_text("def fixed():\n    return True\n")
    git(project, "add", "src/util.py")
    git(project, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "fix")
    head = git(project, "rev-parse", "HEAD").strip()
    base = json.loads((state / "session.json").read_text())["base_commit"]
    assert head != base

    # the amendment's step 6 makes its worktree (planning's, of the base commit, goes)
    opened = agent.plan("amend", "--reason", "wave twice", "--milestone", "M-002")
    out = Output(opened.stdout)  # plan amend printed planner step 3, with the amendment
    out = agent.step(to_review(out))  # 4
    judge_todo(agent, out, "plan-design")
    review(agent, "plan-design")
    out = agent.step(out.route("pass"))  # 5, which prints 6
    assert "PLANNER 6/11" in out.text and "STATE_DIR/worktree" in out.text
    made = agent.plan("worktree")
    tree = Path(made.stdout.strip())
    assert "created" not in made.stderr  # step 6 made it
    assert (tree / "src" / "util.py").exists()  # the fix commit is there
    assert "farewell" in (tree / "src" / "app.py").read_text()  # M-001, committed
    assert (tree / "src" / "wave.py").read_text() == "def wave():\n    return 'o/'\n"  # pending
    assert git(tree, "rev-parse", "HEAD").strip() == head  # a HEAD that resolves

    plan_before = json.loads((state / "plan.json").read_text())
    farewell = next(c for m in plan_before["milestones"] for c in m["code_changes"])
    (tree / "src" / "wave.py").write_text("def wave():\n    return 'o/ o/'\n")
    captured = agent.plan("change", "capture")
    assert "CC-002" in captured.stderr and "re-captured" in captured.stderr
    plan_after = json.loads((state / "plan.json").read_text())
    changes = {c["id"]: c for m in plan_after["milestones"] for c in m["code_changes"]}
    assert changes["CC-001"] == farewell  # the committed milestone is untouched
    assert "+    return 'o/ o/'" in changes["CC-002"]["diff"]
    assert "util.py" not in captured.stderr  # HEAD's own files are not edits

    # The person rewords the fix (HEAD) and prunes: the worktree's HEAD is gone, so it is
    # made again from the new HEAD, never handed out with a HEAD that does not resolve.
    git(project, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q",
        "--amend", "-m", "fix, reworded")  # fmt: skip
    git(project, "reflog", "expire", "--expire=now", "--all")
    git(project, "gc", "-q", "--prune=now")
    remade = agent.plan("worktree")
    assert head[:12] in remade.stderr and "gone from git" in remade.stderr
    new_head = git(project, "rev-parse", "HEAD").strip()
    assert git(tree, "rev-parse", "HEAD").strip() == new_head
    assert git(tree, "status", "--porcelain") == "?? src/wave.py\n"  # HEAD plus the plan
    assert "nothing captured" in agent.plan("change", "capture").stderr
