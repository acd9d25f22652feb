"""Result review in the terminal: after executor step 9 an interactive session waits in
result_review; `plan result show` shows what was done, `accept` completes the session,
`request-changes` opens an amendment with the feedback as its task; both verdicts are the
person's acts (the guard asks, `plan apply` refuses them)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from state.validation.limits import COMMENTS_MAX, FEEDBACK_MAX, NAME_MAX
from tests.cli.result_helpers import copy_of, init_project
from tests.conftest import git
from tests.conftest import run_in_process as run  # `plan` and `planner` in this process
from tests.hooks.test_guard import bash
from tests.hooks.test_guard_own import decide
from tests.workflows.helpers import to_approval


def session(state: Path) -> dict:
    return json.loads((state / "session.json").read_text())


def plan(project: Path, *args: str, code: int = 0, input: str | None = None):
    done = run("plan", *args, cwd=project, input=input)
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    return done


def test_step_9_leaves_an_interactive_session_in_result_review(reviewing: Path, tmp_path: Path):
    project, state = copy_of(reviewing, tmp_path)
    record = session(state)
    assert record["status"] == "result_review"
    (opened,) = record["result_reviews"]
    assert (opened["round"], opened["verdict"], opened["policy"]) == (1, "submitted", False)
    status = plan(project, "status").stdout
    assert f"IF PASS: plan result accept --state-dir {state}" in status
    assert "IF FAIL: plan result request-changes" in status


def test_show_puts_the_planned_diff_beside_the_commit(reviewing: Path, tmp_path: Path):
    project, _state = copy_of(reviewing, tmp_path)
    text = plan(project, "result", "show").stdout
    head = git(project, "rev-parse", "HEAD").strip()
    assert f"commit {head[:12]} M-001 Farewell" in text
    planned, committed = text.split(" planned CC-001 src/app.py:")[1].split(" commit ")[:2]
    assert "      4 +def farewell(name):" in planned
    assert "src/app.py: = CC-001 (as planned, numbered above)" in committed  # not again
    assert "+def farewell(name):" not in committed
    assert "test src/app.py: ran" in text and "evidence: farewell works" in text
    assert "deviation DV-001: kept greet as it was" in text
    assert "M-001      done         1/1" in text  # the reconcile table
    shown = json.loads(plan(project, "result", "show", "--json").stdout)
    assert shown["status"] == "result_review" and shown["sha256"] in text
    (m,) = shown["milestones"]
    assert [c["sha"] for c in m["commits"]] == [head]
    assert m["commits"][0]["files"][0]["path"] == "src/app.py"
    assert [d["id"] for d in m["deviations"]] == ["DV-001"]
    assert m["tests"] == [{"file": "src/app.py", "milestone": "M-001", "ran": True}]
    assert shown["rounds"][0]["sha256"] == shown["sha256"]  # step 9 recorded what it shows


def test_accept_completes_the_session_with_who_and_the_hash_shown(reviewing: Path, tmp_path: Path):
    project, state = copy_of(reviewing, tmp_path)
    sha = json.loads(plan(project, "result", "show", "--json").stdout)["sha256"]
    done = plan(project, "result", "accept", "--by", "bob", "--expect-sha256", sha)
    assert "DONE: the result is accepted (round 1, by bob)" in done.stderr
    record = session(state)
    assert record["status"] == "completed"
    last = record["result_reviews"][-1]
    assert (last["verdict"], last["by"], last["sha256"]) == ("accepted", "bob", sha)
    assert plan(project, "status").stdout.rstrip().endswith("DONE")
    assert not (state / "worktree").exists()  # a completed session keeps no worktree
    again = plan(project, "result", "accept", code=4)  # one verdict per round
    assert "no result in review" in again.stderr
    said = "Commit its record: "  # whoever reads it (the person, or the agent), then the command
    [line] = [x for x in done.stderr.splitlines() if x.startswith(said)]
    subprocess.run(["bash", "-c", line.removeprefix(said)], cwd=project, check=True)
    assert git(project, "status", "--porcelain", "--", ".planner") == ""  # the record is whole


def test_request_changes_opens_an_amendment_with_the_feedback(reviewing: Path, tmp_path: Path):
    project, state = copy_of(reviewing, tmp_path)
    feedback = "farewell must say goodbye, not bye"
    done = plan(
        project, "result", "request-changes", "--feedback", feedback,
        "--comment", "M-001:src/app.py:5=say goodbye here",
        "--comment", "M-001:4=one file: the file may be left out",
        "--comment", "CC-001:5: the plan said bye too",
        "--comment", "DV-001=why keep greet?",
        "--by", "bob",
    )  # fmt: skip
    assert "changes requested (result round 1)" in done.stderr
    # before the amended plan is carried out, the person approves it: the line says so
    assert "the person approves the amended plan before it is carried out" in done.stderr
    record = session(state)
    assert record["status"] != "result_review"
    assert record["amendments"][-1]["task"] == feedback
    last = record["result_reviews"][-1]
    assert (last["verdict"], last["feedback"], last["by"]) == ("changes_requested", feedback, "bob")
    assert [(c["anchor"], c["file"], c["line"]) for c in last["comments"]] == [
        ("M-001", "src/app.py", 5),
        ("M-001", "src/app.py", 4),
        ("CC-001", None, 5),
        ("DV-001", None, None),
    ]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--feedback", "  "], "--feedback is required"),
        (["--feedback", "x", "--comment", "M-001:src/app.py:99=no"], "show lines 1-5"),
        (["--feedback", "x", "--comment", "M-001:README.md:1=no"], "name one of the files"),
        (["--feedback", "x", "--comment", "M-009=no such"], "M-009"),
        (["--feedback", "x", "--comment", "DV-007=no such"], "no DV-007"),
        (["--feedback", "x", "--comment", "DV-001:3=lines?"], "no lines"),
        (["--feedback", "x", "--comment", "just words"], "expected 'ID=TEXT'"),
        (["--feedback", "x" * (FEEDBACK_MAX + 1)], "over the limit"),
        (["--feedback", "x", "--by", "n" * (NAME_MAX + 1)], "over the limit"),
        (["--feedback", "x", *["--comment", "M-001=a"] * (COMMENTS_MAX + 1)], "over the limit"),
    ],
)
def test_bad_input_is_refused_with_exit_2_and_nothing_stored(
    reviewing: Path, tmp_path: Path, args: list[str], says: str
):
    project, state = copy_of(reviewing, tmp_path)
    before = (state / "session.json").read_bytes()
    done = plan(project, "result", "request-changes", *args, code=2)
    assert says in done.stderr, done.stderr
    assert (state / "session.json").read_bytes() == before


def test_a_result_changed_since_it_was_shown_is_refused(reviewing: Path, tmp_path: Path):
    project, state = copy_of(reviewing, tmp_path)
    done = plan(project, "result", "accept", "--expect-sha256", "0" * 64, code=4)
    assert "changed since it was shown" in done.stderr
    assert session(state)["status"] == "result_review"
    for typo in ("0" * 63, "x" * 64, "abc"):  # a mistyped hash is a usage error, not stale
        done = plan(project, "result", "accept", "--expect-sha256", typo, code=2)
        assert f"--expect-sha256: {typo!r} is not a sha256 (64 hex digits" in done.stderr
        done = plan(project, "review", "approve", "--expect-sha256", typo, code=2)
        assert f"--expect-sha256: {typo!r} is not a sha256" in done.stderr, done.stderr
    assert session(state)["status"] == "result_review"


def test_verdicts_need_a_result_in_review(tmp_path: Path):
    project = init_project(tmp_path / "project")
    agent, _out = to_approval(project)  # approved, not executed
    assert "no result in review" in agent.plan("result", "accept", code=4).stderr
    agent.plan("result", "request-changes", "--feedback", "f", code=4)
    assert "Traceback" not in agent.plan("result", "show").stderr


def test_a_non_interactive_session_is_accepted_by_policy(tmp_path: Path):
    from tests.cli.result_helpers import execute

    project = init_project(tmp_path / "project")
    agent, out = to_approval(project)  # non-interactive: nobody is asked
    out = execute(agent, out)
    assert out.done and "accepted by policy" in out.text
    record = session(Path(out.state_dir))
    assert record["status"] == "completed"
    (accepted,) = record["result_reviews"]
    assert (accepted["verdict"], accepted["by"], accepted["policy"]) == ("accepted", "policy", True)
    assert len(accepted["sha256"]) == 64


# -- the person's acts ---------------------------------------------------------------------


@pytest.mark.parametrize("act", ["result accept", "result request-changes"])
def test_plan_apply_refuses_the_verdicts(reviewing: Path, tmp_path: Path, act: str):
    project, state = copy_of(reviewing, tmp_path)
    batch = [{"op": act, "args": {"feedback": "f", "by": "agent"}}]
    done = plan(project, "apply", "-", input=json.dumps(batch), code=4)
    assert f"`plan {act}` is the person's act" in done.stderr
    assert session(state)["status"] == "result_review"


@pytest.mark.parametrize(
    "command",
    [
        "plan result accept",
        "plan result accept --by me",
        "plan result request-changes --feedback x",
    ],
)
def test_the_guard_asks_the_person_for_a_verdict(reviewing: Path, tmp_path: Path, command: str):
    project, _ = copy_of(reviewing, tmp_path)
    decision, reason = decide(bash(command, project))
    assert decision == "ask" and "person" in reason, reason
    for dialect in ("codex", "gemini"):  # no ask there: denied, saying where the person acts
        decision, reason = decide(bash(command, project), dialect)
        assert decision == "deny" and "terminal" in reason, reason
    assert decide(bash("plan result show", project)) == ("allow", "")


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    anchor=st.sampled_from(["M-001", "CC-001", "DV-001", "M-001:src/app.py", "qa-1"]),
    line=st.one_of(st.none(), st.integers(0, 9)),
    sep=st.sampled_from(["=", ": ", " = "]),
    text=st.text(min_size=1, max_size=30),
)
@example(anchor="DV-001", line=3, sep="=", text="\t")  # blank text: not DV-001 saying "3="
@example(anchor="M-001:src/app.py", line=None, sep=" = ", text="\x1c")
def test_comments_parse_or_say_why(anchor: str, line: int | None, sep: str, text: str) -> None:
    """Any comment text is a record with its anchor, file and line, or a usage error."""
    from cli.comments import result_comment
    from state.errors import UsageError

    written = anchor + (f":{line}" if line is not None else "") + sep + text
    try:
        got = result_comment(written)
    except UsageError as e:
        assert e.message.startswith("comment") and e.field == "comment"
        return
    assert got["anchor"] == anchor.split(":")[0].upper()
    assert got["line"] == line
    assert got["file"] == ("src/app.py" if ":src/app.py" in anchor else None)
    assert got["text"] == got["text"].strip() and got["text"]


@pytest.mark.parametrize("written", ["CC-004:3=\t", "DL-001:7: ", "Q-001=\r\n", "DL-002 :"])
def test_a_plan_review_comment_without_text_is_refused(written: str) -> None:
    """The plan review's comments too: a blank text is an error, never a shorter head."""
    from cli.comments import review_comment
    from state.errors import UsageError

    with pytest.raises(UsageError, match="has no text"):
        review_comment(written)
    assert review_comment("CC-004:3: off by one") == {
        "anchor": "CC-004",
        "line": 3,
        "text": "off by one",
    }


def test_result_text_prints_a_commit_only_where_it_differs_from_the_plan() -> None:
    from cli.result_text import milestone_text
    from state.ops.result_view import lines_of

    planned = "--- a/f.py\n+++ b/f.py\n@@ -1 +1,2 @@\n x\n+y\n"
    other = "--- a/f.py\n+++ b/f.py\n@@ -1 +1,2 @@\n x\n+z\n"
    milestone = {
        "id": "M-001", "name": "N", "status": "done", "evidence": [], "tests": [],
        "deviations": [], "reconcile": None,
        "planned": [{"id": "CC-001", "file": "f.py", "lines": lines_of(planned)}],
    }  # fmt: skip
    for diff, shown in ((planned, False), (other, True)):
        files = [{"path": "f.py", "lines": lines_of(diff)}]
        commit = {"sha": "a" * 40, "short": "a" * 12, "subject": "M-001 N", "files": files}
        text = "\n".join(milestone_text({**milestone, "commits": [commit]}))  # type: ignore[typeddict-item]
        assert ("f.py: = CC-001" in text) is not shown
        assert ("+z" in text) is shown and text.count("+y") == 1


def test_a_file_of_several_planned_changes_is_printed_once_in_its_commit(tmp_path: Path) -> None:
    """CC-001 then CC-005 on one file (a rework built on the first): the commit is the two
    applied in order, so each planned change is one line and the file's diff is printed once,
    in the commit (the trial's cli.py was printed three times). A commit that differs from
    them prints the planned diffs whole."""
    from cli.result_text import milestone_text
    from state.ops.result_view import commit_view, composed, lines_of

    project = init_project(tmp_path / "project")
    first = (
        "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,5 @@\n def greet(name):\n"
        "     return 'hi ' + name\n+\n+def bye():\n+    return 'bye'\n"
    )
    second = (
        "--- a/src/app.py\n+++ b/src/app.py\n@@ -3,3 +3,3 @@\n \n def bye():\n"
        "-    return 'bye'\n+    return 'goodbye'\n"
    )
    changes = [
        {"id": "CC-005", "intent_ref": "CI-006", "file": "src/app.py", "diff": second},
        {"id": "CC-001", "intent_ref": "CI-001", "file": "src/app.py", "diff": first},
    ]
    m = {"id": "M-001", "name": "Bye", "code_changes": changes}
    plan = {"milestones": [m], "milestone_dependencies": {"waves": []}}
    app = project / "src" / "app.py"
    for body in ("return 'goodbye'", "return 'ciao'"):
        app.write_text(f"def greet(name):\n    return 'hi ' + name\n\ndef bye():\n    {body}\n")
        git(project, "commit", "-qam", "M-001 Bye")
        sha = git(project, "rev-parse", "HEAD").strip()
        commit = composed(str(project), commit_view(str(project), sha), m, plan)  # type: ignore[arg-type]
        result = {
            "id": "M-001", "name": "Bye", "status": "done", "evidence": [], "tests": [],
            "deviations": [], "reconcile": None, "commits": [commit],
            "planned": [{"id": c["id"], "file": c["file"], "lines": lines_of(c["diff"])}
                        for c in changes],
        }  # fmt: skip
        text = "\n".join(milestone_text(result))  # type: ignore[arg-type]
        if body == "return 'goodbye'":
            assert commit["files"][0]["planned"] == ["CC-001", "CC-005"]
            assert (
                " planned CC-001 src/app.py (+3 -0): with CC-005, in the commit's diff below"
                in (text)
            )
            assert (
                " planned CC-005 src/app.py (+1 -1): with CC-001, in the commit's diff below"
                in (text)
            )
            assert "  src/app.py: = CC-001 then CC-005 (as planned):" in text
            assert text.count("+def bye():") == 1 and text.count("'goodbye'") == 1
        else:  # not what was planned: the planned diffs and the commit, each whole
            assert "planned" not in commit["files"][0]
            assert " planned CC-001 src/app.py:\n" in text and "'ciao'" in text
            assert " planned CC-005 src/app.py:\n" in text and "+    return 'ciao'" in text
