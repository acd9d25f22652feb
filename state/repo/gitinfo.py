"""What git knows, read cheaply: HEAD from the .git files, and changed files via git itself.

Reading HEAD without a subprocess keeps `planner --step 1` fast; diffs need real git.
"""

from __future__ import annotations

import os

from state.errors import DamagedFile, PreconditionFailed


def git_dir(root: str) -> str | None:
    """The git dir of the repository at root (a linked worktree's own), or None."""
    dot_git = os.path.join(root, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    line = read_text(dot_git) or ""
    if not line.startswith("gitdir:"):
        return None
    return os.path.normpath(os.path.join(root, line[len("gitdir:") :].strip()))


def read_text(path: str) -> str | None:
    """A small text file's content, stripped; None when it cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return None


def is_commit_id(value: object) -> bool:
    """40 (sha1) or 64 (sha256) lowercase hex digits: a value that cannot be a git option."""
    return (
        isinstance(value, str)
        and len(value) in (40, 64)
        and all(c in "0123456789abcdef" for c in value)
    )


def commit_id(value: object, where: str) -> str:
    """`value` read from a state file, checked before it reaches git (values are data)."""
    if not is_commit_id(value):
        raise DamagedFile(
            f"{where}: {value!r} is not a commit id (40 hex digits); damaged, left as it is"
        )
    return str(value)


def head_commit(root: str) -> str | None:
    """The commit HEAD points at, or None outside git or before the first commit (or when the
    .git files hold something that is not a commit id)."""
    found = _head(root)
    return found if is_commit_id(found) else None


def _head(root: str) -> str | None:
    where = git_dir(root)
    head = read_text(os.path.join(where, "HEAD")) if where else None
    if not head or not where:
        return None
    if not head.startswith("ref:"):
        return head
    ref = head[4:].strip()
    common = read_text(os.path.join(where, "commondir"))
    dirs = [where] + ([os.path.normpath(os.path.join(where, common))] if common else [])
    for d in dirs:
        sha = read_text(os.path.join(d, ref))
        if sha:
            return sha
    for d in dirs:
        packed = read_text(os.path.join(d, "packed-refs")) or ""
        for line in packed.splitlines():
            sha, _, name = line.partition(" ")
            if name == ref:
                return sha
    return None


def run_git(root: str, *args: str) -> str:
    """git's stdout; raises PreconditionFailed with git's message when git fails."""
    from state.repo import git  # subprocess loads when git runs: HEAD is read without it

    return git.output(root, *args)


def changed_files(root: str, base: str, where: str = "base_commit") -> list[str]:
    """Files that differ between commit `base` and the working tree, untracked ones included.

    `base` comes from a state file (`where` names it): it must be a commit id, and it is
    passed after --end-of-options, so it can never be taken for an option.
    """
    base = commit_id(base, where)
    if head_commit(root) == base:  # nothing committed since: one call sees it all
        lines = run_git(root, "status", "--porcelain", "-uall", "--no-renames", "-z").split("\0")
        files = [line[3:] for line in lines if len(line) > 3]
    else:
        try:
            files = run_git(
                root, "diff", "--name-only", "--no-renames", "--end-of-options", base, "--"
            ).splitlines()
        except PreconditionFailed:
            if not resolves(root, base):
                raise PreconditionFailed(gone(base, f"the base commit ({where})")) from None
            raise
        files += run_git(root, "ls-files", "--others", "--exclude-standard").splitlines()
    return sorted({f for f in files if f and not f.startswith(".planner/")})


def resolves(root: str, sha: str) -> bool:
    """Whether commit `sha` (checked: a commit id) is still in the repository at root: a
    history rewritten and pruned (amend, rebase, `git gc --prune=now`) drops it."""
    from state.repo import git

    done = git.run(
        root, "cat-file", "-e", "--end-of-options", f"{commit_id(sha, 'commit')}^{{commit}}"
    )
    return done.returncode == 0


def contains(root: str, sha: str) -> bool:
    """Whether commit `sha` is HEAD or one of its ancestors."""
    from state.repo import git

    done = git.run(root, "merge-base", "--is-ancestor", "--end-of-options", sha, "HEAD")
    return done.returncode == 0


def gone(sha: str, what: str) -> str:
    """The message for a commit the session relies on that the repository no longer has."""
    return (
        f"{what} {sha[:12]} is no longer in the repository (history rewritten: amend, rebase or "
        "reset, then pruned) (fix: plan rebase, which carries the plan onto HEAD, then rerun)"
    )
