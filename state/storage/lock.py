"""An exclusive lock on a session: its directory and the lock file beside the data, held with
fcntl.flock on POSIX (filelock elsewhere); a waiter that gives up names the holder's pid.
Why the directory, why nothing is written into the file, why not filelock everywhere:
docs/design.md, "The store's lock".
"""

from __future__ import annotations

import os
import time

from state.errors import Busy, DamagedFile, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from filelock import FileLock

TIMEOUT_S = 30.0
TIMEOUT_ENV = "PLANNER_LOCK_TIMEOUT"


def default_timeout() -> float:
    """$PLANNER_LOCK_TIMEOUT seconds (tests shorten it), else 30."""
    raw = os.environ.get(TIMEOUT_ENV)
    if not raw:
        return TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value < 1e9:
        raise UsageError(f"{TIMEOUT_ENV}={raw!r}: not a number of seconds (e.g. 30)")
    return value


class locked:  # lowercase: used as `with locked(path):`, as a function would be
    """Hold the lock file `path` exclusively, with `directory=True` (the store's lock) its
    directory first (POSIX); give up after `timeout` seconds (default: $PLANNER_LOCK_TIMEOUT,
    else 30) with Busy (exit 3). Not reentrant: a second `locked` on the same file, or on a
    file of a directory this process holds, in one process waits for itself."""

    def __init__(
        self,
        path: str,
        timeout: float | None = None,
        backend: str | None = None,
        directory: bool = False,
    ):
        self.path, self.backend, self.directory = path, backend, directory
        self.timeout = default_timeout() if timeout is None else timeout
        self.dir_fd: int | None = None
        self.fd: int | None = None
        self.filelock: FileLock | None = None

    def __enter__(self) -> None:
        try:
            import fcntl  # noqa: F401
        except ImportError:  # pragma: no cover - Windows
            self.backend = "filelock"
        if self.backend == "filelock":
            return self._enter_filelock()
        deadline = time.monotonic() + self.timeout
        directory = os.path.dirname(os.path.abspath(self.path))
        try:
            if self.directory:
                self.dir_fd = self._open(directory, os.O_RDONLY)
                self._wait(self.dir_fd, deadline)
            while True:
                self.fd = self._open(self.path, os.O_RDWR | os.O_CREAT)
                self._wait(self.fd, deadline)
                if self._still_at_path(self.fd):
                    break
                os.close(self.fd)  # deleted or replaced meanwhile: lock the one at the path
                self.fd = None
                if time.monotonic() > deadline:  # replaced again and again
                    raise self._timed_out()
        except BaseException:
            self.__exit__()
            raise

    def __exit__(self, *exc_info: object) -> None:
        for name in ("fd", "dir_fd"):
            fd = getattr(self, name)
            if fd is not None:
                os.close(fd)  # closing releases the flock
                setattr(self, name, None)
        if self.filelock is not None:
            self.filelock.release()
            self.filelock = None

    def _open(self, path: str, flags: int) -> int:
        try:
            return os.open(path, flags, 0o644)
        except OSError as e:  # permissions, a read-only or full file system, a directory
            raise DamagedFile(f"{path}: cannot be opened to lock it ({e.strerror})") from None

    def _wait(self, fd: int, deadline: float) -> None:
        import fcntl

        pause = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise self._timed_out() from None
                time.sleep(pause)
                pause = min(pause * 2, 0.02)
            except OSError as e:  # a file system without flock (some network mounts)
                raise DamagedFile(f"{self.path}: cannot be locked ({e.strerror})") from None

    def _still_at_path(self, fd: int) -> bool:
        try:
            there = os.stat(self.path)
        except FileNotFoundError:
            return False
        mine = os.fstat(fd)
        return (there.st_dev, there.st_ino) == (mine.st_dev, mine.st_ino)

    def _enter_filelock(self) -> None:
        from filelock import FileLock, Timeout

        lock = FileLock(self.path, timeout=self.timeout)
        try:
            lock.acquire()
        except Timeout:
            raise self._timed_out() from None
        self.filelock = lock

    def holder(self) -> str:
        """Who holds the lock: "pid 123 (plan decision add)" from /proc/locks, else ""."""
        try:
            held = [os.stat(os.path.dirname(os.path.abspath(self.path))), os.stat(self.path)]
        except OSError:
            held = [os.fstat(fd) for fd in (self.dir_fd, self.fd) if fd is not None]
        inodes = {f"{os.major(s.st_dev):02x}:{os.minor(s.st_dev):02x}:{s.st_ino}" for s in held}
        try:
            with open("/proc/locks") as f:
                table = f.read()
        except OSError:
            return ""
        for line in table.splitlines():
            words = line.split()  # 1: FLOCK  ADVISORY  WRITE 9882 fe:00:2149537 0 EOF
            if len(words) >= 6 and words[1] == "FLOCK" and words[5] in inodes:
                pid = words[4]
                if pid.isdecimal() and int(pid) not in (0, os.getpid()):
                    return f"pid {pid}{command_of(pid)}"
        return ""

    def _timed_out(self) -> Busy:
        who = self.holder()
        held = f"held by {who}" if who else "held by another process (its pid is not known)"
        return Busy(
            f"{self.path}: session is busy: {held}, still locked after {self.timeout:g} s "
            f"(run the command again once it is done; {TIMEOUT_ENV} sets the wait)"
        )


def command_of(pid: str) -> str:
    """ " (plan decision add)": the process's command line, shortened; "" when unreadable."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            words = f.read(4096).decode(errors="replace").split("\0")
    except OSError:
        return ""
    words = [w for w in words if w]
    if words and os.path.basename(words[0]).startswith("python") and len(words) > 1:
        words = words[1:]  # the script the interpreter runs says more than "python3"
    text = " ".join(" ".join([os.path.basename(words[0]), *words[1:]]).split()) if words else ""
    return f" ({text[:80]}{'…' if len(text) > 80 else ''})" if text else ""
