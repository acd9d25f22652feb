"""Where a command runs, and the guard's rules that depend on it: git judged by the repository
it would find from every directory a `cd` in the command can reach, and writes whose every
path is temp (cp, redirections, pip --target) left to the sandbox when one runs.

Git discovers its repository from the directory it runs in, and a repository's config runs
programs (`core.fsmonitor`): a directory planted in the worktree that holds `HEAD` and `config`
is a bare repository to git. So git is read-only only where it finds the project's repository
or the session's worktree. Resolving `cd` exactly would need the shell; instead every `cd`
target is resolved against every directory reached so far, in any order (over-approximating).
That set can double with every `cd` (`cd a/../b; cd c/../d; …`), so it is bounded: past
MAX_PLACES directories or MAX_RESOLVES resolved paths the place is unknown (`lost`), and git
in an unknown place is unknown too (sandboxed, or denied without a sandbox), never allowed.
"""

from __future__ import annotations

import os

from hooks.guard_tools import MUTATE, PASS, UNKNOWN, Verdict, judge_git, judge_package, listed
from hooks.shell import check_clock

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

MAX_PLACES = 16  # directories a command's `cd`s may reach before the place is unknown
MAX_RESOLVES = 256  # paths resolved for one command's `cd`s before the place is unknown
MAX_SCANNED = 20_000  # directories searched for planted repositories before giving up
# What makes a directory a git directory to git (HEAD; a worktree's gitdir and commondir):
# compared in lower case, as a case-insensitive file system (macOS) compares them
GIT_DIR_FILES = ("head", "commondir", "gitdir")
TEMP_ROOTS = ("/tmp", "/var/tmp", "/dev/shm")


class Where:
    """The hook's cwd, the project and the worktree; the directories the command may reach;
    `sandboxed()` says whether a sandbox will run it (asked only when it matters)."""

    def __init__(
        self,
        cwd: str,
        project: str,
        worktree: str,
        env: Mapping[str, str],
        sandboxed: Callable[[], bool] | None = None,
    ) -> None:
        self.env = env
        self.dirs = {os.path.realpath(cwd)}
        self.lost = ""  # why the guard no longer knows where commands run ("" while it does)
        self.resolved = 0  # paths resolved for `cd` so far (bounded by MAX_RESOLVES)
        self.venv = ""  # a virtualenv under temp that the command activates
        self.scratch = ""  # the session's scratch dir (in the project, yet writable like temp)
        found = (repository_of(project), repository_of(worktree))
        self.repositories = {repository for repository in found if repository is not None}
        self.project = (repository_of(project) or os.path.realpath(project)) + os.sep
        self._sandboxed: Callable[[], bool] | bool | None = sandboxed
        # where git may run whatever the hook input says (codex: any directory of the worktree
        # and the scratch dir, since its input does not carry a call's workdir for certain)
        self.anywhere: tuple[str, ...] = ()
        self._planted: str | None = None
        temps = [*TEMP_ROOTS, env.get("TMPDIR") or ""]
        self.temps = tuple(os.path.normpath(t) + os.sep for t in temps if t.startswith("/"))

    def sandboxed(self) -> bool:
        if callable(self._sandboxed):
            self._sandboxed = bool(self._sandboxed())
        return bool(self._sandboxed)

    def change_dir(self, target: str | None, known: bool = True) -> None:
        """`cd target`: add where it leads from every directory reached so far. Once the place
        is unknown it stays so, at no further cost."""
        if self.lost:
            return
        if not known or target is None or target == "-":
            self.lost = "changes to a directory known only at run time"
            return
        if target.startswith("~") and not (target == "~" or target.startswith("~/")):
            self.lost = "changes to another user's home directory"
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
        reached = set(self.dirs)
        for here in self.dirs:
            check_clock()
            self.resolved += 2
            if self.resolved > MAX_RESOLVES:
                break
            joined = os.path.join(here, target)
            # bash's cd resolves `..` by the text (logically); the kernel, physically: both
            reached.add(os.path.realpath(os.path.normpath(joined)))
            reached.add(os.path.realpath(joined))
            if len(reached) > MAX_PLACES:
                break
        if len(reached) > MAX_PLACES or self.resolved > MAX_RESOLVES:
            self.lost = "changes directory too many times to follow"
            return
        self.dirs = reached

    def foreign_repository(self) -> str | None:
        """Why git run here may use a repository other than the project's, else None."""
        if self.lost:
            return self.lost
        if self.anywhere:
            if self._planted is None:
                self._planted = planted_repository(self.anywhere, self.repositories) or ""
            if self._planted:
                return self._planted
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


def planted_repository(roots: tuple[str, ...], known: set[str]) -> str | None:
    """Why git run somewhere under `roots` may take a directory there for a repository that is
    not one of `known`: the first directory holding `.git` or a HEAD; None when there is none.
    Links are not followed (a link's target outside is not the agent's to write)."""
    stack = [os.path.realpath(root) for root in roots if os.path.isdir(root)]
    scanned = 0
    while stack:
        here = stack.pop()
        check_clock()
        scanned += 1
        if scanned > MAX_SCANNED:
            return "may run in any directory of the worktree, too many to check for repositories"
        try:
            with os.scandir(here) as entries:
                for entry in entries:
                    name = entry.name
                    # cheap first: only a name starting like .git or HEAD can be one
                    git = name[:1] in ".hH" or not name.isascii()
                    if git and _plain(name) in (".git", "head"):
                        if here not in known:
                            why = "may run in any directory of the worktree (its hook input"
                            why += f" does not say which), and {here} holds {name}: git would"
                            return why + " take it for a repository"
                    elif entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
        except OSError:
            continue
    return None


def git_files(root: str, target: str) -> str | None:
    """Why a file tool writing `target` (resolved, inside the worktree `root`) writes git's own
    files, else None: a path part `.git`, a file named HEAD, commondir or gitdir, or anything in
    or under a directory that holds a HEAD, names compared as a case-insensitive file system
    would (docs/design.md, "The guard": git's own files are not the agent's to write)."""
    parts = target[len(root) :].strip(os.sep).split(os.sep)
    lowered = [_plain(part) for part in parts]
    if ".git" in lowered or "git~1" in lowered:
        return "writes git's own files in the worktree (they could make git run commands)"
    if lowered[-1] in GIT_DIR_FILES:
        return f"writes {parts[-1]}, which makes its directory a git repository to git"
    here = root
    for part in ["", *parts[:-1]]:
        check_clock()
        here = os.path.join(here, part) if part else here
        if os.path.lexists(os.path.join(here, "HEAD")):
            return f"writes inside {here}, which holds HEAD: git takes it for a repository"
    return None


def _plain(name: str) -> str:
    """A file name as a case-insensitive file system may match it (no `re`: the hook's budget)."""
    kept = "".join(c for c in name if not _ignorable(c)) if not name.isascii() else name
    return kept.rstrip(". ").casefold()


def _ignorable(c: str) -> bool:
    code = ord(c)
    return (
        0x200B <= code <= 0x200F
        or 0x202A <= code <= 0x202E
        or 0x2060 <= code <= 0x206F
        or code == 0xFEFF
    )


# -- the rules that need to know where: set by guard_rules.classify_bash for one command ----

CURRENT: list[Where] = []  # the Where of the command being judged, or empty when it is not known


def current() -> Where | None:
    return CURRENT[0] if CURRENT else None


def lose_track(why: str) -> None:
    """A command runs others in directories the guard does not follow (`env -C`, -execdir)."""
    if CURRENT:
        CURRENT[0].lost = why


def temp_write(verdict: Verdict, written: list[tuple[str, int]]) -> Verdict:
    """A MUTATE verdict becomes UNKNOWN (run in the sandbox, whose temp dirs are its own) when
    everything written is under a temp dir and a sandbox runs; else it stays as it is."""
    where = current()
    if where is None or not written or not all(where.temp_path(w, f) for w, f in written):
        return verdict
    why = "writes only temp files, so it runs in the sandbox"
    return Verdict(UNKNOWN, verdict.part, why) if where.sandboxed() else verdict


TEMP_DEST = ("cp", "install", "ln")  # write only their destination; the rest is read
TEMP_ALL = ("mv", "rm", "rmdir", "unlink", "mkdir", "touch", "truncate", "shred")
OPTION_VALUES = ("-m", "-S", "-t", "-s", "-r", "-d", "--mode", "--suffix", "--size")


def written(argv: list[str], flags: list[int]) -> list[tuple[str, int]]:
    """The (word, flags) a file command writes, for the temp check; [] when it cannot tell."""
    base = argv[0].rsplit("/", 1)[-1]
    if base not in TEMP_DEST and base not in TEMP_ALL:
        return []
    operands: list[tuple[str, int]] = []
    target: tuple[str, int] | None = None
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg.startswith(("--target-directory=", "-t")) and arg != "-t" and base in TEMP_DEST:
            target = (arg.split("=", 1)[1] if "=" in arg else arg[2:], flags[i])
        elif arg == "-t" and base in TEMP_DEST and i + 1 < len(argv):
            target, i = (argv[i + 1], flags[i + 1]), i + 1
        elif arg in OPTION_VALUES:
            i += 1
        elif not arg.startswith("-") or arg == "-":
            operands.append((arg, flags[i]))
        i += 1
    if base in TEMP_ALL:
        return operands
    return [target] if target else operands[-1:]


def cd(argv: list[str], flags: list[int], depth: int) -> Verdict:
    """`cd`/`pushd`/`popd` change where later commands (git) run: followed when judged."""
    where = current()
    if where is None:
        return PASS
    i = 1
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
        i += 1
        if argv[i - 1] == "--":
            break
    if argv[0] == "popd" or (argv[0] == "pushd" and (i >= len(argv) or argv[i][:1] in "+-")):
        where.change_dir(None)  # the directory stack is not followed
    elif i >= len(argv):
        where.change_dir("~")
    else:
        where.change_dir(argv[i], known=not flags[i])
    return PASS


def git(argv: list[str], flags: list[int], depth: int) -> Verdict:
    """git, judged by its arguments and, where known, by the repository it would find."""
    return _in_project_repository(argv, judge_git(argv, flags, depth))


def go(argv: list[str], flags: list[int], depth: int) -> Verdict:
    """go stamps builds with `git status` of the module's repository: judged like git."""
    return _in_project_repository(argv, judge_package(argv, flags, depth))


def _in_project_repository(argv: list[str], verdict: Verdict) -> Verdict:
    where = current()
    if verdict.level == MUTATE or where is None:
        return verdict
    elsewhere = where.foreign_repository()
    return (
        Verdict(UNKNOWN, " ".join(argv), f"runs git, which {elsewhere}") if elsewhere else verdict
    )


def note_activate(argv: list[str], flags: list[int]) -> None:
    """`. /tmp/v/bin/activate`: pip after it installs into that venv, under temp."""
    where = current()
    script = argv[1] if len(argv) > 1 else ""
    if where is not None and script.endswith("/bin/activate") and where.temp_path(script, flags[1]):
        where.venv = script


PIP_PATHS = listed(
    """-t --target --prefix --root -d --dest -w --wheel-dir --log --log-file --cache-dir --src
    --report"""
)


def pip(argv: list[str], flags: list[int], depth: int) -> Verdict:
    """pip: installing or downloading into temp (`--target /tmp/x`, `-d /tmp/x`, or with a
    venv in temp activated) is left to the sandbox; anything else writing stays MUTATE."""
    verdict = judge_package(argv, flags, depth)
    where = current()
    verb = next((a for a in argv[1:] if not a.startswith("-")), "")
    if verdict.level != MUTATE or where is None or verb not in ("install", "download", "wheel"):
        return verdict
    written, i = [], 1
    while i < len(argv):
        name, eq, value = argv[i].partition("=")
        if name in PIP_PATHS and eq:
            written.append((value, flags[i]))
        elif name in PIP_PATHS:
            written.append((argv[i + 1], flags[i + 1]) if i + 1 < len(argv) else ("", 0))
            i += 1
        elif name in ("--user", "--editable", "-e"):
            return verdict
        i += 1
    if not written and where.venv:
        written = [(where.venv, 0)]
    return temp_write(verdict, written)
