"""One transaction across files: temp files, a journal naming them (the commit point), renames.

commit() writes every prepared file as `<dest>.tx-<id>.tmp`, then `.journal` (its presence
is the commit point), the audit line, the renames; recover() rolls a journal left by a
killed process forward and every other temp file back. Project files and crash points
(point(), PLANNER_CRASH_AT, PLANNER_CRASH_LOG): docs/design.md, "Transactions: the project's
files too". PLANNER_FAULT=<phase> (tests and bench/bench_faults.py only) SIGKILLs the process
at after-temps, after-journal, after-audit, mid-rename or before-cleanup.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from typing import NotRequired, TypedDict

from state.errors import DamagedFile, WriteFailed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    ProjectWrites = tuple[str, dict[str, bytes | None]]  # (project root, real path -> content)


class StagedProject(TypedDict):
    """The project part of a journal: its root, and (temp file or None to delete, path)."""

    root: str
    files: list[tuple[str | None, str]]


class JournalRecord(TypedDict):
    """.journal: the transaction, its (temp file, file) pairs and its audit line."""

    tx: str
    files: list[tuple[str, str]]
    audit: tuple[str, str]  # (audit file, line)
    project: NotRequired[StagedProject]


JOURNAL = ".journal"
PROJECT_TEMPS = ".journal.temps"  # project temp files outside the session, listed before made
STAGING = "staging"  # where project files are staged when they share the session's file system
TMP_SUFFIX = ".tmp"
AUDIT_TAIL = 1 << 20  # how far back a roll-forward looks for its own audit line
_PROJECT_TEMP = re.compile(r"\.planner-[0-9a-f]{12}-[0-9]{1,9}\.tmp")
_points = 0


def fault(phase: str) -> None:
    """Die here when PLANNER_FAULT names this phase (a test hook; unset in real use)."""
    if os.environ.get("PLANNER_FAULT") == phase:
        import signal  # only when a test asks to die here

        os.kill(os.getpid(), signal.SIGKILL)


def point(kind: str, what: str = "") -> None:
    """A crash point: a write, fsync, rename, unlink or git call about to happen. Counted per
    process; PLANNER_CRASH_AT=N dies at the N-th (a test hook, like SQLite's crash tests)."""
    global _points
    _points += 1
    log = os.environ.get("PLANNER_CRASH_LOG")
    if log:
        with open(log, "a", encoding="utf-8", errors="replace") as f:
            f.write(f"{_points} {kind} {what}\n".replace("\n", " ").rstrip() + "\n")
    if os.environ.get("PLANNER_CRASH_AT") == str(_points):
        import signal  # only when a test asks to die here

        os.kill(os.getpid(), signal.SIGKILL)


def replace(src: str, dest: str) -> None:
    point("rename", dest)
    os.replace(src, dest)


def unlink(path: str) -> None:
    point("unlink", path)
    os.unlink(path)


def write_file(path: str, data: bytes, flags: int = os.O_TRUNC, mode: int | None = None) -> None:
    """Write and fsync `path` (created if missing, with `mode` if given); OSError propagates."""
    point("write", path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | flags, 0o644)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        point("fsync", path)
        os.fsync(fd)
    finally:
        os.close(fd)


def sync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        point("fsync", directory)
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _failed(path: str, e: OSError, what: str = "cannot be written") -> WriteFailed:
    return WriteFailed(f"{path}: {what} ({e.strerror or e}); nothing was written")


def _write(path: str, data: bytes, named: str, *flags_mode: int) -> None:
    """write_file(path, data, *flags_mode); an OSError is WriteFailed naming `named` (the file a
    temp file stands for)."""
    try:
        write_file(path, data, *flags_mode)
    except OSError as e:
        raise _failed(named, e) from None


def commit(
    directory: str,
    files: dict[str, bytes],
    audit_file: str,
    record: Mapping[str, object],
    project: ProjectWrites | None = None,
) -> None:
    """Write `files` (paths relative to `directory`) and append `record` to `audit_file` (with
    the transaction's id as "tx", how a roll-forward knows it is there), all or nothing; with
    `project`, its files too (a None content deletes the file).

    Raises WriteFailed (exit 3) naming the file when the disk is full or a file is read-only;
    then nothing was written. New files under history/ are linked, never replacing one.
    """
    tx = os.urandom(6).hex()
    audit_line = (json.dumps({**record, "tx": tx}, ensure_ascii=False) + "\n").encode()
    temps: list[str] = []
    entries: list[tuple[str, str]] = []
    try:
        audit_path = os.path.join(directory, audit_file)
        _check_appendable(audit_path)
        staged = _stage_project(directory, tx, project, temps) if project else None
        for rel, data in files.items():
            dest = os.path.join(directory, rel)
            if os.path.isdir(dest):
                raise WriteFailed(f"{dest}: is a directory, not a file; nothing was written")
            tmp = f"{dest}.tx-{tx}{TMP_SUFFIX}"
            temps.append(tmp)
            _write(tmp, data, dest, os.O_EXCL)
            entries.append((os.path.relpath(tmp, directory), rel))
        fault("after-temps")
        journal: JournalRecord = {
            "tx": tx,
            "files": entries,
            "audit": (audit_file, audit_line.decode()),
        }
        if staged is not None:
            journal["project"] = staged
        journal_tmp = os.path.join(directory, f"{JOURNAL}.tx-{tx}{TMP_SUFFIX}")  # per writer
        temps.append(journal_tmp)
        try:
            write_file(journal_tmp, json.dumps(journal).encode())
            replace(journal_tmp, os.path.join(directory, JOURNAL))
        except OSError as e:
            raise _failed(os.path.join(directory, JOURNAL), e) from None
    except BaseException:
        remove(temps[::-1])
        raise
    sync_dir(directory)
    fault("after-journal")
    try:
        _append(audit_path, audit_line)
    except OSError as e:  # de-commit: the journal goes first, then the temp files
        remove([os.path.join(directory, JOURNAL), *temps[::-1]])
        raise _failed(audit_path, e, "cannot be appended to") from None
    fault("after-audit")
    try:
        _finish(directory, entries, staged)
    except OSError as e:  # after the commit point: the next command rolls it forward
        raise WriteFailed(
            f"{directory}: committed but not finished ({e.strerror or e}); the next command "
            "that opens the session finishes it"
        ) from None


def _stage_project(
    directory: str, tx: str, project: ProjectWrites, temps: list[str]
) -> StagedProject:
    """Write the project's new files as temp files, before the commit point: in the session's
    staging/ when on its file system, else beside them (listed in PROJECT_TEMPS first). Checks
    every destination first, so that a refusal leaves the project as it was."""
    root, writes = os.path.realpath(project[0]), project[1]
    session_dev = os.stat(directory).st_dev
    entries: list[tuple[str | None, str]] = []
    staged: list[tuple[str, str, bytes, int]] = []
    outside: list[str] = []
    for n, (dest, data) in enumerate(sorted(writes.items())):
        rel = os.path.relpath(dest, root)
        if os.path.isabs(rel) or rel.split(os.sep)[0] == "..":
            raise WriteFailed(f"{dest}: outside the project {root}; nothing was written")
        try:
            st: os.stat_result | None = os.lstat(dest)
        except FileNotFoundError:
            st = None
        except OSError as e:
            raise _failed(dest, e) from None
        if st is not None and not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise WriteFailed(f"{dest}: is {kind}, where the plan has a file; nothing was written")
        home = _existing_parent(dest)
        if not os.access(home, os.W_OK):
            raise WriteFailed(
                f"{dest}: cannot be written ({home} is read-only); nothing was written"
            )
        if data is None:
            entries.append((None, rel))
            continue
        if os.stat(home).st_dev == session_dev:
            tmp = os.path.join(directory, STAGING, f"{tx}-{n}{TMP_SUFFIX}")
            entries.append((os.path.relpath(tmp, directory), rel))
        else:  # a rename cannot cross file systems: stage beside it
            tmp = os.path.join(home, f".planner-{tx}-{n}{TMP_SUFFIX}")
            outside.append(tmp)
            entries.append((tmp, rel))
        staged.append((tmp, dest, data, stat.S_IMODE(st.st_mode) if st else 0o644))
    if outside:
        listing = os.path.join(directory, PROJECT_TEMPS)
        temps.append(listing)  # removed last (the list is undone in reverse)
        _write(listing, json.dumps(outside).encode(), listing)
    if len(staged) > len(outside):
        try:
            os.makedirs(os.path.join(directory, STAGING), exist_ok=True)
        except OSError as e:
            raise _failed(os.path.join(directory, STAGING), e) from None
    for tmp, dest, data, mode in staged:
        temps.append(tmp)
        _write(tmp, data, dest, os.O_EXCL, mode)
    return {"root": root, "files": entries}


def _existing_parent(path: str) -> str:
    parent = os.path.dirname(path)
    while not os.path.isdir(parent) and os.path.dirname(parent) != parent:
        parent = os.path.dirname(parent)
    return parent


def _finish_project(directory: str, project: StagedProject) -> None:
    """Move the project's staged files into place (and delete what the plan deletes)."""
    root, touched = project["root"], set()
    for tmp, rel in project["files"]:
        dest = os.path.join(root, rel)
        if tmp is None:
            if os.path.lexists(dest):
                unlink(dest)
                touched.add(os.path.dirname(dest))
            continue
        src = tmp if os.path.isabs(tmp) else os.path.join(directory, tmp)
        if not os.path.lexists(src):
            continue  # moved by an earlier, interrupted roll-forward
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        replace(src, dest)
        touched.add(os.path.dirname(dest))
    for parent in sorted(touched):
        sync_dir(parent)


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
            point("write", path)
            if os.write(fd, line) != len(line):
                raise OSError(28, os.strerror(28))
            point("fsync", path)
            os.fsync(fd)
        except OSError:
            os.ftruncate(fd, size)
            raise
    finally:
        os.close(fd)


def _finish(directory: str, files: list[tuple[str, str]], project: StagedProject | None) -> None:
    """Move every temp file of a committed journal into place, then drop the journal."""
    if project:
        _finish_project(directory, project)
    for number, (tmp_rel, rel) in enumerate(files):
        tmp, dest = os.path.join(directory, tmp_rel), os.path.join(directory, rel)
        if not os.path.exists(tmp):
            continue  # moved by an earlier, interrupted roll-forward
        if rel.startswith("history" + os.sep) and rel != os.path.join("history", "index.jsonl"):
            with contextlib.suppress(FileExistsError):
                point("link", dest)
                os.link(tmp, dest)  # a revision is never overwritten
            unlink(tmp)
        else:
            replace(tmp, dest)
        if number == 0:
            fault("mid-rename")
    fault("before-cleanup")
    sync_dir(directory)
    unlink(os.path.join(directory, JOURNAL))
    if project and os.path.lexists(os.path.join(directory, PROJECT_TEMPS)):
        unlink(os.path.join(directory, PROJECT_TEMPS))


def remove(paths: list[str]) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            unlink(path)


def read_if_any(path: str) -> bytes | None:
    """The file's bytes, None when there is none; DamagedFile (exit 3) naming it when it
    cannot be read (a directory, permissions, a symlink loop)."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise DamagedFile(f"{path}: cannot be read ({e.strerror})") from None


def recover(directory: str) -> bool:
    """Roll a committed journal forward, then remove leftover temp files (hold the lock).
    Whether there was a journal to roll forward."""
    path = os.path.join(directory, JOURNAL)
    raw = read_if_any(path)
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
        project = _checked_project(path, journal.get("project"))
        audit_path = os.path.join(directory, audit_file)
        try:
            if not _has_line(audit_path, tx):
                _append(audit_path, line.encode())
            _finish(directory, files, project)
        except OSError as e:
            raise WriteFailed(
                f"{path}: an interrupted transaction cannot be finished yet ({e.strerror or e}); "
                "nothing else was written"
            ) from None
    _remove_project_temps(directory)
    # the temp files of killed or failed writes
    remove([os.path.join(directory, n) for n in _names(directory) if n.endswith(TMP_SUFFIX)])
    return raw is not None


def _checked_project(path: str, project: Any) -> StagedProject | None:
    """The journal's project part, refused (DamagedFile) unless every name is one commit()
    writes: destinations inside the root, temps in staging/ or named .planner-<tx>-<n>.tmp."""
    if project is None:
        return None
    try:
        root = str(project["root"])
        files = [(None if t is None else str(t), str(r)) for t, r in project["files"]]
    except (KeyError, TypeError, ValueError):
        raise DamagedFile(f"{path}: not a transaction journal (damaged; left as it is)") from None
    for tmp, rel in files:
        bad = not os.path.isabs(root) or os.path.isabs(rel) or ".." in rel.split(os.sep)
        if tmp is not None and os.path.isabs(tmp):
            bad = bad or not _PROJECT_TEMP.fullmatch(os.path.basename(tmp))
            bad = bad or os.path.commonpath([root, tmp]) != root
        elif tmp is not None:
            bad = bad or tmp.split(os.sep)[0] != STAGING or ".." in tmp.split(os.sep)
        if bad:
            raise DamagedFile(f"{path}: names {rel!r} outside the project; left as it is")
    return {"root": root, "files": files}


def _remove_project_temps(directory: str) -> None:
    """Temp files an unfinished transaction staged in the project (listed before made)."""
    listing = os.path.join(directory, PROJECT_TEMPS)
    try:
        with open(listing, "rb") as f:
            names = json.loads(f.read())
    except FileNotFoundError:
        return
    except (OSError, ValueError):
        names = []  # torn while written: none of its temps was made yet
    if isinstance(names, list):
        remove(
            [
                n
                for n in names
                if isinstance(n, str) and os.path.isabs(n)
                if _PROJECT_TEMP.fullmatch(os.path.basename(n))
            ]
        )
    remove([listing])


def _has_line(path: str, tx: str) -> bool:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - AUDIT_TAIL))
            return f'"tx": "{tx}"'.encode() in f.read()
    except FileNotFoundError:
        return False


def leftovers(directory: str) -> bool:
    """Whether a journal or temp files wait in `directory` (cheap: one or two listdirs)."""
    return any(
        name in (JOURNAL, PROJECT_TEMPS) or name.endswith(TMP_SUFFIX) for name in _names(directory)
    )


def _names(directory: str) -> list[str]:
    names = []
    for sub in ("", "history", STAGING):
        with contextlib.suppress(OSError):
            names += [os.path.join(sub, n) for n in os.listdir(os.path.join(directory, sub))]
    return names
