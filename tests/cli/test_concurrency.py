"""Many processes writing one session at once: every write lands, ids stay unique."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import BIN

pytestmark = pytest.mark.slow  # 64 processes


def test_64_concurrent_writers_all_land(project: Path, session_dir: Path) -> None:
    common = ["--state-dir", str(session_dir)]
    commands = [
        [str(BIN / "plan"), "qr", "add", "--phase", "plan-design", "--check", f"check {n}", *common]
        for n in range(32)
    ]
    commands += [
        [
            str(BIN / "plan"),
            "decision",
            "add",
            "--decision",
            f"decision {n}",
            "--reasoning",
            "because",
            *common,
        ]
        for n in range(32)
    ]
    procs = [
        subprocess.Popen(c, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for c in commands
    ]
    results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    assert all(code == 0 for code, _, _ in results), [r for r in results if r[0]]
    printed = [out.strip() for _, out, _ in results]

    qr = json.loads((session_dir / "qr-plan-design.json").read_text())
    plan = json.loads((session_dir / "plan.json").read_text())
    qa_ids = [i["id"] for i in qr["items"]]
    dl_ids = [d["id"] for d in plan["planning_context"]["decision_log"]]
    assert sorted(qa_ids) == [f"qa-{n:03d}" for n in range(1, 33)]
    assert sorted(dl_ids) == [f"DL-{n:03d}" for n in range(1, 33)]
    assert sorted(printed) == sorted(qa_ids + dl_ids)
    assert {i["check"] for i in qr["items"]} == {f"check {n}" for n in range(32)}
    assert {d["decision"] for d in plan["planning_context"]["decision_log"]} == {
        f"decision {n}" for n in range(32)
    }

    audit = [json.loads(line) for line in (session_dir / "audit.jsonl").read_text().splitlines()]
    assert len([a for a in audit if a["command"] in ("qr add", "decision add")]) == 64
    revisions = (session_dir / "history" / "index.jsonl").read_text().splitlines()
    assert len(revisions) == 1 + 32  # session create + one per decision
    assert not list(session_dir.glob("*.tmp"))
