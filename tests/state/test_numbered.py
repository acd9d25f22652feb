"""state.repo.numbered: a diff's lines carry the line numbers they have in the old and new file."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from state.repo.numbered import new_lines, numbered, spans

LINES = st.lists(st.sampled_from(["a", "b", "-- c", "++ d", "@@ e", ""]), max_size=30)


@settings(max_examples=200, deadline=None)
@given(old=LINES, new=LINES, context=st.integers(0, 3))
def test_every_line_has_the_number_it_has_in_its_file(
    old: list[str], new: list[str], context: int
) -> None:
    diff = "\n".join(difflib.unified_diff(old, new, "a/f", "b/f", lineterm="", n=context))
    shown = numbered(diff)
    for line in shown:
        if line.old is not None:
            assert old[line.old - 1] == line.text[1:], line
        if line.new is not None:
            assert new[line.new - 1] == line.text[1:], line
    assert sum(1 for ln in shown if ln.kind == "add") == sum(
        1 for ln in diff.splitlines()[2:] if ln.startswith("+")
    )


def test_a_new_file_and_the_spans_a_refusal_names() -> None:
    diff = "diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ b/x\n"
    diff += "@@ -0,0 +1,2 @@\n+1\n+2\n"
    assert [(ln.old, ln.new, ln.kind) for ln in numbered(diff)][-3:] == [
        (None, None, "hunk"),
        (None, 1, "add"),
        (None, 2, "add"),
    ]
    assert new_lines(diff) == [1, 2]
    assert spans([1, 2, 3, 7, 9, 10]) == "1-3, 7, 9-10" and spans([]) == ""
