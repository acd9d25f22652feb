"""Guard hook speed as a ratio to `python -c pass` (target <= 1.5x), measured in one run.

Run: .venv/bin/python -m bench.bench_guard [--rounds N]
The hook runs as hooks/hooks.json runs it (`python3 -S cli/guard.py`, JSON on stdin) in a
temp git project whose active session is planning.
"""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.common import (
    REPO,
    baseline,
    compile_package,
    environment_note,
    interleaved,
    ratio_line,
    rounds,
)

GUARD = [sys.executable, "-S", str(REPO / "cli" / "guard.py")]
COMMAND = "git diff --stat HEAD~3 -- src/ | head -50 && rg -n 'def parse' src/ 2>/dev/null | wc -l"


def make_project(root: Path) -> Path:
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    state_dir = root / ".planner" / "bench-session"
    state_dir.mkdir(parents=True)
    session = {"id": "bench-session", "status": "design", "config": {"guard": "standard"}}
    (state_dir / "session.json").write_text(json.dumps(session))
    (root / ".planner" / "ACTIVE").write_text("bench-session\n")
    return state_dir


def hook_input(root: Path, tool: str, tool_input: dict) -> bytes:
    """What Claude Code sends for one tool call."""
    payload = {
        "session_id": "5f1e0c7a-2b1d-4c55-9a0e-0d9b8c1f2a33",
        "transcript_path": str(root / "transcript.jsonl"),
        "cwd": str(root),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": "toolu_01ABCDEF",
    }
    return json.dumps(payload).encode()


def main() -> int:
    count = rounds(200)
    compile_package()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        state_dir = make_project(root)
        allowed = hook_input(root, "Bash", {"command": COMMAND, "description": "Summarise"})
        denied = hook_input(root, "Bash", {"command": "rm -rf build && " + COMMAND})
        write = hook_input(root, "Write", {"file_path": str(root / "a.py"), "content": "x"})
        check = subprocess.run(GUARD, input=allowed, capture_output=True, cwd=root)
        if check.stdout or check.stderr or check.returncode:
            print(f"the guard did not pass a read-only command: {check}", file=sys.stderr)
            return 1
        runs = {"baseline": baseline(), "guard": GUARD}
        main_ms = interleaved(runs, count, cwd=root, stdin=allowed)
        deny_ms = interleaved(runs, max(1, count // 4), cwd=root, stdin=denied)
        write_ms = interleaved(runs, max(1, count // 4), cwd=root, stdin=write)
        audited = len((state_dir / "audit.jsonl").read_text().splitlines())
    print(ratio_line("guard", main_ms["guard"], main_ms["baseline"], "<= 1.5x"))
    print("  " + ratio_line("deny, audited", deny_ms["guard"], deny_ms["baseline"], "<= 1.5x"))
    print("  " + ratio_line("Write outside", write_ms["guard"], write_ms["baseline"], "<= 1.5x"))
    print(f"  {count} rounds ({audited} audit lines); {environment_note()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
