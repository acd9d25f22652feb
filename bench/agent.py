"""A scripted agent for the benchmarks and the tests: it runs the exact commands the steps print.
(bench/ imports nothing from tests/; tests/agent.py adds the in-process tier on top.)

Routing lines are run through a real shell from the project directory, as a harness
would; the agent's own work goes through `plan` commands.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from shared.routing import quote

BIN = Path(sys.executable).parent  # the console scripts of the Python running this


class Output:
    """One step's printed text, split into its parts."""

    def __init__(self, text: str):
        self.text = text
        lines = text.splitlines()
        # The step printed last: a gate prints the step it leads to after its own lines.
        headers = [ln for ln in lines if ln.split(" ", 1)[0] in ("PLANNER", "EXECUTOR")]
        self.header = headers[-1] if headers else (lines[0] if lines else "")
        self.state_dir = next(
            (ln.split("=", 1)[1] for ln in lines if ln.startswith("STATE_DIR=")), ""
        )
        self.next = self._after("NEXT: ")
        self.if_pass = self._after("IF PASS: ")
        self.if_fail = self._after("IF FAIL: ")
        self.done = bool(lines) and lines[-1] == "DONE"

    def _after(self, prefix: str) -> str | None:
        found = [ln[len(prefix) :] for ln in self.text.splitlines() if ln.startswith(prefix)]
        return found[-1] if found else None

    def route(self, verdict: str | None = None) -> str:
        target = {"pass": self.if_pass, "fail": self.if_fail, None: self.next}[verdict]
        assert target, f"no routing for {verdict or 'NEXT'} in:\n{self.text}"
        return target


class Agent:
    """Runs commands from the project directory through a real bash, as a harness would (the
    benchmarks, the end-to-end walks; tests/agent.py runs plain calls in-process)."""

    def __init__(self, project: Path, env: dict[str, str] | None = None):
        self.project = project
        self.env = {k: v for k, v in os.environ.items() if k not in ("PLANNER_STATE_DIR", "CI")}
        self.env["PATH"] = f"{BIN}{os.pathsep}{self.env['PATH']}"
        self.env.update(env or {})
        self.transcript: list[str] = []

    def shell(
        self, command: str, code: int = 0, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        done = self.run(command, input)
        self.transcript.append(f"$ {command}\n{done.stdout}{done.stderr}")
        assert done.returncode == code, (command, done.returncode, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr
        return done

    def run(self, command: str, input: str | None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", command],
            cwd=self.project,
            env=self.env,
            capture_output=True,
            text=True,
            input=input,
            timeout=120,
        )

    def step(self, command: str, code: int = 0) -> Output:
        """Run a step command (a routing line) and parse what it printed."""
        return Output(self.shell(command, code).stdout)

    def plan(
        self, *args: str, code: int = 0, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        return self.shell(" ".join(["plan", *map(_quote, args)]), code, input)

    def apply(self, ops: list[dict[str, Any]]) -> list[str]:
        """The ids the batch created, in order (one per stdout line)."""
        return self.plan("apply", "-", input=json.dumps(ops)).stdout.split()

    def judge(self, ops: list[dict[str, Any]], verdict: str, code: int = 0) -> Output:
        """A review's records with the gate's verdict in one call (`plan apply --verdict`):
        what the gate and the step it leads to printed."""
        done = self.plan("apply", "--verdict", verdict, "-", code=code, input=json.dumps(ops))
        return Output(done.stdout)


def _quote(word: str) -> str:
    return quote(word)
