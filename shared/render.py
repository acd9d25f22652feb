"""Render prompt templates natively for the Jinja2 subset they use; anything else goes to jinja2.
Why: importing jinja2 costs ~6x `python -c pass` (76 vs 13 ms); these modules + a render, ~1.2x.
The subset's syntax is in template_syntax.py, what its values do in template_values.py."""

from __future__ import annotations

import os

from shared.template_syntax import Unsupported, parse
from shared.template_values import Undefined, UndefinedError, get_attribute, get_item

TYPE_CHECKING = False  # typing costs milliseconds to import; mypy treats this name as True
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    import jinja2


class TemplateError(Exception):
    """A bad template or a failed render; the message starts with `template-name:line:`."""


def _eval(node: tuple[Any, ...], scope: dict[str, Any]) -> Any:
    """The value of an expression node, computed with the Python operations jinja2 compiles to."""
    kind = node[0]
    if kind == "const":
        return node[1]
    if kind == "name":
        value = scope.get(node[1], Undefined)
        return Undefined(f"{node[1]!r} is undefined") if value is Undefined else value
    if kind == "attr":
        return get_attribute(_eval(node[1], scope), node[2])
    if kind == "item":
        return get_item(_eval(node[1], scope), _eval(node[2], scope))
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
    return get_attribute(_eval(node[1], scope), node[2])()


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
            _cache[path] = (name, parse(source))
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
                message = str(e) if isinstance(e, UndefinedError) else f"{type(e).__name__}: {e}"
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
