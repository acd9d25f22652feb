"""The benchmarks' scripted agent (bench/agent.py) with the tests' quick tier: a command that
only calls plan, planner or executor with quoted words runs in this process
(tests/inprocess.py) unless `process` is true (the end-to-end walks, a real shell on purpose).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench import agent
from bench.agent import Output
from tests.inprocess import run_script, simple_command

__all__ = ["Agent", "Output"]


class Agent(agent.Agent):
    def __init__(self, project: Path, env: dict[str, str] | None = None, process: bool = False):
        super().__init__(project, env)
        self.process = process

    def run(self, command: str, input: str | None) -> subprocess.CompletedProcess[str]:
        words = None if self.process else simple_command(command)
        if words:
            return run_script(*words, cwd=self.project, environ=self.env, input=input)
        return super().run(command, input)
