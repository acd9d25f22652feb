"""The read-only guard hook's entry, as hooks/hooks.json runs it:
`python3 -S -I hooks/guard.py [--dialect claude|codex|gemini]`. The guard is
hooks/guard_hook.py, imported so that its bytecode is cached (a script run as __main__ is
compiled again on every call, ~3 ms of a ~30 ms budget).

This file parses on Python 3.6 (no `from __future__ import annotations`, no newer syntax), so
an old python3 gets a clear denial and exit 2 here instead of a SyntaxError, which Codex and
Gemini CLI would read as "let it run". What it imports needs 3.8.
"""

import os
import sys

if sys.version_info < (3, 8):  # noqa: UP036
    sys.stderr.write("planner guard: needs Python 3.8+ as python3; denied to be safe\n")
    reason = "The read-only guard needs Python 3.8+ (python3 is older); denied to be safe."
    if "gemini" in " ".join(sys.argv[1:]):
        sys.stdout.write('{"decision": "deny", "reason": "' + reason + '"}\n')
    else:
        inner = '"hookEventName": "PreToolUse", "permissionDecision": "deny"'
        inner += ', "permissionDecisionReason": "' + reason + '"'
        sys.stdout.write('{"hookSpecificOutput": {' + inner + "}}\n")
    sys.exit(2)

if __name__ == "__main__":
    import gc

    gc.disable()  # a short process that makes no garbage worth a collector's walks (~4%)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from hooks.guard_hook import main

    main()
    sys.stderr.flush()
    os._exit(0)  # stdout went out through os.write; skipping teardown saves ~1.5 ms per call
