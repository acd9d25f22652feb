"""`plan` commands that read (status, show, validate, history, diff, log, …) and `plan apply`.

Each is a Reader in the same table as the operations; run(args) prints and returns the exit
code. Imports happen inside run, so a command pays only for what it uses.
"""

from __future__ import annotations

import json
import os
import sys

from cli.main import emit_ids, open_store, out, read_content
from state.errors import Finding, PreconditionFailed, UsageError
from state.ops import Param
from state.qr_ops import PHASES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from state.store import Store

READERS: dict[str, Reader] = {}


class Reader:
    __slots__ = ("help", "name", "params", "run")

    def __init__(
        self,
        name: str,
        run: Callable[[dict[str, Any]], int | None],
        params: tuple[Param, ...],
        help: str,
    ):
        self.name, self.run, self.params, self.help = name, run, params, help


def reader(name: str, *params: Param) -> Callable[[Callable], Callable]:
    def register(run: Callable[[dict[str, Any]], int | None]) -> Callable:
        READERS[name] = Reader(name, run, params, (run.__doc__ or "").strip())
        return run

    return register


def dump(value: Any) -> None:
    out(json.dumps(value, indent=2, ensure_ascii=False))


@reader("status")
def status(a: dict[str, Any]) -> None:
    """Where the session stands and what to run next."""
    from shared.status import session_status, status_text

    summary = session_status(open_store(a["state_dir"]))
    out(json.dumps(summary, indent=2) if a["json"] else status_text(summary))


@reader("show", Param("id", positional=True, metavar="[ID]"))
def show(a: dict[str, Any]) -> None:
    """The plan (an outline with the review rounds, or all of it with --json), or one item."""
    plan = open_store(a["state_dir"]).read("plan")
    if a["id"]:
        from state.plan_ops import find

        dump(find(plan, a["id"]))
    elif a["json"]:
        dump(plan)
    else:
        store = open_store(a["state_dir"])
        out("\n".join([outline(plan), *review_lines(store.read("session")["reviews"])]))


def review_lines(reviews: list[dict[str, Any]]) -> list[str]:
    """The decided review rounds with their feedback and anchored comments."""
    lines: list[str] = []
    for r in reviews:
        if r["verdict"] == "submitted":
            continue
        said = f": {r['feedback']}" if r.get("feedback") else ""
        lines.append(f"Review round {r['round']} {r['verdict']}{said}")
        for c in r.get("comments") or []:
            line = f" line {c['line']}" if c.get("line") else ""
            lines.append(f"  on {c['anchor']}{line}: {c['text']}")
    return lines


def outline(plan: dict[str, Any]) -> str:
    ctx = plan["planning_context"]
    frozen = f"  [frozen {plan['frozen_at']}]" if plan["frozen_at"] else ""
    lines = [(plan["overview"]["title"] or "(untitled plan)") + frozen]
    lines.append(
        ", ".join(
            f"{len(ctx[k])} {label}"
            for k, label in (
                ("decision_log", "decisions"),
                ("rejected_alternatives", "rejected alternatives"),
                ("constraints", "constraints"),
                ("known_risks", "risks"),
                ("choices", "choices"),
            )
        )
    )
    for m in plan["milestones"]:
        flags = " (docs only)" if m["is_documentation_only"] else ""
        deps = f" after {', '.join(m['depends_on'])}" if m["depends_on"] else ""
        lines.append(f"{m['id']} {m['name']}{flags}{deps}")
        for i in m["code_intents"]:
            changes = [c["id"] for c in m["code_changes"] if c["intent_ref"] == i["id"]]
            done = f" [{', '.join(changes)}]" if changes else ""
            lines.append(f"  {i['id']} {i['file']}: {i['behavior']}{done}")
    return "\n".join(lines)


def _validate_target(target: str | None, state_dir: str | None) -> tuple[Store, str]:
    """validate's TARGET: a session directory or a plan.json; else the active session."""
    from state.store import Store

    if target and target.endswith(".json") and not os.path.isdir(target):
        directory = os.path.dirname(os.path.abspath(target))
        return Store(directory), os.path.basename(target)[: -len(".json")]
    store = open_store(target or state_dir, must_exist=False)
    if not os.path.isdir(store.dir):
        raise UsageError(f"{store.dir}: no such directory")
    return store, "plan"


@reader(
    "validate",
    Param("phase", type=("design", "code", "docs", "final")),
    Param("format", type=("text", "json", "github"), default="text"),
    Param("target", positional=True, metavar="[DIR|plan.json]"),
)
def validate(a: dict[str, Any]) -> int:
    """Check a plan: structure, references, meaning, and a phase's completeness. Exit 3 if not."""
    from shared.paths import project_root
    from state import validate as checks
    from state.errors import DamagedFile

    store, name = _validate_target(a["target"], a["state_dir"])
    path, phase = store.path(name), a["phase"]
    try:
        plan = store.read(name)
        context = store.read_or_none("context") if name == "plan" else None
        questions = {q["id"] for q in context["questions"]} if context else None
        findings = checks.validate(plan, phase, project_root(store.dir), questions)
    except DamagedFile as e:
        findings = [Finding("", e.message)]
    errors = [f for f in findings if f.level == "error"]
    if a["json"] or a["format"] == "json":
        dump(
            {
                "file": path,
                "phase": phase,
                "valid": not errors,
                "findings": [f.as_dict() for f in findings],
            }
        )
    elif a["format"] == "github":
        for f in findings:
            out(f"::{f.level} file={path},title=plan {f.path}::{f.line()}")
    else:
        for_phase = f" for phase {phase}" if phase else ""
        lines = [
            f"{path}: valid{for_phase}"
            if not errors
            else f"{path}: {len(errors)} problem(s){for_phase}"
        ]
        out("\n".join(lines + [f"  - {f.line()}" for f in findings]))
    if errors:
        sys.stderr.write(f"plan validate: {path}: {len(errors)} problem(s)\n")
        return PreconditionFailed.exit_code
    return 0


@reader(
    "schema",
    Param(
        "name",
        positional=True,
        default="plan",
        type=("plan", "context", "qr", "session", "execution", "config"),
    ),
)
def schema(a: dict[str, Any]) -> None:
    """The JSON Schema of a state file, exported from the pydantic models."""
    from state.models import export_schema

    dump(export_schema(a["name"]))


def _history(store: Store) -> list[dict[str, Any]]:
    from state.store import HISTORY_DIR, HISTORY_INDEX

    try:
        with open(os.path.join(store.dir, HISTORY_DIR, HISTORY_INDEX), encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


@reader("history")
def history(a: dict[str, Any]) -> None:
    """Revisions of plan.json: rev, time, command, what it created."""
    revisions = _history(open_store(a["state_dir"]))
    if a["json"]:
        dump(revisions)
        return
    for r in revisions:
        summary = f"  {r['summary']}" if r["summary"] else ""
        out(f"{r['rev']:>5}  {r['ts']}  {r['command']}{summary}")


def revision(store: Store, rev: str) -> dict[str, Any]:
    return store.read("plan") if rev == "current" else store.revision(rev)


@reader(
    "diff",
    Param("rev_a", positional=True, metavar="[REV_A]"),
    Param("rev_b", positional=True, metavar="[REV_B]"),
    Param("review", type=int, metavar="N", help="Compare what review round N saw with now."),
)
def diff(a: dict[str, Any]) -> None:
    """What changed between two revisions, by id (default: the previous one and now)."""
    from state.diff import diff as semantic_diff

    store = open_store(a["state_dir"])
    rev_a, rev_b = a["rev_a"], a["rev_b"] or "current"
    if a["review"] is not None:
        rounds = [r for r in store.read("session")["reviews"] if r["round"] == a["review"]]
        if not rounds or not rounds[0].get("revision"):
            raise UsageError(f"--review: no review round {a['review']} on record")
        rev_a, rev_b = rounds[0]["revision"], "current"
    elif rev_a is None:
        revisions = _history(store)
        rev_a = revisions[-2]["rev"] if len(revisions) > 1 else "r1"
    changes = semantic_diff(revision(store, rev_a), revision(store, rev_b))
    if a["json"]:
        dump([c.as_dict() for c in changes])
        return
    head = f"{rev_a} -> {rev_b}: " + (f"{len(changes)} change(s)" if changes else "no changes")
    out("\n".join([head] + [c.line() for c in changes]))


@reader("log", Param("limit", type=int, metavar="N", help="Only the last N lines."))
def log(a: dict[str, Any]) -> None:
    """The audit log: every mutation, step, verdict and blocked attempt."""
    from state.store import AUDIT_FILE

    store = open_store(a["state_dir"])
    try:
        with open(os.path.join(store.dir, AUDIT_FILE), encoding="utf-8") as f:
            lines = [line.rstrip("\n") for line in f if line.strip()]
    except FileNotFoundError:
        lines = []
    if a["limit"] is not None:
        if a["limit"] < 1:
            raise UsageError("--limit: must be at least 1")
        lines = lines[-a["limit"] :]
    for line in lines:
        out(line if a["json"] else _log_line(line))


def _log_line(line: str) -> str:
    try:
        record = json.loads(line)
        ts, event = record.pop("ts", "?"), record.pop("event", "?")
    except (ValueError, AttributeError):
        return f"(unreadable line) {line}"
    rest = " ".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in record.items())
    return f"{ts}  {event:<9} {rest}"


@reader("waves")
def waves(a: dict[str, Any]) -> None:
    """The milestone waves computed from depends_on, and their diagram."""
    deps = open_store(a["state_dir"]).read("plan")["milestone_dependencies"]
    if a["json"]:
        dump(deps)
    else:
        out(deps["diagram_ascii"] or "no milestones")


@reader("render", Param("output", short="-o", metavar="FILE", help="Write here, not to stdout."))
def render(a: dict[str, Any]) -> None:
    """plan.md, rendered from plan.json."""
    from shared.plan_md import render_plan
    from state.store import write_atomic

    store = open_store(a["state_dir"])
    text = render_plan(store.read("plan"), store.read("session")["reviews"])
    if a["output"]:
        write_atomic(os.path.abspath(a["output"]), text.encode())
    else:
        sys.stdout.write(text)


@reader("verify", Param("target", positional=True, metavar="[DIR]"))
def verify(a: dict[str, Any]) -> int:
    """Check that a frozen plan still has the content that was approved (for CI)."""
    from state.approval import verify as check_approval

    store = open_store(a["target"] or a["state_dir"])
    problems = check_approval(store.read("plan"), store.read("session"))
    if a["json"]:
        dump(
            {
                "state_dir": store.dir,
                "verified": not problems,
                "findings": [f.as_dict() for f in problems],
            }
        )
    elif problems:
        out(
            "\n".join(
                [f"{store.path('plan')}: not verified"] + [f"  - {f.line()}" for f in problems]
            )
        )
    else:
        sha = store.read("session")["approval"]["sha256"]
        out(f"{store.path('plan')}: verified, sha256 {sha}")
    if problems:
        sys.stderr.write(f"plan verify: {store.path('plan')}: {problems[0].message}\n")
        return PreconditionFailed.exit_code
    return 0


@reader("qr show", Param("phase", type=PHASES, required=True))
def qr_show(a: dict[str, Any]) -> None:
    """A phase's review items: id, severity, status, check, finding."""
    store = open_store(a["state_dir"])
    name = f"qr-{a['phase']}"
    if not store.exists(name):
        raise UsageError(f"{store.path(name)}: not found (no item recorded for {a['phase']})")
    report = store.read(name)
    if a["json"]:
        dump(report)
        return
    lines = [f"qr {a['phase']}: iteration {report['iteration']}, {len(report['items'])} item(s)"]
    for i in report["items"]:
        finding = f" -- {i['finding']}" if i["finding"] else ""
        lines.append(
            f"{i['id']} {i['severity']:<6} {i['status']:<4} [{i['scope']}] {i['check']}{finding}"
        )
    out("\n".join(lines))


@reader("apply", Param("source", positional=True, required=True, metavar="FILE|-"))
def apply(a: dict[str, Any]) -> None:
    """Apply a JSON list of operations, all or nothing; "$K" is the id the K-th op created."""
    from state.ops import apply as apply_ops

    text = read_content(a["source"], "FILE")
    try:
        batch = json.loads(text)
    except ValueError as e:
        raise UsageError(f"plan apply: {a['source']}: not valid JSON ({e})") from None
    emit_ids(apply_ops(open_store(a["state_dir"]), batch), a["json"])


@reader("question list")
def question_list(a: dict[str, Any]) -> None:
    """The questions: id, state (open, answered, skipped, assumed), text and answer."""
    from state.question_ops import state_of

    questions = open_store(a["state_dir"]).read("context")["questions"]
    if a["json"]:
        dump(questions)
        return
    lines = [
        f"{q['id']} [{state_of(q)}] {q['text']}" + (f" -> {q['answer']}" if q["answer"] else "")
        for q in questions
    ]
    out("\n".join(lines) or "No questions yet.")


def age(stamp: str) -> str:
    from state import clock

    seconds = max(0, int(clock.epoch() - clock.parse(stamp)))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


@reader("list")
def list_sessions(a: dict[str, Any]) -> None:
    """The project's sessions: id, status, step, age, task; * marks the active one."""
    from shared.paths import active_session_dir, planner_home
    from state.errors import DamagedFile
    from state.store import Store

    home, active = planner_home(), active_session_dir()
    rows: list[dict[str, Any]] = []
    names = sorted(os.listdir(home)) if os.path.isdir(home) else []
    for name in names:
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
            }
        )
    if a["json"]:
        dump(rows)
        return
    lines = [
        f"{'*' if r.get('active') else ' '} {r['session']}  "
        + (
            f"{r['status']:<10} {r['workflow']} {r['step']:<3} {r['age']:>4}  {r['task']}"
            if "damaged" not in r
            else f"(damaged: {r['damaged']})"
        )
        for r in rows
    ]
    out("\n".join(lines) or f"No sessions in {home}.")


@reader("resume", Param("id", positional=True, metavar="[ID]"))
def resume(a: dict[str, Any]) -> None:
    """Make a session the active one and say where it stands and what to run next."""
    from shared.paths import planner_home, project_root
    from shared.status import session_status, status_text
    from state.errors import Refused
    from state.session import make_active

    store = open_store(os.path.join(planner_home(), a["id"]) if a["id"] else a["state_dir"])
    session = store.read("session")
    if session["status"] in ("cancelled", "failed"):
        raise Refused(
            f"{store.path('session')}: the session is {session['status']} "
            f"({session['reason']}); it cannot be resumed. Start a new one: "
            "planner --step 1 --task TEXT"
        )
    make_active(project_root(store.dir), os.path.basename(store.dir))
    summary = session_status(store)
    out(json.dumps(summary, indent=2) if a["json"] else status_text(summary))


@reader(
    "review open",
    Param("port", type=int, default=0, metavar="N", help="Port on 127.0.0.1 (default: any free)."),
    Param("no_browser", switch=True, help="Print the URL only; do not open a browser."),
)
def review_open(a: dict[str, Any]) -> None:
    """Serve the plan's review page on 127.0.0.1 (a new secret URL each run) until Ctrl-C."""
    from cli.review_page.serve import open_page

    if not 0 <= a["port"] <= 65535:
        raise UsageError(f"--port {a['port']}: not a port (0 to 65535)")
    say = (lambda url: out_flush(json.dumps({"url": url}))) if a["json"] else out_flush
    open_page(open_store(a["state_dir"]), a["port"], not a["no_browser"], say)


@reader(
    "review wait",
    Param("timeout", default="0", metavar="DURATION", help='e.g. "90s", "30m"; 0: no limit.'),
)
def review_wait(a: dict[str, Any]) -> None:
    """Block until the person decides on the review page; print the routing line (exit 3 when
    the time runs out with the plan still in review)."""
    from cli.review_page.serve import wait_for_verdict
    from shared.config import duration
    from shared.routing import command

    argv = wait_for_verdict(open_store(a["state_dir"]), duration(a["timeout"], "--timeout"))
    out(json.dumps({"next": command(argv)}) if a["json"] else f"NEXT: {command(argv)}")


def out_flush(text: str) -> None:
    out(text)
    sys.stdout.flush()
