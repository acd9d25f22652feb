"""Creating a session: its directory under .planner/, its first files, and ACTIVE; and what a
killed start left, finished or discarded by the next command in the project."""

from __future__ import annotations

import contextlib
import os

from state import clock
from state.errors import PlannerError, WriteFailed
from state.repo import gitinfo
from state.rules.session_store import Store
from state.storage import journal
from state.storage.lock import locked
from state.storage.store import LOCK_FILE, write_atomic
from state.vocab import SessionStatus as S
from state.vocab import WorkflowName

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from state.storage.documents import Config, Context, Plan, Session

BUILDING = ".building"


def new_session_id(task: str) -> str:
    """Readable and unique: date, a slug of the task, a short random part."""
    slug = "".join(c if c.isalnum() else "-" for c in task.lower()[:60])
    slug = "-".join(part for part in slug.split("-") if part)[:40].strip("-") or "plan"
    return f"{clock.now()[:10]}-{slug}-{os.urandom(3).hex()}"


def new_plan_id() -> str:
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40  # a version-4 UUID without importing uuid
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def create(
    root: str,
    task: str,
    config: Config,
    non_interactive: bool,
    activate: bool = True,
    policy: str | None = None,
) -> Store:
    """Make .planner/<id>/ with session.json, plan.json and context.json; make it ACTIVE.
    The session's mode is fixed here: non-interactive with `policy` (why nobody is asked) or
    `non_interactive`, else the person is asked (docs/design.md, "Who approves").

    The directory is built under a hidden temp name and renamed into place: a failure or a
    kill leaves no half-made session (only a hidden temp directory, removed on the next one).
    """
    home = os.path.join(root, ".planner")
    try:
        os.makedirs(home, exist_ok=True)
        gitignore = os.path.join(home, ".gitignore")
        if not os.path.exists(gitignore):  # written once: a file the user edited is theirs
            write_atomic(gitignore, GITIGNORE.encode())
        else:
            add_missing_ignores(gitignore)
    except OSError as e:
        raise WriteFailed(f"{home}: cannot be created ({e.strerror})") from None
    session_id = new_session_id(task)
    state_dir = os.path.join(home, session_id)
    building = os.path.join(home, f".{session_id}{BUILDING}")
    try:
        os.makedirs(building)
        stamp = clock.now()
        with Store(building).transaction("session create") as tx:
            tx.create(
                "session",
                new_session(session_id, task, stamp, root, config, non_interactive, policy),
            )
            tx.create("plan", new_plan(stamp))
            tx.create("context", new_context())
        os.rename(building, state_dir)
    except BaseException as e:
        import shutil  # on use: every command opening a session loads this module

        shutil.rmtree(building, ignore_errors=True)
        if isinstance(e, OSError):
            raise WriteFailed(f"{state_dir}: cannot be created ({e.strerror})") from None
        raise
    if activate:
        make_active(root, session_id)
    return Store(state_dir)


@contextlib.contextmanager
def starting(home: str) -> Iterator[None]:
    """Held while a session starts (made, its step 1 run, made ACTIVE): shared, so that starts
    run side by side, while recover_starts needs .planner/ alone (docs/design.md, "A killed
    session start")."""
    with contextlib.suppress(OSError):  # the first start: create() says why it cannot
        os.makedirs(home, exist_ok=True)
    with _home_lock(home, shared=True):
        yield


def recover_starts(home: str) -> list[tuple[str, str]]:
    """Finish or discard what killed commands left in `home` (.planner/), no start being under
    way: a `.<id>.building` directory (a start killed before its session was made) is
    removed, and each session directory holding a journal or temp files is recovered under its
    lock by the journal, rolled forward when committed, else back (journal.recover): whole, or
    as before. Also ACTIVE's and .gitignore's temp files. Returns (path, "removed" |
    "finished" | "discarded") per session acted on; nothing while a start runs (the next
    command does it), and nothing for a session it cannot recover (its own commands say why).
    """
    if not _leftovers(home):
        return []  # the common case: no lock taken
    done: list[tuple[str, str]] = []
    with _home_lock(home, shared=False) as alone:
        for name in _leftovers(home) if alone else ():
            path = os.path.join(home, name)
            if not os.path.isdir(path):
                with contextlib.suppress(OSError):
                    journal.unlink(path)
            elif name.endswith(BUILDING):
                import shutil

                shutil.rmtree(path, ignore_errors=True)
                done.append((path, "removed"))
            else:
                with (
                    contextlib.suppress(PlannerError),
                    locked(os.path.join(path, LOCK_FILE), directory=True),
                ):
                    if journal.leftovers(path):  # not what a live command finished meanwhile
                        rolled = journal.recover(path)
                        done.append((path, "finished" if rolled else "discarded"))
    return done


def _leftovers(home: str) -> list[str]:
    """Names in `home` to act on: .building directories, temp files, and session directories
    whose own listing holds a journal or a temp file (every transaction has its journal's temp
    file there; one listdir per session: a few ms for 50)."""
    try:
        names = os.listdir(home)
    except OSError:
        return []
    found = [n for n in names if n.endswith((BUILDING, journal.TMP_SUFFIX))]
    for name in set(names) - set(found):
        with contextlib.suppress(OSError):  # a file: ACTIVE, .gitignore
            inside = os.listdir(os.path.join(home, name))
            if any(n.endswith(journal.TMP_SUFFIX) or n.startswith(journal.JOURNAL) for n in inside):
                found.append(name)
    return found


@contextlib.contextmanager
def _home_lock(home: str, shared: bool) -> Iterator[bool]:
    """flock on the .planner/ directory: shared (blocking), or exclusive if free at once;
    yields whether it is held (POSIX; elsewhere never exclusive)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no recovery across sessions
        yield shared
        return
    try:
        fd = os.open(home, os.O_RDONLY)
    except OSError:
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX | fcntl.LOCK_NB)
            held = True
        except OSError:  # a start under way (BlockingIOError), or no flock here
            held = False
        yield held
    finally:
        os.close(fd)


def discard(store: Store) -> None:
    """Remove a session whose first step failed (`planner --step 1` leaves no orphan)."""
    import shutil

    shutil.rmtree(store.dir, ignore_errors=True)


# The first documents, every field spelled: mypy holds them to documents.py, and
# tests/state/test_new_session.py holds their values to the models' defaults.
def new_session(
    session_id: str,
    task: str,
    stamp: str,
    root: str,
    config: Config,
    non_interactive: bool,
    policy: str | None = None,
) -> Session:
    if non_interactive and policy is None:
        policy = "non-interactive (the caller gave no reason)"
    return {
        "schema_version": 1,
        "id": session_id,
        "task": task,
        "created_at": stamp,
        "updated_at": stamp,
        "status": S.DISCOVERY,
        "project_root": root,
        "base_commit": gitinfo.head_commit(root),
        "workflow": WorkflowName.PLANNER,
        "step": 1,
        "reached": {},
        "next_command": None,
        "non_interactive": policy is not None,
        "policy": policy,
        "config": config,
        "qr": {},
        "rejects": 0,
        "reviews": [],
        "review_started_at": None,
        "approval": None,
        "reason": None,
        "result_reviews": [],
        "amendments": [],
        "words_shown": None,
    }


def new_plan(stamp: str) -> Plan:
    return {
        "schema_version": 2,
        "plan_id": new_plan_id(),
        "created_at": stamp,
        "frozen_at": None,
        "overview": {"title": "", "problem": "", "approach": ""},
        "planning_context": {
            "decision_log": [],
            "rejected_alternatives": [],
            "constraints": [],
            "known_risks": [],
            "choices": [],
        },
        "invisible_knowledge": {
            "architecture": {"diagram_ascii": "", "description": ""},
            "data_flow": {"diagram_ascii": "", "description": ""},
            "structure_rationale": "",
            "invariants": [],
            "tradeoffs": [],
        },
        "milestones": [],
        "milestone_dependencies": {"diagram_ascii": "", "waves": []},
    }


def new_context() -> Context:
    return {
        "schema_version": 1,
        "task_spec": {"goal": "", "scope": "", "out_of_scope": ""},
        "constraints": [],
        "entry_points": [],
        "rejected_alternatives": [],
        "current_understanding": [],
        "assumptions": [],
        "invisible_knowledge": [],
        "user_quotes": [],
        "gathered": {
            "base": None,
            "scanned_at": None,
            "documents": [],
            "changed_files": [],
            "change_types": [],
            "relevant_documents": {},
            "summary": "",
        },
        "questions": [],
    }


# What stays local (docs/reference.md, "Which files of .planner/ to commit"): the review record
# is plan.json, session.json, context.json, qr-*.json, execution.json and plan.md.
GITIGNORE = """\
# Written by planner when the first session started: these files are local.
# Commit plan.json, session.json, context.json, qr-*.json, execution.json and plan.md:
# `plan verify` needs nothing else (history/ and audit.jsonl stay on this machine).
ACTIVE
.lock
.worktree.lock
.journal
.journal.temps
*.tmp
staging/
.*.building/
audit.jsonl
guard.heard
history/
drafts.json
*/worktree/
*/worktree.git/
*/scratch/
"""
# Lines a later planner added to GITIGNORE, each with the comment that comes with it: a
# .gitignore planner wrote earlier (its first line says so) gets the ones it lacks; one the
# user rewrote (no such first line) is left alone.
ADDED_IGNORES = (("*/scratch/", "# the agent's scratch files while planning (STATE_DIR/scratch/)"),)


def add_missing_ignores(path: str) -> None:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if not text.startswith(GITIGNORE.split("\n", 1)[0]):
        return
    have = {line.strip() for line in text.splitlines()}
    missing = [  # a pattern removed under its kept comment stays removed
        f"{why}\n{line}\n" for line, why in ADDED_IGNORES if line not in have and why not in have
    ]
    if missing:
        write_atomic(
            path, (text + ("" if text.endswith("\n") else "\n") + "".join(missing)).encode()
        )


def make_active(root: str, session_id: str) -> None:
    write_atomic(os.path.join(root, ".planner", "ACTIVE"), (session_id + "\n").encode())
