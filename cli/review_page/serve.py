"""`plan review open`: serve the page on 127.0.0.1 with fresh secrets; `plan review wait`:
block until the person decides, then give the routing line for their verdict."""

from __future__ import annotations

import logging
import secrets
import socket
import sys
import threading
import time
import webbrowser

import uvicorn

from cli.review_page.app import POLL_SECONDS, create_app
from shared.status import current_routing
from shared.workflow import route_argv
from state.errors import PreconditionFailed, Refused
from state.routes import EXECUTE
from state.vocab import ENDED
from state.vocab import SessionStatus as S

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Literal

    from state.storage.documents import Session
    from state.storage.store import Store

HOST = "127.0.0.1"  # never another interface: the page can approve a plan


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (port 0: any free one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as e:
        sock.close()
        raise PreconditionFailed(f"--port {port}: cannot listen on {HOST} ({e.strerror})") from None
    sock.listen(64)
    return sock


def open_page(
    store: Store,
    port: int,
    open_browser: bool,
    say: Callable[[str], None],
    verbose: bool = False,
    wait: bool = False,
) -> list[str] | None:
    """Serve the session's review page until interrupted; print its URL first. The server's
    own log (requests, malformed connections) reaches the terminal only when `verbose`. With
    `wait`, serve until the person decides the round now open, then stop and return the
    routing argv of their verdict (as wait_for_verdict does)."""
    if wait:
        open_round(store)  # refused before serving when there is nothing to wait for
    sock = bind(port)
    port = sock.getsockname()[1]
    token, csrf = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
    url = f"http://{HOST}:{port}/?token={token}"
    stopping = threading.Event()
    app = create_app(store.dir, token, csrf, port, stopping)
    say(url)
    until = "the verdict (then it stops)" if wait else "Ctrl-C"
    sys.stderr.write(
        f"Serving the review page of {store.dir} at {url}\n"
        f"Only this URL opens it (the token is new each run). Serving until {until}.\n"
    )
    if open_browser:
        webbrowser.open(url)
    config = uvicorn.Config(
        app,
        log_level="info" if verbose else "error",
        timeout_graceful_shutdown=1,
        lifespan="off",
        access_log=verbose,
    )
    server = uvicorn.Server(config)
    decided: list[list[str] | BaseException] = []
    if wait:

        def watch() -> None:
            try:
                decided.append(wait_for_verdict(store, 0, stop=lambda: server.should_exit))
            except BaseException as e:  # handed to the caller below
                decided.append(e)
            stop(server, stopping, verbose)  # the page answered the person's request first

        threading.Thread(target=watch, daemon=True).start()
    server.run(sockets=[sock])
    if not decided:
        return None  # interrupted before a verdict
    if isinstance(decided[0], BaseException):
        raise decided[0]
    return decided[0]


def stop(server: uvicorn.Server, stopping: threading.Event, verbose: bool) -> None:
    """Stop serving after the verdict: open event streams end first (they poll `stopping`),
    so nothing is cancelled; unless `verbose`, the server says nothing while it shuts down
    (a browser that holds a connection open still costs no traceback in the agent's output)."""
    stopping.set()
    if not verbose:
        logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)
    time.sleep(2 * POLL_SECONDS)  # the streams see the flag at their next poll
    server.should_exit = True


def open_round(store: Store) -> Session:
    """The session, when a plan or a result is in review, or the plan approved (a verdict to
    report); else exit 3."""
    session = store.read("session")
    if session["status"] not in (S.REVIEW, S.RESULT_REVIEW) and not session["approval"]:
        raise PreconditionFailed(
            f"{store.path('session')}: status {session['status']}: no plan in review to wait "
            "for (planner step 11 puts it there)"
        )
    return session


def wait_for_verdict(
    store: Store, timeout: int, poll: float = 0.2, stop: Callable[[], bool] | None = None
) -> list[str]:
    """The routing argv once the open review round is decided (timeout 0: no limit); for a
    result in review, once the person decides it ([] when they accepted).

    PreconditionFailed (exit 3) when no plan is in review or the time runs out (or `stop`
    says to give up); Refused (exit 4) when the verdict cancelled the session.
    """
    session = open_round(store)
    if session["status"] == S.RESULT_REVIEW:
        session = decided(store, session, "result_reviews", "the result", timeout, poll, stop)
        if session["status"] == S.COMPLETED:
            return []
        if session["status"] in ENDED:
            raise Refused(f"the session is {session['status']}: {session['reason'] or 'no reason'}")
        return current_routing(store, session).next or ["planner", "status"]
    if session["status"] == S.COMPLETED and session["result_reviews"]:
        return []  # the result was accepted: nothing follows
    if not session["approval"]:
        session = decided(store, session, "reviews", "the plan", timeout, poll, stop)
    if session["approval"]:
        return route_argv(EXECUTE, store.dir)
    if session["status"] == S.DESIGN:  # rejected: where the workflow's table sends it
        return current_routing(store, session).next or ["planner", "status"]
    raise Refused(f"the session is {session['status']}: {session['reason'] or 'no reason'}")


def decided(
    store: Store,
    session: Session,
    rounds: Literal["reviews", "result_reviews"],
    what: str,
    timeout: int,
    poll: float,
    stop: Callable[[], bool] | None,
) -> Session:
    """The session once the person decides the round now open: a new round on record, or the
    session out of review (a result round once accepted: the session completed)."""
    status = session["status"]
    round_number = len(session[rounds])
    deadline = time.monotonic() + timeout if timeout else None
    while session["status"] == status and len(session[rounds]) == round_number:
        if stop is not None and stop():
            raise PreconditionFailed("the review page stopped before a verdict")
        if deadline is not None and time.monotonic() >= deadline:
            raise PreconditionFailed(
                f"no verdict within {timeout}s: {what} is still in review "
                "(run plan review wait again, or ask in the chat)"
            )
        time.sleep(poll)
        session = store.read("session")
    return session
