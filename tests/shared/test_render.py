"""shared.render: the whitespace the prompts rely on, the shell-quote filter, the search path,
and errors that name the template and line."""

from __future__ import annotations

import itertools
import os

import pytest

from shared.render import TemplateError, render

_dirs = itertools.count()


def write_templates(base, files: dict[str, str]) -> str:
    """A fresh directory (so no cached Environment sees an older version) holding files."""
    directory = os.path.join(str(base), f"t{next(_dirs)}")
    os.makedirs(directory)
    for name, text in files.items():
        path = os.path.join(directory, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    return directory


def rendered(tmp_path, template: str, context: dict | None = None, **files: str) -> str:
    directory = write_templates(tmp_path, {"t.j2": template, **files})
    return render("t.j2", context or {}, [directory])


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("a\n{% if flag %}\nyes\n{% endif %}\nb\n", "a\nyes\nb"),  # tag lines leave no line
        ("a\n    {% if flag %}\n    yes\n    {% endif %}\nb", "a\n    yes\nb"),  # nor indent
        ("list:\n{% for i in items %}\n  - {{ i }}\n{% endfor %}\n", "list:\n  - x\n  - y\n"),
        ("{{ name }}\nb", "plan\nb"),  # output tags keep their newline
        ("a {% include 'inc.j2' %} b", "a inc plan b"),
        ("text\n", "text"),  # no trailing newline kept
    ],
)
def test_whitespace_the_templates_rely_on(tmp_path, template, expected):
    context = {"flag": True, "items": ["x", "y"], "name": "plan"}
    assert rendered(tmp_path, template, context, **{"inc.j2": "inc {{ name }}\n"}) == expected


def test_quote_is_shell_quoting(tmp_path):
    template = "{{ path | quote }} {{ '' | quote }} {{ 'plain' | quote }}"
    assert rendered(tmp_path, template, {"path": "my file's.txt"}) == (
        "'my file'\"'\"'s.txt' '' plain"
    )


def test_search_path_first_match_wins(tmp_path):
    first = write_templates(tmp_path, {"t.j2": "first {% include 'inc.j2' %}"})
    second = write_templates(tmp_path, {"t.j2": "second", "inc.j2": "inc"})
    assert render("t.j2", {}, [first, second]) == "first inc"
    assert render("t.j2", {}, [second, first]) == "second"


# --- errors ------------------------------------------------------------------------------


def error_of(tmp_path, template: str, context: dict | None = None, **files: str) -> str:
    with pytest.raises(TemplateError) as info:
        rendered(tmp_path, template, context, **files)
    return str(info.value)


def test_undefined_names_fail_naming_the_template_and_line(tmp_path):
    assert error_of(tmp_path, "a\nb\n{{ nope }}") == "t.j2:3: 'nope' is undefined"
    assert error_of(
        tmp_path,
        "{% if flag %}\n\n{{ d.nope ~ 'x' }}{% endif %}",
        {
            "flag": True,
            "d": {},
        },
    ) == ("t.j2:3: 'dict object' has no attribute 'nope'")
    assert error_of(tmp_path, "{% if x %}{% endif %}") == "t.j2:1: 'x' is undefined"
    assert error_of(tmp_path, "{% for i in x %}{% endfor %}") == "t.j2:1: 'x' is undefined"


def test_undefined_in_an_include_names_the_include(tmp_path):
    message = error_of(tmp_path, "x\n{% include 'inc.j2' %}", **{"inc.j2": "\n{{ gone }}"})
    assert message == "inc.j2:2: 'gone' is undefined"


def test_other_runtime_errors_are_template_errors(tmp_path):
    assert error_of(tmp_path, "\n{{ n | length }}", {"n": 3}) == (
        "t.j2:2: TypeError: object of type 'int' has no len()"
    )
    assert "TypeError" in error_of(tmp_path, "{{ n | quote }}", {"n": 3})


def test_unknown_filter_is_a_template_error(tmp_path):
    assert error_of(tmp_path, "ok\n{{ name | no_such_filter }}", {"name": "x"}) == (
        "t.j2:2: No filter named 'no_such_filter'."
    )


def test_syntax_error_names_the_template_and_line(tmp_path):
    message = error_of(tmp_path, "line\n{% if flag %}\nnever closed\n")
    assert message.startswith("t.j2:")
    assert "endif" in message
    assert error_of(
        tmp_path, "a\n{% include 'bad.j2' %}", **{"bad.j2": "\n\n{{ x + }}"}
    ).startswith("bad.j2:3: ")


def test_missing_templates_are_template_errors(tmp_path):
    assert error_of(tmp_path, "\n{% include 'nope.j2' %}") == "t.j2:2: template nope.j2 not found"
    directory = write_templates(tmp_path, {})
    with pytest.raises(TemplateError, match=r"^nope\.j2: template nope\.j2 not found$"):
        render("nope.j2", {}, [directory])


def test_a_step_counts_as_showing_the_words_exactly_when_its_template_shows_them() -> None:
    """shared/words.py notes where the user's words were shown whole: only a kind whose
    template includes _user.j2 may claim it, or a later step names words no prompt showed."""
    from skills.executor.steps import EXECUTOR
    from skills.planner.steps import PLANNER

    for workflow in (PLANNER, EXECUTOR):
        for step in workflow.steps:
            [source] = [
                os.path.join(d, step.template)
                for d in workflow.templates
                if os.path.exists(os.path.join(d, step.template))
            ]
            with open(source, encoding="utf-8") as f:
                includes = '"_user.j2"' in f.read()
            assert step.kind.shows_words == includes, (workflow.name, step.number)
