"""An exclusive lock on a file beside the data: fcntl.flock on POSIX, filelock elsewhere.

Why not filelock everywhere (PRODUCT.md §2.1 names it the store's lock): filelock 4.2's
import pulls typing, inspect, logging and secrets in; measured here (median of 15 starts,
2 shared cores): `python -c "import filelock"` 252 ms against `python -c pass` 38 ms, i.e.
+5.6x, while a whole `plan` mutation may cost 8x. On POSIX filelock's UnixFileLock is this
same call, fcntl.flock(LOCK_EX | LOCK_NB) on the same file, so the two exclude each other
(tests/state/test_transactions.py holds a filelock.FileLock and sees the store wait);
elsewhere, and with backend="filelock", filelock itself is used.
"""

from __future__ import annotations

import os
import time

from state.errors import PlannerError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from filelock import FileLock

TIMEOUT_S = 30.0


class locked:  # lowercase: used as `with locked(path):`, as a function would be
    """Hold the lock file `path` exclusively; give up after `timeout` seconds."""

    def __init__(self, path: str, timeout: float = TIMEOUT_S, backend: str | None = None):
        self.path, self.timeout, self.backend = path, timeout, backend
        self.fd: int | None = None
        self.filelock: FileLock | None = None

    def __enter__(self) -> None:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows
            self.backend = "filelock"
        if self.backend == "filelock":
            return self._enter_filelock()
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:  # permissions, a read-only or full file system, a directory
            from state.errors import DamagedFile

            raise DamagedFile(f"{self.path}: cannot be opened ({e.strerror})") from None
        deadline = time.monotonic() + self.timeout
        pause = 0.001
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return None
            except BlockingIOError:
                if time.monotonic() > deadline:
                    self.__exit__()
                    raise self._timed_out() from None
                time.sleep(pause)
                pause = min(pause * 2, 0.02)

    def __exit__(self, *exc_info: object) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing releases the flock
            self.fd = None
        if self.filelock is not None:
            self.filelock.release()
            self.filelock = None

    def _enter_filelock(self) -> None:
        from filelock import FileLock, Timeout

        lock = FileLock(self.path, timeout=self.timeout)
        try:
            lock.acquire()
        except Timeout:
            raise self._timed_out() from None
        self.filelock = lock

    def _timed_out(self) -> PlannerError:
        return PlannerError(f"{self.path}: still locked after {self.timeout:.0f}s")
