"""Settings from [tool.planner] in pyproject.toml or [planner] in
.planner/config.toml; unknown keys and bad values are errors that name file and key.

Read once, when a session starts: the session keeps the result (tomllib is too slow to
import on every step, and the guard reads the mode from session.json).
"""

from __future__ import annotations

import os

from state.errors import PreconditionFailed, UsageError
from state.storage import schema

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from state.storage.documents import Config

DURATIONS = ("approval_timeout", "question_timeout")
UNITS = {"s": 1, "m": 60, "h": 3600}


def duration(value: Any, where: str) -> int:
    """ "90s", "5m", "1h", "0" (or a number of seconds) → seconds."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    text = value.strip() if isinstance(value, str) else ""
    number, unit = (text[:-1], text[-1]) if text[-1:] in UNITS else (text, "s")
    if not number.isdigit():
        raise UsageError(f'{where}: {value!r} is not a duration like "90s", "5m", "1h" or "0"')
    return int(number) * UNITS[unit]


def _tables(root: str) -> list[tuple[str, dict[str, Any]]]:
    """The [tool.planner] and [planner] tables found (TOML as the person wrote it)."""
    import tomllib  # slow to import: only a starting session reads the configuration

    found = []
    for path, keys in (
        (os.path.join(root, "pyproject.toml"), ("tool", "planner")),
        (os.path.join(root, ".planner", "config.toml"), ("planner",)),
    ):
        try:
            with open(path, "rb") as f:
                data = tomllib.load(f)
        except FileNotFoundError:
            continue
        except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as e:
            raise UsageError(f"{path}: cannot read the configuration ({e})") from None
        for key in keys:
            data = data.get(key, {}) if isinstance(data, dict) else {}
        if data:
            found.append((f"{path} [{'.'.join(keys)}]", data))
    return found


def load(root: str) -> Config:
    """The effective settings for a new session in project `root`."""
    config = schema.defaults("config")
    for where, table in _tables(root):
        for key, value in table.items():
            if key not in config:
                raise UsageError(f"{where}: unknown key {key!r} (known: {', '.join(config)})")
            config[key] = duration(value, f"{where} {key}") if key in DURATIONS else value
        problems = schema.check("config", dict(config))
        if problems:
            raise UsageError(f"{where}: {problems[0]}")
    if config["questions_min"] > config["questions_max"]:
        raise UsageError("configuration: questions_min is larger than questions_max")
    return {  # checked against the schema above
        "interactive": config["interactive"],
        "questions_min": config["questions_min"],
        "questions_max": config["questions_max"],
        "max_rejects": config["max_rejects"],
        "approval_timeout": config["approval_timeout"],
        "question_timeout": config["question_timeout"],
        "qr_max_iterations": config["qr_max_iterations"],
        "depth": config["depth"],
        "guard": config["guard"],
        "commit": config["commit"],
    }


def policy(root: str, settings: Config, flag: bool) -> str | None:
    """Why nobody will be asked in a new session, or None when the person is asked: the
    person's explicit choice only, `--non-interactive` (which the guard asks the person
    about) or `interactive = false` in a committed configuration file, unchanged since, so
    an agent cannot make its own plan approve itself by editing it (docs/design.md, "Who
    approves"). `CI` in the environment is no such choice."""
    if flag:
        return "--non-interactive on step 1"
    if settings["interactive"]:
        return None
    where = next(w for w, table in reversed(_tables(root)) if "interactive" in table)
    path = where.rpartition(" [")[0]
    relative = os.path.relpath(path, root)
    if not _committed(root, relative):
        raise PreconditionFailed(
            f"{path}: interactive = false counts only when committed, unchanged (fix: commit"
            f" it with git add {relative} && git commit, or run planner --step 1"
            " --non-interactive yourself)"
        )
    return f"interactive = false in {relative} (committed)"


def _committed(root: str, relative: str) -> bool:
    """Whether `relative` is tracked by git and unchanged from HEAD, in index and on disk."""
    from state.repo import git  # a subprocess: only a configuration that asks for it

    done = git.run(root, "status", "--porcelain", "--ignored", "--", relative)
    listed = git.run(root, "ls-files", "--error-unmatch", "--", relative)
    return done.returncode == 0 and not done.stdout.strip() and listed.returncode == 0
