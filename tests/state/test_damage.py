"""Issue 18: damaged state exits 3 naming the file, never 1 and never a traceback; a command
refused on damaged state writes nothing. The reproductions, then random damage (hypothesis).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import BIN, Plan, git, run


def active_session(project: Path) -> Path:
    return project / ".planner" / (project / ".planner" / "ACTIVE").read_text().strip()


@pytest.mark.parametrize("command", ["validate", "verify", "status", "show"])
def test_an_active_file_that_is_not_utf8_exits_3_naming_it(
    plan: Plan, project: Path, command: str
) -> None:
    active = project / ".planner" / "ACTIVE"
    active.write_bytes(b"\xff\xfe2026-\x80")
    done = plan(command, code=3)
    assert str(active) in done.stderr + done.stdout or ".planner/ACTIVE" in done.stderr
    assert "UTF-8" in done.stderr + done.stdout


@pytest.mark.parametrize("command", ["validate", "verify"])
@pytest.mark.parametrize("name", ["no-such-session", "/"])
def test_an_active_file_naming_no_session_exits_3_saying_so(
    plan: Plan, project: Path, command: str, name: str
) -> None:
    (project / ".planner" / "ACTIVE").write_text(name + "\n")
    done = plan(command, code=3)
    said = done.stderr + done.stdout
    assert ".planner/ACTIVE" in said
    assert name in said
    assert "1 of 1 failed" not in done.stderr or "ACTIVE" in done.stderr


def test_an_audit_log_replaced_by_a_directory_exits_3_naming_it(
    plan: Plan, session_dir: Path
) -> None:
    audit = session_dir / "audit.jsonl"
    audit.unlink()
    audit.mkdir()
    done = plan("log", code=3)
    assert str(audit) in done.stderr


def test_a_duplicate_id_in_plan_json_names_the_file(plan: Plan, session_dir: Path) -> None:
    plan("decision", "add", "--decision", "D", "--reasoning", "R")
    path = session_dir / "plan.json"
    doc = json.loads(path.read_text())
    log = doc["planning_context"]["decision_log"]
    log.append(dict(log[0]))
    path.write_text(json.dumps(doc, indent=2))
    before = path.read_bytes()
    done = plan("decision", "add", "--decision", "E", "--reasoning", "R", code=3)
    assert f"{path}: " in done.stderr
    assert "DL-001" in done.stderr and "duplicate id" in done.stderr
    assert path.read_bytes() == before


# --- random damage ---------------------------------------------------------------------------

TARGETS = [
    ".planner/ACTIVE",
    "S/session.json",
    "S/plan.json",
    "S/context.json",
    "S/audit.jsonl",
    "S/history",
    "S/history/index.jsonl",
    "S/history/r1.json",
    "S/history/r2.json",
    "S/.journal",
    "S",
]
DAMAGES = ["truncate", "bad-bytes", "directory", "chmod-000", "symlink-loop", "garbage-json"]
COMMANDS = [
    ("status",),
    ("show",),
    ("log",),
    ("history",),
    ("diff", "r1", "r2"),
    ("validate",),
    ("verify",),
    ("render",),
    ("decision", "add", "--decision", "D2", "--reasoning", "R2"),
    ("constraint", "add", "--type", "technical", "--description", "Keep it small"),
    ("question", "add", "--category", "scope", "--kind", "text", "--text", "Which?"),
]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with a session holding two revisions, built once and copied per example."""
    root = tmp_path_factory.mktemp("pristine") / "project"
    root.mkdir()
    (root / "app.py").write_text("print('hi')\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-qm", "init")
    from state.ops import session

    session.create(str(root), "Damage me", {}, non_interactive=False)
    Plan(root)("decision", "add", "--decision", "D", "--reasoning", "R")
    return root


def remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def damage(path: Path, how: str, cut: int) -> None:
    if not path.exists() and how not in ("directory", "symlink-loop"):
        path.write_bytes(b'{"tx": 1, "files": [["../x", "/etc/y"]]}' if cut % 2 else b"\xff{")
    elif how == "directory":
        remove(path)
        path.mkdir()
    elif how == "symlink-loop":
        remove(path)
        path.symlink_to(path.name)
    elif how == "chmod-000":
        path.chmod(0)
    elif path.is_dir():
        shutil.rmtree(path)
        path.write_bytes(b"\x00" * cut)
    else:
        data = path.read_bytes()
        at = cut % (len(data) + 1)
        if how == "truncate":
            path.write_bytes(data[:at])
        elif how == "bad-bytes":
            path.write_bytes(data[:at] + b"\xff\xfe\xc3" + data[at + 3 :])
        else:  # garbage-json: valid JSON, the wrong shape
            path.write_bytes(b'{"id": [1, {"x": null}], "status": 7}' if at % 2 else b"[]")


def tree(root: Path) -> dict[str, object]:
    """Every entry under root as what it is: file bytes, a directory, a link target, a mode."""
    seen: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st_ = os.lstat(path)
            rel = os.path.relpath(path, root)
            if stat.S_ISLNK(st_.st_mode):
                seen[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st_.st_mode):
                seen[rel] = ("dir", stat.S_IMODE(st_.st_mode))
            elif name != ".lock":
                with open(path, "rb") as f:
                    seen[rel] = (f.read(), stat.S_IMODE(st_.st_mode))
    return seen


NOBODY = 65534


@functools.cache
def nobody_can_run_python() -> bool:
    """Whether this venv's Python runs as nobody (not when it lives under root's 0700 home)."""
    try:
        probe = subprocess.run(
            [str(BIN / "python"), "-c", "import click"],
            capture_output=True,
            user=NOBODY,
            group=NOBODY,
            extra_groups=[],
            cwd="/",
            timeout=60,
        )
    except OSError:
        return False
    return probe.returncode == 0


def run_unprivileged(project: Path, command: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    """`plan COMMAND` as an unprivileged user when the tests run as root: chmod 000 then
    means what it says (root reads anything)."""
    if os.geteuid() != 0 or not nobody_can_run_python():
        return run("plan", *command, cwd=project)
    for dirpath, dirnames, filenames in os.walk(project.parent):
        for name in [".", *dirnames, *filenames]:
            os.lchown(os.path.join(dirpath, name), NOBODY, NOBODY)
    env = {k: v for k, v in os.environ.items() if k not in ("PLANNER_STATE_DIR", "CI")}
    return subprocess.run(
        [str(BIN / "plan"), *command],
        cwd=project,
        text=True,
        capture_output=True,
        env={**env, "HOME": str(project.parent)},
        timeout=120,
        user=NOBODY,
        group=NOBODY,
        extra_groups=[],
    )


@pytest.mark.slow
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    target=st.sampled_from(TARGETS),
    how=st.sampled_from(DAMAGES),
    cut=st.integers(0, 5000),
    command=st.sampled_from(COMMANDS),
)
def test_random_damage_exits_0_2_3_or_4_and_a_refusal_writes_nothing(
    pristine: Path, target: str, how: str, cut: int, command: tuple[str, ...]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        shutil.copytree(pristine, project, symlinks=True)
        session = active_session(project)
        path = project / target.replace("S", str(session.relative_to(project)), 1)
        if target == "S":
            path = session
            how = "symlink-loop" if how in ("directory", "truncate") else how
        damage(path, how, cut)
        before = tree(project / ".planner")
        done = run_unprivileged(project, command)
        said = f"{command} after {how} of {target}: {done.returncode}\n{done.stderr}"
        assert done.returncode in (0, 2, 3, 4), said
        assert "Traceback" not in done.stderr, said
        if done.returncode != 0:
            assert tree(project / ".planner") == before, said
