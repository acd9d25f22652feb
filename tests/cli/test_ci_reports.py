"""What `plan validate` / `plan verify` report: paths named as people and GitHub read them,
one JSON document for every outcome, session.json checked, SARIF, --strict, and nothing to
check. (Signatures: test_ci_signatures.py.)

Every test drives the real `plan` console script in a real git repository.
"""

from __future__ import annotations

import json
import os
import shutil
import string
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli.test_ci import INVALID_PLAN, approved, new_session, three_sessions
from tests.conftest import BIN, REPO, Plan, git

# ---------------------------------------------------------------- paths, named right


def test_plan_md_problems_name_plan_md_relative_to_the_repository_wherever_run(
    project: Path, tmp_path: Path
) -> None:
    directory = approved(project, "s")
    plan_md = directory / "plan.md"
    lines = plan_md.read_text().splitlines(keepends=True)
    lines[2] = "Edited by hand\n"
    plan_md.write_text("".join(lines))
    expected = (
        "::error file=.planner/s/plan.md,line=3,title=plan verify (plan-md-mismatch)::plan.md: "
        "does not match plan.json"
    )
    for cwd, where in (
        (project, ".planner/s"),
        (project / "src", "../.planner/s"),
        (tmp_path, None),
    ):
        target = where or str(directory)
        done = Plan(cwd)("verify", target, "--format", "github", code=3)
        assert done.stdout.startswith(expected), (cwd, done.stdout)
        report = json.loads(Plan(cwd)("verify", target, "--json", code=3).stdout)
        finding = report["targets"][0]["findings"][0]
        assert (finding["file"], finding["path"], finding["line"]) == (
            ".planner/s/plan.md",
            "plan.md",
            3,
        )
        assert report["targets"][0]["path"] == ".planner/s"
    # validate catches it too (the pre-commit hook runs validate)
    assert "plan.md: does not match" in Plan(tmp_path)("validate", str(directory), code=3).stdout


# ---------------------------------------------------------------- one JSON document, always


def test_usage_errors_print_one_document_in_json_and_sarif(project: Path) -> None:
    new_session(project, "s")
    plan = Plan(project)
    for command in ("validate", "verify"):
        for fmt in (["--json"], ["--format", "json"], ["--format=json"]):
            done = plan(command, *fmt, "--no-such-flag", code=2)
            report = json.loads(done.stdout)
            assert report["exit_code"] == 2 and report["ok"] is False
            finding = report["findings"][0]
            assert "--no-such-flag" in finding["message"] and finding["rule"] == "usage"
            assert "--no-such-flag" in done.stderr  # and the reason in one line on stderr
        done = plan(
            command, "--format", "sarif", "--phase" if command == "verify" else "-Z", code=2
        )
        log = json.loads(done.stdout)
        invocation = log["runs"][0]["invocations"][0]
        assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
        assert log["runs"][0]["results"] == []
    assert plan("validate", "--no-such-flag", code=2).stdout == ""  # text: click's one line


@settings(max_examples=25, deadline=None)
@given(
    flag=st.text(alphabet=string.ascii_lowercase + "-", min_size=1, max_size=12),
    where=st.integers(0, 2),
)
def test_any_unknown_option_with_json_is_one_json_document(flag: str, where: int) -> None:
    """In process (cli.main.dispatch): wherever the bad flag stands, --json gives a document."""
    import contextlib
    import io

    from cli.main import dispatch

    bad = f"--zz{flag}"
    argv = ["--json", "--all"]
    argv.insert(where, bad)
    for command in ("validate", "verify"):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = dispatch([command, *argv])
        assert code == 2
        report = json.loads(out.getvalue())
        assert report["exit_code"] == 2 and bad in report["findings"][0]["message"]


# ---------------------------------------------------------------- paths that are no session


def test_a_path_that_is_no_session_or_plan_exits_2_naming_it_whole(project: Path) -> None:
    new_session(project, "s")
    plan = Plan(project)
    for command in ("validate", "verify"):
        done = plan(command, "README.md", code=2)
        assert "README.md: not a session or plan" in done.stdout
        done = plan(command, "does/not/exist", code=2)
        assert "does/not/exist: not found" in done.stdout
        done = plan(command, "src", code=2)
        assert "src: not a session or plan" in done.stdout
        report = json.loads(plan(command, "does/not/exist", "--json", code=2).stdout)
        finding = report["targets"][0]["findings"][0]
        assert finding["rule"] == "not-found" and finding["file"] == "does/not/exist"


# ---------------------------------------------------------------- session.json, tampering


def test_validate_checks_session_json_and_an_approved_plans_hash(project: Path) -> None:
    directory = approved(project, "s")
    plan = Plan(project)
    plan("validate", "--all")
    session_json = directory / "session.json"
    good = session_json.read_text()
    session_json.write_text('{"status": "approved", ')
    done = plan("validate", "--all", "--format", "github", code=3)
    assert done.stdout.startswith("::error file=.planner/s/session.json,line=1,col=24,")
    assert "(damaged-file)::not valid JSON" in done.stdout
    session_json.write_text(good)
    edited = json.loads((directory / "plan.json").read_text())
    edited["overview"]["title"] = "Edited after approval"
    (directory / "plan.json").write_text(json.dumps(edited, indent=2))
    report = json.loads(plan("validate", "--all", "--json", code=3).stdout)
    rules = [f["rule"] for f in report["targets"][0]["findings"]]
    assert "content-changed" in rules


@pytest.mark.network
def test_the_pre_commit_hook_catches_tampering_and_damage(
    project: Path, tmp_path: Path, wheelhouse: Path
) -> None:
    from tests.cli.test_precommit import try_repo

    directory = approved(project, "s")
    home = tmp_path / "pre-commit"
    assert try_repo(project, home, wheelhouse).returncode == 0
    edited = json.loads((directory / "plan.json").read_text())
    edited["overview"]["title"] = "Edited after approval"
    (directory / "plan.json").write_text(json.dumps(edited, indent=2))
    git(project, "add", ".planner")
    done = try_repo(project, home, wheelhouse)
    assert done.returncode == 1 and "content changed after approval" in done.stdout
    verify_hook = try_repo(project, home, wheelhouse, "planner-verify")
    assert verify_hook.returncode == 1 and "planner verify" in verify_hook.stdout
    assert "content changed after approval" in verify_hook.stdout
    git(project, "checkout", "HEAD", "--", ".planner")
    (directory / "session.json").write_text('{"status": "approved", ')
    git(project, "add", ".planner")
    done = try_repo(project, home, wheelhouse)
    assert done.returncode == 1 and ".planner/s/session.json:1" in done.stdout


def readme_block(after: str, language: str) -> str:
    """The first fenced block of `language` after the line `after` in docs/ci.md."""
    text = (REPO / "docs" / "ci.md").read_text()
    start = text.index(f"```{language}\n", text.index(after)) + len(language) + 4
    return text[start : text.index("```", start)]


def test_the_readme_pre_commit_snippet_works_as_written(project: Path, tmp_path: Path) -> None:
    snippet = readme_block("A pre-commit hook", "yaml")
    (project / ".pre-commit-config.yaml").write_text(snippet)
    bad = new_session(project, "bad")
    (bad / "plan.json").write_text(INVALID_PLAN)
    git(project, "add", ".")
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit"),
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
    }
    env.pop("PLANNER_STATE_DIR", None)
    done = subprocess.run(
        [str(BIN / "pre-commit"), "run", "--all-files"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "planner validate" in done.stdout and "Failed" in done.stdout
    assert "'severe' is not one of low, medium, high" in done.stdout


# ---------------------------------------------------------------- SARIF, --strict


def test_sarif_has_rules_results_and_repository_relative_locations(
    project: Path, tmp_path: Path
) -> None:
    _, _, good = three_sessions(project)
    (good / "context.json").unlink()  # a warning: question references not checked
    done = Plan(tmp_path)("validate", str(project / ".planner"), "--format", "sarif", code=3)
    log = json.loads(done.stdout)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert run["tool"]["driver"]["name"] == "planner"
    assert all(r["id"] and r["shortDescription"]["text"] for r in rules)
    results = run["results"]
    assert len(results) == 6
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in ("error", "warning", "note") and result["message"]["text"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"].startswith(".planner/")
    by_rule = {r["ruleId"]: r for r in results}
    schema = by_rule["schema"]["locations"][0]["physicalLocation"]
    assert schema["artifactLocation"]["uri"] == ".planner/b-invalid%2C100%25%3Ax/plan.json"
    assert schema["region"] == {"startLine": 12, "startColumn": 47, "endLine": 12, "endColumn": 63}
    assert by_rule["questions-unchecked"]["level"] == "warning"
    assert by_rule["damaged-file"]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 1,
        "startColumn": 23,
    }
    assert run["invocations"][0]["exitCode"] == 3
    for rule in rules:  # what to do, beside each alert
        assert rule["help"]["text"] and rule["helpUri"].startswith("https://")
    prints = [r["partialFingerprints"]["plannerFinding/v1"] for r in results]
    assert len(set(prints)) == len(prints)  # one per finding
    again = Plan(tmp_path)("validate", str(project / ".planner"), "--format", "sarif", code=3)
    assert [r["partialFingerprints"] for r in json.loads(again.stdout)["runs"][0]["results"]] == [
        r["partialFingerprints"] for r in results
    ]
    quiet = Plan(tmp_path)(
        "validate", str(project / ".planner"), "--format", "sarif", "--exit-zero"
    )  # the same log, exit 0: an upload step that only reports
    assert json.loads(quiet.stdout)["runs"][0]["results"] == results
    Plan(tmp_path)("validate", "--exit-zero", "--phase", "nonsense", code=2)  # usage: still 2


def test_an_unapproved_session_is_a_notification_in_sarif_not_an_alert(project: Path) -> None:
    approved(project, "a-approved")
    new_session(project, "b-open")
    plan = Plan(project)
    log = json.loads(plan("verify", "--all", "--format", "sarif").stdout)
    (run,) = log["runs"]
    assert [r["ruleId"] for r in run["results"]] == []
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert [n["message"]["text"] for n in notes] == [
        ".planner/b-open/session.json: status: not approved (status discovery): nothing to "
        "verify yet"
    ]
    strict = plan("verify", "--all", "--require-approved", "--format", "sarif", code=3)
    (result,) = json.loads(strict.stdout)["runs"][0]["results"]
    assert (result["ruleId"], result["level"]) == ("not-approved", "error")


def test_strict_makes_warnings_failures(project: Path) -> None:
    directory = new_session(project, "s")
    (directory / "context.json").unlink()
    plan = Plan(project)
    done = plan("validate", ".planner/s")
    assert ".planner/s: valid" in done.stdout
    assert "warning: no context.json: question references are not checked" in done.stdout
    done = plan("validate", ".planner/s", "--strict", "--json", code=3)
    report = json.loads(done.stdout)
    assert report["strict"] is True and report["targets"][0]["ok"] is False


# ---------------------------------------------------------------- cancelled, nothing to check


def test_cancelled_sessions_are_not_unapproved(project: Path) -> None:
    approved(project, "a-approved")
    for name, status in (("b-cancelled", "cancelled"), ("c-failed", "failed")):
        directory = new_session(project, name)
        session = json.loads((directory / "session.json").read_text())
        session["status"] = status
        (directory / "session.json").write_text(json.dumps(session, indent=2))
    new_session(project, "d-open")
    (project / ".planner" / "ACTIVE").unlink()
    plan = Plan(project)
    done = plan("verify", "--all", "--require-approved", code=3)
    assert ".planner/b-cancelled: cancelled, not checked" in done.stdout
    assert ".planner/c-failed: failed, not checked" in done.stdout
    assert ".planner/d-open: not approved (status discovery)" in done.stdout
    assert "plan verify: 1 of 4 failed" in done.stderr
    shutil.rmtree(project / ".planner" / "d-open")
    plan("verify", "--all", "--require-approved")


def test_no_planner_directory_is_nothing_to_check(project: Path) -> None:
    plan = Plan(project)
    for command in ("validate", "verify"):
        for every in ([], ["--all"]):
            done = plan(command, *every)
            assert done.stdout == ""
            assert (
                done.stderr
                == f"plan {command}: warning: nothing to check: no session in .planner/\n"
            )
        log = json.loads(plan(command, "--format", "sarif").stdout)
        assert log["runs"][0]["results"] == []
        assert log["runs"][0]["invocations"][0]["executionSuccessful"] is True
    assert plan("validate", "--format", "github").stdout.startswith(
        "::warning title=plan validate (nothing-to-check)::nothing to check"
    )
