"""Start-up cost of rendering a typical 2 KB prompt: shared.render vs jinja2 vs `python -c pass`.

Runs each command many times, interleaved, and prints medians as ratios to `python -c pass`.
Usage: python -m bench.bench_render [--rounds N]
"""

from __future__ import annotations

import os
import sys
import tempfile

from bench.common import REPO, compile_package, environment_note, interleaved, rounds

STEP = """\
# Step 3 of {{ total }}: {{ title | upper }}

You are the **{{ role }}** for plan `{{ plan_id }}`. {# the role's one-line brief #}
Read the plan with `plan show {{ plan_id | quote }}` before you change anything.

## Context
Project: {{ project.name }} ({{ project.language | default('python') }}),
branch `{{ project.branch }}`.
{% if project.notes %}
Notes from the last session:
{{ project.notes | indent(2, true) }}
{% endif %}

## What this step requires
{% for req in requirements %}
{{ loop.index }}. {{ req.text }}{% if req.blocking %} (blocking){% endif %}

{% endfor %}
{% if decisions %}
## Decisions already made
{% for d in decisions | sort %}
  - {{ d }}
{% endfor %}
{% else %}
No decisions are recorded yet; record each with `plan decide`.
{% endif %}

## Open questions
{% for q in questions %}
{% if not q.answered %}
- {{ q.id }}: {{ q.text | trim }}
{% endif %}
{% endfor %}

{% set remaining = questions | length - answered %}
{{ remaining }} question{{ '' if remaining == 1 else 's' }} still open.

## Milestones
{% for m in milestones %}
### {{ m.id }} {{ m.name }}
{{ m.body | indent(2) }}
{% if m.files %}
Files: {{ m.files | join(', ') }}
{% endif %}
{% endfor %}

## Risks
{% for r in risks %}
- {{ r.id }} ({{ r.level | default('medium') }}): {{ r.text }}
  {% if r.mitigation is defined %}
  Mitigation: {{ r.mitigation }}
  {% endif %}
{% endfor %}

## Rules
- Keep each milestone small enough to review in one sitting.
- Every decision names the alternatives it rejected and why.
- Write code only in the executor; here you plan.
- When unsure, ask with `plan ask` rather than guessing.
- Record what you learn as you go, not at the end; a later step reads it.
- Prefer the smallest change that meets the requirement; note follow-ups separately.

{% include "routing.j2" %}
"""

ROUTING = """\
---
{% if gate %}
Quality review gates this step ({{ gate }}): run `plan qr {{ gate | lower }}` first.
{% endif %}
When done, run: `planner --step {{ step + 1 }} --state-dir {{ state_dir | quote }}`
"""

CONTEXT = {
    "total": 11,
    "title": "detail the milestones",
    "role": "architect",
    "plan_id": "PL-0042",
    "requirements": [
        {"text": "Every milestone lists the files it touches.", "blocking": True},
        {"text": "Decisions cite the question that prompted them.", "blocking": False},
        {"text": "Risks carry a mitigation.", "blocking": True},
    ],
    "decisions": ["DL-003 use filelock", "DL-001 keep pydantic", "DL-002 click for the CLI"],
    "questions": [
        {"id": "Q-1", "text": "  Which Python versions?  ", "answered": True},
        {"id": "Q-2", "text": "Do we support Windows?", "answered": False},
        {"id": "Q-3", "text": "Is the guard hook optional?", "answered": False},
    ],
    "answered": 1,
    "milestones": [
        {
            "id": "M-1",
            "name": "State store",
            "body": "Lock, read, apply,\nvalidate, write.",
            "files": ["state/store.py", "state/models.py"],
        },
        {"id": "M-2", "name": "CLI", "body": "Thin commands over state/.", "files": []},
    ],
    "project": {
        "name": "planner",
        "branch": "main",
        "notes": "Store is done.\nCLI half done; see M-2.\nGuard untested on macOS.",
    },
    "risks": [
        {
            "id": "R-1",
            "level": "high",
            "text": "Lock contention on shared state.",
            "mitigation": "One writer, short critical sections.",
        },
        {"id": "R-2", "text": "Templates drift from the step table."},
    ],
    "gate": "DESIGN",
    "step": 3,
    "state_dir": "/tmp/my plan",
}


def commands(template_dir: str) -> dict[str, list[str]]:
    setup = f"ctx = {CONTEXT!r}; path = [{template_dir!r}]\n"
    ours = (
        "import sys\nfrom shared.render import render\n"
        f"{setup}out = render('step.j2', ctx, path)\n"
        "assert 'jinja2' not in sys.modules and len(out) > 1000\n"
    )
    theirs = (
        "import shlex, jinja2\n"
        f"{setup}env = jinja2.Environment(loader=jinja2.FileSystemLoader(path), trim_blocks=True,"
        " lstrip_blocks=True, undefined=jinja2.StrictUndefined)\n"
        "env.filters['quote'] = shlex.quote\nout = env.get_template('step.j2').render(ctx)\n"
    )
    codes = {"python -c pass": "pass", "shared.render": ours, "jinja2": theirs}
    return {name: [sys.executable, "-c", code] for name, code in codes.items()}


def main() -> None:
    count = rounds(40)
    with tempfile.TemporaryDirectory() as template_dir:
        for name, text in (("step.j2", STEP), ("routing.j2", ROUTING)):
            with open(os.path.join(template_dir, name), "w", encoding="utf-8") as f:
                f.write(text)
        from shared.render import jinja_environment, render  # same output, checked once

        expected = jinja_environment([template_dir]).get_template("step.j2").render(CONTEXT)
        assert render("step.j2", CONTEXT, [template_dir]) == expected
        compile_package()
        times = interleaved(commands(template_dir), count, cwd=REPO)
    base = times["python -c pass"]
    size = len(STEP) + len(ROUTING)
    print(environment_note())
    print(f"template: {size} bytes (step.j2 + routing.j2), {count} interleaved runs, medians")
    for name, ms in times.items():
        print(f"{name:15s} {ms:6.1f} ms  {ms / base:4.2f}x python -c pass")


if __name__ == "__main__":
    main()
