"""Fixtures shared by the state/ tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import crashpoints as cp


@pytest.fixture
def planning(tmp_path: Path) -> cp.Fixture:
    """The crash-point project (tests/crashpoints.py) with a planning session, DESIGN applied."""
    root = tmp_path / "project"
    root.mkdir()
    cp.new_project(root)
    return cp.Fixture(root, cp.planning(root))
