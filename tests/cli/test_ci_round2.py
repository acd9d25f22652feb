"""Round 2 of `plan validate` / `plan verify` (PRODUCT.md §13, §16; issue 22): paths named
as people and GitHub read them, one JSON document for every outcome, session.json checked,
signatures that cover who and when, SARIF, --strict, and `plan ask` ending on Ctrl-D.

Every test drives the real `plan` console script in a real git repository.
"""

from __future__ import annotations

import json
import os
import string
import subprocess
from pathlib import Path

import pexpect
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli.test_ci import INVALID_PLAN, approved_session, new_session
from tests.conftest import BIN, REPO, Plan, git

# ---------------------------------------------------------------- plan ask: Ctrl-D


def test_plan_ask_ctrl_d_with_questions_open_exits_130_keeping_answers(
    plan: Plan, project: Path
) -> None:
    for text in ("One?", "Two?", "Three?"):
        plan("question", "add", "--category", "scope", "--kind", "yes_no", "--text", text)
    env = {**{k: v for k, v in os.environ.items() if k != "CI"}, "TERM": "xterm"}
    child = pexpect.spawn(
        str(BIN / "plan"), ["ask"], cwd=str(project), encoding="utf-8", timeout=30, env=env
    )
    child.expect("Enter skips > ")
    child.sendline("yes")
    child.expect("recorded: yes")
    child.expect(r"\(2/3\) Q-002")
    child.sendeof()  # Ctrl-D on an empty line: end of input
    child.expect("Stopped; the answers given so far are saved.")
    child.expect("1 answered, 0 skipped, 2 still open")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert plan.json("show", "Q-001")["answer"] == "yes"
    assert plan.json("show", "Q-002")["answer"] is None


# ---------------------------------------------------------------- paths, named right


def approved(project: Path, name: str, *extra: str) -> Path:
    """An approved session under .planner/NAME (plan.md rendered), committed."""
    directory = approved_session(project, name, *extra)
    git(project, "add", ".planner")
    git(project, "commit", "-qm", f"plan {name}")
    return directory


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


def test_the_pre_commit_hook_catches_tampering_and_damage(project: Path, tmp_path: Path) -> None:
    from tests.cli.test_precommit import try_repo

    directory = approved(project, "s")
    home = tmp_path / "pre-commit"
    assert try_repo(project, home).returncode == 0
    edited = json.loads((directory / "plan.json").read_text())
    edited["overview"]["title"] = "Edited after approval"
    (directory / "plan.json").write_text(json.dumps(edited, indent=2))
    git(project, "add", ".planner")
    done = try_repo(project, home)
    assert done.returncode == 1 and "content changed after approval" in done.stdout
    git(project, "checkout", "HEAD", "--", ".planner")
    (directory / "session.json").write_text('{"status": "approved", ')
    git(project, "add", ".planner")
    done = try_repo(project, home)
    assert done.returncode == 1 and ".planner/s/session.json:1" in done.stdout


def readme_block(after: str, language: str) -> str:
    """The first fenced block of `language` after the line `after` in README.md."""
    text = (REPO / "README.md").read_text()
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
