"""A session's commits in git, read for the review companion: its base commit and the commits
`plan exec commit` made of its milestones, and git log, diff and show limited to them.

Every call goes through the one hardened runner (state/repo/git.py). A commit named by a caller
must be one of the session's (a full id or an unambiguous prefix of one), so no argument can
reach git as an option or name anything else in the repository; a path is passed after `--`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal, NotRequired, TypedDict

from state.errors import UsageError
from state.project import session_project
from state.repo import git
from state.repo.gitinfo import commit_id

if TYPE_CHECKING:
    from state.storage.store import DocumentStore

PREFIX_MIN = 7  # hex digits of an abbreviated commit id


class SessionCommit(TypedDict):
    commit: str
    kind: Literal["base", "milestone", "fix"]
    milestone: NotRequired[str]  # not for the base commit


class LoggedCommit(SessionCommit):
    author: str
    date: str
    subject: str
    files: list[str]


def commits(store: DocumentStore) -> list[SessionCommit]:
    """The base commit, then each milestone's commit and fix commits in plan order:
    {commit, kind (base|milestone|fix), milestone}; ids checked before they reach git."""
    session = store.read("session")
    execution = store.read_or_none("execution")
    found: list[SessionCommit] = []
    base = (execution["base_commit"] if execution else None) or session["base_commit"]
    if base:
        found.append({"commit": commit_id(base, store.path("execution")), "kind": "base"})
    for run in execution["milestones"] if execution else []:
        if run["commit"]:
            found.append(
                {
                    "commit": commit_id(run["commit"], store.path("execution")),
                    "kind": "milestone",
                    "milestone": run["id"],
                }
            )
        for fix in run["fix_commits"]:
            found.append(
                {
                    "commit": commit_id(fix, store.path("execution")),
                    "kind": "fix",
                    "milestone": run["id"],
                }
            )
    return found


def gone(store: DocumentStore) -> list[SessionCommit]:
    """The session's commits (its base, its milestones' and fix commits) that git no longer
    has: what `plan status` names and `plan rebase` carries the plan past."""
    found = commits(store)
    if not found:
        return []
    root = session_project(store.dir)
    lost = set(git.missing_commits(root, [c["commit"] for c in found]))
    return [c for c in found if c["commit"] in lost]


def gone_text(lost: list[SessionCommit]) -> str:
    """One line naming the commits that are gone and the fix."""
    named = ", ".join(
        f"{c['commit'][:12]} ({'base' if c['kind'] == 'base' else c.get('milestone', '')})"
        for c in lost
    )
    return (
        f"commits the session relies on are gone from git (history rewritten and pruned): "
        f"{named} (fix: plan rebase, which carries the plan onto HEAD)"
    )


def resolve(store: DocumentStore, name: str) -> str:
    """The session commit `name` names (a full id or a prefix of at least 7 hex digits);
    UsageError naming the ones there are otherwise."""
    known: list[str] = [c["commit"] for c in commits(store)]
    wanted = name.strip().lower()
    if len(wanted) >= PREFIX_MIN and all(ch in "0123456789abcdef" for ch in wanted):
        matches = sorted({c for c in known if c.startswith(wanted)})
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise UsageError(f"commit {name!r}: more than one of the session's commits start so")
    listed = ", ".join(c[:12] for c in known) or "none yet"
    raise UsageError(
        f"commit {name[:80]!r}: not one of this session's commits (its base and milestone "
        f"commits: {listed})"
    )


def checked_path(path: str) -> str:
    """A path inside the project, relative, as git takes it after `--`; UsageError otherwise."""
    clean = path.strip()
    parts = clean.replace("\\", "/").split("/")
    if not clean or os.path.isabs(clean) or ".." in parts or "\x00" in clean:
        raise UsageError(f"path {path[:80]!r}: give a path relative to the project root")
    if clean.startswith(":"):  # a git pathspec magic (":(top)", ":!x") is not a path
        raise UsageError(f"path {path[:80]!r}: pathspec magic is not accepted")
    return clean


def log(store: DocumentStore) -> list[LoggedCommit]:
    """Each session commit with its author, date, subject and the files it changed."""
    root = session_project(store.dir)
    rows: list[LoggedCommit] = []
    for c in commits(store):
        text = git.output(
            root,
            "show",
            "--no-patch",
            "--format=%H%x00%an%x00%aI%x00%s",
            "--end-of-options",
            c["commit"],
        )
        sha, author, date, subject = [*text.strip().split("\x00"), "", "", ""][:4]
        files = [] if c["kind"] == "base" else changed_files(root, sha)
        rows.append({**c, "author": author, "date": date, "subject": subject, "files": files})
    return rows


def changed_files(root: str, sha: str) -> list[str]:
    text = git.output(
        root, "show", "--format=", "--name-status", "--no-renames", "--end-of-options", sha
    )
    return [line.replace("\t", " ") for line in text.splitlines() if line.strip()]


PATCH = ("--stat", "--patch", "--no-color", "--end-of-options")  # git show's and diff's options


def show(store: DocumentStore, commit: str, path: str | None = None) -> str:
    """git show of one session commit (header, stat and patch), limited to `path` if given."""
    sha = resolve(store, commit)
    where = ["--", checked_path(path)] if path else []
    text = git.output(session_project(store.dir), "show", "--format=fuller", *PATCH, sha, *where)
    return text or f"commit {sha[:12]} changes nothing in {path}"


def diff(
    store: DocumentStore, from_commit: str | None, to_commit: str | None, path: str | None = None
) -> str:
    """git diff between two session commits (default: the base and the newest), limited to
    `path` if given."""
    known = commits(store)
    if not known:
        raise UsageError("the session has no commits yet (its base is recorded at step 1)")
    a = resolve(store, from_commit) if from_commit else known[0]["commit"]
    b = resolve(store, to_commit) if to_commit else known[-1]["commit"]
    where = ["--", checked_path(path)] if path else []
    text = git.output(session_project(store.dir), "diff", *PATCH, a, b, *where)
    return f"git diff {a[:12]} {b[:12]}\n{text}" if text else f"no changes: {a[:12]} {b[:12]}"
