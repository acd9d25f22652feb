"""The sample the tests and the benchmarks both walk: a project whose src/app.py gains
farewell() beside greet(), and the design batch an architect records (bench/agent.py runs
the commands the steps print). Never imported by the package."""

FAREWELL_DIFF = """\
--- a/src/app.py
+++ b/src/app.py
@@ -1,2 +1,5 @@
 def greet(name):
     return 'hi ' + name
+
+def farewell(name):
+    return 'bye ' + name
"""

DESIGN = [
    {
        "op": "overview set",
        "args": {"title": "Farewell", "problem": "No goodbye.", "approach": "Add farewell()."},
    },
    {"op": "decision add", "args": {"decision": "Mirror greet()", "reasoning": "Obvious."}},
    {
        "op": "milestone add",
        "args": {
            "name": "Farewell",
            "file": ["src/app.py"],
            "acceptance": ["farewell('x') == 'bye x'"],
        },
    },
    {
        "op": "intent add",
        "args": {
            "milestone": "$3",
            "file": "src/app.py",
            "function": "farewell",
            "behavior": "Return 'bye ' + name",
            "decision": ["$2"],
        },
    },
]
