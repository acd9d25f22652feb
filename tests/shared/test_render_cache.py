"""shared.render keeps compiled templates in __pycache__ beside them: a new process renders
from them, an edited template is compiled anew, and a folder it cannot write only loses the
saving. Each render runs in a process of its own, as a step does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


def render_in_new_process(directory: Path, name: str = "t.j2") -> str:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from shared.render import render; "
            "print(render(sys.argv[1], {'who': 'you'}, [sys.argv[2]]), end='')",
            name,
            str(directory),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_compiled_template_is_kept_and_an_edited_one_compiled_anew(tmp_path: Path) -> None:
    (tmp_path / "t.j2").write_text("hello {{ who }}{% include 'part.j2' %}\n")
    (tmp_path / "part.j2").write_text("!")
    assert render_in_new_process(tmp_path) == "hello you!"
    cached = sorted((tmp_path / "__pycache__").iterdir())
    assert len(cached) == 2 and all(p.suffix == ".cache" for p in cached)
    assert render_in_new_process(tmp_path) == "hello you!"  # from the cache
    (tmp_path / "part.j2").write_text("?")
    assert render_in_new_process(tmp_path) == "hello you?"
    (tmp_path / "t.j2").write_text("bye {{ who }}\n")
    assert render_in_new_process(tmp_path) == "bye you"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_read_only_template_folder_still_renders(tmp_path: Path) -> None:
    (tmp_path / "t.j2").write_text("hello {{ who }}\n")
    tmp_path.chmod(0o555)
    try:
        assert render_in_new_process(tmp_path) == "hello you"
        assert not (tmp_path / "__pycache__").exists()
    finally:
        tmp_path.chmod(0o755)


def test_a_cache_that_cannot_be_written_still_renders(tmp_path: Path) -> None:
    # A file where the cache directory would be: every write fails, as on a read-only mount.
    (tmp_path / "t.j2").write_text("hello {{ who }}\n")
    (tmp_path / "__pycache__").write_text("not a directory")
    assert render_in_new_process(tmp_path) == "hello you"
    assert render_in_new_process(tmp_path) == "hello you"
