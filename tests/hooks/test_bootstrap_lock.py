"""hooks/bootstrap.py's second stage when the environment is replaced while it waits for
venv.lock (the plugin folder changed meanwhile): it makes the new one with the lock released.
flock belongs to an open file, so taking it again in the same process, as it did, waited on
itself until LOCK_WAIT_S (a suite run hung 15 minutes on it)."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

import pytest

from hooks import bootstrap


def test_a_replaced_environment_is_made_without_waiting_on_its_own_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, old, new = tmp_path / "data", tmp_path / "old", tmp_path / "new"
    for folder in (data, old, new):
        folder.mkdir()
    in_use: dict[str, str | None] = {"env": str(old)}
    monkeypatch.setattr(bootstrap, "data_dir", lambda: str(data))
    monkeypatch.setattr(bootstrap, "current", lambda _data: in_use["env"])
    monkeypatch.setattr(bootstrap, "LOCK_WAIT_S", 3)

    def ensure(prefix: str, rebuild: bool = False) -> str | None:
        """The first stage, as bootstrap.ensure makes it: under venv.lock when missing (pip
        itself is not the subject here)."""
        if in_use["env"] is None:
            with bootstrap.locked(str(data), prefix):
                in_use["env"] = str(new)
        return in_use["env"]

    installed: list[str] = []
    monkeypatch.setattr(bootstrap, "ensure", ensure)
    monkeypatch.setattr(bootstrap, "install_rest", lambda env, *_: installed.append(env))

    holder = os.open(data / "venv.lock", os.O_RDWR | os.O_CREAT)  # another process's lock
    fcntl.flock(holder, fcntl.LOCK_EX)
    outcome: dict[str, object] = {}

    def second_stage() -> None:
        try:
            outcome["env"] = bootstrap.ensure_full("planner")
        except bootstrap.Failure as e:
            outcome["failure"] = e.what

    waiter = threading.Thread(target=second_stage)
    waiter.start()
    time.sleep(0.5)  # it waits for the lock
    in_use["env"] = None  # the plugin folder changed: the environment in use is not current
    os.close(holder)
    waiter.join(30)
    assert outcome == {"env": str(new)}, outcome
    assert installed == [os.path.realpath(new)] and (new / bootstrap.FULL).exists()
