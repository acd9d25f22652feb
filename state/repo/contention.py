"""The person's git, at the moment the product acts (docs/design.md, "The world moves"):
another git holding a lock (or moving HEAD under a commit) is waited out for a bound, then
named with its holder; a merge, rebase, cherry-pick, revert or bisect left half done is named
with the command that ends it.

Read from the files git keeps, without a subprocess: the git dir's marker files, and /proc
for whoever holds a lock.
"""

from __future__ import annotations

import contextlib
import os
import re

LOCK_WAIT_S = 10.0  # how long a git command waits for another git's lock before it gives up
LOCK_POLL_S = 0.05
_LOCKED = re.compile(r"Unable to create '([^']+\.lock)': File exists")
_RACED = re.compile(r"cannot lock ref '([^']+)': is at [0-9a-f]+ but expected [0-9a-f]+")


def lock_of(stderr: bytes) -> str | None:
    """The lock file git could not take (its words: "Unable to create '….lock': File exists"),
    or None when git failed for another reason."""
    found = _LOCKED.search(stderr.decode(errors="replace"))
    return found.group(1) if found else None


def raced(stderr: bytes) -> str | None:
    """The ref another git moved while this one committed ("cannot lock ref 'HEAD': is at …
    but expected …": this one's commit was made on the old HEAD and not recorded), or None."""
    found = _RACED.search(stderr.decode(errors="replace"))
    return found.group(1) if found else None


def holders(lock: str) -> list[str]:
    """The processes that hold `lock` open ("pid N (command)"), else the git processes whose
    working directory is in the repository holding it: whoever can be asked to finish."""
    target = os.path.realpath(lock)
    repo = target.split("/.git/")[0] if "/.git/" in target else os.path.dirname(target)
    open_it, in_repo = [], []
    with contextlib.suppress(OSError):
        pids = [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]
        for pid in pids:
            with contextlib.suppress(OSError):
                fds = os.listdir(f"/proc/{pid}/fd")
                if any(_link(f"/proc/{pid}/fd/{fd}") == target for fd in fds):
                    open_it.append(f"pid {pid} ({_command(pid)})")
                    continue
            command = _command(pid)
            cwd = _link(f"/proc/{pid}/cwd") or ""
            if command.split(" ")[0].rsplit("/", 1)[-1] == "git" and cwd.startswith(repo):
                in_repo.append(f"pid {pid} ({command})")
    return open_it or in_repo


def _link(path: str) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def _command(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            words = f.read().split(b"\0")
    except OSError:
        return "?"
    return " ".join(w.decode(errors="replace") for w in words if w)[:80] or "?"


def moved(ref: str, waited: float) -> str:
    """Why the command stops after another git kept moving `ref` under it."""
    return (
        f"{ref}: another git process kept moving it while this one committed; retried for "
        f"{waited:.0f} s (fix: rerun once the other git is done); nothing was changed"
    )


def held(lock: str, waited: float) -> str:
    """Why the command stops: the lock, who holds it, and what to do; never "remove the file"
    while a process holds it."""
    who = holders(lock)
    if who:
        return (
            f"{lock}: another git process holds this lock: {', '.join(who)}; waited "
            f"{waited:.0f} s for it (fix: let it finish, or end it, then rerun); "
            "nothing was changed"
        )
    return (
        f"{lock}: another git process holds this lock (no running process has it open: it may "
        f"be left by a killed git); waited {waited:.0f} s for it (fix: if no git runs in this "
        f"repository (check: ps -C git), remove it: rm -- '{lock}', then rerun); "
        "nothing was changed"
    )


# what is half done: (marker in the git dir, name, the commands that finish or abort it)
UNDERWAY = (
    ("rebase-merge", "a rebase", "git rebase --continue or git rebase --abort"),
    ("rebase-apply/applying", "a git am", "git am --continue or git am --abort"),
    ("rebase-apply", "a rebase", "git rebase --continue or git rebase --abort"),
    ("MERGE_HEAD", "a merge", "git merge --continue or git merge --abort"),
    ("CHERRY_PICK_HEAD", "a cherry-pick", "git cherry-pick --continue or git cherry-pick --abort"),
    ("REVERT_HEAD", "a revert", "git revert --continue or git revert --abort"),
    ("BISECT_LOG", "a bisect", "git bisect reset"),
)


def underway(git_dir: str) -> tuple[str, str, str] | None:
    """(marker path, what, fix) of a merge, rebase, am, cherry-pick, revert or bisect the
    repository whose (worktree's own) git dir is `git_dir` is in the middle of; or None."""
    for marker, what, fix in UNDERWAY:
        path = os.path.join(git_dir, marker)
        if os.path.lexists(path):
            return path, what, fix
    return None
