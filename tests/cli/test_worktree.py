"""The scratch worktree: `plan worktree`, `plan change capture`, and the
executor's `plan exec apply` / `plan exec commit`, on real git repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from state.rules.session_store import Store
from state.storage import schema
from tests.conftest import Plan, git

DESIGN = [
    {"op": "overview set", "args": {"title": "T", "problem": "P.", "approach": "A."}},
    {
        "op": "milestone add",
        "args": {"name": "Farewell", "file": ["src/app.py"], "acceptance": ["ok"]},
    },
    {"op": "intent add", "args": {"milestone": "$2", "file": "src/app.py", "behavior": "bye"}},
    {"op": "intent add", "args": {"milestone": "$2", "file": "src/app.py", "behavior": "wave"}},
    {"op": "milestone add", "args": {"name": "Docs", "file": ["README.md"], "doc_only": True}},
    {"op": "intent add", "args": {"milestone": "$5", "file": "README.md", "behavior": "docs"}},
]
GREET = "def greet(name):\n    return 'hi ' + name\n"
BYE = "\ndef farewell(name):\n    return 'bye ' + name\n"
WAVE = "\ndef wave():\n    return 'o/'\n"


@pytest.fixture
def tree(plan: Plan) -> Path:
    plan("apply", "-", input=json.dumps(DESIGN))
    return Path(plan("worktree").stdout.strip())


def diff_of(plan: Plan, change: str) -> str:
    return str(plan.json("show", change)["diff"])  # type: ignore[index]


def changes(session_dir: Path) -> list[tuple[str, str, str]]:
    doc = json.loads((session_dir / "plan.json").read_text())
    return [
        (c["id"], c["intent_ref"], c["file"]) for m in doc["milestones"] for c in m["code_changes"]
    ]


def test_worktree_is_made_once_detached_at_the_base_and_ignored(
    plan: Plan, project: Path, session_dir: Path
) -> None:
    first = plan("worktree")
    path = Path(first.stdout.strip())
    assert path == session_dir / "worktree" and "created" in first.stderr
    again = plan("worktree")
    assert again.stdout.strip() == str(path) and "created" not in again.stderr
    base = json.loads((session_dir / "session.json").read_text())["base_commit"]
    assert git(path, "rev-parse", "HEAD").strip() == base
    assert git(path, "branch", "--show-current").strip() == ""  # detached
    (path / "scratch.py").write_text("x = 1\n")
    assert ".planner/" not in git(project, "status", "--porcelain", "-uall").replace(
        ".planner/.gitignore", ""
    ).replace(f".planner/{session_dir.name}/session.json", "").replace(
        f".planner/{session_dir.name}/plan.json", ""
    ).replace(f".planner/{session_dir.name}/context.json", "")


def test_worktree_without_a_commit_says_how_to_fix_it(tmp_path: Path) -> None:
    from state.ops import session

    root = tmp_path / "bare"
    root.mkdir()
    git(root, "init", "-q")
    store = session.create(str(root), "Task", {}, non_interactive=True)
    done = Plan(root)("worktree", "--state-dir", store.dir, code=3)
    assert "no git commit" in done.stderr and "git commit" in done.stderr


def test_shared_file_is_captured_in_order_each_diff_on_the_one_before(
    plan: Plan, tree: Path, session_dir: Path
) -> None:
    app = tree / "src" / "app.py"
    app.write_text(GREET + BYE)
    assert plan.ids("change", "capture", "--intent", "CI-001") == ["CC-001"]
    app.write_text(GREET + BYE + WAVE)
    assert plan.ids("change", "capture") == ["CC-002"]
    assert changes(session_dir) == [
        ("CC-001", "CI-001", "src/app.py"),
        ("CC-002", "CI-002", "src/app.py"),
    ]
    assert "+def wave" in diff_of(plan, "CC-002") and "+def farewell" not in diff_of(plan, "CC-002")
    assert " def farewell" in diff_of(plan, "CC-002")  # context from CC-001: it applies on it
    plan("validate", "--phase", "code")


def test_recapture_replaces_and_keeps_later_diffs_applying(
    plan: Plan, tree: Path, session_dir: Path
) -> None:
    app = tree / "src" / "app.py"
    app.write_text(GREET + BYE)
    plan("change", "capture", "--intent", "CI-001")
    app.write_text(GREET + BYE + WAVE)
    plan("change", "capture", "--intent", "CI-002")
    app.write_text("# greetings\n" + GREET + BYE + WAVE)  # a fix for CI-001, above both
    assert plan.ids("change", "capture", "--intent", "CI-001") == []
    assert len(changes(session_dir)) == 2
    assert "+# greetings" in diff_of(plan, "CC-001") and "wave" not in diff_of(plan, "CC-001")
    assert "+def wave" in diff_of(plan, "CC-002")
    plan("validate", "--phase", "code")
    app.write_text(GREET + BYE + WAVE)  # the fix undone: capturing again says nothing new
    plan("change", "capture", "--intent", "CI-001")
    assert "greetings" not in diff_of(plan, "CC-001")


def test_whole_file_goes_to_one_change_serving_both_intents_of_the_milestone(
    plan: Plan, tree: Path, session_dir: Path
) -> None:
    (tree / "src" / "app.py").write_text(GREET + BYE + WAVE)
    done = plan("change", "capture")
    assert done.stdout.split() == ["CC-001"]
    assert "CC-001 CI-001,CI-002 src/app.py: captured (+6 -0)" in done.stderr
    doc = json.loads((session_dir / "plan.json").read_text())
    assert doc["milestones"][0]["code_changes"][0]["shared_intents"] == ["CI-002"]
    assert "    CC-001 src/app.py (CI-001,CI-002):" in plan("review", "show").stdout  # as said


def test_documentation_only_milestone_is_captured_from_the_worktree(
    plan: Plan, tree: Path, session_dir: Path
) -> None:
    (tree / "README.md").write_text("# Demo\n\nSay farewell.\n")
    assert plan.ids("change", "capture") == ["CC-001"]
    assert changes(session_dir) == [("CC-001", "CI-003", "README.md")]
    assert plan("change", "capture").stderr.startswith("nothing captured")


def test_capture_needs_the_worktree(plan: Plan) -> None:
    plan("apply", "-", input=json.dumps(DESIGN))
    assert "plan worktree" in plan("change", "capture", code=3).stderr


def test_validate_checks_diffs_against_the_base_not_the_working_tree(
    plan: Plan, tree: Path, project: Path
) -> None:
    (tree / "src" / "app.py").write_text(GREET + BYE)
    plan("change", "capture", "--intent", "CI-001")
    (project / "src" / "app.py").write_text(GREET + BYE)  # the implementation merged
    git(project, "commit", "-qam", "farewell")
    plan("validate", "--phase", "code", code=3)  # CI-002 has no change yet, nothing else
    (tree / "src" / "app.py").write_text(GREET + BYE + WAVE)
    plan("change", "capture")
    assert "valid for phase code" in plan("validate", "--phase", "code").stdout


# ---------------------------------------------------------------- executor


def executing(session_dir: Path, commit: str = "milestone") -> None:
    """What executor step 1 leaves: execution.json with a run per milestone."""
    store = Store(str(session_dir))
    with store.transaction("test") as tx:
        plan = tx.read("plan")
        session = tx.edit("session")
        session["config"]["commit"] = commit
        session["status"] = "executing"  # nothing executes while a session is planning
        runs = [
            {**schema.defaults("execution", "MilestoneRun"), "id": m["id"]}
            for m in plan["milestones"]
        ]
        tx.edit_or_create(
            "execution",
            {
                **schema.defaults("execution"),
                "base_commit": session["base_commit"],
                "milestones": runs,
            },
        )


@pytest.fixture
def planned(plan: Plan, tree: Path, session_dir: Path) -> Path:
    """CC-001 and CC-002 on src/app.py (M-001), CC-003 on README.md (M-002)."""
    app = tree / "src" / "app.py"
    app.write_text(GREET + BYE)
    plan("change", "capture", "--intent", "CI-001")
    app.write_text(GREET + BYE + WAVE)
    (tree / "README.md").write_text("# Demo\n\nSay farewell.\n")
    plan("change", "capture")
    executing(session_dir)
    return tree


def test_exec_apply_applies_in_order_and_commit_uses_the_plan(
    plan: Plan, planned: Path, project: Path, session_dir: Path
) -> None:
    plan("exec", "apply", "M-001")
    assert (project / "src" / "app.py").read_text() == GREET + BYE + WAVE
    assert (project / "README.md").read_text() == "# Demo\n"
    plan("exec", "apply", "M-001")  # again: already applied, nothing changes
    assert (project / "src" / "app.py").read_text() == GREET + BYE + WAVE
    done = plan("exec", "commit", "M-001")
    assert "committed" in done.stderr
    assert git(project, "log", "-1", "--format=%s").strip() == "M-001 Farewell: CI-001, CI-002"
    assert git(project, "show", "--name-only", "--format=", "HEAD").split() == ["src/app.py"]
    execution = json.loads((session_dir / "execution.json").read_text())
    head = git(project, "rev-parse", "HEAD").strip()
    assert execution["milestones"][0]["commit"] == head
    assert execution["milestones"][0]["status"] == "in_progress"
    plan("exec", "commit", "M-002", code=3)  # nothing applied yet: nothing to commit


def test_exec_apply_merges_three_way_where_the_file_moved_on(
    plan: Plan, planned: Path, project: Path
) -> None:
    moved = GREET.replace("(name):", "(name):  # moved on")  # a context line of CC-001
    (project / "src" / "app.py").write_text(moved)
    plan("exec", "apply", "M-001")
    assert (project / "src" / "app.py").read_text() == moved + BYE + WAVE


def test_exec_apply_conflict_names_file_and_hunk_and_writes_nothing(
    plan: Plan, planned: Path, project: Path
) -> None:
    app = project / "src" / "app.py"
    app.write_text("def greet(name):\n    return 'yo ' + name\n\ndef farewell(n):\n    pass\n")
    before = {p: p.read_bytes() for p in (app, project / "README.md")}
    done = plan("exec", "apply", "M-001", code=3)
    assert "CC-001 (CI-001)" in done.stderr and "hunk 1 (@@" in done.stderr
    assert "src/app.py" in done.stderr and "nothing was applied" in done.stderr
    assert {p: p.read_bytes() for p in before} == before


def test_commit_none_leaves_changes_uncommitted(
    plan: Plan, planned: Path, project: Path, session_dir: Path
) -> None:
    executing(session_dir, commit="none")
    head = git(project, "rev-parse", "HEAD")
    plan("exec", "apply", "M-001")
    done = plan("exec", "commit", "M-001")
    assert 'commit = "none"' in done.stderr and "uncommitted" in done.stderr
    assert git(project, "rev-parse", "HEAD") == head
    assert git(project, "status", "--porcelain", "--", "src").strip() == "M src/app.py"


def test_commit_key_is_read_from_the_project_config(project: Path) -> None:
    from shared.config import load

    assert load(str(project))["commit"] == "milestone"
    (project / ".planner").mkdir()
    (project / ".planner" / "config.toml").write_text('[planner]\ncommit = "none"\n')
    assert load(str(project))["commit"] == "none"


def test_reconcile_lists_tests_recorded_with_ran(plan: Plan, session_dir: Path) -> None:
    from skills.executor import reconcile

    plan("apply", "-", input=json.dumps(DESIGN))
    executing(session_dir)
    plan("exec", "done", "M-001", "--ran", "tests/test_app.py")
    doc = json.loads((session_dir / "plan.json").read_text())
    execution = json.loads((session_dir / "execution.json").read_text())
    assert reconcile.tests_of(doc, execution) == [
        {"file": "tests/test_app.py", "milestone": "M-001", "ran": True}
    ]
    record = {
        "milestones": [],
        "unplanned_changes": [],
        "deviations": [],
        "tests": reconcile.tests_of(doc, execution),
    }
    assert "tests run: tests/test_app.py (M-001)" in reconcile.table(record)


def test_reconcile_leaves_out_what_running_the_tests_leaves(
    plan: Plan, planned: Path, project: Path, session_dir: Path
) -> None:
    """A project that does not ignore __pycache__/ or .pytest_cache/: running its tests is
    no unplanned change (capture leaves the same BYPRODUCTS out); a stray source file is."""
    from skills.executor import reconcile

    executing(session_dir)
    plan("exec", "apply", "M-001")
    for stray in ("src/__pycache__/app.cpython-311.pyc", ".pytest_cache/v/cache/nodeids"):
        (project / stray).parent.mkdir(parents=True, exist_ok=True)
        (project / stray).write_bytes(b"\0")
    (project / "src" / "stray.py").write_text("x = 1\n")
    doc = json.loads((session_dir / "plan.json").read_text())
    execution = json.loads((session_dir / "execution.json").read_text())
    execution["base_commit"] = git(project, "rev-parse", "HEAD").strip()
    record = reconcile.build(doc, execution, str(project))
    assert record["unplanned_changes"] == ["src/stray.py"]
