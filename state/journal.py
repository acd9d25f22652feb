"""One transaction across files: temp files, a journal naming them (the commit point), renames.

commit() writes every prepared file as `<dest>.tx-<id>.tmp`, then `.journal` listing them
(fsynced, renamed into place: its presence is the commit point), appends the audit line,
renames each temp file into place and removes the journal. recover(), run under the lock
before anything is read, finishes a journal left by a killed process (roll forward) and
removes every leftover temp file (an incomplete transaction: roll back).

PLANNER_FAULT=<phase> (tests and bench/bench_faults.py only) SIGKILLs the process at that
phase: after-temps, after-journal, after-audit, mid-rename, before-cleanup.
"""

from __future__ import annotations

import contextlib
import json
import os

from state.errors import DamagedFile, WriteFailed

JOURNAL = ".journal"
TMP_SUFFIX = ".tmp"
AUDIT_TAIL = 1 << 20  # how far back a roll-forward looks for its own audit line


def fault(phase: str) -> None:
    """Die here when PLANNER_FAULT names this phase (a test hook; unset in real use)."""
    if os.environ.get("PLANNER_FAULT") == phase:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def write_file(path: str, data: bytes, flags: int = os.O_TRUNC) -> None:
    """Write and fsync `path` (created if missing); OSError propagates."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | flags, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _failed(path: str, e: OSError, what: str = "cannot be written") -> WriteFailed:
    return WriteFailed(f"{path}: {what} ({e.strerror or e}); nothing was written")


def commit(directory: str, files: dict[str, bytes], audit_file: str, record: dict) -> None:
    """Write `files` (paths relative to `directory`) and append `record` to `audit_file` (with
    the transaction's id as "tx", how a roll-forward knows it is there), all or nothing.

    Raises WriteFailed (exit 3) naming the file when the disk is full or a file is read-only;
    then nothing was written. New files under history/ are linked, never replacing one.
    """
    tx = os.urandom(6).hex()
    record["tx"] = tx
    audit_line = (json.dumps(record, ensure_ascii=False) + "\n").encode()
    temps: list[str] = []
    entries = []
    try:
        audit_path = os.path.join(directory, audit_file)
        _check_appendable(audit_path)
        for rel, data in files.items():
            dest = os.path.join(directory, rel)
            if os.path.isdir(dest):
                raise WriteFailed(f"{dest}: is a directory, not a file; nothing was written")
            tmp = f"{dest}.tx-{tx}{TMP_SUFFIX}"
            temps.append(tmp)
            try:
                write_file(tmp, data, os.O_EXCL)
            except OSError as e:
                raise _failed(dest, e) from None
            entries.append([os.path.relpath(tmp, directory), rel])
        fault("after-temps")
        journal = {"tx": tx, "files": entries, "audit": [audit_file, audit_line.decode()]}
        journal_tmp = os.path.join(directory, f"{JOURNAL}.tx-{tx}{TMP_SUFFIX}")  # per writer
        temps.append(journal_tmp)
        try:
            write_file(journal_tmp, json.dumps(journal).encode())
            os.replace(journal_tmp, os.path.join(directory, JOURNAL))
        except OSError as e:
            raise _failed(os.path.join(directory, JOURNAL), e) from None
    except BaseException:
        remove(temps)
        raise
    sync_dir(directory)
    fault("after-journal")
    try:
        _append(audit_path, audit_line)
    except OSError as e:  # de-commit: the journal goes first, then the temp files
        remove([os.path.join(directory, JOURNAL), *temps])
        raise _failed(audit_path, e, "cannot be appended to") from None
    fault("after-audit")
    try:
        _finish(directory, journal)
    except OSError as e:  # after the commit point: the next command rolls it forward
        raise WriteFailed(
            f"{directory}: committed but not finished ({e.strerror or e}); the next command "
            "that opens the session finishes it"
        ) from None


def _check_appendable(path: str) -> None:
    """Refuse before the commit point when the audit log cannot take a line (read-only, a
    directory): afterwards the transaction could only be rolled forward."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as e:
        raise _failed(path, e, "cannot be appended to") from None
    os.close(fd)


def _append(path: str, line: bytes) -> None:
    """One write on an O_APPEND descriptor; a short write (disk full) is undone."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        try:
            if os.write(fd, line) != len(line):
                raise OSError(28, os.strerror(28))
            os.fsync(fd)
        except OSError:
            os.ftruncate(fd, size)
            raise
    finally:
        os.close(fd)


def _finish(directory: str, journal: dict) -> None:
    """Move every temp file of a committed journal into place, then drop the journal."""
    for number, (tmp_rel, rel) in enumerate(journal["files"]):
        tmp, dest = os.path.join(directory, tmp_rel), os.path.join(directory, rel)
        if not os.path.exists(tmp):
            continue  # moved by an earlier, interrupted roll-forward
        if rel.startswith("history" + os.sep) and rel != os.path.join("history", "index.jsonl"):
            with contextlib.suppress(FileExistsError):
                os.link(tmp, dest)  # a revision is never overwritten
            os.unlink(tmp)
        else:
            os.replace(tmp, dest)
        if number == 0:
            fault("mid-rename")
    fault("before-cleanup")
    sync_dir(directory)
    os.unlink(os.path.join(directory, JOURNAL))


def remove(paths: list[str]) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            os.unlink(path)


def recover(directory: str) -> None:
    """Roll a committed journal forward, then remove leftover temp files (hold the lock)."""
    path = os.path.join(directory, JOURNAL)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raw = None
    except OSError as e:
        raise DamagedFile(f"{path}: cannot be read ({e.strerror})") from None
    if raw is not None:
        try:
            journal = json.loads(raw)
            audit_file, line = journal["audit"]
            files = [(str(t), str(r)) for t, r in journal["files"]]
            tx = str(journal["tx"])
        except (ValueError, KeyError, TypeError, RecursionError):
            raise DamagedFile(
                f"{path}: not a transaction journal (damaged; it is left as it is)"
            ) from None
        for tmp_rel, rel in files:
            for p in (tmp_rel, rel):
                if os.path.isabs(p) or ".." in p.split(os.sep):
                    raise DamagedFile(f"{path}: names {p!r}, outside the session; left as it is")
        audit_path = os.path.join(directory, audit_file)
        try:
            if not _has_line(audit_path, tx):
                _append(audit_path, line.encode())
            _finish(directory, {"files": files})
        except OSError as e:
            raise WriteFailed(
                f"{path}: an interrupted transaction cannot be finished yet ({e.strerror or e}); "
                "nothing else was written"
            ) from None
    remove_temps(directory)


def _has_line(path: str, tx: str) -> bool:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - AUDIT_TAIL))
            return f'"tx": "{tx}"'.encode() in f.read()
    except FileNotFoundError:
        return False


def leftovers(directory: str) -> bool:
    """Whether a journal or temp files wait in `directory` (cheap: one or two listdirs)."""
    return any(name == JOURNAL or name.endswith(TMP_SUFFIX) for name in _names(directory))


def _names(directory: str) -> list[str]:
    names = []
    for sub in ("", "history"):
        with contextlib.suppress(OSError):
            names += [os.path.join(sub, n) for n in os.listdir(os.path.join(directory, sub))]
    return names


def remove_temps(directory: str) -> None:
    """Temp files of killed or failed writes (only called with the lock held)."""
    remove([os.path.join(directory, n) for n in _names(directory) if n.endswith(TMP_SUFFIX)])
