"""A grammar of bash for the guard's generative tests and its benchmark: `Grammar` draws
commands an agent might write (quoting, expansions, here-docs and here-strings,
redirections, lists, subshells and groups, `cd`, the builtins that evaluate strings, common
tools), `Stress` the shapes an attacker would use to make the guard slow (many `cd`s, deep
`$(…)`, backticks and quotes, here-docs, long pipelines, brace expansion, `eval` chains,
arithmetic). Seeded, so a seed names its command.
"""

from __future__ import annotations

import random

# -- the grammar -----------------------------------------------------------------------------

PATHS = [
    "README.md",
    "src/app.py",
    "src/data.txt",
    "new.txt",
    "src",
    ".git/config",
    ".git/hooks/pre-commit",
    ".git/HEAD",
    "~/.bashrc",
    "$HOME/.bashrc",
    "/tmp/scratch",
    "/dev/null",
    ".planner/s1/session.json",
    ".planner/s1/worktree/w.txt",
    ".planner/s1/worktree/evil",
]
CODE = "touch pwned"  # what a hidden command would do
BARE = ["x", "1", "-n", "-v", "a[0]", "a", "r", "PS4", "PATH", "HOME", "%s", "-", "src"]
EXPANSIONS = [
    "$x",
    "${x}",
    "${x:-d}",
    "${#x}",
    "${x%.*}",
    "${!x}",
    "${x@P}",
    "${x:1}",
    "${a[x]}",
    "${a[$x]}",
    "$((1 + 2))",
    "$((x))",
    "$[x]",
    "$HOME",
    "$(echo a)",
    f"$({CODE})",
    "`echo a`",
    f"`{CODE}`",
    "<(echo a)",
    f">({CODE})",
    f"'a[$({CODE})]'",
    f"a[\\$({CODE})]",
    f'"$({CODE})"',
]
REDIRECTS = ["<", ">", ">>", "2>", "&>", ">|", "<>", "3>", "2>>"]
REDIRECTS_ALONE = [">&2", "2>&1", "> /dev/null", "< /dev/null", "<<< x", "<<< $x", "3<README.md"]
REDIRECTS_ALONE += [f"<<< 'a[$({CODE})]'", "1>/dev/fd/3", ">/dev/stderr", "{a[x]}</dev/null"]
POISON = f"x='b[$({CODE})]'; a=(1); "  # a value that runs code wherever bash evaluates x
BUILTINS = [
    "test -v {w}",
    "[ -v {w} ]",
    "[ {w} ]",
    "[ {w} = {w} ]",
    "[[ -v {w} ]]",
    "[[ {w} -eq 1 ]]",
    "[[ {w} == {w} ]]",
    "unset {w}",
    "declare -a a; unset {w}",
    "wait -n -p {w}",
    "mapfile -C {w} -c 1 a",
    "readarray {w}",
    "declare -n r={w}",
    "local -n r={w}",
    "typeset -n r={w}",
    "declare {w}={w}",
    "declare -i x={w}",
    "export {w}={w}",
    "printf -v {w} %s x",
    "printf {w} {w}",
    "read {w}",
    "read -a {w}",
    "(( {w} ))",
    "let {w}",
    "x={w}",
    "x={w}; echo $((x))",
    "a=([{w}]=1)",
    "for {w} in {w}; do set -x; true; done",
    "eval {w}",
    "cd {w}",
    ": ${{w}:={w}}",
]
TOOLS = [
    "echo {w}",
    "printf '%s\\n' {w}",
    "cat {w}",
    "cp {w} {w}",
    "mv {w} {w}",
    "tee {w}",
    "sed -n 1p {w}",
    "sed {w} {w}",
    "sed -i s/a/b/ {w}",
    "awk '{print}' {w}",
    "awk {w} {w}",
    "git status",
    "cd .planner/s1/worktree/evil && git status",
    "cd {w} && git log -1",
    "git log --oneline -1",
    "git diff {w}",
    "git -C {w} status",
    "git config {w}",
    "git {w}",
    "python3 -c 'print(1)'",
    "python3 -c {w}",
    "find src -name {w}",
    "find src -exec {w} \\;",
    "find src -exec cat {} +",
    "xargs {w}",
    "echo README.md | xargs cat",
    "env {w}",
    "env x={w} cat {w}",
    "sh -c {w}",
    "bash -c 'echo {w}'",
    "wc -l {w}",
    "grep -r x {w}",
    "ls {w}",
    "head -1 {w}",
    "sort {w}",
]
PREFIXES = ["x=1 ", "PS4='$(touch pwned)' ", "GIT_DIR=. ", "a[x]=1 ", "HOME=/tmp "]
HEREDOC_BODIES = ["a", "$x", f"$({CODE})", "b c", "'$x'"]
OPERATORS = [" | ", " && ", " || ", "; ", " & ", "\n", " |& "]


class Grammar:
    """Bash commands drawn from a seeded random source: plain words most of the time (so a
    good share is allowed and run), code-bearing expansions and writes now and then."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def pick(self, items: list[str]) -> str:
        return self.r.choice(items)

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def word(self) -> str:
        if self.chance(0.15):
            return self.pick(EXPANSIONS)
        text = self.pick(BARE) if self.chance(0.5) else self.pick(PATHS)
        quoting = self.r.randrange(5)
        if quoting == 1:
            return "'" + text + "'"
        if quoting == 2:
            return '"' + text.replace('"', "") + '"'
        if quoting == 3:
            return "$'" + text.replace("'", "").replace("t", "\\x74") + "'"
        return text

    def simple(self) -> str:
        template = self.pick(BUILTINS) if self.chance(0.4) else self.pick(TOOLS)
        parts = template.split("{w}")
        command = parts[0] + "".join(self.word() + part for part in parts[1:])
        if self.chance(0.1):
            command = self.pick(PREFIXES) + command
        if self.chance(0.15):
            command += " " + self.pick(REDIRECTS) + " " + self.pick(PATHS)
        elif self.chance(0.1):
            command += " " + self.pick(REDIRECTS_ALONE)
        if self.chance(0.08):
            command += " <<EOF\n" + self.pick(HEREDOC_BODIES) + "\nEOF\n"
        return command

    def command_list(self, depth: int = 0) -> str:
        parts = [(POISON if depth == 0 and self.chance(0.3) else "") + self.simple()]
        while self.chance(0.4):
            more = self.compound(depth + 1) if depth < 2 and self.chance(0.5) else self.simple()
            parts.append(self.pick(OPERATORS) + more)
        return "".join(parts).rstrip("\n")

    def compound(self, depth: int) -> str:
        inner = self.command_list(depth)
        shape = self.r.randrange(6)
        if shape == 0:
            return f"( {inner} )"
        if shape == 1:
            return "{ " + inner + "; }"
        if shape == 2:
            return f"if {self.simple()}; then {inner}; fi"
        if shape == 3:
            return f"for i in 1 2; do {inner}; done"
        if shape == 4:
            return f"x=$({inner})"
        return inner


# -- what an attacker writes to make the guard slow ------------------------------------------


class Stress:
    """Commands shaped to cost the guard time: each repeats or nests one construct many
    times (up to the 100 KB the guard still takes), and may end in a write or a git call,
    so a guard that gave up early, or followed too little, would be seen."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.g = Grammar(seed)

    def command(self) -> str:
        shape = self.r.choice(SHAPES)
        count = self.r.choice((3, 20, 200, 2000, 20000))
        text = shape(self, count)
        tail = self.r.choice(("", "; git status", "; echo PWNED > notes.txt", " && git log -1"))
        return text[:99_000] + tail

    def cds(self, count: int) -> str:  # every cd doubles the places a naive guard follows
        return "; ".join(f"cd d{i}/../e{i}" for i in range(min(count, 5000)))

    def substitutions(self, count: int) -> str:
        depth = min(count, 60)
        return "echo " + "$(echo " * depth + self.g.word() + ")" * depth

    def spaced_substitutions(self, count: int) -> str:  # `$( (` first looks like `$((`
        depth = min(count, 60)
        return "echo " + "$( (echo " * depth + "x" + ") )" * depth

    def arithmetic(self, count: int) -> str:
        depth = min(count, 48)
        return "echo $((" + "$((" * depth + "1+" * min(count, 30000) + "1" + "))" * (depth + 1)

    def backticks(self, count: int) -> str:
        depth = min(count, 12)
        text = "x"
        for _ in range(depth):
            text = "echo `" + text.replace("\\", "\\\\").replace("`", "\\`") + "`"
        return text

    def quotes(self, count: int) -> str:
        return 'echo "' + "a\\\"$x'" * count + '"' + " '" + "b" * count + "'"

    def heredocs(self, count: int) -> str:
        n = min(count, 3000)
        return "cat " + "<<A " * n + "\n" + "$(echo x)\n" * n + "A\n"

    def pipeline(self, count: int) -> str:
        return " | ".join(self.g.simple() for _ in range(min(count, 3000)))

    def braces(self, count: int) -> str:
        return "echo " + "{a,b}" * count + " {1..9}" * min(count, 100)

    def nesting(self, count: int) -> str:
        depth = min(count, 60)
        opener = self.r.choice(("( ", "{ ", "if true; then ", "for i in 1; do ", "x=$("))
        closer = {"( ": " )", "{ ": "; }", "if true; then ": "; fi"}
        close = closer.get(opener, "; done" if opener.startswith("for") else ")")
        return opener * depth + self.g.simple() + close * depth

    def evals(self, count: int) -> str:
        return "eval " * min(count, 40) + "echo '" + self.arithmetic(count // 10 + 3) + "'"

    def shells(self, count: int) -> str:
        text = "ls"
        for _ in range(min(count, 12)):
            text = "bash -c " + "'" + text.replace("'", "'\\''") + "'"
        return text

    def sequence(self, count: int) -> str:
        return "; ".join(self.g.command_list() for _ in range(min(count, 400)))

    def own_options(self, count: int) -> str:  # the product's command: each option a path
        option = self.r.choice(("--state-dir .planner/s1", "-o .planner/s1/x", "--json"))
        return "plan status " + " ".join([option] * min(count, 4000))

    def words(self, count: int) -> str:
        return "ls " + " ".join("$x${y:-z}`echo w`" for _ in range(min(count, 3000)))


SHAPES = [
    Stress.cds,
    Stress.substitutions,
    Stress.spaced_substitutions,
    Stress.arithmetic,
    Stress.backticks,
    Stress.quotes,
    Stress.heredocs,
    Stress.pipeline,
    Stress.braces,
    Stress.nesting,
    Stress.evals,
    Stress.shells,
    Stress.sequence,
    Stress.words,
    Stress.own_options,
]
