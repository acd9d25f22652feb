"""Guard rules for the Bash builtins that evaluate a string as code or assign through a name:
`test -v`, `unset`, `wait -p`, `read`, `mapfile`, `printf -v`, `declare` and its kin.

Bash evaluates an array subscript as arithmetic, and arithmetic evaluates a name's value as an
expression, so `unset 'a[$(cmd)]'` runs cmd. Where no sandbox runs, these are all the guard has:
each is UNKNOWN unless every argument is a literal that cannot hold `[`, `$` or a backtick.
"""

from __future__ import annotations

from hooks.guard_tools import PASS, UNKNOWN, Verdict, names
from hooks.shell import EXPANDS, GLOBS, SPLITS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Risky = Callable[[str], bool] | None  # whether setting a variable of that name is risky

CODE_CHARS = ("[", "$", "`")
EVALUATES = "evaluates its argument as a name or subscript, which can run commands"
# test's operators; with at most three arguments bash picks the form by their number
UNARY = names("-a -b -c -d -e -f -g -h -k -p -r -s -t -u -w -x -G -L -N -O -S -z -n")
BINARY = names("= == != < > -eq -ne -lt -le -gt -ge -nt -ot -ef")
NAME_TESTS = ("-v", "-R")  # the operand is a variable name: its subscript is evaluated


def literal(word: str, flags: int) -> bool:
    """A word bash passes on as written that names no subscript and expands nothing."""
    return not flags & (EXPANDS | GLOBS) and not any(c in word for c in CODE_CHARS)


def all_literal(argv: list[str], flags: list[int]) -> bool:
    return all(literal(argv[k], flags[k]) for k in range(1, len(argv)))


def unknown(argv: list[str], why: str = EVALUATES) -> Verdict:
    return Verdict(UNKNOWN, " ".join(argv), why)


def test(argv: list[str], flags: list[int], depth: int) -> Verdict:
    """`test`/`[`: `-v NAME` and `-R NAME` evaluate NAME's subscript; a value computed at run
    time may itself be `-v`, so it is read-only only where it cannot be an operator."""
    args, arg_flags = argv[1:], flags[1:]
    if argv[0] == "[" and args[-1:] == ["]"]:
        args, arg_flags = args[:-1], arg_flags[:-1]
    if any(f & (SPLITS | GLOBS) for f in arg_flags):
        return unknown(argv, "has arguments bash may split into test operators")
    dynamic = [k for k, f in enumerate(arg_flags) if f & EXPANDS]
    if any(arg in NAME_TESTS for arg in args):
        return PASS if all_literal(argv, flags) else unknown(argv)
    if not dynamic or len(args) == 1:
        return PASS
    if len(args) == 2 and 0 not in dynamic and (args[0] == "!" or args[0] in UNARY):
        return PASS
    if len(args) == 3 and 1 not in dynamic and args[1] in BINARY:
        return PASS
    if len(args) == 3 and args[0] == "!" and 1 not in dynamic and args[1] in UNARY:
        return PASS
    return unknown(argv, "tests a value known only at run time that could be an operator")


def double_bracket_names(argv: list[str]) -> Verdict | None:
    """`[[ -v NAME ]]`: the operand must be a plain literal name (the parser keeps `$x` as
    written inside `[[ … ]]`, so a run-time value shows as `$`)."""
    for k, arg in enumerate(argv[:-1]):
        if arg in NAME_TESTS and any(c in argv[k + 1] for c in CODE_CHARS):
            return unknown(argv)
    return None


def names_only(argv: list[str], flags: list[int], depth: int) -> Verdict:
    """`unset`, `wait` (`-p NAME`): every argument a literal without a subscript."""
    return PASS if all_literal(argv, flags) else unknown(argv)


READ_VALUES = "dinNptu"  # read's options that take a value (glued or the next word)


def read(argv: list[str], flags: list[int], depth: int, risky: Risky = None) -> Verdict:
    """`read NAME…`: plain literal names only; `-a` fills an array."""
    if not all_literal(argv, flags):
        return unknown(argv)
    i, targets = 1, []
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            targets += argv[i + 1 :]
            break
        if arg.startswith("-") and len(arg) > 1:
            for j, letter in enumerate(arg[1:], 1):
                if letter == "a":
                    return unknown(argv, "reads into an array")
                if letter in READ_VALUES:
                    i += j == len(arg) - 1
                    break
        else:
            targets.append(arg)
        i += 1
    return _names_are_safe(argv, targets, risky)


def printf(argv: list[str], flags: list[int], depth: int, risky: Risky = None) -> Verdict:
    """`printf -v NAME`: assigns through NAME; a first word known only at run time may be -v."""
    if len(argv) > 1 and flags[1] & (EXPANDS | GLOBS):
        return unknown(argv, "has a first argument known only at run time (it could be -v)")
    if len(argv) < 2 or not argv[1].startswith("-v"):
        return PASS
    if not all_literal(argv, flags):
        return unknown(argv)
    name = argv[1][2:] or (argv[2] if len(argv) > 2 else "")
    return _names_are_safe(argv, [name], risky)


def set_options(argv: list[str], flags: list[int], depth: int) -> Verdict:
    """`set -k` (keyword) puts every `NAME=value` argument of later commands into their
    environment, where the guard reads them as plain arguments (`git log GIT_DIR=x`)."""
    for k in range(1, len(argv)):
        arg = argv[k]
        if flags[k] & (EXPANDS | GLOBS) or arg == "keyword" or (arg[:1] in "-+" and "k" in arg):
            return unknown(argv, "can make later arguments environment variables (set -k)")
        if arg in ("--", "-") or arg[:1] not in "-+":
            break
    return PASS


def mapfile(argv: list[str], flags: list[int], depth: int) -> Verdict:
    return unknown(argv, "reads into an array and can run a callback (-C)")


def declare(argv: list[str], flags: list[int], depth: int, risky: Risky = None) -> Verdict:
    """`declare`, `local`, `typeset`, `readonly`, `export`: namerefs (`-n`) redirect later
    assignments past the risky-name check, `-i` makes every assignment arithmetic, and a
    value with `(` may be re-read as a compound array assignment."""
    exporting = argv[0] == "export"
    for k in range(1, len(argv)):
        arg = argv[k]
        if arg.startswith(("-", "+")) and not exporting and ("n" in arg or "i" in arg):
            return unknown(argv, "declares a name reference or integers, which evaluate names")
        if not literal(arg, flags[k]) or "(" in arg:
            return unknown(argv)
    options = "".join(arg[1:] for arg in argv[1:] if arg[:1] == "-")
    if "p" in options or "f" in options.lower():
        return PASS  # prints variables or functions: assigns nothing
    assigned = [arg.split("=", 1)[0].rstrip("+") for arg in argv[1:] if arg[:1] not in "-+"]
    return _names_are_safe(argv, assigned, risky)


def _names_are_safe(argv: list[str], targets: list[str], risky: Risky) -> Verdict:
    for name in targets:
        if risky is not None and risky(name):
            return unknown(argv, f"assigns {name}, which can make a command run another")
    return PASS
