"""`plan mcp`: the review companion, an MCP server over stdio (cli/mcp_server.py)."""

from __future__ import annotations

import sys

import click

from cli.base import PlanCommand, open_store
from state.errors import UsageError


@click.command("mcp", cls=PlanCommand)
def mcp_command(state_dir: str | None, as_json: bool) -> None:
    """Serve the review companion over stdio for an MCP client (Claude Desktop, Claude Code,
    an IDE): read-only tools over the session (--state-dir, else the active one; any of
    `plan list` by id) and draft_feedback, a draft the person sends themselves. No tool
    approves, rejects, accepts or amends. Runs until the client disconnects."""
    from cli.mcp_start import serve  # the MCP SDK loads when a client needs it

    if state_dir:  # a session named on the command line must exist; the active one may come
        open_store(state_dir)
    if not hasattr(sys.stdin, "buffer") or not hasattr(sys.stdout, "buffer"):
        # MCP speaks bytes over the process's own pipes (a client starts it as a subprocess)
        raise UsageError("mcp: standard input and output are not byte streams to serve on")
    serve(state_dir)
