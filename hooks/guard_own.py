"""The product's own commands while planning: `plan`, `planner`, `executor` (docs/design.md,
"The guard").

They run unwrapped, so they can write the session, only when written plainly: a chain of
simple commands naming the launcher (`&&`, `;`, newlines, `x=$(plan …)`, a pipe from
cat/echo/printf or a here-doc on stdin, a read-only consumer of their output), no
assignments, no writing redirections, output only into the session. Any other command that
runs a launcher is denied up front ("one `plan` command per call"): in the sandbox it could not
write its session. The person's own acts (approve, reject, accept, cancel, fail, resume
another session, switching to non-interactive) are asked, alone; `plan apply` refuses them
itself. The executor waits for approval.
"""

from __future__ import annotations

import os

from hooks import shell
from hooks.guard_tools import ALONE, MUTATE, OK, ONE_PER_CALL, PASS, SAFE_TARGETS, Hint, Verdict
from hooks.human_acts import is_human_act
from state.vocab_core import GuardDecision

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from hooks.hookstate import Session
    from hooks.shell import Command, Redirect

LAUNCHERS = ("plan", "planner", "executor")
FEEDERS = ("cat", "echo", "printf")
READ_REDIRECTS = ("<", "<<", "<<-", "<<<")
CHAIN_OPS = frozenset(("|", "\n", ";", "&&", "||"))
PERSON = "is the person's decision"
AGENT_PLACE = ".planner"  # sessions' worktrees and scratch dirs: the agent writes there
MAX_CDS = 4  # every prefix of the `cd`s counts: 2**MAX_CDS places at most
ASK, DENY = GuardDecision.ASK, GuardDecision.DENY


def judge_own(command: str, session: Session, cwd: str, env: Mapping[str, str]) -> Verdict | None:
    """A verdict for a command that runs the product's launchers (PASS runs it unwrapped), or
    None when it runs none (the parser and the sandbox judge it like any command).

    Unwrapped only as a chain of plain parts: launcher commands, feeders piped into them,
    read-only consumers of their output, `cd DIR`, and `name=$(plan …)` whose name later
    arguments use; joined by `|`, `&&`, `||`, `;` or newlines. Anything else that runs a
    launcher is denied up front: inside the sandbox it could not write its session anyway.
    """
    if not any(name in command for name in LAUNCHERS):
        return None
    parsed = shell.structure(command)
    if parsed is None:
        return None
    found, ops = parsed
    own = [c for c in found if c.argv and c.argv[0].rsplit("/", 1)[-1] in LAUNCHERS]
    if not own:
        return None
    if not set(ops) <= CHAIN_OPS:
        return _not_plain(own[0])
    elsewhere = _agent_place(found, ops, session, cwd)
    if elsewhere is not None:
        return elsewhere
    assigned: set[str] = set()
    verdicts = []
    launchers = {id(c) for c in own}  # not `cmd in own`: that is quadratic in the commands
    for cmd in found:
        shell.check_clock()
        if id(cmd) in launchers:
            if not is_launcher(cmd.argv[0], env) or not _plain(cmd, assigned):
                return _not_plain(cmd)
            verdicts.append(judge_launcher(cmd.argv, command, session, cwd))
        elif not cmd.argv:
            if cmd.redirects or not all(_captures_own(a, assigned) for a in cmd.assignments):
                return _not_plain(own[0])
        elif not _harmless(cmd):
            return _not_plain(own[0])
    worst = max(verdicts, key=lambda v: v.level)
    if worst.level != MUTATE or len(found) == 1 or (len(own) == 1 and _fed(found, own[0])):
        return worst
    alone = "run it as one command, alone"
    return Verdict(MUTATE, worst.part, worst.why + ", run alone", DENY, alone)


def _agent_place(
    found: list[Command], ops: list[str], session: Session, cwd: str
) -> Verdict | None:
    """A denial when the chain may run a launcher in a directory inside a `.planner/` (a
    session's worktree or scratch dir: the agent writes there, so a repository there is the
    agent's, and its config would run with the person's rights; docs/design.md,
    "Agent-written data is never code"): the hook's cwd, or a directory its `cd`s lead to.
    A `cd` may fail: `cd DIR && plan …` runs plan only in DIR, `cd DIR; plan …` in either
    (where substitutions hide the order, every prefix of the `cd`s counts). More than
    MAX_CDS `cd`s: not plain."""
    cds = [c for c in found if c.argv and c.argv[0] == "cd"]
    if len(cds) > MAX_CDS or any(len(c.argv) > 1 and c.argv[1] == "-" for c in cds):
        return _not_plain(cds[0])
    states = {(cwd, True)}  # (where the shell is, whether the last command succeeded)
    ordered = len(ops) == len(found) - 1
    where: set[str] = set()  # where a launcher may run
    for i, cmd in enumerate(found):
        shell.check_clock()
        op = ops[i - 1] if ordered and i else ";"
        run = {s for s in states if op not in ("&&", "||") or s[1] == (op == "&&")}
        if cmd in cds:
            target = os.path.expanduser(cmd.argv[1] if len(cmd.argv) > 1 else "~")
            moved = {(os.path.join(d, target), True) for d, _ in run}
            states = (states - run) | moved | {(d, False) for d, _ in run}
        else:
            if cmd.argv and cmd.argv[0].rsplit("/", 1)[-1] in LAUNCHERS:
                where |= {d for d, _ in run}
            states = (states - run) | {(d, ok) for d, _ in run for ok in (True, False)}
        if not ordered:
            states = {(d, ok) for d, _ in states for ok in (True, False)}
    for place in where:
        try:
            real = os.path.realpath(place)
        except (ValueError, OSError):
            return _not_plain(found[0])
        if AGENT_PLACE in real.split(os.sep):
            why = f"runs the product in {real}, inside .planner/ where the agent writes"
            hint = f"run it from the project: cd {session.project}"
            return Verdict(MUTATE, place, why, DENY, hint)
    return None


def _not_plain(cmd: Command) -> Verdict:
    return Verdict(MUTATE, " ".join(cmd.argv), ALONE, DENY, ONE_PER_CALL)


def _captures_own(assignment: str, assigned: set[str]) -> bool:
    """`name=$(…)`: the substitution's commands are judged as parts of the chain themselves."""
    name, _, value = assignment.partition("=")
    if not (name[:1].islower() or name[:1] == "_") or not shell.is_assignment(assignment):
        return False  # PATH, IFS, BASH_ENV and friends: never set before a launcher runs
    if not (value.startswith("$(") and value.endswith(")")):
        return False
    assigned.add(name)
    return True


def _harmless(cmd: Command) -> bool:
    """A feeder, a consumer of the product's output the parser knows to be read-only, or cd."""
    if cmd.assignments or any(cmd.flags):
        return False
    if cmd.argv[0] == "cd":
        return len(cmd.argv) <= 2 and not cmd.redirects
    if cmd.argv[0] in FEEDERS and _plain(cmd, set()):
        return True
    from hooks.guard_rules import judge_command

    return judge_command(cmd, 0).level == OK


def _fed(found: list[Command], own: Command) -> bool:
    """Whether everything but `own` only feeds it (`cat ops.json | plan apply -`)."""
    return all(c is own or (c.argv and c.argv[0] in FEEDERS) for c in found)


def is_launcher(word: str, env: Mapping[str, str]) -> bool:
    """`plan` on a PATH of absolute entries (the sandbox keeps them read-only, so nothing can
    be planted there), or an absolute path to a bin/ launcher."""
    base = word.rsplit("/", 1)[-1]
    if base not in LAUNCHERS:
        return False
    if "/" in word:
        return word.startswith("/") and word.endswith("/bin/" + base) and "/../" not in word
    entries = (env.get("PATH") or "").split(os.pathsep)
    return all(e.startswith("/") for e in entries)


def _plain(cmd: Command, assigned: set[str]) -> bool:
    """No assignments, only reading redirections, and no word known only at run time but
    `$name` of a name the chain captured from the product's own output."""
    if cmd.assignments or not all(_reads_only(r) for r in cmd.redirects):
        return False
    return all(not cmd.flags[i] or _captured(w, assigned) for i, w in enumerate(cmd.argv))


def _captured(word: str, assigned: set[str]) -> bool:
    name = word[2:-1] if word.startswith("${") and word.endswith("}") else word[1:]
    return word.startswith("$") and name in assigned


def _reads_only(redirect: Redirect) -> bool:
    if redirect.op in READ_REDIRECTS:
        return True
    if redirect.op in (">&", "<&") and (redirect.target.isdigit() or redirect.target == "-"):
        return True
    return redirect.op in (">", ">>") and redirect.target in SAFE_TARGETS


def judge_launcher(argv: list[str], command: str, session: Session, cwd: str) -> Verdict:
    part = " ".join(argv)
    base = argv[0].rsplit("/", 1)[-1]
    words, options = _split(argv[1:])
    for name, value in options:
        shell.check_clock()  # each resolves a path
        if name == "--state-dir" and not _a_session_of(cwd, value, session):
            why = "names a state dir that is not a session in the project's .planner/"
            return Verdict(MUTATE, part, why)
        if name == "--non-interactive":
            why = PERSON + " (non-interactive approves by itself)"
            return Verdict(MUTATE, part, why, ASK, Hint.PERSON)
        if name in ("-o", "--output") and not _inside(cwd, value, session.state_dir):
            return Verdict(MUTATE, part, "writes outside the session directory")
    if base == "executor" or words[:1] == ["exec"]:
        why = "executes the plan, which waits for the person's approval"
        return Verdict(MUTATE, part, why, hint=Hint.PERSON)
    if base != "plan" or (words[:1] == ["resume"] and words[1:2] in ([], [session.id])):
        return PASS  # resuming the session that is already active changes nothing
    if is_human_act(" ".join(words[:1])) or is_human_act(" ".join(words[:2])):
        return Verdict(MUTATE, part, PERSON, ASK, Hint.PERSON)
    return PASS


def _split(args: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """(positional words, [(option, value)]): every `--opt value` pair as written."""
    words, options, i = [], [], 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("-") and arg != "-":
            name, eq, value = arg.partition("=")
            if not eq and name in ("--state-dir", "-o", "--output"):
                value = args[i + 1] if i + 1 < len(args) else ""
                i += 1
            elif not eq and name.startswith("-o") and len(name) > 2:
                name, value = "-o", name[2:]
            options.append((name, value))
        else:
            words.append(arg)
        i += 1
    return words, options


def _a_session_of(cwd: str, path: str, session: Session) -> bool:
    """Whether `path` is a session directory of the project's own `.planner/` (or a file in
    one), never a `.planner/` the agent built inside a worktree or scratch dir."""
    home = os.path.dirname(session.state_dir)
    if not _inside(cwd, path, home):
        return False
    try:
        real = os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))
    except (ValueError, OSError):
        return False
    below = real[len(os.path.realpath(home)) :].split(os.sep)
    return AGENT_PLACE not in below and "worktree" not in below[2:3] and "scratch" not in below[2:3]


def _inside(cwd: str, path: str, folder: str) -> bool:
    try:
        real = os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))
        root = os.path.realpath(folder)
    except (ValueError, OSError):
        return False
    return real == root or real.startswith(root + os.sep)
