"""`plan mcp`'s start: a client's `initialize` and `tools/list` answered with the MCP SDK's own
earlier answers before the SDK is loaded (any `mcp` module costs ~70x `python -c pass`); the
first other message loads it and hands it the connection, every line so far replayed and its
second answer to those already answered dropped (docs/design.md, "The companion's start").
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import suppress
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

ANSWERS = os.path.join(sys.prefix, "planner-mcp.json")
KEPT = 8  # clients (initialize params) remembered; the oldest goes first
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def identity() -> list[object]:
    """What the SDK's answers depend on: the tools' module, the plugin's version, the SDK, the
    models' library, Python; stat() of each, cheaper than reading them."""
    from importlib.machinery import PathFinder

    files = [os.path.join(ROOT, "cli", "mcp_server.py"), os.path.join(ROOT, "pyproject.toml")]
    for package in ("mcp", "mcp_types", "pydantic", "pydantic_core"):
        spec = PathFinder.find_spec(package)
        files.append(spec.origin if spec and spec.origin else package)
    stamp: list[object] = [sys.version]
    for path in files:
        try:
            st = os.stat(path)
            stamp.append([path, st.st_size, st.st_mtime_ns])
        except OSError:
            stamp.append([path, None])
    return stamp


def key(params: Any) -> str:
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


class Answers:
    """The SDK's answers kept from earlier connections: {initialize params: {"initialize":
    result, "tools/list": {params: result}}}, valid for one identity()."""

    def __init__(self) -> None:
        self.identity = identity()
        self.by_client = self.read()

    def read(self) -> dict[str, dict[str, Any]]:
        try:
            with open(ANSWERS, encoding="utf-8") as f:
                kept = json.load(f)
            if kept["identity"] == self.identity:
                return dict(kept["answers"])
        except (OSError, ValueError, KeyError, TypeError):
            pass  # none kept yet, or unreadable: the SDK answers and they are kept anew
        return {}

    def get(self, client: str | None, method: str, params: str) -> Any:
        entry = self.by_client.get(client or params, {})
        return entry.get(method) if method == "initialize" else entry.get(method, {}).get(params)

    def keep(self, client: str, method: str, params: str, result: Any) -> None:
        self.by_client = {**self.read(), **self.by_client}  # what other servers kept meanwhile
        entry = self.by_client.pop(client, {})
        if method == "initialize":
            entry["initialize"] = result
        else:
            entry.setdefault(method, {})[params] = result
        self.by_client[client] = entry  # the newest last
        while len(self.by_client) > KEPT:
            del self.by_client[next(iter(self.by_client))]
        tmp = f"{ANSWERS}.{os.getpid()}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump({"identity": self.identity, "answers": self.by_client}, f)
            os.replace(tmp, ANSWERS)
        except OSError:  # a read-only environment: the SDK answers every start
            with suppress(OSError):
                os.unlink(tmp)


def lines(fd: int, pending: bytearray) -> Iterator[bytes]:
    """The lines read from fd, after those in `pending`; what was read past the line last
    given stays there (a handover goes on reading from it)."""
    while True:
        end = pending.find(b"\n")
        if end >= 0:
            line = bytes(pending[: end + 1])
            del pending[: end + 1]
            yield line
            continue
        data = os.read(fd, 65536)
        if not data:
            if pending:  # a last line without its newline, read as the SDK reads it
                yield bytes(pending)
                pending.clear()
            return
        pending += data


def write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def serve(state_dir: str | None) -> None:
    """Answer from what the SDK answered before while the client asks only that; else hand
    over. The SDK's rule kept: handlers' stray output and input miss the wire (fd 0 reads
    the null device, fd 1 writes to stderr, while serving)."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    with suppress(OSError):  # best effort, as the SDK's own: the wire is served either way
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)
    answers = Answers()
    read: list[bytes] = []
    answered: set[str] = set()
    client: str | None = None  # the initialize params answered
    pending = bytearray()
    for line in lines(wire_in, pending):
        read.append(line)
        try:
            message = json.loads(line)
            method, params = message.get("method"), key(message.get("params"))
        except (ValueError, AttributeError):
            break
        if method == "notifications/initialized" and "id" not in message and client:
            continue
        known = method in ("initialize", "tools/list") and "id" in message
        if known and (method == "initialize") == (client is None):
            result = answers.get(client, method, params)
            if result is not None:
                reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
                write_all(wire_out, (json.dumps(reply, separators=(",", ":")) + "\n").encode())
                answered.add(json.dumps(message["id"]))
                client = client or params
                continue
        break
    else:
        return  # the client closed the connection: nothing more to answer
    wire = Wire(wire_out, answered, answers)
    from cli.mcp_server import serve_streams  # the SDK: ~1.5 s to import

    serve_streams(state_dir, Replay(read, lines(wire_in, pending), wire), wire)


class Replay:
    """The SDK's input, line by line: the messages read so far, then the rest of the
    client's; each request is shown to the Wire, which keeps the SDK's answers to it."""

    def __init__(self, head: list[bytes], rest: Iterator[bytes], wire: Wire):
        self.head, self.rest, self.wire = head, rest, wire

    def readline(self) -> str:
        line = self.head.pop(0) if self.head else next(self.rest, b"")
        with suppress(ValueError):  # the SDK answers a malformed line as it answers it
            self.wire.asking(json.loads(line))
        return line.decode("utf-8", errors="replace")


class Wire:
    """The SDK's output: each line it writes goes to the client, except its second answer to
    a request answered here; its answers to initialize and tools/list are kept."""

    def __init__(self, fd: int, answered: set[str], answers: Answers):
        self.fd, self.answered, self.answers = fd, answered, answers
        self.asked: dict[str, tuple[str, str]] = {}  # request id -> (method, params)
        self.client: str | None = None
        self.buffer = ""

    def asking(self, message: Any) -> None:
        method = message.get("method") if isinstance(message, dict) else None
        if method in ("initialize", "tools/list") and "id" in message:
            params = key(message.get("params"))
            if method == "initialize" and self.client is None:
                self.client = params
            self.asked[json.dumps(message["id"])] = (method, params)

    def write(self, text: str) -> int:
        self.buffer += text
        *done, self.buffer = self.buffer.split("\n")
        for line in done:
            self.line(line)
        return len(text)

    def flush(self) -> None:
        pass  # each line is written whole as it comes

    def line(self, text: str) -> None:
        try:
            message = json.loads(text)
            ident = None if "method" in message else json.dumps(message["id"])
        except (ValueError, KeyError, TypeError):
            ident = None
        if ident is not None and ident in self.answered:
            self.answered.discard(ident)  # answered here before the SDK was loaded
            return
        asked = self.asked.pop(ident, None) if ident is not None else None
        if asked and "result" in message and self.client:
            self.answers.keep(self.client, asked[0], asked[1], message["result"])
        write_all(self.fd, (text + "\n").encode())
