"""Prompts, role instructions and plan.md, rendered by jinja2: one configuration, strict about
undefined names, and every failure a TemplateError that names the template and line."""

from __future__ import annotations

import contextlib
import functools
import os
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

import jinja2


class TemplateError(Exception):
    """A bad template or a failed render; the message starts with `template-name:line:`."""


@functools.cache
def environment(search_path: tuple[str, ...]) -> jinja2.Environment:
    """The Environment for templates found in search_path (first match wins, as includes do)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(list(search_path)),
        trim_blocks=True,  # a line holding only a tag leaves no blank line behind
        lstrip_blocks=True,
        keep_trailing_newline=False,
        undefined=jinja2.StrictUndefined,  # a misspelt name fails instead of printing nothing
        autoescape=False,  # the output is plain text and shell commands, not HTML
        bytecode_cache=(
            CompiledTemplates(os.path.join(search_path[0], "__pycache__")) if search_path else None
        ),
    )
    env.filters["quote"] = shlex.quote
    env.filters["sentence"] = sentence
    env.globals["in_codex"] = in_codex
    return env


class CompiledTemplates(jinja2.FileSystemBytecodeCache):
    """Compiled templates kept in __pycache__ beside them, as Python keeps .pyc files: a step
    renders one to three templates and compiling them is about a third of its run. jinja2
    keys each by the template's source, so an edited one is compiled anew; a folder that
    cannot be written or read only loses the saving."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().load_bytecode(bucket)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            os.makedirs(self.directory, exist_ok=True)
            super().dump_bytecode(bucket)


def in_codex() -> bool:
    """Whether the step runs inside Codex, which sets CODEX_THREAD_ID for its commands and runs
    no sandbox: the prompts then say what works there (hooks/hookstate.py tells the status)."""
    return bool(os.environ.get("CODEX_THREAD_ID") or os.environ.get("CODEX_SESSION_ID"))


def sentence(text: Any) -> str:
    """The text as a sentence: a period added only when it has no closing punctuation, so
    "up to 1000." never becomes "1000.."."""
    line = str(text or "").strip()
    return line if not line or line[-1] in ".!?…:;" else line + "."


def render(name: str, context: Mapping[str, object], search_path: Sequence[str]) -> str:
    """Template `name`, found in search_path, rendered with context."""
    try:
        return environment(tuple(search_path)).get_template(name).render(context)
    except jinja2.TemplateSyntaxError as e:
        raise TemplateError(f"{e.name or name}:{e.lineno}: {e.message}") from e
    except Exception as e:
        raise TemplateError(f"{_where(e, name, search_path)}: {_message(e)}") from e


def _where(error: Exception, name: str, search_path: Sequence[str]) -> str:
    """`template:line` of the innermost template frame (jinja2 rewrites tracebacks so that
    template frames carry the template's file and line)."""
    where, tb = name, error.__traceback__
    while tb is not None:
        frame_globals = tb.tb_frame.f_globals
        if "__jinja_exception__" in frame_globals:
            where = f"{_template_name(frame_globals['__file__'], search_path)}:{tb.tb_lineno}"
        tb = tb.tb_next
    return where


def _message(error: Exception) -> str:
    if isinstance(error, jinja2.TemplateNotFound):
        return f"template {error.name} not found"
    if isinstance(error, jinja2.TemplateError):
        return error.message or ""
    return f"{type(error).__name__}: {error}"


def _template_name(path: str, search_path: Sequence[str]) -> str:
    for directory in search_path:
        relative = os.path.relpath(path, directory)
        if not relative.startswith(".."):
            return relative
    return path
