"""An exclusive lock on a file beside the data: fcntl.flock on POSIX, filelock elsewhere.

filelock's import alone costs ~2x `python -c pass`, more than a whole `plan` mutation may.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from state.errors import PlannerError

TIMEOUT_S = 30.0


@contextmanager
def locked(path: str, timeout: float = TIMEOUT_S, backend: str | None = None) -> Iterator[None]:
    """Hold the lock file `path` exclusively; give up after `timeout` seconds."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        backend = "filelock"
    if backend == "filelock":
        with _filelock(path, timeout):
            yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        pause = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise PlannerError(f"{path}: still locked after {timeout:.0f}s") from None
                time.sleep(pause)
                pause = min(pause * 2, 0.02)
        yield
    finally:
        os.close(fd)


@contextmanager
def _filelock(path: str, timeout: float) -> Iterator[None]:
    from filelock import FileLock, Timeout

    try:
        with FileLock(path, timeout=timeout):
            yield
    except Timeout:
        raise PlannerError(f"{path}: still locked after {timeout:.0f}s") from None
