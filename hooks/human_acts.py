"""The person's own acts: `plan` commands only a person carries out, never an agent's batch.

`plan apply` refuses them by the command a batch's op resolves to, whatever its spelling.
Imports nothing and lives with the hooks, so the guard (asks) and `plan apply` (cli/, above
hooks/ in the layers) share one list; state/ never names CLI commands.
"""

from __future__ import annotations

# Command paths after `plan`. Adding a human act is one line here; names of commands not
# (yet) in the tree are harmless: a batch op resolving to nothing is unknown anyway.
HUMAN_ACTS = frozenset(
    {
        "review approve",
        "review reject",
        "qr accept",
        "cancel",
        "fail",
        "resume",
        "result accept",
        "result request-changes",
    }
)

# Where the person can do it instead of a terminal.
ELSEWHERE = {
    "review": "use the review page (`plan review open`)",
    "result": "use the review page (`plan review open`)",
}


def is_human_act(path: str) -> bool:
    """Whether the command path ("review approve", spaces as given) is the person's act."""
    return " ".join(path.split()) in HUMAN_ACTS


def refusal(path: str) -> str:
    """What a refusal says: whose act it is and where the person carries it out."""
    path = " ".join(path.split())
    other = ELSEWHERE.get(path.split(" ", 1)[0])
    how = f"ask the person to run `plan {path}` in their terminal" + (
        f", or to {other}" if other else ""
    )
    return f"`plan {path}` is the person's act, never an agent's batch: {how}"
