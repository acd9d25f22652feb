"""`plan change capture` covers what changed in the scratch worktree (docs/design.md, "Capture"):
unclaimed files reported by every capture, a milestone's test files attached to its intents,
`plan validate --phase code` flags a test file without a diff, one diff for the intents of
one new file. Real git repositories, a real worktree, the real `plan`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli.test_worktree import BYE, DESIGN, GREET, WAVE, executing
from tests.conftest import Plan, git

TESTED = [*DESIGN, {"op": "milestone tests", "args": {"id": "$2", "file": ["tests/test_app.py"]}}]
TEST_APP = "from src.app import farewell\n\n\ndef test_farewell():\n    assert farewell('a')\n"
UNCLAIMED = "(no intent names them: add an intent or revert)"


@pytest.fixture
def tree(plan: Plan) -> Path:
    plan("apply", "-", input=json.dumps(TESTED))
    return Path(plan("worktree").stdout.strip())


def changes(session_dir: Path) -> list[tuple[str, str, list[str], str]]:
    doc = json.loads((session_dir / "plan.json").read_text())
    return [
        (c["id"], c["intent_ref"], c["shared_intents"], c["file"])
        for m in doc["milestones"]
        for c in m["code_changes"]
    ]


def write(tree: Path, path: str, text: str) -> None:
    (tree / path).parent.mkdir(parents=True, exist_ok=True)
    (tree / path).write_text(text)


# ---------------------------------------------------------------- unclaimed files


def test_every_capture_names_changed_files_no_intent_names(plan: Plan, tree: Path) -> None:
    write(tree, "src/app.py", GREET + BYE)
    write(tree, "docs/x.md", "# x\n")
    write(tree, "setup.cfg", "[metadata]\n")
    write(tree, "src/__pycache__/app.cpython-312.pyc", "\0")  # running the tests leaves it
    line = f"unclaimed: docs/x.md, setup.cfg {UNCLAIMED}"
    with_intent = plan("change", "capture", "--intent", "CI-001")
    assert line in with_intent.stderr.splitlines()
    assert with_intent.stderr.splitlines()[0].startswith("CC-001 CI-001 src/app.py: captured")
    nothing = plan("change", "capture")
    assert nothing.stderr.splitlines() == [
        "nothing captured: the worktree matches the plan's diffs",
        line,
    ]
    (tree / "setup.cfg").unlink()
    (tree / "README.md").write_text("# Demo\n\nBye.\n")  # named by CI-003: captured, not unclaimed
    git(tree, "rm", "-q", "--cached", "--", "README.md")  # an index the agent changed
    done = plan("change", "capture")
    assert f"unclaimed: docs/x.md {UNCLAIMED}" in done.stderr.splitlines()


def test_a_deleted_and_a_reverted_file_are_reported_as_they_are(
    plan: Plan, tree: Path, project: Path
) -> None:
    (project / "LICENSE").write_text("MIT\n")
    git(project, "add", "LICENSE")
    git(project, "commit", "-qm", "license")
    (tree / "README.md").unlink()  # named by CI-003
    write(tree, "notes.txt", "x\n")
    (tree / "notes.txt").unlink()  # edited and reverted: nothing to report
    assert "unclaimed" not in plan("change", "capture").stderr


def test_a_clean_worktree_reports_nothing_unclaimed(plan: Plan, tree: Path) -> None:
    done = plan("change", "capture")
    assert done.stderr.splitlines() == ["nothing captured: the worktree matches the plan's diffs"]


def test_many_unclaimed_files_are_counted_after_ten(plan: Plan, tree: Path) -> None:
    for n in range(12):
        write(tree, f"extra/f{n:02}.txt", "x\n")
    line = next(x for x in plan("change", "capture").stderr.splitlines() if "unclaimed" in x)
    assert "extra/f09.txt and 2 more (no intent names them" in line
    assert "f10" not in line


# ---------------------------------------------------------------- a milestone's test files


def test_a_milestone_test_file_goes_to_its_first_intent(
    plan: Plan, tree: Path, session_dir: Path
) -> None:
    write(tree, "src/app.py", GREET + BYE)
    write(tree, "tests/test_app.py", TEST_APP)
    done = plan("change", "capture")
    assert done.stdout.split() == ["CC-001", "CC-002"]
    assert "CC-002 CI-001 tests/test_app.py: captured (+5 -0)" in done.stderr
    assert "unclaimed" not in done.stderr
    assert changes(session_dir) == [
        ("CC-001", "CI-001", ["CI-002"], "src/app.py"),
        ("CC-002", "CI-001", [], "tests/test_app.py"),
    ]
    plan("validate", "--phase", "code")


def test_one_intent_takes_extra_files(plan: Plan, tree: Path, session_dir: Path) -> None:
    write(tree, "src/app.py", GREET + BYE)
    write(tree, "tests/test_app.py", TEST_APP)
    done = plan("change", "capture", "--intent", "CI-001", "src/app.py", "tests/test_app.py")
    assert done.stdout.split() == ["CC-001", "CC-002"]
    assert changes(session_dir) == [
        ("CC-001", "CI-001", [], "src/app.py"),
        ("CC-002", "CI-001", [], "tests/test_app.py"),
    ]
    write(tree, "tests/test_app.py", TEST_APP + "\n\ndef test_more():\n    pass\n")
    again = plan("change", "capture", "tests/test_app.py")  # its change is re-captured
    assert again.stdout.split() == []
    assert "CC-002 CI-001 tests/test_app.py: re-captured (+9 -0)" in again.stderr


def test_intent_takes_only_code_intent_ids(plan: Plan, tree: Path, session_dir: Path) -> None:
    write(tree, "src/app.py", GREET + BYE)
    for other in ("M-001", "DL-001"):  # a milestone has files, not a file: once a crash
        refused = plan("change", "capture", "--intent", other, code=2)
        assert f"{other}: not a code intent id (CI-n)" in refused.stderr
    assert "plan.json: no CI-009" in plan("change", "capture", "--intent", "CI-009", code=2).stderr
    assert changes(session_dir) == []


def test_validate_code_flags_a_test_file_without_a_diff(plan: Plan, tree: Path) -> None:
    write(tree, "src/app.py", GREET + BYE + WAVE)
    plan("change", "capture")
    refused = plan("validate", "--phase", "code", code=3)
    assert "M-001 names test file tests/test_app.py, which has no captured diff" in (
        refused.stdout + refused.stderr
    )
    write(tree, "tests/test_app.py", TEST_APP)
    plan("change", "capture")
    assert "valid for phase code" in plan("validate", "--phase", "code").stdout


def test_the_executor_applies_and_commits_the_test_file(
    plan: Plan, tree: Path, project: Path, session_dir: Path
) -> None:
    write(tree, "src/app.py", GREET + BYE + WAVE)
    write(tree, "tests/test_app.py", TEST_APP)
    (tree / "README.md").write_text("# Demo\n\nBye.\n")
    plan("change", "capture")
    executing(session_dir)
    plan("exec", "apply", "M-001")
    assert (project / "tests" / "test_app.py").read_text() == TEST_APP
    plan("exec", "commit", "M-001")
    assert sorted(git(project, "show", "--name-only", "--format=", "HEAD").split()) == [
        "src/app.py",
        "tests/test_app.py",
    ]


# ---------------------------------------------------------------- one diff, several intents

NEW_FILE = [
    {"op": "overview set", "args": {"title": "T", "problem": "P.", "approach": "A."}},
    {"op": "milestone add", "args": {"name": "Unique", "acceptance": ["ok"]}},
    {"op": "intent add", "args": {"milestone": "$2", "file": "src/unique.py", "behavior": "a"}},
    {"op": "intent add", "args": {"milestone": "$2", "file": "src/unique.py", "behavior": "b"}},
    {"op": "milestone add", "args": {"name": "Later", "acceptance": ["ok"]}},
    {"op": "intent add", "args": {"milestone": "$5", "file": "src/unique.py", "behavior": "c"}},
]


def test_a_new_file_of_two_intents_is_one_change_applied_once(
    plan: Plan, project: Path, session_dir: Path
) -> None:
    plan("apply", "-", input=json.dumps(NEW_FILE))
    tree = Path(plan("worktree").stdout.strip())
    write(tree, "src/unique.py", BYE + WAVE)
    done = plan("change", "capture")
    assert done.stdout.split() == ["CC-001"]
    assert "CC-001 CI-001,CI-002 src/unique.py: captured (+6 -0)" in done.stderr
    assert "CI-003: shares src/unique.py with CI-001 (an earlier milestone)" in done.stderr
    write(tree, "src/unique.py", BYE + WAVE + "\nX = 1\n")
    assert plan.ids("change", "capture", "--intent", "CI-003") == ["CC-002"]
    write(tree, "src/unique.py", "# unique\n" + BYE + WAVE + "\nX = 1\n")
    again = plan("change", "capture", "--intent", "CI-002")  # the shared change, re-captured
    assert "CC-001 CI-001,CI-002 src/unique.py: re-captured (+7 -0)" in again.stderr
    assert changes(session_dir) == [
        ("CC-001", "CI-001", ["CI-002"], "src/unique.py"),
        ("CC-002", "CI-003", [], "src/unique.py"),
    ]
    plan("validate", "--phase", "code")
    executing(session_dir)
    plan("exec", "apply", "M-001")
    assert (project / "src" / "unique.py").read_text() == "# unique\n" + BYE + WAVE
    plan("exec", "apply", "M-002")
    assert (project / "src" / "unique.py").read_text() == "# unique\n" + BYE + WAVE + "\nX = 1\n"


def test_two_intents_given_together_share_one_change(
    plan: Plan, project: Path, session_dir: Path
) -> None:
    plan("apply", "-", input=json.dumps(NEW_FILE))
    tree = Path(plan("worktree").stdout.strip())
    write(tree, "src/unique.py", BYE)
    plan("change", "capture", "--intent", "CI-002")
    write(tree, "src/unique.py", BYE + WAVE)
    done = plan("change", "capture", "--intent", "CI-001", "--intent", "CI-002")
    assert done.stdout.split() == []
    assert "CC-001 CI-001,CI-002 src/unique.py: re-captured (+6 -0)" in done.stderr
    assert changes(session_dir) == [("CC-001", "CI-001", ["CI-002"], "src/unique.py")]


# ---------------------------------------------------------------- unclaimed, generated

POOL = [
    "src/app.py",  # CI-001, CI-002
    "README.md",  # CI-003
    "tests/test_app.py",  # M-001's test file
    "setup.cfg",
    "docs/guide.md",
    "docs/deep/a b.md",
    "src/nouveau_été.py",
    "src/__pycache__/app.cpython-312.pyc",  # a byproduct: never named
    ".pytest_cache/v/cache/lastfailed",
]


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    edits=st.dictionaries(
        st.sampled_from(POOL), st.sampled_from(["x = 1\n", "# Demo\n", ""]), max_size=6
    )
)
def test_unclaimed_is_exactly_the_changed_files_nothing_claims(
    plan: Plan, tree: Path, project: Path, session_dir: Path, edits: dict[str, str]
) -> None:
    from state.ops import capture_ops
    from state.repo import worktree as wt
    from state.rules.session_store import Store

    doc = Store(str(session_dir)).read("plan")
    base = json.loads((session_dir / "session.json").read_text())["base_commit"]
    capture = capture_ops.Capture(
        None, doc, str(project), str(tree), wt.base_reader(str(project), base)
    )
    for path, text in edits.items():
        write(tree, path, text)
    try:
        at_base = {p: (project / p).read_text() if (project / p).exists() else None for p in edits}
        expected = sorted(
            p
            for p, text in edits.items()
            if p not in ("src/app.py", "README.md", "tests/test_app.py")
            and "cache" not in p
            and text != at_base[p]
        )
        assert capture.unclaimed(base) == expected
    finally:
        for path in edits:
            (tree / path).unlink()
        git(tree, "checkout", "-q", "--", ".")


def test_change_set_intent_makes_a_shared_change_one_intents_again(
    plan: Plan, tree: Path, session_dir: Path
) -> None:
    write(tree, "src/app.py", GREET + BYE + WAVE)
    plan("change", "capture", "src/app.py")
    assert changes(session_dir)[0][2] == ["CI-002"]
    plan("change", "set", "CC-001", "--intent", "CI-002")
    assert changes(session_dir) == [("CC-001", "CI-002", [], "src/app.py")]
    refused = plan("validate", "--phase", "code", code=3)
    assert "CI-001" in refused.stdout + refused.stderr


def test_claims_follow_plan_order_across_milestones() -> None:
    from state.ops.capture_ops import claims
    from tests.state import builders as b

    doc = b.plan(
        milestones=[
            b.milestone(
                1,
                tests={"files": ["tests/t.py"]},
                code_intents=[b.intent(1), b.intent(2, file="lib.py")],
            ),
            b.milestone(
                2,
                tests={"files": ["tests/t.py", "lib.py"]},
                code_intents=[b.intent(3, file="lib.py"), b.intent(4, file="tests/t.py")],
                code_changes=[b.change(1, "CI-003", file="extra.py", shared_intents=["CI-004"])],
            ),
            b.milestone(3, tests={"files": ["tests/none.py"]}),  # no intent: nothing to take it
        ]
    )
    assert claims(doc) == {
        "src/app.py": ["CI-001"],
        "lib.py": ["CI-002", "CI-003"],
        "tests/t.py": ["CI-001", "CI-004"],  # M-001's first intent; M-002's intent on it
        "extra.py": ["CI-003", "CI-004"],  # a change's file: the intents it serves
    }


def test_a_test_file_goes_to_the_intent_its_name_names() -> None:
    from state.ops.capture_ops import claims
    from tests.state import builders as b

    doc = b.plan(
        milestones=[
            b.milestone(
                1,
                tests={"files": ["tests/test_cached.py", "tests/test_cachedmethod.py", "t/x.py"]},
                code_intents=[
                    b.intent(1, file="pkg/__init__.py", function="cached"),
                    b.intent(2, file="pkg/__init__.py", function="Cache.cachedmethod"),
                    b.intent(3, file="pkg/func.py", function="_cache"),
                ],
            ),
            b.milestone(2, tests={"files": ["tests/test_func.py"]}, code_intents=[b.intent(4)]),
        ]
    )
    taken = claims(doc)
    assert taken["tests/test_cached.py"] == ["CI-001"]
    assert taken["tests/test_cachedmethod.py"] == ["CI-002"]  # the longest name, not `cached`
    assert taken["t/x.py"] == ["CI-001"]  # named by none: the milestone's first
    assert taken["tests/test_func.py"] == ["CI-004"]  # only its own milestone's intents


def test_at_a_terminal_each_captured_id_is_printed_once(
    plan: Plan, tree: Path, project: Path
) -> None:
    """The told line names the id; stdout, on the same terminal, does not repeat it (a pipe,
    as above, still gets the ids on stdout)."""
    import os

    import pexpect

    from tests.conftest import BIN

    write(tree, "src/app.py", GREET + BYE)
    env = {**{k: v for k, v in os.environ.items() if k != "CI"}, "TERM": "xterm"}
    child = pexpect.spawn(
        str(BIN / "plan"), ["change", "capture"], cwd=str(project), encoding="utf-8", env=env
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    assert child.before.count("CC-001") == 1, child.before
    assert "CC-001 CI-001,CI-002 src/app.py: captured" in child.before


def test_an_intent_whose_edits_another_change_holds_is_told_how_to_take_them(
    plan: Plan, tree: Path, session_dir: Path
) -> None:
    """The trial's loop: the test file's edits went to CI-001 (CC-002); an intent added for
    that file later finds nothing to capture. Capture and validate both name CC-002 and the
    command that gives its edits to the intent, and that command makes the plan valid."""
    write(tree, "src/app.py", GREET + BYE + WAVE)
    write(tree, "tests/test_app.py", TEST_APP)
    plan("change", "capture")
    plan("intent", "add", "--milestone", "M-001", "--file", "tests/test_app.py", "--behavior", "t")
    move = "plan change set CC-002 --intent CI-004"
    share = "plan change capture --intent CI-001 --intent CI-004 tests/test_app.py"
    refused = plan("validate", "--phase", "code", code=3)
    assert move in refused.stdout + refused.stderr and share in refused.stdout + refused.stderr
    assert "plan change capture --intent CI-004 tests/test_app.py" not in refused.stdout
    done = plan("change", "capture", "--intent", "CI-004", "tests/test_app.py")
    assert done.stderr.splitlines()[0] == (
        "CI-004: tests/test_app.py has no edit to capture: CC-002 (CI-001) already holds its "
        f"edits; to give them to CI-004: {move} (to share them: {share})"
    )
    assert changes(session_dir)[1] == ("CC-002", "CI-001", [], "tests/test_app.py")
    plan(*share.split()[1:])
    assert changes(session_dir)[1] == ("CC-002", "CI-001", ["CI-004"], "tests/test_app.py")
    plan("validate", "--phase", "code")
    plan(*move.split()[1:])
    assert changes(session_dir)[1] == ("CC-002", "CI-004", [], "tests/test_app.py")
    plan("validate", "--phase", "code")


def test_intent_remove_refuses_while_a_change_points_at_it(
    plan: Plan, tree: Path, session_dir: Path
) -> None:
    """An intent the design no longer wants goes with `plan intent remove`, once no change
    points at it: a refusal names the change and the command that re-points it."""
    write(tree, "src/app.py", GREET + BYE + WAVE)
    write(tree, "tests/test_app.py", TEST_APP)
    plan("change", "capture")  # CC-001: CI-001, sharing CI-002; CC-002: CI-001's test file
    before = (session_dir / "plan.json").read_text()
    refused = plan("intent", "remove", "CI-002", code=3)
    assert refused.stderr.strip().splitlines() == [
        "plan: CI-002: CC-001 still points at it; nothing removed (fix: plan change set CC-001 "
        "--intent CI-001 (its own alone), then plan intent remove CI-002)"
    ]
    refused = plan("intent", "remove", "CI-001", code=3)
    assert "CC-001 still points at it" in refused.stderr
    assert "plan change set CC-001 --intent CI-n (another intent)" in refused.stderr
    assert (session_dir / "plan.json").read_text() == before
    plan("change", "set", "CC-001", "--intent", "CI-001")
    plan("intent", "remove", "CI-002")
    intents = [i["id"] for i in plan.json("show", "M-001")["code_intents"]]  # type: ignore[index]
    assert intents == ["CI-001"]
    plan("validate", "--phase", "code")
    batch = [{"op": "intent remove", "args": {"id": "CI-003"}}]  # no change: it just goes
    plan("apply", "-", input=json.dumps(batch))
    assert plan.json("show", "M-002")["code_intents"] == []  # type: ignore[index]
    assert "plan.json: no CI-003" in plan("intent", "remove", "CI-003", code=2).stderr
    assert "not a code intent id" in plan("intent", "remove", "M-001", code=2).stderr
