"""The one way the product runs git: on the repository the caller names, with nothing inherited
that could point git elsewhere or make it run a program (docs/design.md, "Git", and
"Agent-written data is never code"). Values that come from state files are passed after
`--end-of-options` by the callers.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time

from state.errors import PreconditionFailed
from state.repo import contention
from state.storage import journal

HARDENED = (
    "--no-pager",
    *("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.pager=cat"),
    *("-c", "safe.bareRepository=explicit", "-c", "diff.external="),
    *("-c", "submodule.recurse=false", "-c", "diff.ignoreSubmodules=all"),
    *("-c", "status.submoduleSummary=false"),
)
PATCHES = ("diff", "show", "log", "format-patch")  # commands that can print patches
NO_DRIVERS = ("--no-ext-diff", "--no-textconv")
IDENTITY = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")


def environment(root: str | None) -> dict[str, str]:
    """os.environ without GIT_* (identity kept), git discovery stopped at `root`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in IDENTITY}
    if root is None:
        env["GIT_CEILING_DIRECTORIES"] = "/"
    elif os.path.exists(os.path.join(root, ".git")):
        env["GIT_CEILING_DIRECTORIES"] = os.path.dirname(os.path.abspath(root))
    return env


def run(
    where: str | None,
    *args: str,
    git_dir: str | None = None,
    work_tree: str | None = None,
    stdin: bytes | None = None,
    die_with_parent: bool = False,
) -> subprocess.CompletedProcess[bytes]:
    """git `args` in `where` (the project root, or with `git_dir` an explicit repository);
    with `die_with_parent`, git is killed when planner is (plan worktree's checkout).

    A git that could not take a lock another git holds, or whose commit lost the race for
    HEAD to another git's (it changed nothing), runs again until it can, for a bound; then
    PreconditionFailed names the lock and its holder (state/repo/contention.py)."""
    argv = ["git", *HARDENED, *([f"--git-dir={git_dir}"] if git_dir else [])]
    argv += [f"--work-tree={work_tree}"] if work_tree else []
    argv += [args[0], *NO_DRIVERS, *args[1:]] if args and args[0] in PATCHES else args
    started = None
    while True:
        journal.point("git", " ".join(args[:2]))  # a crash point (tests/crashpoints.py)
        try:
            done = subprocess.run(
                argv,
                cwd=where or git_dir,
                input=stdin,
                capture_output=True,
                env=environment(None if git_dir else where),
                preexec_fn=_die_with_parent if die_with_parent else None,
            )
        except FileNotFoundError:
            raise PreconditionFailed("git is not installed (planner needs it)") from None
        lock = contention.lock_of(done.stderr) if done.returncode else None
        ref = contention.raced(done.stderr) if done.returncode and not lock else None
        if lock is None and ref is None:
            return done
        started = time.monotonic() if started is None else started
        waited = time.monotonic() - started
        if waited >= contention.LOCK_WAIT_S:
            why = contention.held(lock, waited) if lock else contention.moved(str(ref), waited)
            raise PreconditionFailed(f"git {' '.join(args[:2])}: {why}")
        time.sleep(contention.LOCK_POLL_S)


def _die_with_parent() -> None:
    """In the child, Linux only: SIGKILL it when planner dies, so that a killed `plan worktree`
    leaves no git writing the checkout after it (which the next one would then race)."""
    import ctypes  # only in the child of `plan worktree`'s checkout: ctypes is slow to load
    import signal

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def output(where: str | None, *args: str) -> str:
    """git's stdout as text; an exit code other than 0 is PreconditionFailed with git's words."""
    done = run(where, *args)
    if done.returncode:
        message = done.stderr.decode(errors="replace").strip() or "failed"
        raise PreconditionFailed(f"git {' '.join(args[:2])}: {message}")
    return done.stdout.decode(errors="replace")


def missing_commits(root: str, shas: list[str]) -> list[str]:
    """The commits of `shas` the repository at `root` does not have (history rewritten, then
    pruned: an amend or a rebase, then `git gc --prune=now`), in one git call."""
    wanted = list(dict.fromkeys(shas))  # commit ids, checked by the caller (values are data)
    if not wanted:
        return []
    query = "".join(f"{sha}^{{commit}}\n" for sha in wanted).encode()
    done = run(root, "cat-file", "--batch-check=%(objectname)", stdin=query)
    answers = done.stdout.decode(errors="replace").splitlines()
    if done.returncode or len(answers) != len(wanted):
        return wanted  # git could not read the store at all: none can be relied on
    return [sha for sha, line in zip(wanted, answers, strict=True) if line.endswith(" missing")]
