"""No check-then-use for file tools (PRODUCT.md §7.2, issue 29 item 1): a file-tool target is
judged on the path as given, with no link anywhere on it from the worktree down; the sandbox
cannot make a link (seccomp); the worktree holds none (links of the base commit are checked
out as files)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import crashpoints as cp
from tests.hooks.test_guard import ALLOW, DENY, decide, home, make_session, project, write
from tests.hooks.test_sandbox import env, make_project, needs_bwrap, run_wrapped, trees, wrap_in

__all__ = ["env", "home", "project"]  # fixtures shared with tests/cli/

TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")


@pytest.fixture
def tree(project: Path) -> Path:
    make_session(project, "s1")
    tree = project / ".planner" / "s1" / "worktree"
    (tree / "src" / "deep").mkdir(parents=True)
    (tree / "src" / "app.py").write_text("print('hi')\n")
    return tree


@pytest.mark.parametrize("tool", TOOLS)
def test_a_link_anywhere_on_the_path_is_denied(tree, project, tool):
    outside = project / "elsewhere"
    outside.mkdir()
    inside = tree / "src"
    assert decide(write(tree / "x" / "deep" / "app.py", project, tool))[0] == ALLOW
    for link, target in ((tree / "x", outside), (tree / "src" / "y", inside)):
        link.symlink_to(target)  # into the project, and even one staying inside
    for path in (tree / "x" / ".gitconfig", tree / "x", tree / "src" / "y" / "deep" / "z.py"):
        decision, reason = decide(write(path, project, tool))
        assert decision == DENY and "has a link on its path" in reason, path
    assert decide(write(tree / "src" / "app.py", project, tool))[0] == ALLOW


def test_the_path_is_judged_as_given_not_as_resolved(tree, project):
    """`..` is refused whatever it would resolve to; the worktree named through a link (a
    link to the worktree itself) is not the worktree."""
    for path in (f"{tree}/src/../app.py", f"{tree}/src/deep/../../x.py", "../worktree/a.py"):
        decision, reason = decide(write(path, tree / "src"))
        assert decision == DENY and "as given" in reason, path
    alias = project / "alias"
    alias.symlink_to(tree)
    assert decide(write(alias / "a.py", project))[0] == DENY
    assert decide(write(f"{tree}//src/./new.py", project))[0] == ALLOW
    # a worktree that is itself a link (planted by whatever means) opens nothing it names
    tree.rename(project / "real-tree")
    tree.symlink_to(project)
    for path in (tree / "README.md", project / "README.md", project / "real-tree" / "a.py"):
        assert decide(write(path, project))[0] == DENY, path


def test_a_hard_link_a_fifo_or_a_device_is_not_a_plain_file(tree, project):
    other = project / "secret.txt"
    other.write_text("the project's\n")
    os.link(other, tree / "hard.txt")
    os.mkfifo(tree / "fifo")
    for name, why in (("hard.txt", "hard link"), ("fifo", "not a plain file")):
        decision, reason = decide(write(tree / name, project))
        assert decision == DENY and why in reason
    assert other.read_text() == "the project's\n"


def test_gemini_and_codex_file_tools_get_the_same_judgement(tree, project):
    (tree / "x").symlink_to(project)
    for name in ("write_file", "replace"):
        payload = {"tool_name": name, "tool_input": {"file_path": str(tree / "x" / "a.py")}}
        decision, reason = decide({**payload, "cwd": str(project)}, "gemini")
        assert decision == DENY and "has a link on its path" in reason
    patch = "*** Begin Patch\n*** Add File: x/evil.py\n+print(1)\n*** End Patch\n"
    payload = {"tool_name": "apply_patch", "tool_input": {"command": patch}, "cwd": str(tree)}
    decision, reason = decide(payload, "codex")
    assert decision == DENY and "has a link on its path" in reason
    moved = patch.replace("*** Add File: x/evil.py", "*** Update File: src/app.py\n*** Move to: x")
    payload["tool_input"] = {"command": moved}
    assert decide(payload, "codex")[0] == DENY


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    parts=st.lists(st.sampled_from(["a", "b", "src", "deep", "c.py"]), min_size=1, max_size=5),
    link_at=st.integers(0, 5),
)
def test_any_path_with_a_link_on_it_is_denied_and_any_without_is_allowed(
    tree, project, parts, link_at
):
    """Generative: a link planted at a random depth of a random path (when that depth is on
    the path) decides the verdict alone."""
    scratch = tree / "gen"
    subprocess.run(["rm", "-rf", str(scratch)], check=True)
    scratch.mkdir()
    linked = link_at < len(parts)
    if linked:
        parent = scratch.joinpath(*parts[:link_at])
        parent.mkdir(parents=True, exist_ok=True)
        (parent / parts[link_at]).symlink_to(project)
    verdict = decide(write(scratch.joinpath(*parts), project))[0]
    assert verdict == (DENY if linked else ALLOW)


# -- the sandbox makes no link ----------------------------------------------------------------


@needs_bwrap
def test_the_sandbox_cannot_make_a_link_of_any_kind(env, tmp_path):
    project = make_project(tmp_path / "p")
    tree = project / ".planner" / "s1" / "worktree"
    (tree / "a").write_text("a\n")
    calls = (
        "import os\n"
        "for call in (lambda: os.symlink('/', 'l1'), lambda: os.link('a', 'l2'),\n"
        "             lambda: os.symlink('/', 'l3', dir_fd=os.open('.', os.O_RDONLY)),\n"
        "             lambda: os.link('a', 'l4', src_dir_fd=os.open('.', os.O_RDONLY))):\n"
        "    try:\n"
        "        call(); print('MADE')\n"
        "    except OSError as e:\n"
        "        print(e.errno)\n"
    )
    script = f'cd {tree} && python3 -c "{calls}"; ln -s {project} x; ln a y; cp -a a z; ls'
    before = trees(project, tmp_path / "home")
    done = run_wrapped(wrap_in(project, script, env), project)
    assert done.stdout.split() == ["1", "1", "1", "1", "a", "z"], done.stdout + done.stderr
    assert done.stderr.count("Operation not permitted") == 2
    assert not any(p.is_symlink() for p in tree.rglob("*"))
    assert trees(project, tmp_path / "home") == before


# -- the worktree holds no link ---------------------------------------------------------------


def linked_project(root: Path) -> Path:
    """A project whose base commit holds links: out of the project (absolute), up out of the
    worktree (relative), and one inside."""
    root.mkdir()
    cp.new_project(root)
    (root / "abs").symlink_to("/etc")
    (root / "src" / "up").symlink_to("../../..")
    (root / "docs").symlink_to("src")
    cp.git(root, "add", "-A")
    cp.git(root, "commit", "-qm", "links")
    return root


def test_links_of_the_base_commit_are_checked_out_as_files(tmp_path):
    project = linked_project(tmp_path / "p")
    cp.planning(project)
    tree = Path(cp.ok(project, ["plan", "worktree"]).strip())
    assert not [p for p in tree.rglob("*") if p.is_symlink()]
    assert (tree / "abs").read_text() == "/etc" and (tree / "src" / "up").read_text() == "../../.."
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=tree, capture_output=True, text=True, check=True
    )
    assert status.stdout == ""  # git reads them as the links they stand for
    cp.ok(project, ["plan", "change", "capture"])
    assert "abs" not in cp.ok(project, ["plan", "status"])


def test_an_older_worktree_loses_its_links_once(tmp_path):
    """A worktree made before this rule (its git dir without core.symlinks false): the next
    `plan worktree` turns its links into the files git would write, and says nothing changed."""
    project = linked_project(tmp_path / "p")
    state = cp.planning(project)
    tree = Path(cp.ok(project, ["plan", "worktree"]).strip())
    config = state / "worktree.git" / "config"
    config.write_text(config.read_text().replace("\tsymlinks = false\n", ""))
    for name, target in (("abs", "/etc"), ("docs", "src"), ("src/up", "../../..")):
        (tree / name).unlink()
        (tree / name).symlink_to(target)
    assert (tree / "docs").is_symlink()
    assert Path(cp.ok(project, ["plan", "worktree"]).strip()) == tree
    assert not [p for p in tree.rglob("*") if p.is_symlink()]
    assert (tree / "docs").read_text() == "src" and "symlinks = false" in config.read_text()
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=tree, capture_output=True, text=True, check=True
    )
    assert status.stdout == ""
