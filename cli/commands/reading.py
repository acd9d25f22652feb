"""`plan show | render | history | diff | log | waves`: reading the plan and its record."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from cli.base import PlanCommand, QRPhase, dump, open_store, out
from shared.review_reads import between
from state.errors import UsageError
from state.ops.plan_ops import find
from state.ops.qr_ops import find_item
from state.ops.question_ops import find_question
from state.storage.outputs import write_render
from state.storage.store import dumps
from state.vocab import ReviewVerdict

if TYPE_CHECKING:
    from state.rules.session_store import Store
    from state.storage.documents import Plan, Review


@click.command("show", cls=PlanCommand)
@click.argument("id", required=False, metavar="[ID]")
@click.option(
    "--phase",
    type=QRPhase(),
    help="The review phase of a qa-NNN item (needed when several phases have that id).",
)
@click.option(
    "--answers",
    is_flag=True,
    help="The user's words: answered questions, review feedback, amendments.",
)
def show_command(
    id: str | None, phase: str | None, answers: bool, state_dir: str | None, as_json: bool
) -> None:
    """The plan (an outline with the review rounds, or all of it with --json), or one item.

    ID: a plan id (DL-, RA-, C-, R-, D-, M-, CI-, CC-), an option (D-001/OPT-B), a question
    (Q-001), a review item (qa-001, with --phase when several phases have it), or a section:
    context (context.json), overview, knowledge. An item prints as fields, one a line, a
    diff as a diff; --json prints it as JSON. --answers: the user's words as the steps show
    them."""
    store = open_store(state_dir)
    if answers:
        if id:
            raise UsageError("plan show: give ID or --answers, not both")
        show_answers(store, as_json)
    elif id:
        item = lookup(store, id.strip(), phase)
        if as_json:
            dump(item)
        else:
            out(readable(item))
    elif as_json:
        dump(store.read("plan"))
    else:
        out(plan_outline(store))


def plan_outline(store: Store) -> str:
    """The plan as an outline, then its decided review rounds."""
    return "\n".join([outline(store.read("plan")), *review_lines(store.read("session")["reviews"])])


def show_answers(store: Store, as_json: bool) -> None:
    """The user's words, whole: what steps name in one line once they have shown them."""
    # jinja2 and the engine (~60 ms) load only for --answers, not for every plan show/log
    from shared.engine import SHARED_TEMPLATES
    from shared.render import render
    from shared.words import user_words

    words = user_words(store.read("session"), store.read_or_none("context"))
    if as_json:
        dump(words)
        return
    text = render("_user.j2", {**words, "words_line": ""}, [SHARED_TEMPLATES]).strip()
    out(text or "No answers and no review feedback yet.")


def review_lines(reviews: list[Review]) -> list[str]:
    """The decided review rounds with their feedback and anchored comments."""
    lines: list[str] = []
    for r in reviews:
        if r["verdict"] == ReviewVerdict.SUBMITTED:
            continue
        said = f": {r['feedback']}" if r["feedback"] else ""
        lines.append(f"Review round {r['round']} {r['verdict']}{said}")
        for c in r["comments"]:
            line = f" line {c['line']}" if c["line"] else ""
            lines.append(f"  on {c['anchor']}{line}: {c['text']}")
    return lines


def lookup(store: Store, item_id: str, phase: str | None) -> object:
    """What `plan show ID` prints: the item, option, question, review item or section."""
    if item_id == "context":
        return store.read("context")
    if item_id == "overview":
        return store.read("plan")["overview"]
    if item_id == "knowledge":
        return store.read("plan")["invisible_knowledge"]
    if item_id == "waves":
        return store.read("plan")["milestone_dependencies"]
    if item_id.startswith("Q-"):
        return find_question(store.read("context"), item_id)
    if item_id.startswith("qa-"):
        return find_item(store, item_id, phase)
    choice_id, _, option = item_id.partition("/")
    if choice_id.split("-", 1)[0] not in ("DL", "RA", "C", "R", "D", "M", "CI", "CC"):
        raise UsageError(
            f"{item_id}: not an id plan show reads (DL-, RA-, C-, R-, D-, D-n/OPT-X, M-, CI-, "
            "CC-, Q-, qa-, or context, overview, knowledge, waves)"
        )
    plan = store.read("plan")
    item = find(plan, choice_id)
    if not option:
        return item
    for choice in plan["planning_context"]["choices"] if choice_id.startswith("D-") else []:
        for o in choice["options"] if choice["id"] == choice_id else []:
            if o["id"] == option:
                return o
    raise UsageError(f"plan.json: {choice_id} has no option {option}")


def readable(value: object, indent: str = "") -> str:
    """An item for a person: `field: value` lines, nested items indented, lists of text as
    `- ` lines, and text of several lines (a diff, a diagram) printed as it is below its
    field; empty fields left out."""
    if not isinstance(value, dict):
        return indent + (value if isinstance(value, str) else json.dumps(value))
    lines: list[str] = []
    for key, v in value.items():
        if v is None or v == "" or v == [] or v == {}:
            continue
        if isinstance(v, str) and "\n" in v.strip("\n"):
            lines.append(f"{indent}{key}:")
            lines += [indent + "  " * bool(indent) + ln for ln in v.rstrip("\n").split("\n")]
        elif isinstance(v, dict):
            lines += [f"{indent}{key}:", readable(v, indent + "  ")]
        elif isinstance(v, list):
            lines.append(f"{indent}{key}:")
            for x in v:
                if isinstance(x, dict):
                    nested = readable(x, indent + "    ").split("\n")
                    lines.append(f"{indent}  - {nested[0].lstrip()}")
                    lines += nested[1:]
                else:
                    lines.append(f"{indent}  - {x if isinstance(x, str) else json.dumps(x)}")
        else:
            lines.append(f"{indent}{key}: {v if isinstance(v, str) else json.dumps(v)}")
    return "\n".join(line for line in lines if line.strip())


def outline(plan: Plan) -> str:
    ctx = plan["planning_context"]
    frozen = f"  [frozen {plan['frozen_at']}]" if plan["frozen_at"] else ""
    lines = [(plan["overview"]["title"] or "(untitled plan)") + frozen]
    counts = (
        (len(ctx["decision_log"]), "decision"),
        (len(ctx["rejected_alternatives"]), "rejected alternative"),
        (len(ctx["constraints"]), "constraint"),
        (len(ctx["known_risks"]), "risk"),
        (len(ctx["choices"]), "choice"),
    )
    lines.append(", ".join(f"{n} {label}{'' if n == 1 else 's'}" for n, label in counts))
    for m in plan["milestones"]:
        flags = " (docs only)" if m["is_documentation_only"] else ""
        deps = f" after {', '.join(m['depends_on'])}" if m["depends_on"] else ""
        lines.append(f"{m['id']} {m['name']}{flags}{deps}")
        for i in m["code_intents"]:
            changes = [
                c["id"]
                for c in m["code_changes"]
                if i["id"] in (c["intent_ref"], *c["shared_intents"])
            ]
            done = f" [{', '.join(changes)}]" if changes else ""
            lines.append(f"  {i['id']} {i['file']}: {i['behavior']}{done}")
    return "\n".join(lines)


@click.command("render", cls=PlanCommand)
@click.option("-o", "--output", metavar="FILE", help="Write plan.md here instead of to stdout.")
@click.option("--full", is_flag=True, help="Every diff whole, as the person's plan.md has them.")
@click.option(
    "--summary",
    is_flag=True,
    help="A few lines: approach, decisions, milestones with their files and acceptance, risks.",
)
def render_command(
    output: str | None, full: bool, summary: bool, state_dir: str | None, as_json: bool
) -> None:
    """plan.md, rendered from plan.json: compact (each diff summarised by file, +/- lines and
    intent) unless --full, or in a few lines with --summary; STATE_DIR/plan.md, the one a
    person approves, is always whole."""
    from shared.plan_md import for_session  # jinja2 (~40 ms): only plan render pays it
    from shared.plan_md import summary as summary_of

    if full and summary:
        raise UsageError("--full and --summary: give one")
    store = open_store(state_dir)
    if summary:
        text = "\n".join(summary_of(store.read("plan"))) + "\n"
    else:
        text = for_session(store.read_or_none, compact=not full)(store.read("plan"))
    if output:  # while planning only inside the session (state/storage/outputs.py)
        write_render(store, output, text)
    else:
        sys.stdout.write(text)


@click.command("history", cls=PlanCommand)
@click.option(
    "--show",
    metavar="REV",
    help="Print revision REV as plan.json holds it (a delta is replayed): "
    "`plan history --show r7 > plan.json` restores it.",
)
def history_command(show: str | None, state_dir: str | None, as_json: bool) -> None:
    """Revisions of plan.json: rev, time, command, what it created."""
    if show:
        sys.stdout.buffer.write(dumps(open_store(state_dir).revision(show)))
        return
    revisions = open_store(state_dir).history()
    if as_json:
        dump(revisions)
        return
    for r in revisions:
        summary = f"  {r['summary']}" if r["summary"] else ""
        out(f"{r['rev']:>5}  {r['ts']}  {r['command']}{summary}")


@click.command("diff", cls=PlanCommand)
@click.argument("rev_a", required=False, metavar="[REV_A]")
@click.argument("rev_b", required=False, metavar="[REV_B]")
@click.option("--review", type=int, metavar="N", help="Compare what review round N saw with now.")
def diff_command(
    rev_a: str | None, rev_b: str | None, review: int | None, state_dir: str | None, as_json: bool
) -> None:
    """What changed between two revisions, by id, with the content: a changed field before
    and after, an added item whole, a changed code change as the lines of code that changed
    (default: the previous revision and now).

    A revision, rN, is plan.json as the Nth change to it left it (plan history lists them;
    review round N shows one, and step 11 names it); current: the plan now."""
    store = open_store(state_dir)
    rev_b = rev_b or "current"
    if review is not None:
        seen = [r["revision"] for r in store.read("session")["reviews"] if r["round"] == review]
        if not seen or not seen[0]:
            raise UsageError(f"--review: no review round {review} on record")
        rev_a, rev_b = seen[0], "current"
    elif rev_a is None:
        revisions = store.history()
        rev_a = revisions[-2]["rev"] if len(revisions) > 1 else "r1"
    assert rev_a is not None
    changes = between(store, rev_a, rev_b)
    if as_json:
        dump([c.as_dict() for c in changes])
        return
    names = f"{rev_named(store, rev_a)} -> {rev_named(store, rev_b)}"
    head = f"{names}: " + (f"{len(changes)} change(s)" if changes else "no changes")
    out("\n".join([head, *(t for c in changes for t in (c.line(), *c.detail()))]))


def rev_named(store: Store, rev: str) -> str:
    """A revision as a person reads it: "r7 (plan.json revision 7: what review round 1
    showed)", "now" for current."""
    if rev == "current":
        return "now"
    rounds = [r["round"] for r in store.read("session")["reviews"] if r["revision"] == rev]
    shown = f": what review round {rounds[-1]} showed" if rounds else ""
    return f"{rev} (plan.json revision {rev.lstrip('r')}{shown})"


@click.command("log", cls=PlanCommand)
@click.option("--limit", type=int, metavar="N", help="Only the last N lines.")
def log_command(limit: int | None, state_dir: str | None, as_json: bool) -> None:
    """The audit log: every mutation, step, verdict and blocked attempt."""
    lines = open_store(state_dir).audit_lines()
    if limit is not None:
        if limit < 1:
            raise UsageError("--limit: must be at least 1")
        lines = lines[-limit:]
    for line in lines:
        out(line if as_json else log_line(line))


def log_line(line: str) -> str:
    try:
        record = json.loads(line)
        ts, event = record.pop("ts", "?"), record.pop("event", "?")
    except (ValueError, AttributeError, TypeError):  # not JSON, or not an object
        return f"(unreadable line) {line}"
    rest = " ".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in record.items())
    return f"{ts}  {event:<9} {rest}"


@click.command("waves", cls=PlanCommand)
def waves_command(state_dir: str | None, as_json: bool) -> None:
    """The milestone waves computed from depends_on, and their diagram."""
    deps = open_store(state_dir).read("plan")["milestone_dependencies"]
    if as_json:
        dump(deps)
    else:
        out(deps["diagram_ascii"] or "no milestones")
