"""The review companion: `plan mcp`, an MCP server over stdio (the official `mcp` SDK) whose
tools read a session for the person reviewing it; `draft_feedback` stores a draft they send
themselves, and no tool gives a verdict (docs/design.md, "The review companion").
"""

from __future__ import annotations

import functools
import inspect
import json
import os
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Annotated, Any, get_type_hints

import anyio
import pydantic
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.stdio import stdio_server
from mcp.types import ToolAnnotations
from pydantic import Field

from cli import workflows
from cli.base import open_store
from cli.commands import reading
from cli.commands.session import session_rows
from cli.comments import review_comment
from shared import review_reads, status
from shared.paths import active_session_dir, planner_home
from shared.plan_md import for_session
from state.errors import PlannerError, UsageError
from state.ops import drafts, review_ops
from state.repo import session_git

if TYPE_CHECKING:
    from cli.commands.session import DamagedRow, SessionRow
    from state.rules.session_store import Store

OUTPUT_MAX = 100_000  # characters of one tool result; longer ones are cut and say so
Session = Annotated[
    str | None, Field(description="A session id from list_sessions; default: the active one.")
]
Commit = Annotated[str, Field(description="One of the session's commits, as git_log lists it.")]
FilePath = Annotated[str | None, Field(description="Only this file (relative to the project).")]
INSTRUCTIONS = """\
Tools over a planner session (a plan-first workflow for coding agents), to help the person
review a plan or its result: read and search the plan, the questions and answers, the review
rounds and the gates' findings, the plan's history compared by meaning, the audit trail, and
the commits the executor made. They change nothing, except draft_feedback, which stores a
draft of review feedback that the person reads and sends themselves (the review page fills
its form with it; `plan review reject --draft` sends it). Nothing here approves, rejects,
accepts or amends a plan: those are the person's acts."""
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
DRAFTS = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)


class Sessions:
    """The sessions the server reads: the one `--state-dir` (or the active one) names, or
    any of `plan list` by id."""

    def __init__(self, state_dir: str | None):
        self.state_dir = state_dir

    def home(self) -> str:
        if self.state_dir:
            return os.path.dirname(os.path.abspath(self.state_dir))
        return planner_home()

    def rows(self) -> list[SessionRow | DamagedRow]:
        return session_rows(self.home(), active_session_dir())

    def open(self, session: str | None) -> Store:
        if not session:
            return open_store(self.state_dir)
        names = [r["session"] for r in self.rows()]
        if session not in names:
            listed = ", ".join(names) or "none"
            raise UsageError(f"session {session[:80]!r}: not one of plan list ({listed})")
        return open_store(os.path.join(self.home(), session))


def text_result(value: Any) -> str:
    """A tool's answer as text (JSON for records), cut at OUTPUT_MAX characters."""
    text = value if isinstance(value, str) else json.dumps(value, indent=1, ensure_ascii=False)
    if len(text) > OUTPUT_MAX:
        more = len(text) - OUTPUT_MAX
        text = text[:OUTPUT_MAX] + f"\n… ({more:,} more characters cut: ask for less, e.g. a path)"
    return text


def answer(read: Callable[[], Any]) -> str:
    """Run a tool's body: planner's errors become a tool error the client shows (not a crash)."""
    try:
        return text_result(read())
    except PlannerError as e:
        detail = "; ".join(f.line() for f in e.findings)
        raise ToolError(f"{e.message}{': ' + detail if detail else ''}") from None


def create_server(state_dir: str | None = None) -> MCPServer:
    """The server with its tools, reading the session `state_dir` names by default."""
    workflows.register_all()  # the store's commits keep the routing current, as the CLI's do
    sessions = Sessions(state_dir)
    server = MCPServer(
        "planner", instructions=INSTRUCTIONS, log_level="WARNING", version=package_version()
    )
    reading: list[Callable[..., Any]] = [list_sessions, session_status, show_plan, render_plan]
    reading += [search_plan, questions, review_rounds, history, compare, audit_log]
    reading += [git_log, git_show, git_diff]
    for tool in [*reading, draft_feedback]:
        marks = DRAFTS if tool is draft_feedback else READ_ONLY
        server.add_tool(bind(tool, sessions), annotations=marks, structured_output=False)
        refuse_unknown(server, tool.__name__)
    return server


def refuse_unknown(server: MCPServer, name: str) -> None:
    """Arguments the tool does not take are refused, naming those it takes: the SDK's
    argument model ignores them, so show_plan {"id": ...} would answer with the outline and
    compare {"a", "b"} with its defaults, as if asked something else."""
    tool = server._tool_manager.get_tool(name)  # the SDK offers no public way to the model
    if tool is None:
        return
    model = tool.fn_metadata.arg_model
    accepted = sorted(f.alias or n for n, f in model.model_fields.items())

    def known(data: Any) -> Any:
        unknown = sorted(set(data) - set(accepted)) if isinstance(data, dict) else []
        if unknown:
            takes = ", ".join(accepted) or "no arguments"
            raise ValueError(f"{name} takes no {', '.join(unknown)}; it takes: {takes}")
        return data

    strict = pydantic.create_model(
        model.__name__,
        __base__=model,
        # pydantic takes the decorated validator; its stubs type the dict as plain callables
        __validators__={"known": pydantic.model_validator(mode="before")(known)},  # type: ignore[dict-item]
    )
    tool.fn_metadata.arg_model = strict
    tool.parameters["additionalProperties"] = False  # and the schema the client sees says so


def package_version() -> str:
    try:
        return version("planner")
    except PackageNotFoundError:
        return "0"


def bind(tool: Callable[..., Any], sessions: Sessions) -> Callable[..., str]:
    """The tool with the server's sessions bound: its signature (what the client sees) loses
    the leading `sessions` parameter; the docstring is the tool's description."""

    @functools.wraps(tool)
    def call(*args: Any, **kwargs: Any) -> str:
        return answer(lambda: tool(sessions, *args, **kwargs))

    hints = get_type_hints(tool, include_extras=True)  # the SDK reads them resolved
    signature = inspect.signature(tool)
    params = [p.replace(annotation=hints[p.name]) for p in signature.parameters.values()][1:]
    call.__signature__ = signature.replace(parameters=params, return_annotation=str)  # type: ignore[attr-defined]
    return call


# -- the tools: each takes the server's sessions first, then what the client passes ----------


def list_sessions(sessions: Sessions) -> Any:
    """The project's planner sessions (as `plan list`): id, status, workflow step, age, task;
    `active` marks the one the other tools read by default."""
    return sessions.rows()


def session_status(sessions: Sessions, session: Session = None) -> Any:
    """Where a session stands (as `plan status`): its status, task, workflow and step, the
    next command, open questions and review loops."""
    store = sessions.open(session)
    return {**status.session_status(store), "task": store.read("session")["task"]}


def show_plan(sessions: Sessions, item_id: str | None = None, session: Session = None) -> Any:
    """The plan as an outline with its review rounds, or one item as JSON (as `plan show`):
    item_id is a plan id (DL-, RA-, C-, R-, D-, M-, CI-, CC-), an option (D-001/OPT-B), a
    question (Q-001), a review item (qa-001), or a section: context, overview, knowledge,
    waves."""
    store = sessions.open(session)
    if item_id:
        return reading.lookup(store, item_id.strip(), None)
    return reading.plan_outline(store)


def render_plan(sessions: Sessions, full: bool = False, session: Session = None) -> Any:
    """plan.md, the document the person approves, rendered from the plan now: each diff
    summarised by file unless full is true."""
    store = sessions.open(session)
    return for_session(store.read_or_none, compact=not full)(store.read("plan"))


def search_plan(sessions: Sessions, query: str, session: Session = None) -> Any:
    """Full-text search (case-insensitive) over the plan's items, their diffs and the
    questions and answers: each match's id, field, line (for a diff, the new-file line a
    comment anchors to) and text."""
    return review_reads.search(sessions.open(session), query)


def questions(sessions: Sessions, session: Session = None) -> Any:
    """The questions asked in discovery with their answers and the conditions attached to
    them, and which were skipped or assumed."""
    return review_reads.questions(sessions.open(session))


def review_rounds(sessions: Sessions, session: Session = None) -> Any:
    """The review rounds (verdict, by, feedback, anchored comments, the revision and hash each
    saw), the approval, the review gates' findings per phase, and unsent feedback drafts."""
    return review_reads.reviews(sessions.open(session))


def history(sessions: Sessions, session: Session = None) -> Any:
    """The plan's revisions (as `plan history`): rev, time, command, what it created."""
    return sessions.open(session).history()


def compare(
    sessions: Sessions,
    from_rev: Annotated[str | None, Field(description='r3, "current" or "round 1".')] = None,
    to_rev: Annotated[str | None, Field(description='Default: "current".')] = None,
    session: Session = None,
) -> Any:
    """The plan compared by meaning (as `plan diff`): items added, removed, changed,
    superseded, by id. from_rev/to_rev: a revision (r3), "current", or a review round
    ("round 1": what that round saw); default the previous revision and now."""
    return review_reads.compare(sessions.open(session), from_rev, to_rev)


def audit_log(
    sessions: Sessions, limit: int = 50, contains: str | None = None, session: Session = None
) -> Any:
    """The audit trail (as `plan log`): every mutation, step, verdict and blocked attempt,
    the newest `limit` records, only those holding `contains` when given."""
    return review_reads.audit(sessions.open(session), limit, contains)


def git_log(sessions: Sessions, session: Session = None) -> Any:
    """The session's commits: its base commit, then each milestone's commit and fix commits
    (milestone, author, date, subject, files changed)."""
    return session_git.log(sessions.open(session))


def git_show(
    sessions: Sessions, commit: Commit, path: FilePath = None, session: Session = None
) -> Any:
    """git show of one of the session's commits (a full id or a prefix of 7+ hex digits, as
    git_log lists them), limited to one file when path is given."""
    return session_git.show(sessions.open(session), commit, path)


def git_diff(
    sessions: Sessions,
    from_commit: Annotated[str | None, Field(description="Default: the base commit.")] = None,
    to_commit: Annotated[str | None, Field(description="Default: the newest commit.")] = None,
    path: FilePath = None,
    session: Session = None,
) -> Any:
    """git diff between two of the session's commits (default: its base and its newest
    commit: everything executed), limited to one file when path is given."""
    return session_git.diff(sessions.open(session), from_commit, to_commit, path)


def draft_feedback(
    sessions: Sessions,
    text: Annotated[str, Field(description="The overall feedback (may be empty with comments).")],
    comments: Annotated[
        list[str] | None, Field(description="'ID: text' or 'CC-nnn:LINE: text' each.")
    ] = None,
    session: Session = None,
) -> Any:
    """Store a draft of review feedback for the person to send; it sends nothing. text: the
    overall feedback; comments: 'ID: text' on an item ('DL-003: why?') or 'CC-004:7: text'
    on line 7 of a change's file, as `plan review reject --comment` takes them. The review
    page fills its form with the newest draft; `plan review reject --draft` sends it."""
    store = sessions.open(session)
    parsed = [review_comment(c) for c in comments or []]
    with store.transaction("draft feedback") as tx:
        [draft_id] = review_ops.draft_feedback(tx, text=text, comment=parsed)
    draft = next(d for d in drafts.drafts_of(store) if d["id"] == draft_id)
    return {
        "draft": draft,
        "send": "The person sends it: the review page (plan review open) shows it filled in, "
        "or `plan review reject --draft` in their terminal.",
    }


def serve_streams(state_dir: str | None, stdin: Any, stdout: Any) -> None:
    """Serve until `stdin` ends: line streams (readline, write, flush) that
    cli/mcp_start.py hands over with the connection so far replayed."""
    server = create_server(state_dir)
    lowlevel = server._lowlevel_server  # as its run_stdio_async, on streams of our own

    async def run() -> None:
        streams = stdio_server(anyio.wrap_file(stdin), anyio.wrap_file(stdout))
        async with streams as (read, write):
            await lowlevel.run(read, write, lowlevel.create_initialization_options())

    anyio.run(run)
