"""Render prompt templates natively for the Jinja2 subset they use; anything else goes to jinja2.
Why: importing jinja2 costs ~6x `python -c pass` (76 vs 13 ms); this module + a render, ~1.2x."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing costs milliseconds to import; mypy treats this name as True
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    import jinja2


class TemplateError(Exception):
    """A bad template or a failed render; the message starts with `template-name:line:`."""


class Unsupported(Exception):
    """Internal: the template (or one it includes) needs real jinja2; render() falls back."""


class _UndefinedError(Exception):
    """What using an undefined value raises, before render() adds the template and line."""


class _Undefined:
    """jinja2's StrictUndefined: every use raises, except `is defined`, `is none` and `default`."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message

    def _fail(self, *args: object) -> Any:
        raise _UndefinedError(self.message)

    def __getattr__(self, name: str) -> Any:
        if name[:2] == "__" and name[-2:] == "__":
            raise AttributeError(name)  # Python probing an optional protocol, as in jinja2
        return self._fail()

    def __repr__(self) -> str:
        return "Undefined"

    __str__ = __bool__ = __len__ = __iter__ = __contains__ = __hash__ = _fail
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __neg__ = __pos__ = _fail
    __getitem__ = __call__ = __int__ = __float__ = _fail


def _undefined_attribute(obj: Any, name: Any) -> _Undefined:
    """The undefined value jinja2 returns for a missing `obj.name` or `obj[name]`."""
    kind = "None" if obj is None else f"{type(obj).__name__} object"
    if isinstance(name, str):
        return _Undefined(f"{kind!r} has no attribute {name!r}")
    return _Undefined(f"{kind} has no element {name!r}")


def _getattr(obj: Any, name: str) -> Any:
    """`obj.name`: the attribute if there is one, else the item (jinja2's Environment.getattr)."""
    try:
        return getattr(obj, name)
    except AttributeError:
        pass
    try:
        return obj[name]
    except (TypeError, LookupError, AttributeError):
        return _undefined_attribute(obj, name)


def _getitem(obj: Any, key: Any) -> Any:
    """`obj[key]`: the item if there is one, else the attribute (jinja2's Environment.getitem)."""
    try:
        return obj[key]
    except (AttributeError, TypeError, LookupError):
        if isinstance(key, str):
            try:
                return getattr(obj, key)
            except AttributeError:
                pass
        return _undefined_attribute(obj, key)


# Filters, each a copy of jinja2 3.1's (autoescape off): name -> (function, min args, max args).
def _soft_str(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _default(value: Any, default: Any = "", boolean: Any = False) -> Any:
    return default if isinstance(value, _Undefined) or (boolean and not value) else value


def _replace(s: Any, old: Any, new: Any, count: Any = None) -> str:
    return str(s).replace(str(old), str(new), -1 if count is None else count)


def _first(seq: Any) -> Any:
    for item in seq:
        return item
    return _Undefined("No first item, sequence was empty.")


def _last(seq: Any) -> Any:
    for item in reversed(seq):
        return item
    return _Undefined("No last item, sequence was empty.")


def _sort(value: Any, reverse: bool = False, case_sensitive: bool = False) -> list[Any]:
    def key(item: Any) -> list[Any]:  # a one-item list, exactly like jinja2's attrgetter
        return [item if case_sensitive or not isinstance(item, str) else item.lower()]

    return sorted(value, key=key, reverse=reverse)


def _int(value: Any, default: Any = 0, base: Any = 10) -> Any:
    try:
        return int(value, base) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        try:
            return int(float(value))
        except (TypeError, ValueError, OverflowError):
            return default


def _indent(s: Any, width: Any = 4, first: Any = False, blank: Any = False) -> str:
    indention = width if isinstance(width, str) else " " * width
    s += "\n"  # the quirk jinja2 needs for splitlines
    if blank:
        rv = ("\n" + indention).join(s.splitlines())
    else:
        lines = s.splitlines()
        rv = lines.pop(0)
        if lines:
            rv += "\n" + "\n".join(indention + line if line else line for line in lines)
    return indention + rv if first else rv


_SHELL_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")


def _quote(s: Any) -> Any:
    """shlex.quote, without importing shlex (and its re) on the hot path."""
    if not s:
        return "''"
    if not isinstance(s, str):
        raise TypeError(f"expected string or bytes-like object, got {type(s).__name__!r}")
    if all(c in _SHELL_SAFE for c in s):
        return s
    return "'" + s.replace("'", "'\"'\"'") + "'"


_FILTERS: dict[str, tuple[Callable[..., Any], int, int]] = {
    "length": (len, 0, 0),
    "count": (len, 0, 0),
    "join": (lambda value, d="": str(d).join(map(str, value)), 0, 1),
    "default": (_default, 0, 2),
    "upper": (lambda s: _soft_str(s).upper(), 0, 0),
    "lower": (lambda s: _soft_str(s).lower(), 0, 0),
    "trim": (lambda s, chars=None: _soft_str(s).strip(chars), 0, 1),
    "first": (_first, 0, 0),
    "last": (_last, 0, 0),
    "sort": (_sort, 0, 2),
    "list": (list, 0, 0),
    "string": (_soft_str, 0, 0),
    "int": (_int, 0, 2),
    "replace": (_replace, 2, 3),
    "indent": (_indent, 0, 3),
    "quote": (_quote, 0, 0),
}
_FILTERS["d"] = _FILTERS["default"]
_TESTS: dict[str, Callable[[Any], bool]] = {
    "defined": lambda v: not isinstance(v, _Undefined),
    "undefined": lambda v: isinstance(v, _Undefined),
    "none": lambda v: v is None,
}
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    ">": lambda a, b: a > b,
    "<=": lambda a, b: a <= b,
    ">=": lambda a, b: a >= b,
    "in": lambda a, b: a in b,
    "not in": lambda a, b: a not in b,
}
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
        node, ops = self.math(), []  # type: tuple[Any, ...], list[tuple[Callable[..., Any], Any]]
        while True:
            kind, value = self.peek()
            if (kind == "op" and value in _COMPARE) or (kind, value) == ("name", "in"):
                self.i += 1
            elif (kind, value) == ("name", "not") and self.peek(1) == ("name", "in"):
                self.i, value = self.i + 2, "not in"
            else:
                return ("compare", node, ops) if ops else node
            ops.append((_COMPARE[value], self.math()))

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
                function, least, most = _FILTERS.get(name, (None, 0, -1))
                if function is None or not least <= len(args) <= most:
                    raise Unsupported(f"filter {name!r} with {len(args)} arguments")
                node = ("filter", function, node, args)
            elif self.skip("name", "is"):
                negated = self.skip("name", "not")
                name = self.need("name")
                kind, value = self.peek()
                takes_argument = kind in ("name", "str", "int") or value in ("(", "[", ".")
                if name not in _TESTS or (takes_argument and value not in ("else", "or", "and")):
                    raise Unsupported(f"test {name!r}")
                node = ("test", _TESTS[name], node)
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


def _eval(node: tuple[Any, ...], scope: dict[str, Any]) -> Any:
    """The value of an expression node, computed with the Python operations jinja2 compiles to."""
    kind = node[0]
    if kind == "const":
        return node[1]
    if kind == "name":
        value = scope.get(node[1], _Undefined)
        return _Undefined(f"{node[1]!r} is undefined") if value is _Undefined else value
    if kind == "attr":
        return _getattr(_eval(node[1], scope), node[2])
    if kind == "item":
        return _getitem(_eval(node[1], scope), _eval(node[2], scope))
    if kind == "filter":
        return node[1](_eval(node[2], scope), *[_eval(arg, scope) for arg in node[3]])
    if kind == "test":
        return node[1](_eval(node[2], scope))
    if kind == "loop":
        index0, length = scope[" loop"]
        return {"index": index0 + 1, "index0": index0, "revindex": length - index0,
                "revindex0": length - index0 - 1, "first": index0 == 0,
                "last": index0 == length - 1, "length": length}[node[1]]  # fmt: skip
    if kind == "concat":
        return "".join([str(_eval(part, scope)) for part in node[1]])
    if kind == "compare":  # chained like Python: a < b < c
        left = _eval(node[1], scope)
        for compare, operand in node[2]:
            right = _eval(operand, scope)
            result = compare(left, right)
            if not result:
                return result
            left = right
        return result
    if kind == "not":
        return not _eval(node[1], scope)
    if kind == "and":
        return _eval(node[1], scope) and _eval(node[2], scope)
    if kind == "or":
        return _eval(node[1], scope) or _eval(node[2], scope)
    if kind == "cond":
        return _eval(node[2], scope) if _eval(node[1], scope) else _eval(node[3], scope)
    if kind == "+":
        return _eval(node[1], scope) + _eval(node[2], scope)
    if kind == "-":
        return _eval(node[1], scope) - _eval(node[2], scope)
    if kind == "neg":
        return -_eval(node[1], scope)
    if kind == "pos":
        return +_eval(node[1], scope)
    if kind == "list":
        return [_eval(item, scope) for item in node[1]]
    assert kind == "call"
    return _getattr(_eval(node[1], scope), node[2])()


_cache: dict[str, tuple[str, list[Any]] | None] = {}  # resolved path -> (name, body) or None


def _load(name: str, search_path: Sequence[str]) -> tuple[str, list[Any]]:
    """The parsed template `name`, found like jinja2's FileSystemLoader does; Unsupported if not."""
    pieces = [piece for piece in name.split("/") if piece not in ("", ".")]
    if any(piece == ".." or os.sep in piece for piece in pieces):
        raise Unsupported("path outside the search path")
    for directory in search_path:
        path = os.path.join(directory, *pieces)
        if os.path.isfile(path):
            break
    else:
        raise Unsupported(f"{name} not found")  # jinja2 reports it
    path = os.path.normpath(path)
    if path not in _cache:
        with open(path, encoding="utf-8") as f:
            source = f.read()
        try:
            _cache[path] = (name, _Parser(source).body((), False)[0])
        except Unsupported:
            _cache[path] = None
    template = _cache[path]
    if template is None:
        raise Unsupported(name)
    return template


class _Renderer:
    """Runs parsed statements, collecting output; scopes are dicts, copied where jinja2 scopes."""

    def __init__(self, search_path: Sequence[str]) -> None:
        self.search_path = search_path
        self.out: list[str] = []

    def run(self, name: str, nodes: list[Any], scope: dict[str, Any]) -> None:
        for node in nodes:
            kind, line = node[0], node[-1]
            if kind == "text":
                self.out.append(node[1])
                continue
            try:
                if kind == "out":
                    self.out.append(str(_eval(node[1], scope)))
                elif kind == "if":
                    for test, body, line in node[1]:  # noqa: B007 - line is reported on error
                        if _eval(test, scope):
                            self.run(name, body, scope)
                            break
                    else:
                        self.run(name, node[2], scope)
                elif kind == "for":
                    self.run_for(name, node, scope)
                elif kind == "set":
                    scope[node[1]] = _eval(node[2], scope)
                else:  # include: sees a copy of the scope, where " loop" has no spelling
                    child_name, body = _load(node[1], self.search_path)
                    self.run(child_name, body, dict(scope))
            except (Unsupported, TemplateError):
                raise
            except Exception as e:
                message = str(e) if isinstance(e, _UndefinedError) else f"{type(e).__name__}: {e}"
                raise TemplateError(f"{name}:{line}: {message}") from e

    def run_for(self, name: str, node: tuple[Any, ...], scope: dict[str, Any]) -> None:
        _, names, iterable, body, otherwise, _ = node
        items = list(_eval(iterable, scope))
        for index0, item in enumerate(items):
            inner = dict(scope)  # each iteration starts from the enclosing scope, as in jinja2
            if len(names) == 1:
                inner[names[0]] = item
            else:  # `for a, b in pairs`: a wrong count raises, like Python unpacking
                inner.update(zip(names, item, strict=True))
            inner[" loop"] = (index0, len(items))
            self.run(name, body, inner)
        if not items:
            self.run(name, otherwise, dict(scope))


def render(name: str, context: dict[str, Any], search_path: Sequence[str]) -> str:
    """Render template `name` (found in search_path) exactly as jinja_environment() would."""
    try:
        template_name, body = _load(name, search_path)
        renderer = _Renderer(search_path)
        renderer.run(template_name, body, dict(context))
        return "".join(renderer.out)
    except Unsupported:
        return render_with_jinja(name, context, search_path)
    except OSError as e:
        raise TemplateError(f"{name}: {e}") from e


def jinja_environment(search_path: Sequence[str]) -> jinja2.Environment:
    """The jinja2 Environment whose output render() reproduces."""
    import shlex

    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(list(search_path)),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
    )
    env.filters["quote"] = shlex.quote
    return env


_environments: dict[tuple[str, ...], jinja2.Environment] = {}


def render_with_jinja(name: str, context: dict[str, Any], search_path: Sequence[str]) -> str:
    """Render through real jinja2 (the fallback), turning every failure into a TemplateError."""
    import jinja2

    key = tuple(search_path)
    if key not in _environments:
        _environments[key] = jinja_environment(key)
    try:
        return _environments[key].get_template(name).render(context)
    except jinja2.TemplateSyntaxError as e:
        raise TemplateError(f"{e.name or name}:{e.lineno}: {e.message}") from e
    except Exception as e:
        where, tb = name, e.__traceback__
        while tb is not None:  # jinja2 rewrites tracebacks so template frames carry file and line
            frame_globals = tb.tb_frame.f_globals
            if "__jinja_exception__" in frame_globals:
                where = f"{_template_name(frame_globals['__file__'], key)}:{tb.tb_lineno}"
            tb = tb.tb_next
        if isinstance(e, jinja2.TemplateError):
            message = e.message or ""
        else:
            message = f"{type(e).__name__}: {e}"
        raise TemplateError(f"{where}: {message}") from e


def _template_name(path: str, search_path: Sequence[str]) -> str:
    for directory in search_path:
        relative = os.path.relpath(path, directory)
        if not relative.startswith(".."):
            return relative
    return path
