"""The product's own commands through the hook: plain ones run unwrapped, the person's acts
are asked (denied where the dialect has no ask), anything else goes to the parser/sandbox."""

from __future__ import annotations

import json

import pytest

from hooks import guard_hook as guard
from tests.hooks.test_guard import audit_lines, bash, make_session

ALLOW, ASK, DENY, WRAP = "allow", "ask", "deny", "wrap"
HOOK = [
    ("plan status", ALLOW),
    ("plan decision add --decision X --reasoning Y", ALLOW),
    ("planner --step 3 --state-dir .planner/s1", ALLOW),
    ("/home/u/.venv/bin/plan show --json", ALLOW),
    ("plan render -o /dev/stdout", DENY),
    ("plan render -o .planner/s1/plan.md", ALLOW),
    ("plan render -o README.md", DENY),
    ("plan render --output=README.md", DENY),
    ("plan render -oREADME.md", DENY),
    ("plan change add --intent CI-001 --file a.py --diff - <<'EOF'\n-a\n+b\nEOF", ALLOW),
    ("cat ops.json | plan apply -", ALLOW),
    ("plan show 2>&1", ALLOW),
    ("plan show > /dev/null", ALLOW),
    ("plan show > plan.txt", DENY),
    ("plan status --state-dir /tmp/elsewhere", DENY),
    ("PYTHONPATH=.planner/s1/py plan status", DENY),
    ("PLANNER_STATE_DIR=/tmp/x plan status", DENY),
    ("plan status && rm -rf src", DENY),
    ("plan status; make", DENY),
    ('plan change add --diff "$(cat x)" --intent CI-001 --file a', DENY),
    ("plan review approve", ASK),
    ("plan review approve --by user", ASK),
    ("plan --json review approve", ASK),
    ("plan review reject --feedback no", ASK),
    ("plan qr accept --phase plan-code --by me --reason r", ASK),
    ("plan cancel", ASK),
    ("plan fail --error x", ASK),
    ("plan resume other-session", ASK),
    ("plan resume s1", ALLOW),
    ("plan resume", ALLOW),
    ("planner --step 11 --non-interactive", ASK),
    ('plan apply - <<\'EOF\'\n[{"op": "qr accept", "args": {}}]\nEOF', ALLOW),
    ("true && plan review approve", DENY),
    ("plan status && plan review approve", DENY),
    ("plan status && plan show", ALLOW),
    ("plan context add goal x; plan context add scope y\nplan status", ALLOW),
    ('i=$(plan qr add --phase plan-design x) && plan qr set "$i" --status PASS', ALLOW),
    ("i=$(plan qr add x) && plan qr set ${i} --status PASS", ALLOW),
    ('plan qr set "$j" --status PASS', DENY),
    ("PATH=$(plan status) && plan show", DENY),
    ("plan show | head -5", ALLOW),
    ("plan show | grep -n M-001", ALLOW),
    ("plan show | tee out.txt", DENY),
    ("cd sub && plan status", ALLOW),
    ("plan status & plan show", DENY),
    ("(plan status)", DENY),
    ("for i in 1; do plan status; done", DENY),
    ("bash -c 'plan review approve'", DENY),
    ("plan exec apply M-001", DENY),
    ("plan exec commit M-001", DENY),
    ("plan worktree", ALLOW),
    ("plan worktree --json", ALLOW),
    ("plan change capture", ALLOW),
    ("plan change capture --intent CI-001 src/app.py", ALLOW),
    ('plan apply - <<\'EOF\'\n[{"op": "change capture", "args": {}}]\nEOF', ALLOW),
    ("plan change capture > .planner/s1/worktree/x", DENY),
    ("executor --step 1", DENY),
    ("python3 -m cli review approve", ASK),
]


@pytest.fixture
def project(tmp_path, monkeypatch):
    import subprocess

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PLANNER_SANDBOX", "off")
    monkeypatch.setenv("PATH", "/usr/local/bin:/usr/bin:/bin")
    for name in ("PLANNER_STATE_DIR", "CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR"):
        monkeypatch.delenv(name, raising=False)
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def decide(payload: dict, dialect: str = "claude") -> tuple[str, str]:
    output = guard.run(json.dumps(payload).encode(), dialect)
    if not output:
        return ALLOW, ""
    data = json.loads(output)
    if dialect == "gemini":
        return data["decision"], data["reason"]
    inner = data["hookSpecificOutput"]
    if "updatedInput" in inner:
        return WRAP, ""
    return inner["permissionDecision"], inner["permissionDecisionReason"]


@pytest.mark.parametrize(("command", "label"), HOOK, ids=[c[:40] for c, _ in HOOK])
def test_own_commands_through_the_hook(project, command, label):
    make_session(project, "s1")
    decision, reason = decide(bash(command, project))
    assert decision == label, reason
    human = ("approve", "reject", "accept", "cancel", "fail", "resume", "interactive")
    if label == ASK and command.startswith("plan") and any(w in command for w in human):
        assert "person" in reason and "terminal" in reason


@pytest.mark.parametrize("dialect", ["codex", "gemini"])
def test_human_acts_are_denied_where_there_is_no_ask(project, dialect):
    state = make_session(project, "s1")
    decision, reason = decide(bash("plan review approve", project), dialect)
    assert decision == DENY
    assert "terminal" in reason and "review page" in reason
    assert audit_lines(state)[-1]["decision"] == DENY


def test_a_human_act_is_audited_with_the_session(project):
    state = make_session(project, "s1")
    decide(bash("plan review approve --by user", project))
    (line,) = audit_lines(state)
    assert line["decision"] == ASK and line["session"] == "s1"
    assert line["target"] == "plan review approve --by user"


def test_a_launcher_on_a_writable_path_is_not_trusted(project, monkeypatch):
    make_session(project, "s1")
    monkeypatch.setenv("PATH", ".:/usr/bin")
    assert decide(bash("plan status", project))[0] == DENY
    monkeypatch.setenv("PATH", "bin:/usr/bin")
    assert decide(bash("plan status", project))[0] == DENY


def test_after_approval_human_acts_pass(project):
    make_session(project, "s1", status="approved")
    assert decide(bash("plan review approve", project))[0] == ALLOW
    assert decide(bash("executor --step 1", project))[0] == ALLOW


# -- where it looks --------------------------------------------------------------------------


def test_cd_elsewhere_changes_nothing_under_claude_project_dir(project, tmp_path, monkeypatch):
    make_session(project, "s1")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    assert decide(bash(f"rm -rf {project}/src", elsewhere))[0] == DENY
    write = {"tool_name": "Write", "tool_input": {"file_path": str(project / "a.py")}}
    assert decide({**write, "cwd": str(elsewhere)})[0] == DENY
    monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    monkeypatch.setenv("GEMINI_PROJECT_DIR", str(project))
    assert decide(bash("rm -rf src", elsewhere), "gemini")[0] == DENY


def test_a_nested_repository_or_planted_git_changes_nothing(project):
    import subprocess

    state = make_session(project, "s1")
    nested = project / "vendor" / "lib"
    nested.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(nested)], check=True)
    assert decide(bash("rm -rf src", nested))[0] == DENY
    worktree = state / "worktree"
    (worktree / ".git").write_text("gitdir: /nowhere\n")
    assert decide(bash("rm -rf src", worktree))[0] == DENY
    write = {"tool_name": "Write", "tool_input": {"file_path": str(project / "a.py")}}
    assert decide({**write, "cwd": str(worktree)})[0] == DENY


def test_hook_fields_are_read_with_defaults(project):
    make_session(project, "s1")
    payload = {"tool_name": "Bash", "tool_input": {"command": "rm x"}, "cwd": str(project)}
    payload.update(extra_field={"new": True}, permission_mode=None, hook_event_name=7)
    assert decide(payload)[0] == DENY
    assert decide({"tool_name": "Bash", "tool_input": {"command": "rm x"}})[0] in (DENY, ALLOW)


def test_plan_apply_batches_run_unwrapped_whatever_they_hold(project):
    """The batch's ops are the product's to judge: `plan apply` refuses the person's acts
    itself, whatever their spelling (tests/cli/test_apply.py), so the guard reads no batch."""
    make_session(project, "s1")
    for batch in ('[{"op": "milestone add"}]', '[{"op": "review approve "}]'):
        assert decide(bash(f"plan apply - <<'EOF'\n{batch}\nEOF", project))[0] == ALLOW


def test_huge_commands_are_judged_at_once(project):
    """Linear time: a 1 MB command is refused without parsing it; a big here-doc for `plan`
    (a large diff) is still read, and a 78 KB awk program still gets its verdict."""
    make_session(project, "s1")
    decision, reason = decide(bash("ls; " * 250_000, project))
    assert decision == DENY and "too long" in reason
    diff = "+x\n" * 200_000
    command = f"plan change add --intent CI-001 --file a --diff - <<'EOF'\n{diff}EOF"
    assert decide(bash(command, project))[0] == ALLOW
    program = "".join(f"$1 ~ /x{i}|y/ {{ n[$2]++; print $1 }}\n" for i in range(2600))
    assert len(program) > 78_000
    assert decide(bash(f"awk '{program}' f", project))[0] == ALLOW
    assert decide(bash(f"awk '{program} system(\"rm x\")' f", project))[0] == DENY
