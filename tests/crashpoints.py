"""Crash-point enumeration, in the spirit of SQLite's crash tests.

A command is run once with PLANNER_CRASH_LOG, which lists every write, fsync, rename, unlink
and git call it makes (state/storage/journal.py `point()`); then once per point N with
PLANNER_CRASH_AT=N, which SIGKILLs it just before that call. After each kill the invariants:
- the next command (`plan status`, which recovers first) exits 0 and no temp file is left,
  in the session or in the project;
- the command's effect is entirely there or entirely absent, across the session's files AND
  the project's (files, modes, links, git HEAD) — compared with a run that was not killed;
- a retry converges: it exits 0 and leaves what the uninterrupted run left;
- `git status` shows what the uninterrupted run shows.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import BIN
from tests.inprocess import run_script

GIT_ID = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}
DROP = ("PLANNER_STATE_DIR", "PLANNER_FAULT", "PLANNER_CRASH_AT", "PLANNER_CRASH_LOG")
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")
HEX40 = re.compile(r"\b[0-9a-f]{40}\b")


def run(
    root: Path, argv: list[str], env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """One of the package's console scripts, in the project, as a real process."""
    full = {k: v for k, v in os.environ.items() if k not in DROP}
    full.update(GIT_ID, **(env or {}))
    return subprocess.run(
        [str(BIN / argv[0]), *argv[1:]],
        cwd=root,
        text=True,
        capture_output=True,
        env=full,
        input=stdin,
        timeout=120,
    )


def here(root: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    """`run` without a fault, in this process (tests/inprocess.py): the recovery and the retry
    after a kill need no process of their own, only the killed run does."""
    full = {k: v for k, v in os.environ.items() if k not in DROP}
    full.update(GIT_ID)
    return run_script(argv[0], *argv[1:], cwd=root, environ=full)


def ok(root: Path, argv: list[str], stdin: str | None = None) -> str:
    """A setup command, which must exit 0, in this process (tests/inprocess.py; no fault is
    injected in it): its stdout."""
    full = {k: v for k, v in os.environ.items() if k not in DROP}
    full.update(GIT_ID)
    done = run_script(argv[0], *argv[1:], cwd=root, environ=full, input=stdin)
    assert done.returncode == 0, (argv, done.stdout, done.stderr)
    return done.stdout


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, env={**os.environ, **GIT_ID}
    )
    return done.stdout if done.returncode == 0 else f"<exit {done.returncode}>"


class Fixture:
    """A project (with its .planner session) saved once and put back before each run."""

    def __init__(self, root: Path, state: Path, name: str = "saved"):
        self.root, self.state = root, state
        self.saved = root.parent / f"{root.name}.{name}"

    def save(self) -> None:
        shutil.rmtree(self.saved, ignore_errors=True)
        shutil.copytree(self.root, self.saved, symlinks=True)

    def restore(self) -> None:
        shutil.rmtree(self.root)
        shutil.copytree(self.saved, self.root, symlinks=True)


def project_files(root: Path) -> dict[str, Any]:
    """Every file of the project outside .git and .planner: mode and content (or link)."""
    found: dict[str, Any] = {}
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".planner")]
        for name in files:
            full = os.path.join(top, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                found[rel] = ("link", os.readlink(full))
            else:
                found[rel] = (oct(stat.S_IMODE(st.st_mode)), Path(full).read_bytes())
    return found


def _normal(text: str, root: Path) -> str:
    """Timestamps out; a commit id becomes its tree (two runs make different commit ids)."""
    text = TIMESTAMP.sub("<ts>", text)

    def tree(m: re.Match[str]) -> str:
        found = git(root, "rev-parse", "-q", "--verify", f"{m[0]}^{{tree}}").strip()
        return f"tree:{found}" if found and not found.startswith("<") else m[0]

    return HEX40.sub(tree, text)


def session_files(state: Path, root: Path) -> dict[str, Any]:
    """The session's documents (normalised) and its plan revisions."""
    docs = {
        p.name: _normal(p.read_text(), root) for p in sorted(state.glob("*.json")) if p.is_file()
    }
    history = sorted(p.name for p in (state / "history").glob("r*.json"))
    return {"docs": docs, "history": history}


def audit_events(state: Path) -> list[str]:
    audit = state / "audit.jsonl"
    lines = audit.read_text().splitlines() if audit.exists() else []
    return [json.loads(line).get("command") or json.loads(line).get("event") for line in lines]


def git_state(root: Path) -> dict[str, str]:
    return {
        "branch": git(root, "symbolic-ref", "-q", "HEAD").strip(),
        "commits": git(root, "rev-list", "--count", "HEAD").strip(),
        "tree": git(root, "rev-parse", "HEAD^{tree}").strip(),
        "message": git(root, "log", "-1", "--format=%B").strip(),
    }


def worktree_state(root: Path, state: Path) -> str:
    """absent, or ready. An unfinished checkout counts as absent: nothing hands it out or
    captures from it, and the next `plan worktree` makes it again (checked separately)."""
    tree = state / "worktree"
    from state.repo import worktree

    return "ready" if tree.exists() and worktree.ready(str(root), str(tree)) else "absent"


def fingerprint(fx: Fixture) -> dict[str, Any]:
    return {
        "project": project_files(fx.root),
        "git": git_state(fx.root),
        "session": session_files(fx.state, fx.root),
        "audit": audit_events(fx.state),
        "worktree": worktree_state(fx.root, fx.state),
    }


def leftovers(fx: Fixture) -> list[str]:
    """Temp files and journals a finished recovery must not leave."""
    names = [str(p) for p in fx.state.rglob("*.tmp") if "worktree" not in p.parts]
    names += [str(p) for p in fx.state.glob(".journal*")]
    names += [rel for rel in project_files(fx.root) if ".planner-" in rel or rel.endswith(".tmp")]
    return names


class Outcome:
    """What the enumeration found for one command: its points and every broken invariant."""

    def __init__(self, name: str, points: list[str]):
        self.name, self.points = name, points
        self.failures: list[str] = []

    def __str__(self) -> str:
        kinds: dict[str, int] = {}
        for line in self.points:
            kind = line.split()[1]
            kinds[kind] = kinds.get(kind, 0) + 1
        shown = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items()))
        return (
            f"{self.name}: {len(self.points)} crash points ({shown}), {len(self.failures)} failed"
        )


def enumerate_crashes(
    fx: Fixture,
    name: str,
    argv: list[str],
    *,
    idempotent: bool = True,
    between: tuple[str, ...] = (),
    later: tuple[str, ...] = (),
    after_crash: Any = None,
) -> Outcome:
    """Run `argv` killed at each of its crash points in turn; see the module docstring.

    `between` names the parts of the fingerprint allowed to be new while the rest is old
    (exec commit: git's commit, recorded by the retry); `later` names the parts allowed to be
    old while the rest is new (planner step 6 makes the worktree after its arrival is
    recorded, and again on every run of it: the retry makes it). A command that is not idempotent
    (a batch of additions) is retried only when its effect is absent, as the invariant says
    a retry is then safe. `after_crash(fx, outcome, n)` adds checks of its own.
    """
    fx.restore()
    before = fingerprint(fx)
    log = fx.root.parent / f"{name.replace(' ', '-')}.points"
    log.unlink(missing_ok=True)
    done = run(fx.root, argv, {"PLANNER_CRASH_LOG": str(log)})
    assert done.returncode == 0, (argv, done.stderr)
    after = fingerprint(fx)
    assert after != before, f"{name}: the uninterrupted run changed nothing"
    clean = git(fx.root, "status", "--porcelain")
    outcome = Outcome(name, log.read_text().splitlines())
    for n, point in enumerate(outcome.points, 1):
        fx.restore()
        killed = run(fx.root, argv, {"PLANNER_CRASH_AT": str(n)})
        where = f"{name} killed at {point!r}"
        if killed.returncode != -9:
            outcome.failures.append(f"{where}: not killed (exit {killed.returncode})")
            continue
        status = here(fx.root, ["plan", "status"])
        if status.returncode != 0:
            outcome.failures.append(f"{where}: plan status exits {status.returncode}")
        if leftovers(fx):
            outcome.failures.append(f"{where}: left {leftovers(fx)}")
        now = fingerprint(fx)
        if (
            now not in (before, after)
            and not (between and _between(now, before, after, between))
            and not (later and _between(now, after, before, later))
        ):
            parts = [k for k in before if now[k] not in (before[k], after[k])]
            parts = parts or [k for k in before if now[k] != before[k]]
            outcome.failures.append(f"{where}: half there ({', '.join(parts)} differ)")
        if after_crash:
            after_crash(fx, outcome, where)
        if not idempotent and now != before:
            continue
        retry = here(fx.root, argv)
        if retry.returncode != 0:
            outcome.failures.append(f"{where}: the retry exits {retry.returncode}: {retry.stderr}")
            continue
        final = fingerprint(fx)
        if final != after:
            parts = [k for k in after if final[k] != after[k]]
            outcome.failures.append(f"{where}: the retry did not converge ({', '.join(parts)})")
        if git(fx.root, "status", "--porcelain") != clean:
            outcome.failures.append(f"{where}: git status differs after the retry")
    return outcome


def _between(
    now: dict[str, Any], before: dict[str, Any], after: dict[str, Any], parts: tuple[str, ...]
) -> bool:
    """The parts named are old or new each (the audit log on its way from before to after),
    the rest are old: external steps (files written for git, git's commit) happened, the
    session's record did not yet. The retry must then converge (checked after)."""
    for k in before:
        if k == "audit" and k in parts:
            if not (now[k][: len(before[k])] == before[k] and now[k] == after[k][: len(now[k])]):
                return False
        elif now[k] not in ((before[k], after[k]) if k in parts else (before[k],)):
            return False
    return True


# ---------------------------------------------------------------- fixtures: real sessions

APP = "def greet(name):\n    return 'hi ' + name\n"
UTIL = "def slug(s):\n    return s.lower()\n"
RUN_SH = "#!/bin/sh\necho hi\n"
TEST_APP = "def test_greet():\n    pass\n"
DESIGN = [
    {"op": "overview set", "args": {"title": "T", "problem": "P.", "approach": "A."}},
    {
        "op": "milestone add",
        "args": {
            "name": "Farewell",
            "file": ["src/app.py", "tools/run.sh", "tests/test_app.py"],
            "acceptance": ["ok"],
        },
    },
    {"op": "intent add", "args": {"milestone": "$2", "file": "src/app.py", "behavior": "bye"}},
    {"op": "intent add", "args": {"milestone": "$2", "file": "tools/run.sh", "behavior": "bye"}},
    {
        "op": "intent add",
        "args": {"milestone": "$2", "file": "tests/test_app.py", "behavior": "test bye"},
    },
    {
        "op": "milestone add",
        "args": {"name": "Title", "file": ["src/util.py"], "acceptance": ["ok"]},
    },
    {"op": "intent add", "args": {"milestone": "$6", "file": "src/util.py", "behavior": "title"}},
]
EDITS = {
    "src/app.py": APP + "\ndef farewell(name):\n    return 'bye ' + name\n",
    "tools/run.sh": RUN_SH + "echo bye\n",
    "tests/test_app.py": TEST_APP + "\ndef test_farewell():\n    pass\n",
    "src/util.py": UTIL + "\n\ndef title_case(s):\n    return s.title()\n",
}


def new_project(root: Path) -> Path:
    """src/app.py, src/util.py, an executable tools/run.sh, tests/, README.md; one commit."""
    for rel, text in (
        ("src/app.py", APP),
        ("src/util.py", UTIL),
        ("tools/run.sh", RUN_SH),
        ("tests/test_app.py", TEST_APP),
        ("README.md", "# Demo\n"),
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "tools" / "run.sh").chmod(0o755)
    for argv in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "init"]):
        subprocess.run(["git", *argv], cwd=root, check=True, env={**os.environ, **GIT_ID})
    return root


def planning(root: Path) -> Path:
    """A session (non-interactive) with DESIGN applied: its state dir."""
    out = ok(root, ["planner", "--step", "1", "--task", "Add things", "--non-interactive"])
    state = Path(next(ln[10:] for ln in out.splitlines() if ln.startswith("STATE_DIR=")))
    ok(root, ["plan", "apply", "-"], json.dumps(DESIGN))
    return state


def edit_worktree(root: Path) -> Path:
    tree = Path(ok(root, ["plan", "worktree"]).strip())
    for rel, text in EDITS.items():
        (tree / rel).write_text(text)
    return tree


def approve(root: Path, state: Path) -> None:
    """Straight to the person's approval (the planner's steps are tested elsewhere)."""
    session = json.loads((state / "session.json").read_text())
    session.update(status="review", workflow="planner", step=11)
    (state / "session.json").write_text(json.dumps(session))
    ok(root, ["plan", "review", "approve"])


def executing(root: Path) -> Path:
    """An approved plan with M-001 (three files, one executable) and M-002 (appends to
    src/util.py), executor step 1 run: its state dir."""
    new_project(root)
    state = planning(root)
    edit_worktree(root)
    ok(root, ["plan", "change", "capture"])
    approve(root, state)
    ok(root, ["executor", "--step", "1"])
    return state


def route(out: str, prefix: str) -> list[str]:
    import shlex

    return shlex.split(next(ln[len(prefix) :] for ln in out.splitlines() if ln.startswith(prefix)))


def at_gate(root: Path) -> tuple[Path, list[str]]:
    """A session at planner step 4 whose one MUST item passed: (state dir, the gate's argv)."""
    new_project(root)
    out = ok(root, ["planner", "--step", "1", "--task", "Add things", "--non-interactive"])
    state = Path(next(ln[10:] for ln in out.splitlines() if ln.startswith("STATE_DIR=")))
    ok(root, ["plan", "context", "set", "--goal", "say goodbye"])
    out = ok(root, route(out, "NEXT: "))
    ok(root, ["plan", "apply", "-"], json.dumps(DESIGN))
    out = ok(root, route(out, "NEXT: "))
    qa = ok(root, ["plan", "qr", "add", "--phase", "plan-design", "--check", "c"]).strip()
    ok(root, ["plan", "qr", "set", qa, "--phase", "plan-design", "--status", "PASS"])
    return state, route(out, "IF PASS: ")
