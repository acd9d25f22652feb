"""`plan status | list | resume | cancel | fail`: where sessions stand, and how they end."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, TypedDict, final

import click

from cli.base import PlanCommand, dump, open_store, out
from hooks.hookstate import with_guard
from shared.paths import (
    active_session_dir,
    planner_home,
    project_root,
    recover_starts,
    resolve_state_dir,
)
from shared.status import session_status
from state import clock
from state.errors import DamagedFile, Refused
from state.rules.session_store import Store
from state.status_view import text
from state.vocab import CLOSED, ENDED

if TYPE_CHECKING:
    from collections.abc import Callable

    from state.validation.overlap import SeenFrom


@final
class SessionRow(TypedDict):
    """A session as `plan list` shows it (and --json prints it)."""

    session: str
    active: bool
    status: str
    workflow: str
    step: int
    age: str
    task: str
    overlaps: list[SeenFrom]


@final
class DamagedRow(TypedDict):
    """A session whose session.json cannot be read: what is wrong with it."""

    session: str
    damaged: str


@click.command("status", cls=PlanCommand)
def status_command(state_dir: str | None, as_json: bool) -> None:
    """Where the session stands and what to run next. With no active session here (a fresh
    clone: .planner/ACTIVE is local), the only open session, else the sessions to pick from."""
    show_status(state_dir, as_json, out)


def show_status(state_dir: str | None, as_json: bool, say: Callable[[str], None]) -> None:
    """What `plan status` and `planner status` print, through their printer (`say`)."""
    if state_dir is None and resolve_state_dir() is None and status_without_active(as_json):
        return
    summary = with_guard(session_status(open_store(state_dir)))
    say(json.dumps(summary, indent=2) if as_json else text(summary))


def status_without_active(as_json: bool) -> bool:
    """No session is active here (ACTIVE is local: a clone has none). One open session: its
    status, with how to make it active (nothing is written: ACTIVE is the person's choice).
    Several, or only closed ones: the list and `plan resume ID`. None at all: False (the
    caller's "no session found")."""
    home = planner_home()
    rows = [r for r in session_rows(home, None, overlaps=False) if "damaged" not in r]
    if not rows:
        return False
    opened = [r for r in rows if r["status"] not in CLOSED]
    if len(opened) == 1:
        sid = opened[0]["session"]
        summary = with_guard(session_status(open_store(os.path.join(home, sid))))
        note = (
            "no session is active here (.planner/ACTIVE is local); the only open one is "
            f"shown (make it active: plan resume {sid})"
        )
        if as_json:
            out(json.dumps({**summary, "active": False, "note": note}, indent=2))
        else:
            out(f"{note}\n{text(summary)}")
        return True
    pick = "make one active: plan resume ID (.planner/ACTIVE is local: a clone has none)"
    if as_json:
        listed = [
            {k: r[k] for k in ("session", "status", "workflow", "step", "task")} for r in rows
        ]
        dump({"active": None, "sessions": listed, "next": pick})
        return True
    lines = [f"no session is active here; {len(rows)} session(s) in {home}:"]
    lines += [f"  {r['session']}  {r['status']:<13} {r['task']}" for r in rows]
    out("\n".join([*lines, pick]))
    return True


def age(stamp: str) -> str:
    seconds = max(0, int(clock.epoch() - clock.parse(stamp)))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def session_rows(
    home: str, active: str | None, overlaps: bool = True
) -> list[SessionRow | DamagedRow]:
    if not os.path.isdir(home):
        return []
    found = None
    if overlaps:
        from state.validation.overlap import find  # `plan list` only: `plan status` shares this

        found = find(os.path.dirname(home))
    rows: list[SessionRow | DamagedRow] = []
    for name in sorted(n for n in os.listdir(home) if n[:1] != "."):
        store = Store(os.path.join(home, name))
        if not store.exists("session"):
            continue
        try:
            s = store.read("session")
        except DamagedFile as e:
            rows.append({"session": name, "damaged": e.message})
            continue
        rows.append(
            {
                "session": name,
                "active": store.dir == active,
                "status": s["status"],
                "workflow": s["workflow"],
                "step": s["step"],
                "age": age(s["created_at"]),
                "task": s["task"],
                "overlaps": [o.seen_from(name) for o in (found.of(name) if found else [])],
            }
        )
    return rows


def overlap_marker(overlaps: list[SeenFrom], tree: str) -> str:
    """`  [overlaps ID: FILE, …]`: the other open sessions planning this one's files (with
    `(in PATH)` for one in another work tree of the repository)."""
    by_session: dict[str, list[str]] = {}
    for o in overlaps:
        other = o["session"]
        if os.path.realpath(o["worktree"]) != os.path.realpath(tree):
            other += f" (in {o['worktree']})"
        what = f"{o['function']} in {o['file']}" if o["function"] else o["file"]
        by_session.setdefault(other, []).append(what)
    return "".join(
        f"  [overlaps {other}: {', '.join(files[:3])}{' …' if len(files) > 3 else ''}]"
        for other, files in by_session.items()
    )


@click.command("list", cls=PlanCommand)
def list_command(state_dir: str | None, as_json: bool) -> None:
    """The project's sessions: id, status, step, age, task; * marks the active one, and
    [overlaps ID: FILE] an open session (in any work tree) planning the same files."""
    home = planner_home()
    recover_starts(home)
    rows = session_rows(home, active_session_dir())
    if as_json:
        dump(rows)
        return
    lines = [
        f"{'*' if r['active'] else ' '} {r['session']}  "
        f"{r['status']:<10} {r['workflow']} {r['step']:<3} {r['age']:>4}  {r['task']}"
        + overlap_marker(r["overlaps"], os.path.dirname(home))
        if "damaged" not in r
        else f"  {r['session']}  (damaged: {r['damaged']})"
        for r in rows
    ]
    out("\n".join(lines) or f"No sessions in {home}.")


@click.command("resume", cls=PlanCommand)
@click.argument("id", required=False, metavar="[ID]")
def resume_command(id: str | None, state_dir: str | None, as_json: bool) -> None:
    """Make a session the active one and say where it stands and what to run next."""
    store = open_store(os.path.join(planner_home(), id) if id else state_dir)
    session = store.read("session")
    if session["status"] in ENDED:
        raise Refused(
            f"{store.path('session')}: the session is {session['status']} "
            f"({session['reason']}); it cannot be resumed. Start a new one: "
            "planner --step 1 --task TEXT"
        )
    from state.ops.session import make_active  # subprocess and shutil: `plan resume` only

    make_active(project_root(store.dir), os.path.basename(store.dir))
    summary = with_guard(session_status(store))
    out(json.dumps(summary, indent=2) if as_json else text(summary))
