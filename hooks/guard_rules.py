"""What each shell command does to files, for the guard: read-only, mutating, or unknown.

Kept out of hooks/guard.py because a script run as __main__ is compiled on every call while
an imported module's bytecode is cached: this table would cost the hook ~4 ms each time.
"""

from __future__ import annotations

from hooks import guard_builtins, shell
from hooks import guard_places as places
from hooks.guard_places import Where
from hooks.guard_tools import (
    ALONE,
    MUTATE,
    ONE_PER_CALL,
    PACKAGE_MANAGERS,
    PASS,
    SAFE_TARGETS,
    UNKNOWN,
    Verdict,
    dynamic_arguments,
    judge_awk,
    judge_package,
    judge_sed,
    listed,
    long_option,
    names,
    register_bash_classifier,
)
from state.vocab_core import GuardDecision

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Rule = Callable[[list[str], list[int], int], Verdict]  # argv, flags, nesting depth

MAX_DEPTH = 20
WRITING_REDIRECTS = (">", ">>", ">|", "&>", "&>>", "<>")
SYSTEM_DIRS = listed("/bin/ /usr/bin/ /usr/local/bin/ /sbin/ /usr/sbin/ /opt/homebrew/bin/")
OWN_COMMANDS = ("plan", "planner", "executor")
OWN_MODULES = ("cli", "skills.planner", "skills.executor")

MUTATORS = {
    "rm": "deletes files",
    "rmdir": "removes directories",
    "unlink": "deletes a file",
    "shred": "destroys files",
    "mv": "moves or renames files",
    "cp": "copies files",
    "rsync": "copies files",
    "install": "installs files",
    "mkdir": "creates directories",
    "touch": "creates or touches files",
    "mkfifo": "creates files",
    "mknod": "creates files",
    "ln": "creates links",
    "link": "creates links",
    "chmod": "changes file permissions",
    "chown": "changes file ownership",
    "chgrp": "changes file ownership",
    "chattr": "changes file attributes",
    "setfacl": "changes file permissions",
    "dd": "writes data to files",
    "truncate": "truncates files",
    "patch": "patches files",
    "split": "writes files",
    "csplit": "writes files",
    "rename": "renames files",
}

READ_ONLY = names(
    """cat ls grep egrep fgrep ag head tail wc diff cmp stat file less more cut tr column nl jq
    basename dirname realpath readlink pwd cd pushd popd dirs echo printf true false test [ [[ :
    which type whereis whoami env printenv uname id ps pgrep df du tac rev od hexdump strings
    seq sleep md5sum sha1sum sha256sum sha512sum b2sum cksum comm join paste fold fmt expand
    unexpand groups tty uptime locale getconf nproc free who w lsof read wait export unset set
    shopt local declare typeset readonly shift exit return break continue man help"""
)

DECLARERS = ("export", "declare", "typeset", "local", "readonly")
RISKY_VARIABLES = names(
    """PATH BASH_ENV ENV PROMPT_COMMAND PAGER MANPAGER LESSOPEN LESSCLOSE LESSKEY EDITOR VISUAL
    BROWSER HOME XDG_CONFIG_HOME XDG_DATA_HOME ZDOTDIR INPUTRC SHELLOPTS BASHOPTS PS4 PS0 PS1
    PYTHONPATH PYTHONSTARTUP PYTHONHOME PYTHONUSERBASE PYTHONSAFEPATH PYTHONEXECUTABLE
    PERL5LIB PERL5OPT PERLLIB RUBYLIB RUBYOPT NODE_OPTIONS NODE_PATH SSH_ASKPASS SUDO_ASKPASS
    CDPATH GLOBIGNORE TERMINFO PLANNER_STATE_DIR PLANNER_PYTHON"""
)
RISKY_PREFIXES = ("LD_", "DYLD_", "GIT_", "BASH_FUNC_", "NPM_CONFIG_", "PIP_", "UV_")
SAFE_PAGERS = ("", "cat", "less", "more", "true", "false", "less -R", "less -FRX")
DEV_FDS = ("/dev/fd/1", "/dev/fd/2", "/dev/stdout", "/dev/stderr")


def classify_bash(command: str, depth: int = 0, where: Where | None = None) -> Verdict:
    """(kind, offending part, why) for a whole Bash command: the worst of its simple commands.

    `where` (the hook's cwd, project and worktree) lets git be judged by the repository it
    would use and writes to temp dirs be left to the sandbox; without it neither is judged."""
    if depth == 0:
        places.CURRENT[:] = [where] if where is not None else []
        try:
            return _classify(command, 0)
        finally:
            del places.CURRENT[:]
    return _classify(command, depth)


def _classify(command: str, depth: int) -> Verdict:
    if depth > MAX_DEPTH:
        return Verdict(UNKNOWN, command, "nests shells too deeply to judge")
    commands, error = shell.parse(command)
    worst = PASS
    for cmd in commands:
        shell.check_clock()
        verdict = judge_command(cmd, depth)
        if verdict.level > worst.level:
            worst = verdict
            if worst.level == MUTATE:
                return worst
    if error:
        return Verdict(UNKNOWN, command, f"cannot be parsed ({error})")
    return worst


def judge_command(cmd: shell.Command, depth: int) -> Verdict:
    for redirect in cmd.redirects:
        verdict = judge_redirect(redirect)
        if verdict.level:
            return verdict
    if cmd.argv[:1] == [shell.ARITHMETIC]:
        why = "evaluates a variable's value (arithmetic, a subscript, indirection), which can run"
        return Verdict(UNKNOWN, cmd.argv[1], why + " commands")
    worst = judge_assignments(cmd.assignments)
    if cmd.argv:
        verdict = judge_argv(cmd.argv, cmd.flags, depth)
        if verdict.level > worst.level:
            worst = verdict
    return worst


def judge_redirect(redirect: shell.Redirect) -> Verdict:
    op, target = redirect.op, redirect.target
    if op in ("<", "<>", "<&") and redirect.fd in ("1", "2") and not _is_fd(target):
        why = "opens a file on an output descriptor"
        return Verdict(MUTATE, f"{redirect.fd}{op} {target}", why)
    writes = op in WRITING_REDIRECTS or (op == ">&" and not _is_fd(target))
    if not writes or (not redirect.flags and _is_safe_target(target)):
        return PASS
    verdict = Verdict(MUTATE, f"{redirect.fd or ''}{op} {target}", "writes a file")
    return places.temp_write(verdict, [(target, redirect.flags)])


def judge_assignments(assignments: list[str]) -> Verdict:
    for word in assignments:
        name, _, value = word.partition("=")
        name = name.rstrip("+")
        if "[" in name:
            why = "sets an array item, whose index is evaluated as arithmetic"
            return Verdict(UNKNOWN, word, why)
        if name in ("GIT_PAGER", "PAGER", "MANPAGER") and value in SAFE_PAGERS:
            continue
        if risky_variable(name):
            return Verdict(UNKNOWN, word, f"sets {name}, which can make a command run another")
    return PASS


def risky_variable(name: str) -> bool:
    return name in RISKY_VARIABLES or name.startswith(RISKY_PREFIXES)


def judge_argv(argv: list[str], flags: list[int], depth: int) -> Verdict:
    name = argv[0]
    part = " ".join(argv)
    if flags[0] & shell.EXPANDS or not name or (flags[0] & shell.GLOBS and _may_glob(name)):
        return Verdict(UNKNOWN, part, "runs a command chosen at run time")
    base = name.rsplit("/", 1)[-1]
    if base in OWN_COMMANDS:  # in the sandbox it could not write its session: say so now
        return Verdict(MUTATE, part, ALONE, GuardDecision.DENY, ONE_PER_CALL)
    if base in MUTATORS:
        return places.temp_write(Verdict(MUTATE, part, MUTATORS[base]), places.written(argv, flags))
    if "/" in name and (not name.startswith(SYSTEM_DIRS) or "/../" in name):
        return Verdict(UNKNOWN, part, "runs a program the guard does not know")
    rule = RULES.get(base) or (_python if _is_python(base) else None)
    if rule is not None:
        if depth >= MAX_DEPTH:
            return Verdict(UNKNOWN, part, "nests commands too deeply to judge")
        return rule(argv, flags, depth)
    if base in READ_ONLY:
        return PASS
    return Verdict(UNKNOWN, part, "is not known to be read-only")


def inner(argv: list[str], flags: list[int], start: int, depth: int) -> Verdict:
    """Judge the command a wrapper runs from argv[start:]; nothing to run is read-only."""
    if start >= len(argv):
        return PASS
    return judge_argv(argv[start:], flags[start:], depth + 1)


def _may_glob(word: str) -> bool:
    """Whether bash could turn this unquoted word into others (`r?`, `[r]m`, `{rm,-rf}`)."""
    if "*" in word or "?" in word:
        return True
    bracket, brace = word.find("["), word.find("{")
    return (bracket >= 0 and "]" in word[bracket + 1 :]) or (
        brace >= 0 and ("," in word[brace:] or ".." in word[brace:])
    )


def _is_fd(word: str) -> bool:
    return word == "-" or (word.rstrip("-").isdigit() and word.isascii())


def _is_safe_target(target: str) -> bool:
    """/dev/null and the terminal; /dev/fd/N only for 1 and 2 (a higher fd may be a file the
    command opened for reading, and opening /dev/fd/N for writing re-opens that file)."""
    return target in SAFE_TARGETS or target in DEV_FDS


def _is_python(base: str) -> bool:
    return base in ("python", "python3") or (base.startswith("python3.") and base[8:].isdigit())


def _skip_options(argv: list[str], start: int, with_arg: tuple[str, ...]) -> int:
    """Index of the first operand after options; `with_arg` options take the next word."""
    i = start
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return i + 1
        if not arg.startswith("-") or arg == "-":
            return i
        i += 2 if arg in with_arg else 1
    return i


# -- wrappers: judged by what they run -------------------------------------------------------


def _wrapper(with_arg: tuple[str, ...]) -> Rule:
    def rule(argv: list[str], flags: list[int], depth: int) -> Verdict:
        return inner(argv, flags, _skip_options(argv, 1, with_arg), depth)

    return rule


def _env(argv: list[str], flags: list[int], depth: int) -> Verdict:
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg in ("-S", "--split-string"):
            return classify_bash(" ".join(argv[i + 1 :]), depth + 1)
        if arg.startswith(("-S", "--split-string=")):
            value = arg.split("=", 1)[1] if arg.startswith("--") else arg[2:]
            return classify_bash(" ".join([value, *argv[i + 1 :]]), depth + 1)
        if arg in ("-C", "--chdir") or arg.startswith(("--chdir=", "-C")):
            places.lose_track("runs its command in another directory")
        if arg in ("-u", "--unset", "-C", "--chdir", "-P"):
            i += 2
        elif arg.startswith("-"):
            i += 1
        elif shell.is_assignment(arg):
            verdict = judge_assignments([arg])
            if verdict.level:
                return verdict
            i += 1
        else:
            break
    return inner(argv, flags, i, depth)


def _nice(argv: list[str], flags: list[int], depth: int) -> Verdict:
    i = 1
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "--":
        i += 2 if argv[i] in ("-n", "--adjustment") else 1
    return inner(argv, flags, i + (i < len(argv) and argv[i] == "--"), depth)


def _timeout(argv: list[str], flags: list[int], depth: int) -> Verdict:
    i = _skip_options(argv, 1, ("-s", "-k", "--signal", "--kill-after"))
    return inner(argv, flags, i + 1, depth)


def _time(argv: list[str], flags: list[int], depth: int) -> Verdict:
    for arg in argv[1:]:
        if not arg.startswith("-"):
            break
        if arg in ("-o", "--output") or arg.startswith("--output="):
            return Verdict(MUTATE, " ".join(argv), "writes its report to a file")
    return inner(argv, flags, _skip_options(argv, 1, ("-f", "--format")), depth)


def _command(argv: list[str], flags: list[int], depth: int) -> Verdict:
    if any(arg in ("-v", "-V") for arg in argv[1:2]):
        return PASS
    return inner(argv, flags, _skip_options(argv, 1, ()), depth)


def _sudo(argv: list[str], flags: list[int], depth: int) -> Verdict:
    part = " ".join(argv)
    i = _skip_options(argv, 1, ("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U"))
    options = set("".join(a[1:] for a in argv[1:i] if a.startswith("-") and not a.startswith("--")))
    if "e" in options or argv[0].endswith("sudoedit"):
        return Verdict(MUTATE, part, "edits files")
    if i >= len(argv) and options & set("is"):
        return Verdict(UNKNOWN, part, "opens a root shell")
    return inner(argv, flags, i, depth)


XARGS_VALUE = ("-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s")
XARGS_LONG = listed("--arg-file --delimiter --max-args --max-procs --max-chars --process-slot-var")
XARGS_OPTIONAL = ("--eof", "--replace", "--max-lines")  # a value only as `--opt=value`
XARGS_FLAGS = listed(
    """--null --no-run-if-empty --verbose --exit --interactive --open-tty --show-limits --help
    --version"""
)


def _xargs(argv: list[str], flags: list[int], depth: int) -> Verdict:
    """GNU xargs: `--max-lines rm` runs rm (the value is optional), `-e`/`-i`/`-l` glue theirs."""
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            i += 1
            break
        if not arg.startswith("-") or arg == "-":
            break
        name = long_option(arg, XARGS_LONG + XARGS_OPTIONAL + XARGS_FLAGS)
        if name == "?" or (arg.startswith("--") and not name):
            return Verdict(UNKNOWN, " ".join(argv), "has an option the guard does not know")
        takes_next = (name in XARGS_LONG and "=" not in arg) or arg in XARGS_VALUE
        i += 2 if takes_next else 1
    return inner(argv, flags, i, depth)


def _shell(argv: list[str], flags: list[int], depth: int) -> Verdict:
    part = " ".join(argv)
    has_c, i = False, 1
    while i < len(argv) and argv[i][:1] in "-+" and argv[i] not in ("--", "-", "+"):
        has_c = has_c or (not argv[i].startswith("--") and "c" in argv[i])
        i += 2 if argv[i] in ("-o", "+o", "-O", "+O") else 1
    i += i < len(argv) and argv[i] == "--"
    if i >= len(argv):
        return Verdict(UNKNOWN, part, "runs commands from its input, which the guard cannot see")
    if not has_c:
        return Verdict(UNKNOWN, part, "runs a script the guard cannot see")
    if flags[i] & shell.EXPANDS:
        return Verdict(UNKNOWN, part, "runs a script known only at run time")
    return classify_bash(argv[i], depth + 1)


def _eval(argv: list[str], flags: list[int], depth: int) -> Verdict:
    return dynamic_arguments(argv, flags) or classify_bash(" ".join(argv[1:]), depth + 1)


def _source(argv: list[str], flags: list[int], depth: int) -> Verdict:
    places.note_activate(argv, flags)
    return Verdict(UNKNOWN, " ".join(argv), "runs a script the guard cannot see")


# -- commands with options that write --------------------------------------------------------


def _find(argv: list[str], flags: list[int], depth: int) -> Verdict:
    part = " ".join(argv)
    worst = dynamic_arguments(argv, flags) or PASS
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "-delete":
            return Verdict(MUTATE, part, "deletes files")
        if arg in ("-fprint", "-fprint0", "-fprintf", "-fls"):
            return Verdict(MUTATE, part, "writes a file")
        if arg in ("-execdir", "-okdir"):
            places.lose_track("runs its command in every directory it finds")
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            end = i + 1
            while end < len(argv) and argv[end] not in (";", "+"):
                end += 1
            verdict = inner(argv[:end], flags[:end], i + 1, depth)
            if verdict.level == MUTATE:
                return verdict
            worst = verdict if verdict.level > worst.level else worst
            i = end
        i += 1
    return worst


def _fd(argv: list[str], flags: list[int], depth: int) -> Verdict:
    for i, arg in enumerate(argv):
        if arg in ("-x", "--exec", "-X", "--exec-batch"):
            return inner(argv, flags, i + 1, depth)
    return PASS


def _rg(argv: list[str], flags: list[int], depth: int) -> Verdict:
    if any(a == "--pre" or a.startswith("--pre=") for a in argv[1:]):
        return Verdict(UNKNOWN, " ".join(argv), "runs a preprocessor command")
    return dynamic_arguments(argv, flags) or PASS


def _option_writes(short: str, long: tuple[str, ...], why: str, with_value: str = "") -> Rule:
    """A rule for a read-only tool that writes when given `-<short>` or a `long` option."""

    def rule(argv: list[str], flags: list[int], depth: int) -> Verdict:
        for arg in argv[1:]:
            if arg == "--":
                break
            if short in _short_letters(arg, with_value) or arg.split("=", 1)[0] in long:
                return Verdict(MUTATE, " ".join(argv), why)
        return dynamic_arguments(argv, flags) or PASS

    return rule


def _short_letters(arg: str, with_value: str) -> str:
    """The letters of a `-abc` cluster up to the first one that takes a value (`-k2o` is -k)."""
    if not arg.startswith("-") or arg.startswith("--"):
        return ""
    for j, ch in enumerate(arg[1:], 1):
        if ch in with_value:
            return arg[1 : j + 1]
    return arg[1:]


def _uniq(argv: list[str], flags: list[int], depth: int) -> Verdict:
    operands, i = [], 1
    while i < len(argv):
        arg = argv[i]
        if arg in ("-f", "-s", "-w"):
            i += 1
        elif not arg.startswith("-") or arg == "-":
            operands.append(arg)
        i += 1
    if len(operands) > 1 and not _is_safe_target(operands[1]):
        return Verdict(MUTATE, " ".join(argv), "writes its output to a file")
    return dynamic_arguments(argv, flags) or PASS


SORT_LONG: tuple[str, ...] = ("--output", "--compress-program", "--files0-from", "--random-source")
SORT_LONG += ("--temporary-directory", "--key", "--field-separator", "--buffer-size")
SORT_LONG += ("--parallel", "--batch-size", "--sort", "--debug", "--reverse", "--unique")
SORT_LONG += ("--numeric-sort", "--general-numeric-sort", "--human-numeric-sort", "--check")


def _sort(argv: list[str], flags: list[int], depth: int) -> Verdict:
    part = " ".join(argv)
    for arg in argv[1:]:
        if arg == "--":
            break
        name = long_option(arg, SORT_LONG)
        if name == "--output" or "o" in _short_letters(arg, "ktSTo"):
            return Verdict(MUTATE, part, "writes its output to a file")
        if name in ("--compress-program", "?"):
            return Verdict(UNKNOWN, part, "runs a compression program")
    return dynamic_arguments(argv, flags) or PASS


ARITHMETIC_TESTS = ("-eq", "-ne", "-lt", "-le", "-gt", "-ge")


def _double_bracket(argv: list[str], flags: list[int], depth: int) -> Verdict:
    """`[[ x -eq 0 ]]` evaluates both sides as arithmetic: only plain numbers are safe."""
    names = guard_builtins.double_bracket_names(argv)
    if names is not None:
        return names
    for k, arg in enumerate(argv):
        if arg in ARITHMETIC_TESTS:
            for operand in (argv[k - 1], argv[k + 1] if k + 1 < len(argv) else ""):
                if not operand.lstrip("-").isdigit():
                    why = "compares as arithmetic, which evaluates variables and can run commands"
                    return Verdict(UNKNOWN, " ".join(argv), why)
    return PASS


def _file(argv: list[str], flags: list[int], depth: int) -> Verdict:
    for arg in argv[1:]:
        if arg == "--compile" or "C" in _short_letters(arg, "emfFP"):
            return Verdict(MUTATE, " ".join(argv), "compiles a magic file")
    return dynamic_arguments(argv, flags) or PASS


def _tee(argv: list[str], flags: list[int], depth: int) -> Verdict:
    files, options = [], True
    for arg in argv[1:]:
        if options and arg == "--":
            options = False
        elif not options or not arg.startswith("-") or arg == "-":
            files.append(arg)
    if any(f & shell.EXPANDS for f in flags[1:]) or not all(map(_is_safe_target, files)):
        return Verdict(MUTATE, " ".join(argv), "writes files")
    return PASS


def _pager(argv: list[str], flags: list[int], depth: int) -> Verdict:
    """man, less, more: options beyond the plain ones can name a program or a log file
    (`man -P cmd`, `less '+!cmd'`, `less -o log`)."""
    plain = ("-k", "-f", "-a", "-w") if argv[0].endswith("man") else ("-R", "-N", "-S", "-F", "-X")
    for arg in argv[1:]:
        if arg == "--":
            break
        if arg.startswith("+") or (arg.startswith("-") and arg not in plain and arg != "-"):
            return Verdict(UNKNOWN, " ".join(argv), "has an option that can run a program or write")
    return dynamic_arguments(argv, flags) or PASS


def _hostname(argv: list[str], flags: list[int], depth: int) -> Verdict:
    if any(not a.startswith("-") for a in argv[1:]):
        return Verdict(MUTATE, " ".join(argv), "sets the host name")
    return PASS


def _python(argv: list[str], flags: list[int], depth: int) -> Verdict:
    rest = argv[1:]
    if rest in (["--version"], ["-V"], ["-VV"], ["--help"], ["-h"]):
        return PASS
    i = 0
    while i < len(rest) and rest[i] in ("-S", "-u", "-B", "-E", "-I", "-s", "-q", "-O", "-OO"):
        i += 1
    if rest[i : i + 1] == ["-m"] and i + 1 < len(rest):
        if rest[i + 1] in OWN_MODULES:
            why = "runs the product through python; use its launcher"
            return Verdict(UNKNOWN, " ".join(argv), why)
        if rest[i + 1] == "pip":
            return places.pip(["pip", *rest[i + 2 :]], flags[i + 2 :], depth)
    return Verdict(UNKNOWN, " ".join(argv), "runs Python code the guard cannot see")


def _perl(argv: list[str], flags: list[int], depth: int) -> Verdict:
    if any("i" in _short_letters(arg, "eEIMmx") for arg in argv[1:]):
        return Verdict(MUTATE, " ".join(argv), "edits files in place")
    return Verdict(UNKNOWN, " ".join(argv), "runs Perl code the guard cannot see")


RULES: dict[str, Rule] = {
    **dict.fromkeys(("sudo", "doas", "sudoedit"), _sudo),
    "env": _env,
    "nice": _nice,
    "timeout": _timeout,
    "time": _time,
    "nohup": _wrapper(()),
    "builtin": _wrapper(()),
    "exec": _wrapper(("-a",)),
    "command": _command,
    "stdbuf": _wrapper(("-i", "-o", "-e")),
    "ionice": _wrapper(("-c", "-n", "-p", "-P", "-u", "--class", "--classdata")),
    "xargs": _xargs,
    **dict.fromkeys(("bash", "sh", "zsh", "dash", "ksh"), _shell),
    "eval": _eval,
    "source": _source,
    ".": _source,
    "find": _find,
    "fd": _fd,
    "rg": _rg,
    "sort": _sort,
    "[[": _double_bracket,
    "file": _file,
    "read": lambda argv, flags, depth: guard_builtins.read(argv, flags, depth, risky_variable),
    "printf": lambda argv, flags, depth: guard_builtins.printf(argv, flags, depth, risky_variable),
    "mapfile": guard_builtins.mapfile,
    "readarray": guard_builtins.mapfile,
    "test": guard_builtins.test,
    "[": guard_builtins.test,
    "unset": guard_builtins.names_only,
    "set": guard_builtins.set_options,
    "wait": guard_builtins.names_only,
    "cd": places.cd,
    "pushd": places.cd,
    "popd": places.cd,
    "uniq": _uniq,
    "tee": _tee,
    "tree": _option_writes("o", (), "writes its output to a file", "LPIHTo"),
    "yq": _option_writes("i", ("--inplace",), "edits files in place", "oIp"),
    "date": _option_writes("s", ("--set",), "sets the system clock", "dfrIs"),
    "sdiff": _option_writes("o", ("--output",), "writes its output to a file", "wo"),
    "hostname": _hostname,
    **dict.fromkeys(("man", "less", "more"), _pager),
    "perl": _perl,
    "git": places.git,
    "let": lambda argv, flags, depth: Verdict(UNKNOWN, " ".join(argv), "evaluates arithmetic"),
    "sed": judge_sed,
    **dict.fromkeys(("awk", "gawk", "mawk", "nawk"), judge_awk),
}
RULES.update(dict.fromkeys(PACKAGE_MANAGERS, judge_package))
RULES.update(pip=places.pip, pip3=places.pip, go=places.go)
RULES.update(
    dict.fromkeys(
        DECLARERS,
        lambda argv, flags, depth: guard_builtins.declare(argv, flags, depth, risky_variable),
    )
)
register_bash_classifier(classify_bash)
