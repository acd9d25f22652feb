"""Agent-written data is never code outside the sandbox (§7.2): the product's own commands
never take a repository inside `.planner/` for a project, and every git call it makes runs
nothing a repository's configuration names (fsmonitor, hooks, filters of a nested
repository, external diff, textconv, an implicit bare repository).

Each attack is carried out for real; the project, its .git and $HOME are compared before
and after, and the marker the planted program would write must not exist."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest

from state.repo import git
from tests.conftest import git as git_cmd
from tests.conftest import run, run_in_process


def snapshot(root: Path, skip: Path | None = None) -> dict[str, str]:
    """Every file (and link) under `root` by path, with a hash of its content."""
    found = {}
    for here, dirs, files in os.walk(root):
        if skip is not None and Path(here) == skip.parent:
            dirs[:] = [d for d in dirs if Path(here, d) != skip]
        for name in [*files, *dirs]:
            path = Path(here, name)
            if path.is_symlink():
                found[str(path)] = "-> " + os.readlink(path)
            elif path.is_file():
                found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def program(path: Path, marker: Path) -> Path:
    """A script that leaves `marker` (what a planted filter, fsmonitor or driver would run)."""
    path.write_text(f"#!/bin/sh\necho ran >> {marker}\ncat\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def planted_repository(where: Path, marker: Path, filters: bool = True) -> None:
    """A real repository whose own config runs `marker`'s program from an fsmonitor, a hook,
    a pager, a textconv, an external diff and (with `filters`) a clean filter for every file;
    a.txt changed at the same size, so git must read it (through the filter) to compare."""
    where.mkdir(parents=True)
    git_cmd(where, "init", "-q")
    (where / "a.txt").write_text("one\n")
    git_cmd(where, "add", "a.txt")
    git_cmd(where, "commit", "-qm", "first")
    script = program(where.parent / f"{where.name}-evil.sh", marker)
    drivers = [("filter.x.clean", str(script)), ("filter.x.smudge", str(script))]
    for key, value in (
        *(drivers if filters else []),
        ("diff.x.textconv", str(script)),
        ("diff.external", str(script)),
        ("core.fsmonitor", str(script)),
        ("core.pager", str(script)),
    ):
        git_cmd(where, "config", key, value)
    (where / ".gitattributes").write_text("* filter=x diff=x\n" if filters else "* diff=x\n")
    (where / "a.txt").write_text("two\n")
    later = (where / "a.txt").stat().st_mtime + 100
    os.utime(where / "a.txt", (later, later))
    hooks = where / ".git" / "hooks"
    program(hooks / "pre-commit", marker)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = t\n\temail = t@example.com\n")
    return home


def test_a_repository_planted_in_the_worktree_is_never_a_project(
    project: Path, home: Path, tmp_path: Path
) -> None:
    env = {"HOME": str(home)}
    started = run_in_process(
        "planner", "--step", "1", "--task", "Add a farewell", cwd=project, env=env
    )
    assert started.returncode == 0, started.stderr
    state = Path(started.stdout.split("STATE_DIR=", 1)[1].split()[0])
    marker = tmp_path / "MARKER"
    for sub in (state / "worktree" / "sub", state / "scratch" / "sub"):
        planted_repository(sub, marker)
        before = (snapshot(project, skip=sub.parent), snapshot(home))
        for argv in (
            ["planner", "--step", "1", "--task", "x"],
            ["plan", "status"],
            ["plan", "cancel", "--reason", "the agent's"],
            ["plan", "context", "scan", "--json"],
        ):
            done = run(argv[0], *argv[1:], cwd=sub, env=env)
            assert done.returncode == 4, (argv, done.stdout, done.stderr)
            assert "never takes a repository there for a project" in done.stderr
            assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
        assert not marker.exists()
        assert (snapshot(project, skip=sub.parent), snapshot(home)) == before
    status = run_in_process("plan", "status", "--json", cwd=project, env=env)
    assert '"status": "discovery"' in status.stdout  # the real session was not cancelled


def test_a_session_planted_in_the_worktree_never_makes_its_repository_the_project(
    project: Path, home: Path, tmp_path: Path
) -> None:
    """A copy of the real session put in `<worktree>/sub/.planner/fake`, named with
    --state-dir from the project: the session's project would be sub/, the agent's."""
    import shutil

    env = {"HOME": str(home)}
    started = run_in_process(
        "planner", "--step", "1", "--task", "Add a farewell", cwd=project, env=env
    )
    state = Path(started.stdout.split("STATE_DIR=", 1)[1].split()[0])
    marker = tmp_path / "MARKER"
    sub = state / "worktree" / "sub"
    planted_repository(sub, marker)
    fake = sub / ".planner" / "fake"
    shutil.copytree(state, fake, ignore=shutil.ignore_patterns("worktree", "scratch"))
    session = json.loads((fake / "session.json").read_text())  # the agent's own base commit
    session["base_commit"] = git_cmd(sub, "rev-parse", "HEAD").strip()
    (fake / "session.json").write_text(json.dumps(session))
    before = (snapshot(project, skip=sub.parent), snapshot(home))
    for argv in (
        ["plan", "context", "scan", "--json", "--state-dir", str(fake)],
        ["plan", "worktree", "--state-dir", str(fake)],
        ["plan", "change", "capture", "--state-dir", str(fake)],
    ):
        done = run(argv[0], *argv[1:], cwd=project, env=env)
        assert done.returncode != 0 and "Traceback" not in done.stderr, (argv, done.stderr)
    assert not marker.exists()
    assert (snapshot(project, skip=sub.parent), snapshot(home)) == before


def test_git_runs_nothing_the_repository_configures(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    repo = tmp_path / "repo"
    planted_repository(repo, marker, filters=False)  # filters: the named repository's own
    (repo / "b.txt").write_text("two\n")
    for args in (
        ("status", "--porcelain", "-uall"),
        ("diff",),
        ("diff", "HEAD"),
        ("ls-files", "--others"),
        ("log", "-p", "-1"),
        ("show", "HEAD"),
    ):
        git.run(str(repo), *args)
    assert not marker.exists()


def test_a_bare_repository_layout_is_not_taken_for_a_repository(tmp_path: Path) -> None:
    """A bare layout (HEAD, config, objects/, refs/) written into a directory: git run there
    by the product does not take it for a repository, so its fsmonitor never runs."""
    marker = tmp_path / "MARKER"
    evil = tmp_path / "worktree" / "evil"
    (evil / "objects").mkdir(parents=True)
    (evil / "refs").mkdir()
    (evil / "HEAD").write_text("ref: refs/heads/main\n")
    script = program(tmp_path / "fsmonitor.sh", marker)
    (evil / "config").write_text(f"[core]\n\tbare = true\n\tfsmonitor = {script}\n")
    done = git.run(str(evil), "status")
    assert done.returncode != 0 and b"bare" in done.stderr
    assert not marker.exists()


def test_a_nested_repository_committed_as_a_submodule_is_not_entered(tmp_path: Path) -> None:
    """A gitlink to a nested repository whose own config names a filter: status and diff of
    the outer repository do not run git inside it."""
    marker = tmp_path / "MARKER"
    outer = tmp_path / "outer"
    outer.mkdir()
    git_cmd(outer, "init", "-q")
    inner = outer / "inner"
    planted_repository(inner, marker)
    git_cmd(outer, "-c", "core.fsmonitor=false", "-c", "diff.ignoreSubmodules=all", "add", "inner")
    git_cmd(outer, "commit", "-qm", "outer")
    marker.unlink(missing_ok=True)
    for args in (("status", "--porcelain", "-uall"), ("diff",), ("diff", "HEAD")):
        git.run(str(outer), *args)
    assert not marker.exists()
