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
from shared.workflow import step_ref
from state.errors import PreconditionFailed, Refused
from state.routes import EXECUTE
from state.vocab import APPROVED, ENDED, ResultVerdict, ReviewVerdict
from state.vocab import SessionStatus as S

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Literal

    from state.routes import Target
    from state.rules.session_store import Store
    from state.storage.documents import Session

    Rounds = Literal["reviews", "result_reviews"]

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
) -> Target | None:
    """Serve the session's review page until interrupted; print its URL first. The server's
    own log (requests, malformed connections) reaches the terminal only when `verbose`. With
    `wait`, serve until the person decides the round now open, then stop and return the
    routing target of their verdict (as wait_for_verdict does)."""
    if wait:  # refused before serving when there is nothing to wait for
        session = store.read("session")
        rounds, is_open = the_round(store, session)
        if not is_open:  # decided before the page came up: report it, serve nothing
            return reported(store, session, rounds)
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
    decided: list[Target | BaseException] = []
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


def the_round(store: Store, session: Session, number: int | None = None) -> tuple[Rounds, bool]:
    """The review round a wait reports, as (its list, open) (docs/design.md, "A wait that
    starts late"): the round in review when one is open; else the latest round of the review
    the session was last in (the plan's, or the result's), once decided. `number` names the
    round of that review instead. Exit 3 when there is no such round."""
    status = session["status"]
    kind: Rounds | None = "reviews" if status == S.REVIEW else "result_reviews"
    if status in (S.REVIEW, S.RESULT_REVIEW):
        rounds = session["reviews"] if kind == "reviews" else session["result_reviews"]
        submitted = rounds and rounds[-1]["verdict"] == ReviewVerdict.SUBMITTED
        latest, is_open = len(rounds) + (not submitted), True
    else:
        kind, is_open = last_reviewed(session), False
        latest = len(session[kind]) if kind else 0
    if kind is None or not latest:
        raise PreconditionFailed(
            f"{store.path('session')}: status {status}: no plan in review to wait for "
            "(planner step 11 puts it there)"
        )
    if number is None or number == latest:
        return kind, is_open
    which = "plan" if kind == "reviews" else "result"
    if not 0 < number < latest:
        raise PreconditionFailed(
            f"--round {number}: no {which} review round {number} (the latest is round "
            f"{latest}: plan review wait)"
        )
    verdict = session[kind][number - 1]["verdict"]
    raise PreconditionFailed(
        f"--round {number}: {which} review round {number} was {verdict}; round {latest} "
        f"is {'open' if is_open else 'the latest'} (plan review wait)"
    )


def last_reviewed(session: Session) -> Rounds | None:
    """The review the session was last in, none open: the result's once completed; the plan's
    once approved (the plan's approval, the amendment's too) or rejected; else the result's
    when it was sent back (an amendment plans again)."""
    plan, result = session["reviews"], session["result_reviews"]
    if session["status"] == S.COMPLETED and result:
        return "result_reviews"
    if session["status"] in APPROVED:
        return "reviews" if plan else None
    if plan and plan[-1]["verdict"] == ReviewVerdict.REJECTED:
        return "reviews"
    sent_back = result and result[-1]["verdict"] == ResultVerdict.CHANGES_REQUESTED
    return "result_reviews" if sent_back else None


def wait_for_verdict(
    store: Store, timeout: int, stop: Callable[[], bool] | None = None, number: int | None = None
) -> Target:
    """The routing target of the verdict on the round `the_round` names, once it is decided
    (timeout 0: no limit); [] when the person accepted the result.

    PreconditionFailed (exit 3) when there is no round to report or the time runs out (or
    `stop` says to give up); Refused (exit 4) when the verdict ended the session.
    """
    session = store.read("session")
    rounds, is_open = the_round(store, session, number)
    if is_open:
        session = decided(store, session, rounds, timeout, stop)
    return reported(store, session, rounds)


def reported(store: Store, session: Session, rounds: Rounds) -> Target:
    """What follows the verdict on the latest round of `rounds`, as the session now is."""
    if session["status"] in ENDED:
        raise Refused(f"the session is {session['status']}: {session['reason'] or 'no reason'}")
    if rounds == "result_reviews" and session["status"] == S.COMPLETED:
        return []  # the result was accepted: nothing follows
    if rounds == "reviews" and session["approval"]:
        return step_ref(EXECUTE, store.dir)
    return current_routing(store, session).next or ["planner", "status"]


def decided(
    store: Store,
    session: Session,
    rounds: Rounds,
    timeout: int,
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
                f"no verdict within {timeout}s: the {'plan' if rounds == 'reviews' else 'result'}"
                " is still in review (run plan review wait again, or ask in the chat)"
            )
        time.sleep(0.2)  # how often it looks for the verdict
        session = store.read("session")
    return session
