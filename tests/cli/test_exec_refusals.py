"""What the product refuses on its own, whatever the guard does: `plan exec …` while any
session of the project is planning; planned paths into .git/, .planner/ or out of the project
(when recorded and when applied); a session applying into any project but the one holding it.

Each test runs the real commands on a real git repository and compares the project's files
and its .git (refs, hooks, config, objects) before and after.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from state.ops import session
from state.storage import schema
from tests.cli import tree
from tests.conftest import Plan, git
from tests.plans import README_DIFF

DESIGN = [
    {"op": "milestone add", "args": {"name": "Docs", "file": ["README.md"], "acceptance": ["ok"]}},
    {"op": "intent add", "args": {"milestone": "$1", "file": "README.md", "behavior": "docs"}},
    {"op": "change add", "args": {"intent": "$2", "file": "README.md", "diff": README_DIFF}},
]
EXEC = [
    {"op": "exec start", "args": {"id": "M-001"}},
    {"op": "exec apply", "args": {"id": "M-001"}},
    {"op": "exec commit", "args": {"id": "M-001"}},
]


def project_files(project: Path) -> dict[str, bytes]:
    """Every file of the project and of its .git, .planner/ aside."""
    return {
        str(p.relative_to(project)): p.read_bytes()
        for p in sorted(project.rglob("*"))
        if p.is_file() and ".planner" not in p.relative_to(project).parts
    }


def set_status(state: Path, status: str) -> None:
    path = state / "session.json"
    doc = json.loads(path.read_text())
    doc["status"] = status
    path.write_text(json.dumps(doc, indent=2))


def executing(project: Path) -> Path:
    """A session past approval, as executor step 1 leaves it: status executing, a run per
    milestone. Its plan changes README.md (M-001)."""
    store = session.create(str(project), "Document", {}, non_interactive=True)
    Plan(project)("apply", "-", "--state-dir", store.dir, input=json.dumps(DESIGN))
    with store.transaction("test") as tx:
        plan = tx.read("plan")
        tx.edit("session")["status"] = "executing"
        runs = [
            {**schema.defaults("execution", "MilestoneRun"), "id": m["id"]}
            for m in plan["milestones"]
        ]
        base = tx.read("session")["base_commit"]
        tx.edit_or_create(
            "execution", {**schema.defaults("execution"), "base_commit": base, "milestones": runs}
        )
    return Path(store.dir)


# ---------------------------------------------------------------- nothing executes while planning


def test_exec_from_an_older_session_is_refused_while_a_new_one_plans(project: Path) -> None:
    older = executing(project)
    newer = Path(session.create(str(project), "Something else", {}, non_interactive=False).dir)
    plan = Plan(project)
    before, record = project_files(project), (older / "execution.json").read_bytes()
    saved = (newer / "session.json").read_bytes()
    state = ["--state-dir", str(older)]
    done = plan("apply", *state, "-", input=json.dumps(EXEC), code=4)
    assert f"session {newer.name} is planning (status discovery)" in done.stderr
    assert "nothing is applied while a plan is being made in this project" in done.stderr
    for op in (["exec", "apply", "M-001"], ["exec", "commit", "M-001"]):
        plan(*op, *state, code=4)
    plan("exec", "apply", "M-001", env={"PLANNER_STATE_DIR": str(older)}, code=4)
    assert project_files(project) == before
    assert (older / "execution.json").read_bytes() == record
    assert git(project, "log", "--format=%s") == "init\n"

    set_status(newer, "bogus")
    assert "has a status this version does not know" in plan(*EXEC_APPLY, *state, code=4).stderr
    (newer / "session.json").write_text("{not json")
    assert "cannot be read" in plan(*EXEC_APPLY, *state, code=4).stderr
    assert project_files(project) == before

    (newer / "session.json").write_bytes(saved)
    set_status(newer, "cancelled")  # once nothing plans, the same batch lands
    refused = plan("apply", *state, "-", input=json.dumps(EXEC), code=2)
    assert "run `plan exec commit M-001` on its own after it" in refused.stderr
    assert project_files(project) == before
    plan("apply", *state, "-", input=json.dumps(EXEC[:2]))  # the commit after the batch lands
    plan("exec", "commit", "M-001", *state)
    assert "Call farewell(name)" in (project / "README.md").read_text()
    assert git(project, "log", "-1", "--format=%s").startswith("M-001 Docs")


EXEC_APPLY = ("exec", "apply", "M-001")


def test_every_exec_command_is_refused_while_planning_in_a_batch_and_alone(
    project: Path,
) -> None:
    older = executing(project)
    newer = Path(session.create(str(project), "Planning", {}, non_interactive=False).dir)
    plan = Plan(project)
    execs = {n: c for n, c in tree.operations().items() if n.split()[0] == "exec"}
    assert set(execs) >= {"exec start", "exec apply", "exec commit", "exec done"}
    args = {"id": "M-001", "milestone": "M-001", "description": "d"}
    before = project_files(project), (older / "execution.json").read_bytes()
    for name, command in execs.items():
        assert command.op.__module__ == "state.ops.exec_commands", name  # the rule's home
        keys = {p.name for p in command.params} & set(args)
        batch = [{"op": name, "args": {k: args[k] for k in keys}}]
        done = plan("apply", "-", "--state-dir", str(older), input=json.dumps(batch), code=4)
        assert f"session {newer.name} is planning" in done.stderr, name
    for state in (older, newer):  # the planning session itself executes nothing either
        plan("exec", "start", "M-001", "--state-dir", str(state), code=4)
    assert (project_files(project), (older / "execution.json").read_bytes()) == before


def test_a_human_act_later_in_a_batch_stops_an_exec_apply_before_it(project: Path) -> None:
    state = executing(project)  # nothing plans: exec apply alone would land
    before = project_files(project), (state / "execution.json").read_bytes()
    batch = [EXEC[1], {"op": "cancel\t", "args": {"reason": "done by the agent"}}]
    done = Plan(project)("apply", "-", "--state-dir", str(state), input=json.dumps(batch), code=4)
    assert "operation 2: `plan cancel` is the person's act" in done.stderr
    assert (project_files(project), (state / "execution.json").read_bytes()) == before
    assert json.loads((state / "session.json").read_text())["status"] == "executing"


# ---------------------------------------------------------------- stored paths


def creating(path: str) -> str:
    return f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+[core]\n"


BAD = [
    ".git/config",
    ".git/hooks/post-commit",
    ".planner/ACTIVE2",
    ".GIT/config",
    "src/../.git/x",
    "/etc/passwd",
    "docs/.Planner/x",
    "src/gitdir/hooks/pre-commit",  # src/gitdir -> ../.git
    "src/out/x",  # src/out -> a directory outside the project
]


@pytest.fixture
def planning(project: Path, tmp_path: Path) -> tuple[Plan, Path]:
    """A planning session with a milestone (M-001) and an intent (CI-001) on src/app.py; the
    project holds a symlink into its .git and one out of it."""
    (project / "src" / "gitdir").symlink_to("../.git")
    (tmp_path / "elsewhere").mkdir()
    (project / "src" / "out").symlink_to(tmp_path / "elsewhere")
    store = session.create(str(project), "Plan", {}, non_interactive=False)
    plan = Plan(project)
    plan("apply", "-", input=json.dumps(DESIGN[:2]).replace("README.md", "src/app.py"))
    return plan, Path(store.dir)


@pytest.mark.parametrize("bad", BAD)
def test_a_bad_path_is_refused_when_recorded(
    planning: tuple[Plan, Path], project: Path, bad: str
) -> None:
    plan, state = planning
    before = project_files(project), (state / "plan.json").read_bytes()
    attempts = [
        ["milestone", "add", "--name", "n", "--file", bad],
        ["milestone", "set", "M-001", "--add-file", bad],
        ["milestone", "tests", "M-001", "--file", bad],
        ["intent", "add", "--milestone", "M-001", "--file", bad, "--behavior", "b"],
        ["intent", "set", "CI-001", "--file", bad],
        ["change", "add", "--intent", "CI-001", "--file", bad, "--diff", "-"],
    ]
    for argv in attempts:
        done = plan(*argv, input=creating(bad), code=2)
        assert f"-file: {bad!r}" in done.stderr or f"--diff: {bad!r}" in done.stderr, argv
    renamed = (
        f"diff --git a/src/app.py b/{bad}\nsimilarity index 100%\n"
        f"rename from src/app.py\nrename to {bad}\n"
    )
    done = plan(
        "change", "add", "--intent", "CI-001", "--file", "src/app.py", "--diff", "-",
        input=renamed, code=2,
    )  # fmt: skip
    assert repr(bad) in done.stderr
    batch = [{"op": "change add", "args": {"intent": "CI-001", "file": bad, "diff": creating(bad)}}]
    assert repr(bad) in plan("apply", "-", input=json.dumps(batch), code=2).stderr
    assert (project_files(project), (state / "plan.json").read_bytes()) == before


def test_capture_refuses_a_bad_path_given_or_stored(
    planning: tuple[Plan, Path], project: Path
) -> None:
    plan, state = planning
    plan("worktree")
    assert "'.git/config'" in plan("change", "capture", ".git/config", code=2).stderr
    doc = json.loads((state / "plan.json").read_text())
    doc["milestones"][0]["code_intents"][0]["file"] = ".planner/ACTIVE2"  # edited by hand
    (state / "plan.json").write_text(json.dumps(doc, indent=2))
    (state / "worktree" / ".planner").mkdir()
    (state / "worktree" / ".planner" / "ACTIVE2").write_text("x\n")
    before = project_files(project), (state / "plan.json").read_bytes()
    done = plan("change", "capture", "--intent", "CI-001", code=3)
    assert "CI-001: '.planner/ACTIVE2'" in done.stderr
    assert (project_files(project), (state / "plan.json").read_bytes()) == before


@pytest.mark.parametrize("bad", [".git/hooks/post-commit", ".planner/ACTIVE2", ".git/config"])
def test_a_bad_path_stored_by_hand_is_refused_when_applied(project: Path, bad: str) -> None:
    state = executing(project)
    doc = json.loads((state / "plan.json").read_text())
    change = doc["milestones"][0]["code_changes"][0]
    change.update(file=bad, diff=creating(bad))
    (state / "plan.json").write_text(json.dumps(doc, indent=2))
    before = project_files(project), sorted(p.name for p in (project / ".planner").iterdir())
    done = Plan(project)("exec", "apply", "M-001", "--state-dir", str(state), code=3)
    assert f"CC-001: {bad!r}" in done.stderr and "nothing was written" in done.stderr
    done = Plan(project)("exec", "commit", "M-001", "--state-dir", str(state), code=3)
    assert f"CC-001: {bad!r}" in done.stderr
    after = project_files(project), sorted(p.name for p in (project / ".planner").iterdir())
    assert after == before


# ---------------------------------------------------------------- the project holding the store


def test_a_copied_projects_session_applies_into_the_copy(project: Path, tmp_path: Path) -> None:
    state = executing(project)
    copy = tmp_path / "copy"
    shutil.copytree(project, copy, symlinks=True)
    copied = copy / ".planner" / state.name
    assert json.loads((copied / "session.json").read_text())["project_root"] == str(project)
    before = project_files(project)
    Plan(copy)("exec", "apply", "M-001", "--state-dir", str(copied))
    Plan(copy)("exec", "commit", "M-001", "--state-dir", str(copied))
    assert "Call farewell(name)" in (copy / "README.md").read_text()
    assert git(copy, "log", "-1", "--format=%s").startswith("M-001 Docs")
    assert project_files(project) == before


def test_a_session_outside_a_projects_planner_dir_applies_nowhere(
    project: Path, tmp_path: Path
) -> None:
    state = executing(project)
    loose = tmp_path / "loose"
    shutil.copytree(state, loose)
    before = project_files(project)
    done = Plan(project)("exec", "apply", "M-001", "--state-dir", str(loose), code=3)
    assert "the session is not inside a project's .planner/" in done.stderr
    assert "not inside" in Plan(project)("worktree", "--state-dir", str(loose), code=3).stderr
    assert project_files(project) == before


def test_a_planted_project_pointing_at_the_repository_meets_its_planning_session(
    project: Path, tmp_path: Path
) -> None:
    """A project made anywhere (in the scratch worktree, say) whose `.git` is a gitfile naming
    the real repository, holding a copied approved session: exec from there would commit into
    the real repository, so the real project's planning session refuses it."""
    older = executing(project)
    Path(session.create(str(project), "Planning", {}, non_interactive=False).dir)
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "README.md").write_bytes((project / "README.md").read_bytes())
    (planted / ".git").write_text(f"gitdir: {project / '.git'}\n")
    shutil.copytree(older, planted / ".planner" / older.name)
    before = project_files(project)
    state = ["--state-dir", str(planted / ".planner" / older.name)]
    for cwd in (planted, project):
        done = Plan(cwd)("apply", *state, "-", input=json.dumps(EXEC), code=4)
        assert "is planning (status discovery)" in done.stderr
    assert project_files(project) == before
    assert git(project, "log", "--format=%s") == "init\n"
