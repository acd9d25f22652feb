"""The `plan` CLI as an agent uses it: real subprocesses on a real session in a git repo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import tree
from tests.conftest import Plan
from tests.plans import COMMANDS, FAREWELL_DIFF, batch

PHASES = ("design", "code", "docs", "final")


def normalised(plan: dict) -> dict:
    """The plan without what differs between two builds of the same content."""
    plan = json.loads(json.dumps(plan))
    plan.pop("plan_id"), plan.pop("created_at")
    for d in plan["planning_context"]["decision_log"]:
        d.pop("timestamp")
    return plan


def changed(words: list[str]) -> list[str]:
    """What a command that creates nothing prints: a `set` names what it changed."""
    if words[1] != "set":
        return []
    return [words[2]] if len(words) > 2 and not words[2].startswith("-") else [words[0]]


def build_with_commands(plan: Plan, tmp_path: Path) -> None:
    diff_file = tmp_path / "app.diff"
    diff_file.write_text(FAREWELL_DIFF)
    for words, created in COMMANDS:
        args = [str(diff_file) if w == "{app}" else w for w in words]
        assert plan.ids(*args) == ([created] if created else changed(words))


def test_a_complete_plan_can_be_built_with_commands_alone(plan: Plan, tmp_path: Path) -> None:
    for phase in PHASES:
        plan("validate", "--phase", phase, code=3)
    build_with_commands(plan, tmp_path)
    for phase in PHASES:
        assert "valid for phase" in plan("validate", "--phase", phase).stdout


def test_a_complete_plan_can_be_built_with_one_apply(
    plan: Plan, tmp_path: Path, project: Path, session_dir: Path
) -> None:
    printed = plan("apply", "-", input=json.dumps(batch())).stdout
    assert printed.splitlines() == [  # only the created ids, in order (PRODUCT.md §10)
        *["DL-001", "RA-001", "C-001", "R-001", "M-001", "CI-001", "CC-001", "M-002"],
    ]
    for phase in PHASES:
        plan("validate", "--phase", phase)
    by_apply = json.loads((session_dir / "plan.json").read_text())

    other = Plan(project)
    other("--help")  # the CLI is the same for a second session
    from state.ops import session

    second = session.create(str(project), "Same plan by commands", {}, non_interactive=False)
    build_with_commands(plan, tmp_path)  # ACTIVE now names the second session
    by_commands = json.loads((Path(second.dir) / "plan.json").read_text())
    assert normalised(by_apply) == normalised(by_commands)


def test_apply_is_all_or_nothing(plan: Plan, session_dir: Path) -> None:
    before = {p.name: p.read_bytes() for p in session_dir.iterdir() if p.is_file()}
    broken = batch()
    broken[10]["args"]["decision"] = ["DL-042"]  # a dangling reference, late in the batch
    done = plan("apply", "-", input=json.dumps(broken), code=3)
    assert "DL-042" in done.stderr and done.stdout == ""
    unknown = [*batch()[:3], {"op": "milestone frob", "args": {}}]
    assert "operation 4" in plan("apply", "-", input=json.dumps(unknown), code=2).stderr
    bad_ref = [{"op": "intent add", "args": {"milestone": "$3", "file": "a", "behavior": "b"}}]
    assert "$3" in plan("apply", "-", input=json.dumps(bad_ref), code=2).stderr
    plan("apply", "-", input='[{"op": ', code=2)
    after = {p.name: p.read_bytes() for p in session_dir.iterdir() if p.is_file()}
    assert after == before


@pytest.mark.parametrize(
    "args, code, words",
    [
        (
            [
                "intent",
                "add",
                "--milestone",
                "M-001",
                "--file",
                "a.py",
                "--behavior",
                "b",
                "--decision",
                "DL-009",
            ],
            3,
            "DL-009",
        ),
        (["milestone", "set", "M-001", "--depends", "M-002"], 3, "cycle"),
        (["milestone", "set", "M-001", "--depends", "M-001"], 3, "M-001"),
        (
            ["intent", "add", "--milestone", "M-404", "--file", "a.py", "--behavior", "b"],
            2,
            "M-404",
        ),
        (["milestone", "add", "--name", "x", "--risk", "extreme"], 2, "extreme"),
        (["decision", "add", "--decision", " ", "--reasoning", "r"], 2, "--decision"),
        (
            [
                "change",
                "add",
                "--intent",
                "CI-001",
                "--file",
                "src/app.py",
                "--diff",
                "/nonexistent",
            ],
            2,
            "/nonexistent",
        ),
        (["overview", "set"], 2, "at least one"),
        (["decision", "supersede", "DL-001", "--by", "DL-001", "--reason", "r"], 2, "itself"),
    ],
)
def test_a_refused_mutation_leaves_plan_json_byte_identical(
    plan: Plan, session_dir: Path, args: list[str], code: int, words: str
) -> None:
    plan.ids("milestone", "add", "--name", "A", "--acceptance", "ok")
    plan.ids("milestone", "add", "--name", "B", "--depends", "M-001")
    plan.ids("intent", "add", "--milestone", "M-001", "--file", "a.py", "--behavior", "b")
    plan.ids("decision", "add", "--decision", "d", "--reasoning", "r")
    before = (session_dir / "plan.json").read_bytes()
    history = sorted((session_dir / "history").iterdir())
    done = plan(*args, code=code)
    assert words in done.stderr
    assert len(done.stderr.strip().splitlines()[0]) < 300
    assert (session_dir / "plan.json").read_bytes() == before
    assert sorted((session_dir / "history").iterdir()) == history


@pytest.mark.parametrize(
    "content",
    [b"", b'{"schema_version": 2, "plan_', b"[1, 2]", b"\xff\xfe not utf-8", b'{"plan_id": 3}'],
)
def test_a_damaged_plan_json_is_reported_and_left_untouched(
    plan: Plan, session_dir: Path, content: bytes
) -> None:
    (session_dir / "plan.json").write_bytes(content)
    for args in (
        ["show"],
        ["decision", "add", "--decision", "d", "--reasoning", "r"],
        ["apply", "-"],
    ):
        done = plan(*args, input='[{"op": "tradeoff add", "args": {"text": "t"}}]', code=3)
        assert str(session_dir / "plan.json") in done.stderr
        assert (session_dir / "plan.json").read_bytes() == content
    done = plan("validate", code=3)
    assert "plan.json" in done.stdout
    assert (session_dir / "plan.json").read_bytes() == content


def test_every_plan_mutation_is_refused_on_a_frozen_plan(
    plan: Plan, session_dir: Path, tmp_path: Path
) -> None:
    operations = tree.operations()
    build_with_commands(plan, tmp_path)
    path = session_dir / "plan.json"
    frozen = json.loads(path.read_text())
    frozen["frozen_at"] = "2026-11-22T10:00:00Z"
    path.write_text(json.dumps(frozen, indent=2) + "\n")
    before = path.read_bytes()
    diff_file = tmp_path / "app.diff"
    tried = set()
    for words, _ in [
        *COMMANDS,
        (["decision", "set", "DL-001", "--decision", "x"], None),
        (["risk", "set", "R-001", "--mitigation", "m"], None),
        (["alternative", "set", "RA-001", "--reason", "r"], None),
        (["constraint", "set", "C-001", "--source", "s"], None),
        (["milestone", "set", "M-001", "--name", "n"], None),
        (["intent", "set", "CI-001", "--behavior", "b"], None),
        (["intent", "remove", "CI-001"], None),
        (["change", "set", "CC-001", "--why", "w"], None),
        (["change", "capture"], None),
        (["decision", "supersede", "DL-001", "--by", "DL-001", "--reason", "r"], None),
        (["qr", "add", "--phase", "plan-design", "--check", "c"], None),
    ]:
        args = [str(diff_file) if w == "{app}" else w for w in words]
        done = plan(*args, code=4)
        assert "frozen" in done.stderr
        tried.add(next(name for name in operations if args[: len(name.split())] == name.split()))
    plan("apply", "-", input=json.dumps(batch()), code=4)
    assert path.read_bytes() == before
    plan_ops = {  # the commands that record through state/ops/plan_ops.py
        name
        for name, command in operations.items()
        if command.callback.__module__ in ("cli.commands.design", "cli.commands.milestones")
    }
    assert plan_ops <= tried, plan_ops - tried
    plan.ids("qr", "add", "--phase", "impl-code", "--check", "after freeze")  # execution goes on


def test_ids_are_assigned_max_plus_one_and_never_by_the_caller(plan: Plan) -> None:
    assert plan.ids("decision", "add", "--decision", "a", "--reasoning", "r") == ["DL-001"]
    assert plan.ids("decision", "add", "--decision", "b", "--reasoning", "r") == ["DL-002"]
    assert plan.json("decision", "add", "--decision", "c", "--reasoning", "r") == {
        "ids": ["DL-003"]
    }
    plan("decision", "add", "--id", "DL-900", "--decision", "d", "--reasoning", "r", code=2)


def test_history_diff_and_log_tell_what_changed(plan: Plan, tmp_path: Path) -> None:
    build_with_commands(plan, tmp_path)
    plan.ids("decision", "add", "--decision", "Use a template", "--reasoning", "later")
    plan("decision", "supersede", "DL-001", "--by", "DL-002", "--reason", "templates")
    history = plan.json("history")
    assert [h["rev"] for h in history] == [f"r{n}" for n in range(1, len(history) + 1)]
    assert history[-1]["command"] == "decision supersede"
    assert "^ DL-001 by DL-002\n    superseded_reason: 'templates'" in plan("diff").stdout
    text = plan("diff", "r1").stdout  # the content, not only the ids
    assert text.startswith("r1 (plan.json revision 1) -> now: ")  # what a revision name is
    assert "timestamp" not in text and "context_lines" not in text  # bookkeeping left out
    assert "\n      +def farewell" in text  # an added change's diff whole, not "++" lines
    assert "+ DL-002 'Use a template'\n    decision: 'Use a template'\n" in text
    changes = plan.json("diff", "r1")
    added = next(c for c in changes if c["what"] == "DL-002")
    assert added["after"]["reasoning_chain"] == "later" and added["before"] == {}
    kinds = {(c["kind"], c["what"]) for c in changes}
    assert {("added", "M-001"), ("added", "CC-001"), ("added", "DL-002")} <= kinds
    assert ("changed", "overview") in kinds
    log = plan("log", "--limit", "2", "--json").stdout.splitlines()
    assert [json.loads(line)["command"] for line in log] == ["decision add", "decision supersede"]
    plan("diff", "r99", code=2)
    assert "A revision, rN, is plan.json as the Nth change" in plan("diff", "--help").stdout
    plan("context", "add", "assumptions", "Python 3.8 is enough")
    plan("question", "add", "--category", "scope", "--kind", "text", "--text", "Which locales?")
    shown = plan("review", "show").stdout  # before step 11: the plan so far, no verdict line
    assert shown.startswith("Not in review (") and "Your verdict" not in shown
    assert "    CC-001 src/app.py (CI-001):" in shown
    assert shown.endswith(
        "Open questions and assumptions:\n  Q-001 (open) Which locales?\n  Python 3.8 is enough\n"
    )


def test_show_status_waves_and_schema(plan: Plan, tmp_path: Path) -> None:
    build_with_commands(plan, tmp_path)
    outline = plan("show").stdout
    assert "M-001 Farewell function" in outline and "CI-001 src/app.py" in outline
    assert plan.json("show")["overview"]["title"] == "Farewell"
    assert json.loads(plan("show", "CC-001", "--json").stdout)["intent_ref"] == "CI-001"
    shown = plan("show", "CC-001").stdout  # for a person: fields a line, the diff as a diff
    diff = plan.json("show", "CC-001")["diff"]
    assert "intent_ref: CI-001" in shown and "diff:\n" + diff.rstrip("\n") + "\n" in shown
    assert "\\n" not in shown and not shown.lstrip().startswith("{")
    milestone = plan("show", "M-001").stdout
    assert "id: M-001" in milestone and "code_changes:\n  - id: CC-001" in milestone
    plan("show", "CC-404", code=2)
    assert plan.json("show", "overview")["title"] == "Farewell"
    assert {"invariants", "tradeoffs"} <= set(plan.json("show", "knowledge"))
    assert plan.json("show", "waves") == plan.json("waves")
    for topic, other in (("Store", "postgres"), ("Cache", "none")):
        first, then = '{"name": "a", "recommended": true}', f'{{"name": "{other}"}}'
        plan("choice", "add", "--topic", topic, "--option-json", first, "--option-json", then)
    assert plan.json("show", "D-002/OPT-B")["name"] == "none"
    assert plan.json("waves")["waves"] == [
        {"wave": 1, "milestones": ["M-001"]},
        {"wave": 2, "milestones": ["M-002"]},
    ]
    status = plan.json("status")
    assert status["status"] == "discovery" and status["state_dir"]
    for name in ("plan", "context", "qr", "session", "execution"):
        assert "$defs" in json.loads(plan("schema", name).stdout) or name == "config"
    plan("schema", "nonsense", code=2)


def test_validate_formats_and_targets(plan: Plan, session_dir: Path, tmp_path: Path) -> None:
    plan.ids("milestone", "add", "--name", "TBD later")
    report = json.loads(plan("validate", "--format", "json", "--phase", "design", code=3).stdout)
    assert not report["ok"] and not report["targets"][0]["ok"]
    findings = report["targets"][0]["findings"]
    assert findings and all(
        f["fix"].startswith("plan ") or f["fix"].startswith("replace") for f in findings
    )
    github = plan("validate", "--format", "github", str(session_dir / "plan.json"), code=3)
    assert github.stdout.startswith("::error file=")
    plan("validate", str(tmp_path / "nowhere"), code=2)


def test_no_session_and_bad_usage_exit_2(project: Path, tmp_path: Path) -> None:
    plan = Plan(project)
    done = plan("status", code=2)
    assert "no session found" in done.stderr and "planner --step 1" in done.stderr
    plan("decision", "add", "--decision", "d", "--reasoning", "r", code=2)
    plan("frobnicate", code=2)
    plan("decision", "add", "--decision", code=2)
    assert "Usage" in plan("--help").stdout


SECOND_DIFF = "".join(
    line + "\n"
    for line in [
        "--- a/src/app.py",
        "+++ b/src/app.py",
        "@@ -3,3 +3,6 @@",
        " ",
        " def farewell(name):",
        "     return 'bye ' + name",
        "+",
        "+def wave(name):",
        "+    return 'o/ ' + name",
    ]
)


def test_diffs_to_one_file_apply_in_wave_order(plan: Plan, tmp_path: Path) -> None:
    build_with_commands(plan, tmp_path)
    (tmp_path / "second.diff").write_text(SECOND_DIFF)
    plan.ids(
        "milestone",
        "add",
        "--name",
        "Wave",
        "--file",
        "src/app.py",
        "--acceptance",
        "ok",
        "--depends",
        "M-001",
    )
    plan.ids("intent", "add", "--milestone", "M-003", "--file", "src/app.py", "--behavior", "w")
    plan.ids(
        "change",
        "add",
        "--intent",
        "CI-002",
        "--file",
        "src/app.py",
        "--diff",
        str(tmp_path / "second.diff"),
    )
    plan("validate", "--phase", "code")  # applies on top of M-001's farewell
    plan("milestone", "set", "M-003", "--depends", "M-002")  # no longer needs M-001 ...
    plan("milestone", "set", "M-002", "--no-doc-only", "--depends", "")  # ... M-002 goes first
    plan("milestone", "set", "M-001", "--depends", "M-003")  # and M-001 comes last
    done = plan("validate", "--phase", "code", code=3)
    assert "CC-002" in done.stdout and "does not apply" in done.stdout


def test_the_item_a_command_acts_on_is_its_first_argument(plan: Plan) -> None:
    """`plan doc set M-n` as `plan exec done M-n`; the former --milestone still works (plans
    and batches written before), hidden from --help; both at once must agree."""
    plan("milestone", "add", "--name", "One", "--file", "src/app.py")
    assert plan("doc", "set", "M-001", "--docstring", "d: one").stdout.split() == ["M-001"]
    assert plan("doc", "set", "--milestone", "M-001", "--inline", "x").stdout.split() == ["M-001"]
    doc = plan.json("show", "M-001")["documentation"]
    assert doc["docstrings"] == ["d: one"] and doc["inline_comments"] == ["x"]
    assert "M-n: required" in plan("doc", "set", "--inline", "y", code=2).stderr
    twice = plan("doc", "set", "M-001", "--milestone", "M-002", "--inline", "y", code=2)
    assert "M-n: given twice" in twice.stderr
    helped = plan("doc", "set", "--help").stdout
    assert "doc set [OPTIONS] M-n" in helped and "--milestone" not in helped
    assert "--milestone" not in plan("exec", "deviation", "--help").stdout
    batch = [{"op": "doc set", "args": {"id": "M-001", "algorithm": ["a"]}},
             {"op": "doc set", "args": {"milestone": "M-001", "module_comment": "m"}}]  # fmt: skip
    plan("apply", "-", input=json.dumps(batch))
    doc = plan.json("show", "M-001")["documentation"]
    assert doc["algorithm_blocks"] == ["a"] and doc["module_comment"] == "m"
