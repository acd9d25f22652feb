"""A POSIX-shell parser for the guard: every simple command in a string, wherever it hides.

Hand-written char by char, without re or shlex: the guard runs before every tool call and
those imports alone eat its time budget; shlex also knows nothing of $(…), here-docs or `|`.
"""

EXPANDS = 1  # the word holds $var, ${…}, $(…), `…` or <(…): its value is known only at run time
GLOBS = 2  # the word holds an unquoted * ? [ or {: bash may turn it into other words

MAX_NESTING = 50
_META = " \t\n;&|()<>"
_OPERATORS = (";;&", "&>>", ";;", ";&", "&&", "||", "|&", "&>", ";", "&", "|", "(", ")")
_REDIRECTS = ("<<<", "<<-", "<<", "<>", "<&", "<", ">>", ">|", ">&", ">")
_NOT_A_COMMAND = frozenset(("then", "elif", "else", "fi", "do", "done", "esac", "}", "in"))
_CASE_ENDS = (";;", ";&", ";;&")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
_ESCAPES.update({"e": "\x1b", "E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?"})
_EOF = ("eof",)


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

    def __init__(self, argv: list, flags: list, redirects: list, assignments: list) -> None:
        self.argv, self.flags, self.redirects, self.assignments = (
            argv,
            flags,
            redirects,
            assignments,
        )

    def __repr__(self) -> str:
        return f"Command({self.argv!r}, {self.redirects!r}, {self.assignments!r})"


class ParseError(Exception):
    """The text is not a complete shell command (unterminated quote, stray `)`, …)."""


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
    return _is_name(name)


def _is_name(name: str) -> bool:
    if not name or name[0].isdigit():
        return False
    return all(c == "_" or ("a" <= c <= "z") or ("A" <= c <= "Z") or c.isdigit() for c in name)


class _Parser:
    """Recursive descent over one string; lexing and parsing share the position `i`."""

    def __init__(self, text: str, found: list, depth: int) -> None:
        self.s, self.n, self.i = text, len(text), 0
        self.found, self.depth = found, depth
        self.tok: tuple | None = None
        self.heredocs: list[tuple[str, bool, bool]] = []
        self.want_delimiter: str | None = None

    # -- grammar ---------------------------------------------------------------------------

    def parse_all(self) -> None:
        self.parse_list((), ())
        tok = self.peek()
        if tok[0] != "eof":
            raise ParseError(f"unexpected `{_show(tok)}`")

    def parse_list(self, stop_ops: tuple, stop_words: tuple) -> None:
        while True:
            tok = self.peek()
            kind = tok[0]
            if kind == "eof":
                return
            if kind == "op":
                if tok[1] in stop_ops:
                    return
                if tok[1] in ("\n", ";", "&"):
                    self.take()
                    continue
            elif kind == "word" and not tok[2] and tok[1] in stop_words:
                return
            self.parse_and_or()

    def parse_and_or(self) -> None:
        self.parse_pipeline()
        while self.peek_op() in ("&&", "||"):
            self.take()
            self.skip_newlines()
            self.parse_pipeline()

    def parse_pipeline(self) -> None:
        if self.peek_word() == "!":
            self.take()
        self.parse_command()
        while self.peek_op() in ("|", "|&"):
            self.take()
            self.skip_newlines()
            self.parse_command()

    def parse_command(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise ParseError("nested too deeply")
        tok = self.peek()
        word = self.peek_word()
        if tok[0] == "op" and tok[1] == "(":
            self.parse_subshell()
        elif word in _COMPOUND:
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
                    self.words_until(")")
            else:
                self.take()
                argv.append(tok[1])
                flags.append(tok[3])
                if len(argv) == 1 and not redirects and self.peek_op() == "(":
                    return self.parse_function_body()
        if argv or redirects or assignments:
            self.found.append(Command(argv, flags, redirects, assignments))

    def redirect_target(self, tok: tuple) -> Redirect:
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
        elif self.take()[0] != "word":
            raise ParseError("`for` needs a variable name")
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

    # -- token helpers ---------------------------------------------------------------------

    def peek(self) -> tuple:
        if self.tok is None:
            self.tok = self.lex()
        return self.tok

    def take(self) -> tuple:
        tok = self.peek()
        self.tok = None
        return tok

    def peek_op(self) -> str | None:
        tok = self.peek()
        return tok[1] if tok[0] == "op" else None

    def peek_word(self) -> str | None:
        """The next token's text if it is an unquoted word (how reserved words are spotted)."""
        tok = self.peek()
        return tok[1] if tok[0] == "word" and not tok[2] else None

    def skip_newlines(self) -> None:
        while self.peek_op() == "\n":
            self.take()

    def expect_op(self, op: str) -> None:
        if self.take()[:2] != ("op", op):
            raise ParseError(f"missing `{op}`")

    def expect_word(self, *words: str) -> str:
        tok = self.take()
        if tok[0] != "word" or tok[2] or tok[1] not in words:
            raise ParseError(f"missing `{words[-1]}`")
        return tok[1]

    def words_until(self, closer: str, separator: str = "") -> None:
        while True:
            tok = self.take()
            if tok[0] == "op" and tok[1] == closer:
                return
            if tok[0] == "eof" or (tok[0] != "word" and tok[1] not in ("\n", separator)):
                raise ParseError(f"missing `{closer}`")

    # -- lexer -----------------------------------------------------------------------------

    def lex(self) -> tuple:
        s, n = self.s, self.n
        while self.i < n:
            c = s[self.i]
            if c in " \t":
                self.i += 1
            elif c == "\\" and s.startswith("\n", self.i + 1):
                self.i += 2
            elif c == "#":
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end
            elif c == "\n":
                self.i += 1
                self.read_heredocs()
                return ("op", "\n")
            elif c in "<>" and not s.startswith("(", self.i + 1):
                return self.lex_redirect(None)
            elif c in ";&|()":
                return self.lex_operator()
            elif "0" <= c <= "9":
                return self.lex_number()
            else:
                return self.lex_word()
        return _EOF

    def lex_operator(self) -> tuple:
        for op in _OPERATORS:
            if self.s.startswith(op, self.i):
                self.i += len(op)
                return ("redir", op, None) if op[-1] == ">" else ("op", op)
        raise ParseError("unknown operator")  # unreachable: lex() only sends operator chars

    def lex_number(self) -> tuple:
        j = self.i
        while j < self.n and "0" <= self.s[j] <= "9":
            j += 1
        if j < self.n and self.s[j] in "<>" and not self.s.startswith("(", j + 1):
            fd = self.s[self.i : j]
            self.i = j
            return self.lex_redirect(fd)
        return self.lex_word()

    def lex_redirect(self, fd: str | None) -> tuple:
        for op in _REDIRECTS:
            if self.s.startswith(op, self.i):
                self.i += len(op)
                if op in ("<<", "<<-"):
                    self.want_delimiter = op
                return ("redir", op, fd)
        raise ParseError("unknown redirection")  # unreachable: called on `<` or `>`

    def lex_word(self) -> tuple:
        s, n = self.s, self.n
        buf: list[str] = []
        quoted, flags = False, 0
        while self.i < n:
            c = s[self.i]
            if c in _META:
                if c not in "<>" or not s.startswith("(", self.i + 1):
                    break
                flags |= self.substitution(buf, self.i + 2)
            elif c == "\\":
                nxt = s[self.i + 1 : self.i + 2]
                if nxt != "\n":
                    quoted = True
                    buf.append(nxt or "\\")
                self.i += 2
            elif c == "'":
                quoted = True
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise ParseError("unterminated single quote")
                buf.append(s[self.i + 1 : end])
                self.i = end + 1
            elif c == '"':
                quoted = True
                flags |= self.double_quoted(buf)
            elif c == "$" and s.startswith("'", self.i + 1):
                quoted = True
                self.ansi_c(buf)
            elif c == "$" and s.startswith('"', self.i + 1):
                quoted = True
                self.i += 1
                flags |= self.double_quoted(buf)
            elif c == "$":
                flags |= self.dollar(buf)
            elif c == "`":
                flags |= self.backtick(buf)
            else:
                if c in "*?[{":
                    flags |= GLOBS
                buf.append(c)
                self.i += 1
        word = "".join(buf)
        if self.want_delimiter:
            self.heredocs.append((word, self.want_delimiter == "<<-", quoted))
            self.want_delimiter = None
        return ("word", word, quoted, flags)

    def double_quoted(self, buf: list) -> int:
        s, n = self.s, self.n
        flags = 0
        self.i += 1
        while self.i < n:
            c = s[self.i]
            if c == '"':
                self.i += 1
                return flags
            if c == "\\":
                nxt = s[self.i + 1 : self.i + 2]
                if nxt in ("$", "`", '"', "\\"):
                    buf.append(nxt)
                elif nxt != "\n":
                    buf.append("\\" + nxt)
                self.i += 2
            elif c == "$":
                flags |= self.dollar(buf)
            elif c == "`":
                flags |= self.backtick(buf)
            else:
                buf.append(c)
                self.i += 1
        raise ParseError("unterminated double quote")

    def ansi_c(self, buf: list) -> None:
        """`$'…'`: decode the escapes, so `$'\\x72m'` is seen as the `rm` it runs."""
        s, n = self.s, self.n
        j = self.i + 2
        while j < n:
            c = s[j]
            if c == "'":
                self.i = j + 1
                return
            if c == "\\" and j + 1 < n:
                j = _decode_escape(s, j + 1, buf)
            else:
                buf.append(c)
                j += 1
        raise ParseError("unterminated $'")

    def dollar(self, buf: list) -> int:
        s, start = self.s, self.i
        nxt = s[start + 1 : start + 2]
        if nxt == "(":
            if not (s.startswith("(", start + 2) and self.arithmetic(start + 3)):
                self.substitution([], start + 2)
        elif nxt == "{":
            self.parameter(start + 2)
        elif nxt and (nxt in "@*#?$!-" or _is_name(nxt) or nxt.isdigit()):
            self.i = start + 2
            if _is_name(nxt):
                while self.i < self.n and _is_name("a" + s[self.i]):
                    self.i += 1
        else:
            buf.append("$")
            self.i += 1
            return 0
        buf.append(s[start : self.i])
        return EXPANDS

    def substitution(self, buf: list, start: int) -> int:
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

    def arithmetic(self, start: int) -> bool:
        """`$(( … ))` or `(( … ))` from `start`; False when it is really `$( (…) … )`."""
        s, depth = self.s, 0
        for j in range(start, self.n):
            c = s[j]
            if c == "(":
                depth += 1
            elif c == ")":
                if depth:
                    depth -= 1
                elif s.startswith(")", j + 1):
                    self.nested(s[start:j], expansions_only=True)
                    self.i = j + 2
                    return True
                else:
                    return False
        return False

    def parameter(self, start: int) -> None:
        """`${…}`: skipped to its `}`, but a `$(…)` inside (`${x:-$(cmd)}`) still counts."""
        s, n = self.s, self.n
        self.i = start
        while self.i < n:
            c = s[self.i]
            if c == "}":
                self.i += 1
                return
            if c == "\\":
                self.i += 2
            elif c == "'":
                end = s.find("'", self.i + 1)
                if end < 0:
                    raise ParseError("unterminated single quote")
                self.i = end + 1
            elif c == '"':
                self.double_quoted([])
            elif c == "$":
                self.dollar([])
            elif c == "`":
                self.backtick([])
            else:
                self.i += 1
        raise ParseError("unterminated ${")

    def backtick(self, buf: list) -> int:
        s, n = self.s, self.n
        inner: list[str] = []
        j = self.i + 1
        while j < n:
            c = s[j]
            if c == "`":
                buf.append(s[self.i : j + 1])
                self.i = j + 1
                self.nested("".join(inner))
                return EXPANDS
            if c == "\\" and j + 1 < n:
                inner.append(s[j + 1] if s[j + 1] in "$`\\" else s[j : j + 2])
                j += 2
            else:
                inner.append(c)
                j += 1
        raise ParseError("unterminated backtick")

    def nested(self, text: str, expansions_only: bool = False) -> None:
        if self.depth + 1 > MAX_NESTING:
            raise ParseError("nested too deeply")
        inner = _Parser(text, self.found, self.depth + 1)
        if expansions_only:
            inner.scan_expansions()
        else:
            inner.parse_all()

    def scan_expansions(self) -> None:
        """Only the $(…), `…` and ${…} in text whose quotes mean nothing (here-docs, $((…)))."""
        s, n = self.s, self.n
        while self.i < n:
            c = s[self.i]
            if c == "\\":
                self.i += 2
            elif c == "$":
                self.dollar([])
            elif c == "`":
                self.backtick([])
            else:
                self.i += 1

    def read_heredocs(self) -> None:
        """After a newline: the bodies of pending `<<EOF`s are skipped, their $(…) are not."""
        pending, self.heredocs = self.heredocs, []
        s, n = self.s, self.n
        for delimiter, strip_tabs, quoted in pending:
            body = []
            while self.i < n:
                end = s.find("\n", self.i)
                end = n if end < 0 else end
                line = s[self.i : end]
                self.i = min(end + 1, n)
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                body.append(line)
            if not quoted:
                self.nested("\n".join(body), expansions_only=True)


def _decode_escape(s: str, j: int, buf: list) -> int:
    """Decode the `$'…'` escape whose letter is at s[j]; return the index after it."""
    e = s[j]
    if e in _ESCAPES:
        buf.append(_ESCAPES[e])
        return j + 1
    if e == "c" and j + 1 < len(s):
        buf.append(chr(ord(s[j + 1]) & 0x1F))
        return j + 2
    if e in "01234567":
        digits, base = _take_digits(s, j, 3, "01234567"), 8
    elif e in "xuU":
        width = {"x": 2, "u": 4, "U": 8}[e]
        digits, base = _take_digits(s, j + 1, width, "0123456789abcdefABCDEF"), 16
        j += 1
    else:
        buf.append("\\" + e)
        return j + 1
    if not digits:
        buf.append("\\" + e)
        return j
    code = int(digits, base)
    buf.append(chr(code) if code <= 0x10FFFF else "\ufffd")
    return j + len(digits)


def _take_digits(s: str, j: int, width: int, allowed: str) -> str:
    end = j
    while end < len(s) and end - j < width and s[end] in allowed:
        end += 1
    return s[j:end]


def _show(tok: tuple) -> str:
    if tok[0] == "eof":
        return "end of input"
    if tok[0] == "redir":
        return (tok[2] or "") + tok[1]
    return "newline" if tok[1] == "\n" else tok[1]


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
