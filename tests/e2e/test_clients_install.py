"""Codex CLI and Gemini CLI from their own install, on a fresh HOME (offline, ../shared/harness).

Each runs the README's own install lines, word for word, in the harness's scratch HOME (the
clone's URL replaced by a git repository of this checkout's files): `git clone … ~/src/planner`
then `python3 ~/src/planner/hooks/install.py codex|gemini`. Codex: just before Codex starts (a
CODEX_BIN shim), with TMPDIR outside /tmp so that HOME is read-only inside Codex's sandbox, as
a real one is. Gemini CLI: in place of the harness's `extensions link` (a GEMINI_BIN shim);
`install.py gemini` calls the real `gemini extensions install`. The launchers are where the
install links them, ~/.local/bin of that HOME.

In each: one skill per name, the environment built (by the install command, or by the
SessionStart hook outside Codex's sandbox), a quick plan walked to frozen by its routing lines,
the guard denying a project write and the agent's own approval, and the SessionStart status
true for the client before and after approval. Slow: one real environment build per run; pip
installs from a wheelhouse downloaded just before (the harness lets nothing else out).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e.conftest import (
    CACHE,
    RUN_CODEX,
    RUN_GEMINI,
    SCENARIOS,
    needs_codex,
    needs_gemini,
    start_session,
)

pytestmark = pytest.mark.client

QUICK = json.loads((SCENARIOS / "quick_plan.json").read_text())["turns"][0]["follow"]["on"]
TASK = "planner --step 1 --task 'Add a farewell' --depth quick --non-interactive"
WALK = {
    "follow": {
        # Step 1 (the TASK turn) printed step 2's prompt too; running step 2 again re-renders it.
        "start": "planner --step 2",
        "until": "^NEXT: executor --step 1",
        "max": 20,
        "description": "Run the next planner step",
        "on": [rule for rule in QUICK if rule["match"] != "^PLANNER 1/11"],
    }
}


# In Codex, step 3's design is followed by step 6's kind of work: an edit in the scratch
# worktree (apply_patch, a raw patch: the file exists only once `plan worktree` worked) and
# `plan change capture`, which records it as the intent's diff.
FAREWELL_PATCH = """*** Begin Patch
*** Update File: {{state_dir}}/worktree/src/app.py
@@
 def greet(name):
     return 'hi ' + name
+
+
+def farewell(name):
+    return 'bye ' + name
*** End Patch
"""


def walk_editing_at_step_3(edit: dict) -> dict:
    """WALK, where step 3's work is followed by `edit` in the worktree and a capture."""
    at_3 = [
        {"match": r["match"], "turns": [{"bash": r["bash"]}, edit, CAPTURE]}
        if r["match"] == "^PLANNER 3/11"
        else r
        for r in WALK["follow"]["on"]
    ]
    return {"follow": {**WALK["follow"], "on": at_3}}


CAPTURE = {"bash": "plan change capture", "description": "Record the edit"}
CODEX_WALK = walk_editing_at_step_3({"tool": "apply_patch", "input": {"patch": FAREWELL_PATCH}})


# In Gemini CLI the same edit is a write_file of the whole new text into the worktree.
FAREWELL_TEXT = (
    "def greet(name):\n    return 'hi ' + name\n\n\ndef farewell(name):\n    return 'bye ' + name\n"
)
GEMINI_WALK = walk_editing_at_step_3(
    {"write": {"file_path": "{{state_dir}}/worktree/src/app.py", "content": FAREWELL_TEXT}}
)


def codex_binary() -> Path | None:
    found = sorted(Path(CACHE, "codex", "node_modules").glob("@openai/codex-*/vendor/*/bin/codex"))
    return found[0] if found else None


def readme_install(section: str, source: Path) -> str:
    """The README's install lines of `section` ("Codex CLI", "Gemini CLI") as one shell
    command, the clone's URL replaced by `source`."""
    readme = (REPO / "README.md").read_text()
    part = readme.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    block = part.split("```sh\n", 1)[1].split("```", 1)[0]
    lines = [ln for ln in block.splitlines() if ln.strip() and not ln.startswith("#")]
    assert lines[0] == "git clone https://github.com/planner-dev/planner ~/src/planner", lines
    return " && ".join(lines).replace("https://github.com/planner-dev/planner", str(source))


def git_source(tmp_path: Path) -> Path:
    """This checkout's files (as they are now) as a git repository to clone."""
    source = clean_copy(tmp_path)
    for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-qm", "planner")):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=source, check=True
        )
    return source


def home_launchers(tmp_path: Path) -> None:
    """tmp_path/bin (on the run's PATH): the launchers where the install links them."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("planner", "executor", "plan"):
        launcher = bin_dir / name
        launcher.write_text(f'#!/bin/sh\nexec "$HOME/.local/bin/{name}" "$@"\n')
        launcher.chmod(0o755)


def codex_readme_shim(tmp_path: Path) -> Path:
    """CODEX_BIN: the README's install lines in the run's own HOME, then the real Codex."""
    real = codex_binary()
    assert real is not None
    home_launchers(tmp_path)
    install = shlex.quote(readme_install("Codex CLI", git_source(tmp_path)))
    shim = tmp_path / "codex"
    shim.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = exec ]; then sh -c {install} >{tmp_path}/install.out 2>&1 || exit 3; fi\n'
        f'exec {real} "$@"\n'
    )
    shim.chmod(0o755)
    return shim


def codex_shim(tmp_path: Path, python: str, *install_args: str) -> Path:
    """CODEX_BIN: the install command in the run's own HOME, then the real Codex."""
    real = codex_binary()
    assert real is not None
    shim = tmp_path / "codex"
    install = " ".join(
        [python, "-S", "-I", f"{REPO}/hooks/install.py", "codex", *install_args,
         "--bin-dir", str(tmp_path / "bin")]
    )  # fmt: skip
    shim.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = exec ]; then {install} >{tmp_path}/install.out 2>&1 || exit 3; fi\n'
        f'exec {real} "$@"\n'
    )
    shim.chmod(0o755)
    return shim


def run_codex(
    tmp_path: Path, scenario: dict, shim: Path, tmpdir: Path, path: str, *env: str, out="out"
) -> tuple[int, dict]:
    environ = {"CODEX_BIN": str(shim), "TMPDIR": str(tmpdir)}
    return run_client(RUN_CODEX, tmp_path, scenario, path, env, out, environ)


def run_client(
    runner: Path,
    tmp_path: Path,
    scenario: dict,
    path: str,
    env: tuple[str, ...],
    out: str,
    environ: dict[str, str],
    *flags: str,
) -> tuple[int, dict]:
    """Play `scenario` in a real client through the harness's `runner`; (exit code, summary)."""
    (tmp_path / f"{out}.json").write_text(json.dumps(scenario))
    where = tmp_path / out
    extra = [x for pair in (("--env", e) for e in env) for x in pair]
    done = subprocess.run(
        [
            str(runner),
            *("--scenario", str(tmp_path / f"{out}.json"), *flags),
            *("--workdir", str(tmp_path / "project"), "--out", str(where)),
            *("--path", f"{tmp_path / 'bin'}:{path}", "--timeout", "600", "--quiet"),
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, **environ},
    )
    summary = where / "summary.json"
    assert summary.exists(), done.stderr[-2000:]
    return done.returncode, json.loads(summary.read_text())


def results(s: dict) -> list[tuple[str, str]]:
    """(command or patch, what the model got) per call, in order."""
    by_id = {r.get("tool_use_id", r.get("id")): r for r in s["tool_results"]}
    calls = []
    for call in s["tool_calls"]:
        got = by_id.get(call["id"], {})
        calls.append((call.get("command") or call.get("patch") or "", got.get("text", "")))
    return calls


@needs_codex
def test_codex_from_its_install_command_walks_a_quick_plan(
    project: Path,
    tmp_path: Path,
    isolated_path: str,
    wheelhouse: Path,
    outside_tmp: Path,
) -> None:
    python = shutil.which("python3", path=isolated_path)
    assert python
    shim = codex_readme_shim(tmp_path)
    readme = (project / "README.md").read_text()
    scenario = {
        "prompt": "Add a farewell(name) function to src/app.py. Plan it first, quickly.",
        "turns": [
            {"skill": "planner"},
            {"bash": TASK, "description": "Start the plan"},
            {"write": {"file_path": "{{cwd}}/NOTES.md", "content": "planning notes\n"}},
            {"bash": "plan review approve --by me", "description": "Approve it myself"},
            {"bash": "plan worktree", "description": "The scratch worktree"},
            CODEX_WALK,
            {"bash": "plan status", "description": "Where the plan stands"},
            {"text": "The quick plan is approved and frozen."},
        ],
    }
    rc, s = run_codex(
        tmp_path, scenario, shim, outside_tmp, isolated_path,
        "CI=1", "PIP_NO_INDEX=1", f"PIP_FIND_LINKS={wheelhouse}",
    )  # fmt: skip
    installed = (tmp_path / "install.out").read_text()
    assert rc == 0 and s["ok"], (rc, s["stderr_tail"], installed)

    # The one command said what it wrote, made the environment, and put trust last.
    assert "hooks.json: the guard and SessionStart (written)" in installed
    assert "Python environment ready" in installed
    assert installed.rstrip().splitlines()[-1].startswith("IMPORTANT: Codex runs new hooks only")

    # One skill named planner, in a folder that holds only its SKILL.md.
    assert [k for k in s["local_skills"] if "planner" in k] == ["planner"], s["skills"]

    calls = results(s)
    assert calls[1][0] == TASK and "PLANNER 1/11" in calls[1][1], calls[1]
    assert not calls[1][1].startswith("Exit code"), calls[1]
    reasons = [d["reason"] for d in s["hook_denials"]]
    assert len(reasons) >= 2, reasons
    assert "scratch worktree" in reasons[0]  # the project write (apply_patch)
    assert "person's decision" in reasons[1] and "Command:" not in reasons[1]
    assert not (project / "NOTES.md").exists()
    assert (project / "README.md").read_text() == readme
    got = [r.get("raw", r["text"]) for r in s["tool_results"]]
    assert not any(".. Command:" in text for text in got), got

    # The quick plan reached frozen, approved by CI, not by the agent.
    state = Path(calls[1][1].split("STATE_DIR=")[1].split()[0])
    session = json.loads((state / "session.json").read_text())
    assert json.loads((state / "plan.json").read_text())["frozen_at"]
    assert session["approval"]["by"] == "auto"

    # Before approval SessionStart had nothing to say (no session yet); after it, a new
    # Codex session is told the plan is approved, with no guard line and no sandbox claim.
    (tmp_path / "bin" / "planner").unlink()  # the launchers as codex_shim links them
    for name in ("executor", "plan"):
        (tmp_path / "bin" / name).unlink()
    shim = codex_shim(tmp_path, python, "--no-build")  # nothing runs: no environment needed
    rc, after = run_codex(
        tmp_path, {"turns": [{"text": "ok"}]}, shim, outside_tmp, isolated_path,
        f"PLANNER_PYTHON={sys.executable}", out="after",
    )  # fmt: skip
    assert rc == 0 and after["ok"], after["stderr_tail"]
    context = "\n".join(map(str, after["hook_messages"]))
    assert "planner: an active session" in context and "approved" in context, context
    assert "sandbox" not in context and "read-only" not in context, context

    # Step 6's worktree: made inside Codex's sandbox, which keeps the project's .git read-only
    # (the worktree has its own git dir in the session).
    worktree = calls[4][1]
    assert not worktree.startswith("Exit code"), worktree[:300]
    assert (state / "worktree").is_dir()
    plan = json.loads((state / "plan.json").read_text())
    changes = [c for m in plan["milestones"] for c in m["code_changes"]]
    assert [c["intent_ref"] for c in changes] == ["CI-001"], changes
    assert "+def farewell(name):" in json.dumps(changes)
    assert (project / "src" / "app.py").read_text() == "def greet(name):\n    return 'hi ' + name\n"


@needs_codex
def test_codex_session_start_builds_the_environment_outside_the_sandbox_and_tells_the_truth(
    project: Path,
    tmp_path: Path,
    isolated_path: str,
    wheelhouse: Path,
    outside_tmp: Path,
) -> None:
    """Installed without building: the SessionStart hook (outside Codex's sandbox, where HOME
    is writable and pip reaches its index) makes the environment; the launchers in the sandbox
    wait for it. The status names no sandbox: Codex runs none."""
    python = shutil.which("python3", path=isolated_path)
    assert python
    state = start_session(project)
    shim = codex_shim(tmp_path, python, "--no-build")
    wait = (
        "for i in $(seq 25); do ls $HOME/.local/share/planner/*/venv/bin/planner"
        " >/dev/null 2>&1 && break; sleep 1; done; echo waited $i"
    )
    scenario = {
        "prompt": "Where does the plan stand?",
        "turns": [
            {"bash": wait, "description": "Wait for the environment"},
            {"bash": wait, "description": "Wait for the environment"},
            {"bash": wait, "description": "Wait for the environment"},
            {"bash": "plan status", "description": "Where the plan stands"},
            {"bash": 'test -w "$HOME" && echo writable || echo read-only', "description": "?"},
            {"text": "done"},
        ],
    }
    rc, s = run_codex(
        tmp_path, scenario, shim, outside_tmp, isolated_path,
        "PIP_NO_INDEX=1", f"PIP_FIND_LINKS={wheelhouse}",
    )  # fmt: skip
    assert rc == 0 and s["ok"], (rc, s["stderr_tail"])
    calls = results(s)
    assert calls[4][1].strip() == "read-only"  # as a real HOME is, in Codex's sandbox
    status = calls[3][1]
    assert not status.startswith("Exit code") and f"STATE_DIR={state}" in status
    assert "command parsing only (Codex runs no rewritten command" in status, status
    context = "\n".join(map(str, s["hook_messages"]))
    assert "planner: an active session" in context
    # the person made the session in a terminal: no guard call heard before SessionStart, so it
    # says so (the status above, after the agent's judged calls, names the guard)
    assert "planning is NOT guarded" in context
    assert "sandbox except" not in context


def gemini_bundle() -> Path | None:
    found = Path(CACHE, "gemini", "node_modules", "@google", "gemini-cli", "bundle", "gemini.js")
    return found if found.exists() else None


def clean_copy(tmp_path: Path) -> Path:
    """This folder as a fresh clone has it: no virtualenv, caches or git metadata."""
    junk = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*_cache", "*.egg-info")
    return Path(shutil.copytree(REPO, tmp_path / "planner", ignore=junk))


def gemini_shims(tmp_path: Path) -> Path:
    """GEMINI_BIN, whose `extensions link` runs the README's install lines instead (in the
    run's HOME; `install.py gemini` calls the real Gemini CLI, `gemini` on PATH)."""
    bundle = gemini_bundle()
    node = shutil.which("node")
    assert bundle is not None and node
    home_launchers(tmp_path)
    gemini = tmp_path / "bin" / "gemini"
    gemini.write_text(f'#!/bin/sh\nexec {node} {bundle} "$@"\n')
    gemini.chmod(0o755)
    install = readme_install("Gemini CLI", git_source(tmp_path))
    shim = tmp_path / "gemini.mjs"
    shim.write_text(
        "import { execFileSync } from 'node:child_process';\n"
        "if (process.argv[2] === 'extensions' && process.argv[3] === 'link') {\n"
        f"  execFileSync('sh', ['-c', {json.dumps(install)}], {{ stdio: 'inherit' }});\n"
        "  process.exit(0);\n"
        "}\n"
        f"await import({json.dumps(bundle.as_uri())});\n"
    )
    return shim


def run_gemini(
    tmp_path: Path, scenario: dict, extension: Path, path: str, *env: str, out: str = "out"
) -> tuple[int, dict]:
    return run_client(
        RUN_GEMINI, tmp_path, scenario, path, env, out,
        {"GEMINI_BIN": str(tmp_path / "gemini.mjs")},
        *("--extension-dir", str(extension)),
        *("--settings-file", str(tmp_path / "settings.json")),
    )  # fmt: skip


@needs_gemini
@pytest.mark.skipif(gemini_bundle() is None, reason="no Gemini CLI bundle in the harness cache")
def test_gemini_from_extensions_install_walks_a_quick_plan(
    project: Path,
    tmp_path: Path,
    isolated_path: str,
    wheelhouse: Path,
) -> None:
    gemini_shims(tmp_path)
    extension = tmp_path / "planner"  # what the harness would link: replaced by the install
    (tmp_path / "settings.json").write_text(json.dumps({"model": {"disableLoopDetection": True}}))
    # One data dir for the three runs (each has its own HOME, and so its own copy).
    data = f"PLANNER_DATA_DIR={tmp_path / 'data'}"
    pip = ("PIP_NO_INDEX=1", f"PIP_FIND_LINKS={wheelhouse}")
    readme = (project / "README.md").read_text()
    first = {
        "prompt": "Add a farewell(name) function to src/app.py. Plan it first, quickly.",
        "turns": [
            {"skill": "planner"},
            {"bash": TASK, "description": "Start the plan"},
            {"write": {"file_path": "{{cwd}}/NOTES.md", "content": "planning notes\n"}},
            {"bash": "plan review approve --by me", "description": "Approve it myself"},
            {"text": "Planning has started."},
        ],
    }
    rc, s = run_gemini(tmp_path, first, extension, isolated_path, "CI=1", data, *pip)
    assert rc == 0 and s["ok"], (rc, s["stderr_tail"], s["requests"])

    # Installed by `gemini extensions install`: a copy, its skills once each, the skill's
    # own folder as its resources (not the clone: no .git, no hooks/).
    install_log = (tmp_path / "out" / "extension-install.log").read_text()
    assert "installed" in install_log.lower(), install_log
    assert sorted(s["local_skills"]) == ["executor", "planner"], s["skills"]
    sent = (tmp_path / "out" / "requests.jsonl").read_text()
    # The listing as the request log holds it: up to its closing tag, or up to the end of the
    # logged JSON string when the log cut the tool's text short (a longer SKILL.md before it).
    escaped = re.search(r'<available_resources>((?:[^"\\<]|\\.|<(?!/available))*)', sent)
    assert escaped, sent[:2000]
    listed = json.loads('"' + escaped[1] + '"')
    [root] = [line for line in listed.splitlines() if line.startswith("/")]
    assert root.endswith("/.gemini/extensions/planner/skills/planner/"), listed
    assert ".git" not in listed and "bootstrap.py" not in listed and "SKILL.md" in listed

    results_ = results(s)
    assert results_[1][0] == TASK and "PLANNER 1/11" in results_[1][1], results_[1]
    reasons = [d["reason"] for d in s["hook_denials"]]
    assert len(reasons) == 2, reasons
    assert "scratch worktree" in reasons[0]
    assert "person's decision" in reasons[1] and "the person runs it" not in reasons[1]
    assert not (project / "NOTES.md").exists()
    assert (project / "README.md").read_text() == readme
    # The extension's hooks/hooks.json is Gemini CLI's own: no event it skips.
    assert not [n for n in s["stderr_notes"] if "Invalid hook event" in n], s["stderr_notes"]
    assert "no tests, no .venv" in install_log, install_log
    state = Path(results_[1][1].split("STATE_DIR=")[1].split()[0])

    # Before approval: the status says planning is read-only and shell commands are sandboxed
    # (Gemini CLI runs the rewritten command); then the walk to frozen. The extension is a
    # new copy in the run's new HOME, so its environment is made again.
    second = {
        "prompt": "Go on with the plan.",
        "turns": [
            {"bash": "plan worktree", "description": "The scratch worktree"},
            GEMINI_WALK,
            {"text": "Frozen."},
        ],
    }
    rc, s = run_gemini(tmp_path, second, extension, isolated_path, "CI=1", data, *pip, out="walk")
    assert rc == 0 and s["ok"], (rc, s["stderr_tail"], s["requests"])
    context = "\n".join(map(str, s["session_context"] or s["hook_messages"]))
    assert f"STATE_DIR={state}" in context and "read-only sandbox" in context, context
    assert "&lt;" not in context and "&gt;" not in context
    session = json.loads((state / "session.json").read_text())
    assert json.loads((state / "plan.json").read_text())["frozen_at"]
    assert session["approval"]["by"] == "auto"
    # Step 6's kind of work: the edit went to the worktree and became the intent's diff.
    plan = json.loads((state / "plan.json").read_text())
    changes = [c for m in plan["milestones"] for c in m["code_changes"]]
    assert [c["intent_ref"] for c in changes] == ["CI-001"], changes
    assert "+def farewell(name):" in json.dumps(changes)
    assert (project / "src" / "app.py").read_text() == "def greet(name):\n    return 'hi ' + name\n"

    # After approval: approved, and no claim about planning or its sandbox.
    third = {"prompt": "Where does it stand?", "turns": [{"text": "Approved."}]}
    rc, s = run_gemini(tmp_path, third, extension, isolated_path, data, out="after")
    assert rc == 0 and s["ok"], (rc, s["stderr_tail"])
    context = "\n".join(map(str, s["session_context"] or s["hook_messages"]))
    assert "approved" in context and "sandbox" not in context, context
