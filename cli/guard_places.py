"""Where a command runs, for the guard's rules that depend on it: which repository git would
find from every directory a `cd` in the command can reach, and which written paths are temp.

Git discovers its repository from the directory it runs in, and a repository's config runs
programs (`core.fsmonitor`): a directory planted in the worktree that holds `HEAD` and `config`
is a bare repository to git. So git is read-only only where it finds the project's repository
or the session's worktree. Resolving `cd` exactly would need the shell; instead every `cd`
target is resolved against every directory reached so far, in any order (over-approximating).
"""

from __future__ import annotations

import os

MAX_PLACES = 64
TEMP_ROOTS = ("/tmp", "/var/tmp", "/dev/shm")


class Where:
    """The hook's cwd, the project and the worktree; the directories the command may reach;
    `sandboxed()` says whether a sandbox will run it (asked only when it matters)."""

    def __init__(self, cwd: str, project: str, worktree: str, env, sandboxed=None) -> None:
        self.env = env
        self.dirs = {os.path.realpath(cwd)}
        self.lost = ""  # why the guard no longer knows where commands run ("" while it does)
        self.venv = ""  # a virtualenv under temp that the command activates
        self.scratch = ""  # the session's scratch dir (in the project, yet writable like temp)
        self.repositories = {repository_of(project), repository_of(worktree)} - {None}
        self.project = (repository_of(project) or os.path.realpath(project)) + os.sep
        self._sandboxed = sandboxed
        temps = [*TEMP_ROOTS, env.get("TMPDIR") or ""]
        self.temps = tuple(os.path.normpath(t) + os.sep for t in temps if t.startswith("/"))

    def sandboxed(self) -> bool:
        if callable(self._sandboxed):
            self._sandboxed = bool(self._sandboxed())
        return bool(self._sandboxed)

    def change_dir(self, target: str | None, known: bool = True) -> None:
        """`cd target`: add where it leads from every directory reached so far."""
        if not known or target is None or target == "-":
            self.lost = "changes to a directory known only at run time"
            return
        if target == "~" or target.startswith("~/"):
            home = self.env.get("HOME") or ""
            if not home.startswith("/"):
                self.lost = "changes to a home directory the guard cannot resolve"
                return
            target = home + target[1:]
        if not target.startswith("/") and self.env.get("CDPATH"):
            self.lost = "changes directory through CDPATH"
            return
        reached = set()
        for here in self.dirs:
            joined = os.path.join(here, target)
            # bash's cd resolves `..` by the text (logically); the kernel, physically: both
            reached.add(os.path.realpath(os.path.normpath(joined)))
            reached.add(os.path.realpath(joined))
        self.dirs |= reached
        if len(self.dirs) > MAX_PLACES:
            self.lost = "changes directory too many times to follow"

    def foreign_repository(self) -> str | None:
        """Why git run here may use a repository other than the project's, else None."""
        if self.lost:
            return self.lost
        for here in sorted(self.dirs):
            found = repository_of(here)
            if found is not None and found not in self.repositories:
                return f"would use the repository at {found}, not the project's"
        return None

    def temp_path(self, word: str, flags: int) -> bool:
        """An absolute path, written as is, in the scratch dir or under a temp dir and not in
        the project (which may itself live under /tmp)."""
        if flags or not word.startswith("/"):
            return False
        path = os.path.normpath(word) + os.sep
        if self.scratch and path.startswith(self.scratch):
            return True
        return path.startswith(self.temps) and not path.startswith(self.project)


def repository_of(path: str) -> str | None:
    """Where git run in `path` finds its repository: the nearest directory with a `.git`, or
    that is itself a git directory (holds HEAD); None when there is none."""
    here = os.path.realpath(path)
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return here
        if os.path.isfile(os.path.join(here, "HEAD")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
