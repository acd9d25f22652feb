"""The scratch worktree with a private git dir: made, captured from and
removed with nothing written to the project's .git, which Codex keeps read-only; removed when
the session completes, is cancelled or fails. Real git repositories, real processes."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests import crashpoints as cp

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is missing")


def git_dir_digest(root: Path) -> dict[str, str]:
    """Every entry under the project's .git: its kind, mode and content (a change anywhere in
    it, a new file, a removed one or a touched index, shows)."""
    found = {}
    for top, dirs, files in os.walk(root / ".git"):
        for name in sorted(dirs + files):
            full = os.path.join(top, name)
            st = os.lstat(full)
            body = b""
            if os.path.isfile(full) and not os.path.islink(full):
                with open(full, "rb") as f:
                    body = f.read()
            key = os.path.relpath(full, root)
            found[key] = f"{oct(st.st_mode)} {st.st_mtime_ns} {hashlib.sha256(body).hexdigest()}"
    return found


def read_only_git(root: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """A product command with the project's .git bound read-only (as Codex's sandbox keeps
    it): root ignores file modes, a read-only bind stops root too."""
    dot = str(root / ".git")
    full = {k: v for k, v in os.environ.items() if k not in cp.DROP}
    full.update(cp.GIT_ID)
    wrap = ["bwrap", "--bind", "/", "/", "--ro-bind", dot, dot, "--dev", "/dev", "--proc", "/proc"]
    program = str(cp.BIN / argv[0]) if (cp.BIN / argv[0]).exists() else argv[0]
    return subprocess.run(
        [*wrap, "--", program, *argv[1:]],
        cwd=root,
        text=True,
        capture_output=True,
        env=full,
        timeout=120,
    )


def capture_all(fx: cp.Fixture) -> list[dict]:
    plan_doc = json.loads((fx.state / "plan.json").read_text())
    return [c for m in plan_doc["milestones"] for c in m["code_changes"]]


# ---------------------------------------------------------------- no write to the project's .git


def test_worktree_and_capture_write_nothing_under_the_projects_git(planning: cp.Fixture) -> None:
    before = git_dir_digest(planning.root)
    tree = cp.edit_worktree(planning.root)
    cp.ok(planning.root, ["plan", "change", "capture"])
    assert git_dir_digest(planning.root) == before
    assert not (planning.root / ".git" / "worktrees").exists()
    assert len(capture_all(planning)) == 4  # every edited file became a diff
    assert (tree / ".git").read_text() == "gitdir: ../worktree.git\n"
    alternates = planning.state / "worktree.git" / "objects" / "info" / "alternates"
    assert alternates.read_text() == str(planning.root / ".git" / "objects") + "\n"
    # git run by the agent in the worktree finds the private dir, detached at the base
    base = json.loads((planning.state / "session.json").read_text())["base_commit"]
    assert cp.git(tree, "rev-parse", "HEAD").strip() == base
    assert cp.git(tree, "rev-parse", "--absolute-git-dir").strip() == str(
        planning.state / "worktree.git"
    )
    assert "src/app.py" in cp.git(tree, "diff", "--name-only")
    assert cp.git(planning.root, "status", "--porcelain", "--", ".planner/*/worktree*") == ""


@needs_bwrap
def test_worktree_and_capture_work_with_the_projects_git_read_only(planning: cp.Fixture) -> None:
    before = git_dir_digest(planning.root)
    probe = read_only_git(planning.root, ["sh", "-c", "touch .git/probe"])
    if probe.returncode == 0 or "Read-only" not in probe.stderr:
        pytest.skip(f"bwrap cannot bind .git read-only here: {probe.stderr}")
    made = read_only_git(planning.root, ["plan", "worktree"])
    assert made.returncode == 0, made.stderr
    tree = Path(made.stdout.strip())
    for rel, text in cp.EDITS.items():
        (tree / rel).write_text(text)
    done = read_only_git(planning.root, ["plan", "change", "capture"])
    assert done.returncode == 0, done.stderr
    assert len(capture_all(planning)) == 4
    validated = read_only_git(planning.root, ["plan", "validate", "--phase", "code"])
    assert "Read-only" not in validated.stderr + validated.stdout
    cancelled = read_only_git(planning.root, ["plan", "cancel"])
    assert cancelled.returncode == 0, cancelled.stderr
    assert not tree.exists() and not (planning.state / "worktree.git").exists()
    assert git_dir_digest(planning.root) == before


def test_git_variables_in_the_environment_change_nothing(
    planning: cp.Fixture, tmp_path: Path
) -> None:
    """GIT_DIR and friends (git exports them to hooks) never steer the product's git."""
    decoy = tmp_path / "decoy"
    subprocess.run(["git", "init", "-q", str(decoy)], check=True)
    before = git_dir_digest(planning.root)
    env = {
        "GIT_DIR": str(decoy / ".git"),
        "GIT_WORK_TREE": str(decoy),
        "GIT_INDEX_FILE": str(decoy / "index"),
        "GIT_OBJECT_DIRECTORY": str(decoy / "objects"),
        "GIT_COMMON_DIR": str(decoy / ".git"),
    }
    made = cp.run(planning.root, ["plan", "worktree"], env)
    assert made.returncode == 0, made.stderr
    tree = Path(made.stdout.strip())
    assert (tree / "src" / "app.py").read_text() == cp.APP
    (tree / "src" / "app.py").write_text(cp.EDITS["src/app.py"])
    done = cp.run(planning.root, ["plan", "change", "capture"], env)
    assert done.returncode == 0, done.stderr
    assert [c["file"] for c in capture_all(planning)] == ["src/app.py"]
    assert git_dir_digest(planning.root) == before
    assert not (decoy / "index").exists() and not (tmp_path / "decoy" / "src").exists()
    assert cp.git(decoy, "rev-list", "--all") == ""


# ---------------------------------------------------------------- removal with the session


def gone(fx: cp.Fixture) -> bool:
    return not any((fx.state / name).exists() for name in ("worktree", "worktree.git"))


@pytest.mark.parametrize(
    "argv", [["plan", "cancel", "--reason", "no"], ["plan", "fail", "--error", "broke"]]
)
def test_the_worktree_is_removed_when_the_session_is_closed(
    planning: cp.Fixture, argv: list[str]
) -> None:
    cp.edit_worktree(planning.root)
    cp.ok(planning.root, ["plan", "change", "capture"])
    cp.ok(planning.root, argv)
    assert gone(planning)
    assert capture_all(planning)  # the captured diffs stay in the plan
    done = cp.run(planning.root, ["plan", "worktree"])
    assert done.returncode == 4 and "no worktree" in done.stderr
    assert gone(planning)


def test_the_commit_that_completes_the_session_removes_its_worktree(tmp_path: Path) -> None:
    """Executor step 9 completes the session in a store transaction (the whole walk is in
    tests/e2e/test_worktree_flow.py); the worktree goes with that commit."""
    from state.rules.lifecycle import transition
    from state.rules.session_store import Store

    root = tmp_path / "project"
    root.mkdir()
    fx = cp.Fixture(root, cp.executing(root))
    assert cp.worktree_state(fx.root, fx.state) == "ready"
    with Store(str(fx.state)).transaction("complete") as tx:
        transition(tx.edit("session"), "completed")
    assert gone(fx)


def test_a_closed_sessions_leftover_worktree_is_removed_by_the_next_command(
    planning: cp.Fixture,
) -> None:
    """Killed between the closing commit and the removal: the next command finishes it."""
    cp.edit_worktree(planning.root)
    session = json.loads((planning.state / "session.json").read_text())
    session["status"] = "cancelled"
    (planning.state / "session.json").write_text(json.dumps(session))
    (planning.state / "worktree.git" / "index").unlink()  # half removed, too
    cp.ok(planning.root, ["plan", "status"])
    assert gone(planning)


# ---------------------------------------------------------------- sessions made before


def legacy_worktree(fx: cp.Fixture) -> Path:
    """A worktree as older versions made it: `git worktree add` under the project's .git."""
    tree = fx.state / "worktree"
    base = json.loads((fx.state / "session.json").read_text())["base_commit"]
    subprocess.run(
        ["git", "worktree", "add", "-q", "--detach", str(tree), base], cwd=fx.root, check=True
    )
    return tree


def test_an_older_sessions_git_worktree_still_captures_and_is_removed(
    planning: cp.Fixture,
) -> None:
    tree = legacy_worktree(planning)
    assert (planning.root / ".git" / "worktrees").is_dir()
    assert cp.ok(planning.root, ["plan", "worktree"]).strip() == str(tree)  # kept, not rebuilt
    assert not (planning.state / "worktree.git").exists()
    (tree / "src" / "util.py").write_text(cp.EDITS["src/util.py"])
    cp.ok(planning.root, ["plan", "change", "capture"])
    assert [c["file"] for c in capture_all(planning)] == ["src/util.py"]
    cp.ok(planning.root, ["plan", "cancel"])
    assert gone(planning)
    assert not (planning.root / ".git" / "worktrees").exists()
    assert cp.git(planning.root, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_a_project_whose_gitignore_predates_the_git_dir_stays_clean(planning: cp.Fixture) -> None:
    """An older .planner/.gitignore ignores the worktree but not its git dir: the session gets
    a .gitignore of its own (ignoring itself), never a line in the project's .git."""
    home = planning.root / ".planner" / ".gitignore"
    home.write_text(home.read_text().replace("*/worktree.git/\n", ""))
    before = git_dir_digest(planning.root)
    cp.edit_worktree(planning.root)
    assert git_dir_digest(planning.root) == before  # before git status refreshes the index
    assert (planning.state / ".gitignore").read_text().splitlines()[1:] == [
        "/.gitignore",
        "/worktree/",
        "/worktree.git/",
    ]
    assert cp.git(planning.root, "status", "--porcelain", "-uall", "--", ".planner/*/w*") == ""
    session_ignore = f".planner/{planning.state.name}/.gitignore"
    assert session_ignore not in cp.git(planning.root, "status", "--porcelain", "-uall")


@pytest.mark.slow
def test_an_older_sessions_unfinished_git_worktree_is_made_again_privately(
    planning: cp.Fixture,
) -> None:
    tree = legacy_worktree(planning)
    admin = Path(cp.git(tree, "rev-parse", "--absolute-git-dir").strip())
    (admin / "locked").write_text("initializing")  # as a killed `git worktree add` leaves it
    (tree / "src" / "app.py").unlink()
    assert cp.ok(planning.root, ["plan", "worktree"]).strip() == str(tree)
    assert (tree / "src" / "app.py").read_text() == cp.APP
    assert (planning.state / "worktree.git" / "index").exists()
    assert not (planning.root / ".git" / "worktrees").exists()


@needs_bwrap
def test_an_older_sessions_git_worktree_goes_even_with_the_projects_git_read_only(
    planning: cp.Fixture,
) -> None:
    """Its registration cannot go then: the session still closes, the files go, and git sees
    the registration as prunable (its worktree is gone)."""
    tree = legacy_worktree(planning)
    done = read_only_git(planning.root, ["plan", "cancel"])
    assert done.returncode == 0, done.stderr
    assert not tree.exists()
    assert "prunable" in cp.git(planning.root, "worktree", "list", "--porcelain")
    assert cp.ok(planning.root, ["plan", "status"])
