"""A bare-repository layout written by a file tool is treated like `.git`, and in Codex git
is judged as if it may run in any directory of the worktree (PRODUCT.md §7.2; the rule is
hooks/guard_places.py git_files and planted_repository).

The attack (Codex): apply_patch adds `evil/HEAD`, `evil/config` (core.fsmonitor),
`evil/objects/`, `evil/refs/` in the worktree; `git status` run in `evil/` takes it for a
repository and the fsmonitor writes the project. Each test carries the calls out as the
client would after the guard's answer and compares the project, its .git and HOME.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.hooks.guard_setup import (
    SHELL_TOOL,
    env_for,
    judge,
    make_project,
    make_tree,
    payload,
    snapshot,
    verdict,
)

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="no bubblewrap here")


def layout(project: Path) -> dict[str, str]:
    """The planted repository: git run in it writes the project through its fsmonitor."""
    run = f"echo pwned >> {project}/README.md"
    config = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
    config += f"\tworktree = {project}\n\tfsmonitor = {run}; false\n"
    return {
        "evil/HEAD": "ref: refs/heads/main\n",
        "evil/config": config,
        "evil/objects/.keep": "",
        "evil/refs/.keep": "",
    }


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path)


def worktree_of(project: Path) -> Path:
    return project / ".planner" / "s1" / "worktree"


def patch(*body: str) -> str:
    return "\n".join(("*** Begin Patch", *body, "*** End Patch")) + "\n"


def write_call(dialect: str, tool: str, path: Path, text: str) -> tuple[str, dict[str, object]]:
    """One file-tool call writing `text` to `path`, in the tool's own input shape."""
    if tool == "apply_patch":
        lines = ("+" + line for line in text.split("\n"))
        return tool, {"command": patch(f"*** Add File: {path}", *lines)}
    if tool == "apply_patch_update":
        body = ("*** Update File: " + str(path), "@@", "-x", "+" + text)
        return "apply_patch", {"command": patch(*body)}
    if tool == "apply_patch_move":
        body = (f"*** Update File: {path.parent}/a.txt", f"*** Move to: {path}", "@@", "-a", "+b")
        return "apply_patch", {"command": patch(*body)}
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    return tool, {key: str(path), "content": text, "old_string": "x", "new_string": text}


FILE_TOOLS = [
    ("claude", "Write"),
    ("claude", "Edit"),
    ("claude", "MultiEdit"),
    ("claude", "NotebookEdit"),
    ("gemini", "write_file"),
    ("gemini", "replace"),
    ("codex", "apply_patch"),
    ("codex", "apply_patch_update"),
    ("codex", "apply_patch_move"),
]


def carry_out_write(kind: str, path: Path, text: str) -> None:
    """What the client does after the answer: writes the file unless denied."""
    if kind != "deny":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def run_git(kind: str, wrapped: str, workdir: Path, project: Path, home: Path) -> None:
    """`git status` as the client runs it after the answer: wrapped in the sandbox, on the
    host when allowed (here: bubblewrap with the project and HOME writable, as on the host)."""
    if kind in ("deny", "ask"):
        return
    if kind == "sandboxed":
        argv = ["bash", "-c", wrapped]
    else:
        base = str(project.parent)
        argv = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        argv += ["--tmpfs", "/tmp", "--bind", base, base, "bash", "-c", "git status"]
    subprocess.run(argv, cwd=workdir, env=env_for(home), capture_output=True, timeout=60)


@pytest.mark.parametrize(("dialect", "tool"), FILE_TOOLS)
def test_a_bare_layout_written_by_a_file_tool_is_denied(
    project: Path, dialect: str, tool: str
) -> None:
    home, worktree = project.parent / "home", worktree_of(project)
    (worktree / "evil").mkdir()
    (worktree / "evil" / "a.txt").write_text("a\n")
    before, home_before = snapshot(project), snapshot(home)
    kinds = []
    for name, text in layout(project).items():
        target = worktree / name
        call = write_call(dialect, tool, target, text)
        kind = verdict(judge(payload(*call, project), dialect, home), dialect)[0]
        kinds.append(kind)
        carry_out_write(kind, target, text)
    # HEAD is refused first; config, objects/ and refs/ may land (harmless without a HEAD)
    assert kinds[0] == "deny"
    assert not (worktree / "evil" / "HEAD").exists()
    for dialect_ in ("codex", "claude"):
        raw = payload(SHELL_TOOL[dialect_], {"command": "git status"}, worktree / "evil")
        kind, wrapped = verdict(judge(raw, dialect_, home), dialect_)
        run_git(kind, wrapped, worktree / "evil", project, home)
    changed = {k for k, _ in set(snapshot(project).items()) ^ set(before.items())}
    assert not {c for c in changed if "worktree/evil" not in c}, changed
    assert snapshot(home) == home_before


@pytest.mark.parametrize(("dialect", "tool"), FILE_TOOLS)
@pytest.mark.parametrize(
    "name",
    [
        "evil/config",
        "evil/objects/ab/cdef",
        "evil/refs/heads/main",
        "evil/hooks/post-checkout",
        "evil/info/attributes",
        "evil/worktrees/w/gitdir",
        "evil/packed-refs",
        "evil/sub/deeper/x.py",
    ],
)
def test_nothing_is_written_beside_a_head(
    project: Path, dialect: str, tool: str, name: str
) -> None:
    """A HEAD already there (the sandbox may write one in the worktree): the directory is a
    git directory, nothing is written in it or below."""
    home, worktree = project.parent / "home", worktree_of(project)
    make_tree(worktree, {"evil/HEAD": "ref: refs/heads/main\n", "evil/a.txt": "x\n"})
    call = write_call(dialect, tool, worktree / name, "x")
    kind, reason = verdict(judge(payload(*call, project), dialect, home), dialect)
    assert kind == "deny" and "repository" in reason, reason


@pytest.mark.parametrize(
    "name",
    [
        "evil/HEAD",
        "evil/head",
        "evil/HEAD.",  # names as a case-insensitive file system may match them
        "evil/HE\u200cAD",
        "x/y/commondir",
        "gitdir",
        "sub/.GIT/config",
        "sub/.git./config",
        "GIT~1/config",
    ],
)
def test_the_names_that_make_a_git_directory_are_denied_anywhere(project: Path, name: str) -> None:
    home, worktree = project.parent / "home", worktree_of(project)
    kind, reason = verdict(
        judge(payload("Write", {"file_path": str(worktree / name)}, project), "claude", home),
        "claude",
    )
    assert kind == "deny" and ("repository" in reason or "git's own" in reason), reason


@pytest.mark.parametrize(
    "name",
    ["src/config", "src/config.py", "config", "objects/model.py", "refs/notes.md", "hooks/a.sh"],
)
@pytest.mark.parametrize(("dialect", "tool"), FILE_TOOLS)
def test_ordinary_files_named_like_git_s_are_written(
    project: Path, dialect: str, tool: str, name: str
) -> None:
    """`config`, objects/, refs/ and hooks/ without a HEAD beside them are ordinary source."""
    home, worktree = project.parent / "home", worktree_of(project)
    (worktree / Path(name).parent).mkdir(parents=True, exist_ok=True)
    (worktree / Path(name).parent / "a.txt").write_text("a\n")
    call = write_call(dialect, tool, worktree / name, "x")
    assert verdict(judge(payload(*call, project), dialect, home), dialect)[0] == "allow"


def test_codex_judges_git_as_if_it_may_run_anywhere_in_the_worktree(project: Path) -> None:
    """Codex: git is allowed only while no directory of the worktree or the scratch dir could
    be taken for a repository; a layout there (written by a sandboxed command of another
    client, or before this rule) denies git wherever the hook input says it runs."""
    home, worktree = project.parent / "home", worktree_of(project)
    status = payload("Bash", {"command": "git status"}, project)
    assert verdict(judge(status, "codex", home), "codex")[0] == "allow"
    make_tree(worktree, layout(project))
    before, home_before = snapshot(project), snapshot(home)
    for cwd in (project, worktree, worktree / "evil"):
        for tool_input in ({"command": "git status"}, {"command": "go version"}):
            raw = payload("Bash", tool_input, cwd)
            kind, reason = verdict(judge(raw, "codex", home), "codex")
            if tool_input["command"].startswith("git"):
                assert kind == "deny" and "evil holds HEAD" in reason, reason
                run_git(kind, "", worktree / "evil", project, home)
    assert snapshot(project) == before
    assert snapshot(home) == home_before
    shutil.rmtree(worktree / "evil")
    make_tree(worktree, {"sub/.git/HEAD": "ref: refs/heads/main\n"})
    kind, reason = verdict(judge(status, "codex", home), "codex")
    assert kind == "deny" and "sub holds .git" in reason, reason
    # Claude Code and Gemini CLI run git in the sandbox, where the fsmonitor writes nothing
    # outside; their hook input says where it runs (cwd, Gemini's dir_path)
    assert verdict(judge(status, "claude", home), "claude")[0] == "sandboxed"


def test_gemini_dir_path_is_where_the_command_runs(project: Path) -> None:
    """Gemini CLI's run_shell_command runs in `dir_path` (resolved against the project): git
    there is judged by the repository it would find there."""
    home, worktree = project.parent / "home", worktree_of(project)
    make_tree(worktree, layout(project))
    call = {"command": "git status", "dir_path": str(worktree / "evil")}
    raw = payload("run_shell_command", call, project)
    off = {"PLANNER_SANDBOX": "off"}  # no sandbox: layer 1 alone must see the repository
    kind, reason = verdict(judge(raw, "gemini", home, **off), "gemini")
    assert kind == "deny" and "repository" in reason, reason
    plain = payload("run_shell_command", {"command": "git status"}, project)
    assert verdict(judge(plain, "gemini", home, **off), "gemini")[0] == "allow"


def test_the_harness_sees_the_planted_repository_write(project: Path) -> None:
    """The layout and `git status` in it really write the project (so the tests above can
    fail): the fsmonitor runs."""
    worktree = worktree_of(project)
    make_tree(worktree, layout(project))
    before = (project / "README.md").read_text()
    run_git("allow", "", worktree / "evil", project, project.parent / "home")
    assert (project / "README.md").read_text() != before
    assert json.dumps(snapshot(project))  # the snapshot reads the changed tree
