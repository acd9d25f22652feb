"""What makes a plan valid: integrity always; completeness per phase; meaning checks.

Every check returns Findings that name the JSON path and the `plan` command that fixes it.
"""

from __future__ import annotations

import os
import re

from state.errors import Finding
from state.repo import unidiff, worktree
from state.validation.waves import changed_files, compute_waves, find_cycle

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence
    from typing import Any

    from state.storage.documents import Milestone, Plan, RejectedAlternative, Risk
    from state.storage.ids import Identified

PHASES = ("design", "code", "docs", "final")
INCOMPLETE = "incomplete"  # the rule of what a phase still lacks (shared/ci_run.py RULES)


def _lacks(path: str, message: str, fix: str) -> Finding:
    """What a phase still lacks, with the command that adds it."""
    return Finding(path, message, fix, rule=INCOMPLETE)


SAME_FILE_SAME_WAVE = "same-file-same-wave"
# A placeholder word standing alone: not part of a path or file name (TODO.txt, docs/TODO).
PLACEHOLDER = re.compile(r"(?<![\w./\\-])(?:TBD|TODO|FIXME|XXX)(?![\w/\\-]|\.\w)|\?\?\?")
# Fields that hold paths or code, not prose: a file may be called TODO.txt, code may say TODO.
NOT_PROSE = ("id", "timestamp", "created_at", "frozen_at", "plan_id", "file", "files", "diff")


def _where(path: str, item_id: str) -> str:
    return f"{path}[{item_id}]"


def integrity(
    plan: Plan, question_ids: set[str] | None = None, sound: Mapping[str, Any] | None = None
) -> list[Finding]:
    """Duplicate ids, dangling references and dependency cycles (checked before every write).

    `sound`: the plan is a change of one this check found sound, and these are the top-level
    members the change touched, as they were (state/storage/store.py Encoded.old). When it left
    the milestones and waves alone and removed no decision, their findings are still none and
    only the planning context is walked: the same findings (tests/state/test_validate.py)."""
    ctx = plan["planning_context"]
    clean = sound is not None and _still_sound(sound, plan)
    milestones = [] if clean else plan["milestones"]
    intents = [i for m in milestones for i in m["code_intents"]]
    changes = [c for m in milestones for c in m["code_changes"]]
    decisions = {d["id"] for d in ctx["decision_log"]}
    found: list[Finding] = []

    groups: dict[str, Sequence[Identified]] = {
        "planning_context.decision_log": ctx["decision_log"],
        "planning_context.rejected_alternatives": ctx["rejected_alternatives"],
        "planning_context.constraints": ctx["constraints"],
        "planning_context.known_risks": ctx["known_risks"],
        "planning_context.choices": ctx["choices"],
        "milestones": milestones,
        "code_intents": intents,
        "code_changes": changes,
    }
    for path, items in groups.items():
        seen: set[str] = set()
        for item in items:
            if item["id"] in seen:
                found.append(Finding(_where(path, item["id"]), "duplicate id", rule="duplicate-id"))
            seen.add(item["id"])

    def ref(
        path: str, target: str | None, known: set[str], kind: str, fix: str, own: str = ""
    ) -> None:
        if target is not None and target == own:
            found.append(Finding(path, f"{own} refers to itself", fix, rule="self-reference"))
        elif target is not None and target not in known:
            message = f"refers to {kind} {target}, which does not exist"
            found.append(Finding(path, message, fix, rule="dangling-reference"))

    for d in ctx["decision_log"]:
        where = _where("planning_context.decision_log", d["id"])
        fix = f"plan decision supersede {d['id']} --by DL-n --reason R"
        ref(f"{where}.superseded_by", d["superseded_by"], decisions, "decision", fix, own=d["id"])
        if question_ids is not None:
            fix = f"plan decision set {d['id']} --question Q-n"
            for q in d["question_refs"]:
                ref(f"{where}.question_refs", q, question_ids, "question", fix)
    decided: list[tuple[str, str, RejectedAlternative | Risk]] = [
        *(("rejected_alternatives", "alternative", ra) for ra in ctx["rejected_alternatives"]),
        *(("known_risks", "risk", r) for r in ctx["known_risks"]),
    ]
    for key, noun, item in decided:
        where = _where(f"planning_context.{key}", item["id"])
        fix = f"plan {noun} set {item['id']} --decision DL-n"
        ref(f"{where}.decision_ref", item["decision_ref"], decisions, "decision", fix)
    for choice in ctx["choices"]:
        where = _where("planning_context.choices", choice["id"])
        fix = f"plan choice pick {choice['id']} OPT-X --rationale R"
        options = {o["id"] for o in choice["options"]}
        ref(f"{where}.picked", choice["picked"], options, "option", fix)
        ref(f"{where}.decision_ref", choice["decision_ref"], decisions, "decision", fix)

    milestone_ids = {m["id"] for m in milestones}
    intent_ids = {i["id"] for i in intents}
    for m in milestones:
        where = _where("milestones", m["id"])
        fix = f"plan milestone set {m['id']} --depends M-n"
        for dep in m["depends_on"]:
            ref(f"{where}.depends_on", dep, milestone_ids, "milestone", fix, own=m["id"])
        for i in m["code_intents"]:
            at = f"{where}.code_intents[{i['id']}]"
            fix = f"plan intent set {i['id']} --decision DL-n"
            for dl in i["decision_refs"]:
                ref(f"{at}.decision_refs", dl, decisions, "decision", fix)
        for c in m["code_changes"]:
            at, fix = f"{where}.code_changes[{c['id']}]", f"plan change set {c['id']} --intent CI-n"
            ref(f"{at}.intent_ref", c["intent_ref"], intent_ids, "intent", fix)
            fix = f"plan change capture --intent {c['intent_ref']} {c['file']}"
            for shared in c["shared_intents"]:
                ref(f"{at}.shared_intents", shared, intent_ids, "intent", fix)
    fix = "plan milestone set M-n … (any milestone change recomputes the waves)"
    for wave in [] if clean else plan["milestone_dependencies"]["waves"]:
        where = f"milestone_dependencies.waves[{wave['wave']}]"
        for mid in wave["milestones"]:
            ref(where, mid, milestone_ids, "milestone", fix)

    cycle = find_cycle({m["id"]: m["depends_on"] for m in milestones})
    if cycle:
        where, message = _where("milestones", cycle[0]), "dependency cycle " + " -> ".join(cycle)
        fix = f"plan milestone set {cycle[0]} --depends …"
        found.append(Finding(f"{where}.depends_on", message, fix, rule="dependency-cycle"))
    return found


def _still_sound(before: Mapping[str, Any], plan: Plan) -> bool:
    """Whether the milestones' and waves' findings are still none (see integrity): they depend
    on those two members and on the decision ids, of which none was removed."""
    if "milestones" in before or "milestone_dependencies" in before:
        return False
    was = before.get("planning_context", plan["planning_context"])["decision_log"]
    return {d["id"] for d in was} <= {d["id"] for d in plan["planning_context"]["decision_log"]}


def fingerprint() -> str:
    """The sha256 of integrity's code: a plan it found sound is sound for this code only."""
    import hashlib

    digest = hashlib.sha256()
    try:
        for name in ("validate.py", "waves.py"):
            with open(os.path.join(os.path.dirname(__file__), name), "rb") as f:
                digest.update(f.read())
    except OSError:  # no source to hash (a bytecode-only install): none matches
        return os.urandom(32).hex()
    return digest.hexdigest()


def completeness(plan: Plan, phase: str, root: str, base: str | None = None) -> list[Finding]:
    """What a phase needs; phases are cumulative (code includes design, docs includes code).

    Diffs are checked against commit `base` (the session's) plus the diffs planned before
    them, so a plan stays valid after its implementation merged; without a base, against
    the files under root.
    """
    found = _design(plan)
    if phase in ("code", "docs", "final"):
        found += _code(plan, root, base)
    if phase in ("docs", "final"):
        found += _docs(plan)
    return found


def _design(plan: Plan) -> list[Finding]:
    found = []
    overview = plan["overview"]
    for field, text in (("problem", overview["problem"]), ("approach", overview["approach"])):
        if not text.strip():
            found.append(_lacks(f"overview.{field}", "empty", f"plan overview set --{field} TEXT"))
    if not plan["milestones"]:
        found.append(_lacks("milestones", "no milestone", "plan milestone add --name N …"))
    for m in plan["milestones"]:
        if m["is_documentation_only"]:
            continue
        where = _where("milestones", m["id"])
        if not m["code_intents"]:
            fix = f"plan intent add --milestone {m['id']} --file F --behavior B"
            found.append(_lacks(f"{where}.code_intents", "no code intent", fix))
        if not m["acceptance_criteria"]:
            fix = f"plan milestone set {m['id']} --acceptance A"
            found.append(_lacks(f"{where}.acceptance_criteria", "no acceptance criterion", fix))
        for i in m["code_intents"]:
            if not i["behavior"].strip():
                fix = f"plan intent set {i['id']} --behavior B"
                found.append(_lacks(f"{where}.code_intents[{i['id']}].behavior", "empty", fix))
    return found


def _code(plan: Plan, root: str, base: str | None) -> list[Finding]:
    """Every intent has a change; every diff applies to the file as earlier diffs leave it."""
    found = []
    for m in plan["milestones"]:
        where = _where("milestones", m["id"])
        covered = {i for c in m["code_changes"] for i in (c["intent_ref"], *c["shared_intents"])}
        for i in m["code_intents"]:
            if i["id"] not in covered and not m["is_documentation_only"]:
                fix = _capture_fix(m, i["id"], i["file"])
                found.append(_lacks(f"{where}.code_intents[{i['id']}]", "no code change", fix))
        found += _tests_captured(m, where)
    applied: dict[str, str | None] = {}
    pairs = worktree.ordered_changes(plan)
    if base and pairs:
        paths = [c["file"] for _, c in pairs] + [p for _, c in pairs for p in _touched(c["diff"])]
        applied.update(worktree.base_reader(root, base)(paths))
    for m, c in pairs:
        where = _where("milestones", m["id"])
        fix = f"plan change capture --intent {c['intent_ref']} {c['file']}"
        for problem in unidiff.check(c["diff"], root, c["file"], applied):
            at = f"{where}.code_changes[{c['id']}].diff"
            found.append(Finding(at, problem, fix, rule="diff-does-not-apply"))
    return found


def _capture_fix(milestone: Milestone, intent_id: str, path: str) -> str:
    """How an intent gets its change: when a change of its milestone already holds the
    file's edits, capturing again finds no edit (they are that change's): move or share it."""
    holder = next((c for c in milestone["code_changes"] if c["file"] == path), None)
    if holder is None:
        return f"plan change capture --intent {intent_id} {path}"
    return (
        f"plan change set {holder['id']} --intent {intent_id} ({holder['id']} holds {path}'s "
        f"edits), or share it: plan change capture --intent {holder['intent_ref']} --intent "
        f"{intent_id} {path}"
    )


def _tests_captured(milestone: Milestone, where: str) -> list[Finding]:
    """A test file the milestone names is one it writes or changes: without a captured diff
    in the milestone, the executor would run a test that is not there."""
    changed = {c["file"] for c in milestone["code_changes"]}
    return [
        Finding(
            f"{where}.tests.files",
            f"{milestone['id']} names test file {path}, which has no captured diff",
            f"write it in the worktree, then plan change capture {path}; or name the "
            f"milestone's test files without it: plan milestone tests {milestone['id']} --file F",
        )
        for path in milestone["tests"]["files"]
        if path and path not in changed
    ]


def _touched(diff: str) -> list[str]:
    try:
        return unidiff.touched_files(diff)
    except unidiff.DiffError:
        return []


def _docs(plan: Plan) -> list[Finding]:
    found = []
    for m in plan["milestones"]:
        doc = m["documentation"]
        if not (
            m["code_changes"]  # documentation that lives in files is in the diffs
            or doc["module_comment"]
            or doc["docstrings"]
            or doc["algorithm_blocks"]
            or doc["inline_comments"]
        ):
            fix = f"plan doc set --milestone {m['id']} --module-comment T"
            found.append(_lacks(_where("milestones", m["id"]) + ".documentation", "empty", fix))
    return found


def meaning(plan: Plan) -> list[Finding]:
    """Placeholders left in text, items with empty text, risks with no mitigation."""
    found = []
    fix = "replace it with the real content (plan … set)"
    for path, text in _texts(plan, ""):
        match = PLACEHOLDER.search(text)
        if match:
            message = f"placeholder {match.group()!r} left in {_excerpt(text)}"
            found.append(Finding(path, message, fix, rule="placeholder"))
    ctx = plan["planning_context"]
    required_text: dict[str, tuple[Sequence[Mapping[str, object]], tuple[str, ...]]] = {
        "decision_log": (ctx["decision_log"], ("decision", "reasoning_chain")),
        "rejected_alternatives": (
            ctx["rejected_alternatives"],
            ("alternative", "rejection_reason"),
        ),
        "constraints": (ctx["constraints"], ("description",)),
        "known_risks": (ctx["known_risks"], ("risk",)),
        "choices": (ctx["choices"], ("topic",)),
    }
    fix = "give it content with the matching `plan … add` or `plan … set`"
    for group, (items, fields) in required_text.items():
        for item in items:
            for field in fields:
                if not str(item[field]).strip():
                    where = f"planning_context.{group}[{item['id']}].{field}"
                    found.append(Finding(where, "empty text", fix, rule="empty-text"))
    for r in ctx["known_risks"]:
        if not r["mitigation"].strip():
            where = f"planning_context.known_risks[{r['id']}].mitigation"
            fix = f"plan risk set {r['id']} --mitigation M"
            found.append(
                Finding(where, "risk without mitigation", fix, rule="risk-without-mitigation")
            )
    for m in plan["milestones"]:
        if not m["name"].strip():
            where = _where("milestones", m["id"]) + ".name"
            fix = f"plan milestone set {m['id']} --name N"
            found.append(Finding(where, "empty text", fix, rule="empty-text"))
    return found


def _texts(node: Any, path: str) -> Iterator[tuple[str, str]]:
    """Every human-written string with its path; paths, diffs, ids and times are not prose."""
    if isinstance(node, str):
        yield path, node
    elif isinstance(node, list):
        for index, item in enumerate(node):
            key = item["id"] if isinstance(item, dict) and "id" in item else index
            yield from _texts(item, f"{path}[{key}]")
    elif isinstance(node, dict):
        for key, value in node.items():
            if key not in NOT_PROSE:
                yield from _texts(value, f"{path}.{key}" if path else key)


def same_file_same_wave(plan: Plan) -> list[Finding]:
    """Warnings: milestones of one wave (neither depends on the other) that change the same file
    run side by side, though the later one's diffs build on the earlier one's. Each is named
    with the one before it that changes the file, so the fixes make a chain (n findings for n
    milestones on one file, not n squared)."""
    by_id = {m["id"]: m for m in plan["milestones"]}
    found = []
    for wave in compute_waves(plan["milestones"]):
        last: dict[str, str] = {}  # file -> the wave's latest milestone so far that changes it
        for later in wave["milestones"]:
            pairs: dict[str, list[str]] = {}  # earlier milestone -> the files both change
            for path in sorted(changed_files(by_id[later])):
                if path in last:
                    pairs.setdefault(last[path], []).append(path)
                last[path] = later
            for first, both in pairs.items():
                found.append(
                    Finding(
                        _where("milestones", later) + ".depends_on",
                        f"{first} and {later} both change {', '.join(both)} in wave "
                        f"{wave['wave']}: they run side by side, though {later}'s diffs "
                        f"build on {first}'s",
                        f"plan milestone set {later} --depends {first}",
                        level="warning",
                        rule=SAME_FILE_SAME_WAVE,
                    )
                )
    return found


def _excerpt(text: str) -> str:
    match = PLACEHOLDER.search(text)
    start = max(0, match.start() - 20) if match else 0
    return repr(text[start : start + 50])


def validate(
    plan: Plan,
    phase: str | None,
    root: str,
    question_ids: set[str] | None = None,
    base: str | None = None,
) -> list[Finding]:
    """Everything `plan validate` reports: integrity, meaning, and the phase's completeness."""
    found = integrity(plan, question_ids) + meaning(plan)
    if phase:
        found += completeness(plan, phase, root, base)
    return found
