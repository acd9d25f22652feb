"""Run inside the sandbox (`python3 writable.py`): print, as JSON, every place a process there
can write: each mount whose root takes a new file, and every file or directory of /proc
(but the sandbox's own processes), /sys and /dev that opens for writing or takes a new file.
A mount whose root refuses for another reason than being read-only is walked whole."""

from __future__ import annotations

import errno
import json
import os
import stat

NAME = f".planner-writable-{os.getpid()}"


def mount_points() -> list[str]:
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8") as f:
        for line in f:
            field = line.split()[4]
            found.append(field.encode().decode("unicode_escape"))  # \040 and friends
    return sorted(set(found))


def takes_a_file(folder: str) -> int:
    """0 when a new file can be made in `folder` (it is removed again), else the errno."""
    path = os.path.join(folder, NAME)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
    except OSError as e:
        return e.errno or -1
    os.close(fd)
    os.unlink(path)
    return 0


def opens_for_writing(path: str) -> bool:
    """Only opened, never written: opening a kernel file changes nothing."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_NOFOLLOW)
    except OSError:
        return False
    os.close(fd)
    return True


def own_process(path: str) -> bool:
    """/proc/<pid>, /proc/self, /proc/thread-self: the sandbox's own processes."""
    parts = path.split("/")
    return (
        len(parts) > 2
        and parts[1] == "proc"
        and (parts[2].isdigit() or parts[2] in ("self", "thread-self"))
    )


def walk(root: str, found: set[str]) -> None:
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not own_process(os.path.join(folder, d))]
        if takes_a_file(folder) == 0:
            found.add(folder)
        for name in files:
            path = os.path.join(folder, name)
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            if not stat.S_ISLNK(mode) and not own_process(path) and opens_for_writing(path):
                found.add(path)


def main() -> None:
    found: set[str] = set()
    for mount in mount_points():
        if own_process(mount) or not os.path.isdir(mount) or os.path.islink(mount):
            continue
        refused = takes_a_file(mount)
        if refused == 0:
            found.add(mount)
        elif refused != errno.EROFS and not mount.startswith(("/proc", "/sys", "/dev")):
            walk(mount, found)  # writable, but not here: somewhere below, perhaps
    for root in ("/proc", "/sys", "/dev"):
        walk(root, found)
    print(json.dumps(sorted(found)))


if __name__ == "__main__":
    main()
