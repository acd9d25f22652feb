"""`plan mcp` before the plugin's Python environment exists (standard library only): answer the
client at once over stdio, make the environment, then hand over to the real companion
(docs/design.md, "The companion in a first session").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO, Any

TOOL = "companion_status"
REPLAYED = "planner-mcp-wait-initialize"  # the id of the replayed initialize: its answer is ours
POLL_S = 1.0


class Relay:
    """The stand-in, then the pipe to the real server."""

    def __init__(
        self,
        args: list[str],
        out: IO[str],
        data: str,
        ready: Callable[[], str | None],
        failed: Callable[[float], str],
    ) -> None:
        self.args, self.out, self.data = args, out, data
        self.ready, self.failed = ready, failed
        self.lock = threading.Lock()  # one writer on stdout; the switch to the real server
        self.child: subprocess.Popen[str] | None = None
        self.initialize: dict[str, Any] = {}
        self.greeted = threading.Event()  # the client's initialize has come
        self.log = os.path.join(self.data, "bootstrap.log")
        self.started = time.time()
        self.failure = ""
        self.closing = False  # the client closed stdin: the relay ends the real server

    def status(self) -> str:
        if self.failure:
            return f"planner's review companion cannot start: {self.failure}"
        return (
            "planner's review companion is starting: its Python environment is being made"
            f" (log: {self.log}). Its tools (session_status, show_plan, search_plan, ...) appear"
            " here by themselves once it is ready; call this tool again to see where it stands."
        )

    def answer(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The stand-in's answer to a client message (None for a notification)."""
        method, ident = message.get("method"), message.get("id")
        if ident is None:
            return None
        result: dict[str, Any]
        if method == "initialize":
            self.initialize = message
            self.greeted.set()
            params = message.get("params") or {}
            result = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "planner", "version": "starting"},
                "instructions": self.status(),
            }
        elif method == "tools/list":
            schema = {"type": "object", "properties": {}}
            tool = {"name": TOOL, "description": self.status(), "inputSchema": schema}
            result = {"tools": [tool]}
        elif method == "tools/call":
            text = self.status()
            result = {"content": [{"type": "text", "text": text}], "isError": bool(self.failure)}
        elif method in ("resources/list", "prompts/list", "resources/templates/list"):
            key = "resourceTemplates" if "templates" in method else method.split("/")[0]
            result = {key: []}
        elif method == "ping":
            result = {}
        else:
            error = {"code": -32601, "message": f"{method}: not until the companion has started"}
            return {"jsonrpc": "2.0", "id": ident, "error": error}
        return {"jsonrpc": "2.0", "id": ident, "result": result}

    def from_client(self, line: str) -> None:
        with self.lock:
            if self.child is not None and self.child.stdin is not None:
                self.child.stdin.write(line if line.endswith("\n") else line + "\n")
                self.child.stdin.flush()
                return
            try:
                message = json.loads(line)
            except ValueError:
                return
            if isinstance(message, dict):
                reply = self.answer(message)
                if reply is not None:
                    send(self.out, reply)

    def watch(self) -> None:
        """Wait for the environment (or its failure), then switch to the real server."""
        while not (env := self.ready()):
            self.failure = self.failed(self.started)
            if self.failure:
                return
            time.sleep(POLL_S)
        plan = os.path.join(env, "bin", "plan")
        child = subprocess.Popen(
            [plan, *self.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
            env={**os.environ, "PLANNER_DATA_DIR": self.data},
        )
        assert child.stdin is not None and child.stdout is not None
        self.greeted.wait()
        with self.lock:
            send(child.stdin, {**self.initialize, "id": REPLAYED})
            if not answered(child.stdout):
                self.failure = f"{plan} {' '.join(self.args)} exited as it started (its stderr)"
                return
            send(child.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
            self.child = child
            send(self.out, {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        for line in child.stdout:
            with self.lock:
                self.out.write(line)
                self.out.flush()
        code = child.wait()
        if not self.closing:  # the real server ended by itself: so does its relay
            os._exit(code)


def send(out: IO[str], message: dict[str, Any]) -> None:
    out.write(json.dumps(message) + "\n")
    out.flush()


def answered(lines: IO[str]) -> bool:
    """Whether the real server answered the replayed initialize (read up to that answer)."""
    for line in lines:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("id") == REPLAYED:
            return "result" in message
    return False


def serve(
    args: list[str],
    data: str,
    ready: Callable[[], str | None],
    start: Callable[[], object],
    failed: Callable[[float], str],
) -> int:
    """Run the stand-in on stdin/stdout until the client closes stdin: `ready()` is the
    environment once made, `start()` starts making it, `failed(t)` why a build failed since
    t ("" if none did) (hooks/bootstrap.py gives them, and this file imports nothing of it)."""
    relay = Relay(args, sys.stdout, data, ready, failed)
    try:
        start()
    except Exception as e:  # say it through the tool, as the launcher would on stderr
        relay.failure = f"{e}"
    else:  # nothing is being made when start() failed: no watch to overwrite why
        threading.Thread(target=relay.watch, daemon=True).start()
    try:
        for line in sys.stdin:
            if line.strip():
                relay.from_client(line)
    except OSError:  # the real server's stdin closed: it is gone (watch() ends the process)
        pass
    relay.closing = True
    if relay.child is not None:
        relay.child.terminate()
        relay.child.wait()
    return 0
