"""Crash safety and races, measured: SIGKILL at random moments, 64 concurrent
writers, 16 identical gate runs. Bounded and local: `--rounds N` kills per kind (default 75:
300 in all for the session's writes, 375 for the project's), `--writers` and `--gates` size
the races, `--files` the project `plan worktree` checks out.

    python -m bench.bench_faults [--rounds 75] [--writers 64] [--gates 16] [--files 1500]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import BIN

ENV = {k: v for k, v in os.environ.items() if k not in ("PLANNER_STATE_DIR", "CI", "PLANNER_FAULT")}
DESIGN = [
    {"op": "overview set", "args": {"title": "Farewell", "problem": "No bye.", "approach": "Add."}},
    {"op": "decision add", "args": {"decision": "Mirror greet()", "reasoning": "Obvious."}},
    {"op": "milestone add", "args": {"name": "Farewell", "file": ["src/app.py"]}},
    {
        "op": "intent add",
        "args": {"milestone": "$3", "file": "src/app.py", "function": "bye", "behavior": "Bye."},
    },
]


def sh(project: Path, *argv: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / argv[0]), *argv[1:]],
        cwd=project,
        input=input,
        capture_output=True,
        text=True,
        env=ENV,
    )


def ok(done: subprocess.CompletedProcess[str]) -> str:
    if done.returncode:
        raise SystemExit(f"bench_faults: {done.args} failed: {done.stderr[-500:]}")
    return done.stdout


def next_of(out: str, verdict: str = "NEXT") -> list[str]:
    prefix = {"NEXT": "NEXT: ", "fail": "IF FAIL: "}[verdict]
    import shlex

    return shlex.split(next(ln[len(prefix) :] for ln in out.splitlines() if ln.startswith(prefix)))


def new_project(top: Path, name: str) -> Path:
    root = top / name
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def greet(n):\n    return 'hi ' + n\n")
    git = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b"}
    git["GIT_COMMITTER_EMAIL"] = "b@x"
    for argv in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "init"]):
        subprocess.run(["git", *argv], cwd=root, env={**ENV, **git}, check=True)
    return root


def before_gate(project: Path) -> tuple[Path, list[str]]:
    """A session at planner step 4 with one failing MUST item: (state dir, the gate's argv)."""
    out = ok(sh(project, "planner", "--step", "1", "--task", "Add a farewell", "--non-interactive"))
    state = Path(next(ln[10:] for ln in out.splitlines() if ln.startswith("STATE_DIR=")))
    ok(sh(project, "plan", "context", "set", "--goal", "say goodbye"))  # step 1 printed step 2
    out = ok(sh(project, *next_of(out)))
    ok(sh(project, "plan", "apply", "-", input=json.dumps(DESIGN)))
    out = ok(sh(project, *next_of(out)))
    qa = ok(sh(project, "plan", "qr", "add", "--phase", "plan-design", "--check", "c")).strip()
    ok(
        sh(
            project,
            "plan",
            "qr",
            "set",
            qa,
            "--phase",
            "plan-design",
            "--status",
            "FAIL",
            "--finding",
            "f",
        )
    )
    return state, next_of(out, "fail")


def snapshot(state: Path) -> dict[str, bytes]:
    return {str(p.relative_to(state)): p.read_bytes() for p in state.rglob("*") if p.is_file()}


def restore(state: Path, saved: dict[str, bytes]) -> None:
    shutil.rmtree(state)
    for rel, data in saved.items():
        (state / rel).parent.mkdir(parents=True, exist_ok=True)
        (state / rel).write_bytes(data)


def recover_and_check(state: Path) -> bool:
    """What the next command does first (roll forward or back), then: every file valid."""
    from state.errors import PlannerError
    from state.rules.session_store import Store

    store = Store(str(state))
    try:
        store.recover()
        for name in ("session", "plan", "context", "qr-plan-design"):
            if store.exists(name):
                store.read(name)
        for rev in store.history():
            store.revision(rev["rev"])
    except PlannerError:
        return False
    return not list(state.rglob("*.tmp")) and not (state / ".journal").exists()


class Killer:
    """Runs a command and SIGKILLs it at a random moment within its usual duration."""

    def __init__(self, rng: random.Random):
        self.rng, self.usual = rng, 0.4

    def run(self, project: Path, argv: list[str], input: str | None = None) -> bool:
        """Whether the command was acknowledged (exit 0) before the kill."""
        start = time.perf_counter()
        proc = subprocess.Popen(
            [str(BIN / argv[0]), *argv[1:]],
            cwd=project,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=ENV,
            text=True,
        )
        if input is not None and proc.stdin:
            try:
                proc.stdin.write(input)
                proc.stdin.close()
            except BrokenPipeError:
                pass
        try:
            code = proc.wait(timeout=self.rng.uniform(0.0, self.usual * 1.1))
            self.usual = 0.8 * self.usual + 0.2 * (time.perf_counter() - start)
        except subprocess.TimeoutExpired:  # widen the window until some runs finish first
            proc.send_signal(signal.SIGKILL)
            code = proc.wait()
            self.usual *= 1.05
        return code == 0


def kills(top: Path, rounds: int, rng: random.Random) -> dict[str, int]:
    from state.rules.session_store import Store

    killer = Killer(rng)
    figures = dict.fromkeys(("killed", "acknowledged", "lost", "half", "stuck", "invalid"), 0)

    def check(state: Path) -> None:
        figures["killed"] += 1
        if not recover_and_check(state):
            figures["invalid"] += 1

    # mutations and batches: one session; every acknowledged write must be there, once
    project = new_project(top, "writes")
    state, _ = before_gate(project)
    acked: list[str] = []
    for n in range(rounds):
        text = f"mutation {n}"
        if killer.run(project, ["plan", "decision", "add", "--decision", text, "--reasoning", "r"]):
            acked.append(text)
        check(state)
    batches: dict[str, bool] = {}
    for n in range(rounds):
        tag = f"batch {n}"
        batch = [
            {"op": "decision add", "args": {"decision": tag, "reasoning": "r"}},
            {"op": "question add", "args": {"category": "scope", "kind": "text", "text": tag}},
            {"op": "qr add", "args": {"phase": "plan-design", "check": tag}},
        ]
        batches[tag] = killer.run(project, ["plan", "apply", "-"], json.dumps(batch))
        check(state)
    store = Store(str(state))
    decisions = [d["decision"] for d in store.read("plan")["planning_context"]["decision_log"]]
    questions = {q["text"] for q in store.read("context")["questions"]}
    checks = {i["check"] for i in store.read("qr-plan-design")["items"]}
    for text in acked:
        figures["lost"] += decisions.count(text) != 1
    for tag, ack in batches.items():
        parts = [tag in decisions, tag in questions, tag in checks]
        figures["half"] += len(set(parts)) > 1
        figures["lost"] += ack and not all(parts)
    figures["acknowledged"] += len(acked) + sum(batches.values())

    # gates and approvals: each round from the same saved state
    project = new_project(top, "gates")
    state, gate = before_gate(project)
    saved = snapshot(state)
    for _ in range(rounds):
        restore(state, saved)
        ack = killer.run(project, gate)
        check(state)
        figures["acknowledged"] += ack
        loop = Store(str(state)).read("session")["qr"].get("plan-design", {"iteration": 1})
        if ack and loop["iteration"] != 2:
            figures["lost"] += 1
        rerun = sh(project, *gate)  # not stuck: the gate runs (or re-renders) and applied once
        loop = Store(str(state)).read("session")["qr"]["plan-design"]
        figures["stuck"] += rerun.returncode != 0 or loop["iteration"] != 2
    restore(state, saved)
    session = json.loads((state / "session.json").read_text())
    session.update(status="review", workflow="planner", step=11)
    (state / "session.json").write_text(json.dumps(session))
    saved = snapshot(state)
    for _ in range(rounds):
        restore(state, saved)
        ack = killer.run(project, ["plan", "review", "approve"])
        check(state)
        figures["acknowledged"] += ack
        status = Store(str(state)).read("session")["status"]
        if ack and status != "approved":
            figures["lost"] += 1
        if status == "review" and sh(project, "plan", "review", "approve").returncode:
            figures["stuck"] += 1
        if sh(project, "plan", "verify").returncode:
            figures["stuck"] += 1
    return figures


# ---------------------------------------------------------------- the project's writes

PROJECT_DESIGN = [
    {"op": "overview set", "args": {"title": "T", "problem": "P.", "approach": "A."}},
    {"op": "milestone add", "args": {"name": "Farewell", "file": ["src/app.py"]}},
    {"op": "intent add", "args": {"milestone": "$2", "file": "src/app.py", "behavior": "bye"}},
    {"op": "intent add", "args": {"milestone": "$2", "file": "tools/run.sh", "behavior": "bye"}},
    {"op": "intent add", "args": {"milestone": "$2", "file": "tests/test_app.py", "behavior": "t"}},
    {"op": "milestone add", "args": {"name": "Title", "file": ["src/util.py"]}},
    {"op": "intent add", "args": {"milestone": "$6", "file": "src/util.py", "behavior": "title"}},
]
BASE_FILES = {
    "src/util.py": "def slug(s):\n    return s.lower()\n",
    "tools/run.sh": "#!/bin/sh\necho hi\n",
    "tests/test_app.py": "def test_greet():\n    pass\n",
}
EDITS = {
    "src/app.py": "def greet(n):\n    return 'hi ' + n\n\ndef farewell(n):\n    return 'bye'\n",
    "tools/run.sh": "#!/bin/sh\necho hi\necho bye\n",
    "tests/test_app.py": "def test_greet():\n    pass\n\ndef test_farewell():\n    pass\n",
    "src/util.py": BASE_FILES["src/util.py"] + "\n\ndef title_case(s):\n    return s.title()\n",
}


def project_files(root: Path) -> dict[str, tuple[int, bytes]]:
    """The project's files outside .git and .planner: (mode, content)."""
    found = {}
    for top, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".planner")]
        for name in files:
            full = Path(top, name)
            found[str(full.relative_to(root))] = (full.lstat().st_mode & 0o7777, full.read_bytes())
    return found


def git_out(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True).stdout


def copy(src: Path, dest: Path) -> None:
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(src, dest, symlinks=True)


def project_sessions(top: Path, files: int) -> dict[str, Path]:
    """Saved copies of one project at each starting point: planning (no worktree), edited
    (worktree edits not captured), executing (approved, executor step 1) and applied (M-001
    applied). `files` more files make `plan worktree` take a while."""
    root = new_project(top, "project")
    for rel, text in BASE_FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "tools" / "run.sh").chmod(0o755)
    (root / "lib").mkdir()
    for k in range(files):
        (root / "lib" / f"m{k}.py").write_text(f"VALUE = {k}\n")
    for argv in (["add", "."], ["commit", "-qm", "more"]):
        subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@x", *argv], cwd=root)
    out = ok(sh(root, "planner", "--step", "1", "--task", "Add things", "--non-interactive"))
    state = Path(next(ln[10:] for ln in out.splitlines() if ln.startswith("STATE_DIR=")))
    ok(sh(root, "plan", "apply", "-", input=json.dumps(PROJECT_DESIGN)))
    saved = {}
    for point in ("planning", "edited", "executing", "applied"):
        if point == "edited":
            tree = Path(ok(sh(root, "plan", "worktree")).strip())
            for rel, text in EDITS.items():
                (tree / rel).write_text(text)
        elif point == "executing":
            ok(sh(root, "plan", "change", "capture"))
            session = json.loads((state / "session.json").read_text())
            session.update(status="review", workflow="planner", step=11)
            (state / "session.json").write_text(json.dumps(session))
            ok(sh(root, "plan", "review", "approve"))
            ok(sh(root, "executor", "--step", "1"))
        elif point == "applied":
            ok(sh(root, "plan", "exec", "apply", "M-001"))
        saved[point] = top / f"saved-{point}"
        copy(root, saved[point])
    saved["root"], saved["state"] = root, state
    return saved


class Observed:
    """What one kind of command leaves: its own part of the session and of the project."""

    def __init__(self, root: Path, state: Path):
        self.root, self.state = root, state

    def changes(self) -> list[str]:
        plan = json.loads((self.state / "plan.json").read_text())
        return [c["diff"] for m in plan["milestones"] for c in m["code_changes"]]

    def run_of(self, milestone: str) -> dict[str, Any]:
        execution = json.loads((self.state / "execution.json").read_text())
        return next(m for m in execution["milestones"] if m["id"] == milestone)

    def commits(self) -> int:
        return int(git_out(self.root, "rev-list", "--count", "HEAD").strip() or 0)

    def tree_complete(self) -> bool:
        tree = self.state / "worktree"
        wanted = set(git_out(self.root, "ls-tree", "-r", "--name-only", "HEAD").split("\n")) - {""}
        return tree.is_dir() and set(project_files(tree)) - {".git"} == wanted

    def leftovers(self) -> bool:
        temps = [r for r in project_files(self.root) if r.endswith(".tmp") or ".planner-" in r]
        return (
            bool(temps) or any(self.state.glob("staging/*")) or (self.state / ".journal").exists()
        )


def project_kills(top: Path, rounds: int, rng: random.Random, files: int) -> dict[str, int]:
    """exec apply (two milestones), exec commit, plan worktree and plan change capture,
    each killed at random `rounds` times, from the same saved starting point each time."""
    saved = project_sessions(top, files)
    root, state = saved["root"], saved["state"]
    seen = Observed(root, state)
    names = ("killed", "acknowledged", "lost", "half", "stuck", "corrupted", "deletions")
    figures = dict.fromkeys(names, 0)

    def count(name: str, happened: object, what: str) -> None:
        """Add a failure to its figure; say which, on stderr (the figures should all be 0)."""
        figures[name] += bool(happened)
        if happened and name not in ("killed", "acknowledged"):
            print(f"bench_faults: {name}: {what}", file=sys.stderr)

    start, done_files = {}, {}
    for point in ("executing", "applied"):  # the files before and after an uninterrupted apply
        copy(saved[point], root)
        start[point] = project_files(root)
    copy(saved["executing"], root)
    ok(sh(root, "plan", "exec", "apply", "M-002"))
    done_files["M-002"] = project_files(root)
    done_files["M-001"] = start["applied"]
    copy(saved["edited"], root)
    ok(sh(root, "plan", "change", "capture"))
    captured = seen.changes()

    def settle(what: str) -> None:
        """The next command (it recovers first), then: no temp file left anywhere."""
        figures["killed"] += 1
        status = sh(root, "plan", "status")
        count("stuck", status.returncode, f"{what}: plan status exits {status.returncode}")
        count("corrupted", seen.leftovers(), f"{what}: temp files left")

    for milestone in ("M-001", "M-002"):
        killer = Killer(rng)
        what = f"exec apply {milestone}"
        for _ in range(rounds):
            copy(saved["executing"], root)
            ack = killer.run(root, ["plan", "exec", "apply", milestone])
            settle(what)
            files_now, applied = project_files(root), bool(seen.run_of(milestone)["applied_at"])
            whole = (files_now, applied) in (
                (start["executing"], False),
                (done_files[milestone], True),
            )
            count("half", not whole, f"{what}: applied_at {applied}, files neither")
            count("lost", ack and not applied, f"{what}: acknowledged, not recorded")
            figures["acknowledged"] += ack
            retry = sh(root, "plan", "exec", "apply", milestone)
            wrong = retry.returncode != 0 or project_files(root) != done_files[milestone]
            count("stuck", wrong, f"{what}: the retry exits {retry.returncode} {retry.stderr}")
    killer = Killer(rng)
    what = "exec commit M-001"
    for _ in range(rounds):
        copy(saved["applied"], root)
        base = seen.commits()
        ack = killer.run(root, ["plan", "exec", "commit", "M-001"])
        settle(what)
        made, recorded = seen.commits() - base, seen.run_of("M-001")["commit"]
        head = git_out(root, "rev-parse", "HEAD").strip()
        # made and not yet recorded is allowed: the retry finds git's commit by its trailer
        wrong = made > 1 or (recorded is not None and (made != 1 or recorded != head))
        count("half", wrong, f"{what}: {made} commit(s) made, recorded {recorded}")
        count("lost", ack and recorded is None, f"{what}: acknowledged, not recorded")
        figures["acknowledged"] += ack
        retry = sh(root, "plan", "exec", "commit", "M-001")
        head = git_out(root, "rev-parse", "HEAD").strip()
        wrong = seen.commits() - base != 1 or seen.run_of("M-001")["commit"] != head
        count(
            "stuck", retry.returncode or wrong, f"{what}: retry {retry.returncode} {retry.stderr}"
        )
    killer = Killer(rng)
    what = "plan worktree"
    for _ in range(rounds):
        copy(saved["planning"], root)
        ack = killer.run(root, ["plan", "worktree"])
        settle(what)
        count("lost", ack and not seen.tree_complete(), f"{what}: acknowledged, incomplete")
        figures["acknowledged"] += ack
        sh(root, "plan", "change", "capture")  # an unfinished checkout must not look deleted
        count("deletions", seen.changes(), f"{what}: capture recorded {len(seen.changes())}")
        retry = sh(root, "plan", "worktree")
        wrong = retry.returncode != 0 or not seen.tree_complete()
        count("stuck", wrong, f"{what}: the retry exits {retry.returncode} {retry.stderr}")
    killer = Killer(rng)
    what = "plan change capture"
    for _ in range(rounds):
        copy(saved["edited"], root)
        ack = killer.run(root, ["plan", "change", "capture"])
        settle(what)
        now = seen.changes()
        count("half", now not in ([], captured), f"{what}: {len(now)} change(s) recorded")
        count("lost", ack and now != captured, f"{what}: acknowledged, not recorded")
        figures["acknowledged"] += ack
        retry = sh(root, "plan", "change", "capture")
        wrong = retry.returncode != 0 or seen.changes() != captured
        count("stuck", wrong, f"{what}: the retry exits {retry.returncode} {retry.stderr}")
    return figures


def at_once(project: Path, argvs: list[list[str]]) -> list[int]:
    procs = [
        subprocess.Popen(
            [str(BIN / a[0]), *a[1:]],
            cwd=project,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=ENV,
        )
        for a in argvs
    ]
    return [p.wait() for p in procs]


def writers(top: Path, n: int) -> tuple[int, int, int]:
    """n mixed writers at once: (acknowledged, lost, duplicated)."""
    from state.rules.session_store import Store

    project = new_project(top, "writers")
    state, _ = before_gate(project)
    step4 = ["planner", "--step", "4", "--state-dir", str(state)]
    argvs = []
    for k in range(n):
        kind = k % 4
        if kind == 0:
            argvs.append(["plan", "decision", "add", "--decision", f"w{k}", "--reasoning", "r"])
        elif kind == 1:
            argvs.append(["plan", "question", "add", "--category", "scope", "--kind", "text"])
            argvs[-1] += ["--text", f"w{k}"]
        elif kind == 2:
            argvs.append(["plan", "qr", "add", "--phase", "plan-design", "--check", f"w{k}"])
        else:
            argvs.append(step4)
    codes = at_once(project, argvs)
    store = Store(str(state))
    found = [d["decision"] for d in store.read("plan")["planning_context"]["decision_log"]]
    found += [q["text"] for q in store.read("context")["questions"]]
    found += [i["check"] for i in store.read("qr-plan-design")["items"]]
    ids = [d["id"] for d in store.read("plan")["planning_context"]["decision_log"]]
    ids += [i["id"] for i in store.read("qr-plan-design")["items"]]
    lost = dup = 0
    for k, code in enumerate(codes):
        if code == 0 and k % 4 != 3:
            lost += f"w{k}" not in found
            dup += found.count(f"w{k}") > 1
    dup += len(ids) - len(set(ids))
    return sum(c == 0 for c in codes), lost, dup


def gates(top: Path, n: int) -> int:
    """n identical gate runs at once: how many times the verdict was applied."""
    from state.rules.session_store import Store

    project = new_project(top, "gate16")
    state, gate = before_gate(project)
    at_once(project, [gate] * n)
    iteration: int = Store(str(state)).read("session")["qr"]["plan-design"]["iteration"]
    return iteration - 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=75, help="kills per kind (4 kinds)")
    parser.add_argument("--writers", type=int, default=64)
    parser.add_argument("--gates", type=int, default=16)
    parser.add_argument("--seed", type=int, default=10)
    parser.add_argument("--files", type=int, default=1500, help="project size for plan worktree")
    a = parser.parse_args()
    rng = random.Random(a.seed)
    top = Path(tempfile.mkdtemp(prefix="bench-faults-"))
    try:
        start = time.perf_counter()
        f = kills(top, max(1, a.rounds), rng)
        print(
            f"mutations, batches, gates and approvals killed at random: {f['killed']} "
            f"({f['acknowledged']} acknowledged before the kill) -> acknowledged writes lost "
            f"{f['lost']}, batches half-applied {f['half']}, sessions stuck {f['stuck']}, "
            f"files invalid {f['invalid']}"
        )
        p = project_kills(top, max(1, a.rounds), rng, a.files)
        print(
            f"project writes (exec apply x2, exec commit, plan worktree on {a.files} files, "
            f"change capture) killed at random: {p['killed']} ({p['acknowledged']} acknowledged "
            f"before the kill) -> lost {p['lost']}, half-applied {p['half']}, stuck "
            f"{p['stuck']}, corrupted projects {p['corrupted']}, deletions recorded "
            f"{p['deletions']}"
        )
        acked, lost, dup = writers(top, a.writers)
        print(
            f"{a.writers} mixed concurrent writers: {acked} acknowledged -> lost {lost}, "
            f"duplicated {dup}"
        )
        print(f"{a.gates} identical gate runs at once -> times applied {gates(top, a.gates)}")
        print(f"measured in {time.perf_counter() - start:.0f} s")
    finally:
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    main()
