"""Guard hook speed as a ratio to `python -c pass` (target <= 1.8x: `import json` alone is
~1.55x, so the 1.5x first asked for cannot be met by any hook that reads JSON), measured in one
run, with the sandbox wrapper's own start-up beside it, the time to judge a 1 MB command, the
20-`cd` attack, and the worst-case judging time over generated inputs (the round-2 bash
grammar and the attacker's shapes of bench/guard_grammar.py; target < 1 s, the guard's
own deadline denies past 0.5 s).

Run: .venv/bin/python -m bench.bench_guard [--rounds N]
The hook runs as hooks/hooks.json runs it (`python3 -S -I hooks/guard.py`, JSON on stdin) in a
temp git project whose active session is planning.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import (
    REPO,
    baseline,
    compile_package,
    environment_note,
    interleaved,
    ratio_line,
    rounds,
)

GUARD = [sys.executable, "-S", "-I", str(REPO / "hooks" / "guard.py")]
COMMAND = "git diff --stat HEAD~3 -- src/ | head -50 && rg -n 'def parse' src/ 2>/dev/null | wc -l"


def make_project(root: Path) -> Path:
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    state_dir = root / ".planner" / "bench-session"
    (state_dir / "worktree").mkdir(parents=True)
    session = {"id": "bench-session", "status": "design", "config": {"guard": "standard"}}
    (state_dir / "session.json").write_text(json.dumps(session))
    (root / ".planner" / "ACTIVE").write_text("bench-session\n")
    return state_dir


def hook_input(root: Path, tool: str, tool_input: dict[str, Any]) -> bytes:
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


def sandbox_startup(root: Path, count: int) -> str:
    """Wall time of `true` wrapped as the guard wraps it (bwrap, private temp and /run, the
    seccomp filter), against `python -c pass` and against plain `bash -c true`."""
    sys.path.insert(0, str(REPO))
    from hooks import hookstate, sandbox

    session = hookstate.find_session(str(root))
    wrapped = sandbox.wrap("true", session, str(root)) if session else None
    if wrapped is None:
        return "sandbox: none here (" + sandbox.NO_SANDBOX + ")"
    runs = {"baseline": baseline(), "plain": ["bash", "-c", "true"]}
    runs["wrapped"] = ["bash", "-c", wrapped]
    ms = interleaved(runs, max(1, count // 4), cwd=root)
    program = sandbox.sandbox_program()
    filtered = program is not None and program[2] is not None
    label = "sandbox start-up" + (", seccomp filter on" if filtered else " (no seccomp filter)")
    extra, plain = ms["wrapped"] - ms["plain"], ms["plain"]
    return (
        ratio_line(label, ms["wrapped"], ms["baseline"], "for scale")
        + f"\n  sandbox wrapper: +{extra:.1f} ms per Bash call (bash -c true: {plain:.1f} ms)"
    )


def one_megabyte(root: Path) -> str:
    """A 1 MB command (a long pipeline of read-only commands) judged by the hook process."""
    unit = "git log --oneline -- src/ | grep -c fix && awk '{ print $1 }' data.csv | sort | uniq; "
    command = unit * (1_000_000 // len(unit))
    payload = hook_input(root, "Bash", {"command": command})
    start = time.perf_counter()
    done = subprocess.run(GUARD, input=payload, capture_output=True, cwd=root)
    seconds = time.perf_counter() - start
    verdict = "wrapped" if b"updatedInput" in done.stdout else "allowed"
    verdict = "denied as too long to judge" if b"too long" in done.stdout else verdict
    size = f"{len(command):,} chars"
    return f"1 MB command ({size}): judged in {seconds:.2f} s ({verdict}; target < 1 s)"


def awk_program(root: Path) -> str:
    """A 78 KB awk program (the size that took 12.9 s before the scan was made linear)."""
    body = "".join(
        f'$1 ~ /x{i}|y/ {{ n[$2]++; print $1, n[$2] > "/dev/stderr" }}\n' for i in range(1700)
    )
    command = "awk '" + body[:78_000] + "' data.csv"
    start = time.perf_counter()
    subprocess.run(
        GUARD, input=hook_input(root, "Bash", {"command": command}), cwd=root, capture_output=True
    )
    return f"78 KB awk program: judged in {time.perf_counter() - start:.2f} s (target < 1 s)"


def cd_attack(root: Path) -> str:
    """`cd d0/../e0; …; cd d19/../e19; echo PWNED > notes.txt` through the hook process, per
    dialect (it once doubled the directories followed with every cd: minutes)."""
    command = "; ".join(f"cd d{i}/../e{i}" for i in range(20)) + "; echo PWNED > notes.txt"
    figures = []
    for dialect, tool in (("claude", "Bash"), ("codex", "Bash"), ("gemini", "run_shell_command")):
        payload = hook_input(root, tool, {"command": command})
        start = time.perf_counter()
        done = subprocess.run([*GUARD, "--dialect", dialect], input=payload, capture_output=True)
        seconds = time.perf_counter() - start
        verdict = "denied" if b"deny" in done.stdout else "NOT DENIED"
        figures.append(f"{dialect} {seconds:.2f} s {verdict}")
    return "20-cd attack: " + ", ".join(figures) + " (target < 1 s, denied)"


def worst_case(root: Path, count: int) -> str:
    """Every generated input judged by the guard's entry in-process (guard_hook.run, as the
    hook runs it, without the interpreter's start-up), dialects in turn; the slowest is then
    judged again through the hook process."""
    sys.path.insert(0, str(REPO))
    from bench.guard_grammar import Grammar, Stress
    from hooks import guard_hook

    dialects = (("claude", "Bash"), ("codex", "Bash"), ("gemini", "run_shell_command"))
    worst: tuple[float, str, str, str, float] = (0.0, "", "", "", 0.0)
    deadline = 0
    for seed in range(count):
        command = Stress(seed).command() if seed % 2 else Grammar(seed).command_list()
        dialect, tool = dialects[seed % 3]
        payload = hook_input(root, tool, {"command": command})
        start, cpu = time.perf_counter(), time.process_time()
        out = guard_hook.run(payload, dialect)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        deadline += "too complex to judge" in out
        if seconds > worst[0]:
            worst = (seconds, command, dialect, out, cpu)
    seconds, command, dialect, out, cpu = worst
    wrapped = "updatedInput" in out or "tool_input" in out
    verdict = "denied" if "deny" in out else "sandboxed" if wrapped else "allowed"
    verdict = "denied as too complex" if "too complex" in out else verdict
    tool = "run_shell_command" if dialect == "gemini" else "Bash"
    start = time.perf_counter()
    subprocess.run(
        [*GUARD, "--dialect", dialect],
        input=hook_input(root, tool, {"command": command}),
        capture_output=True,
    )
    process = time.perf_counter() - start
    shown = command[:50].replace("\n", " ")
    return (
        f"worst case over {count} generated inputs: judged in {seconds:.3f} s, {cpu:.3f} s CPU"
        f" ({dialect},"
        f" {len(command):,} chars, {verdict}: {shown!r}…); through the hook process"
        f" {process:.3f} s; {deadline} hit the deadline (0.5 s; target < 1 s)"
    )


def json_cost(count: int) -> str:
    """What `import json` alone costs the hook (the budget's largest item)."""
    runs = {"baseline": baseline(), "json": [sys.executable, "-S", "-I", "-c", "import json"]}
    ms = interleaved(runs, max(1, count // 4))
    return ratio_line("python -S -I -c 'import json'", ms["json"], ms["baseline"], "for scale")


def main() -> int:
    count = rounds(200)
    compile_package()
    for name in (
        "PLANNER_SANDBOX",
        "PLANNER_STATE_DIR",
        "CLAUDE_PROJECT_DIR",
        "GEMINI_PROJECT_DIR",
    ):
        os.environ.pop(name, None)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        state_dir = make_project(root)
        allowed = hook_input(root, "Bash", {"command": COMMAND, "description": "Summarise"})
        denied = hook_input(root, "Bash", {"command": "rm -rf build && " + COMMAND})
        write = hook_input(root, "Write", {"file_path": str(root / "a.py"), "content": "x"})
        check = subprocess.run(GUARD, input=allowed, capture_output=True, cwd=root)
        if b"permissionDecision" in check.stdout or check.stderr or check.returncode:
            print(f"the guard did not pass a read-only command: {check}", file=sys.stderr)
            return 1
        runs = {"baseline": baseline(), "guard": GUARD}
        wrap_ms = interleaved(runs, count, cwd=root, stdin=allowed)
        os.environ["PLANNER_SANDBOX"] = "off"  # the parser path alone: silence, no wrapper
        main_ms = interleaved(runs, count, cwd=root, stdin=allowed)
        deny_ms = interleaved(runs, max(1, count // 4), cwd=root, stdin=denied)
        write_ms = interleaved(runs, max(1, count // 4), cwd=root, stdin=write)
        del os.environ["PLANNER_SANDBOX"]
        audited = len((state_dir / "audit.jsonl").read_text().splitlines())
        startup = sandbox_startup(root, count) if shutil.which("bwrap") else "sandbox: no bwrap"
        big = one_megabyte(root)
        awk = awk_program(root)
        for i in range(20):
            (root / f"d{i}").mkdir()
            (root / f"e{i}").mkdir()
        cds = cd_attack(root)
        worst = worst_case(root, max(30, count))
        json_line = json_cost(count)
    print(ratio_line("guard, parser path", main_ms["guard"], main_ms["baseline"], "<= 1.8x"))
    print("  " + ratio_line("+ sandbox wrap", wrap_ms["guard"], wrap_ms["baseline"], "<= 1.8x"))
    print("  " + ratio_line("deny, audited", deny_ms["guard"], deny_ms["baseline"], "<= 1.8x"))
    print("  " + ratio_line("Write outside", write_ms["guard"], write_ms["baseline"], "<= 1.8x"))
    print(f"  {startup}")
    print(f"  {big}")
    print(f"  {awk}")
    print(f"  {cds}")
    print(f"  {worst}")
    print(f"  {json_line}")
    print(f"  {count} rounds ({audited} audit lines); {environment_note()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
