"""Overlapping plans: open sessions of one repository (its `.planner/` and every other git
worktree's) that plan changes to the same files or functions. Pure reading: nothing written.

Step 1, `plan list` and `plan validate --all` say what `find` returns (docs/design.md,
"Overlapping plans").
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from typing import TypedDict

from state.errors import PlannerError
from state.repo import git
from state.storage import store
from state.vocab import CLOSED

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.storage.documents import Milestone, Session


class SideRecord(TypedDict):
    milestones: list[str]
    intents: list[str]


class SeenFrom(TypedDict):
    """An overlap as `plan list --json` shows it to one of its sessions."""

    session: str
    worktree: str
    file: str
    function: str | None
    ours: SideRecord
    theirs: SideRecord


@dataclass(frozen=True)
class Touch:
    """One place a plan names a file: its milestone, intent (CI-n, or None for the milestone's
    own file list and tests), function (or None) and JSON path in plan.json."""

    milestone: str
    intent: str | None
    function: str | None
    where: str


@dataclass
class Planned:
    """An open session and the files its plan changes (repository-relative) with where."""

    session: str  # the session's id (its directory's name)
    state_dir: str
    worktree: str  # the work tree whose .planner/ holds it
    created_at: str
    files: dict[str, list[Touch]] = field(default_factory=dict)
    task: str = ""  # what it plans, for step 1's word on the other open sessions
    status: str = ""


@dataclass(frozen=True)
class Side:
    """One session of an overlap: its milestones and intents on the file (or function)."""

    session: str
    state_dir: str
    worktree: str
    milestones: tuple[str, ...]
    intents: tuple[str, ...]
    where: str  # the first place in its plan.json, a path `plan validate` can locate


@dataclass(frozen=True)
class Overlap:
    """Two open sessions whose plans change one file, or one function of it. `first` is the
    older session, `second` the one that came later."""

    file: str
    function: str | None
    first: Side
    second: Side

    def involves(self, session: str) -> bool:
        return session in (self.first.session, self.second.session)

    def other(self, session: str) -> Side:
        return self.second if self.first.session == session else self.first

    def what(self) -> str:
        return f"{self.function} in {self.file}" if self.function else self.file

    def seen_from(self, session: str) -> SeenFrom:
        """The overlap on `session`'s side (`plan list --json`): the other session, the file
        and function, and the milestones and intents of each side."""
        theirs = self.other(session)
        ours = self.first if theirs is self.second else self.second
        return {
            "session": theirs.session,
            "worktree": theirs.worktree,
            "file": self.file,
            "function": self.function,
            "ours": {"milestones": list(ours.milestones), "intents": list(ours.intents)},
            "theirs": {"milestones": list(theirs.milestones), "intents": list(theirs.intents)},
        }


@dataclass(frozen=True)
class Note:
    """A session `find` skipped because a file of it is damaged, and why."""

    session: str
    state_dir: str
    message: str


@dataclass
class Found:
    """What `find` saw: the overlaps, notes on sessions it skipped (damaged), and the open
    sessions it read."""

    overlaps: list[Overlap]
    notes: list[Note]
    sessions: list[Planned] = field(default_factory=list)

    def of(self, session: str) -> list[Overlap]:
        return [o for o in self.overlaps if o.involves(session)]


def find(root: str) -> Found:
    """Every overlap between the open sessions of the repository `root` is a work tree of."""
    sessions, notes = open_sessions(root)
    return Found(overlaps_between(sessions), notes, sessions)


def overlaps_between(sessions: list[Planned]) -> list[Overlap]:
    """Each pair of sessions planning one file: one overlap per function both change there,
    else one for the file; pairs in the order the sessions started."""
    ordered = sorted(sessions, key=lambda s: (s.created_at, s.session))
    found: list[Overlap] = []
    for i, a in enumerate(ordered):
        for b in ordered[i + 1 :]:
            for path in sorted(a.files.keys() & b.files.keys()):
                found += _on_file(path, a, b)
    return found


def _on_file(path: str, a: Planned, b: Planned) -> list[Overlap]:
    both = {t.function for t in a.files[path]} & {t.function for t in b.files[path]}
    names: list[str | None] = [*sorted(f for f in both if f)] or [None]  # None: the whole file
    return [Overlap(path, name, _side(a, path, name), _side(b, path, name)) for name in names]


def _side(planned: Planned, path: str, function: str | None) -> Side:
    touches = [t for t in planned.files[path] if function in (None, t.function)]
    return Side(
        planned.session,
        planned.state_dir,
        planned.worktree,
        tuple(dict.fromkeys(t.milestone for t in touches)),
        tuple(dict.fromkeys(t.intent for t in touches if t.intent)),
        touches[0].where,
    )


# ---------------------------------------------------------------- reading the sessions


def worktrees(root: str) -> list[str]:
    """`root` first, then the repository's other work trees (`git worktree list`); a work
    tree whose directory vanished, and a bare repository, are skipped."""
    found = [os.path.abspath(root)]
    if not os.path.lexists(os.path.join(root, ".git")):
        return found  # not a git work tree: git would look for a repository above it
    try:
        done, end = git.run(root, "worktree", "list", "--porcelain", "-z"), "\0"
        if done.returncode:  # git before 2.36 has no -z: lines then
            done, end = git.run(root, "worktree", "list", "--porcelain"), "\n"
    except PlannerError:  # no git at all: the project's own .planner/ is all there is
        return found
    if done.returncode:
        return found
    seen = {os.path.realpath(root)}
    for record in done.stdout.decode(errors="surrogateescape").split(end + end):
        lines = [line for line in record.split(end) if line]
        if not lines or not lines[0].startswith("worktree ") or "bare" in lines:
            continue
        path = lines[0][len("worktree ") :]
        if os.path.realpath(path) in seen or not os.path.isdir(path):
            continue
        seen.add(os.path.realpath(path))
        found.append(path)
    return found


def open_sessions(root: str) -> tuple[list[Planned], list[Note]]:
    """The open sessions of every work tree of the repository, with what their plans change;
    and a note for each session skipped because a file of it is damaged.

    A session's files are committed (docs/reference.md, "Which files of .planner/ to
    commit"), so one session can be in several work trees: one id is one session, and the copy
    changed last is the one read.
    """
    copies: dict[str, tuple[str, str, Session]] = {}
    notes: list[Note] = []
    for tree in worktrees(root):
        for state_dir, session in _sessions_in(tree, notes):
            name = os.path.basename(state_dir)
            if name not in copies or session["updated_at"] > copies[name][2]["updated_at"]:
                copies[name] = (tree, state_dir, session)
    planned: list[Planned] = []
    for name, (tree, state_dir, session) in sorted(copies.items()):
        if session["status"] in CLOSED:  # every other status is open
            continue
        found = _planned(name, tree, state_dir, session, notes)
        if found is not None:
            planned.append(found)
    return planned, notes


def _sessions_in(tree: str, notes: list[Note]) -> list[tuple[str, Session]]:
    home = os.path.join(tree, ".planner")
    try:
        names = sorted(n for n in os.listdir(home) if not n.startswith("."))
    except OSError:  # no .planner/ here (or it vanished while we looked)
        return []
    found = []
    for name in names:
        path = os.path.join(home, name, "session.json")
        if not os.path.isfile(path):
            continue
        try:
            found.append((os.path.dirname(path), store.load(path, "session")))
        except PlannerError as e:
            notes.append(Note(name, os.path.dirname(path), e.message))
    return found


def _planned(
    name: str, tree: str, state_dir: str, session: Session, notes: list[Note]
) -> Planned | None:
    planned = Planned(
        name, state_dir, tree, session["created_at"], task=session["task"], status=session["status"]
    )
    path = os.path.join(state_dir, "plan.json")
    if not os.path.isfile(path):
        return planned  # nothing planned yet
    try:
        plan = store.load(path, "plan")
    except PlannerError as e:
        notes.append(Note(name, state_dir, e.message))
        return None
    for m in plan["milestones"]:
        for touch_path, touch in _touches(m):
            key = repository_path(touch_path, tree)
            if key:
                planned.files.setdefault(key, []).append(touch)
    return planned


def _touches(m: Milestone) -> list[tuple[str, Touch]]:
    """Every file a milestone names (its files, tests, intents, changes) and where; a change
    is on its intent's function when it changes the intent's file."""
    at = f"milestones[{m['id']}]"
    found = [(f, Touch(m["id"], None, None, f"{at}.files[{i}]")) for i, f in enumerate(m["files"])]
    found += [
        (f, Touch(m["id"], None, None, f"{at}.tests.files[{i}]"))
        for i, f in enumerate(m["tests"]["files"])
    ]
    intents: dict[str, tuple[str, str | None]] = {}
    for ci in m["code_intents"]:
        function = _function(ci["function"])
        intents[ci["id"]] = (ci["file"], function)
        where = f"{at}.code_intents[{ci['id']}].{'function' if function else 'file'}"
        found.append((ci["file"], Touch(m["id"], ci["id"], function, where)))
    for cc in m["code_changes"]:
        where = f"{at}.code_changes[{cc['id']}].file"
        file, function = intents.get(cc["intent_ref"], (None, None))
        same = file is not None and posixpath.normpath(file) == posixpath.normpath(cc["file"])
        touch = Touch(m["id"], cc["intent_ref"], function if same else None, where)
        found.append((cc["file"], touch))
    return found


def _function(name: str | None) -> str | None:
    """An intent's function as compared: `greet` and `greet()` are one function."""
    cleaned = (name or "").strip().removesuffix("()").strip()
    return cleaned or None


def repository_path(path: str, tree: str) -> str:
    """A planned file as the repository names it: relative to the work tree, `/`-separated,
    normalised (`./src/../a.py` is `a.py`); "" for an empty name. An absolute path inside the
    work tree is made relative; one outside it is kept as it is."""
    path = path.strip()
    if not path:
        return ""
    if os.path.isabs(path):
        relative = os.path.relpath(path, tree)
        if relative == ".." or relative.startswith(".." + os.sep):
            return posixpath.normpath(path)
        path = relative
    normal = posixpath.normpath(path.replace(os.sep, "/"))
    return "" if normal == "." else normal
