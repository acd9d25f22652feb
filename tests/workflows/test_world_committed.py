"""What is committed verifies alone (PRODUCT.md §17): an amended plan, approved, amended,
re-approved and committed as the README says, verifies in a fresh `git clone`, where none
of the local files (history/, audit.jsonl, ACTIVE) exist; and `plan status` there lists the
sessions and how to pick one."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.agent import Output
from tests.conftest import run_in_process as run  # `plan` and `planner` in this process
from tests.workflows.test_amend import WAVE_V2, approved_plan, git, through_gates


def amended_and_reapproved(project: Path) -> Path:
    """Approved, amended (M-002 reopened, its diff changed), re-approved: the state dir."""
    agent, _ = approved_plan(project)
    state = Path(json.loads(agent.plan("status", "--json").stdout)["state_dir"])
    opened = agent.plan("amend", "--reason", "wave twice", "--milestone", "M-002")
    out = Output(opened.stdout)  # plan amend printed planner step 3, with the amendment

    def code(state: Path) -> None:
        wave = state / "wave2.diff"
        wave.write_text(WAVE_V2)
        agent.plan("change", "set", "CC-002", "--diff", str(wave))
        wave.unlink()

    review_out = through_gates(agent, out, code)
    agent.shell(f"{review_out.if_pass} --by ann")
    session = json.loads((state / "session.json").read_text())
    assert session["status"] == "approved" and session["amendments"][0]["approved"]
    agent.plan("verify")
    return state


def commit_as_the_readme_says(project: Path) -> None:
    git(project, "add", "-A")
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "plan"],
        cwd=project,
        check=True,
    )


@pytest.mark.slow
def test_an_amended_plan_verifies_in_a_fresh_clone(project: Path, tmp_path: Path) -> None:
    state = amended_and_reapproved(project)
    commit_as_the_readme_says(project)
    tracked = git(project, "ls-files", ".planner").split()
    assert not any("/history/" in p or p.endswith("audit.jsonl") for p in tracked)

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(project), str(clone)], check=True)
    cloned = clone / ".planner" / state.name
    assert (cloned / "session.json").exists() and not (cloned / "history").exists()
    for args in (["verify", "--all"], ["verify", str(cloned)], ["validate", "--all"]):
        done = run("plan", *args, cwd=clone)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    github = run("plan", "verify", "--all", "--format", "github", cwd=clone)
    assert github.returncode == 0 and "::error" not in github.stdout

    # A tampered chain is still found there, and its fix names a file git has.
    session_path = cloned / "session.json"
    tampered = json.loads(session_path.read_text())
    tampered["amendments"][0]["approval"]["sha256"] = "0" * 64
    session_path.write_text(json.dumps(tampered))
    failed = run("plan", "verify", "--all", cwd=clone)
    assert failed.returncode == 3 and "(amendment-chain)" in failed.stdout
    assert "history/" not in failed.stdout, failed.stdout
    assert "restore session.json from git" in failed.stdout
    subprocess.run(["git", "checkout", "--", "."], cwd=clone, check=True)  # the fix it names
    assert run("plan", "verify", "--all", cwd=clone).returncode == 0


def test_status_in_a_fresh_clone_lists_the_sessions(project: Path, tmp_path: Path) -> None:
    from state.ops import session

    first = session.create(str(project), "Add a farewell", {}, non_interactive=False)
    second = session.create(str(project), "Add a wave", {}, non_interactive=False)
    commit_as_the_readme_says(project)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(project), str(clone)], check=True)
    assert not (clone / ".planner" / "ACTIVE").exists()

    listed = run("plan", "status", cwd=clone)
    assert listed.returncode == 0, listed.stderr
    for store in (first, second):
        assert Path(store.dir).name in listed.stdout
    assert "plan resume ID" in listed.stdout and "no session found" not in listed.stderr
    assert run("planner", "status", cwd=clone).stdout == listed.stdout  # the same answer
    doc = json.loads(run("plan", "status", "--json", cwd=clone).stdout)
    assert doc["active"] is None and len(doc["sessions"]) == 2

    # The fix it names makes progress: resume one, and status is that session's.
    name = Path(second.dir).name
    assert run("plan", "resume", name, cwd=clone).returncode == 0
    resumed = run("plan", "status", cwd=clone)
    assert resumed.returncode == 0 and f"session {name}:" in resumed.stdout

    # Exactly one open session: shown, with how to make it active; nothing is written.
    (clone / ".planner" / "ACTIVE").unlink()
    assert (
        run(
            "plan", "cancel", "--state-dir", second.dir.replace(str(project), str(clone)), cwd=clone
        ).returncode
        == 0
    )
    only = run("plan", "status", cwd=clone)
    assert only.returncode == 0 and f"session {Path(first.dir).name}:" in only.stdout
    assert f"plan resume {Path(first.dir).name}" in only.stdout
    assert not (clone / ".planner" / "ACTIVE").exists()


def test_status_with_no_session_at_all_still_says_so(project: Path) -> None:
    done = run("plan", "status", cwd=project)
    assert done.returncode == 2 and "no session found" in done.stderr
