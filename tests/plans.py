"""A complete plan for the `project` fixture, as `plan` commands and as one `plan apply` batch.

Both describe the same plan: one code milestone (a farewell function in src/app.py) and
one documentation milestone, everything every phase of validation asks for.
"""

from __future__ import annotations

from bench.sample import FAREWELL_DIFF as FAREWELL_DIFF

README_DIFF = """\
--- a/README.md
+++ b/README.md
@@ -1 +1,3 @@
 # Demo
+
+Call farewell(name) to say goodbye.
"""

# (command words, created id or None); "{diff}" stands for a diff file given by the test.
COMMANDS: list[tuple[list[str], str | None]] = [
    (
        [
            "overview",
            "set",
            "--title",
            "Farewell",
            "--problem",
            "Users cannot say goodbye.",
            "--approach",
            "Add farewell() beside greet().",
        ],
        None,
    ),
    (
        [
            "decision",
            "add",
            "--decision",
            "Mirror greet()",
            "--reasoning",
            "Same shape keeps the module obvious.",
        ],
        "DL-001",
    ),
    (
        [
            "alternative",
            "add",
            "--alternative",
            "A Farewell class",
            "--reason",
            "More structure than one function needs.",
            "--decision",
            "DL-001",
        ],
        "RA-001",
    ),
    (
        [
            "constraint",
            "add",
            "--type",
            "MUST",
            "--description",
            "Keep greet() unchanged",
            "--source",
            "user",
        ],
        "C-001",
    ),
    (
        [
            "risk",
            "add",
            "--risk",
            "Name clash with an existing farewell",
            "--mitigation",
            "grep shows none",
            "--decision",
            "DL-001",
        ],
        "R-001",
    ),
    (
        [
            "knowledge",
            "set",
            "--architecture",
            "One module, two functions.",
            "--structure-rationale",
            "Greetings stay together.",
        ],
        None,
    ),
    (["invariant", "add", "greet() returns 'hi ' + name"], None),
    (["tradeoff", "add", "No i18n yet"], None),
    (
        [
            "milestone",
            "add",
            "--name",
            "Farewell function",
            "--file",
            "src/app.py",
            "--requirement",
            "farewell(name) returns 'bye ' + name",
            "--acceptance",
            "farewell('x') == 'bye x'",
            "--risk",
            "low",
        ],
        "M-001",
    ),
    (
        [
            "milestone",
            "tests",
            "M-001",
            "--type",
            "unit",
            "--normal",
            "farewell('ann')",
            "--edge",
            "empty name",
            "--error",
            "None name",
        ],
        None,
    ),
    (
        [
            "intent",
            "add",
            "--milestone",
            "M-001",
            "--file",
            "src/app.py",
            "--function",
            "farewell",
            "--behavior",
            "Return 'bye ' + name",
            "--decision",
            "DL-001",
        ],
        "CI-001",
    ),
    (
        [
            "change",
            "add",
            "--intent",
            "CI-001",
            "--file",
            "src/app.py",
            "--diff",
            "{app}",
            "--why",
            "mirrors greet",
        ],
        "CC-001",
    ),
    (["doc", "set", "M-001", "--docstring", "farewell: say goodbye to name"], None),
    (
        [
            "milestone",
            "add",
            "--name",
            "Document farewell",
            "--file",
            "README.md",
            "--doc-only",
            "--depends",
            "M-001",
        ],
        "M-002",
    ),
    (
        ["doc", "set", "M-002", "--module-comment", "README: how to say goodbye"],
        None,
    ),
]


def batch(app_diff: str = FAREWELL_DIFF) -> list[dict]:
    """The same plan as COMMANDS, as one `plan apply` batch using "$K" references."""
    return [
        {
            "op": "overview set",
            "args": {
                "title": "Farewell",
                "problem": "Users cannot say goodbye.",
                "approach": "Add farewell() beside greet().",
            },
        },
        {
            "op": "decision add",
            "args": {
                "decision": "Mirror greet()",
                "reasoning": "Same shape keeps the module obvious.",
            },
        },
        {
            "op": "alternative add",
            "args": {
                "alternative": "A Farewell class",
                "reason": "More structure than one function needs.",
                "decision": "$2",
            },
        },
        {
            "op": "constraint add",
            "args": {"type": "MUST", "description": "Keep greet() unchanged", "source": "user"},
        },
        {
            "op": "risk add",
            "args": {
                "risk": "Name clash with an existing farewell",
                "mitigation": "grep shows none",
                "decision": "$2",
            },
        },
        {
            "op": "knowledge set",
            "args": {
                "architecture": "One module, two functions.",
                "structure_rationale": "Greetings stay together.",
            },
        },
        {"op": "invariant add", "args": {"text": "greet() returns 'hi ' + name"}},
        {"op": "tradeoff add", "args": {"text": "No i18n yet"}},
        {
            "op": "milestone add",
            "args": {
                "name": "Farewell function",
                "file": ["src/app.py"],
                "requirement": ["farewell(name) returns 'bye ' + name"],
                "acceptance": ["farewell('x') == 'bye x'"],
                "risk": "low",
            },
        },
        {
            "op": "milestone tests",
            "args": {
                "id": "$9",
                "type": "unit",
                "normal": ["farewell('ann')"],
                "edge": ["empty name"],
                "error": ["None name"],
            },
        },
        {
            "op": "intent add",
            "args": {
                "milestone": "$9",
                "file": "src/app.py",
                "function": "farewell",
                "behavior": "Return 'bye ' + name",
                "decision": ["$2"],
            },
        },
        {
            "op": "change add",
            "args": {
                "intent": "$11",
                "file": "src/app.py",
                "diff": app_diff,
                "why": ["mirrors greet"],
            },
        },
        {
            "op": "doc set",
            "args": {"id": "$9", "docstring": ["farewell: say goodbye to name"]},
        },
        {
            "op": "milestone add",
            "args": {
                "name": "Document farewell",
                "file": ["README.md"],
                "doc_only": True,
                "depends": ["$9"],
            },
        },
        {
            "op": "doc set",
            "args": {"id": "$14", "module_comment": "README: how to say goodbye"},
        },
    ]
