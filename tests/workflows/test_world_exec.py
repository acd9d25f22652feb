"""The person's git moves between two executor commands (PRODUCT.md §17, issue 30 cases 1,
4-7): the executor decides from what the repository shows now, a refusal leaves the index
and the files as it found them, and following its fix reaches the milestone's commit.

Each test runs the real commands on a real git repository and does the person's act with
real git in between, exactly as the case describes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from state.repo import contention
from tests.cli.test_exec_refusals import executing
from tests.conftest import Plan, git
from tests.conftest import run as run_plan_script
from tests.plans import FAREWELL_DIFF, README_DIFF

DONE = ("exec", "done", "M-001", "--commit")
NOTE = "Call farewell(name) to say goodbye."


def seen(project: Path) -> dict[str, str | bytes]:
    """What a refusal must leave as it found it: the index, HEAD and the working tree."""
    files: dict[str, str | bytes] = {
        str(p.relative_to(project)): p.read_bytes()
        for p in sorted(project.rglob("*"))
        if p.is_file() and not {".git", ".planner"} & set(p.relative_to(project).parts)
    }
    files["<index>"] = git(project, "ls-files", "-s", "--stage")
    files["<staged>"] = git(project, "diff", "--cached", "--name-status")
    files["<head>"] = git(project, "rev-parse", "HEAD")
    return files


def runs(state: Path) -> dict[str, dict[str, object]]:
    doc = json.loads((state / "execution.json").read_text())
    return {m["id"]: m for m in doc["milestones"]}


def audit(state: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (state / "audit.jsonl").read_text().splitlines()]


def committed_files(project: Path, sha: str = "HEAD") -> list[str]:
    return git(project, "show", "--name-only", "--format=", sha).split()


# ---------------------------------------------------------------- case 1: the base is gone


@pytest.mark.slow
def test_a_base_commit_amended_and_pruned_is_exit_3_naming_it_and_plan_rebase(
    project: Path,
) -> None:
    state = executing(project)
    base = git(project, "rev-parse", "HEAD").strip()
    git(project, "commit", "--amend", "-qm", "init, reworded")
    git(project, "reflog", "expire", "--expire=now", "--all")
    git(project, "gc", "-q", "--prune=now")
    plan = Plan(project)
    before = seen(project), (state / "execution.json").read_bytes()
    for args in (("exec", "apply", "M-001"), ("exec", "commit", "M-001"), DONE):
        done = plan(*args, code=3)
        assert base[:12] in done.stderr and "no longer in the repository" in done.stderr
        assert "plan rebase" in done.stderr
    assert (seen(project), (state / "execution.json").read_bytes()) == before
    # the fix: plan rebase carries the plan onto HEAD, then the milestone goes through
    plan("rebase")
    plan("exec", "apply", "M-001")
    plan(*DONE)
    assert git(project, "log", "-1", "--format=%s").startswith("M-001 Docs")
    assert NOTE in git(project, "show", "HEAD:README.md")


# ---------------------------------------------------------------- case 4: a merge half done


def conflicted_merge(project: Path) -> None:
    """A branch and main both change src/app.py; merging it stops with a conflict."""
    git(project, "switch", "-qc", "other")
    (project / "src" / "app.py").write_text("x = 1\n")
    git(project, "commit", "-qm", "other", "--", "src/app.py")
    git(project, "switch", "-q", "main")
    (project / "src" / "app.py").write_text("x = 2\n")
    git(project, "commit", "-qm", "main", "--", "src/app.py")
    merge = subprocess.run(["git", "merge", "other"], cwd=project, capture_output=True)
    assert merge.returncode == 1 and (project / ".git" / "MERGE_HEAD").exists()


def test_a_merge_in_progress_is_refused_before_anything_is_staged(project: Path) -> None:
    state = executing(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    conflicted_merge(project)
    before, record = seen(project), (state / "execution.json").read_bytes()
    for args in (DONE, ("exec", "commit", "M-001"), ("exec", "apply", "M-001")):
        done = plan(*args, code=3)
        assert "a merge is in progress" in done.stderr and "MERGE_HEAD" in done.stderr
        assert "git merge --abort" in done.stderr and "partial commit" not in done.stderr
        assert seen(project) == before  # README.md not staged: the merge cannot take it
        assert (state / "execution.json").read_bytes() == record
    assert "README.md" not in before["<staged>"]
    # the fix as printed: finish the merge, then rerun: M-001 gets its own commit
    (project / "src" / "app.py").write_text("x = 3\n")
    git(project, "add", "src/app.py")
    git(project, "commit", "-qm", "merged", "--no-edit")
    assert "README.md" not in committed_files(project)
    plan(*DONE)
    assert committed_files(project) == ["README.md"]
    assert runs(state)["M-001"]["commit"] == git(project, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize(
    ("marker", "words"),
    [
        ("rebase-merge", "git rebase --abort"),
        ("CHERRY_PICK_HEAD", "git cherry-pick --abort"),
        ("REVERT_HEAD", "git revert --abort"),
    ],
)
def test_a_rebase_cherry_pick_or_revert_in_progress_is_refused(
    project: Path, marker: str, words: str
) -> None:
    """Marked as git marks them (a real rebase, cherry-pick and revert stop the same way)."""
    executing(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    path = project / ".git" / marker
    path.mkdir() if marker == "rebase-merge" else path.write_text("0" * 40 + "\n")
    before = seen(project)
    done = plan(*DONE, code=3)
    assert words in done.stderr and "nothing was changed" in done.stderr
    assert seen(project) == before


@pytest.mark.slow
def test_a_refused_commit_puts_the_index_back_and_keeps_the_persons_staging(
    project: Path,
) -> None:
    """git refuses the commit after staging (no committer identity): the index is as found,
    including what the person had staged in the milestone's file themselves."""
    state = executing(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    (project / "src" / "app.py").write_text("# mine\n")
    git(project, "add", "src/app.py")
    before = seen(project)
    home = project.parent / "home"
    home.mkdir()
    anonymous = {"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "EMAIL": ""}
    for key in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        anonymous[key] = ""
    git(project, "config", "user.useConfigOnly", "true")
    done = Plan(project, process=True)("exec", "commit", "M-001", env=anonymous, code=3)
    assert "git commit" in done.stderr
    assert seen(project) == before
    assert runs(state)["M-001"]["commit"] is None
    git(project, "config", "--unset", "user.useConfigOnly")
    plan("exec", "commit", "M-001")
    assert committed_files(project) == ["README.md"]


# ---------------------------------------------------------------- case 5: the person undid it


@pytest.mark.parametrize("undo", [("stash",), ("checkout", "--", ".")])
def test_an_apply_undone_by_the_person_is_applied_again(project: Path, undo: tuple[str]) -> None:
    state = executing(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    git(project, *undo)
    assert NOTE not in (project / "README.md").read_text()
    again = plan("exec", "apply", "M-001")
    assert "applied again" in again.stderr and "nothing to do" not in again.stderr
    assert NOTE in (project / "README.md").read_text()
    assert any(a.get("applied_again") == "M-001" for a in audit(state))
    assert "nothing to do" in plan("exec", "apply", "M-001").stderr  # now it is applied
    plan(*DONE)
    assert committed_files(project) == ["README.md"]


def test_nothing_to_commit_points_at_an_apply_that_makes_progress(project: Path) -> None:
    executing(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    git(project, "checkout", "--", ".")
    before = seen(project)
    done = plan("exec", "commit", "M-001", code=3)
    assert "fix: plan exec apply M-001" in done.stderr
    assert seen(project) == before
    plan("exec", "apply", "M-001")  # the fix changes the files
    assert seen(project) != before
    plan("exec", "commit", "M-001")


# ---------------------------------------------------------------- case 6: committed by hand


def test_a_milestone_the_person_committed_is_recognised_and_recorded(project: Path) -> None:
    state = executing(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    git(project, "commit", "-qam", "my own words")
    mine = git(project, "rev-parse", "HEAD").strip()
    assert "nothing to do" in plan("exec", "apply", "M-001").stderr
    done = plan(*DONE)
    assert f"committed by hand as {mine[:12]}" in done.stderr
    assert git(project, "rev-parse", "HEAD").strip() == mine  # no empty commit on top
    run = runs(state)["M-001"]
    assert run["commit"] == mine and run["status"] == "done"
    assert any(a.get("recognised_commit") == mine for a in audit(state))
    assert "already committed" in plan("exec", "apply", "M-001").stderr
    assert "nothing else to do" in plan("exec", "commit", "M-001").stderr


# ---------------------------------------------------------------- case 7: another git's lock

HOLD = "import sys, time; f = open(sys.argv[1], 'w'); print('ready', flush=True); time.sleep(60)"


def test_a_lock_another_process_holds_is_waited_for_then_named_with_its_holder(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = executing(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    lock = project / ".git" / "index.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(lock)], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"ready\n"
        before, record = seen(project), (state / "execution.json").read_bytes()
        monkeypatch.setattr(contention, "LOCK_WAIT_S", 0.5)
        done = plan(*DONE, code=3)
    finally:
        holder.kill()
        holder.wait()
    assert str(lock) in done.stderr and f"pid {holder.pid}" in done.stderr
    assert "remove the file manually" not in done.stderr and "rm --" not in done.stderr
    assert (state / "execution.json").read_bytes() == record
    lock.unlink()
    assert seen(project) == before
    plan(*DONE)  # the fix: once the other git is done, rerun
    assert committed_files(project) == ["README.md"]


def test_a_lock_released_within_the_bound_is_waited_out(project: Path) -> None:
    executing(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    lock = project / ".git" / "index.lock"
    lock.write_text("")
    release = threading.Timer(0.3, lock.unlink)
    release.start()
    try:
        plan(*DONE)
    finally:
        release.join()
    assert committed_files(project) == ["README.md"]


def test_a_stale_lock_says_so_and_how_to_check(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    executing(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    lock = project / ".git" / "index.lock"
    lock.write_text("")
    before = seen(project)
    monkeypatch.setattr(contention, "LOCK_WAIT_S", 0.2)
    done = plan(*DONE, code=3)
    assert "no running process has it open" in done.stderr
    assert "ps -C git" in done.stderr and f"rm -- '{lock}'" in done.stderr
    assert seen(project) == before
    os.unlink(lock)
    plan(*DONE)


# ---------------------------------------------------------------- plan rebase

TWO = [
    {"op": "milestone add", "args": {"name": "Docs", "file": ["README.md"], "acceptance": ["ok"]}},
    {"op": "intent add", "args": {"milestone": "$1", "file": "README.md", "behavior": "docs"}},
    {"op": "change add", "args": {"intent": "$2", "file": "README.md", "diff": README_DIFF}},
    {"op": "milestone add", "args": {"name": "Bye", "file": ["src/app.py"], "acceptance": ["ok"]}},
    {"op": "intent add", "args": {"milestone": "$4", "file": "src/app.py", "behavior": "bye"}},
    {"op": "change add", "args": {"intent": "$5", "file": "src/app.py", "diff": FAREWELL_DIFF}},
]


def executing_two(project: Path) -> Path:
    """An executing session with M-001 (README.md) and M-002 (src/app.py)."""
    from state.ops import session
    from state.storage import schema

    store = session.create(str(project), "Two", {}, non_interactive=True)
    Plan(project)("apply", "-", "--state-dir", store.dir, input=json.dumps(TWO))
    with store.transaction("test") as tx:
        tx.edit("session")["status"] = "executing"
        runs = [
            {**schema.defaults("execution", "MilestoneRun"), "id": m["id"]}
            for m in tx.read("plan")["milestones"]
        ]
        base = tx.read("session")["base_commit"]
        tx.edit_or_create(
            "execution", {**schema.defaults("execution"), "base_commit": base, "milestones": runs}
        )
    return Path(store.dir)


def upstream(project: Path) -> str:
    """A commit on another branch from the first commit, touching neither planned file: what
    the person rebases their branch onto."""
    git(project, "switch", "-qc", "upstream", "main~1")
    (project / "LICENSE").write_text("MIT\n")
    git(project, "add", "LICENSE")
    git(project, "commit", "-qm", "license")
    git(project, "switch", "-q", "main")
    return "upstream"


def prune(project: Path) -> None:
    git(project, "reflog", "expire", "--expire=now", "--all")
    git(project, "gc", "-q", "--prune=now")


@pytest.mark.slow
def test_a_branch_rebased_under_an_execution_is_carried_by_plan_rebase(project: Path) -> None:
    state = executing_two(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    plan(*DONE)
    old = runs(state)["M-001"]["commit"]
    git(project, "rebase", "-q", upstream(project))
    git(project, "branch", "-qD", "upstream")
    prune(project)
    new = git(project, "log", "-1", "--format=%H", "--grep=M-001").strip()
    assert new and new != old
    before, record = seen(project), (state / "execution.json").read_bytes()
    for args in (("exec", "apply", "M-001"), ("exec", "commit", "M-001")):
        done = plan(*args, code=3)
        assert old[:12] in done.stderr and "plan rebase" in done.stderr
    assert (seen(project), (state / "execution.json").read_bytes()) == (before, record)
    done = plan("rebase")
    assert f"commit {old[:12]} rewritten as {new[:12]}" in done.stderr
    assert "every planned diff not yet committed applies" in done.stderr
    assert seen(project) == before  # rebase records; it changes no file of the project
    record = runs(state)
    assert record["M-001"]["commit"] == new
    base = json.loads((state / "execution.json").read_text())["base_commit"]
    assert base == git(project, "rev-parse", f"{new}^").strip()  # the upstream commit
    assert json.loads((state / "session.json").read_text())["base_commit"] == base
    assert any(a.get("rebased_onto") == base for a in audit(state))
    plan("exec", "apply", "M-002")
    plan("exec", "done", "M-002", "--commit")
    assert committed_files(project) == ["src/app.py"]
    assert "already committed" in plan("exec", "apply", "M-001").stderr
    again = plan("rebase")  # nothing moved since: the same base, nothing rewritten
    assert "rewritten" not in again.stderr


def test_a_milestone_commit_reworded_and_pruned_is_found_again(project: Path) -> None:
    state = executing_two(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    plan(*DONE)
    old = runs(state)["M-001"]["commit"]
    message = git(project, "log", "-1", "--format=%B")
    git(project, "commit", "--amend", "-qm", message.replace("M-001 Docs", "M-001 Docs, reworded"))
    prune(project)
    done = plan("exec", "commit", "M-001", code=3)
    assert old[:12] in done.stderr and "plan rebase" in done.stderr
    plan("rebase")
    assert runs(state)["M-001"]["commit"] == git(project, "rev-parse", "HEAD").strip()
    assert "nothing else to do" in plan("exec", "commit", "M-001").stderr


def test_a_commit_reworded_without_its_trailers_is_recognised_by_content(project: Path) -> None:
    state = executing_two(project)
    plan = Plan(project)
    plan("exec", "apply", "M-001")
    plan(*DONE)
    git(project, "commit", "--amend", "-qm", "docs, in my words")
    prune(project)
    done = plan("rebase")
    assert "M-001: its commit is not in HEAD's history any more" in done.stderr
    fix = "plan exec apply M-001, then plan exec commit M-001"
    assert fix in done.stderr
    plan("exec", "apply", "M-001")
    done = plan("exec", "commit", "M-001")
    mine = git(project, "rev-parse", "HEAD").strip()
    assert f"committed by hand as {mine[:12]}" in done.stderr
    assert runs(state)["M-001"]["commit"] == mine


def test_a_planned_diff_that_no_longer_applies_is_named_with_the_amendment(
    project: Path,
) -> None:
    state = executing_two(project)
    plan = Plan(project)
    (project / "src" / "app.py").write_text("def greet(name):\n    return 'yo ' + name\n")
    git(project, "commit", "-qam", "greet differently")
    done = plan("rebase")
    assert "M-002 CC-002: its planned diff no longer applies to the new base" in done.stderr
    assert "plan amend --reason 'carry onto HEAD' --milestone M-002" in done.stderr
    session = json.loads((state / "session.json").read_text())
    assert session["base_commit"] == git(project, "rev-parse", "HEAD").strip()
    assert session["status"] == "executing"  # the approved plan is not changed by rebase
    plan("exec", "apply", "M-001")  # what still applies goes on


def test_plan_rebase_refuses_what_it_cannot_carry(project: Path) -> None:
    state = executing_two(project)
    plan = Plan(project)
    conflicted_merge(project)
    before = (state / "session.json").read_bytes(), seen(project)
    assert "a merge is in progress" in plan("rebase", code=3).stderr
    assert ((state / "session.json").read_bytes(), seen(project)) == before
    git(project, "merge", "--abort")
    plan("cancel", "--reason", "done with it")
    assert "nothing to rebase" in plan("rebase", code=4).stderr


def test_plan_rebase_while_planning_moves_the_base_and_the_worktree_on_request(
    project: Path, session_dir: Path
) -> None:
    plan = Plan(project)
    tree = Path(plan("worktree").stdout.strip())
    (project / "LICENSE").write_text("MIT\n")
    git(project, "add", "LICENSE")
    git(project, "commit", "-qm", "license")
    head = git(project, "rev-parse", "HEAD").strip()
    done = plan("rebase", code=3)
    assert "--drop-worktree" in done.stderr and "plan change capture" in done.stderr
    assert tree.is_dir()
    plan("rebase", "--drop-worktree")
    assert not tree.exists()
    assert json.loads((session_dir / "session.json").read_text())["base_commit"] == head
    again = Path(plan("worktree").stdout.strip())
    assert (again / "LICENSE").read_text() == "MIT\n"  # made again from the new base


ONLY_APP = TWO[3:]
ONLY_APP[1] = {**ONLY_APP[1], "args": {**ONLY_APP[1]["args"], "milestone": "$1"}}
ONLY_APP[2] = {**ONLY_APP[2], "args": {**ONLY_APP[2]["args"], "intent": "$2"}}


@pytest.mark.slow
def test_two_sessions_commit_at_once_while_an_editor_polls_git_status(project: Path) -> None:
    """Each session's commit waits out the other's (and the editor's) index.lock: both land."""
    from state.ops import session
    from state.storage import schema

    first = executing(project)
    store = session.create(str(project), "Bye", {}, non_interactive=True)
    Plan(project)("apply", "-", "--state-dir", store.dir, input=json.dumps(ONLY_APP))
    with store.transaction("test") as tx:
        tx.edit("session")["status"] = "executing"
        run = {**schema.defaults("execution", "MilestoneRun"), "id": "M-001"}
        base = tx.read("session")["base_commit"]
        tx.edit_or_create(
            "execution", {**schema.defaults("execution"), "base_commit": base, "milestones": [run]}
        )
    second = Path(store.dir)
    plan = Plan(project, process=True)
    for state in (first, second):
        plan("exec", "apply", "M-001", "--state-dir", str(state))
    stop = threading.Event()

    def editor() -> None:  # its `git status` refreshes the index, under index.lock
        while not stop.is_set():
            subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=project)

    polling = [threading.Thread(target=editor) for _ in range(3)]
    for t in polling:
        t.start()
    results: dict[Path, subprocess.CompletedProcess[str]] = {}

    def commit(state: Path) -> None:
        results[state] = run_plan(project, *DONE, "--state-dir", str(state))

    try:
        both = [threading.Thread(target=commit, args=(s,)) for s in (first, second)]
        for t in both:
            t.start()
        for t in both:
            t.join()
    finally:
        stop.set()
        for t in polling:
            t.join()
    for state, done in results.items():
        assert done.returncode == 0, (state, done.stderr)
        assert "Traceback" not in done.stderr
    subjects = git(project, "log", "--format=%s").splitlines()
    assert {"M-001 Docs: CI-001", "M-001 Bye: CI-001"} <= set(subjects)
    assert git(project, "status", "--porcelain", "--untracked-files=no") == ""
    assert runs(first)["M-001"]["commit"] != runs(second)["M-001"]["commit"], (
        [d.stderr for d in results.values()],
        git(project, "log", "--stat", "--format=%H %s"),
    )


def run_plan(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_plan_script("plan", *args, cwd=project)
