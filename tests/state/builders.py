"""Small builders of state documents for the state/ tests: valid unless a test breaks them.

Plan items take their number and any field to override; `plan()` fills the schema's defaults
(as the store does on read) so validators and the diff see complete documents.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from state.storage import schema

TS = "2024-05-01T12:00:00Z"
LATER = "2024-05-02T08:30:00.250Z"


def filled(name: str, doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` with the schema's defaults filled in; it must already be schema-valid."""
    problems = schema.check(name, doc)
    assert not problems, problems
    return doc


def decision(n: int, **fields: Any) -> dict[str, Any]:
    return {
        "id": f"DL-{n:03d}",
        "decision": f"Decision {n}",
        "reasoning_chain": f"Reasoning for decision {n}",
        "timestamp": TS,
        **fields,
    }


def alternative(n: int, decision_ref: str = "DL-001", **fields: Any) -> dict[str, Any]:
    return {
        "id": f"RA-{n:03d}",
        "alternative": f"Alternative {n}",
        "rejection_reason": "too complex",
        "decision_ref": decision_ref,
        **fields,
    }


def constraint(n: int, **fields: Any) -> dict[str, Any]:
    return {"id": f"C-{n:03d}", "type": "MUST", "description": f"Constraint {n}", **fields}


def risk(n: int, **fields: Any) -> dict[str, Any]:
    return {"id": f"R-{n:03d}", "risk": f"Risk {n}", "mitigation": "careful tests", **fields}


def choice(n: int, letters: str = "AB", **fields: Any) -> dict[str, Any]:
    options = [{"id": f"OPT-{x}", "name": f"Option {x}"} for x in letters]
    return {
        "id": f"D-{n:03d}",
        "topic": f"Topic {n}",
        "options": options,
        "picked": None,
        "rationale": None,
        "decision_ref": None,
        **fields,
    }


def intent(n: int, **fields: Any) -> dict[str, Any]:
    return {
        "id": f"CI-{n:03d}",
        "file": "src/app.py",
        "behavior": f"Behaviour {n}",
        **fields,
    }


def change(n: int, intent_ref: str, diff: str = "", **fields: Any) -> dict[str, Any]:
    return {
        "id": f"CC-{n:03d}",
        "intent_ref": intent_ref,
        "file": "src/app.py",
        "diff": diff,
        **fields,
    }


def milestone(n: int, **fields: Any) -> dict[str, Any]:
    return {"id": f"M-{n:03d}", "number": n, "name": f"Milestone {n}", **fields}


def plan(
    *,
    milestones: list[dict[str, Any]] | None = None,
    decisions: list[dict[str, Any]] | None = None,
    alternatives: list[dict[str, Any]] | None = None,
    constraints: list[dict[str, Any]] | None = None,
    risks: list[dict[str, Any]] | None = None,
    choices: list[dict[str, Any]] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A schema-valid plan with defaults filled; lists default to empty."""
    doc = {
        "plan_id": "3f1c2a9e-0000-4000-8000-000000000001",
        "created_at": TS,
        "planning_context": {
            "decision_log": decisions or [],
            "rejected_alternatives": alternatives or [],
            "constraints": constraints or [],
            "known_risks": risks or [],
            "choices": choices or [],
        },
        "milestones": milestones or [],
        **fields,
    }
    return filled("plan", doc)


def rich_plan() -> dict[str, Any]:
    """Every kind of plan item, every optional field given at least once; integrity holds."""
    return plan(
        overview={"title": "Farewell", "problem": "No goodbye.", "approach": "Add farewell()."},
        decisions=[
            decision(1, question_refs=["Q-001"]),
            decision(2, superseded_by="DL-003", superseded_reason="simpler"),
            decision(3),
        ],
        alternatives=[alternative(1, decision_ref="DL-001")],
        constraints=[constraint(1, source="user")],
        risks=[risk(1, anchor="src/app.py:1", decision_ref="DL-001"), risk(2)],
        choices=[
            choice(
                1,
                options=[
                    {
                        "id": "OPT-A",
                        "name": "A function",
                        "description": "plain",
                        "pros": ["small"],
                        "cons": ["flat"],
                        "recommended": True,
                    },
                    {"id": "OPT-B", "name": "A class"},
                ],
                picked="OPT-A",
                rationale="smallest",
                decision_ref="DL-001",
            )
        ],
        invisible_knowledge={
            "architecture": {"diagram_ascii": "[app] -> [out]", "description": "one module"},
            "data_flow": {"diagram_ascii": "name -> text", "description": "pure"},
            "structure_rationale": "greetings together",
            "invariants": ["greet() unchanged"],
            "tradeoffs": ["no i18n"],
        },
        milestones=[
            milestone(
                1,
                files=["src/app.py"],
                flags=["core"],
                requirements=["farewell exists"],
                acceptance_criteria=["farewell('x') == 'bye x'"],
                risk="low",
                tests={
                    "files": ["tests/test_app.py"],
                    "type": "unit",
                    "backing": "pytest",
                    "scenarios": {"normal": ["ann"], "edge": ["''"], "error": ["None"]},
                    "skip_reason": None,
                },
                code_intents=[
                    intent(
                        1,
                        function="farewell",
                        decision_refs=["DL-001"],
                        params={"name": "str"},
                    )
                ],
                code_changes=[
                    change(
                        1,
                        "CI-001",
                        diff="--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1,2 @@\n x\n+y\n",
                        context_lines=1,
                        why_comments=["mirrors greet"],
                    )
                ],
                documentation={
                    "module_comment": "greetings",
                    "docstrings": ["farewell: say bye"],
                    "algorithm_blocks": ["none"],
                    "inline_comments": ["why"],
                },
                delegated_to="helper",
            ),
            milestone(
                2,
                depends_on=["M-001"],
                is_documentation_only=True,
                documentation={"module_comment": "README"},
            ),
        ],
        milestone_dependencies={
            "diagram_ascii": "wave 1: M-001\nwave 2: M-002 (after M-001)",
            "waves": [{"wave": 1, "milestones": ["M-001"]}, {"wave": 2, "milestones": ["M-002"]}],
        },
        frozen_at=LATER,
    )


def question(n: int, **fields: Any) -> dict[str, Any]:
    return {
        "id": f"Q-{n:03d}",
        "category": "scope",
        "kind": "choice",
        "text": f"Question {n}?",
        "asked_at": TS,
        **fields,
    }


def context() -> dict[str, Any]:
    return filled(
        "context",
        {
            "task_spec": {"goal": "say bye", "scope": "app", "out_of_scope": "i18n"},
            "constraints": ["MUST keep greet"],
            "entry_points": ["src/app.py"],
            "rejected_alternatives": ["a class"],
            "current_understanding": ["one module"],
            "assumptions": ["ascii names"],
            "invisible_knowledge": ["none"],
            "user_quotes": ["keep it small"],
            "gathered": {
                "base": "abc123",
                "scanned_at": TS,
                "documents": ["README.md"],
                "changed_files": ["src/app.py"],
                "change_types": ["feature"],
                "relevant_documents": {"src/app.py": ["README.md"]},
                "summary": "small",
            },
            "questions": [
                question(
                    1,
                    why="scope",
                    options=[{"label": "yes", "description": "do it"}, {"label": "no"}],
                    recommended="yes",
                    answer="yes",
                    answered_at=LATER,
                ),
                question(2, category="technical", kind="text", skipped=True, assumed=True),
            ],
        },
    )


def qr_report() -> dict[str, Any]:
    return filled(
        "qr",
        {
            "phase": "plan-design",
            "iteration": 2,
            "items": [
                {"id": "qa-001", "check": "has milestones"},
                {
                    "id": "qa-002",
                    "check": "risks mitigated",
                    "scope": "R-001",
                    "severity": "SHOULD",
                    "status": "FAIL",
                    "finding": "no mitigation",
                    "source": "validator",
                    "iteration": 2,
                },
            ],
            "accepted": {"by": "user", "reason": "fine", "at": LATER, "items": ["qa-002"]},
        },
    )


def session(project_root: str = "/tmp/project", **fields: Any) -> dict[str, Any]:
    return filled(
        "session",
        {
            "id": "2024-05-01-farewell-abc123",
            "task": "Add a farewell",
            "created_at": TS,
            "updated_at": LATER,
            "project_root": project_root,
            **fields,
        },
    )


def rich_session() -> dict[str, Any]:
    return session(
        status="review",
        base_commit="0" * 40,
        workflow="planner",
        step=11,
        reached={"planner": 11},
        next_command="plan review approve",
        non_interactive=True,
        config={"interactive": False, "depth": "quick", "guard": "strict", "qr_max_iterations": 2},
        qr={"plan-design": {"iteration": 2, "state": "retry"}},
        rejects=1,
        reviews=[
            {"round": 1, "verdict": "rejected", "at": TS, "by": "user", "feedback": "more"},
            {"round": 2, "verdict": "submitted", "at": LATER, "sha256": "f" * 64},
        ],
        review_started_at=LATER,
        approval={"by": "user", "at": LATER, "sha256": "a" * 64},
        reason=None,
    )


def execution() -> dict[str, Any]:
    return filled(
        "execution",
        {
            "base_commit": "0" * 40,
            "started_at": TS,
            "drift": ["src/app.py"],
            "milestones": [
                {"id": "M-001", "status": "done", "started_at": TS, "done_at": LATER},
                {"id": "M-002", "evidence": ["pytest passed"]},
            ],
            "deviations": [
                {"id": "DV-001", "milestone": "M-001", "description": "renamed", "at": LATER}
            ],
            "tests_run": ["tests/test_app.py"],
        },
    )


def config() -> dict[str, Any]:
    return filled("config", {"interactive": False, "questions_min": 0, "approval_timeout": 60})


VALID_DOCUMENTS = {
    "plan": rich_plan,
    "context": context,
    "qr": qr_report,
    "session": rich_session,
    "execution": execution,
    "config": config,
}


def fresh(name: str) -> dict[str, Any]:
    return copy.deepcopy(VALID_DOCUMENTS[name]())


def snapshot(state_dir: Path) -> dict[str, bytes]:
    """Every file of a session directory (the lock file aside) and its bytes."""
    return {
        str(p.relative_to(state_dir)): p.read_bytes()
        for p in sorted(state_dir.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }
