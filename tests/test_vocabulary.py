"""One vocabulary: a status, phase, verdict or kind is written as a member of state/vocab.py,
never as its raw string. The product's syntax trees are walked for a string equal to a word
where a word is meant: compared, matched, a Literal, the keys of a table of words, or the value
given to a field that holds one. (A word passed to a function is the type checker's: the
parameters and the documents' TypedDicts are typed by the Enums, so mypy refuses a string.)
The pydantic models take their Literals from the Enums: the schemas and the files hold the
plain words they always held."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from state import vocab
from state.rules import lifecycle
from state.storage import models
from state.storage.schema import load_schema
from state.storage.store import dumps
from tests.conftest import REPO
from tests.workflows.helpers import state_of, to_approval

# hooks/ is not read: it runs as `python3 -S -I` on Python 3.8 and may keep its own strings
# (it imports state/vocab.py for the guard's words and the status classes).
PRODUCT = ("cli", "shared", "state", "skills")

# Words that are not statuses, phases, verdicts or kinds: a document's name is typed where it
# is used (the store's overloads take Literal["plan"], …) and is a click command's name too;
# the guard's decisions and the client dialects are the hooks' words.
NOT_SCANNED = (vocab.Document, vocab.GuardDecision, vocab.Dialect)

# A word that is also something else is flagged in a comparison only where the other side
# names a word's field (`q["kind"] == "text"`, `kind != "text"`), each with its reason.
AMBIGUOUS = {"text": "`--format text`, and the key of a comment's or an audit line's text"}

# Where a word's string means something else, each with its reason.
EXCEPTIONS = {
    ("state/repo/scan.py", "design"): "a file named for design docs (`'design' in stem`)",
}

# Fields that hold a word: `x["status"] = …`, `{"status": …}`, `status=…`, `status: T = …`.
FIELDS = {"status", "verdict", "state", "phase", "kind", "workflow", "severity", "mode"}


def _words() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name, enum in vars(vocab).items():
        is_word = isinstance(enum, type) and issubclass(enum, vocab.Word) and enum is not vocab.Word
        if is_word and name == enum.__name__ and enum not in NOT_SCANNED:
            for member in enum:
                found.setdefault(member.value, []).append(f"{name}.{member.name}")
    return found


WORDS = _words()


def _strings(node: ast.AST) -> Iterator[ast.Constant]:
    """The string constants a value is made of: itself, a tuple/list/set of them, an `x or C`,
    an `A if c else B`, a frozenset({…}). A tuple or list that also holds a string that is no
    word is something else (argv: `["planner", "--step"]`) and yields nothing."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        inner = [c for elt in node.elts for c in _strings(elt)]
        if all(c.value in WORDS for c in inner):
            yield from inner
    elif isinstance(node, ast.BoolOp):
        for value in node.values:
            yield from _strings(value)
    elif isinstance(node, ast.IfExp):
        yield from _strings(node.body)
        yield from _strings(node.orelse)
    elif isinstance(node, ast.Call) and _field(node.func) in ("frozenset", "set", "tuple"):
        for arg in node.args[:1]:
            yield from _strings(arg)
    elif isinstance(node, ast.Call) and _field(node.func) == "get" and len(node.args) == 2:
        yield from _strings(node.args[1])  # status.get(milestone, "pending")


def _one_enum(strings: list[ast.Constant]) -> bool:
    """Whether the strings are all words of one Enum: a set of words, wherever it stands."""
    enums = [{w.split(".")[0] for w in WORDS.get(c.value, ["-"])} for c in strings]
    return bool(strings) and bool(set.intersection(*enums) - {"-"})


def _field(node: ast.AST) -> str | None:
    """The field an expression names: x["status"], x.get("status"), x.status, status."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return str(node.slice.value)
    if isinstance(node, ast.Call) and _field(node.func) == "get" and node.args:
        key = node.args[0]
        return str(key.value) if isinstance(key, ast.Constant) else None
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _names_a_field(node: ast.AST) -> bool:
    name = _field(node) or ""
    return any(name == f or name.endswith(f"_{f}") for f in FIELDS)


def uses(tree: ast.AST) -> Iterator[tuple[ast.Constant, str]]:
    """(string, where) for every string in a place where a word is meant."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            strings = [e for e in node.elts if isinstance(e, ast.Constant)]
            alone = not isinstance(node, ast.Set)  # ("planner",) is a key path: one word alone
            if len(strings) == len(node.elts) >= 1 + alone and _one_enum(strings):
                yield from ((c, "a set of words") for c in strings)
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for side in sides:
                named = any(_names_a_field(other) for other in sides if other is not side)
                for c in _strings(side):
                    if c.value not in AMBIGUOUS or named:
                        yield c, "compared"
        elif isinstance(node, ast.MatchValue):
            yield from ((c, "matched") for c in _strings(node.value))
        elif isinstance(node, ast.Subscript) and _field(node.value) == "Literal":
            yield from ((c, "a Literal") for c in _strings(node.slice))
        elif isinstance(node, ast.Dict):
            keys = [k.value if isinstance(k, ast.Constant) else None for k in node.keys]
            if len(keys) >= 2 and all(k in WORDS for k in keys):  # a table keyed by words
                yield from ((c, "a table's key") for k in node.keys if k for c in _strings(k))
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value in FIELDS:
                    yield from ((c, f"given to {key.value}") for c in _strings(value))
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if _field(target) in FIELDS and node.value is not None:
                    yield from ((c, f"given to {_field(target)}") for c in _strings(node.value))
        elif isinstance(node, ast.keyword) and node.arg in FIELDS:
            yield from ((c, f"given to {node.arg}") for c in _strings(node.value))
        elif isinstance(node, ast.arguments):
            args = [*node.posonlyargs, *node.args]
            pairs = [*zip(args[len(args) - len(node.defaults) :], node.defaults, strict=True)]
            pairs += [(a, d) for a, d in zip(node.kwonlyargs, node.kw_defaults, strict=True) if d]
            for arg, default in pairs:
                if arg.arg in FIELDS:
                    yield from ((c, f"given to {arg.arg}") for c in _strings(default))


def raw_words(source: str, rel: str = "") -> list[str]:
    found = []
    for c, where in uses(ast.parse(source)):
        if c.value in WORDS and (rel, c.value) not in EXCEPTIONS:
            use = " or ".join(WORDS[c.value])
            found.append(f"{rel}:{c.lineno}: {c.value!r} {where}: use {use}")
    return found


def test_the_product_writes_no_raw_word() -> None:
    found = []
    for layer in PRODUCT:
        for path in sorted((REPO / layer).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel != "state/vocab.py":
                found += raw_words(path.read_text(encoding="utf-8"), rel)
    assert sorted(set(found)) == []


@pytest.mark.parametrize(
    "line",
    [
        'if session["status"] == "review": pass',
        'ok = loop["state"] in ("retry", "escalated")',
        'x = [r for r in rounds if r["verdict"] != "approved"]',
        "match status:\n    case 'design': pass",
        'def f(kind: Literal["choice", "yes_no"]) -> None: ...',
        'HINT = {"choice": 1, "yes_no": 2, "text": 3}',
        'run["status"] = "done"',
        'run.update({"status": "pending", "started_at": None})',
        'Step(1, "init", Init, "01.j2", phase="impl-code")',
        'def g(phase: str = "plan-design") -> None: ...',
        'if q["kind"] == "text": pass',
        'if checked_kind == "text": pass',
        'if run.get("status") == "done": pass',
        'if status in frozenset({"completed", "failed"}): pass',
        'run["status"] = "in_progress" if changed else "pending"',
        'OPEN = ("FAIL", "TODO")',
        'def blocking() -> tuple[str, ...]:\n    return ("MUST", "SHOULD")',
        'click.option("--status", type=click.Choice(["PASS", "FAIL", "TODO"]))',
        'planning = status in PLANNING - {"result_review"}',
        'row = {"status": status.get(mid, "pending")}',
    ],
)
def test_a_raw_word_is_found(line: str) -> None:
    assert raw_words(line)


@pytest.mark.parametrize(
    "line",
    [
        'if fmt == "text": pass',  # an output format
        'shown = {k: v for k, v in record.items() if k != "text"}',  # a record's key
        'if argv[:2] == ["planner", "--step"]: pass',  # argv
        'out({"next": "", "done": True})',  # routing JSON
        'lines = {"id": 1, "text": "x"}',
        'if session["status"] == S.REVIEW: pass',
        'body = "review the plan" if ok else "design it"',
        'PHASES = ("design", "code", "docs", "final")',  # plan validate --phase
        'names = ("planner", 3)',
        'path = ("tool", "planner")',
        'keys = ("planner",)',  # one word alone: a key of a TOML file
    ],
)
def test_what_is_no_word_is_left_alone(line: str) -> None:
    assert raw_words(line) == []


def test_the_exceptions_still_hold_their_word() -> None:
    for rel, word in EXCEPTIONS:
        assert f'"{word}"' in (REPO / rel).read_text(encoding="utf-8"), (rel, word)


@pytest.mark.parametrize("enum", models.WORDS, ids=[e.__name__ for e in models.WORDS])
def test_each_word_field_is_the_plain_words_in_the_schema(enum: type[vocab.Word]) -> None:
    """A field the model types by an Enum exports as the JSON Schema of string Literals."""
    words = [m.value for m in enum]
    found = []
    for name in models.MODELS:
        schema = load_schema(name)
        for node in [schema, *schema.get("$defs", {}).values()]:
            for prop in node.get("properties", {}).values():
                if prop.get("enum") == words:
                    assert prop["type"] == "string" and "$ref" not in prop
                    found.append(prop)
    assert found, f"no schema field holds {enum.__name__}"


def _typed_by_words(model: type[models.BaseModel]) -> list[str]:
    return [n for n, f in model.model_fields.items() if "vocab" in repr(f.annotation)]


def test_a_document_read_and_written_through_the_models_is_unchanged(project: Path) -> None:
    """A real session's files, validated by the models (the words become members) and written
    as the store writes, are byte for byte what was stored."""
    _, out = to_approval(project)
    state = state_of(out)
    files = {"session": "session", "plan": "plan", "context": "context"}
    files |= {p.stem: "qr" for p in state.glob("qr-*.json")}
    assert len(files) > 3
    seen: set[str] = set()
    for stem, model_name in files.items():
        raw = (state / f"{stem}.json").read_bytes()
        model = models.MODELS[model_name].model_validate(json.loads(raw))
        again: Any = model.model_dump()
        seen |= {type(v).__name__ for v in _values(again) if isinstance(v, vocab.Word)}
        assert dumps(_in_order(again, json.loads(raw))) == raw, stem
    assert {"SessionStatus", "ReviewVerdict", "LoopState", "ItemStatus", "Phase"} <= seen


def _values(doc: Any) -> Iterator[Any]:
    if isinstance(doc, dict):
        for v in doc.values():
            yield from _values(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _values(v)
    else:
        yield doc


def _in_order(doc: Any, like: Any) -> Any:
    """`doc` with its keys in the order of the stored `like` (the order is the store's)."""
    if isinstance(doc, dict) and isinstance(like, dict):
        return {k: _in_order(doc[k], like[k]) for k in like}
    if isinstance(doc, list) and isinstance(like, list):
        return [_in_order(d, x) for d, x in zip(doc, like, strict=True)]
    return doc


def test_the_lifecycle_message_lists_what_the_table_allows() -> None:
    from state.errors import Refused

    session: Any = {"status": vocab.SessionStatus.REVIEW}
    with pytest.raises(Refused) as refused:
        lifecycle.transition(session, vocab.SessionStatus.EXECUTING)
    allowed = lifecycle.TRANSITIONS[vocab.SessionStatus.REVIEW]
    assert allowed == {"design", "approved", "cancelled", "failed"}
    assert str(refused.value).endswith("(from review: design, approved, cancelled, failed)")
    closed: Any = {"status": "completed"}
    with pytest.raises(Refused, match="from completed: nothing, it is final"):
        lifecycle.transition(closed, vocab.SessionStatus.FAILED)


# state/ names fields, not flags: a message about an argument starts with its field name
# (`base HEAD~5: …`, PlannerError.field) and the command puts the option there (cli/base.py
# relabel). A string literal of state/ that says `--name` (at its start or after a
# space) fails, with three exceptions, each a command line that is not ours to rename:
# - a whole command line the literal gives as the fix (PRODUCT.md §4: each failing check
#   with the command that fixes it), the flag after the command's name with no `;` or
#   bracket between (`fix: plan exec commit M-001 --allow-detached`);
# - git's own syntax: one argument word in a call or a list (the argv state/ runs git or gpg
#   with) and the `diff --git` header of a patch;
# - docstrings, which are not messages.
# And these, named: status_view puts the session's own directory into the routing lines
# recorded when it was elsewhere (moved or copied), and the hooks read it without
# shared/routing.py, so it edits the recorded text; routes.upgrade reads the routes an older
# planner stored as command lines (docs/design.md, "Routes by name").
FLAG = re.compile(r"(?:^|\s)--[a-zA-Z]")
NAMED = {
    ("state/status_view.py", "--state-dir {}"),
    ("state/routes.py", "--step"),
    ("state/routes.py", "--qr-status"),
}
COMMAND_LINE = re.compile(r"\b(?:plan|planner|executor|git)\b[^;()]*$")


def text_of(node: ast.AST) -> str | None:
    """A string literal's text; an f-string's with {} for each value; None for the rest."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def literals(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Each string literal but docstrings and argv words (an option alone, in a call or a
    list), an f-string as one."""
    skip = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
    for node in ast.walk(tree):
        words = node.args if isinstance(node, ast.Call) else getattr(node, "elts", [])
        for word in [*words, getattr(node, "elt", None)]:  # elt: a generator's words
            if word is not None and re.fullmatch(r"--[\w-]+(=.*)?", text_of(word) or "", re.S):
                skip.add(id(word))
        if isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)
    for node in ast.walk(tree):
        text = text_of(node)
        if text is not None and id(node) not in skip:
            yield getattr(node, "lineno", 0), text


def flags_named(source: str, rel: str = "") -> list[str]:
    found = []
    for line, text in literals(ast.parse(source)):
        for m in FLAG.finditer(text if (rel, text) not in NAMED else ""):
            start = m.end() - 3
            if text[:start].endswith("diff ") or COMMAND_LINE.search(text[:start]):
                continue
            found.append(f"{rel}:{line}: {text[:80]!r} names a flag: name the field")
            break
    return found


def test_state_names_no_flag() -> None:
    found = []
    for path in sorted((REPO / "state").rglob("*.py")):
        found += flags_named(path.read_text(encoding="utf-8"), path.relative_to(REPO).as_posix())
    assert found == []


@pytest.mark.parametrize(
    "line",
    [
        'raise UsageError(f"--base {ref}: not a commit")',
        'extract_json(raw, f"--option-json {n + 1}")',
        'msg = "the answer is empty (use --skip to skip)"',
        'msg = f"{q}: give the answer TEXT or --skip"',
        'fix = "plan restore; or use --force"',
        'if argv[1] == "--step": pass',
    ],
)
def test_a_flag_in_a_message_is_found(line: str) -> None:
    assert flags_named(line)


@pytest.mark.parametrize(
    "line",
    [
        'fix = f"fix: plan exec commit {id} --allow-detached"',
        'fix = "start again: planner --step 1 --task TEXT"',
        'run_git(root, "diff", "--no-renames", "--name-only")',
        'header = f"diff --git a/{path} b/{path}"',
        'def f():\n    """Record it, or --skip."""',
        'msg = "base HEAD~5: not a commit"',
    ],
)
def test_what_names_no_flag_of_ours_is_left_alone(line: str) -> None:
    assert flags_named(line) == []
