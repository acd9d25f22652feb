"""The review page's web app: shows a session's plan (and, after execution, its result) and
records the person's verdict through the same state operations as `plan review
approve|reject` and `plan result accept|request-changes`.

Every request must name the run's token, come to 127.0.0.1 with the right Host and, when it
says where it comes from, the right Origin; every POST carries the page's CSRF token.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import os
import re
import threading

from markdown_it import MarkdownIt
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from cli import workflows
from cli.review_page import view
from shared import review_reads
from shared.paths import open_session
from shared.routing import argv_of, command
from state.errors import PlannerError, UsageError
from state.ops import result_ops, review_ops
from state.ops.result_ops import StaleResult
from state.ops.review_ops import StaleApproval
from state.validation.limits import (
    BODY_MAX,
    COMMENT_MAX,
    COMMENTS_MAX,
    FEEDBACK_MAX,
    NAME_MAX,
    TooLarge,
    check_text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from typing import Any

    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from state.rules.session_store import Transaction
    from state.storage.documents import ResultComment, ReviewComment

HERE = os.path.dirname(os.path.abspath(__file__))
# The CLI's words for what the page calls by its own names: an error the page shows names
# the page's fields, not the command's options (state/ writes one message for both).
PAGE_WORDS = (
    (re.compile(r"^(?:review|result) (?:approve|reject|accept|request-changes): "), ""),
    (
        re.compile(r"the feedback, a comment or the draft is required"),
        "a comment or the overall feedback is required",
    ),
    (re.compile(r"plan review reject\b"), "Request changes on this page"),
    (re.compile(r"^comment (\S+?):"), r"the comment on \1:"),
    (re.compile(r"^feedback\b"), "the overall feedback"),
    (re.compile(r"^comment\b"), "a comment"),
    (re.compile(r"^by\b"), "your name"),
    (re.compile(r"^expect_sha256\b"), "the page's hash"),
)
POLL_SECONDS = 0.25  # how often the event stream looks at the session's files
HEARTBEAT_SECONDS = 15.0
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
)


class Secrets:
    """What a request must carry: the run's token (in the URL) and, for a POST, the CSRF token."""

    def __init__(self, token: str, csrf: str, port: int):
        self.token, self.csrf, self.port = token, csrf, port
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{host}" for host in self.hosts}

    def refusal(self, request: Request) -> str:
        """Why the request is refused ("" when it is not)."""
        if request.headers.get("host", "") not in self.hosts:
            return "wrong Host"
        if not hmac.compare_digest(request.query_params.get("token", ""), self.token):
            return "missing or wrong token"
        origin = request.headers.get("origin")
        if origin is not None and origin not in self.origins:
            return "wrong Origin"
        if request.method not in ("GET", "HEAD"):
            if origin is None:
                return "a POST must say its Origin"
            if not hmac.compare_digest(request.headers.get("x-csrf-token", ""), self.csrf):
                return "missing or wrong CSRF token"
        return ""


class Gate:
    """ASGI middleware: refuse (403) what Secrets refuses; add the security headers."""

    def __init__(self, app: ASGIApp, secrets: Secrets):
        self.app, self.secrets = app, secrets

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        reason = self.secrets.refusal(Request(scope))
        if reason:
            await PlainTextResponse(f"403 Forbidden: {reason}", 403)(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    *message.get("headers", []),
                    (b"content-security-policy", CSP.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"cache-control", b"no-store"),
                ]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def markdown() -> Any:
    """Plan text as markdown with raw HTML escaped: plan text is never trusted as HTML.

    Underscores never emphasise (`__init__.py`, `snake_case` stay literal; `*x*` still
    does), and an image is a link to it: the page loads nothing from elsewhere."""
    md = MarkdownIt("commonmark", {"html": False, "linkify": False})
    emphasis = md.inline.ruler.__rules__[md.inline.ruler.__find__("emphasis")].fn

    def no_underscore(state: Any, silent: bool) -> bool:
        return state.src[state.pos] != "_" and bool(emphasis(state, silent))

    md.inline.ruler.at("emphasis", no_underscore)

    def image(renderer: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        token = tokens[idx]
        alt = Markup.escape(token.content or "image")
        src = token.attrGet("src") or ""
        if not src.startswith(("http://", "https://")):
            return f'<span class="image">[image: {alt}]</span>'
        return (
            f'<a class="image" href="{Markup.escape(src)}" rel="noopener noreferrer">'
            f"[image: {alt}]</a>"
        )

    md.add_render_rule("image", image)

    def render(text: str | None) -> Markup:
        return Markup(md.render(text or ""))

    return render


LIMITS = {
    "name": NAME_MAX,
    "comment": COMMENT_MAX,
    "comments": COMMENTS_MAX,
    "feedback": FEEDBACK_MAX,
}


class Refusal(Exception):
    """Refusal(error, status): a request the page answers with {"error": error} and that
    HTTP status, nothing recorded."""


def refused(request: Request, e: Exception) -> JSONResponse:
    error, status = e.args
    return JSONResponse({"error": error}, status)


class Page:
    """The routes of one session's page. Once `stopping` is set (the server is about to exit),
    open event streams end, so the server stops without cancelling them."""

    def __init__(self, state_dir: str, token: str, csrf: str, stopping: threading.Event):
        self.token, self.csrf, self.stopping = token, csrf, stopping
        workflows.register_all()  # a verdict records the routing it leads to, as the CLI's does
        self.store = open_session(state_dir)  # the CLI's store: settled on every commit
        self.templates = Jinja2Templates(directory=os.path.join(HERE, "templates"))
        self.templates.env.filters["md"] = markdown()

    def render(self, request: Request, name: str) -> HTMLResponse:
        model = view.page_model(self.store)
        page = {**model, "token": self.token, "csrf": self.csrf, "limits": LIMITS}
        response = self.templates.TemplateResponse(request, name, page)
        response.headers["x-plan-sha256"] = model["sha256"]
        result = model.get("result")
        if result:
            response.headers["x-result-sha256"] = result["sha256"]
        return response

    async def index(self, request: Request) -> HTMLResponse:
        return self.render(request, "page.html")

    async def content(self, request: Request) -> HTMLResponse:
        return self.render(request, "_content.html")

    async def compare(self, request: Request) -> HTMLResponse:
        rev_a = request.query_params.get("a", "")
        rev_b = request.query_params.get("b", "current")
        try:
            changes = review_reads.between(self.store, rev_a, rev_b)
        except PlannerError as e:
            return HTMLResponse(f"<p>{Markup.escape(e.message)}</p>", 400)
        return self.templates.TemplateResponse(
            request, "_changes.html", {"changes": changes, "a": rev_a, "b": rev_b}
        )

    async def events(self, request: Request) -> StreamingResponse:
        async def stream() -> AsyncIterator[str]:
            seen = view.signature(self.store)
            quiet = 0.0
            yield "retry: 1000\n\n"
            while not self.stopping.is_set() and not await request.is_disconnected():
                await asyncio.sleep(POLL_SECONDS)
                if self.stopping.is_set():
                    return  # the server exits: the browser reconnects to the next one
                now = view.signature(self.store)
                if now != seen:
                    seen, quiet = now, 0.0
                    yield "event: change\ndata: changed\n\n"
                quiet += POLL_SECONDS
                if quiet >= HEARTBEAT_SECONDS:
                    quiet = 0.0
                    yield ": still here\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream")

    async def verdict(self, name: str, act: Callable[[Transaction], None]) -> JSONResponse:
        """The person's verdict through the same state operation and transaction as the CLI's
        `plan review approve|reject` and `plan result accept|request-changes` (`act` calls it
        with the page's arguments: the page adds nothing of its own)."""

        def record() -> Transaction:
            with self.store.transaction(name) as tx:
                act(tx)
            return tx

        try:
            tx = await asyncio.to_thread(record)
        except TooLarge as e:
            return JSONResponse({"error": page_words(e.message)}, 413)
        except (StaleApproval, StaleResult) as e:
            return JSONResponse({"error": page_words(e.message), "stale": True}, 409)
        except PlannerError as e:
            status = 400 if isinstance(e, UsageError) else 409
            return JSONResponse({"error": page_words(e.message)}, status)
        return JSONResponse({"next": command(argv_of(tx.next)) if tx.next else "", "told": tx.told})

    async def approve(self, request: Request) -> JSONResponse:
        by, sha = await signed(request, "plan", "approve")
        return await self.verdict(
            "review approve",
            lambda tx: review_ops.review_approve(tx, by=by, sign=False, expect_sha256=sha),
        )

    async def accept(self, request: Request) -> JSONResponse:
        by, sha = await signed(request, "result", "accept")
        return await self.verdict(
            "result accept", lambda tx: result_ops.result_accept(tx, by=by, expect_sha256=sha)
        )

    async def request_changes(self, request: Request) -> JSONResponse:
        body = await json_body(request)
        sha = text_field(body, "sha256") or None
        on_plan: list[ReviewComment] = [
            {"anchor": c["anchor"], "line": c["line"], "text": c["text"]}
            for c in comment_records(body)
        ]
        return await self.verdict(
            "review reject",
            lambda tx: review_ops.review_reject(
                tx,
                feedback=text_field(body, "feedback") or None,
                comment=on_plan,
                draft=False,
                by=text_field(body, "by").strip() or None,
                expect_sha256=sha,
            ),
        )

    async def result_changes(self, request: Request) -> JSONResponse:
        body = await json_body(request)
        sha = page_hash(body, "result")
        comments = comment_records(body)
        return await self.verdict(
            "result request-changes",
            lambda tx: result_ops.result_request_changes(
                tx,
                feedback=text_field(body, "feedback") or None,
                comment=comments,
                by=text_field(body, "by").strip() or None,
                expect_sha256=sha,
            ),
        )


def create_app(
    state_dir: str, token: str, csrf: str, port: int, stopping: threading.Event | None = None
) -> Starlette:
    """The app for one session and one run's secrets; `stopping` as Page takes it."""
    page = Page(state_dir, token, csrf, stopping or threading.Event())
    app = Starlette(
        routes=[
            Route("/", page.index),
            Route("/content", page.content),
            Route("/compare", page.compare),
            Route("/events", page.events),
            Route("/approve", page.approve, methods=["POST"]),
            Route("/request-changes", page.request_changes, methods=["POST"]),
            Route("/accept", page.accept, methods=["POST"]),
            Route("/result/request-changes", page.result_changes, methods=["POST"]),
            Mount("/static", StaticFiles(directory=os.path.join(HERE, "static")), name="static"),
        ],
        exception_handlers={Refusal: refused},
    )
    app.add_middleware(Gate, secrets=Secrets(token, csrf, port))
    return app


async def signed(request: Request, what: str, act: str) -> tuple[str, str]:
    """Who approves a plan or accepts a result, and the hash the page showed them."""
    body = await json_body(request)
    sha = page_hash(body, what)
    by = text_field(body, "by").strip()
    if not by:
        raise Refusal(f"your name is required to {act}", 400)
    try:
        check_text("your name", by, NAME_MAX)
    except TooLarge as e:
        raise Refusal(e.message, 413) from None
    return by, sha


def page_hash(body: dict[str, object], what: str) -> str:
    """The hash of the plan or result the page showed (`what`), which a verdict must name."""
    sha = body.get("sha256")
    if not isinstance(sha, str) or len(sha) != 64:
        raise Refusal(f"the page's {what} hash (sha256) is missing", 400)
    return sha


def comment_records(body: dict[str, object]) -> list[ResultComment]:
    """The page's comments as the records state/ takes: anchor, file (only on a result's
    commit line), line and text."""
    given = body.get("comments") or []
    if not isinstance(given, list):
        raise Refusal("comments must be a list", 400)
    comments: list[ResultComment] = []
    for c in given:
        if not isinstance(c, dict) or not isinstance(c.get("text"), str):
            raise Refusal("a comment needs anchor and text", 400)
        path = c.get("file") if isinstance(c.get("file"), str) and c.get("file") else None
        line = c["line"] if isinstance(c.get("line"), int) and c["line"] > 0 else None
        anchor = str(c.get("anchor", "")).strip().upper()
        comments.append({"anchor": anchor, "file": path, "line": line, "text": c["text"]})
    return comments


def text_field(body: dict[str, object], name: str) -> str:
    value = body.get(name)
    return value if isinstance(value, str) else ""


async def json_body(request: Request) -> dict[str, object]:
    """The request's JSON object ({} when it is not one); a body over BODY_MAX bytes is
    refused (413) before it is read whole."""
    declared = request.headers.get("content-length", "")
    too_large = Refusal(f"the request is over {BODY_MAX:,} bytes; nothing was stored", 413)
    if declared.isdigit() and int(declared) > BODY_MAX:
        raise too_large
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > BODY_MAX:
            raise too_large
    try:
        body = json.loads(raw)
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def page_words(message: str) -> str:
    """`message` with the CLI's option names said as the page says them."""
    for pattern, words in PAGE_WORDS:
        message = pattern.sub(words, message)
    return message
