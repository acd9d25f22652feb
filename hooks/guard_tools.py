"""Guard rules for tools with option languages of their own: git, sed, awk, package managers.

A leaf under hooks/guard_rules.py (shell-level rules and wrappers), so neither imports the
other; the verdict record and its scale OK < UNKNOWN < MUTATE are defined here for both and
for hooks/guard_hook.py.
"""

from __future__ import annotations

from enum import Enum, IntEnum

from hooks.shell import EXPANDS
from state.vocab_core import GuardDecision

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    GitRule = Callable[[list[str]], str | None]  # why a git subcommand writes, or None
    Classifier = Callable[[str, int], "Verdict"]  # a whole Bash command at a nesting depth


class Level(IntEnum):
    """How much a command may change; a command's verdict is the worst of its parts'."""

    OK = 0
    UNKNOWN = 1
    MUTATE = 2


OK, UNKNOWN, MUTATE = Level.OK, Level.UNKNOWN, Level.MUTATE


class Hint(Enum):
    """What a refusal tells the agent to do instead, chosen by the rule that fired (a rule
    may give its own words instead, a plain str); hooks/guard_hook.py words these."""

    DECISION = "decision"  # the decision's own: ask the person, or record it in the plan
    WRITE = "write"  # edit in the scratch worktree, then capture the edit
    PERSON = "person"  # only the person carries it out
    TOOLS = "tools"  # the tools that work while planning, in the client's names


class Verdict:
    """A rule's judgement: the level, the offending part and why; a decision the rule forces
    (else the level and the guard's strictness decide), the hint, and for a sandboxed call
    the command as it runs wrapped. A slotted class, not a dataclass: importing dataclasses
    costs the guard about as much as importing json, on every tool call."""

    __slots__ = ("decision", "hint", "level", "part", "why", "wrapped")

    def __init__(
        self,
        level: Level,
        part: str = "",
        why: str = "",
        decision: GuardDecision | None = None,
        hint: Hint | str = Hint.DECISION,
        wrapped: str = "",
    ) -> None:
        self.level, self.part, self.why = level, part, why
        self.decision, self.hint, self.wrapped = decision, hint, wrapped

    def __repr__(self) -> str:
        fields = (self.level.name, self.part, self.why, self.decision, self.hint, self.wrapped)
        return "Verdict(" + ", ".join(map(repr, fields)) + ")"


PASS = Verdict(OK)
SAFE_TARGETS = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty")
CHANGES = "changes the repository or the working tree"
# The product's own command anywhere but a plain chain (hooks/guard_own.py): denied up front.
ALONE = "runs the product's command inside a compound command, where it cannot write its"
ALONE += " session"
ONE_PER_CALL = "run one `plan` command per call (or a plain chain: `plan a && plan b`,"
ONE_PER_CALL += ' `i=$(plan …) && plan … "$i"`), or several operations with `plan apply -`'


def names(text: str) -> frozenset[str]:
    """A set of command names written as one whitespace-separated block."""
    return frozenset(text.split())


def listed(text: str) -> tuple[str, ...]:
    """Strings written as one whitespace-separated block, in order (a tuple: str.startswith
    takes one)."""
    return tuple(text.split())


def long_option(arg: str, known: tuple[str, ...]) -> str:
    """The long option `arg` names, GNU-style: exact or a unique prefix (`--in` is `--in-place`);
    "?" when the prefix is ambiguous, "" when it is not a long option of `known` at all."""
    name = arg.split("=", 1)[0]
    if not name.startswith("--") or name == "--":
        return ""
    if name in known:
        return name
    matches = [option for option in known if option.startswith(name)]
    return matches[0] if len(matches) == 1 else "?" if matches else ""


def dynamic_arguments(argv: list[str], flags: list[int]) -> Verdict | None:
    """An UNKNOWN verdict when an argument is computed at run time (it could be `-i`)."""
    if any(f & EXPANDS for f in flags[1:]):
        return Verdict(UNKNOWN, " ".join(argv), "has arguments known only at run time")
    return None


# -- git -------------------------------------------------------------------------------------

GIT_READ = names(
    """status log diff show blame annotate grep ls-files ls-tree ls-remote rev-parse describe
    shortlog cat-file rev-list merge-base show-ref name-rev whatchanged count-objects
    check-ignore check-attr check-mailmap for-each-ref show-branch diff-tree diff-index
    diff-files range-diff cherry var version help verify-commit verify-tag"""
)
GIT_WRITE = names(
    """commit push pull fetch checkout switch reset merge rebase restore am cherry-pick revert
    rm mv add init clone gc prune update-ref update-index write-tree commit-tree read-tree
    filter-branch replace mergetool maintenance sparse-checkout repack pack-refs symbolic-ref
    checkout-index mktag mktree fast-import"""
)
GIT_GLOBAL_WITH_ARG = ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env")
GIT_SAFE_CONFIG = listed(
    """color. log. advice. safe.directory core.quotepath core.abbrev grep. status. column. i18n.
    blame. user. init."""
)
GIT_SAFE_PAGERS = ("", "cat", "less", "more", "true", "false")
BRANCH_WRITES = listed(
    """--delete --move --copy --force --set-upstream-to --track --unset-upstream --edit-description
    --no-track --create-reflog"""
)
LISTING_ARGS = listed("--contains --no-contains --merged --no-merged --points-at --sort --format")
TAG_WRITES = ("--delete", "--annotate", "--sign", "--force", "--message", "--file", "--edit")
CONFIG_READS = listed(
    """--get --get-all --get-regexp --get-urlmatch --get-color -l --get-colorbool --list get
    list"""
)
CONFIG_WRITES = listed(
    """--unset --unset-all --add --replace-all --rename-section -e --remove-section --edit set unset
    rename-section edit remove-section"""
)
CONFIG_ARGS = ("-f", "--file", "--blob", "--type", "--default", "--comment")
CONFIG_LONG = tuple(o for o in CONFIG_WRITES + CONFIG_READS if o.startswith("--"))


GIT_RUNS = listed("--upload-pack --receive-pack --exec --open-files-in-pager --remote --ext-diff")


def judge_git(argv: list[str], flags: list[int], depth: int) -> Verdict:
    verdict = _judge_git(argv)
    if verdict.level == OK and _git_elsewhere(argv):
        why = "runs git on another repository, whose configuration may run commands"
        return Verdict(UNKNOWN, " ".join(argv), why)
    return dynamic_arguments(argv, flags) or verdict


GIT_ELSEWHERE = ("--git-dir", "--work-tree", "-C", "--namespace", "--super-prefix")


def _git_elsewhere(argv: list[str]) -> bool:
    """Whether git's global options point it at another repository or work tree."""
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        if argv[i].split("=", 1)[0] in GIT_ELSEWHERE:
            return True
        i += 2 if argv[i] in GIT_GLOBAL_WITH_ARG else 1
    return False


def _judge_git(argv: list[str]) -> Verdict:
    part = " ".join(argv)
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        arg = argv[i]
        name = arg.split("=", 1)[0]
        if (name in ("--config-env", "--exec-path") and "=" in arg) or arg == "--config-env":
            return Verdict(UNKNOWN, part, "changes how git runs its helpers")
        setting = arg[2:] or (argv[i + 1] if i + 1 < len(argv) else "")  # -cK=V, -c K=V
        if arg.startswith("-c") and not _safe_git_setting(setting):
            return Verdict(UNKNOWN, part, "sets git configuration that can run commands")
        if arg in ("--version", "--help", "-h", "--exec-path", "--html-path", "--man-path"):
            return PASS
        i += 2 if arg in GIT_GLOBAL_WITH_ARG else 1
    if i >= len(argv):
        return PASS
    sub, rest = argv[i], argv[i + 1 :]
    if any(a in ("--help", "-h") for a in rest):
        return PASS
    for arg in rest:
        if arg == "--":
            break
        runs = arg.startswith("-O") or (sub == "ls-remote" and arg.startswith("-u"))
        if runs or long_option(arg, GIT_RUNS):
            return Verdict(UNKNOWN, part, "names a program for git to run")
        if arg.split("=", 1)[0] in ("--output", "--outp", "--outpu") or (
            sub == "archive" and arg.startswith("-o")
        ):
            return Verdict(MUTATE, part, "writes its output to a file")
    if sub in GIT_SUBCOMMANDS:
        why = GIT_SUBCOMMANDS[sub](rest)
        return PASS if why is None else Verdict(MUTATE, part, why)
    if sub in GIT_READ:
        return PASS
    if sub in GIT_WRITE:
        return Verdict(MUTATE, part, CHANGES)
    return Verdict(UNKNOWN, part, "is not a git command known to be read-only")


def _safe_git_setting(setting: str) -> bool:
    key, _, value = setting.partition("=")
    key = key.lower()
    if key == "core.pager" or key.startswith("pager."):
        return value in GIT_SAFE_PAGERS
    return key.startswith(GIT_SAFE_CONFIG)


def _verbs(
    reads: tuple[str, ...], bare_reads: bool = True, with_value: tuple[str, ...] = ()
) -> GitRule:
    """A git subcommand with verbs (`git stash list`): the verb comes first (after options
    that take a value, such as `notes --ref R`); read-only verbs pass, others write."""

    def rule(rest: list[str]) -> str | None:
        i = 0
        while i < len(rest) and rest[i].startswith("-") and bare_reads:
            i += 2 if rest[i] in with_value else 1
        verb = rest[i] if i < len(rest) else None
        if verb in reads or (verb is None and bare_reads):
            return None
        return CHANGES

    return rule


def _git_branch(rest: list[str]) -> str | None:
    return _creates_ref(rest, BRANCH_WRITES, "dDmMcCfut", "creates a branch")


def _git_tag(rest: list[str]) -> str | None:
    return _creates_ref(rest, TAG_WRITES, "adsfmFue", "creates a tag")


def _creates_ref(
    rest: list[str], writes: tuple[str, ...], write_letters: str, creates: str
) -> str | None:
    """`git branch`/`git tag`: listing unless a write option or a new name is given."""
    listing, new_names, skip = False, [], False
    for arg in rest:
        name = arg.split("=", 1)[0]
        if skip:
            skip = False
        elif arg in ("-l", "--list") or (arg in ("-v", "--verify") and creates == "creates a tag"):
            listing = True
        elif name in writes:
            return CHANGES
        elif arg in LISTING_ARGS:
            skip = True
        elif arg.startswith("-") and not arg.startswith(("--", "-n")) and len(arg) > 1:
            if set(arg[1:]) & set(write_letters):
                return CHANGES
            listing = listing or "l" in arg
        elif not arg.startswith("-"):
            new_names.append(arg)
    return creates if new_names and not listing else None


def _git_config(rest: list[str]) -> str | None:
    operands, skip = [], False
    for arg in rest:
        name = arg.split("=", 1)[0]
        if skip:
            skip = False
        elif name in CONFIG_READS:
            return None
        elif name in CONFIG_WRITES or long_option(arg, CONFIG_LONG) in (*CONFIG_WRITES, "?"):
            return "changes git configuration"
        elif arg in CONFIG_ARGS:
            skip = True
        elif not arg.startswith("-"):
            operands.append(arg)
    return "changes git configuration" if len(operands) > 1 else None


def _git_archive(rest: list[str]) -> str | None:
    return "writes an archive file" if any(a.startswith("-o") for a in rest) else None


def _last(reading: str, writing: str, why: str) -> GitRule:
    """Read-only when the last of the two options given is `reading`."""

    def rule(rest: list[str]) -> str | None:
        given = [a for a in rest if a in (reading, writing)]
        return None if given and given[-1] == reading else why

    return rule


def _git_apply(rest: list[str]) -> str | None:
    if any(long_option(a, ("--apply", "--allow-empty")) == "--apply" for a in rest):
        return CHANGES
    reads = ("--check", "--stat", "--numstat", "--summary")
    return None if any(a in reads for a in rest) else CHANGES


def _git_clean(rest: list[str]) -> str | None:
    """Dry run when the last of -n/--dry-run/--no-dry-run says so (`-nd` counts as -n)."""
    dry = False
    for arg in rest:
        if arg == "--":
            break
        if arg in ("-i", "--interactive") or (arg[:1] == "-" and arg[1:2] != "-" and "i" in arg):
            return "cleans files interactively"
        if arg == "--dry-run" or (arg[:1] == "-" and arg[1:2] != "-" and "n" in arg):
            dry = True
        elif arg == "--no-dry-run":
            dry = False
    return None if dry else CHANGES


GIT_SUBCOMMANDS = {
    "branch": _git_branch,
    "tag": _git_tag,
    "config": _git_config,
    "stash": _verbs(("list", "show"), bare_reads=False),
    "worktree": _verbs(("list",)),
    "notes": _verbs(("list", "show"), with_value=("--ref",)),
    "submodule": _verbs(("status", "summary")),
    "remote": _verbs(("show", "get-url")),
    "reflog": _verbs(("show", "exists")),
    "bisect": _verbs(("log", "visualize", "view")),
    "format-patch": _last("--stdout", "--no-stdout", why="writes patch files"),
    "apply": _git_apply,
    "clean": _git_clean,
    "archive": _git_archive,
}


# -- sed -------------------------------------------------------------------------------------

SED_WRITES = "writes a file from its script"
SED_LONG = listed(
    """--expression --file --in-place --line-length --null-data --quiet --silent --regexp-extended
    --separate --sandbox --unbuffered --posix --debug --follow-symlinks --binary --zero-terminated
    --help --version"""
)
SED_RUNS = "runs shell commands from its script"


def judge_sed(argv: list[str], flags: list[int], depth: int) -> Verdict:
    part = " ".join(argv)
    scripts, operands, unseen, sandbox = [], [], False, False
    i = 1
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition("=")
        if arg == "--":
            operands += argv[i + 1 :]
            break
        name = long_option(arg, SED_LONG) or name
        if name == "?":
            return Verdict(UNKNOWN, part, "has an ambiguous option")
        if name == "--in-place":
            return Verdict(MUTATE, part, "edits files in place")
        if name in ("--expression", "--file", "--line-length"):
            value = value if eq else (argv[i + 1] if i + 1 < len(argv) else "")
            i += 0 if eq else 1
            scripts += [value] if name == "--expression" else []
            unseen = unseen or name == "--file"
        elif name == "--sandbox":
            sandbox = True
        elif arg.startswith("-") and not arg.startswith("--") and len(arg) > 1:
            letter, value = _short_option(arg, "efl")
            if "i" in arg[1 : arg.find(letter) if letter else len(arg)]:
                return Verdict(MUTATE, part, "edits files in place")
            if letter and not value:
                value = argv[i + 1] if i + 1 < len(argv) else ""
                i += 1
            scripts += [value] if letter == "e" else []
            unseen = unseen or letter == "f"
        elif not arg.startswith("--"):
            operands.append(arg)
        i += 1
    if not scripts and not unseen and operands:
        scripts.append(operands[0])
    if sandbox:
        return dynamic_arguments(argv, flags) or PASS
    if unseen:
        return Verdict(UNKNOWN, part, "runs a sed script file the guard cannot see")
    why = next(filter(None, map(sed_script_writes, scripts)), None)
    return Verdict(MUTATE, part, why) if why else dynamic_arguments(argv, flags) or PASS


def _short_option(arg: str, with_value: str) -> tuple[str, str]:
    """The first letter of a `-abc` cluster that takes a value, and the value glued to it."""
    for j, ch in enumerate(arg[1:], 1):
        if ch in with_value:
            return ch, arg[j + 1 :]
    return "", ""


def sed_script_writes(script: str) -> str | None:
    """Why a sed script writes (`w file`, `s///w file`) or runs commands (`e`), else None."""
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c == "/":
            i = _skip_delimited(script, i + 1, "/")
        elif c == "\\" and i + 1 < n:
            i = _skip_delimited(script, i + 2, script[i + 1])
        elif c in "wW":
            return SED_WRITES
        elif c == "e":
            return SED_RUNS
        elif c in "sy" and i + 1 < n:
            delimiter = script[i + 1]
            i = _skip_delimited(script, _skip_delimited(script, i + 2, delimiter), delimiter)
            while c == "s" and i < n and script[i] not in ";\n}":
                if script[i] in "we":
                    return SED_WRITES if script[i] == "w" else SED_RUNS
                i += 1
        elif c in "aicrRbtT:#":
            stop = "\n" if c in "aicrR#" else ";\n"
            while i < n and script[i] not in stop:
                i += 1
        else:
            i += 1
    return None


def _skip_delimited(text: str, i: int, delimiter: str) -> int:
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == delimiter:
            return i + 1
        else:
            i += 1
    return i


# -- awk -------------------------------------------------------------------------------------

AWK_WITH_ARG = ("-v", "-F", "--assign", "--field-separator", "-e", "--source")
AWK_WRITING = ("-d", "-o", "-p", "--dump-variables", "--pretty-print", "--profile")


def judge_awk(argv: list[str], flags: list[int], depth: int) -> Verdict:
    part = " ".join(argv)
    programs, i = [], 1
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
        arg = argv[i]
        name, eq, value = arg.partition("=")
        following = argv[i + 1] if i + 1 < len(argv) else ""
        if arg == "--":
            i += 1
            break
        if arg[:2] == "-i" or name == "--include":
            library = value if eq else arg[2:] if arg[:2] == "-i" and len(arg) > 2 else following
            if library.startswith("inplace"):
                return Verdict(MUTATE, part, "edits files in place")
            return Verdict(UNKNOWN, part, "loads an awk library the guard cannot see")
        if arg[:2] in ("-f", "-E", "-l") or name in ("--file", "--exec", "--load"):
            return Verdict(UNKNOWN, part, "runs an awk program the guard cannot see")
        if arg[:2] in ("-d", "-o", "-p") or name in AWK_WRITING:
            return Verdict(MUTATE, part, "writes a file")
        if arg in ("-e", "--source"):
            programs.append(following)
        i += 2 if arg in AWK_WITH_ARG else 1
    if not programs:
        programs.append(argv[i] if i < len(argv) else "")
    why = next(filter(None, map(awk_program_writes, programs)), None)
    return Verdict(MUTATE, part, why) if why else dynamic_arguments(argv, flags) or PASS


def awk_program_writes(program: str) -> str | None:
    """Why an awk program writes or runs commands (`print > f`, `| "cmd"`, `system()`), in one
    pass over its tokens. A command given as a constant string is judged like a Bash command
    (`"ls" | getline`, `print | "sort"` are read-only); any other is not known."""
    tokens = _awk_tokens(program)
    in_print, depth = False, 0
    for k, token in enumerate(tokens):
        if token == "system" and tokens[k + 1 : k + 2] == ["("]:
            why = _awk_command(tokens[k + 2 : k + 4], ")")
            if why:
                return why
        elif token == "|" and "getline" in tokens[k + 1 : k + 3]:
            why = _awk_command(tokens[k - 1 : k], "") if k else "runs a shell command"
            if why:
                return why
        elif token in ("print", "printf"):
            in_print, depth = True, 0
        elif not in_print:
            continue
        elif token in ("(", "["):
            depth += 1
        elif token in (")", "]"):
            depth -= 1
        elif depth <= 0 and token in (";", "}", "\n"):
            in_print = False
        elif depth <= 0 and token == "|":
            why = _awk_command(tokens[k + 1 : k + 3], "")
            if why:
                return "pipes into a shell command" if why == AWK_RUNS else why
        elif depth <= 0 and token == ">":
            j = k + 1 + (tokens[k + 1 : k + 2] == [">"])
            target = tokens[j] if j < len(tokens) else ""
            if not (target.startswith('"') and target[1:] in SAFE_TARGETS):
                return "writes a file"
    return None


AWK_RUNS = "runs a shell command"
# guard_rules registers its classify_bash: awk's commands are Bash
_classify_bash: list[Classifier] = []


def register_bash_classifier(classify: Classifier) -> None:
    """How a command an awk program runs is judged (guard_rules.classify_bash, passed in so
    that this module does not import the one that imports it)."""
    _classify_bash[:] = [classify]


def _awk_command(tokens: list[str], closer: str) -> str | None:
    """None when the command is one constant string that the guard judges read-only."""
    if not tokens or not tokens[0].startswith('"'):
        return AWK_RUNS
    if closer and tokens[1:2] != [closer]:
        return AWK_RUNS
    verdict = _classify_bash[0](tokens[0][1:], 1)
    return None if verdict.level == OK else AWK_RUNS if verdict.level == UNKNOWN else verdict.why


def _awk_tokens(text: str) -> list[str]:
    """Words, one-char punctuation and strings (as `"` + body). Regex literals are read as
    code, not skipped: telling `/` the divisor from a regex start differs between awks, and
    a skipped "regex" could hide `system(`; a false alarm costs only a sandboxed run."""
    tokens: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = _skip_delimited(text, i + 1, c)
            tokens.append('"' + text[i + 1 : j - 1])
            i = j
        elif c == "#":
            while i < n and text[i] != "\n":
                i += 1
        elif c.isalnum() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            tokens.append(text[i:j])
            i = j
        elif c == "\\" and text.startswith("\n", i + 1):
            i += 2
        else:
            if c not in " \t\r":
                tokens.append(c)
            i += 1
    return tokens


# -- package managers ------------------------------------------------------------------------


def _words(*texts: str) -> frozenset[str]:
    return frozenset(w for text in texts for w in text.split(","))


_INSTALLS = "install,i,add,remove,rm,uninstall,un,update,up,upgrade,ci,link,unlink,prune,dedupe"
_SYSTEM = "install,remove,purge,upgrade,update,autoremove,dist-upgrade,full-upgrade,reinstall,"
_SYSTEM += "add,del,uninstall,erase,downgrade,tap,untap,link,unlink,cleanup"
_LISTS = "list,ls,show,info,view,search,outdated,why,explain,help,--version,-v,-V"
_UV_WRITES = "add,remove,sync,lock,init,venv,pip install,pip uninstall,pip sync,pip compile,"
_UV_WRITES += "tool install,tool uninstall,python install,python uninstall,self update,cache clean"
_UV_READS = "pip list,pip show,pip freeze,pip check,pip tree,tree,help,--version,-V,version,"
_UV_READS += "tool list,python list,python find,cache dir"
_GO_WRITES = "install,get,mod tidy,mod download,mod init,mod edit,mod vendor,work init,work use,"
_GO_WRITES += "work sync,generate,fmt,clean"

# manager -> (verbs that change packages, verbs that only read); other verbs are unknown
PACKAGE_MANAGERS = {
    "pip": (_words("install,uninstall,download,wheel"), _words(_LISTS, "freeze,check,inspect")),
    "npm": (_words(_INSTALLS, "audit fix,publish,init,pack"), _words(_LISTS, "audit")),
    "pnpm": (_words(_INSTALLS, "publish,init"), _words(_LISTS)),
    "yarn": (_words(_INSTALLS, "import,publish,init"), _words(_LISTS)),
    "bun": (_words(_INSTALLS, "a,init,create"), _words(_LISTS)),
    "cargo": (
        _words("install,uninstall,add,remove,rm,update,new,init,fix,publish"),
        _words(_LISTS, "pkgid,locate-project,version"),
    ),
    "apt": (_words(_SYSTEM), _words(_LISTS, "policy,madison,depends,rdepends")),
    "uv": (_words(_UV_WRITES), _words(_UV_READS)),
    "poetry": (
        _words("add,remove,install,update,lock,init,new,build,publish,self"),
        _words(_LISTS),
    ),
    "gem": (_words("install,uninstall,update,cleanup"), _words(_LISTS, "contents,environment")),
    "go": (
        _words(_GO_WRITES),
        _words("version,env,list,doc,vet,help,mod graph,mod why,mod verify"),
    ),
    "pipx": (
        _words("install,uninstall,inject,upgrade,upgrade-all,reinstall,reinstall-all"),
        _words(_LISTS),
    ),
}
for _alias, _same in (("pip3", "pip"), ("apt-get", "apt"), ("dnf", "apt"), ("yum", "apt")):
    PACKAGE_MANAGERS[_alias] = PACKAGE_MANAGERS[_same]
PACKAGE_MANAGERS["brew"] = PACKAGE_MANAGERS["apk"] = PACKAGE_MANAGERS["apt"]


WRITING_OPTIONS = listed(
    """--log --logs-dir --log-file --cache --cache-dir --target --prefix --root --output --report
    --dest --outdir --out"""
)


def judge_package(argv: list[str], flags: list[int], depth: int) -> Verdict:
    part = " ".join(argv)
    writes, reads = PACKAGE_MANAGERS[argv[0].rsplit("/", 1)[-1]]
    words = [a for a in argv[1:] if not a.startswith("-")]
    options = [a for a in argv[1:] if a.startswith("-")]
    for option in options:
        name = option.split("=", 1)[0]
        if name in WRITING_OPTIONS or name.startswith(("--log", "--cache")):
            return Verdict(MUTATE, part, "writes files named by its options (logs, caches, output)")
    if argv[0].endswith("cargo") and words[:1] in (["tree"], ["metadata"]):
        if "--locked" in options or "--frozen" in options:
            return PASS
        return Verdict(MUTATE, part, "may create or update Cargo.lock (add --locked)")
    for verb in (" ".join(words[:2]), words[0] if words else options[0] if options else ""):
        if verb in writes:
            return Verdict(MUTATE, part, "installs, removes or updates packages")
        if verb in reads:
            return PASS
    if not words:
        bare_yarn_installs = argv[0].endswith("yarn") and not options
        return Verdict(MUTATE, part, "installs packages") if bare_yarn_installs else PASS
    return Verdict(UNKNOWN, part, "runs a package-manager command the guard cannot judge")
