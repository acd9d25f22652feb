"""Round 2 of `plan validate` / `plan verify`: paths named
as people and GitHub read them, one JSON document for every outcome, session.json checked,
signatures that cover who and when, SARIF, --strict, and `plan ask` ending on Ctrl-D.

Every test drives the real `plan` console script in a real git repository.
"""

from __future__ import annotations

import json
import os
import shutil
import string
import subprocess
from pathlib import Path

import pexpect
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli.test_ci import INVALID_PLAN, approved_session, new_session, three_sessions
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


# ---------------------------------------------------------------- signatures


def ssh_signer(project: Path, tmp_path: Path, principal: str = "ann@example.com") -> Path:
    """An ed25519 key as git's signing key, trusted for `principal` in allowed signers."""
    key = tmp_path / "keys" / "id_ed25519"
    key.parent.mkdir()
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ann", "-f", str(key)], check=True
    )
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"{principal} {key.with_suffix('.pub').read_text()}")
    git(project, "config", "gpg.format", "ssh")
    git(project, "config", "user.signingkey", str(key))
    git(project, "config", "gpg.ssh.allowedSignersFile", str(allowed))
    return key


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen")
def test_a_signature_covers_who_and_when_and_names_the_signer(
    project: Path, tmp_path: Path
) -> None:
    key = ssh_signer(project, tmp_path)
    directory = approved(project, "s", "--by", "ann@example.com", "--sign")
    text = (directory / "session.json").read_text()
    assert str(key) not in text and "keys" not in text  # no local key path is stored
    record = json.loads(text)["approval"]["signature"]
    assert record["version"] == 3 and record["fingerprint"].startswith("SHA256:")
    assert record.get("key", "") == ""  # the old field, empty
    plan = Plan(project)
    done = plan("verify", ".planner/s", "--require-signature", "--require-signer-match")
    assert f"signed by ann@example.com ({record['fingerprint']})" in done.stdout
    signer = json.loads(plan("verify", ".planner/s", "--json").stdout)["targets"][0]["signer"]
    assert signer == {
        "principal": "ann@example.com",
        "fingerprint": record["fingerprint"],
        "format": "ssh",
    }

    # Another approver and another time (plan.md left out, so only the signature can tell).

    session = json.loads(text)
    session["approval"].update(by="mallory", at="2020-01-01T00:00:00Z")
    session["reviews"][-1]["by"] = "mallory"
    (directory / "session.json").write_text(json.dumps(session, indent=2))
    (directory / "plan.md").unlink()
    done = plan("verify", ".planner/s", "--require-signature", "--format", "github", code=3)
    assert "(signature-invalid)::" in done.stdout and "who approved, when" in done.stdout


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen")
def test_a_signer_who_is_not_the_approver_warns_and_can_be_required_to_match(
    project: Path, tmp_path: Path
) -> None:
    ssh_signer(project, tmp_path)
    approved(project, "s", "--by", "Bob", "--sign")
    plan = Plan(project)
    done = plan("verify", ".planner/s")  # a warning: exit 0
    assert "warning: approval.signature: signed by ann@example.com, but approved by Bob" in (
        done.stdout.replace("session.json:", "")
    )
    plan("verify", ".planner/s", "--strict", code=3)
    done = plan("verify", ".planner/s", "--require-signer-match", "--json", code=3)
    finding = json.loads(done.stdout)["targets"][0]["findings"][0]
    assert (finding["rule"], finding["level"]) == ("signer-mismatch", "error")


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen")
def test_an_old_form_signature_is_checked_and_said_to_cover_less(
    project: Path, tmp_path: Path
) -> None:
    """A version 1 record (session id and sha256 signed, the key's path stored), as sessions
    signed before round 2 have it."""
    key = ssh_signer(project, tmp_path)
    directory = approved(project, "s", "--by", "ann@example.com")
    session = json.loads((directory / "session.json").read_text())
    approval = session["approval"]
    old = f"planner approval\nsession {session['id']}\nsha256 {approval['sha256']}\n"
    signed = subprocess.run(
        ["ssh-keygen", "-Y", "sign", "-n", "planner", "-f", str(key)],
        input=old.encode(),
        capture_output=True,
        check=True,
    )
    approval["signature"] = {
        "format": "ssh",
        "key": str(key),
        "signature": signed.stdout.decode(),
    }
    (directory / "session.json").write_text(json.dumps(session, indent=2))
    plan = Plan(project)
    done = plan("verify", ".planner/s")
    assert "warning: " in done.stdout and "signed the old way (version 1)" in done.stdout
    assert "(signature-old-form)" in done.stdout
    plan("verify", ".planner/s", "--require-signature", code=3)
    plan("verify", ".planner/s", "--strict", code=3)
    approval["sha256"] = "0" * 64  # and a version 1 signature that does not verify
    (directory / "session.json").write_text(json.dumps(session, indent=2))
    plan("verify", ".planner/s", code=3)


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


# ---------------------------------------------------------------- what is signed, generated


names = st.text(alphabet=string.ascii_letters + " .-_'", min_size=1, max_size=20).filter(
    lambda s: s.strip() and "<" not in s
)


@settings(max_examples=50, deadline=None)
@given(name=names, user=st.from_regex(r"[a-z]{1,8}", fullmatch=True))
def test_a_signer_matches_by_name_or_email_ignoring_case(name: str, user: str) -> None:
    from state.repo.signing import matches

    email = f"{user}@example.com"
    identity = f"{name} <{email}>"
    assert matches(identity, name.strip().upper()) and matches(identity, email.upper())
    assert matches(email, email) and not matches(email, f"x{user}")
    assert not matches(identity, f"{name.strip()}x")


@settings(max_examples=50, deadline=None)
@given(
    by=st.text(min_size=1, max_size=30),
    other=st.text(min_size=1, max_size=30),
    when=st.datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")),
)
def test_what_is_signed_changes_with_who_and_when(by: str, other: str, when: str) -> None:
    """Version 2 signs a canonical record: any other approver or time is other bytes."""
    from state.repo.signing import payload

    approval = {"by": by, "at": "2026-01-01T00:00:00Z", "sha256": "a" * 64}
    signed = payload("s-1", approval)
    assert signed == payload("s-1", dict(reversed(list(approval.items()))))  # key order
    if other != by:
        assert payload("s-1", {**approval, "by": other}) != signed
    if when != approval["at"]:
        assert payload("s-1", {**approval, "at": when}) != signed
    assert payload("s-1", {**approval, "by": other}, version=1) == payload("s-1", approval, 1)
