"""shared.render against real jinja2 (the oracle): a hand-written table, hypothesis-made templates,
the fallback for everything outside the subset, and the errors."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared import render as render_module
from shared import template_syntax
from shared.render import TemplateError, jinja_environment, render

_dirs = itertools.count()


@pytest.fixture
def fallbacks(monkeypatch) -> list[str]:
    """Names of the templates render() handed to jinja2."""
    calls: list[str] = []
    real = render_module.render_with_jinja

    def spy(name, context, search_path):
        calls.append(name)
        return real(name, context, search_path)

    monkeypatch.setattr(render_module, "render_with_jinja", spy)
    return calls


def write_templates(base, files: dict[str, str]) -> str:
    """A fresh directory (so no cache, ours or jinja2's, sees an older version) holding files."""
    directory = os.path.join(str(base), f"t{next(_dirs)}")
    os.makedirs(directory)
    for name, text in files.items():
        path = os.path.join(directory, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    return directory


def both(directory: str, context: dict, name: str = "t.j2") -> tuple[str, str]:
    """(ours, jinja2's) output; "error" for a side that raised (ours raises only TemplateError)."""
    try:
        expected = jinja_environment([directory]).get_template(name).render(context)
    except Exception:
        expected = "error"
    try:
        ours = render(name, context, [directory])
    except TemplateError:
        ours = "error"
    return ours, expected


CONTEXT = {
    "name": "plan",
    "n": 3,
    "zero": 0,
    "flag": True,
    "off": False,
    "nothing": None,
    "items": ["b", "A", "c"],
    "nums": [3, 1, 2],
    "empty": [],
    "pairs": [["x", 1], ["y", 2]],
    "d": {"k": "v", "n": 1, "items": "key"},
    "nested": {"inner": {"deep": "bottom"}, "list": [{"id": 1}, {"id": 2}]},
    "text": "line one\nline two\n\nline four",
    "spaced": "  padded\t",
    "path": "my file's.txt",
    "loop": "context loop",
}

# Included by the cases below; every case's directory holds all of them.
INCLUDES = {
    "inc.j2": "inc {{ name }}",
    "inc-newline.j2": "inc {{ name }}\n",
    "inc-two-newlines.j2": "inc\n\n",
    "show-scope.j2": "[{{ i }}{{ y }}{{ loop | default('-') }}]",
    "set-y.j2": "{% set y = 2 %}{{ y }}",
    "a.j2": "a({% include 'b.j2' %})",
    "b.j2": "b",
    "sub/inc.j2": "sub {{ n }}",
    "routing.j2": "Next: {{ 'step-' ~ (n + 1) }}\n  {% if flag %}\n  (gated)\n  {% endif %}\n",
}

# (id, template): every one must render natively, identical to jinja2.
# fmt: off
CASES: list[tuple[str, str]] = [
    ("text", "just text"),
    ("text-trailing-newline", "text\n"),
    ("text-two-trailing-newlines", "text\n\n"),
    ("empty", ""),
    ("only-newline", "\n"),
    ("crlf", "a\r\nb\r\n{% if flag %}\r\nc\r\n{% endif %}\r\n"),
    ("comment", "a{# note #}b"),
    ("comment-own-line", "a\n  {# note #}\nb\n"),
    ("comment-dash", "a  {#- note -#}  \n b"),
    ("comment-plus", "a\n  {#+ note +#}\nb"),
    ("output", "{{ name }} {{ n }} {{ flag }} {{ nothing }} {{ items }} {{ d }}"),
    ("output-no-lstrip", "a\n    {{ name }}\nb"),
    ("output-no-trim", "{{ name }}\nb"),
    ("output-dash", "a   {{- name -}}   \n  b"),
    ("output-dash-left-newlines", "a\n\n  {{- name }}"),
    ("output-plus", "a  {{+ name }}"),
    ("if-own-lines", "a\n{% if flag %}\nyes\n{% endif %}\nb\n"),
    ("if-indented", "a\n    {% if flag %}\n    yes\n    {% endif %}\nb\n"),
    ("if-inline", "a {% if flag %}yes{% endif %} b"),
    ("if-else", "{% if off %}no{% else %}yes{% endif %}"),
    ("if-elif", "{% if n == 1 %}1{% elif n == 3 %}3{% else %}?{% endif %}"),
    ("if-elif-lines", "{% if zero %}\nz\n{% elif n %}\n  n\n{% else %}\ne\n{% endif %}\nend"),
    ("if-dash-both", "a  \n  {%- if flag -%}  \n  yes  \n  {%- endif -%}  \n  b"),
    ("if-dash-left", "a\n\n  {%- if flag %}\nyes\n{%- endif %}\nb"),
    ("if-dash-right", "a\n{% if flag -%}\n\n   yes\n{% endif -%}\n\nb"),
    ("if-plus-left", "a\n    {%+ if flag %}yes{% endif %}\n"),
    ("if-plus-right", "a\n{% if flag +%}\nyes\n{% endif +%}\nb"),
    ("tab-indent", "a\n\t {% if flag %}\n\tyes\n\t{% endif %}\n"),
    ("block-after-output", "{{ name }}  {% if flag %}\nx{% endif %}"),
    ("block-after-trimmed-block", "{% if flag %}\n  {% if n %}\ny\n  {% endif %}\n{% endif %}"),
    ("block-at-end", "a\n{% if flag %}\nb\n{% endif %}"),
    ("block-at-end-newline", "a\n{% if flag %}\nb\n{% endif %}\n"),
    ("block-at-end-two-newlines", "a\n{% if flag %}\nb\n{% endif %}\n\n"),
    ("tag-spanning-lines", "a\n  {%\n  if\n  flag\n  %}\nyes\n{% endif\n%}\nb"),
    ("for", "{% for i in items %}{{ i }},{% endfor %}"),
    ("for-lines", "list:\n{% for i in items %}\n  - {{ i }}\n{% endfor %}\ndone\n"),
    ("for-loop-vars", "{% for i in nums %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}"
                      "{{ loop.last }}{{ loop.length }}{{ loop.revindex }}{{ loop.revindex0 }};"
                      "{% endfor %}"),
    ("for-comma-join", "{% for i in items %}{{ i }}{% if not loop.last %},{% endif %}{% endfor %}"),
    ("for-else-empty", "{% for i in empty %}{{ i }}{% else %}none{% endfor %}"),
    ("for-else-lines", "{% for i in empty %}\n{{ i }}\n{% else %}\n  none\n{% endfor %}\n"),
    ("for-else-full", "{% for i in nums %}{{ i }}{% else %}none{% endfor %}"),
    ("for-unpack", "{% for k, v in pairs %}{{ k }}={{ v }} {% endfor %}"),
    ("for-items", "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}"),
    ("keys-values", "{{ d.keys() | list }} {{ d.values() | list }}"),
    ("for-string", "{% for c in name %}[{{ c }}]{% endfor %}"),
    ("for-dict", "{% for k in d %}{{ k }}{% endfor %}"),
    ("for-nested-last", "{% for i in nums %}{% for j in items %}{{ loop.last }}{% endfor %}"
                        "|{{ loop.last }}\n{% endfor %}"),
    ("for-nested-lines", "{% for i in nums %}\n  {% for j in pairs %}\n    {{ i }}{{ j[0] }}\n"
                         "  {% endfor %}\n{% endfor %}\n"),
    ("for-var-restored", "{% for n in nums %}{{ n }}{% endfor %}{{ n }}"),
    ("loop-outside-for", "{{ loop }}{% for i in [1] %}{% else %}{{ loop }}{% endfor %}"),
    ("set-top", "{% set x = n + 1 %}{{ x }}"),
    ("set-shadow", "{{ n }}{% set n = 7 %}{{ n }}"),
    ("set-in-if", "{% if flag %}{% set x = 'in' %}{% endif %}{{ x }}"),
    ("set-in-for-no-leak", "{% set x = 0 %}{% for i in nums %}{{ x }}{% set x = i %}{{ x }};"
                           "{% endfor %}{{ x }}"),
    ("set-in-for-else-no-leak", "{% set x = 0 %}{% for i in empty %}{% else %}{% set x = 1 %}"
                                "{% endfor %}{{ x }}"),
    ("set-in-for-then-outside", "{% for i in nums %}{% set x = i %}{% endfor %}{% set x = 2 %}"
                                "{{ x }}"),
    ("set-loop-var", "{% for i in nums %}{% set i = 5 %}{{ i }}{% endfor %}"),
    ("set-undefined-then-test", "{% set u = missing %}{{ u is defined }}"),
    ("set-own-line", "a\n  {% set x = 1 %}\nb{{ x }}"),
    ("include", "a\n{% include 'inc.j2' %}\nb"),
    ("include-trailing-newline", "a\n{% include 'inc-newline.j2' %}\nb"),
    ("include-two-newlines", "a{% include 'inc-two-newlines.j2' %}b"),
    ("include-indented", "a\n    {% include 'inc-newline.j2' %}\nb"),
    ("include-sees-loop-and-set", "{% for i in nums %}{% set y = i ~ '!' %}"
                                  "{% include 'show-scope.j2' %}{% endfor %}"),
    ("include-set-no-leak", "{% set y = 1 %}{% include 'set-y.j2' %}{{ y }}"),
    ("include-nested", "<{% include 'a.j2' %}>"),
    ("include-in-dir", "{% include 'sub/inc.j2' %}"),
    ("string-escapes", "{{ 'a\\'b' }} {{ \"c\\\"d\" }} {{ 'tab\\tnl\\n' }} {{ '\\u00e9' }}"),
    ("string-adjacent", "{{ 'a' \"b\" 'c' }}"),
    ("literals", "{{ true }} {{ True }} {{ false }} {{ none }} {{ None }} {{ 0 }} {{ 42 }}"),
    ("list-literals", "{{ [1, 'a', [none]] }} {{ [1, 2,] }} {{ [] }}"),
    ("attr-item", "{{ d.k }} {{ d['n'] }} {{ nested.inner.deep }} {{ nested['list'][1].id }}"),
    ("item-index", "{{ items[0] }} {{ items[n - 1] }} {{ pairs[1][0] }}"),
    ("attr-prefers-method", "{{ d['items'] }} {{ d.items() | list | length }}"),
    ("parens", "{{ (n + 1) ~ 'x' }} {{ ((flag)) }}"),
    ("not-and-or", "{{ not flag }} {{ zero or name }} {{ n and nothing }} {{ off or 0 or 'z' }}"),
    ("compare", "{{ n == 3 }} {{ n != 3 }} {{ n < 4 }} {{ n > 4 }} {{ n <= 3 }} {{ n >= 4 }}"),
    ("compare-chain", "{{ 1 < n < 5 }} {{ 1 < n < 2 }} {{ 1 == 1 == 1 }}"),
    ("in", "{{ 'b' in items }} {{ 'z' not in items }} {{ 'la' in name }} {{ 'k' in d }}"),
    ("concat", "{{ name ~ '-' ~ n ~ nothing ~ flag }}"),
    ("math", "{{ n + 2 }} {{ n - 5 }} {{ -n }} {{ 1 + 2 - 3 }} {{ name + 's' }}"),
    ("cond-expr", "{{ 'y' if flag else 'n' }} {{ 'y' if off else 'n' if zero else 'z' }}"),
    ("tests", "{{ name is defined }} {{ missing is defined }} {{ missing is not defined }}"
              " {{ nothing is none }} {{ n is not none }} {{ missing is undefined }}"),
    ("test-none-on-undefined", "{{ missing is none }} {{ missing is not none }}"),
    ("test-precedence", "{{ n == 3 is none }} {{ not missing is defined }}"),
    ("filter-length", "{{ items | length }} {{ name|length }} {{ d|count }}"),
    ("filter-join", "{{ items | join(', ') }} {{ nums | join }} {{ nums|join('-') }}"),
    ("filter-default", "{{ missing | default('dflt') }} {{ name | default('x') }}"
                       " {{ zero | default(5) }} {{ missing | d }} {{ nothing|default('n') }}"),
    ("filter-default-boolean", "{{ '' | default('e', true) }} {{ 'x' | default('e', true) }}"),
    ("filter-default-attr", "{{ d.nope | default('none here') }}"),
    ("filter-case-trim", "{{ name | upper }} {{ 'MiX' | lower }} [{{ spaced | trim }}]"),
    ("filter-case-non-string", "{{ 5|upper }} {{ nothing | lower }}"),
    ("filter-first-last", "{{ items | first }} {{ items | last }} {{ name|first }}"),
    ("filter-first-empty", "{{ empty|first is defined }} {{ empty|last is defined }}"),
    ("filter-sort", "{{ items | sort }} {{ nums | sort }} {{ items | sort(true) }}"),
    ("filter-sort-case", "{{ items | sort(false, true) }}"),
    ("filter-list-string", "{{ name | list }} {{ n | string ~ '!' }} {{ d|list }}"),
    ("filter-int", "{{ '12' | int + 1 }} {{ '3.7' | int }} {{ 'x' | int }} {{ nothing|int }}"),
    ("filter-int-default", "{{ 'x' | int(9) }} {{ '0x1A' | int(0, 16) }}"),
    ("filter-replace", "{{ name | replace('a', 'A') }} {{ 'aaa'|replace('a', 'b', 2) }}"),
    ("filter-replace-non-string", "{{ n|replace(3, 4) }}"),
    ("filter-indent", "[{{ text | indent }}]\n[{{ text | indent(2) }}]\n[{{ text|indent('> ') }}]"
                      "\n[{{ text|indent(2, true) }}]\n[{{ text|indent(2, false, true) }}]"),
    ("filter-quote", "{{ name | quote }} {{ path | quote }} {{ '' | quote }} {{ 'a b' | quote }}"
                     " {{ '@%+=:,./-_' | quote }} {{ nothing | quote }} {{ 'é' | quote }}"),
    ("filter-chain", "{{ items | sort | join(' ') | upper | replace('B', 'b') }}"),
    ("filter-on-expression", "{{ (name ~ 'x') | upper }} {{ -n | string }} {{ [3, 1] | sort }}"),
    ("prompt-like", "# Step {{ n }}: {{ name | upper }}\n\n{% if items %}\nItems:\n"
                    "{% for i in items | sort %}\n  {{ loop.index }}. {{ i }}\n{% endfor %}\n"
                    "{% endif %}\n{# routing #}\n{% include 'routing.j2' %}\n"),
]
# fmt: on


@pytest.mark.parametrize("template", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_matches_jinja2(tmp_path, fallbacks, template):
    directory = write_templates(tmp_path, {"t.j2": template, **INCLUDES})
    ours, expected = both(directory, CONTEXT)
    assert ours == expected
    assert ours != "error"
    assert fallbacks == []


# --- hypothesis: random templates from the subset grammar, stressing whitespace ---------

# fmt: off
NAMES = ["name", "n", "zero", "flag", "nothing", "items", "nums", "empty", "d", "text", "missing"]
ATOMS = [*NAMES, "1", "0", "'s'", '"q"', "true", "none", "[1, n]", "[]", "d.k", "d['n']",
         "nested.inner.deep", "items[0]", "nums[n]", "d.nope", "loop.index", "loop.last"]
FILTERS = ["length", "join(', ')", "join", "default('D')", "upper", "lower", "trim", "first",
           "last", "sort", "list", "string", "int", "replace('a', 'b')", "indent(2)", "quote"]
BINARY = [" ~ ", " + ", " - ", " == ", " != ", " < ", " in ", " not in ", " and ", " or "]
TESTS = ["defined", "not defined", "none", "not none"]
LOOPS = [("x", "items"), ("x", "nums"), ("x", "empty"), ("x", "name"), ("x", "d"), ("x", "missing"),
         ("k, v", "d.items()"), ("k, v", "[[1, 2], 'ab']"), ("x", "[n, 0]"), ("n", "nums | sort")]
TEXT = [" ", "  ", "\t", "\n", "\n\n", " \n", "\n  ", "\t\n", "a", "b c", "x\n", " y "]
# fmt: on


def binary(parts: tuple[str, str, str]) -> str:
    left, op, right = parts
    if right.startswith("not ") and op not in (" and ", " or "):
        right = f"({right})"  # jinja2 reads `a ~ not b` as a ~ (a variable named not)...
    return left + op + right


def expressions(in_loop: bool) -> st.SearchStrategy[str]:
    atoms = st.sampled_from([a for a in ATOMS if in_loop or not a.startswith("loop")])

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, st.sampled_from(BINARY), inner).map(binary),
            st.tuples(inner, st.sampled_from(FILTERS)).map(lambda t: f"{t[0]} | {t[1]}"),
            # In parentheses: jinja2 reads `x is none not in y` as the test none(x, not)...
            st.tuples(inner, st.sampled_from(TESTS)).map(lambda t: f"({t[0]} is {t[1]})"),
            inner.map(lambda e: f"not {e}"),
            inner.map(lambda e: f"({e})"),
            inner.map(lambda e: f"[{e}, 2]"),
            st.tuples(inner, inner, inner).map(lambda t: f"{t[0]} if {t[1]} else {t[2]}"),
        )

    return st.recursive(atoms, extend, max_leaves=4)


@st.composite
def tag(draw, body: str) -> str:
    """A block tag with random whitespace control and inner spacing."""
    left = draw(st.sampled_from(["", "", "-", "+"]))
    right = draw(st.sampled_from(["", "", "-", "+"]))
    pad = st.sampled_from([" ", " ", "", "\n", "  "])
    return "{%" + left + draw(pad) + body + draw(pad) + right + "%}"


@st.composite
def nodes(draw, depth: int, in_loop: bool) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        kinds = ["text", "text", "out", "comment", "if", "for", "set", "include"]
        kind = draw(st.sampled_from(kinds if depth < 3 else ["text", "out", "set"]))
        if kind == "text":
            parts.append("".join(draw(st.lists(st.sampled_from(TEXT), max_size=4))))
        elif kind == "out":
            left, right = draw(st.sampled_from(["", "-", "+"])), draw(st.sampled_from(["", "-"]))
            pad = draw(st.sampled_from([" ", "", "\n"]))
            parts.append("{{" + left + pad + draw(expressions(in_loop)) + pad + right + "}}")
        elif kind == "comment":
            marks = st.sampled_from(["", "-", "+"])
            parts.append("{#" + draw(marks) + " note " + draw(marks) + "#}")
        elif kind == "set":
            var = draw(st.sampled_from(["v", "n", "name", "w"]))
            parts.append(draw(tag(f"set {var} = {draw(expressions(in_loop))}")))
        elif kind == "include":
            parts.append(draw(tag(f"include '{draw(st.sampled_from(['inc1.j2', 'inc2.j2']))}'")))
        elif kind == "if":
            parts.append(draw(tag(f"if {draw(expressions(in_loop))}")))
            parts.append(draw(nodes(depth + 1, in_loop)))
            for _ in range(draw(st.integers(0, 2))):
                parts.append(draw(tag(f"elif {draw(expressions(in_loop))}")))
                parts.append(draw(nodes(depth + 1, in_loop)))
            if draw(st.booleans()):
                parts.append(draw(tag("else")) + draw(nodes(depth + 1, in_loop)))
            parts.append(draw(tag("endif")))
        else:
            target, iterable = draw(st.sampled_from(LOOPS))
            parts.append(draw(tag(f"for {target} in {iterable}")))
            parts.append(draw(nodes(depth + 1, True)))
            if draw(st.booleans()):
                parts.append(draw(tag("else")) + draw(nodes(depth + 1, in_loop)))
            parts.append(draw(tag("endfor")))
        parts.append("".join(draw(st.lists(st.sampled_from(TEXT), max_size=3))))
    return "".join(parts)


values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 3),
    st.sampled_from(["", "a", "B c", "x\n  y\n"]),
    st.lists(st.sampled_from(["a", "B", "c", ""]), max_size=3),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    template=nodes(0, False),
    includes=st.tuples(nodes(2, False), nodes(2, False), st.sampled_from(["", "\n", "\n\n"])),
    overrides=st.dictionaries(
        st.sampled_from(["name", "n", "zero", "flag", "nothing", "w"]), values
    ),
)
def test_random_templates_match_jinja2(tmp_path_factory, template, includes, overrides):
    inc1, inc2, ending = includes
    base = tmp_path_factory.getbasetemp()
    directory = write_templates(base, {"t.j2": template, "inc1.j2": inc1 + ending, "inc2.j2": inc2})
    used_jinja: list[str] = []
    real = render_module.render_with_jinja
    render_module.render_with_jinja = lambda *args: used_jinja.append(args[0]) or real(*args)
    try:
        ours, expected = both(directory, {**CONTEXT, **overrides})
    finally:
        render_module.render_with_jinja = real
    assert ours == expected, template
    # The generator stays inside the subset, so only a template jinja2 rejects, or one using
    # the scoping rule the renderer leaves to jinja2, may go to it.
    assert used_jinja == [] or expected == "error" or reads_before_set(template, *includes)


def reads_before_set(*sources: str) -> bool:
    """Whether a source reads, in a loop, a name that its own scope sets later."""
    for source in sources:
        try:
            template_syntax.parse(source)
        except template_syntax.Unsupported as e:
            if "before its first set" in str(e):
                return True
    return False


# --- the fallback ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        "{% macro greet(who) %}hi {{ who }}{% endmacro %}{{ greet(name) }}\n",
        "{{ text | wordwrap(5) }}",
        "{{ d | tojson }}",
        "{{ 2 * n }} {{ 7 // 2 }} {{ 1.5 }}",
        "{% for i in nums if i > 1 %}{{ i }}{% endfor %}",
        "{{ name if flag }}",
        "{% raw %}{{ not rendered }}{% endraw %}",
        "{{ name.upper() }} {{ range(2) | list }} {{ {'a': 1}.a }}",
        "{% for i in nums %}{{ loop.cycle('a', 'b') }}{% endfor %}",
        "{% set x %}block{% endset %}{{ x }}",
        "a {% include 'macro.j2' %} b",
        "{% for i in nums %}{{ name is defined }}{% endfor %}{% set name = 1 %}{{ name }}",
        "{% for i in [] %}{% else %}{{ name is defined }}{% endfor %}{% set name = 1 %}",
    ],
)
def test_outside_the_subset_falls_back_to_jinja2(tmp_path, fallbacks, template):
    directory = write_templates(
        tmp_path, {"t.j2": template, "macro.j2": "{% macro m() %}{% endmacro %}m"}
    )
    ours, expected = both(directory, CONTEXT)
    assert ours == expected != "error"
    assert fallbacks == ["t.j2"]


def test_parsed_templates_are_cached(tmp_path, fallbacks):
    directory = write_templates(tmp_path, {"t.j2": "{{ n }}", "f.j2": "{{ 2 * n }}"})
    assert render("t.j2", {"n": 1}, [directory]) == "1"
    with open(os.path.join(directory, "t.j2"), "w") as f:
        f.write("changed")
    assert render("t.j2", {"n": 2}, [directory]) == "2"
    assert render("f.j2", {"n": 2}, [directory]) == render("f.j2", {"n": 2}, [directory]) == "4"
    assert fallbacks == ["f.j2", "f.j2"]  # falls back each time, but parses only once


def test_search_path_first_match_wins(tmp_path):
    first = write_templates(tmp_path, {"t.j2": "first {% include 'inc.j2' %}"})
    second = write_templates(tmp_path, {"t.j2": "second", "inc.j2": "inc"})
    assert render("t.j2", {}, [first, second]) == "first inc"
    assert render("t.j2", {}, [second, first]) == "second"


# --- errors ------------------------------------------------------------------------------


def error_of(tmp_path, template: str, context: dict | None = None, **files: str) -> str:
    directory = write_templates(tmp_path, {"t.j2": template, **files})
    with pytest.raises(TemplateError) as info:
        render("t.j2", CONTEXT if context is None else context, [directory])
    return str(info.value)


def test_undefined_variable_names_it_the_template_and_line(tmp_path, fallbacks):
    assert error_of(tmp_path, "a\nb\n{{ nope }}") == "t.j2:3: 'nope' is undefined"
    assert error_of(tmp_path, "{% if flag %}\n\n{{ d.nope ~ 'x' }}{% endif %}") == (
        "t.j2:3: 'dict object' has no attribute 'nope'"
    )
    assert error_of(tmp_path, "{% if x %}{% endif %}", {}) == "t.j2:1: 'x' is undefined"
    assert error_of(tmp_path, "{% for i in x %}{% endfor %}", {}) == "t.j2:1: 'x' is undefined"
    assert fallbacks == []


def test_undefined_in_an_include_names_the_include(tmp_path):
    message = error_of(tmp_path, "x\n{% include 'inc.j2' %}", {}, **{"inc.j2": "\n{{ gone }}"})
    assert message == "inc.j2:2: 'gone' is undefined"


def test_other_runtime_errors_are_template_errors(tmp_path):
    assert error_of(tmp_path, "\n{{ n | length }}") == (
        "t.j2:2: TypeError: object of type 'int' has no len()"
    )
    assert "TypeError" in error_of(tmp_path, "{{ n | quote }}")


def test_unknown_filter_is_a_template_error(tmp_path, fallbacks):
    assert error_of(tmp_path, "ok\n{{ name | no_such_filter }}") == (
        "t.j2:2: No filter named 'no_such_filter'."
    )
    assert fallbacks == ["t.j2"]


def test_syntax_error_names_the_template_and_line(tmp_path, fallbacks):
    message = error_of(tmp_path, "line\n{% if flag %}\nnever closed\n")
    assert message.startswith("t.j2:")
    assert "endif" in message
    assert error_of(
        tmp_path, "a\n{% include 'bad.j2' %}", **{"bad.j2": "\n\n{{ x + }}"}
    ).startswith("bad.j2:3: ")


def test_missing_templates_are_template_errors(tmp_path):
    assert "nope.j2" in error_of(tmp_path, "{% include 'nope.j2' %}")
    directory = write_templates(tmp_path, {})
    with pytest.raises(TemplateError, match=r"nope\.j2"):
        render("nope.j2", {}, [directory])


def test_runtime_errors_in_the_fallback_name_the_line(tmp_path):
    message = error_of(tmp_path, "{% macro m() %}{% endmacro %}\n\n{{ gone }}", {})
    assert message == "t.j2:3: 'gone' is undefined"


def test_importing_does_not_import_jinja2():
    code = "import shared.render, sys; assert 'jinja2' not in sys.modules, 'jinja2'"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    subprocess.run([sys.executable, "-c", code], cwd=root, check=True)
