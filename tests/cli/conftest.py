"""Set-up the CLI tests share: a git identity for the commits the commands make, and a project
whose session waits in result_review (tests work on copies of it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli.result_helpers import init_project, to_result_review

os.environ.setdefault("GIT_AUTHOR_NAME", "t")
os.environ.setdefault("GIT_AUTHOR_EMAIL", "t@example.com")
os.environ.setdefault("GIT_COMMITTER_NAME", "t")
os.environ.setdefault("GIT_COMMITTER_EMAIL", "t@example.com")


@pytest.fixture(scope="module")
def reviewing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose session waits for the result's review; tests work on copies."""
    project = init_project(tmp_path_factory.mktemp("result") / "project")
    to_result_review(project)
    return project
