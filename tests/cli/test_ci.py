"""`plan validate` and `plan verify` as CI runs them (issue 13): many
sessions, one JSON document always, GitHub annotations with lines and escaping, signatures.

Every test drives the real `plan` console script in a real git repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Plan, git

INVALID_PLAN = """\
{
  "schema_version": 2,
  "plan_id": "p-1",
  "created_at": "2024-05-01T12:00:00Z",
  "overview": {"title": "Ship 100% TBD"},
  "planning_context": {
    "known_risks": [
      {"id": "R-001", "risk": "r", "mitigation": "m", "decision_ref": "DL-007"}
    ]
  },
  "milestones": [
    {"id": "M-001", "number": 1, "name": "A", "risk": "severe", "depends_on": ["M-009"]}
  ]
}
"""

# What GitHub is sent for the three sessions: data escapes % CR LF, properties also : and ,
# (@actions/core command.ts escapeData / escapeProperty). Lines and columns are 1-based.
EXPECTED_GITHUB = """\
::error file=.planner/a-damaged/plan.json,line=1,col=23,title=plan validate (damaged-file)::\
not valid JSON (Unterminated string starting at line 1 column 23); damaged, left as it is
::error file=.planner/b-invalid%2C100%25%3Ax/plan.json,line=12,col=47,endLine=12,endColumn=63,\
title=plan validate (schema)::milestones[0].risk: 'severe' is not one of low, medium, high
::error file=.planner/b-invalid%2C100%25%3Ax/plan.json,line=8,col=55,endLine=8,endColumn=79,\
title=plan validate (dangling-reference)::planning_context.known_risks[R-001].decision_ref: \
refers to decision DL-007, which does not exist (fix: plan risk set R-001 --decision DL-n)
::error file=.planner/b-invalid%2C100%25%3Ax/plan.json,line=12,col=65,endLine=12,endColumn=88,\
title=plan validate (dangling-reference)::milestones[M-001].depends_on: refers to milestone \
M-009, which does not exist (fix: plan milestone set M-001 --depends M-n)
::error file=.planner/b-invalid%2C100%25%3Ax/plan.json,line=5,col=16,endLine=5,endColumn=40,\
title=plan validate (placeholder)::overview.title: placeholder 'TBD' left in 'Ship 100%25 TBD' \
(fix: replace it with the real content (plan … set))
"""


def new_session(project: Path, name: str) -> Path:
    """A fresh session under .planner/NAME (a fixed name, so outputs can be compared)."""
    from state.ops import session

    store = session.create(str(project), f"Task {name}", {}, non_interactive=False)
    target = project / ".planner" / name
    Path(store.dir).rename(target)
    (project / ".planner" / "ACTIVE").write_text(name + "\n")
    return target


def three_sessions(project: Path) -> tuple[Path, Path, Path]:
    damaged = new_session(project, "a-damaged")
    (damaged / "plan.json").write_text('{"schema_version": 2, "plan_')
    invalid = new_session(project, "b-invalid,100%:x")
    (invalid / "plan.json").write_text(INVALID_PLAN)
    good = new_session(project, "c-good")
    (project / ".planner" / "ACTIVE").unlink()
    return damaged, invalid, good


def test_validate_all_github_prints_exactly_the_annotations(project: Path) -> None:
    three_sessions(project)
    done = Plan(project)("validate", "--all", "--format", "github", code=3)
    assert done.stdout == EXPECTED_GITHUB
    from_below = Plan(project / "src")("validate", "--all", "--format", "github", code=3)
    assert from_below.stdout == EXPECTED_GITHUB  # paths are relative to the repository root


def test_validate_many_paths_and_all_with_one_exit_code(project: Path) -> None:
    _, invalid, good = three_sessions(project)
    plan = Plan(project)
    assert "c-good: valid" in plan("validate", str(good)).stdout
    assert "c-good/plan.json: valid" in plan("validate", str(good / "plan.json")).stdout
    both = plan("validate", str(good), str(invalid / "plan.json"), code=3)
    assert "c-good: valid" in both.stdout and "4 problem(s)" in both.stdout
    report = json.loads(plan("validate", "--all", "--json", code=3).stdout)
    assert [t["path"] for t in report["targets"]] == [
        ".planner/a-damaged",
        ".planner/b-invalid,100%:x",
        ".planner/c-good",
    ]
    assert [t["ok"] for t in report["targets"]] == [False, False, True]
    assert report["exit_code"] == 3 and report["ok"] is False
    # A path that is no session is a usage error (2); an invalid plan outranks it (3).
    plan("validate", str(good), str(project / "nowhere"), code=2)
    plan("validate", str(project / "nowhere"), str(invalid), code=3)
    twice = json.loads(plan("validate", str(good), str(good), "--all", "--json", code=3).stdout)
    assert [t["path"] for t in twice["targets"]][:2] == [".planner/c-good", ".planner/a-damaged"]
    assert len(twice["targets"]) == 3  # a session named twice is checked once
    # The .planner/ directory itself stands for all its sessions.
    assert len(json.loads(plan("validate", ".planner", "--json", code=3).stdout)["targets"]) == 3


def test_every_schema_error_and_reference_is_reported(project: Path) -> None:
    _, invalid, _ = three_sessions(project)
    report = json.loads(Plan(project)("validate", str(invalid), "--json", code=3).stdout)
    findings = report["targets"][0]["findings"]
    messages = [f["message"] for f in findings]
    assert "'severe' is not one of low, medium, high" in messages
    assert sum("does not exist" in m for m in messages) == 2
    assert all(f["line"] and f["col"] for f in findings)


def test_json_is_one_document_even_when_nothing_is_found_or_damaged(project: Path) -> None:
    plan = Plan(project)
    for args in (
        ["validate", "--format", "json"],
        ["verify", "--json"],
        ["verify", "--all", "--json"],
    ):
        done = plan(*args)  # nothing to check is a warning, as ruff says it (exit 0)
        report = json.loads(done.stdout)
        assert report["exit_code"] == 0 and report["targets"] == []
        assert report["findings"][0]["message"].startswith("nothing to check")
        assert report["findings"][0]["level"] == "warning"
    truncated = approved_session(project, "truncated")
    (truncated / "plan.json").write_bytes((truncated / "plan.json").read_bytes()[:40])
    report = json.loads(plan("verify", str(truncated), "--json", code=3).stdout)
    assert "not valid JSON" in report["targets"][0]["findings"][0]["message"]
    damaged, _, _ = three_sessions(project)
    (damaged / "session.json").write_text('{"id": "x", ')
    for command in ("validate", "verify"):
        report = json.loads(plan(command, str(damaged), "--json", code=3).stdout)
        assert set(report) == {
            *("command", "ok", "exit_code", "phase", "strict", "findings", "targets")
        }
        assert set(report["targets"][0]) == {
            "path",
            "kind",
            "status",
            "judged",
            "ok",
            "signer",
            "findings",
        }
        finding = report["targets"][0]["findings"][0]
        assert set(finding) == {
            *("rule", "level", "path", "message", "fix", "file"),
            *("line", "col", "end_line", "end_col"),
        }
        assert "damaged" in finding["message"] and finding["line"] == 1


def test_conflicting_formats_are_refused(project: Path) -> None:
    new_session(project, "s")
    plan = Plan(project)
    for command in ("validate", "verify"):
        done = plan(command, "--json", "--format", "github", code=2)
        assert "conflict" in json.loads(done.stdout)["findings"][0]["message"]
    assert "--format" in plan("validate", "--format", "yaml", code=2).stderr
    bad_phase = plan("validate", "--phase", "nope", "--json", code=2)
    assert json.loads(bad_phase.stdout)["exit_code"] == 2


def test_no_active_session_among_several_says_so(project: Path) -> None:
    three_sessions(project)
    done = Plan(project)("validate", code=2)
    assert "no active session: 3 sessions in .planner/; pass a path or --all" in done.stderr
    assert "start one" not in done.stdout + done.stderr
    assert done.stdout == ""
    github = Plan(project)("verify", "--format", "github", code=2).stdout
    assert github.startswith("::error title=plan verify (usage)::no active session: 3 sessions")


def test_validate_answers_clearly_on_files_that_are_no_plan(project: Path) -> None:
    session = new_session(project, "s")
    plan = Plan(project)
    done = plan("validate", str(session / "session.json"), code=2)
    assert "session.json is a session's session record, not a plan" in done.stdout
    other = project / "other.json"
    other.write_text('{"name": "x"}')
    assert f"{other}: not a session or plan" in plan("validate", str(other), code=2).stdout


def test_github_escapes_file_names_and_messages(project: Path) -> None:
    odd = project / "odd 100%,a:b\nc.json"
    odd.write_text('{"plan_id": "p", "created_at": "2024-05-01T12:00:00Z", "milestones": [')
    done = Plan(project)("validate", str(odd), "--format", "github", code=3)
    assert done.stdout == (
        "::error file=odd 100%25%2Ca%3Ab%0Ac.json,line=1,col=71,title=plan validate "
        "(damaged-file)::"
        "not valid JSON (Expecting value at line 1 column 71); damaged, left as it is\n"
    )
    assert " ::" not in done.stdout  # no trailing space in a title


def test_escaping_is_actions_core_escaping() -> None:
    """@actions/core command.ts: escapeData (% CR LF) and escapeProperty (also : and ,)."""
    from cli.ci_report import escape_data, escape_property, github_command

    assert escape_data("100% a:b,c\r\nd") == "100%25 a:b,c%0D%0Ad"
    assert escape_property("100% a:b,c\r\nd") == "100%25 a%3Ab%2Cc%0D%0Ad"
    assert github_command("error", "m", file="f", line=None, title="") == "::error file=f::m"
    assert github_command("notice", "m") == "::notice::m"


def approved_session(project: Path, name: str, *extra: str) -> Path:
    """A session put in review by hand and approved with `plan review approve`."""
    directory = new_session(project, name)
    session = json.loads((directory / "session.json").read_text())
    session["status"] = "review"
    (directory / "session.json").write_text(json.dumps(session, indent=2))
    Plan(project)("review", "approve", "--by", "Ann", "--state-dir", str(directory), *extra)
    return directory


def test_verify_judges_approved_sessions_and_lists_the_others(project: Path) -> None:
    new_session(project, "a-open")
    approved = approved_session(project, "b-approved")
    plan = Plan(project)
    done = plan("verify", "--all")
    assert "a-open: not approved (status discovery)" in done.stdout
    assert "b-approved: verified" in done.stdout
    github = plan("verify", "--all", "--format", "github").stdout
    assert github.startswith("::notice file=.planner/a-open/session.json,line=")
    plan("verify", "--all", "--require-approved", code=3)
    plan_json = approved / "plan.json"
    edited = json.loads(plan_json.read_text())
    edited["overview"]["title"] = "Edited by hand"
    plan_json.write_text(json.dumps(edited, indent=2))
    github = plan("verify", "--all", "--format", "github", code=3).stdout
    where = "::error file=.planner/b-approved/plan.json,line=1,col=1,title=plan verify"
    assert github.startswith("::notice") and f"\n{where} (content-changed)::plan.json:" in github
    assert "content changed after approval" in github
    assert "content changed after approval" in github


def test_the_first_session_writes_planner_gitignore(project: Path) -> None:
    new_session(project, "s")
    ignore = (project / ".planner" / ".gitignore").read_text()
    for local in ("ACTIVE", ".lock", "*.tmp", "audit.jsonl", "history/"):
        assert local in ignore.splitlines()
    git(project, "add", ".planner")
    tracked = git(project, "ls-files", ".planner").split()
    assert sorted(Path(t).name for t in tracked) == [
        ".gitignore",
        "context.json",
        "plan.json",
        "session.json",
    ]


def test_scratch_files_are_ignored_and_an_older_gitignore_gets_the_line(project: Path) -> None:
    """scratch/ (where the prompts put the agent's files) is ignored: `git add .planner`
    leaves it out. A .gitignore an older planner wrote gets the line when a session starts;
    one the user rewrote is theirs."""
    first = new_session(project, "s")
    (first / "scratch").mkdir()
    (first / "scratch" / "batch.json").write_text("[]")
    git(project, "add", ".planner")
    assert "scratch" not in git(project, "ls-files", ".planner")
    ignore = project / ".planner" / ".gitignore"
    older = "".join(ln + "\n" for ln in ignore.read_text().splitlines() if "scratch" not in ln)
    ignore.write_text(older + "mine/\n")
    new_session(project, "t")
    assert ignore.read_text().startswith(older + "mine/\n")  # the user's line kept
    assert "*/scratch/" in ignore.read_text().splitlines()
    ignore.write_text("# my own\nACTIVE\n")
    new_session(project, "u")
    assert ignore.read_text() == "# my own\nACTIVE\n"


def test_schema_carries_schema_id_and_descriptions(project: Path) -> None:
    plan = Plan(project)
    for name in ("plan", "context", "qr", "session", "execution", "config"):
        schema = json.loads(plan("schema", name).stdout)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$id"] == f"urn:planner:schema:{name}"
        for where, node in [("", schema), *schema.get("$defs", {}).items()]:
            for key, prop in node.get("properties", {}).items():
                assert prop.get("description"), f"{name} {where}.{key}: no description"
    helped = plan("schema", "--help").stdout
    assert all(name in helped for name in ("plan", "context", "qr", "session", "execution"))


# ---------------------------------------------------------------- signed approvals


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen")
def test_signed_approval_verifies_and_tampering_fails(project: Path, tmp_path: Path) -> None:
    key = tmp_path / "id_ed25519"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "ann", "-f", str(key)], check=True
    )
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"ann@example.com {(tmp_path / 'id_ed25519.pub').read_text()}")
    git(project, "config", "gpg.format", "ssh")
    git(project, "config", "user.signingkey", str(key))
    git(project, "config", "gpg.ssh.allowedSignersFile", str(allowed))
    plan = Plan(project)

    unsigned = approved_session(project, "a-unsigned")
    signed = approved_session(project, "b-signed", "--sign")
    record = json.loads((signed / "session.json").read_text())["approval"]["signature"]
    assert record["format"] == "ssh" and "BEGIN SSH SIGNATURE" in record["signature"]
    plan("verify", str(signed), "--require-signature")
    done = plan("verify", str(unsigned), "--require-signature", code=3)
    assert "not signed" in done.stdout
    plan("verify", str(unsigned))  # a missing signature is fine unless required

    # Plan edited and hash recomputed in session.json: integrity holds, the signature does not.
    from state.rules.approval import plan_hash

    plan_json = signed / "plan.json"
    edited = json.loads(plan_json.read_text())
    edited["overview"]["title"] = "Edited by someone who can write the files"
    plan_json.write_text(json.dumps(edited, indent=2))
    session = json.loads((signed / "session.json").read_text())
    session["approval"]["sha256"] = plan_hash(edited)
    session["reviews"][-1]["sha256"] = plan_hash(edited)  # every record made to agree
    (signed / "session.json").write_text(json.dumps(session, indent=2))
    (signed / "plan.md").unlink(missing_ok=True)
    done = plan("verify", str(signed), "--format", "github", code=3)
    assert "signature does not verify" in done.stdout
    assert done.stdout.startswith("::error file=.planner/b-signed/session.json,line=")

    # A key nobody trusts.
    allowed.write_text("")
    assert "not in gpg.ssh.allowedSignersFile" in plan("verify", str(signed), code=3).stdout


def test_sign_without_a_key_writes_nothing(project: Path) -> None:
    directory = new_session(project, "s")
    session = json.loads((directory / "session.json").read_text())
    session["status"] = "review"
    (directory / "session.json").write_text(json.dumps(session, indent=2))
    git(project, "config", "gpg.format", "ssh")
    git(project, "config", "user.signingkey", str(project / "no-such-key"))
    before = (directory / "session.json").read_bytes()
    plan = Plan(project)
    done = plan("review", "approve", "--sign", "--state-dir", str(directory), code=3)
    assert "could not sign" in done.stderr
    assert (directory / "session.json").read_bytes() == before


@pytest.mark.skipif(shutil.which("gpg") is None, reason="needs gpg")
def test_openpgp_signed_approval(project: Path, tmp_path: Path) -> None:
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    env = {"GNUPGHOME": str(home)}
    gpg = ["gpg", "--batch", "--passphrase", "", "--pinentry-mode", "loopback"]
    try:
        subprocess.run(
            [*gpg, "--quick-gen-key", "Ann <ann@example.com>", "ed25519", "sign", "never"],
            env={**os.environ, **env},
            check=True,
            capture_output=True,
        )
        git(project, "config", "user.signingkey", "ann@example.com")
        directory = new_session(project, "s")
        session = json.loads((directory / "session.json").read_text())
        session["status"] = "review"
        (directory / "session.json").write_text(json.dumps(session, indent=2))
        plan = Plan(project)
        approve = ("review", "approve", "--by", "Ann", "--sign", "--state-dir", str(directory))
        plan(*approve, env=env)
        record = json.loads((directory / "session.json").read_text())["approval"]["signature"]
        assert record["format"] == "openpgp" and "BEGIN PGP SIGNATURE" in record["signature"]
        done = plan("verify", str(directory), "--require-signature", env=env)
        assert "signed by Ann <ann@example.com> (" in done.stdout  # the key's user id
        plan("verify", str(directory), "--require-signer-match", env=env)  # Ann is its name
        assert len(record["fingerprint"]) == 40
        session = json.loads((directory / "session.json").read_text())
        session["id"] = "another-session"  # the signature names the session it approved
        (directory / "session.json").write_text(json.dumps(session, indent=2))
        done = plan("verify", str(directory), env=env, code=3)
        assert "OpenPGP signature does not verify" in done.stdout
    finally:
        subprocess.run(["gpgconf", "--kill", "all"], env={**os.environ, **env}, check=False)


WAVE_AFTER_FAREWELL = (  # built on FAREWELL_DIFF (its blank context line is one space)
    "--- a/src/app.py\n+++ b/src/app.py\n@@ -3,3 +3,6 @@\n \n def farewell(name):\n"
    "     return 'bye ' + name\n+\n+def wave():\n+    return 'o/'\n"
)


def test_milestones_of_one_wave_changing_one_file_warn_at_plan_time(project: Path) -> None:
    """Two milestones without --depends between them both change src/app.py, the second's diff
    built on the first's: a warning by default and at --phase code, an error with --strict."""
    from tests.plans import FAREWELL_DIFF
    from tests.state import builders as b

    def milestone(n: int, diff: str) -> dict:
        return b.milestone(
            n,
            acceptance_criteria=[f"criterion {n}"],
            code_intents=[b.intent(n)],
            code_changes=[b.change(n, f"CI-{n:03d}", diff=diff)],
        )

    doc = b.plan(
        overview={"title": "Bye", "problem": "No goodbye.", "approach": "Add two functions."},
        milestones=[milestone(1, FAREWELL_DIFF), milestone(2, WAVE_AFTER_FAREWELL)],
    )
    path = project / "plan.json"
    path.write_text(json.dumps(doc, indent=2))
    plan = Plan(project)
    session = new_session(project, "s")  # a session: warned while planned, not once frozen
    (session / "plan.json").write_text(json.dumps(doc, indent=2))
    assert "same-file-same-wave" in plan("validate", "--format", "github").stdout
    session_doc = json.loads((session / "session.json").read_text())
    (session / "session.json").write_text(json.dumps({**session_doc, "status": "review"}))
    plan("review", "approve", "--by", "Ann", "--state-dir", str(session))
    plan("validate", "--strict", str(session))
    expected = (
        "milestones[M-002].depends_on: M-001 and M-002 both change src/app.py in wave 1: they "
        "run side by side, though M-002's diffs build on M-001's "
        "(fix: plan milestone set M-002 --depends M-001)"
    )
    for phase in ((), ("--phase", "code")):
        done = plan("validate", str(path), *phase)
        assert f"warning: {expected}" in done.stdout + done.stderr, done
    plan("validate", str(path), "--strict", code=3)
    github = plan("validate", str(path), "--format", "github").stdout
    assert "title=plan validate (same-file-same-wave)::milestones[M-002].depends_on" in github
    assert github.startswith("::warning file=plan.json,line=")
    doc["milestones"][1]["depends_on"] = ["M-001"]
    path.write_text(json.dumps(doc, indent=2))
    assert "same-file-same-wave" not in plan("validate", str(path), "--format", "github").stdout
    plan("validate", str(path), "--phase", "code", "--strict")


def approved(project: Path, name: str, *extra: str) -> Path:
    """An approved session under .planner/NAME (plan.md rendered), committed."""
    directory = approved_session(project, name, *extra)
    git(project, "add", ".planner")
    git(project, "commit", "-qm", f"plan {name}")
    return directory
