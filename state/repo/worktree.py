"""The session's scratch worktree: a detached checkout of the base commit
where planning edits real files; capture turns its edits into planned diffs, in plan order.
Its git dir is the session's own (`worktree.git`, objects borrowed from the project's store):
nothing is written to the project's .git, and it goes when the session closes.

Every git call is hardened (no fsmonitor, no hooks, no external diff or textconv) and names
its repository explicitly, so nothing planted inside the worktree can steer git.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import TypedDict

from state.errors import PreconditionFailed, UsageError
from state.project import session_project
from state.repo import gitinfo
from state.storage import journal
from state.storage.lock import locked
from state.vocab import CLOSED

TYPE_CHECKING = False
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Callable, Iterable
    from typing import Literal, Protocol

    from state.storage.documents import CodeChange, CodeIntent, Milestone, Plan, Session

    class Store(Protocol):
        """What ensure() reads of a session's store (state/storage/store.Store has it)."""

        @property
        def dir(self) -> str: ...
        def path(self, name: str) -> str: ...
        def read(self, name: Literal["plan"]) -> Plan: ...


CREATE_TIMEOUT_S = 600.0  # how long a second `plan worktree` waits for the first's checkout
NO_GIT = (
    "the project has no git commit, and the worktree is a checkout of the commit planning "
    "started from (fix: git init && git add -A && git commit -m 'initial', then start a new "
    "session with planner --step 1)"
)


def run(
    repo: str,
    *args: str,
    work_tree: str | None = None,
    cwd: str | None = None,
    stdin: bytes | None = None,
    die_with_parent: bool = False,
) -> subprocess.CompletedProcess[bytes]:
    """git run on repository `repo` (a git dir), never one git would discover by itself."""
    from state.repo import git as git_runner  # subprocess loads when git runs, not at start

    return git_runner.run(
        cwd, *args, git_dir=repo, work_tree=work_tree, stdin=stdin, die_with_parent=die_with_parent
    )


def git(
    repo: str,
    *args: str,
    work_tree: str | None = None,
    cwd: str | None = None,
    stdin: bytes | None = None,
    ok: tuple[int, ...] = (0,),
    die_with_parent: bool = False,
) -> bytes:
    """git's stdout; an exit code not in `ok` is PreconditionFailed with git's message."""
    done = run(
        repo, *args, work_tree=work_tree, cwd=cwd, stdin=stdin, die_with_parent=die_with_parent
    )
    if done.returncode not in ok:
        message = done.stderr.decode(errors="replace").strip() or "failed"
        raise PreconditionFailed(f"git {' '.join(args[:2])}: {message}")
    return done.stdout


def path_of(state_dir: str) -> str:
    return os.path.join(state_dir, "worktree")


def common_dir(project: str) -> str:
    """The project's git directory (shared by all its worktrees), found without running hooks."""
    here = os.path.join(project, ".git")
    if os.path.isfile(here):  # the project is itself a linked worktree
        with open(here, encoding="utf-8") as f:
            here = os.path.normpath(os.path.join(project, f.read().partition(":")[2].strip()))
        common = os.path.join(here, "commondir")
        if os.path.exists(common):
            with open(common, encoding="utf-8") as f:
                here = os.path.normpath(os.path.join(here, f.read().strip()))
    if not os.path.isdir(here):
        raise PreconditionFailed(f"{project}: not a git repository; {NO_GIT}")
    return here


def base_of(session: Session, where: str) -> str:
    base = session["base_commit"]
    if base is None:
        raise PreconditionFailed(f"{where}: no base commit; {NO_GIT}")

    return gitinfo.commit_id(base, where)


def check_present(project: str, sha: str, where: str, what: str = "the base commit") -> None:
    """PreconditionFailed when git no longer has commit `sha` (history rewritten and pruned): a
    worktree of it would have a HEAD that does not resolve, and nothing can be read from it."""
    from state.repo.git import missing_commits  # subprocess: loaded when git runs

    if missing_commits(project, [sha]):
        raise PreconditionFailed(
            f"{where}: {what} {sha[:12]} is gone from git (history rewritten and pruned, e.g. "
            "an amend or a rebase, then gc); nothing is read from it (fix: plan rebase, which "
            "carries the plan onto HEAD)"
        )


def private_dir(state_dir: str) -> str:
    """`<session>/worktree.git`: the worktree's own git dir, beside it and outside it (the
    sandbox keeps it read-only while the worktree is writable)."""
    return os.path.join(state_dir, "worktree.git")


def admin_dir(project: str, tree: str) -> str | None:
    """The worktree's own git dir: its private one in the session, or, for a session made
    before those, the one git registered under the project's .git/worktrees/ (matched by the
    path recorded there, never through the worktree's plantable .git file); None: neither."""
    private = private_dir(os.path.dirname(tree))
    if os.path.isdir(private) and not os.path.islink(private):
        return private
    return _registered(project, tree)


def _registered(project: str, tree: str) -> str | None:
    """A worktree made by `git worktree add` (sessions made before the private git dir)."""
    home = os.path.join(common_dir(project), "worktrees")
    want = os.path.realpath(os.path.join(tree, ".git"))
    for name in sorted(os.listdir(home)) if os.path.isdir(home) else []:
        try:
            with open(os.path.join(home, name, "gitdir"), encoding="utf-8") as f:
                if os.path.realpath(f.read().strip()) == want:
                    return os.path.join(home, name)
        except OSError:
            continue
    return None


def create(project: str, state_dir: str, base: str, round_: int = 0) -> tuple[str, bool]:
    """(path, created): the worktree of `base` in the session, made once, with nothing written
    to the project's .git. A checkout that was not finished (`plan worktree` or git killed
    midway) is discarded and made again, never handed out: see ready(). `round_`: the open
    amendment round it is made for (0: planning); a worktree made for another round is made
    again (an amendment's starts from HEAD: see start())."""
    tree, mine = path_of(state_dir), private_dir(state_dir)
    repo = common_dir(project)
    admin = admin_dir(project, tree)
    if admin and os.path.isdir(tree) and _finished(admin) and made_for(admin) == round_:
        if admin == mine:
            _no_links(admin, tree)  # a worktree made before links were written as files
        return tree, False
    # Made again: an earlier round's (its edits were captured, or not planned), one whose
    # pending diffs were not all written, or one not finished (killed midway)
    if admin and admin != mine:  # an older session's (git worktree add)
        _unregister(admin)
        _discard(tree, None)
    elif admin or _scrap(tree):
        _discard(tree, admin)
    elif os.path.lexists(tree):
        raise PreconditionFailed(
            f"{tree}: exists but is not this session's git worktree (move it away and rerun)"
        )
    if os.path.lexists(mine):  # not a directory: nothing git made
        _discard(None, mine)
    # The private git dir first, the checkout second, by a git that dies with us: the index
    # appears (renamed into place) only when every file is out, which is what ready() checks.
    try:
        _ignore(project, repo, state_dir)
        private = _make_private(repo, state_dir, base)
        os.makedirs(tree, exist_ok=True)

        journal.point("write", os.path.join(tree, ".git"))
        with open(os.path.join(tree, ".git"), "w", encoding="utf-8") as f:
            # relative, so git run in the worktree by the agent finds the private dir (read-only
            # in the sandbox); the product itself always names the git dir and the work tree
            f.write(f"gitdir: ../{os.path.basename(private)}\n")
    except OSError as e:
        raise PreconditionFailed(
            f"{state_dir}: the worktree cannot be made ({e.strerror}); nothing is handed out"
        ) from None
    git(private, "reset", "--hard", "-q", work_tree=tree, cwd=tree, die_with_parent=True)
    return tree, True


ROUND_FILE = "planner-round"  # in the worktree's git dir: the amendment round it was made for


def made_for(admin: str) -> int:
    """The amendment round the worktree with git dir `admin` was made for (0: planning)."""
    text = gitinfo.read_text(os.path.join(admin, ROUND_FILE))
    if text is None:
        return 0
    return int(text) if text.isdigit() else -1  # garbled: never matches, so it is made again


def mark(state_dir: str, round_: int) -> None:
    """The worktree is complete for amendment round `round_` (HEAD and the pending diffs are
    out): written last, so a worktree killed before it is made again."""
    path = os.path.join(private_dir(state_dir), ROUND_FILE)
    journal.point("write", path)
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"{round_}\n")


def start_of(project: str, tree: str) -> str | None:
    """The commit the worktree was made from (its git dir's HEAD), checked as a commit id."""
    admin = admin_dir(project, tree)
    if admin is None:
        return None
    head = gitinfo.read_text(os.path.join(admin, "HEAD"))
    return head if gitinfo.is_commit_id(head) else None


def start(project: str, round_: int, base: str) -> str:
    """The commit the session's worktree is made from. Planning (round 0): the base commit.
    An amendment round: HEAD, which holds the committed milestones and the execution's fix
    commits, so what is tried there is the project as it now is (PRODUCT.md §17)."""
    return (gitinfo.head_commit(project) or base) if round_ else base


def pending_changes(plan: Plan, committed: set[str]) -> list[tuple[Milestone, CodeChange]]:
    """The planned changes HEAD does not hold yet in an amendment: those of the milestones not
    committed, in plan order (the committed ones are in HEAD)."""
    return [(m, c) for m, c in ordered_changes(plan) if m["id"] not in committed]


def apply_pending(tree: str, plan: Plan, committed: set[str]) -> list[str]:
    """An amendment's new worktree: HEAD plus the planned diffs of the milestones not committed
    yet, applied to its files in plan order; the changes that no longer apply (HEAD moved
    under them) are named, and their files left as HEAD has them."""
    from state.repo import unidiff  # compiles its patterns: not loaded with every session

    texts: dict[str, str | None] = {}
    failed: list[str] = []
    for _, change in pending_changes(plan, committed):
        path = change["file"]
        if path not in texts:
            texts[path] = read_tree_file(tree, path)
        try:
            text = texts[path]
            for patch in unidiff.parse(change["diff"]):
                text = unidiff.apply(patch, text)
            texts[path] = text
        except unidiff.DiffError:
            failed.append(f"{change['id']} ({path})")
    for path, text in texts.items():
        full = os.path.join(tree, path)
        if text is None:
            if os.path.lexists(full):
                os.unlink(full)
            continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(text.encode("utf-8", "surrogateescape"))
    return failed


class Made(TypedDict):
    """What ensure() did: the worktree's path, the commit it started from, the amendment round
    it is for (0: planning), whether it was made now, the planned changes that no longer apply
    on HEAD, and the gone commit an earlier worktree started from (made again)."""

    path: str
    start: str
    round: int
    created: bool
    failed: list[str]
    gone: str | None


def ensure(store: Store, session: Session, round_: int, committed: set[str]) -> Made:
    """The session's worktree, made if it is not there (`plan worktree`, planner steps 6 and 9):
    of the base commit while planning (round 0); of HEAD plus the planned diffs not committed
    yet in amendment round `round_` (the plan's, less the `committed` milestones'; both from
    state/rules/amendments.worktree_round). A commit it would
    start from that git no longer has is exit 3 naming it (planning) or, for an amendment's
    earlier HEAD, a worktree made again: never one whose HEAD does not resolve."""
    from state.repo.git import missing_commits  # subprocess: loaded when git runs

    project, state_dir = session_project(store.dir), store.dir
    where = f"{store.path('session')}:base_commit"
    base = base_of(session, where)
    check_present(project, base, where)
    begin = start(project, round_, base)
    if begin != base:
        check_present(project, begin, f"{project}: HEAD", "HEAD")
    made: Made = {
        "path": path_of(state_dir),
        "start": begin,
        "round": round_,
        "created": False,
        "failed": [],
        "gone": None,
    }
    # its own lock: a checkout may take longer than the session lock waits for
    with locked(os.path.join(state_dir, ".worktree.lock"), timeout=CREATE_TIMEOUT_S):
        was = start_of(project, made["path"])
        if round_ and was and was != begin and missing_commits(project, [was]):
            remove(project, state_dir)
            made["gone"] = was
        made["path"], made["created"] = create(project, state_dir, begin, round_)
        if made["created"] and round_:
            made["failed"] = apply_pending(made["path"], store.read("plan"), committed)
            mark(state_dir, round_)
    return made


def _make_private(repo: str, state_dir: str, base: str) -> str:
    """A git dir whose HEAD is `base` (detached) and whose objects are borrowed read-only from
    the project's object store (objects/info/alternates): nothing of the project's is copied
    or written. A shallow project's boundary is copied so its commits read the same."""
    import shutil  # a store's every recovery loads this module: shutil on use

    private = private_dir(state_dir)
    journal.point("write", private)
    os.makedirs(os.path.join(private, "objects", "info"))
    os.makedirs(os.path.join(private, "refs", "heads"))
    sha256 = len(base) == 64
    files = {
        "HEAD": f"{base}\n",
        "config": (
            "[core]\n"
            f"\trepositoryformatversion = {1 if sha256 else 0}\n"
            "\tbare = false\n"
            "\tlogallrefupdates = false\n"
            # a link of the base commit is checked out as a file holding its target: the
            # worktree holds no link a file tool could be steered through (docs/design.md,
            # "The guard"); git diff and status read such files as the links they stand for
            "\tsymlinks = false\n" + ("[extensions]\n\tobjectformat = sha256\n" if sha256 else "")
        ),
        os.path.join("objects", "info", "alternates"): os.path.join(repo, "objects") + "\n",
    }
    for name, text in files.items():
        with open(os.path.join(private, name), "w", encoding="utf-8") as f:
            f.write(text)
    if os.path.isfile(os.path.join(repo, "shallow")):
        shutil.copyfile(os.path.join(repo, "shallow"), os.path.join(private, "shallow"))
    return private


def _no_links(private: str, tree: str) -> None:
    """An older worktree whose git dir checked links out as links: from now on git writes them
    as files (core.symlinks false), and every link in the tree becomes the file git would
    have written (its target as text). Once per worktree: the setting says it is done."""
    config = os.path.join(private, "config")
    with open(config, encoding="utf-8") as f:
        if "symlinks = false" in f.read():
            return
    for folder, dirs, files in os.walk(tree):
        links = [n for n in (*dirs, *files) if os.path.islink(os.path.join(folder, n))]
        dirs[:] = [d for d in dirs if d not in links and not (folder == tree and d == ".git")]
        for name in links:
            path = os.path.join(folder, name)
            journal.point("write", path)
            with open(f"{path}.planner-link", "wb") as f:
                f.write(os.fsencode(os.readlink(path)))
            journal.replace(f"{path}.planner-link", path)  # the link goes in one rename
    git(private, "config", "core.symlinks", "false", cwd=tree)


def ready(project: str, tree: str) -> bool:
    """Whether the session's worktree exists and its checkout finished: create() makes its git
    dir with no index, and the checkout renames the index into place once every file is out (a
    `git worktree add` of an older session killed midway also leaves its `locked` mark), so a
    file missing from a ready worktree is a deletion someone made."""
    admin = admin_dir(project, tree)
    return admin is not None and os.path.isdir(tree) and _finished(admin)


def _finished(admin: str) -> bool:
    return not os.path.lexists(os.path.join(admin, "locked")) and os.path.exists(
        os.path.join(admin, "index")
    )


def _scrap(tree: str) -> bool:
    """What a `plan worktree` killed before its git dir existed leaves: an empty directory (or
    one holding only its .git file)."""
    try:
        return os.path.isdir(tree) and set(os.listdir(tree)) <= {".git"}
    except OSError:
        return False


def _discard(tree: str | None, admin: str | None) -> None:
    """Remove an unfinished or finished worktree and its git dir: the index first (after that
    it is not ready, so a kill midway leaves something the next call removes), then the git
    dir, then the files (git's prune would keep an older session's locked registration)."""
    import shutil  # a store's every recovery loads this module: shutil on use

    for path in (admin and os.path.join(admin, "index"), admin, tree):
        if path and os.path.lexists(path):
            journal.point("unlink", path)
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
            except OSError as e:
                raise PreconditionFailed(
                    f"{path}: the worktree cannot be removed ({e.strerror}); "
                    "remove it by hand, then rerun"
                ) from None


def _ignore(project: str, repo: str, state_dir: str) -> None:
    """The project's git status stays clean, with no write to its .git: when nothing ignores
    the worktree or its git dir, the session gets a .gitignore that also ignores itself."""
    names = ("worktree/", "worktree.git/")
    relative = os.path.relpath(state_dir, project)
    if relative.startswith(os.pardir):  # the session is not in the project
        return
    paths = [os.path.join(relative, n).replace(os.sep, "/") for n in names]
    done = run(repo, "check-ignore", "--", *paths, work_tree=project, cwd=project)
    if len(done.stdout.splitlines()) == len(paths):
        return

    path = os.path.join(state_dir, ".gitignore")
    journal.point("write", path)
    with open(path, "w", encoding="utf-8") as f:
        f.write(
            "# planner: the scratch worktree is local\n/.gitignore\n/worktree/\n/worktree.git/\n"
        )


# ---------------------------------------------------------------- removal


def remove(project: str | None, state_dir: str) -> bool:
    """Remove the session's worktree and its git dir (a closed session's); whether there was
    one. An older session's registration under .git/worktrees/ goes too, when .git can be
    written (else git's prune drops it later: its worktree is gone)."""

    tree = path_of(state_dir)
    private = private_dir(state_dir)
    if not (os.path.lexists(tree) or os.path.lexists(private)):
        return False
    registered = None
    with contextlib.suppress(OSError, PreconditionFailed):
        registered = _registered(project, tree) if project else None
    if registered:
        _unregister(registered)
    _discard(tree, private if os.path.lexists(private) else None)
    return True


def _unregister(admin: str) -> None:
    """An older session's registration under .git/worktrees/, removed when .git can be written
    (read-only, it stays, and git's prune drops it once its worktree is gone)."""

    with contextlib.suppress(PreconditionFailed):
        _discard(None, admin)
    with contextlib.suppress(OSError):  # as git does, an empty worktrees/ goes too
        os.rmdir(os.path.dirname(admin))


def settle(state_dir: str, wait: float = CREATE_TIMEOUT_S) -> bool:
    """A closed session keeps no worktree: remove it (the closing command), or what a command
    killed between closing the session and removing its worktree left (the next one's
    recover, which waits for no checkout: `wait` 0). Cheap when there is none: two lstat."""
    if not (os.path.lexists(path_of(state_dir)) or os.path.lexists(private_dir(state_dir))):
        return False

    try:
        with open(os.path.join(state_dir, "session.json"), encoding="utf-8") as f:
            status = json.load(f).get("status")
    except (OSError, ValueError, AttributeError):
        return False  # a damaged session.json is reported by the command that reads it
    if status not in CLOSED:
        return False
    try:
        project: str | None = session_project(state_dir)
    except PreconditionFailed:
        project = None
    with locked(os.path.join(state_dir, ".worktree.lock"), timeout=wait):
        return remove(project, state_dir)


# ---------------------------------------------------------------- reading files


def base_reader(project: str, base: str) -> Callable[[Iterable[str]], dict[str, str | None]]:
    """A function giving files' text at commit `base` (None: absent), in one git call."""
    repo = common_dir(project)

    def read(paths: Iterable[str]) -> dict[str, str | None]:
        wanted = list(dict.fromkeys(paths))
        if not wanted:
            return {}
        # cat-file --batch reads one name a line: a name holding a newline goes by its blob id
        blobs = _blob_ids(repo, project, base, [p for p in wanted if "\n" in p])
        names = [blobs.get(p, "0" * 40) if "\n" in p else f"{base}:{p}" for p in wanted]
        query = "".join(f"{name}\n" for name in names).encode()
        raw = git(repo, "cat-file", "--batch", stdin=query, cwd=project)
        found: dict[str, str | None] = {}
        for path in wanted:
            header, _, raw = raw.partition(b"\n")
            parts = header.split()
            if len(parts) == 3 and parts[1] == b"blob":
                size = int(parts[2])
                found[path] = raw[:size].decode("utf-8", "surrogateescape")
                raw = raw[size + 1 :]
            else:
                found[path] = None
        return found

    return read


def _blob_ids(repo: str, project: str, base: str, paths: list[str]) -> dict[str, str]:
    """The blob ids of `paths` at `base` (missing ones left out), NUL-separated (ls-tree -z)."""
    if not paths:
        return {}
    out = git(repo, "ls-tree", "-z", "--full-tree", base, "--", *paths, cwd=project)
    found = {}
    for entry in out.decode("utf-8", "surrogateescape").split("\0"):
        meta, _, name = entry.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob":
            found[name] = parts[2]
    return found


def read_tree_file(tree: str, path: str) -> str | None:
    """A file of the worktree as text (None: absent); refuses paths that leave it."""
    from state.repo import unidiff  # compiles its patterns: not loaded with every session

    if unidiff.unsafe(path, tree):
        raise UsageError(f"{path}: not a path inside the worktree")
    full = os.path.join(tree, path)
    if os.path.islink(full) or (os.path.lexists(full) and not os.path.isfile(full)):
        raise PreconditionFailed(f"{full}: not a regular file (a link or a directory)")
    if not os.path.lexists(full):
        return None
    with open(full, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise PreconditionFailed(f"{full}: not UTF-8 text; a plan diff holds text") from None


def make_diff(repo: str, path: str, old: str | None, new: str | None) -> str:
    """The unified diff from `old` to `new` for `path`, as git diff prints it ("" if equal)."""
    import tempfile  # a store's every recovery loads this module: tempfile on use

    if old == new:
        return ""

    with tempfile.TemporaryDirectory(prefix="planner-diff-") as tmp:
        sides = []
        for side, text in (("a", old), ("b", new)):
            if text is None:
                sides.append("/dev/null")
                continue
            full = os.path.join(tmp, side, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(text.encode("utf-8", "surrogateescape"))
            sides.append(f"{side}/{path}")
        out = git(
            repo,
            "diff",
            "--no-index",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
            "--no-prefix",
            "--",
            *sides,
            cwd=tmp,
            ok=(0, 1),
        )
    lines = out.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    # Against /dev/null git names one side twice ("diff --git b/x b/x"); say both, as git
    # diff in a repository does.
    for twice in (f"diff --git b/{path} b/{path}\n", f"diff --git a/{path} a/{path}\n"):
        if lines and lines[0] == twice:
            lines[0] = f"diff --git a/{path} b/{path}\n"
    return "".join(line for line in lines if not line.startswith("index "))


# ---------------------------------------------------------------- plan order


def ordered_changes(plan: Plan) -> list[tuple[Milestone, CodeChange]]:
    """(milestone, change) in the order they apply: wave, milestone, intent, change id."""
    wave_of = {
        mid: w["wave"] for w in plan["milestone_dependencies"]["waves"] for mid in w["milestones"]
    }
    pairs = [(m, c) for m in plan["milestones"] for c in m["code_changes"]]
    return sorted(
        pairs,
        key=lambda p: (
            wave_of.get(p[0]["id"], 0),
            _n(p[0]["id"]),
            _n(p[1]["intent_ref"]),
            _n(p[1]["id"]),
        ),
    )


def _n(item_id: str) -> int:
    tail = item_id.rpartition("-")[2]
    return int(tail) if tail.isdigit() else 0


def intent_order(plan: Plan) -> list[tuple[Milestone, CodeIntent]]:
    """(milestone, intent) in the order their changes apply."""
    wave_of = {
        mid: w["wave"] for w in plan["milestone_dependencies"]["waves"] for mid in w["milestones"]
    }
    pairs = [(m, i) for m in plan["milestones"] for i in m["code_intents"]]
    return sorted(pairs, key=lambda p: (wave_of.get(p[0]["id"], 0), _n(p[0]["id"]), _n(p[1]["id"])))
