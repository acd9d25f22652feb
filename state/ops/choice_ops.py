"""Design choices: options with pros and cons, one recommended; picking
one writes the decision (DL) and the other options as rejected alternatives (RA)."""

from __future__ import annotations

from state.errors import UsageError
from state.ops.question_ops import extract_json, items_of
from state.storage.ids import option_letter

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from state.rules.session_store import Transaction
    from state.storage.documents import Choice, ChoiceOption, Plan

OPTION_KEYS = ("name", "description", "pros", "cons", "recommended")


def _option(raw: Any, n: int, where: str) -> ChoiceOption:
    where = f"{where}.options[{n}]"
    if not isinstance(raw, dict):
        raise UsageError(f"{where}: expected an object with {', '.join(OPTION_KEYS)}")
    unknown = set(raw) - set(OPTION_KEYS) - {"id"}
    if unknown:
        raise UsageError(f"{where}: unknown key {sorted(unknown)[0]!r}")
    if not isinstance(raw.get("name"), str) or not raw["name"].strip():
        raise UsageError(f"{where}.name: required text is missing")
    for key in ("pros", "cons"):
        if not isinstance(raw.get(key, []), list) or not all(
            isinstance(x, str) for x in raw.get(key, [])
        ):
            raise UsageError(f"{where}.{key}: expected a list of strings")
    if not isinstance(raw.get("recommended", False), bool):
        raise UsageError(f"{where}.recommended: expected true or false")
    return {
        "id": f"OPT-{option_letter(n)}",
        "name": raw["name"].strip(),
        "description": str(raw.get("description", "")),
        "pros": list(raw.get("pros", [])),
        "cons": list(raw.get("cons", [])),
        "recommended": raw.get("recommended", False),
    }


def make_choice(topic: Any, options: Any, where: str) -> Choice:
    """A choice checked from what the user or an LLM gave; `record` gives it its id."""
    if not isinstance(topic, str) or not topic.strip():
        raise UsageError(f"{where}.topic: required text is missing")
    if not isinstance(options, list) or len(options) < 2:
        raise UsageError(f"{where}.options: a choice needs at least two options")
    built = [_option(o, n, where) for n, o in enumerate(options)]
    if sum(o["recommended"] for o in built) != 1:
        raise UsageError(f'{where}.options: mark exactly one option "recommended": true')
    return {
        "id": "",
        "topic": topic.strip(),
        "options": built,
        "picked": None,
        "rationale": None,
        "decision_ref": None,
    }


def record(tx: Transaction, choices: list[Choice]) -> list[str]:
    """Add choices with new ids; per choice its id, then each option as D-NNN/OPT-X (what
    `plan choice pick` and `plan show` take)."""
    items = tx.edit("plan")["planning_context"]["choices"]
    ids = []
    for choice in choices:
        choice["id"] = tx.new_id("plan", "D", items)
        items.append(choice)
        ids.append(choice["id"])
        ids += [f"{choice['id']}/{o['id']}" for o in choice["options"]]
    return ids


def choice_add(tx: Transaction, *, topic: str, option_json: list[str]) -> list[str]:
    """Record a design choice (D-NNN) for the user to pick from."""
    field = "option_json"  # the messages name it: the command says --option-json
    options = [extract_json(raw, f"{field} {n}", field) for n, raw in enumerate(option_json, 1)]
    return record(tx, [make_choice(topic, options, "choice add")])


def choice_import(tx: Transaction, *, source: str) -> list[str]:
    """Record the choices an LLM wrote as JSON (a list, or {"choices": [...]}, fenced or not)."""
    choices = []
    for n, raw in enumerate(
        items_of(extract_json(source, "choice import"), "choices", "choice import")
    ):
        if not isinstance(raw, dict):
            raise UsageError(f"choices[{n}]: expected an object with topic and options")
        choices.append(make_choice(raw.get("topic"), raw.get("options"), f"choices[{n}]"))
    return record(tx, choices)


def pick(tx: Transaction, choice: Choice, option_id: str, rationale: str) -> list[str]:
    """The decision for the picked option, the others as rejected alternatives; their ids."""
    from state.ops.plan_ops import alternative_add, decision_add  # on use: steps load this

    chosen = next((o for o in choice["options"] if o["id"] == option_id), None)
    if chosen is None:
        known = ", ".join(o["id"] for o in choice["options"])
        raise UsageError(f"choice pick: {choice['id']} has no {option_id} (options: {known})")
    if choice["picked"]:
        raise UsageError(
            f"choice pick: {choice['id']} was picked ({choice['picked']}, "
            f"{choice['decision_ref']}); supersede that decision to change it"
        )
    said = rationale.strip()
    said += "" if not said or said[-1] in ".!?…:;" else "."  # "since jq. Pros: ..."
    reasons = said + (f" Pros: {'; '.join(chosen['pros'])}." if chosen["pros"] else "")
    topic = choice["topic"]
    ids = decision_add(tx, decision=f"{topic}: {chosen['name']}", reasoning=reasons, question=[])
    for other in choice["options"]:
        if other is not chosen:
            why = "; ".join(other["cons"]) or f"{chosen['name']} was picked instead"
            alternative = f"{topic}: {other['name']}"
            ids += alternative_add(tx, alternative=alternative, reason=why, decision=ids[0])
    choice["picked"], choice["rationale"] = chosen["id"], rationale
    choice["decision_ref"] = ids[0]
    return ids


def choice_pick(tx: Transaction, *, id: str, option: str | None, rationale: str) -> list[str]:
    """Pick an option: writes the decision and the other options as rejected alternatives."""
    from state.ops.plan_ops import find

    choice_id, _, joined = id.partition("/")  # D-001 OPT-B, or D-001/OPT-B alone
    if bool(joined) == bool(option):
        raise UsageError("choice pick: give D-n OPT-X, or D-n/OPT-X as choice add printed it")
    return pick(tx, find(tx.edit("plan"), choice_id, "D"), joined or option or "", rationale)


def unpicked(plan: Plan) -> list[Choice]:
    return [c for c in plan["planning_context"]["choices"] if not c["picked"]]
