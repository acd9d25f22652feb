"""The canonical content of a plan and its sha256: what an approval binds.

Canonical content is plan.json without frozen_at, keys sorted, no whitespace, UTF-8.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.storage.documents import Plan


def plan_hash(plan: Plan) -> str:
    content = {k: v for k, v in plan.items() if k != "frozen_at"}
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    import hashlib  # on use: it loads OpenSSL, which commands that only read need not pay

    return hashlib.sha256(text.encode()).hexdigest()
