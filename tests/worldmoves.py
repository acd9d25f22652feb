"""World-change enumeration (PRODUCT.md §17), in the spirit of §8's crash points
(tests/crashpoints.py): between every pair of commands of a walk, the person or git acts on
the repository; then the next command runs, and the invariants are checked.

The walk (WALK) goes through planning (an interactive session, the person approving with
their own command), execution (exec apply and done --commit per milestone, the executor's
steps), an amendment (`plan amend`, re-planned through the gates, re-approved, executed) and
the result review (`plan result show`, then accept). It is run once; the whole project
(its .git and the session under .planner/ included) is copied after each command, so any
pair (after command k, before k+1) is put back without replaying.

ACTS is the catalogue of the person's and git's acts. For a pair and an act (`check`):
- the project is put back as it was after command k and the act is done;
- command k+1 runs, as the walk ran it (a real process);
- no exit 1 and no traceback, from it or from anything run after it;
- a refusal leaves the project's index and files and the session's files as it found them;
- `plan status` runs (exit 0 or 2), and when the command was refused it says something it
  did not say before the act (or exits 2 naming the problem); a passing index.lock excepted;
- the fixes the product prints (the `fix:` part of an error line, routing lines, `plan
  status`'s routing) are followed, up to FIX_BOUND commands, retrying command k+1 after
  each: it must succeed, or the session end (completed or cancelled); with nothing offered
  the command is retried once (a passing cause), then the session is stuck. The person
  removes a stale index.lock once a refusal names it;
- no loop: a fix after which the state is unchanged and the same refusal is printed again;
- no lost commit: every commit on the branch before the act, other than the ones the act
  itself rewrote, is still reachable from a ref;
- a hand edit of plan.json is not approved on no record (§17: refused, or a revision of its
  own with an audit line).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

BIN = Path(sys.executable).parent
IDENTITY = {
    "GIT_AUTHOR_NAME": "ann",
    "GIT_AUTHOR_EMAIL": "ann@example.com",
    "GIT_COMMITTER_NAME": "ann",
    "GIT_COMMITTER_EMAIL": "ann@example.com",
}
DROP = ("PLANNER_STATE_DIR", "PLANNER_FAULT", "PLANNER_CRASH_AT", "PLANNER_CRASH_LOG", "CI")
FIX_BOUND = 6  # fixes followed after a refusal before the session counts as stuck
SCRIPTS = ("plan", "planner", "executor")

GREET = "def greet(name):\n    return 'hi ' + name\n"
FAREWELL = "\ndef farewell(name):\n    return 'bye ' + name\n"
WAVE = "def wave():\n    return 'o/'\n"
BOW = "def bow():\n    return 'm(_ _)m'\n"


def env() -> dict[str, str]:
    """An interactive session's environment (no CI): the person's verdicts are theirs."""
    full = {k: v for k, v in os.environ.items() if k not in DROP}
    full.update(IDENTITY)
    full["PATH"] = f"{BIN}{os.pathsep}{full.get('PATH', '')}"
    return full


def git(root: Path, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, env=env(), timeout=120
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {done.stderr}")
    return done


def new_project(root: Path) -> None:
    """src/app.py and README.md, one commit; the project's planner settings ask no questions."""
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text(GREET)
    (root / "README.md").write_text("# Demo\n")
    (root / "pyproject.toml").write_text("[tool.planner]\nquestions_min = 0\n")
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "init"]):
        git(root, *args, check=True)


# ---------------------------------------------------------------- the walk


@dataclass
class Ran:
    argv: list[str]
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err

    def first_line(self) -> str:
        lines = [ln for ln in self.err.splitlines() if ln.strip()]
        lines = lines or [ln for ln in self.out.splitlines() if ln.strip()]
        return lines[0][:200] if lines else ""


@dataclass
class Command:
    """One command of the walk as it ran: its argv and stdin, and the files an agent's file
    tool wrote in the scratch worktree just before it (path relative to the worktree)."""

    name: str
    argv: list[str]
    stdin: str | None = None
    edits: dict[str, str] = field(default_factory=dict)


def run(cwd: Path, argv: list[str], stdin: str | None = None, timeout: float = 120) -> Ran:
    """A console script of the package (or git, or a shell line) as a real process."""
    exe = [str(BIN / argv[0]), *argv[1:]] if argv[0] in SCRIPTS else argv
    try:
        done = subprocess.run(
            exe, cwd=cwd, text=True, capture_output=True, env=env(), input=stdin, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return Ran(argv, -1, "", f"timed out after {timeout} s")
    return Ran(argv, done.returncode, done.stdout, done.stderr)


def write_edits(state: Path, edits: dict[str, str]) -> bool:
    """The agent's file-tool edits in the scratch worktree (each file's whole new text);
    False when there is no worktree to edit (the capture then says what to do)."""
    tree = state / "worktree"
    if not tree.is_dir():
        return False
    for rel, text in edits.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    return True


ROUTE = re.compile(r"^(NEXT|IF PASS|IF FAIL): (.+)$", re.M)


def routes(text: str) -> dict[str, list[str]]:
    """The routing lines a command printed, last of each kind (a gate prints the next step's)."""
    found: dict[str, list[str]] = {}
    for kind, line in ROUTE.findall(text):
        try:
            found[kind] = shlex.split(line)
        except ValueError:
            continue
    return found


RECHECK = re.compile(r'"op": "qr set", "args": \{"id": "(qa-\d+)", "phase": "([\w-]+)"')
TODO = re.compile(r"^\s*(qa-\d+) .*\bTODO\b", re.M)


def judged(text: str, phase: str) -> list[dict[str, object]]:
    """A review step's open items (TODO, or listed to re-check) passed, as a batch."""
    ids = {(i, p) for i, p in RECHECK.findall(text)} | {(i, phase) for i in TODO.findall(text)}
    return [
        {"op": "qr set", "args": {"id": i, "phase": p, "status": "PASS"}} for i, p in sorted(ids)
    ]


def design(round_: int) -> list[dict[str, object]]:
    """Round 0: M-001 farewell in src/app.py, M-002 wave in src/wave.py. The amendment:
    M-003 bow in src/bow.py."""
    if round_:
        return [
            {"op": "milestone add",
             "args": {"name": "Bow", "file": ["src/bow.py"], "acceptance": ["bow() bows"]}},
            {"op": "intent add",
             "args": {"milestone": "$1", "file": "src/bow.py", "behavior": "bow"}},
        ]  # fmt: skip
    return [
        {"op": "overview set",
         "args": {"title": "Farewell", "problem": "No goodbye.", "approach": "Add farewell()."}},
        {"op": "decision add", "args": {"decision": "Mirror greet()", "reasoning": "Obvious."}},
        {"op": "milestone add",
         "args": {"name": "Farewell", "file": ["src/app.py"], "acceptance": ["farewell works"]}},
        {"op": "intent add",
         "args": {"milestone": "$3", "file": "src/app.py", "function": "farewell",
                  "behavior": "Return 'bye ' + name", "decision": ["$2"]}},
        {"op": "milestone add",
         "args": {"name": "Wave", "file": ["src/wave.py"], "acceptance": ["wave() waves"]}},
        {"op": "intent add",
         "args": {"milestone": "$5", "file": "src/wave.py", "behavior": "wave"}},
    ]  # fmt: skip


# The walk's commands by name: pairs and KNOWN_FAILURES name them. "r1-" is the amendment.
PLANNING = ["step-3", "design", "step-4", "qr-design", "step-5", "worktree", "capture",
            "step-7", "qr-code", "step-8", "step-10", "qr-docs", "step-11", "approve"]  # fmt: skip
WALK = [
    "step-1",
    "context",
    *PLANNING,
    "exec-step-1",
    "apply-M-001",
    "done-M-001",
    "amend",
    *(f"r1-{name}" for name in PLANNING),
    "r1-exec-step-1",
    "apply-M-002",
    "done-M-002",
    "apply-M-003",
    "done-M-003",
    "exec-step-4",
    "qr-impl-code",
    "exec-step-5",
    "qr-impl-docs",
    "exec-step-8",
    "result-show",
    "result-accept",
]
PAIRS = [f"{a}>{b}" for a, b in itertools.pairwise(WALK)]


@dataclass
class Walk:
    root: Path
    state: Path
    commands: list[Command]
    snapshots: list[Path]  # snapshots[k]: the project after commands[k]
    outputs: list[Ran]
    status_before: dict[int, Ran] = field(default_factory=dict)  # `plan status` after k

    def restore(self, k: int) -> None:
        """The project as it was after command k (0-based), clones gone."""
        for extra in self.root.parent.glob(f"{self.root.name}-*"):
            shutil.rmtree(extra, ignore_errors=True)
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.copytree(self.snapshots[k], self.root, symlinks=True)


class WalkBuilder:
    """Runs the walk as an agent would, from what the steps print, recording each command."""

    def __init__(self, root: Path, snaps: Path):
        self.root, self.snaps = root, snaps
        self.commands: list[Command] = []
        self.snapshots: list[Path] = []
        self.outputs: list[Ran] = []
        self.state = Path()
        self.last = Ran([], 0, "", "")

    def do(self, name: str, argv: list[str], stdin: str | None = None,
           edits: dict[str, str] | None = None) -> Ran:  # fmt: skip
        expected = WALK[len(self.commands)]
        assert name == expected, (name, expected)
        command = Command(name, argv, stdin, dict(edits or {}))
        if command.edits:
            assert write_edits(self.state, command.edits), "no worktree to edit"
        done = run(self.root, argv, stdin)
        assert done.code == 0 and "Traceback" not in done.err, (name, argv, done.text)
        if not self.commands:
            self.state = Path(re.findall(r"^STATE_DIR=(.+)$", done.out, re.M)[0])
        self.commands.append(command)
        self.outputs.append(done)
        snap = self.snaps / f"{len(self.commands) - 1:03d}"
        shutil.copytree(self.root, snap, symlinks=True)
        self.snapshots.append(snap)
        self.last = done
        return done

    def route(self, name: str, kind: str = "NEXT") -> Ran:
        """The command the last output routes to (a gate's IF PASS: the verdict is pass)."""
        argv = routes(self.last.text).get(kind)
        inline = re.search(r"^planner step (\d+) follows \(run here", self.last.text, re.M)
        if not argv and inline:  # the step ran inside the last command (plan amend): again
            argv = ["planner", "--step", inline[1], "--state-dir", str(self.state)]
        assert argv, (name, kind, self.last.text)
        return self.do(name, argv)

    def planning(self, prefix: str, round_: int) -> None:
        p = prefix
        self.route(f"{p}step-3")
        step3 = self.last
        self.do(f"{p}design", ["plan", "apply", "-"], json.dumps(design(round_)))
        self.last = step3
        self.do(f"{p}step-4", routes(step3.text).get("NEXT") or self._full_review())
        step4 = self.last
        self._review(f"{p}qr-design", "plan-design")
        self.last = step4
        self.route(f"{p}step-5", "IF PASS")
        step5 = self.last
        tree = self.do(f"{p}worktree", ["plan", "worktree"]).out.strip()
        assert Path(tree) == self.state / "worktree", tree
        edits = (
            {"src/bow.py": BOW} if round_ else {"src/app.py": GREET + FAREWELL, "src/wave.py": WAVE}
        )
        self.do(f"{p}capture", ["plan", "change", "capture"], edits=edits)
        self.last = step5
        self.do(f"{p}step-7", routes(step5.text).get("NEXT") or self._full_review())
        step7 = self.last
        self._review(f"{p}qr-code", "plan-code")
        self.last = step7
        self.route(f"{p}step-8", "IF PASS")
        step8 = self.last
        self.do(f"{p}step-10", routes(step8.text).get("NEXT") or self._full_review())
        step10 = self.last
        self._review(f"{p}qr-docs", "plan-docs")
        self.last = step10
        self.route(f"{p}step-11", "IF PASS")
        approve = routes(self.last.text)["IF PASS"]
        assert approve[:3] == ["plan", "review", "approve"], approve
        self.do(f"{p}approve", [*approve, "--by", "ann"])

    def _full_review(self) -> list[str]:
        """In an amendment a work step offers the review of what changed, or a full one."""
        found = re.findall(r"a full review instead: planner --step (\d+)", self.last.text)
        assert found, self.last.text
        return ["planner", "--step", found[-1], "--state-dir", str(self.state)]

    def _review(self, name: str, phase: str) -> None:
        ops = [*judged(self.last.text, phase)]
        ops.append(
            {"op": "qr add", "args": {"phase": phase, "check": "reviewed", "status": "PASS"}}
        )
        self.do(name, ["plan", "apply", "-"], json.dumps(ops))


def build_walk(base: Path) -> Walk:
    root = base / "project"
    root.mkdir(parents=True)
    new_project(root)
    snaps = base / "snapshots"
    snaps.mkdir()
    b = WalkBuilder(root, snaps)
    b.do("step-1", ["planner", "--step", "1", "--task", "Add a farewell"])
    b.do("context", ["plan", "context", "set", "--goal", "say goodbye"])
    b.last = b.outputs[0]  # step 1 printed step 2's routing
    b.planning("", 0)
    b.route("exec-step-1")  # from the approval's routing
    b.do("apply-M-001", ["plan", "exec", "apply", "M-001"])
    b.do("done-M-001", ["plan", "exec", "done", "M-001", "--evidence", "ran it", "--commit"])
    b.do("amend", ["plan", "amend", "--reason", "bow too"])
    b.planning("r1-", 1)
    b.route("r1-exec-step-1")
    for mid in ("M-002", "M-003"):
        b.do(f"apply-{mid}", ["plan", "exec", "apply", mid])
        b.do(f"done-{mid}", ["plan", "exec", "done", mid, "--evidence", "ran it", "--commit"])
    # The wave's milestones are committed: the executor's step 3 routing leads on.
    # (step 3's NEXT names the wave's first command; the wave's last done printed step 4)
    b.do("exec-step-4", ["executor", "--step", "4", "--state-dir", str(b.state)])
    at = b.last
    b._review("qr-impl-code", "impl-code")
    b.last = at
    b.route("exec-step-5", "IF PASS")
    at = b.last
    b._review("qr-impl-docs", "impl-docs")
    b.last = at
    b.route("exec-step-8", "IF PASS")
    b.do("result-show", ["plan", "result", "show"])
    b.last = b.outputs[-2]
    accept = routes(b.last.text)["IF PASS"]
    assert accept[:3] == ["plan", "result", "accept"], accept
    b.do("result-accept", [*accept, "--by", "ann"])
    assert len(b.commands) == len(WALK)
    return Walk(root, b.state, b.commands, b.snapshots, b.outputs)


# ---------------------------------------------------------------- the acts


@dataclass
class World:
    """Where the next command runs after an act: the project (or a clone of it), the
    session's directory there, and the commits the act itself rewrote (allowed to go)."""

    cwd: Path
    state: Path
    rewritten: set[str] = field(default_factory=set)
    stale_lock: Path | None = None  # an index.lock the person removes when told about it
    holder: subprocess.Popen[bytes] | None = None


class NotApplicable(Exception):
    """The act makes no sense here (nothing to stash, no parent to reset to)."""


def head(root: Path) -> str:
    return git(root, "rev-parse", "-q", "--verify", "HEAD").stdout.strip()


def branch_commits(root: Path) -> list[str]:
    return git(root, "rev-list", "HEAD").stdout.split()


def _reword(root: Path) -> set[str]:
    """`git commit --amend` of HEAD's message only: HEAD's commit is rewritten."""
    old = head(root)
    message = git(root, "log", "-1", "--format=%B").stdout.strip()
    git(root, "commit", "-q", "--amend", "--only", "-m", f"{message} (reworded)", check=True)
    return {old}


def act_commit(walk: Walk) -> World:
    (walk.root / "NOTES.md").write_text("notes of mine\n")
    git(walk.root, "add", "NOTES.md", check=True)
    git(walk.root, "commit", "-qm", "notes", "--", "NOTES.md", check=True)
    return World(walk.root, walk.state)


def act_amend(walk: Walk) -> World:
    return World(walk.root, walk.state, _reword(walk.root))


def _rebase_all(root: Path) -> set[str]:
    """Every commit of the branch rewritten (the root too), the files unchanged."""
    old = set(branch_commits(root))
    done = subprocess.run(
        ["git", "rebase", "-q", "--force-rebase", "--autostash", "--root"],
        cwd=root, capture_output=True, text=True,
        env={**env(), "GIT_COMMITTER_DATE": "2001-02-03T04:05:06Z"},
    )  # fmt: skip
    if done.returncode != 0:
        git(root, "rebase", "--abort")
        raise NotApplicable(f"git rebase: {done.stderr.strip()[:200]}")
    assert not old & set(branch_commits(root)), "the rebase rewrote nothing"
    return old


def act_rebase(walk: Walk) -> World:
    return World(walk.root, walk.state, _rebase_all(walk.root))


def act_reset(walk: Walk) -> World:
    if not git(walk.root, "rev-parse", "-q", "--verify", "HEAD~1").stdout.strip():
        raise NotApplicable("HEAD has no parent")
    old = head(walk.root)
    git(walk.root, "reset", "-q", "--hard", "HEAD~1", check=True)
    return World(walk.root, walk.state, {old})


def act_stash(walk: Walk) -> World:
    """`git stash -u` of whatever the project has uncommitted (the session's own directory
    aside: stashing it would be deleting the session)."""
    before = git(walk.root, "stash", "list").stdout
    git(walk.root, "stash", "push", "-q", "--include-untracked", "--", ":!.planner", check=True)
    if git(walk.root, "stash", "list").stdout == before:
        raise NotApplicable("nothing to stash")
    return World(walk.root, walk.state)


def act_checkout(walk: Walk) -> World:
    if not git(walk.root, "diff", "--name-only").stdout.strip():
        raise NotApplicable("no file differs from the index")
    git(walk.root, "checkout", "--", ".", check=True)
    return World(walk.root, walk.state)


def act_switch(walk: Walk) -> World:
    git(walk.root, "switch", "-q", "-c", "mine", check=True)
    return World(walk.root, walk.state)


def act_merge_conflict(walk: Walk) -> World:
    """A merge of a side branch left in conflict (on a file of the person's own)."""
    root = walk.root
    (root / "CHANGES.md").write_text("base\n")
    git(root, "add", "CHANGES.md", check=True)
    git(root, "commit", "-qm", "changes", "--", "CHANGES.md", check=True)
    git(root, "branch", "side", check=True)
    (root / "CHANGES.md").write_text("ours\n")
    git(root, "commit", "-qm", "ours", "--", "CHANGES.md", check=True)
    git(root, "switch", "-q", "side", check=True)
    (root / "CHANGES.md").write_text("theirs\n")
    git(root, "commit", "-qm", "theirs", "--", "CHANGES.md", check=True)
    git(root, "switch", "-q", "main", check=True)
    done = git(root, "merge", "-q", "--no-edit", "side")
    if done.returncode == 0 or not (root / ".git" / "MERGE_HEAD").exists():
        raise NotApplicable(f"the merge did not stop in conflict: {done.stdout}{done.stderr}")
    return World(root, walk.state)


def _prune(root: Path) -> None:
    git(root, "reflog", "expire", "--expire=now", "--all", check=True)
    git(root, "gc", "-q", "--prune=now", check=True)


def act_amend_gc(walk: Walk) -> World:
    """HEAD reworded, the old one pruned: it is gone from the object store."""
    rewritten = _reword(walk.root)
    _prune(walk.root)
    return World(walk.root, walk.state, rewritten)


def act_rebase_gc(walk: Walk) -> World:
    """Every commit rewritten and the old ones pruned: the base commit is gone too."""
    rewritten = _rebase_all(walk.root)
    _prune(walk.root)
    return World(walk.root, walk.state, rewritten)


def act_lock_stale(walk: Walk) -> World:
    """index.lock left by a git that died: only the person can tell, and remove it."""
    lock = walk.root / ".git" / "index.lock"
    lock.write_bytes(b"")
    return World(walk.root, walk.state, stale_lock=lock)


HOLD_S = 1.5  # how long the live holder keeps index.lock


def act_lock_live(walk: Walk) -> World:
    """Another process (an editor's git status, another session's commit) holds index.lock
    and lets go after HOLD_S."""
    lock = walk.root / ".git" / "index.lock"
    code = (
        "import os, sys, time\n"
        "fd = os.open(sys.argv[1], os.O_CREAT | os.O_EXCL | os.O_WRONLY)\n"
        "print('held', flush=True)\n"
        f"time.sleep({HOLD_S})\n"
        "os.unlink(sys.argv[1])\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(lock)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
    return World(walk.root, walk.state, holder=holder)


EDIT = " (edited by hand)"


def act_edit_plan(walk: Walk) -> World:
    """plan.json edited on disk: the overview's title changed by hand."""
    path = walk.state / "plan.json"
    if not path.exists():
        raise NotApplicable("no plan.json yet")
    text = path.read_text()
    edited, n = re.subn(r'("title":\s*")([^"]*)"', rf'\1\2{EDIT}"', text, count=1)
    if not n:
        raise NotApplicable("plan.json has no title")
    path.write_text(edited)
    return World(walk.root, walk.state)


def act_clone(walk: Walk) -> World:
    """The plan's files committed as the README says (its .gitignore keeps the local ones
    out), and the next command run in a fresh clone."""
    root = walk.root
    if not (root / ".planner").is_dir():
        raise NotApplicable("no session yet")
    git(root, "add", "--", ".planner", check=True)
    if git(root, "diff", "--cached", "--quiet").returncode != 0:
        git(root, "commit", "-qm", "plan files", "--", ".planner", check=True)
    clone = root.parent / f"{root.name}-clone"
    git(root.parent, "clone", "-q", str(root), str(clone), check=True)
    return World(clone, clone / walk.state.relative_to(root))


TRANSIENT = ("index-lock-stale", "index-lock-live")  # status need not name a passing lock
ACTS: dict[str, Callable[[Walk], World]] = {
    "commit": act_commit,
    "amend": act_amend,
    "rebase": act_rebase,
    "reset-hard": act_reset,
    "stash": act_stash,
    "checkout-dot": act_checkout,
    "switch-branch": act_switch,
    "merge-conflict": act_merge_conflict,
    "amend-gc": act_amend_gc,
    "rebase-gc": act_rebase_gc,
    "index-lock-stale": act_lock_stale,
    "index-lock-live": act_lock_live,
    "edit-plan-json": act_edit_plan,
    "fresh-clone": act_clone,
}


# ---------------------------------------------------------------- the check


@dataclass
class Finding:
    invariant: str  # exit-1, traceback, untouched, status, stuck, loop, lost-commit
    command: str
    code: int
    line: str

    def __str__(self) -> str:
        return f"{self.invariant}: `{self.command}` exit {self.code}: {self.line}"


@dataclass
class Outcome:
    pair: str
    act: str
    applicable: bool = True
    why: str = ""
    end: str = ""  # went-on, went-on-after-fixes, moved-on, completed, cancelled, stuck, loop
    findings: list[Finding] = field(default_factory=list)
    trail: list[str] = field(default_factory=list)  # every command run after the act

    def as_json(self) -> dict[str, object]:
        return {
            "pair": self.pair,
            "act": self.act,
            "applicable": self.applicable,
            "why": self.why,
            "end": self.end,
            "findings": [f.__dict__ for f in self.findings],
            "trail": self.trail,
        }


def shown(argv: list[str], world: World | None = None) -> str:
    text = shlex.join(argv)
    if world is not None:
        text = text.replace(str(world.state), "STATE").replace(str(world.cwd), "ROOT")
    return text


def localise(argv: list[str], walk: Walk, world: World) -> list[str]:
    """A command of the walk in the world the act made (a clone: its own paths)."""
    if world.cwd == walk.root:
        return argv
    return [a.replace(str(walk.root), str(world.cwd)) for a in argv]


def session_doc(state: Path, name: str) -> dict[str, object] | None:
    try:
        loaded = json.loads((state / f"{name}.json").read_text())
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


def fingerprint(world: World) -> str:
    """The state a command can change: the session's documents (not the audit log), the
    project's HEAD, branch, index and files as git sees them, the merge state."""
    h = hashlib.sha256()
    for name in ("session", "plan", "context", "execution"):
        path = world.state / f"{name}.json"
        h.update(path.read_bytes() if path.exists() else b"-")
    for args in (
        ["rev-parse", "-q", "--verify", "HEAD"],
        ["symbolic-ref", "-q", "HEAD"],
        ["ls-files", "-s"],
        ["status", "--porcelain=v1", "--untracked-files=all", "--ignored=no"],
        ["diff"],
        ["stash", "list"],
    ):
        h.update(git(world.cwd, *args).stdout.encode())
    h.update(str((world.cwd / ".git" / "MERGE_HEAD").exists()).encode())
    h.update(str((world.state / "worktree").is_dir()).encode())
    return h.hexdigest()


def project_view(world: World) -> str:
    """The project's index and files and the session's documents: what a refusal must leave."""
    h = hashlib.sha256()
    for args in (["ls-files", "-s"], ["status", "--porcelain=v1"], ["diff"], ["diff", "--cached"]):
        h.update(git(world.cwd, *args).stdout.encode())
    for name in ("session", "plan", "context", "execution"):
        path = world.state / f"{name}.json"
        h.update(path.read_bytes() if path.exists() else b"-")
    return h.hexdigest()


STAMP = re.compile(r"\b\d+[smhd]\b|\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:\d\d)?")


def status_text(world: World) -> Ran:
    return run(world.cwd, ["plan", "status"])


FIX = re.compile(
    r"\(fix: ([^)]*(?:\([^)]*\)[^)]*)*)\)"  # (fix: …), parentheses inside allowed
    r"|\bfix: (.+)$"  # fix: … to the end of the line
    r"|\(([^()]*:\s(?:plan|planner|executor|git)\s[^()]*)\)",  # (make it active: plan …)
    re.M,
)
# A command a fix text offers: at its start, after a colon or a backtick, or after "run".
OFFERED = re.compile(
    r"(?:^|:\s|`|\b(?:run|rerun|with|use|try)\s)((?:plan|planner|executor|git)\s.*)"
)
ENDS = re.compile(r",\s|\s\(|\s—\s|\.\s|\.$")  # where the command's words end


def fixes(ran: Ran) -> list[list[str]]:
    """The commands a text offers, in the order it offers them: the runnable parts of its
    fix texts (a command of the package or git; optional [parts] left out; the reviewer's
    VERDICT is PASS, as the acts change nothing the plan is about), then its routing lines;
    none with a placeholder left."""
    found: list[list[str]] = []
    for groups in FIX.findall(ran.text):
        for part in re.split(r";|,? or |,? then |,? and ", next(g for g in groups if g)):
            offered = OFFERED.search(part.strip())
            if not offered:
                continue
            text = ENDS.split(re.sub(r"\s*\[[^\]]*\]", "", offered[1]))[0]
            text = text.strip().strip("`'\"").strip().replace("VERDICT", "PASS")
            try:
                found.append(shlex.split(text))
            except ValueError:
                continue
    found += routes(ran.text).values()
    usable = [a for a in found if not any("<" in w or "…" in w for w in a)]
    return [argv for i, argv in enumerate(usable) if argv not in usable[:i]]


def ended(world: World) -> str:
    session = session_doc(world.state, "session")
    status = session.get("status") if session else None
    return str(status) if status in ("completed", "cancelled") else ""


class Checker:
    """One (pair, act): see the module docstring."""

    def __init__(self, walk: Walk, k: int, act: str):
        self.walk, self.k, self.act = walk, k, act
        self.outcome = Outcome(PAIRS[k], act)
        self.world: World | None = None

    def find(self, invariant: str, ran: Ran) -> None:
        assert self.world is not None
        self.outcome.findings.append(
            Finding(invariant, shown(ran.argv, self.world), ran.code, ran.first_line())
        )

    def run(self, argv: list[str], stdin: str | None = None, edits: bool = False) -> Ran:
        assert self.world is not None
        if edits:
            write_edits(self.world.state, self.walk.commands[self.k + 1].edits)
        ran = run(self.world.cwd, argv, stdin)
        self.outcome.trail.append(f"$ {shown(argv, self.world)}  -> {ran.code}")
        if ran.code == 1 or ran.code < 0:
            self.find("exit-1", ran)
        if "Traceback" in ran.text:
            self.find("traceback", ran)
        if ran.code not in (0, 1) and self.world.stale_lock and "index.lock" in ran.text:
            # the person reads that index.lock is in the way, sees no git running: removes it
            self.world.stale_lock.unlink(missing_ok=True)
            self.outcome.trail.append("(the person removes the stale index.lock)")
            self.world.stale_lock = None
        return ran

    def check(self) -> Outcome:
        walk, k = self.walk, self.k
        walk.restore(k)
        if k not in walk.status_before:
            walk.status_before[k] = status_text(World(walk.root, walk.state))
        before_status = walk.status_before[k]
        commits = set(branch_commits(walk.root))
        try:
            self.world = world = ACTS[self.act](walk)
        except NotApplicable as e:
            self.outcome.applicable, self.outcome.why = False, str(e)
            return self.outcome
        try:
            self._after_act(world, commits, before_status)
        finally:
            if world.holder is not None:
                world.holder.wait(timeout=30)
        return self.outcome

    def _after_act(self, world: World, commits: set[str], before_status: Ran) -> None:
        nxt = self.walk.commands[self.k + 1]
        argv = localise(nxt.argv, self.walk, world)
        view = project_view(world)
        first = self.run(argv, nxt.stdin, edits=bool(nxt.edits))
        if first.code != 0 and project_view(world) != view:
            self.find("untouched", first)
        status = status_text(world)
        self.outcome.trail.append(f"$ plan status  -> {status.code}")
        if status.code not in (0, 2) or "Traceback" in status.text:
            self.find("status", status)
        elif (
            first.code != 0
            and status.code == 0
            and self.act not in TRANSIENT
            and world.cwd == self.walk.root
            and STAMP.sub("", status.out) == STAMP.sub("", before_status.out)
        ):
            self.find("status", Ran(["plan", "status"], 0, status.out, "names no problem"))
        self.outcome.end = self._follow(world, argv, nxt, first, status)
        if self.outcome.end in ("stuck", "loop"):
            self.find(self.outcome.end, first)
        if world.holder is not None:
            world.holder.wait(timeout=30)
        reachable = set(git(world.cwd, "rev-list", "--all").stdout.split())
        reachable |= set(git(world.cwd, "rev-list", "HEAD").stdout.split())
        lost = commits - world.rewritten - reachable
        if lost:
            self.outcome.findings.append(
                Finding("lost-commit", "(after the fixes)", 0, ", ".join(sorted(lost)))
            )
        if self.act == "edit-plan-json" and self._approved_unrecorded(world):
            self.outcome.findings.append(
                Finding("hand-edit", "plan review approve", 0, "approved a hand edit on no record")
            )

    def _approved_unrecorded(self, world: World) -> bool:
        """§17: a plan changed outside `plan` commands is found before any approval: refused,
        or recorded as its own revision with an audit line. An approval that went through
        with the edit in plan.json must find the edit in history/ and in audit.jsonl."""
        session = session_doc(world.state, "session") or {}
        plan = world.state / "plan.json"
        if not session.get("approval") or EDIT not in plan.read_text():
            return False
        approved_now = any(
            line.startswith("$ plan review approve") and line.endswith("-> 0")
            for line in self.outcome.trail
        )
        if not approved_now:
            return False
        history = world.state / "history"
        revised = any(EDIT in p.read_text() for p in history.glob("r*.json"))
        audit = world.state / "audit.jsonl"
        noted = audit.exists() and "plan.json" in audit.read_text()
        return not (revised and noted)

    def _follow(self, world: World, argv: list[str], nxt: Command, ran: Ran, status: Ran) -> str:
        """Follow what the product offers until command k+1 goes through or the session
        ends: the last refusal's fixes first, then the first one's, then `plan status`'s,
        each tried once in a given state; with nothing new offered the command itself is
        tried once more. When that too
        was tried in this very state: a loop (fixes were offered and led back here) or stuck
        (nothing was ever offered); the bound reached: stuck. A fix that moves the session
        to another status (a verdict sending it back to planning) lets the walk go on from
        there, as the product routes it."""
        if ran.code == 0:
            return "went-on"
        was = (session_doc(world.state, "session") or {}).get("status")
        tried: set[tuple[str, str]] = set()
        offered_any = False
        source = ran
        for _ in range(FIX_BOUND):
            if world.holder is not None and world.holder.poll() is None:
                world.holder.wait(timeout=30)  # the other git finished meanwhile
            state = fingerprint(world)
            offered = fixes(source) + fixes(ran) + (fixes(status) if status.code in (0, 2) else [])
            offered_any = offered_any or bool(offered)
            fresh = [a for a in offered if (state, shlex.join(a)) not in tried]
            if not fresh:
                if (state, shlex.join(argv)) in tried:
                    return "loop" if offered_any else "stuck"
                fresh = [argv]
            fix = fresh[0]
            tried.add((state, shlex.join(fix)))
            done = self.run(fix)
            if ended(world):
                return ended(world)
            source = done
            now = (session_doc(world.state, "session") or {}).get("status")
            if done.code == 0 and now != was and now not in ("failed", None):
                return "moved-on"  # a verdict the fix asked for moved the session on its way
            if done.code == 0 and fix != argv:
                tried.add((fingerprint(world), shlex.join(argv)))
                source = self.run(argv, nxt.stdin, edits=bool(nxt.edits))
                if ended(world):
                    return ended(world)
            if source.code == 0 and source.argv == argv:
                return "went-on-after-fixes"
            status = status_text(world)
        return "stuck"


def check(walk: Walk, k: int, act: str) -> Outcome:
    started = time.monotonic()
    outcome = Checker(walk, k, act).check()
    outcome.trail.append(f"({time.monotonic() - started:.1f} s)")
    return outcome
