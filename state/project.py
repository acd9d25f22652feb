"""The project a session belongs to: the git root above a directory.

Standard library only: the guard hook finds sessions through shared/paths.py, which uses it.
"""

from __future__ import annotations

import os


def project_root(cwd: str | None = None) -> str:
    """The git root above cwd (a `.git` entry, directory or file), else cwd itself."""
    start = os.path.abspath(cwd or os.getcwd())
    here = start
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return start
        here = parent
