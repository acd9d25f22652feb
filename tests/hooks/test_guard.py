"""The read-only guard hook, end to end: real git projects, real sessions, the real script."""

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hooks import guard_hook as guard
from hooks.guard_rules import classify_bash
from tests.hooks.guard_corpus import ALLOW, ASK, CORPUS, DENY, OWN

GUARD = Path(__file__).resolve().parents[2] / "hooks" / "guard.py"
KIND_TO_LABEL = {guard.OK: ALLOW, guard.UNKNOWN: ASK, guard.MUTATE: DENY}


def make_session(root: Path, name: str, status: str = "design", guard_mode: str = "standard"):
    state_dir = root / ".planner" / name
    (state_dir / "worktree").mkdir(parents=True)
    session = {"id": name, "status": status, "config": {"guard": guard_mode}}
    (state_dir / "session.json").write_text(json.dumps(session))
    (root / ".planner" / "ACTIVE").write_text(name + "\n")
    return state_dir


def init_project(root: Path) -> Path:
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("PLANNER_STATE_DIR", raising=False)
    monkeypatch.delenv("PLANNER_DEBUG", raising=False)
    for name in ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PLANNER_SANDBOX", "off")  # layer 1 alone; tests/hooks/test_sandbox.py
    return home


@pytest.fixture
def project(tmp_path, home):
    return init_project(tmp_path / "project")


@pytest.fixture
def session(project):
    return make_session(project, "s1")


def bash(command: str, cwd: Path, **extra) -> dict:
    return {"tool_name": "Bash", "tool_input": {"command": command}, "cwd": str(cwd), **extra}


def write(path, cwd: Path, tool: str = "Write", **extra) -> dict:
    key = "notebook_path" if tool == "NotebookEdit" else "file_path"
    return {"tool_name": tool, "tool_input": {key: str(path)}, "cwd": str(cwd), **extra}


def run_script(payload, *args: str, cwd: Path, env: dict | None = None):
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    full_env = {k: v for k, v in os.environ.items() if k != "PLANNER_STATE_DIR"}
    full_env.update(env or {})
    command = [sys.executable, "-S", str(GUARD), *args]
    result = subprocess.run(command, input=data, capture_output=True, cwd=cwd, env=full_env)
    assert result.returncode == 0
    assert b"Traceback" not in result.stderr
    return result


def decide(payload, dialect: str = "claude") -> tuple[str, str]:
    """In-process: (decision, reason); ("allow", "") when the hook prints nothing."""
    output = guard.run(json.dumps(payload).encode(), dialect)
    return parse_output(output, dialect)


def parse_output(output, dialect: str = "claude") -> tuple[str, str]:
    if isinstance(output, bytes):
        output = output.decode()
    if not output.strip():
        return ALLOW, ""
    data = json.loads(output)
    if dialect == "gemini":
        assert set(data) == {"decision", "reason"}
        return data["decision"], data["reason"]
    assert set(data) == {"hookSpecificOutput"}
    inner = data["hookSpecificOutput"]
    assert inner["hookEventName"] == "PreToolUse"
    assert inner["permissionDecision"] in (DENY, ASK)
    return inner["permissionDecision"], inner["permissionDecisionReason"]


def audit_lines(state_dir: Path) -> list[dict]:
    path = state_dir / "audit.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


# -- the corpus ------------------------------------------------------------------------------


def test_corpus_is_large_and_mixed():
    labels = Counter(label for _, label in CORPUS)
    assert len(CORPUS) >= 100
    assert labels[ALLOW] >= 40 and labels[DENY] >= 40 and labels[ASK] >= 10
    assert len({command for command, _ in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize(("command", "label"), CORPUS, ids=[c[:40] for c, _ in CORPUS])
def test_corpus_classification(command, label):
    verdict = classify_bash(command)
    assert KIND_TO_LABEL[verdict.level] == label, verdict


LAYER_ONE = [(c, label) for c, label in CORPUS if (c, label) not in OWN]


def test_corpus_through_the_hook_in_process(session, project):
    for command, label in LAYER_ONE:
        decision, reason = decide(bash(command, project))
        assert decision == label, (command, reason)
        if decision != ALLOW:
            assert "Planning is read-only" in reason and str(session) in reason
    blocked = [label for _, label in LAYER_ONE if label != ALLOW]
    lines = audit_lines(session)
    assert len(lines) == len(blocked)
    assert [line["decision"] for line in lines] == blocked


@pytest.mark.parametrize(
    ("command", "label"), LAYER_ONE[::6], ids=[c[:40] for c, _ in LAYER_ONE[::6]]
)
def test_corpus_sample_through_the_script(session, project, command, label):
    result = run_script(bash(command, project), cwd=project)
    assert parse_output(result.stdout)[0] == label


def test_deny_reason_names_the_offending_part_and_what_to_do(session, project):
    decision, reason = decide(bash("ls && rm -rf build", project))
    assert decision == DENY
    assert reason.startswith("`rm -rf build` deletes files.")
    assert "plan change add" in reason


# -- file tools ------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", ["Write", "Edit", "MultiEdit", "NotebookEdit"])
def test_file_tools_write_only_inside_the_worktree(session, project, tool):
    worktree = session / "worktree"
    assert decide(write(worktree / "src" / "app.py", project, tool))[0] == ALLOW
    for target in (project / "src" / "app.py", session / "notes.md", worktree):
        decision, reason = decide(write(target, project, tool))
        assert decision == DENY
        assert "outside the session's scratch worktree" in reason and "plan worktree" in reason


@pytest.mark.parametrize("name", ["session.json", "plan.json", "audit.jsonl", "history/r1.json"])
def test_session_state_is_out_of_reach_of_file_tools(session, project, name):
    assert decide(write(session / name, project))[0] == DENY
    assert decide(write(session / "worktree" / ".." / name, project, "Edit"))[0] == DENY
    assert decide(write(project / ".planner" / "ACTIVE", project))[0] == DENY


def test_gits_own_files_in_the_worktree_are_out_of_reach(session, project):
    worktree = session / "worktree"
    for target in (".git", ".git/config", "sub/.git/config", "sub/.git"):
        decision, reason = decide(write(worktree / target, project))
        assert decision == DENY and "git's own files" in reason
    assert decide(write(worktree / ".gitignore", project))[0] == ALLOW


def test_no_worktree_yet_means_no_file_writes(session, project):
    (session / "worktree").rmdir()
    assert decide(write(session / "worktree" / "a.py", project))[0] == DENY


def test_relative_paths_resolve_against_the_hook_cwd(session, project):
    worktree = session / "worktree"
    assert decide(write("notes.md", worktree))[0] == ALLOW
    assert decide(write(".planner/s1/worktree/notes.md", project))[0] == ALLOW
    assert decide(write("notes.md", project))[0] == DENY
    assert decide(write("../session.json", worktree))[0] == DENY


def test_dot_dot_tilde_and_symlink_escapes_are_denied(session, project, home):
    worktree = session / "worktree"
    assert decide(write(f"{worktree}/../../../src/app.py", project))[0] == DENY
    # judged on the path as given: a `..` is denied even where it would come back inside
    decision, reason = decide(write(f"{worktree}/../worktree/ok.md", project))
    assert decision == DENY and "as given" in reason
    outside = project / "src"
    outside.mkdir()
    (worktree / "link").symlink_to(outside)
    assert decide(write(worktree / "link" / "app.py", project))[0] == DENY
    (worktree / "state").symlink_to(session / "session.json")
    assert decide(write(worktree / "state", project))[0] == DENY
    assert decide(write("~/.bashrc", project))[0] == DENY


def test_plan_mode_may_write_claude_plans(session, project, home):
    plans = home / ".claude" / "plans" / "my-plan.md"
    assert decide(write(plans, project, permission_mode="plan"))[0] == ALLOW
    assert decide(write(plans, project, permission_mode="default"))[0] == DENY
    assert decide(write(home / "elsewhere.md", project, permission_mode="plan"))[0] == DENY


def test_other_tools_pass(session, project):
    for tool in ("Read", "Grep", "Glob", "WebFetch", "Task"):
        assert decide({"tool_name": tool, "tool_input": {}, "cwd": str(project)})[0] == ALLOW


def test_bash_without_a_command_is_denied(session, project):
    decision, reason = decide({"tool_name": "Bash", "tool_input": {}, "cwd": str(project)})
    assert decision == DENY and "no command" in reason


def test_codex_apply_patch_is_judged_by_its_files(session, project):
    def patch(path):
        body = f"*** Begin Patch\n*** Update File: {path}\n@@\n-a\n+b\n*** End Patch\n"
        return {"tool_name": "apply_patch", "tool_input": {"command": body}, "cwd": str(project)}

    assert decide(patch(session / "worktree" / "notes.md"), "codex")[0] == ALLOW
    assert decide(patch(session / "session.json"), "codex")[0] == DENY
    assert decide(patch("src/app.py"), "codex")[0] == DENY


# -- sessions --------------------------------------------------------------------------------


def test_no_session_lets_everything_pass(project):
    assert decide(bash("rm -rf /", project))[0] == ALLOW
    assert decide(write(project / "a.py", project))[0] == ALLOW


def test_active_naming_a_missing_session_lets_everything_pass(project):
    (project / ".planner").mkdir()
    (project / ".planner" / "ACTIVE").write_text("gone\n")
    assert decide(bash("rm -rf build", project))[0] == ALLOW


@pytest.mark.parametrize("status", ["approved", "executing", "completed", "cancelled", "failed"])
def test_after_planning_everything_passes(project, status):
    make_session(project, "s1", status=status)
    assert decide(bash("rm -rf build", project))[0] == ALLOW
    assert decide(write(project / "a.py", project))[0] == ALLOW


@pytest.mark.parametrize("status", ["discovery", "design", "detailing", "review"])
def test_every_planning_status_is_guarded(project, status):
    make_session(project, "s1", status=status)
    assert decide(bash("rm -rf build", project))[0] == DENY


def test_the_guard_works_from_a_subdirectory(session, project):
    sub = project / "src" / "deep"
    sub.mkdir(parents=True)
    assert decide(bash("touch x", sub))[0] == DENY


def test_absolute_active_path(project, tmp_path):
    elsewhere = make_session(init_project(tmp_path / "other"), "s9")
    (project / ".planner").mkdir()
    (project / ".planner" / "ACTIVE").write_text(str(elsewhere))
    decision, reason = decide(bash("rm x", project))
    assert decision == DENY and str(elsewhere) in reason


def test_a_session_made_by_the_store_is_guarded(project):
    from state.ops import session as sessions

    store = sessions.create(str(project), "Add a farewell", {"guard": "strict"}, False)
    decision, reason = decide(bash("make", project))
    assert decision == DENY and "strict" in reason and store.dir in reason
    assert decide(write(Path(store.dir) / "notes.md", project))[0] == DENY
    assert audit_lines(Path(store.dir))[-1]["by"] == "guard"
    assert (
        audit_lines(Path(store.dir))[-1]["session"]
        == json.loads((Path(store.dir) / "session.json").read_text())["id"]
    )


def test_damaged_session_file_fails_closed(session, project):
    (session / "session.json").write_text("{not json")
    decision, reason = decide(bash("ls", project))
    assert decision == DENY
    assert str(session / "session.json") in reason


def test_planner_state_dir_is_honoured(project, tmp_path):
    outside = make_session(init_project(tmp_path / "state-home"), "s2")
    result = run_script(bash("rm x", project), cwd=project, env={"PLANNER_STATE_DIR": str(outside)})
    assert parse_output(result.stdout)[0] == DENY
    assert len(audit_lines(outside)) == 1
    make_session(project, "s1", status="design")
    approved = make_session(init_project(tmp_path / "approved-home"), "s3", status="approved")
    result = run_script(
        bash("rm x", project), cwd=project, env={"PLANNER_STATE_DIR": str(approved)}
    )
    assert parse_output(result.stdout)[0] == DENY  # it only ever adds protection


# -- modes and dialects ----------------------------------------------------------------------


def test_unknown_commands_ask_in_standard_and_deny_in_strict(project):
    make_session(project, "s1", guard_mode="standard")
    assert decide(bash("make build", project))[0] == ASK
    (project / ".planner" / "ACTIVE").unlink()
    make_session(project, "s2", guard_mode="strict")
    decision, reason = decide(bash("make build", project))
    assert decision == DENY and "strict" in reason


def test_codex_has_no_ask(session, project):
    result = run_script(bash("make build", project), "--dialect", "codex", cwd=project)
    assert parse_output(result.stdout)[0] == DENY
    assert audit_lines(session)[-1]["decision"] == DENY


def test_gemini_dialect_shape_and_tool_names(session, project):
    def gemini(payload):
        result = run_script(payload, "--dialect", "gemini", cwd=project)
        return parse_output(result.stdout, "gemini")

    shell = {"tool_name": "run_shell_command", "cwd": str(project)}
    assert gemini({**shell, "tool_input": {"command": "rm -rf x"}})[0] == DENY
    assert gemini({**shell, "tool_input": {"command": "make"}})[0] == DENY
    assert gemini({**shell, "tool_input": {"command": "git status"}})[0] == ALLOW
    for tool in ("write_file", "replace"):
        outside = {"tool_name": tool, "tool_input": {"file_path": str(project / "a.py")}}
        assert gemini({**outside, "cwd": str(project)})[0] == DENY
        inside = {"tool_name": tool, "tool_input": {"file_path": str(session / "worktree/a")}}
        assert gemini({**inside, "cwd": str(project)})[0] == ALLOW
    assert gemini({"tool_name": "read_file", "tool_input": {}, "cwd": str(project)})[0] == ALLOW


def test_unknown_dialect_fails_closed(project):
    result = run_script(bash("ls", project), "--dialect", "vim", cwd=project)
    decision, reason = parse_output(result.stdout)
    assert decision == DENY and "vim" in reason


# -- malformed input, audit, failures ----------------------------------------------------------


@pytest.mark.parametrize(
    ("stdin", "problem"),
    [
        (b"", "empty"),
        (b"   \n", "empty"),
        (b"[]", "not a JSON object"),
        (b'"Bash"', "not a JSON object"),
        (b'{"tool_name": 3}', "tool_name"),
        (b'{"tool_input": {}}', "tool_name"),
        (b"\xff\xfe\x00garbage", "UTF-8"),
        (b'{"tool_name": "Bash", "tool_input": {"command": "ls"', "not valid JSON"),
        (b'{"tool_name": "Bash"} trailing', "not valid JSON"),
        (b'{"tool_name": "Bash", "tool_input": "ls"}', "tool_input"),
        (b'{"tool_name": "Bash", "tool_input": {}, "cwd": 5}', "cwd"),
        (b"[" * 100_000, "not valid JSON"),
    ],
)
def test_malformed_stdin_is_denied_without_a_traceback(project, stdin, problem):
    result = run_script(stdin, cwd=project)
    decision, reason = parse_output(result.stdout)
    assert decision == DENY
    assert problem in reason
    assert result.stderr == b""


def test_malformed_stdin_while_planning_is_audited(session, project):
    run_script(b"[]", cwd=project)
    (line,) = audit_lines(session)
    assert line["decision"] == DENY and "not a JSON object" in line["reason"]


def test_each_block_appends_exactly_one_audit_line(session, project):
    long_command = "rm " + "x" * 1000
    cases = [bash("rm -rf build", project), bash("make", project), bash(long_command, project)]
    cases.append(write(project / "a.py", project))
    for number, payload in enumerate(cases, 1):
        result = run_script(payload, cwd=project)
        decision, reason = parse_output(result.stdout)
        lines = audit_lines(session)
        assert len(lines) == number
        line = lines[-1]
        keys = {"ts", "event", "by", "session", "tool", "target", "decision", "reason"}
        assert set(line) == keys and line["session"] == "s1"
        assert line["event"] == "blocked" and line["by"] == "guard"
        assert line["decision"] == decision and line["reason"] == reason
        assert line["ts"].endswith("Z") and len(line["ts"]) == 20
    assert audit_lines(session)[2]["target"] == long_command[:500]
    assert audit_lines(session)[3]["tool"] == "Write"
    run_script(bash("git status", project), cwd=project)
    assert len(audit_lines(session)) == len(cases)


def test_the_hook_imports_nothing_slow(session, project):
    command = [sys.executable, "-S", "-X", "importtime", str(GUARD)]
    payload = json.dumps(bash("git status | grep x > /dev/null", project)).encode()
    result = subprocess.run(command, input=payload, capture_output=True, cwd=project)
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.decode().splitlines()}
    assert "hooks.shell" in imported
    assert not imported & {"shlex", "pathlib", "datetime", "typing", "pydantic", "click", "jinja2"}


def test_allowed_calls_print_nothing_at_all(session, project):
    result = run_script(bash("git log --oneline | head", project), cwd=project)
    assert result.stdout == b"" and result.stderr == b""


def test_nesting_too_deep_cannot_be_told(session, project):
    assert decide(bash("eval " * 25 + "ls", project))[0] == ASK
    assert decide(bash("nohup " * 25 + "ls", project))[0] == ASK
    assert decide(bash("eval " * 5 + "ls", project))[0] == ALLOW
    assert (
        decide(bash("bash -c " + json.dumps("bash -c " + json.dumps("rm x")), project))[0] == DENY
    )


def test_an_internal_error_denies_with_one_line(monkeypatch, capfd):
    def explode(raw, dialect):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(guard, "run", explode)
    monkeypatch.setattr(guard.sys, "stdin", None)
    assert guard.main([]) == 0
    out, err = capfd.readouterr()
    decision, reason = parse_output(out)
    assert decision == DENY and "RuntimeError: boom second line" in reason
    assert "Traceback" not in err
    monkeypatch.setenv("PLANNER_DEBUG", "1")
    guard.main([])
    assert "Traceback" in capfd.readouterr().err


# -- fuzzing ---------------------------------------------------------------------------------

FUZZ_SETTINGS = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@FUZZ_SETTINGS
@given(
    command=st.one_of(
        st.text(max_size=200), st.text(alphabet="rm -$(){}<>|&;'\"`\\\n#", max_size=60)
    )
)
def test_any_command_text_gives_silence_or_one_decision(session, project, command):
    output = guard.run(json.dumps(bash(command, project)).encode(), "claude")
    assert output.count("\n") == 0
    parse_output(output)


@FUZZ_SETTINGS
@given(raw=st.binary(max_size=300))
def test_any_stdin_bytes_give_silence_or_one_decision(session, project, raw, monkeypatch):
    monkeypatch.chdir(project)
    for dialect in ("claude", "codex", "gemini"):
        parse_output(guard.run(raw, dialect), dialect)
