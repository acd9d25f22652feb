"""The lexer of the guard's shell parser (hooks/shell.py): operators, redirections, words with
their quotes removed and flags saying what bash may still do to them, and here-doc bodies.
"""

from __future__ import annotations

from time import monotonic, process_time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    # ("op", op), ("redir", op, fd), ("word", text, quoted, flags) or ("eof",)
    Token = tuple[Any, ...]

EXPANDS = 1  # the word holds $var, ${…}, $(…), `…` or <(…): its value is known only at run time
GLOBS = 2  # the word holds an unquoted * ? [ or {: bash may turn it into other words
SPLITS = 4  # the word holds an unquoted expansion: bash may split it into several words

_META = " \t\n;&|()<>"
_OPERATORS = (";;&", "&>>", ";;", ";&", "&&", "||", "|&", "&>", ";", "&", "|", "(", ")")
_OPERATORS_BY_CHAR = {c: tuple(op for op in _OPERATORS if op[0] == c) for c in ";&|()"}
_REDIRECTS = ("<<<", "<<-", "<<", "<>", "<&", "<", ">>", ">|", ">&", ">")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
_ESCAPES.update({"e": "\x1b", "E": "\x1b", "\\": "\\", "'": "'", '"': '"', "?": "?"})
_EOF = ("eof",)


class ParseError(Exception):
    """The text is not a complete shell command (unterminated quote, stray `)`, …)."""


class TooComplex(Exception):
    """The guard's time budget ran out while judging: the call is denied "too complex to
    judge" (docs/design.md, "The guard": bounded, fail-closed time). Never a ParseError: a
    command that cannot be parsed is only unknown, one that cannot be judged in time is denied."""


_DEADLINE = [float("inf")] * 3  # wall-clock soft and hard limits, CPU limit; none outside a call
HARD = 4  # times the budget: the wall-clock limit on a machine too busy to give the guard CPU


def start_clock(seconds: float) -> None:
    """Judging from now on must end within `seconds` of CPU (of wall-clock time when the
    machine is idle), and within HARD times that of wall-clock time whatever the load, or
    check_clock raises TooComplex: far inside every client's hook timeout either way, while a
    command that takes the guard 0.2 s is not denied because other processes took the CPU."""
    now = monotonic()
    _DEADLINE[:] = [now + seconds, process_time() + seconds, now + HARD * seconds]


def stop_clock() -> None:
    _DEADLINE[:] = [float("inf")] * 3


def check_clock() -> None:
    """Called in every loop whose count grows with the input (tokens, nested texts, the
    commands judged, the directories `cd` reaches): each stretch between two calls is at most
    one linear scan, so the deadline is overrun by at most that much. The CPU clock (a system
    call) is read only once the wall-clock budget is spent."""
    now = monotonic()
    if now > _DEADLINE[0] and (now > _DEADLINE[2] or process_time() > _DEADLINE[1]):
        raise TooComplex("too complex to judge in time")


def is_name(name: str) -> bool:
    """A shell identifier: ASCII letters, digits and `_`, not starting with a digit."""
    if not name or name[0].isdigit():
        return False
    return all(c == "_" or ("a" <= c <= "z") or ("A" <= c <= "Z") or c.isdigit() for c in name)


class Lexer:
    """Tokens of one string, read on demand; the parser, a subclass, shares the position `i`."""

    def __init__(self, text: str) -> None:
        self.s, self.n, self.i = text, len(text), 0
        self.tok: Token | None = None
        self.heredocs: list[tuple[str, bool, bool]] = []
        self.want_delimiter: str | None = None

    def substitution(self, buf: list[str], start: int) -> int:
        """`$(…)`, `<(…)` or `>(…)`: commands, so the parser reads them."""
        raise NotImplementedError

    def nested(self, text: str, expansions_only: bool = False) -> None:
        """Text the parser reads as commands of its own (a here-doc body, `…`)."""
        raise NotImplementedError

    def note_arithmetic(self, text: str) -> None:
        """Arithmetic on names (`$((x))`, `${a[i]}`) and other expansions that evaluate a
        value (`${!x}`, `${x@P}`, `${x:n}`, `${x:=v}`): `a[$(cmd)]` inside that value runs cmd."""
        raise NotImplementedError

    # -- token helpers ---------------------------------------------------------------------

    def peek(self) -> Token:
        if self.tok is None:
            self.tok = self.lex()
        return self.tok

    def take(self) -> Token:
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
        word: str = tok[1]
        return word

    def words_until(self, closer: str, separator: str = "") -> list[str]:
        words: list[str] = []
        while True:
            tok = self.take()
            if tok[0] == "op" and tok[1] == closer:
                return words
            if tok[0] == "eof" or (tok[0] != "word" and tok[1] not in ("\n", separator)):
                raise ParseError(f"missing `{closer}`")
            if tok[0] == "word":
                words.append(tok[1])

    # -- lexer -----------------------------------------------------------------------------

    def lex(self) -> Token:
        check_clock()
        s, n = self.s, self.n
        while self.i < n:
            c = s[self.i]
            if c == " " or c == "\t":
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

    def lex_operator(self) -> Token:
        ahead = self.s[self.i : self.i + 3]
        for op in _OPERATORS_BY_CHAR[ahead[0]]:
            if ahead.startswith(op):
                self.i += len(op)
                return ("redir", op, None) if op[-1] == ">" else ("op", op)
        raise ParseError("unknown operator")  # unreachable: lex() only sends operator chars

    def lex_number(self) -> Token:
        j = self.i
        while j < self.n and "0" <= self.s[j] <= "9":
            j += 1
        if j < self.n and self.s[j] in "<>" and not self.s.startswith("(", j + 1):
            fd = self.s[self.i : j]
            self.i = j
            return self.lex_redirect(fd)
        return self.lex_word()

    def lex_redirect(self, fd: str | None) -> Token:
        for op in _REDIRECTS:
            if self.s.startswith(op, self.i):
                self.i += len(op)
                if op in ("<<", "<<-"):
                    self.want_delimiter = op
                return ("redir", op, fd)
        raise ParseError("unknown redirection")  # unreachable: called on `<` or `>`

    def lex_word(self) -> Token:
        s, n = self.s, self.n
        buf: list[str] = []
        quoted, flags = False, 0
        while self.i < n:
            c = s[self.i]
            if c in _META:
                if c == "(" and buf and buf[-1] in "?*+@!":
                    flags |= GLOBS | self.extglob(buf)
                    continue
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
            elif c == '"' or (c == "$" and s.startswith('"', self.i + 1)):
                quoted = True
                self.i += c == "$"  # `$"…"` (a locale's translation) reads as "…"
                flags |= self.double_quoted(buf)
            elif c == "$" and s.startswith("'", self.i + 1):
                quoted = True
                self.ansi_c(buf)
            elif c == "$" or c == "`":
                expands = self.dollar(buf) if c == "$" else self.backtick(buf)
                flags |= expands | (SPLITS if expands else 0)
            else:
                if c in "*?[{":
                    flags |= GLOBS
                buf.append(c)
                self.i += 1
        word = "".join(buf)
        if self.want_delimiter:
            self.heredocs.append((word, self.want_delimiter == "<<-", quoted))
            self.want_delimiter = None
        elif word[:1] == "{" and "[" in word and word[-1:] == "}" and self.at_redirect():
            self.note_arithmetic(word)  # `{a[x]}<f` stores the new fd in a[x]: x is evaluated
        return ("word", word, quoted, flags)

    def at_redirect(self) -> bool:
        return self.s[self.i : self.i + 1] in ("<", ">")

    def extglob(self, buf: list[str]) -> int:
        """`!(…)`, `@(…)`, `*(…)`…: with extglob on, a pattern up to its `)`, never `<<`."""
        s, depth, j = self.s, 0, self.i
        while j < self.n:
            c = s[j]
            if c == "\\":
                j += 2
                continue
            depth += c == "("
            depth -= c == ")"
            j += 1
            if depth == 0:
                break
        else:
            raise ParseError("unterminated extended glob")
        buf.append(s[self.i : j])
        self.nested(s[self.i + 1 : j - 1], expansions_only=True)
        self.i = j
        return EXPANDS if "$" in s[self.i : j] or "`" in s[self.i : j] else 0

    def double_quoted(self, buf: list[str]) -> int:
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

    def ansi_c(self, buf: list[str]) -> None:
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

    def dollar(self, buf: list[str]) -> int:
        check_clock()
        s, start = self.s, self.i
        nxt = s[start + 1 : start + 2]
        if nxt == "(":
            if not (s.startswith("(", start + 2) and self.arithmetic(start + 3)):
                self.substitution([], start + 2)
        elif nxt == "[":
            self.old_arithmetic(start + 2)
        elif nxt == "{":
            self.parameter(start + 2)
        elif nxt and (nxt in "@*#?$!-" or is_name(nxt) or nxt.isdigit()):
            self.i = start + 2
            if is_name(nxt):
                while self.i < self.n and is_name("a" + s[self.i]):
                    self.i += 1
        else:
            buf.append("$")
            self.i += 1
            return 0
        buf.append(s[start : self.i])
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
                    self.arithmetic_text(s[start:j])
                    self.i = j + 2
                    return True
                else:
                    return False
        return False

    def old_arithmetic(self, start: int) -> None:
        """`$[ … ]`, bash's old arithmetic: to the matching `]`, never a `<<` here-doc."""
        s, depth = self.s, 0
        for j in range(start, self.n):
            if s[j] == "[":
                depth += 1
            elif s[j] == "]":
                if not depth:
                    self.i = j + 1
                    self.arithmetic_text(s[start:j])
                    return
                depth -= 1
        raise ParseError("unterminated $[")

    def arithmetic_text(self, text: str) -> None:
        self.nested(text, expansions_only=True)
        if any(c.isalpha() or c == "_" or c == "$" for c in text):
            self.note_arithmetic(text)

    def parameter(self, start: int) -> None:
        """`${…}`: skipped to its `}`, but a `$(…)` inside (`${x:-$(cmd)}`) still counts."""
        s, n = self.s, self.n
        self.i = start
        while self.i < n:
            c = s[self.i]
            if c == "}":
                self.i += 1
                if _evaluates(s[start : self.i - 1]):
                    self.note_arithmetic(s[start - 2 : self.i])
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

    def backtick(self, buf: list[str]) -> int:
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
        for delimiter, strip_tabs, quoted in pending:
            check_clock()
            start = self.i
            end, self.i = _heredoc_end(self.s, start, delimiter, strip_tabs)
            if not quoted:
                self.nested(self.s[start:end], expansions_only=True)


def _heredoc_end(s: str, start: int, delimiter: str, strip_tabs: bool) -> tuple[int, int]:
    """(where the body ends, where the text after the here-doc starts) for a body from
    `start`: up to the first line that is the delimiter (after leading tabs with `<<-`), else
    the end. Searched with str.find, each character looked at once, not line by line in
    Python: a 200,000-line diff fed to `plan` is read well inside the guard's deadline."""
    n = len(s)
    if "\n" in delimiter:
        return n, n  # no line equals it: the rest of the text is the body
    pos, line, seen = start, -1, start  # `line`: where the line holding `seen` starts
    first = start  # where that line's text starts, after its leading tabs with `<<-`
    while True:
        check_clock()
        j = s.find(delimiter, pos) if delimiter else s.find("\n", pos)
        if j < 0:
            return n, n
        newline = s.rfind("\n", seen, j)
        if newline >= 0 or line < 0:
            line = newline + 1 if newline >= 0 else start
            first = line
            while strip_tabs and first < j and s[first] == "\t":
                first += 1
        seen = j
        after = j + len(delimiter)
        if (first == j or line == j) and (after == n or s[after] == "\n"):
            return max(line - 1, start), min(after + 1, n)
        seen = s.find("\n", j) if delimiter else j  # no later match on this line: the next
        if seen < 0:
            return n, n
        pos = seen + 1


def _evaluates(body: str) -> bool:
    """Whether `${body}` evaluates a value as code or assigns: a subscript, `!` indirection,
    an `@` transformation (`@P` expands a prompt), a substring's arithmetic offset, `:=`."""
    if "[" in body or (body.startswith("!") and body != "!"):
        return True
    j = 1 if body[:1] in "#" and len(body) > 1 else 0
    if j < len(body) and body[j] in "@*#?$!-0123456789":
        j += 1
    else:
        while j < len(body) and (body[j] == "_" or body[j].isalnum()):
            j += 1
    rest = body[j:]
    return rest[:1] in ("@", "=") or (rest[:1] == ":" and rest[1:2] not in ("-", "?", "+"))


def _decode_escape(s: str, j: int, buf: list[str]) -> int:
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
