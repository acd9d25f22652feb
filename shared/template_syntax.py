"""The Jinja2 subset shared/render.py runs, parsed into nodes: text, {{ }}, if, for, set and
include, with jinja2's whitespace rules; anything else raises Unsupported (render() then falls
back to jinja2).
"""

from __future__ import annotations

from shared.template_values import COMPARE, FILTERS, TESTS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class Unsupported(Exception):
    """The template (or one it includes) needs real jinja2."""


def parse(source: str) -> list[Any]:
    """The nodes of a template's source; Unsupported outside the subset."""
    return _Parser(source).body((), False)[0]


_CONSTANTS = {
    "true": True,
    "false": False,
    "none": None,
    "True": True,
    "False": False,
    "None": None,
}
# Keywords, and names jinja2 binds itself (globals, `self`): leave them to jinja2.
_KEYWORDS = ["and", "or", "not", "in", "is", "if", "else"]
_RESERVED = frozenset(
    [*_KEYWORDS, "self", "range", "dict", "lipsum", "cycler", "joiner", "namespace"]
)
_LOOP_ATTRS = frozenset(["index", "index0", "revindex", "revindex0", "first", "last", "length"])
_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_NAME_CHARS = _NAME_START | frozenset("0123456789")
_OPERATORS = ("//", "**", "==", "!=", ">=", "<=", *"+-/*%~[]().:|,;=<>")


def _lex(src: str) -> list[tuple[Any, ...]]:
    """Split a template into ("text", s), ("out", tokens, line) and ("tag", tokens, line).

    A transcription of jinja2's lexer with trim_blocks, lstrip_blocks, keep_trailing_newline off.
    """
    src = src.replace("\r\n", "\n").replace("\r", "\n")
    src = src[:-1] if src.endswith("\n") else src
    items: list[tuple[Any, ...]] = []
    pos, n, line, line_starting = 0, len(src), 1, True
    while True:
        i = src.find("{", pos)
        while i != -1 and src[i + 1 : i + 2] not in ("{", "%", "#"):
            i = src.find("{", i + 1)
        if i == -1:
            if pos < n:
                items.append(("text", src[pos:]))
            return items
        kind = src[i + 1]
        sign = src[i + 2] if src[i + 2 : i + 3] in ("-", "+") else ""
        text = src[pos:i]
        if sign == "-":
            text = text.rstrip()
        elif sign == "" and kind != "{":  # lstrip_blocks: blocks and comments, not {{ }}
            start = text.rfind("\n") + 1
            if (start or line_starting) and text[start:].isspace():
                text = text[:start]
        if text:
            items.append(("text", text))
        line += src.count("\n", pos, i)
        pos = i + 2 + len(sign)
        if kind == "#":
            end = src.find("#}", pos)
            if end == -1:
                raise Unsupported("unclosed comment")
            marker = src[end - 1] if end > pos and src[end - 1] in "-+" else ""
            toks, p = None, end + 2
        else:
            toks, p, marker = _lex_tag(src, pos, "}}" if kind == "{" else "%}")
        if marker == "-":
            while p < n and src[p].isspace():
                p += 1
        elif marker == "" and kind != "{" and src[p : p + 1] == "\n":  # trim_blocks
            p += 1
        line_starting = src[p - 1] == "\n"
        if toks is not None:
            items.append(("out" if kind == "{" else "tag", toks, line))
        line += src.count("\n", i, p)
        pos = p


def _lex_tag(src: str, p: int, end: str) -> tuple[list[tuple[str, Any]], int, str]:
    """Tokens of one {{ }} or {% %} from p; returns them, the position after the end, the marker."""
    toks: list[tuple[str, Any]] = []
    brackets: list[str] = []
    while p < len(src):
        if not brackets:
            if src.startswith("-" + end, p):
                return toks, p + 3, "-"
            if end == "%}" and src.startswith("+%}", p):
                return toks, p + 3, "+"
            if src.startswith(end, p):
                return toks, p + 2, ""
        c = src[p]
        q = p + 1
        if c.isspace():
            p = q
            continue
        if c in _NAME_CHARS:
            while q < len(src) and src[q] in _NAME_CHARS:
                q += 1
            word = src[p:q]
            if c in _NAME_START:
                toks.append(("name", word))
            elif word.isdigit() and (word[0] != "0" or word == "0") and src[q : q + 1] != ".":
                toks.append(("int", int(word)))
            else:
                raise Unsupported(f"number {word!r}")
        elif c in "'\"":
            while q < len(src) and src[q] != c:
                q += 2 if src[q] == "\\" else 1
            if q >= len(src):
                raise Unsupported("unclosed string")
            try:
                text = src[p + 1 : q].encode("ascii", "backslashreplace").decode("unicode-escape")
            except UnicodeDecodeError as e:
                raise Unsupported("bad escape") from e
            toks.append(("str", text))
            q += 1
        else:
            op = src[p : p + 2] if src[p : p + 2] in _OPERATORS else c
            if op not in _OPERATORS:
                raise Unsupported(f"character {c!r}")
            if op in "([":
                brackets.append(")" if op == "(" else "]")
            elif op in ")]" and (not brackets or brackets.pop() != op):
                raise Unsupported("unbalanced brackets")
            toks.append(("op", op))
            q = p + len(op)
        p = q
    raise Unsupported("unclosed tag")


class _ExprParser:
    """Recursive descent over one tag's tokens, with jinja2's precedence (parser.py)."""

    def __init__(self, toks: list[tuple[str, Any]], in_loop: bool) -> None:
        self.toks, self.i, self.in_loop = toks, 0, in_loop

    def peek(self, ahead: int = 0) -> tuple[str, Any]:
        j = self.i + ahead
        return self.toks[j] if j < len(self.toks) else ("end", None)

    def take(self) -> tuple[str, Any]:
        tok = self.peek()
        self.i += 1
        return tok

    def skip(self, kind: str, value: Any) -> bool:
        if self.peek() == (kind, value):
            self.i += 1
            return True
        return False

    def need(self, kind: str, value: Any = None) -> Any:
        tok = self.take()
        if tok[0] != kind or (value is not None and tok[1] != value):
            raise Unsupported(f"expected {value or kind}, got {tok[1]!r}")
        return tok[1]

    def done(self) -> None:
        if self.i != len(self.toks):
            raise Unsupported(f"unexpected {self.peek()[1]!r}")

    def target(self) -> str:
        name = self.need("name")
        if name in _RESERVED or name in _CONSTANTS or name == "loop":
            raise Unsupported(f"assignment to {name!r}")
        return name

    def expression(self, with_condexpr: bool = True) -> tuple[Any, ...]:
        node = self.binary("or")
        while with_condexpr and self.skip("name", "if"):
            test = self.binary("or")
            if not self.skip("name", "else"):
                raise Unsupported("if without else")
            node = ("cond", test, node, self.expression())
        return node

    def binary(self, op: str) -> tuple[Any, ...]:
        operand = (lambda: self.binary("and")) if op == "or" else self.negation
        node = operand()
        while self.skip("name", op):
            node = (op, node, operand())
        return node

    def negation(self) -> tuple[Any, ...]:
        return ("not", self.negation()) if self.skip("name", "not") else self.compare()

    def compare(self) -> tuple[Any, ...]:
        node: tuple[Any, ...] = self.math()
        ops: list[tuple[Callable[..., Any], Any]] = []
        while True:
            kind, value = self.peek()
            if (kind == "op" and value in COMPARE) or (kind, value) == ("name", "in"):
                self.i += 1
            elif (kind, value) == ("name", "not") and self.peek(1) == ("name", "in"):
                self.i, value = self.i + 2, "not in"
            else:
                return ("compare", node, ops) if ops else node
            ops.append((COMPARE[value], self.math()))

    def math(self) -> tuple[Any, ...]:
        node = self.concat()
        while self.peek() in (("op", "+"), ("op", "-")):
            node = (self.take()[1], node, self.concat())
        return node

    def concat(self) -> tuple[Any, ...]:
        parts = [self.unary()]
        while self.skip("op", "~"):
            parts.append(self.unary())
        return ("concat", parts) if len(parts) > 1 else parts[0]

    def unary(self, with_filter: bool = True) -> tuple[Any, ...]:
        if self.peek() in (("op", "-"), ("op", "+")):
            node = ("neg" if self.take()[1] == "-" else "pos", self.unary(False))
        else:
            node = self.primary()
        node = self.postfix(node)
        return self.filters(node) if with_filter else node

    def primary(self) -> tuple[Any, ...]:
        kind, value = self.take()
        if kind == "name" and value in _CONSTANTS:
            return ("const", _CONSTANTS[value])
        if kind == "name" and value == "loop" and self.in_loop:
            attr = self.peek() if self.skip("op", ".") else ("end", None)
            if attr[0] != "name" or attr[1] not in _LOOP_ATTRS:
                raise Unsupported("loop used other than as loop.index and friends")
            return ("loop", self.take()[1])
        if kind == "name" and value not in _RESERVED:
            return ("name", value)
        if kind == "str":
            while self.peek()[0] == "str":  # "a" "b" is "ab", as in jinja2
                value += self.take()[1]
            return ("const", value)
        if kind == "int":
            return ("const", value)
        if (kind, value) == ("op", "("):
            node = self.expression()
            self.need("op", ")")
            return node
        if (kind, value) == ("op", "["):
            items: list[tuple[Any, ...]] = []
            while self.peek() != ("op", "]"):
                if items:
                    self.need("op", ",")
                    if self.peek() == ("op", "]"):
                        break
                items.append(self.expression())
            self.i += 1
            return ("list", items)
        raise Unsupported(f"unexpected {value!r}")

    def postfix(self, node: tuple[Any, ...]) -> tuple[Any, ...]:
        while True:
            if self.skip("op", "."):
                name = self.need("name")
                if self.peek() == ("op", "("):
                    if name not in ("items", "keys", "values") or self.peek(1) != ("op", ")"):
                        raise Unsupported(f"call of {name!r}")
                    self.i += 2
                    node = ("call", node, name)
                else:
                    node = ("attr", node, name)
            elif self.skip("op", "["):
                node = ("item", node, self.expression())
                self.need("op", "]")
            elif self.peek() == ("op", "("):
                raise Unsupported("call")
            else:
                return node

    def filters(self, node: tuple[Any, ...]) -> tuple[Any, ...]:
        while True:
            if self.skip("op", "|"):
                name = self.need("name")
                args: list[tuple[Any, ...]] = []
                if self.skip("op", "("):
                    while self.peek() != ("op", ")"):
                        if args:
                            self.need("op", ",")
                            if self.peek() == ("op", ")"):
                                break
                        if self.peek()[0] == "name" and self.peek(1) == ("op", "="):
                            raise Unsupported("keyword argument")
                        args.append(self.expression())
                    self.i += 1
                function, least, most = FILTERS.get(name, (None, 0, -1))
                if function is None or not least <= len(args) <= most:
                    raise Unsupported(f"filter {name!r} with {len(args)} arguments")
                node = ("filter", function, node, args)
            elif self.skip("name", "is"):
                negated = self.skip("name", "not")
                name = self.need("name")
                kind, value = self.peek()
                takes_argument = kind in ("name", "str", "int") or value in ("(", "[", ".")
                if name not in TESTS or (takes_argument and value not in ("else", "or", "and")):
                    raise Unsupported(f"test {name!r}")
                node = ("test", TESTS[name], node)
                node = ("not", node) if negated else node
            elif self.peek() == ("op", "("):
                raise Unsupported("call")
            else:
                return node


class _Parser:
    """Statements: text, {{ }}, if/elif/else, for/else, set, include; the rest is Unsupported."""

    def __init__(self, source: str) -> None:
        self.items, self.i = _lex(source), 0
        # Per scope (template, loop body, loop else): names its loops used so far, names it sets.
        self.scopes: list[tuple[set[str], set[str]]] = [(set(), set())]

    def body(self, ends: tuple[str, ...], in_loop: bool) -> tuple[list[Any], str, _ExprParser]:
        nodes: list[Any] = []
        while self.i < len(self.items):
            kind, *rest = self.items[self.i]
            self.i += 1
            if kind == "text":
                nodes.append(("text", rest[0]))
                continue
            expr = _ExprParser(rest[0], in_loop)
            if kind == "out":
                nodes.append(("out", expr.expression(), rest[1]))
                expr.done()
                continue
            word = expr.need("name")
            if word in ends:
                return nodes, word, expr
            nodes.append(self.statement(word, expr, in_loop, rest[1]))
        if ends:
            raise Unsupported(f"missing {ends[-1]}")
        return nodes, "", _ExprParser([], in_loop)

    def statement(self, word: str, expr: _ExprParser, in_loop: bool, line: int) -> tuple[Any, ...]:
        if word == "if":
            branches, end, first_line = [], "elif", line
            while end == "elif":
                test = expr.expression(with_condexpr=False)
                expr.done()
                body, end, next_expr = self.body(("elif", "else", "endif"), in_loop)
                branches.append((test, body, line))
                expr, line = next_expr, self.items[self.i - 1][-1]
            expr.done()
            otherwise = self.closed(("endif",), in_loop) if end == "else" else []
            return ("if", branches, otherwise, first_line)
        if word == "for":
            names = [expr.target()]
            while expr.skip("op", ","):
                names.append(expr.target())
            expr.need("name", "in")
            iterable = expr.expression(with_condexpr=False)
            expr.done()
            body, end = self.loop_scope(("endfor", "else"), True)
            otherwise = self.loop_scope(("endfor",), in_loop)[0] if end == "else" else []
            return ("for", names, iterable, body, otherwise, line)
        if word == "set":
            name = expr.target()
            used_in_loops, assigned = self.scopes[-1]
            if name in used_in_loops and name not in assigned:
                # jinja2 decides scopes statically: a loop before the first `set` of a name in
                # the same scope sees it undefined, not the outer value. Rare; leave it to jinja2.
                raise Unsupported(f"{name!r} used in a loop before its first set")
            assigned.add(name)
            expr.need("op", "=")
            value = expr.expression()
            expr.done()
            return ("set", name, value, line)
        if word == "include":
            template = expr.expression()
            expr.done()
            if template[0] != "const" or not isinstance(template[1], str):
                raise Unsupported("include of a non-literal")
            return ("include", template[1], line)
        raise Unsupported(f"tag {word!r}")

    def closed(self, ends: tuple[str, ...], in_loop: bool) -> list[Any]:
        body, _, end_expr = self.body(ends, in_loop)
        end_expr.done()
        return body

    def loop_scope(self, ends: tuple[str, ...], in_loop: bool) -> tuple[list[Any], str]:
        """A loop's body or else: a scope of its own, whose names count as used in loops above."""
        self.scopes.append((set(), set()))
        body, end, end_expr = self.body(ends, in_loop)
        end_expr.done()
        self.scopes.pop()
        _names_in(body, self.scopes[-1][0])
        return body, end


def _names_in(nodes: Any, found: set[str]) -> None:
    """Add every variable name the parsed nodes read to found."""
    if isinstance(nodes, tuple) and nodes and nodes[0] == "name":
        found.add(nodes[1])
    if isinstance(nodes, tuple | list):
        for node in nodes:
            _names_in(node, found)
