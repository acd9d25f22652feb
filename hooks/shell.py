"""A POSIX-shell parser for the guard: every simple command in a string, wherever it hides.

Hand-written char by char (the lexer is hooks/shell_lex.py), without re or shlex: the guard runs
before every tool call and those imports alone eat its time budget; shlex also knows nothing of
$(…), here-docs or `|`.
"""

from __future__ import annotations

from hooks.shell_lex import (
    EXPANDS,
    GLOBS,
    SPLITS,
    Lexer,
    ParseError,
    TooComplex,
    check_clock,
    is_name,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hooks.shell_lex import Token

__all__ = ["ARITHMETIC", "EXPANDS", "GLOBS", "SPLITS", "Command", "ParseError", "Redirect"]
__all__ += ["TooComplex", "check_clock", "is_assignment", "parse", "structure"]

ARITHMETIC = "((arithmetic))"  # argv[0] of the pseudo-command noted for arithmetic on names

MAX_NESTING = 50
_NOT_A_COMMAND = frozenset(("then", "elif", "else", "fi", "do", "done", "esac", "}", "in"))
_CASE_ENDS = (";;", ";&", ";;&")


class Redirect:
    """One redirection: `op` as written (`>`, `2>` is op `>` with fd "2"), and its target word."""

    __slots__ = ("fd", "flags", "op", "target")

    def __init__(self, op: str, fd: str | None, target: str, flags: int) -> None:
        self.op, self.fd, self.target, self.flags = op, fd, target, flags

    def __repr__(self) -> str:
        return f"Redirect({self.fd or ''}{self.op} {self.target!r})"


class Command:
    """One simple command: argv with quotes removed, a flags int per word, redirections, A=1s."""

    __slots__ = ("argv", "assignments", "flags", "redirects")

    def __init__(
        self, argv: list[str], flags: list[int], redirects: list[Redirect], assignments: list[str]
    ) -> None:
        self.argv, self.flags = argv, flags
        self.redirects, self.assignments = redirects, assignments

    def __repr__(self) -> str:
        return f"Command({self.argv!r}, {self.redirects!r}, {self.assignments!r})"


def parse(text: str) -> tuple[list[Command], str | None]:
    """All simple commands in `text` and None, or those found so far and why parsing stopped."""
    found: list[Command] = []
    if not isinstance(text, str):
        return found, "not a string"
    try:
        _Parser(text, found, 0).parse_all()
    except ParseError as e:
        return found, str(e)
    except RecursionError:
        return found, "nested too deeply"
    except TooComplex:
        raise  # out of time: the whole call is denied, not judged on what was found so far
    except Exception as e:  # a parser bug must read as "cannot tell", never as a crash
        return found, f"internal error: {e.__class__.__name__}"
    return found, None


def is_assignment(word: str) -> bool:
    """`NAME=…`, `NAME+=…` or `NAME[i]=…` with a valid shell identifier as NAME."""
    eq = word.find("=")
    if eq <= 0:
        return False
    name = word[:eq].rstrip("+")
    bracket = name.find("[")
    if bracket > 0 and name.endswith("]"):
        name = name[:bracket]
    return is_name(name)


class _Parser(Lexer):
    """Recursive descent over one string; lexing and parsing share the position `i`."""

    def __init__(self, text: str, found: list[Command], depth: int) -> None:
        super().__init__(text)
        self.found, self.depth = found, depth
        self.ops: list[str] = []  # list, and-or and pipe operators and compound words, in order

    # -- grammar ---------------------------------------------------------------------------

    def parse_all(self) -> None:
        self.parse_list((), ())
        tok = self.peek()
        if tok[0] != "eof":
            raise ParseError(f"unexpected `{_show(tok)}`")

    def parse_list(self, stop_ops: tuple[str, ...], stop_words: tuple[str, ...]) -> None:
        while True:
            tok = self.peek()
            kind = tok[0]
            if kind == "eof":
                return
            if kind == "op":
                if tok[1] in stop_ops:
                    return
                if tok[1] in ("\n", ";", "&"):
                    self.ops.append(self.take()[1])
                    continue
            elif kind == "word" and not tok[2] and tok[1] in stop_words:
                return
            self.parse_and_or()

    def parse_and_or(self) -> None:
        self.parse_pipeline()
        while self.peek_op() in ("&&", "||"):
            self.ops.append(self.take()[1])
            self.skip_newlines()
            self.parse_pipeline()

    def parse_pipeline(self) -> None:
        if self.peek_word() == "!":
            self.ops.append(self.take()[1])
        self.parse_command()
        while self.peek_op() in ("|", "|&"):
            self.ops.append(self.take()[1])
            self.skip_newlines()
            self.parse_command()

    def parse_command(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise ParseError("nested too deeply")
        tok = self.peek()
        word = self.peek_word()
        if tok[0] == "op" and tok[1] == "(":
            self.ops.append("(")
            self.parse_subshell()
        elif word in _COMPOUND:
            self.ops.append(word)
            _COMPOUND[word](self)
        elif word in _NOT_A_COMMAND:
            raise ParseError(f"unexpected `{word}`")
        elif tok[0] in ("word", "redir"):
            self.parse_simple()
        else:
            raise ParseError(f"unexpected `{_show(tok)}`")
        self.depth -= 1

    def parse_simple(self) -> None:
        argv: list[str] = []
        flags: list[int] = []
        redirects: list[Redirect] = []
        assignments: list[str] = []
        while True:
            tok = self.peek()
            if tok[0] == "redir":
                self.take()
                redirects.append(self.redirect_target(tok))
            elif tok[0] != "word":
                break
            elif not argv and is_assignment(tok[1]):
                self.take()
                assignments.append(tok[1])
                if tok[1].endswith("=") and self.peek_op() == "(":
                    self.take()
                    items = self.words_until(")")
                    if any("[" in item for item in items):  # `a=([$x]=1)`: arithmetic keys
                        self.note_arithmetic(" ".join(items))
            else:
                self.take()
                argv.append(tok[1])
                flags.append(tok[3])
                if len(argv) == 1 and not redirects and self.peek_op() == "(":
                    self.ops.append("()")
                    return self.parse_function_body()
        if argv or redirects or assignments:
            self.found.append(Command(argv, flags, redirects, assignments))

    def redirect_target(self, tok: Token) -> Redirect:
        target = self.take()
        if target[0] != "word":
            raise ParseError(f"`{tok[1]}` has no target")
        return Redirect(tok[1], tok[2], target[1], target[3])

    def trailing_redirects(self) -> None:
        redirects = []
        while self.peek()[0] == "redir":
            redirects.append(self.redirect_target(self.take()))
        if redirects:
            self.found.append(Command([], [], redirects, []))

    def parse_subshell(self) -> None:
        self.take()
        if self.s.startswith("(", self.i) and self.arithmetic(self.i + 1):
            return self.trailing_redirects()
        self.parse_list((")",), ())
        self.expect_op(")")
        self.trailing_redirects()

    def parse_if(self) -> None:
        self.take()
        keyword = "if"
        while keyword in ("if", "elif"):
            self.parse_list((), ("then",))
            self.expect_word("then")
            self.parse_list((), ("elif", "else", "fi"))
            keyword = self.expect_word("elif", "else", "fi")
        if keyword == "else":
            self.parse_list((), ("fi",))
            self.expect_word("fi")
        self.trailing_redirects()

    def parse_while(self) -> None:
        self.take()
        self.parse_list((), ("do",))
        self.parse_do_done()

    def parse_for(self) -> None:
        self.take()
        if self.peek_op() == "(" and self.s.startswith("(", self.i):
            self.take()
            if not self.arithmetic(self.i + 1):
                raise ParseError("unterminated `for ((`")
        else:
            name = self.take()
            if name[0] != "word":
                raise ParseError("`for` needs a variable name")
            # the loop assigns its variable: judged as `NAME=…` (`for PS4 in …` is risky)
            self.found.append(Command([], [], [], [name[1] + "=?"]))
        self.skip_newlines()
        if self.peek_word() == "in":
            self.take()
            while self.peek()[0] == "word":
                self.take()
        if self.peek_op() == ";":
            self.take()
        self.skip_newlines()
        self.parse_do_done()

    def parse_do_done(self) -> None:
        self.expect_word("do")
        self.parse_list((), ("done",))
        self.expect_word("done")
        self.trailing_redirects()

    def parse_case(self) -> None:
        self.take()
        if self.take()[0] != "word":
            raise ParseError("`case` needs a word")
        self.skip_newlines()
        self.expect_word("in")
        while True:
            self.skip_newlines()
            if self.peek_word() == "esac":
                break
            if self.peek_op() == "(":
                self.take()
            self.words_until(")", separator="|")
            self.parse_list(_CASE_ENDS, ("esac",))
            if self.peek_op() not in _CASE_ENDS:
                break
            self.take()
        self.expect_word("esac")
        self.trailing_redirects()

    def parse_group(self) -> None:
        self.take()
        self.parse_list((), ("}",))
        self.expect_word("}")
        self.trailing_redirects()

    def parse_function(self) -> None:
        self.take()
        if self.take()[0] != "word":
            raise ParseError("`function` needs a name")
        if self.peek_op() == "(":
            self.parse_function_body()
        else:
            self.skip_newlines()
            self.parse_command()

    def parse_function_body(self) -> None:
        self.take()
        self.expect_op(")")
        self.skip_newlines()
        self.parse_command()

    def parse_test(self) -> None:
        """`[[ … ]]`: `<`, `>`, `(`, `&&` are operands of the test here, not shell syntax."""
        argv = [self.take()[1]]
        while True:
            tok = self.take()
            if tok[0] == "eof":
                raise ParseError("unterminated `[[`")
            if tok[0] == "word":
                argv.append(tok[1])
                if tok[1] == "]]" and not tok[2]:
                    break
            elif tok[1] != "\n":
                argv.append((tok[2] or "") + tok[1] if tok[0] == "redir" else tok[1])
        self.found.append(Command(argv, [0] * len(argv), [], []))
        self.trailing_redirects()

    # -- what the lexer hands back -----------------------------------------------------------

    def substitution(self, buf: list[str], start: int) -> int:
        """`$(…)`, `<(…)` or `>(…)` whose body starts at `start`: parsed in place to `)`."""
        begin = start - 2
        self.i = start
        saved, self.want_delimiter = self.want_delimiter, None
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise ParseError("nested too deeply")
        self.parse_list((")",), ())
        self.expect_op(")")
        self.depth -= 1
        self.want_delimiter = saved
        buf.append(self.s[begin : self.i])
        return EXPANDS

    def note_arithmetic(self, text: str) -> None:
        self.found.append(Command([ARITHMETIC, text], [0, 0], [], []))

    def nested(self, text: str, expansions_only: bool = False) -> None:
        check_clock()
        if self.depth + 1 > MAX_NESTING:
            raise ParseError("nested too deeply")
        inner = _Parser(text, self.found, self.depth + 1)
        if expansions_only:
            inner.scan_expansions()
        else:
            inner.parse_all()


def _show(tok: Token) -> str:
    if tok[0] == "eof":
        return "end of input"
    text: str = tok[1]
    if tok[0] == "redir":
        return (tok[2] or "") + text
    return "newline" if text == "\n" else text


_COMPOUND = {
    "if": _Parser.parse_if,
    "while": _Parser.parse_while,
    "until": _Parser.parse_while,
    "for": _Parser.parse_for,
    "select": _Parser.parse_for,
    "case": _Parser.parse_case,
    "{": _Parser.parse_group,
    "function": _Parser.parse_function,
    "[[": _Parser.parse_test,
}


def structure(text: str) -> tuple[list[Command], list[str]] | None:
    """(simple commands, list and pipe operators and compound words in order) of `text`,
    or None when it does not parse."""
    found: list[Command] = []
    parser = _Parser(text, found, 0)
    try:
        parser.parse_all()
    except TooComplex:
        raise
    except Exception:  # ParseError, RecursionError, or a parser bug: "cannot tell", never a crash
        return None
    return found, parser.ops
