"""Overlapping plans where people and agents meet them: `plan validate --all` (every format),
`planner --step 1` and `plan list`, run in this process (tests/inprocess.py) in real git
repositories."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Plan, git
from tests.conftest import run_in_process as run  # `plan` and `planner` in this process
from tests.overlaps import planning

LATER = "2024-05-02T08:30:00Z"


def two_planning_app(project: Path) -> None:
    planning(project, "a-first", files=["src/app.py"], intents=[("src/app.py", "greet")])
    planning(project, "b-later", intents=[("src/app.py", "greet")], created_at=LATER)


def test_validate_all_github_warns_once_on_the_later_plan_naming_both(project: Path) -> None:
    two_planning_app(project)
    done = Plan(project)("validate", "--all", "--format", "github")
    [line] = done.stdout.splitlines()
    assert line.startswith("::warning file=.planner/b-later/plan.json,line=")
    assert "title=plan validate (overlapping-plans)::" in line
    message = line.split("::")[2]
    assert message.startswith(
        "milestones[M-001].code_intents[CI-001].function: sessions b-later and a-first both "
        "plan changes to greet in src/app.py: M-001 CI-001 here, M-001 CI-001 there"
    )
    Plan(project)("validate", "--all", "--format", "github", "--strict", code=3)


def test_validate_all_json_and_sarif_carry_the_rule(project: Path) -> None:
    two_planning_app(project)
    plan = Plan(project)
    report = json.loads(plan("validate", "--all", "--format", "json").stdout)
    findings = [f for t in report["targets"] for f in t["findings"]]
    assert [(f["rule"], f["level"], f["file"]) for f in findings] == [
        ("overlapping-plans", "warning", ".planner/b-later/plan.json")
    ]
    assert report["ok"] is True and findings[0]["line"]
    log = json.loads(plan("validate", "--all", "--format", "sarif").stdout)
    [result] = log["runs"][0]["results"]
    assert (result["ruleId"], result["level"]) == ("overlapping-plans", "warning")
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    assert rules[result["ruleIndex"]]["defaultConfiguration"]["level"] == "warning"


def test_validate_all_says_nothing_of_a_failed_or_cancelled_session(project: Path) -> None:
    planning(project, "a-failed", files=["src/app.py"], status="failed")
    planning(project, "b-dropped", files=["src/app.py"], status="cancelled")
    planning(project, "c-open", files=["src/app.py"], created_at=LATER)
    done = Plan(project)("validate", "--all", "--format", "github")
    assert "overlapping-plans" not in done.stdout


def test_validate_all_finds_a_session_of_another_worktree_and_notes_its_damage(
    project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other-tree"
    git(project, "worktree", "add", "-q", "-b", "other", str(other))
    planning(project, "a-here", files=["README.md"])
    planning(other, "b-there", files=["README.md"], created_at=LATER)
    damaged = planning(other, "c-damaged", files=["README.md"])
    (damaged / "session.json").write_text("{")
    report = json.loads(Plan(project)("validate", "--all", "--json").stdout)
    [target] = report["targets"]  # only this work tree's sessions are validated
    [finding] = target["findings"]
    assert "sessions a-here and b-there (in work tree" in finding["message"]
    assert finding["file"] == ".planner/a-here/plan.json"
    [note] = report["findings"]
    assert note["level"] == "notice" and "c-damaged not checked for overlaps" in note["message"]
    listed = Plan(project)("list").stdout
    assert "[overlaps b-there (in " in listed  # the path git gives for the work tree
    assert listed.rstrip().endswith("other-tree): README.md]")


def test_step_1_names_both_sessions_and_nothing_when_there_is_none(project: Path) -> None:
    alone = run("planner", "--step", "1", "--task", "Nothing else open", cwd=project)
    assert alone.returncode == 0 and "Overlap" not in alone.stdout
    two_planning_app(project)
    done = run("planner", "--step", "1", "--task", "A third plan", cwd=project)
    assert done.returncode == 0, done.stderr
    assert (
        "Overlap: open sessions a-first and b-later both plan changes to greet in src/app.py."
        in done.stdout
    )
    assert "Tell the user; plan around those files" in done.stdout
    damaged = planning(project, "c-damaged", files=["src/app.py"])
    (damaged / "plan.json").write_text("[")
    again = run("planner", "--step", "1", "--state-dir", ".planner/a-first", cwd=project)
    assert "Overlap: open session b-later also plans changes to greet in src/app.py." in (
        again.stdout
    )
    assert "Not checked for overlaps (damaged): c-damaged; plan validate --all says why." in (
        again.stdout
    )
    argv = ("--step", "1", "--task", "Nobody asked", "--non-interactive")
    unattended = run("planner", *argv, cwd=project)
    assert "Overlap: open sessions a-first and b-later" in unattended.stdout
    assert "Tell the user" not in unattended.stdout


def test_plan_list_marks_overlapping_sessions_and_json_carries_them(project: Path) -> None:
    two_planning_app(project)
    planning(project, "c-apart", files=["docs/other.md"])
    plan = Plan(project)
    lines = plan("list").stdout.splitlines()
    assert lines[0].endswith("[overlaps b-later: greet in src/app.py]")
    assert lines[1].endswith("[overlaps a-first: greet in src/app.py]")
    assert "[overlaps" not in lines[2]
    rows = {r["session"]: r for r in json.loads(plan("list", "--json").stdout)}
    assert rows["c-apart"]["overlaps"] == []
    [seen] = rows["b-later"]["overlaps"]
    assert seen["session"] == "a-first" and (seen["file"], seen["function"]) == (
        "src/app.py",
        "greet",
    )
    assert seen["ours"] == {"milestones": ["M-001"], "intents": ["CI-001"]}


def test_step_1_keeps_many_overlaps_short(project: Path) -> None:
    for name in "abcdefg":  # seven sessions on one file: 21 pairs
        planning(project, name, files=["README.md"])
    done = run("planner", "--step", "1", "--task", "An eighth plan", cwd=project)
    lines = [line for line in done.stdout.splitlines() if line.startswith("Overlap:")]
    assert len(lines) == 6 and lines[0].startswith("Overlap: open sessions a and b both")
    assert lines[-1] == "Overlap: 16 more pair(s) of open sessions (plan list marks them)."


def test_step_1_names_the_other_open_sessions_and_what_they_plan(project: Path) -> None:
    """A second session hears of the first at once, before either has planned a file."""
    alone = run("planner", "--step", "1", "--task", "Add a farewell", cwd=project)
    assert "Other open sessions" not in alone.stdout
    first = Path(json.loads(Plan(project)("status", "--json").stdout)["state_dir"]).name
    second = run("planner", "--step", "1", "--task", "Rename greet", cwd=project)
    assert second.returncode == 0, second.stderr
    assert "Other open sessions in this repository (plan list):" in second.stdout
    assert f"- {first} (discovery): Add a farewell; no files planned yet." in second.stdout
    assert "Tell the user; if your task touches what one of them plans" in second.stdout
    planning(project, "c-planned", files=["src/app.py", "README.md"])
    third = run("planner", "--step", "1", "--task", "A third", cwd=project)
    assert "- c-planned (discovery): Task c-planned; plans changes to README.md, src/app.py." in (
        third.stdout
    )
