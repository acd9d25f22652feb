"""The session's scratch worktree (PRODUCT.md §11): a detached git worktree of the base commit
where planning edits real files; capture turns its edits into planned diffs, in plan order.

Every git call is hardened (no fsmonitor, no hooks, no external diff or textconv) and names
its repository explicitly, so nothing planted inside the worktree can steer git.
"""

from __future__ import annotations

import os
import subprocess
import tempfile

from state import git as git_runner
from state import gitinfo, unidiff
from state.errors import PreconditionFailed, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

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


def base_of(session: dict[str, Any], where: str) -> str:
    base = session.get("base_commit")
    if base is None:
        raise PreconditionFailed(f"{where}: no base commit; {NO_GIT}")
    return gitinfo.commit_id(base, where)


def admin_dir(project: str, tree: str) -> str | None:
    """The worktree's own git dir under .git/worktrees/, matched by the path git recorded there
    (read from the project's .git, never from the worktree's planted-able .git file)."""
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


def create(project: str, state_dir: str, base: str) -> tuple[str, bool]:
    """(path, created): the worktree of `base` in the session, made once. A checkout that was
    not finished (`plan worktree` or git killed midway) is discarded and made again, never
    handed out: see ready()."""
    tree = path_of(state_dir)
    repo = common_dir(project)
    admin = admin_dir(project, tree)
    if admin and os.path.isdir(tree) and _finished(admin):
        return tree, False
    if admin or _scrap(tree):
        _discard(tree, admin)
    elif os.path.lexists(tree):
        raise PreconditionFailed(
            f"{tree}: exists but is not this session's git worktree (move it away and rerun)"
        )
    git(repo, "worktree", "prune", cwd=project)
    # Registered first, checked out second, by a git that dies with us: the index appears
    # (renamed into place) only when every file is out, which is what ready() checks.
    git(repo, "worktree", "add", "--no-checkout", "--detach", "--", tree, base, cwd=project)
    admin = admin_dir(project, tree)
    if admin is None:
        raise PreconditionFailed(f"{tree}: git did not register the worktree; rerun plan worktree")
    git(admin, "reset", "--hard", "-q", work_tree=tree, cwd=tree, die_with_parent=True)
    _ignore(project, repo, tree)
    return tree, True


def ready(project: str, tree: str) -> bool:
    """Whether the session's worktree exists and its checkout finished: create() registers it
    with no index, and the checkout renames the index into place once every file is out (a
    `git worktree add` killed midway also leaves its `locked` mark), so a file missing from a
    ready worktree is a deletion someone made."""
    admin = admin_dir(project, tree)
    return admin is not None and os.path.isdir(tree) and _finished(admin)


def _finished(admin: str) -> bool:
    return not os.path.lexists(os.path.join(admin, "locked")) and os.path.exists(
        os.path.join(admin, "index")
    )


def _scrap(tree: str) -> bool:
    """What a `git worktree add` killed before registering leaves: an empty directory (or one
    holding only its .git file)."""
    try:
        return os.path.isdir(tree) and set(os.listdir(tree)) <= {".git"}
    except OSError:
        return False


def _discard(tree: str, admin: str | None) -> None:
    """Remove an unfinished worktree and its registration (git's prune keeps a locked one)."""
    import shutil

    from state import journal

    for path in (tree, admin):
        if path and os.path.lexists(path):
            journal.point("unlink", path)
            try:
                shutil.rmtree(path)
            except OSError as e:
                raise PreconditionFailed(
                    f"{path}: an unfinished worktree cannot be removed ({e.strerror}); "
                    "remove it by hand, then rerun plan worktree"
                ) from None


def _ignore(project: str, repo: str, tree: str) -> None:
    """The project's git status stays clean: the worktree is excluded if nothing ignores it."""
    relative = os.path.relpath(tree, project)
    check = ("check-ignore", "-q", "--", relative + "/")
    if run(repo, *check, work_tree=project, cwd=project).returncode == 0:
        return
    os.makedirs(os.path.join(repo, "info"), exist_ok=True)
    from state import journal

    journal.point("write", os.path.join(repo, "info", "exclude"))
    with open(os.path.join(repo, "info", "exclude"), "a", encoding="utf-8") as f:
        f.write(f"/{relative.replace(os.sep, '/')}/\n")


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


def ordered_changes(plan: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
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


def intent_order(plan: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(milestone, intent) in the order their changes apply."""
    wave_of = {
        mid: w["wave"] for w in plan["milestone_dependencies"]["waves"] for mid in w["milestones"]
    }
    pairs = [(m, i) for m in plan["milestones"] for i in m["code_intents"]]
    return sorted(pairs, key=lambda p: (wave_of.get(p[0]["id"], 0), _n(p[0]["id"]), _n(p[1]["id"])))
