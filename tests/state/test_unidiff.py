"""state.repo.unidiff against real git (the oracle), hypothesis-made diffs, and its messages."""

from __future__ import annotations

import difflib
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from state.repo.unidiff import (
    DiffError,
    FilePatch,
    Hunk,
    apply,
    check,
    parse,
    reverse,
    touched_files,
)
from tests.conftest import from_template

# --- git as the oracle -------------------------------------------------------------------


def git(repo: str, *args: str, stdin: str = "", check: bool = True) -> bytes:
    cmd = ["git", "-c", "core.autocrlf=false", "-c", "core.safecrlf=false", *args]
    done = subprocess.run(cmd, cwd=repo, input=stdin.encode(), capture_output=True, check=check)
    return done.stdout if done.returncode == 0 else b"rejected"


def empty_repository(path: Path) -> None:
    os.mkdir(path)
    git(str(path), "init", "-q")
    git(str(path), "config", "user.email", "t@example.com")
    git(str(path), "config", "user.name", "t")
    git(str(path), "commit", "-q", "--allow-empty", "-m", "root")


@pytest.fixture
def repo(tmp_path) -> str:
    return str(from_template("unidiff-repo", empty_repository, tmp_path / "repo"))


def write_tree(repo: str, files: dict[str, bytes | None]) -> None:
    for name, data in files.items():
        path = os.path.join(repo, name)
        if data is None:
            if os.path.exists(path):
                os.remove(path)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(data)


def read(repo: str, name: str) -> str | None:
    path = os.path.join(repo, name)
    if not os.path.exists(path):
        return None
    with open(path, "rb") as handle:
        return handle.read().decode()


def git_diff(repo: str, before: dict, after: dict, *flags: str) -> str:
    """Commit `before`, stage `after`, return `git diff --cached`, and restore `before`."""
    write_tree(repo, before)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "before")
    write_tree(repo, after)
    git(repo, "add", "-A")
    diff = git(repo, "diff", "--cached", *flags).decode()
    git(repo, "reset", "-q", "--hard", "HEAD")
    return diff


LONG = b"".join(b"line %d\n" % n for n in range(1, 41))
CRLF = b"".join(b"row %d\r\n" % n for n in range(1, 11))

GIT_CASES = {
    "one hunk": ({"a.py": b"x = 1\ny = 2\nz = 3\n"}, {"a.py": b"x = 1\ny = 20\nz = 3\n"}),
    "several hunks": (
        {"f.txt": LONG},
        {"f.txt": LONG.replace(b"line 3\n", b"three\n").replace(b"line 30\n", b"")},
    ),
    "add at end, delete at start": (
        {"f.txt": LONG},
        {"f.txt": LONG.replace(b"line 1\nline 2\n", b"") + b"more\nand more\n"},
    ),
    "new file": ({}, {"src/new.py": b"print('hi')\n"}),
    "new empty file": ({}, {"empty.txt": b""}),
    "deleted file": ({"old.txt": b"a\nb\n"}, {"old.txt": None}),
    "deleted empty file": ({"gone.txt": b""}, {"gone.txt": None}),
    "no newline before": ({"n.txt": b"a\nb"}, {"n.txt": b"a\nb\nc\n"}),
    "no newline after": ({"n.txt": b"a\nb\n"}, {"n.txt": b"a\nB"}),
    "no newline both": ({"n.txt": b"a\nb"}, {"n.txt": b"a\nc"}),
    "new file without newline": ({}, {"n.txt": b"only"}),
    "crlf modify": ({"w.txt": CRLF}, {"w.txt": CRLF.replace(b"row 5\r\n", b"five\r\nhalf\r\n")}),
    "crlf to lf": ({"w.txt": CRLF}, {"w.txt": CRLF.replace(b"\r\n", b"\n")}),
    "lf line into crlf": ({"w.txt": CRLF}, {"w.txt": CRLF.replace(b"row 4\r\n", b"lf\n")}),
    "several files": (
        {"a.txt": b"1\n2\n3\n", "b.txt": b"gone\n", "d/c.txt": LONG},
        {"a.txt": b"1\n3\n", "b.txt": None, "d/c.txt": LONG + b"x\n", "new.txt": b"n\n"},
    ),
    "unicode name": ({"café.txt": b"a\n"}, {"café.txt": b"b\n"}),
    "name with space": ({"my file.txt": b"a\n"}, {"my file.txt": b"b\n"}),
}


@pytest.mark.parametrize("flags", [(), ("-U0",), ("--no-prefix",)], ids=["", "U0", "no-prefix"])
@pytest.mark.parametrize("case", sorted(GIT_CASES))
def test_git_diffs_check_and_apply_like_git(repo, case, flags):
    before, after = GIT_CASES[case]
    diff = git_diff(repo, before, after, *flags)
    assert check(diff, repo) == []
    ours = {}
    for patch in parse(diff):
        source = read(repo, patch.old_path) if patch.old_path else None
        ours[patch.new_path or patch.old_path] = apply(patch, source)
    git(repo, "apply", *(["-p0"] if "--no-prefix" in flags else []), "--unidiff-zero", stdin=diff)
    assert set(ours) == set(after)
    for name, text in ours.items():
        assert text == read(repo, name), name


def test_git_quotes_unusual_names(repo):
    diff = git_diff(repo, {"café.txt": b"a\n"}, {"café.txt": b"b\n"})
    assert '"a/caf\\303\\251.txt"' in diff
    assert touched_files(diff) == ["café.txt"]


def test_git_rename_with_changes(repo):
    body = b"".join(b"same line %d\n" % n for n in range(20))
    diff = git_diff(repo, {"old.txt": body}, {"old.txt": None, "new.txt": body + b"x\n"}, "-M")
    assert "rename from old.txt" in diff
    (patch,) = parse(diff)
    assert (patch.old_path, patch.new_path) == ("old.txt", "new.txt")
    assert check(diff, repo) == []
    assert touched_files(diff) == ["old.txt", "new.txt"]
    assert apply(patch, body.decode()) == (body + b"x\n").decode()


def test_git_pure_rename_has_no_hunks(repo):
    diff = git_diff(repo, {"a.txt": b"x\n"}, {"a.txt": None, "b.txt": b"x\n"}, "-M")
    assert parse(diff) == [FilePatch("a.txt", "b.txt", ())]
    assert check(diff, repo) == []
    write_tree(repo, {"b.txt": b"other\n"})
    assert check(diff, repo) == ["b.txt: file already exists (the diff renames a.txt to it)"]


def test_context_changed_is_rejected_like_git(repo):
    diff = git_diff(repo, {"f.txt": LONG}, {"f.txt": LONG.replace(b"line 30\n", b"thirty\n")})
    write_tree(repo, {"f.txt": LONG.replace(b"line 29\n", b"line twenty-nine\n")})
    assert git(repo, "apply", "--check", stdin=diff, check=False) == b"rejected"
    assert check(diff, repo) == [
        "hunk 1 (@@ -27,7 +27,7 @@) of f.txt does not apply: "
        'line 29 expected "line 29" but found "line twenty-nine"'
    ]


def test_git_diff_applies_at_an_offset(repo):
    diff = git_diff(repo, {"f.txt": LONG}, {"f.txt": LONG.replace(b"line 20\n", b"twenty\n")})
    write_tree(repo, {"f.txt": b"new top\n" * 5 + LONG})
    assert check(diff, repo) == []
    assert (
        apply(parse(diff)[0], read(repo, "f.txt"))
        == "new top\n" * 5 + LONG.replace(b"line 20\n", b"twenty\n").decode()
    )


def test_nearest_match_wins():
    text = "x\n" * 5 + "a\nb\nc\n" + "y\n" * 4 + "a\nb\nc\n" + "z\n"
    diff = "--- a/f\n+++ b/f\n@@ -10,3 +10,3 @@\n a\n-b\n+B\n c\n"  # "a" at lines 6 and 13
    assert apply(parse(diff)[0], text) == text.replace("a\nb\nc\nz", "a\nB\nc\nz")


def test_a_hunk_without_trailing_context_is_pinned_to_the_end_as_git_pins_it():
    """Applied twice, a diff that appends fails the second time instead of appending again."""
    text = "a\nb\nc\n"
    diff = "--- a/f\n+++ b/f\n@@ -1,3 +1,5 @@\n a\n b\n c\n+def title_case():\n+    pass\n"
    once = apply(parse(diff)[0], text)
    assert once == text + "def title_case():\n    pass\n"
    with pytest.raises(DiffError):
        apply(parse(diff)[0], once)
    assert apply(reverse(parse(diff)[0]), once) == text  # the reverse says: already applied


def test_a_hunk_at_line_1_is_pinned_to_the_start():
    text = "a\nb\nc\nd\n"
    diff = "--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n+import os\n a\n b\n c\n"
    once = apply(parse(diff)[0], text)
    assert once == "import os\n" + text
    with pytest.raises(DiffError):
        apply(parse(diff)[0], once)


# --- hypothesis: difflib-made diffs ------------------------------------------------------


def keep_split(text: str) -> list[str]:
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def make_diff(a: str, b: str, n: int = 3) -> str:
    """difflib's unified diff with git's marker for a last line that lacks its newline."""
    out = []
    for line in difflib.unified_diff(keep_split(a), keep_split(b), "a/f", "b/f", n=n):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


TRICKY = ["a", "b", "c", "", " ", "-- x", "++ y", "--- z", "+++ w", "\\ v", "@@ -1 +1 @@", "\t"]


def texts(lines: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.builds(
        lambda body, end: "\n".join(body) + ("\n" if end and body else ""),
        st.lists(lines, max_size=12),
        st.booleans(),
    )


@pytest.mark.slow
@settings(max_examples=400)
@given(texts(st.sampled_from([*TRICKY, "x\r", "\r"])), texts(st.sampled_from(TRICKY)), st.data())
def test_difflib_diffs_apply(a, b, data):
    assume(a != b)
    n = data.draw(st.integers(1, 3))
    (patch,) = parse(make_diff(a, b, n))
    assert apply(patch, a) == b
    assert apply(patch, a) == apply(parse(make_diff(a, b, n).replace("\n", "\r\n"))[0], a)


@settings(max_examples=200)
@given(texts(st.sampled_from(TRICKY)), texts(st.sampled_from(TRICKY)))
def test_difflib_diffs_without_context_apply(a, b):
    assume(a != b)
    assert apply(parse(make_diff(a, b, 0))[0], a) == b


@settings(max_examples=300)
@given(
    st.lists(st.text("abc-+ ", min_size=1, max_size=3), unique=True, min_size=1, max_size=15),
    texts(st.text("abc", max_size=2)),
    st.booleans(),
    st.integers(1, 30),
)
def test_hunks_are_found_at_an_offset(a_lines, b, end, shift):
    head = "".join(f"head {k}\n" for k in range(4))  # no hunk at line 1: git pins those there
    a = head + "\n".join(a_lines) + ("\n" if end else "")
    b = head + b
    assume(a != b)
    top = "".join(f"inserted {k}\n" for k in range(shift))
    assert apply(parse(make_diff(a, b))[0], top + a) == top + b


DIFFISH = st.sampled_from(
    [
        *("diff --git a/x b/x", 'diff --git "a/\\303" b/y', "new file mode 100644"),
        *("deleted file mode 100644", "rename from x", "rename to y", "Binary files differ"),
        *("--- a/x", "+++ b/x", "--- /dev/null", "+++ /dev/null", "-- ", "", "a"),
        *("@@ -1 +1 @@", "@@ -1,2 +1,2 @@", "@@ -0,0 +1 @@", "@@ -1 +0,0 @@", "@@ bad"),
        *(" a", "-a", "+b", "\\ No newline at end of file"),
    ]
)


@settings(max_examples=500)
@given(st.one_of(st.text(), st.lists(DIFFISH | st.text(max_size=5)).map("\n".join)), st.text())
def test_parse_and_apply_raise_only_diff_error(text, original):
    try:
        patches = parse(text)
    except DiffError as exc:
        assert "\n" not in str(exc)
        return
    for patch in patches:
        try:
            apply(patch, original if patch.old_path else None)
        except DiffError as exc:
            assert "\n" not in str(exc)


# --- formats -------------------------------------------------------------------------------


def test_bare_paths_timestamps_no_trailing_newline_and_crlf_transport():
    diff = "--- f.txt\t2024-01-01 10:00:00\n+++ f.txt\t2024-01-02 10:00:00\n@@ -1 +1 @@\n-a\n+b"
    assert parse(diff) == [FilePatch("f.txt", "f.txt", (Hunk(1, 1, 1, 1, ("-a", "+b")),))]
    assert parse(diff.replace("\n", "\r\n") + "\r\n") == parse(diff)


def test_prefixes_are_stripped_only_as_a_pair():
    assert parse("--- a/x\n+++ a/x\n@@ -1 +1 @@\n-a\n+b\n")[0].new_path == "a/x"
    assert parse("--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+b\n")[0].new_path == "x"


def test_lf_diff_keeps_crlf_file_endings():
    diff = "--- a/w\n+++ b/w\n@@ -1,2 +1,3 @@\n one\n+new\n two\n"
    assert apply(parse(diff)[0], "one\r\ntwo\r\n") == "one\r\nnew\r\ntwo\r\n"


def test_blank_context_line_without_its_space():
    diff = "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n\n-c\n+d\n"
    assert apply(parse(diff)[0], "a\n\nc\n") == "a\n\nd\n"


def test_format_patch_signature_is_not_part_of_the_hunk():
    diff = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n-- \n2.39.5\n"
    assert apply(parse(diff)[0], "a\n") == "b\n"


def test_touched_files():
    diff = (
        "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"
        "--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"
        "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+n\n"
    )
    assert touched_files(diff) == ["x.py", "gone.py", "new.py"]


def test_later_patches_see_earlier_ones(tmp_path):
    create = "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+a\n"
    modify = "--- a/n.txt\n+++ b/n.txt\n@@ -1 +1 @@\n-a\n+b\n"
    assert check(create + modify, str(tmp_path)) == []
    assert check(modify + create, str(tmp_path)) == ["n.txt: file not found (the diff modifies it)"]


# --- messages ------------------------------------------------------------------------------

APP = "".join(f"line {n}\n" for n in range(1, 10)) + "def f(x):\n    return y\n" + "tail\n" * 5


def test_hunk_does_not_apply_message(tmp_path):
    os.mkdir(tmp_path / "src")
    (tmp_path / "src" / "app.py").write_text(APP)
    diff = (
        "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n-line 1\n+LINE 1\n line 2\n"
        "@@ -10,4 +10,5 @@\n def f(x):\n-    return x\n+    x += 1\n+    return x\n tail\n tail\n"
    )
    assert check(diff, str(tmp_path), "src/app.py") == [
        "hunk 2 (@@ -10,4 +10,5 @@) of src/app.py does not apply: "
        'line 11 expected "    return x" but found "    return y"'
    ]


def test_file_not_found_and_already_exists(tmp_path):
    modify = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-a\n+b\n"
    assert check(modify, str(tmp_path)) == ["src/app.py: file not found (the diff modifies it)"]
    delete = "--- a/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"
    assert check(delete, str(tmp_path)) == ["x: file not found (the diff deletes it)"]
    (tmp_path / "x").write_text("a\n")
    create = "--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+a\n"
    assert check(create, str(tmp_path)) == ["x: file already exists (the diff creates it)"]


def test_deleting_requires_the_whole_content(tmp_path):
    (tmp_path / "x").write_text("a\nb\n")
    delete = "--- a/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"
    assert check(delete, str(tmp_path)) == [
        'x: the diff deletes the file but leaves lines in it, like "b"'
    ]


def parse_error(text: str) -> str:
    with pytest.raises(DiffError) as caught:
        parse(text)
    return str(caught.value)


def test_not_a_diff():
    assert check("just some prose\n", ".") == ["not a unified diff: no hunk header found"]
    assert parse_error("--- a/x\n+++ b/x\n") == "x: no hunk header found"
    assert parse_error("@@ -1 +1 @@\n-a\n+b\n") == "line 1: hunk without a ---/+++ header before it"
    assert (
        parse_error("--- a/x\n+++ b/x\n@@ -1 +1\n")
        == "hunk 1 of x: malformed hunk header '@@ -1 +1'"
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (" a\n-b\n+c\n", "hunk 1 of a.py: header says 3 old lines, body has 2"),
        (" a\n-b\n-c\n-d\n+e\n", "hunk 1 of a.py: header says 3 old lines, body has 4"),
        (" a\n-b\n-c\n", "hunk 1 of a.py: header says 3 new lines, body has 1"),
    ],
)
def test_wrong_line_counts(body, message):
    assert parse_error("--- a/a.py\n+++ b/a.py\n@@ -1,3 +1,3 @@\n" + body) == message


def test_short_hunk_before_the_next_file_is_a_count_error():
    # (had the two header lines been exactly what the hunk lacks, they would count as its body)
    first = "--- a/a.py\n+++ b/a.py\n@@ -1,4 +1,3 @@\n a\n-b\n+c\n"
    second = "--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-x\n+y\n"
    assert parse_error(first + second) == "hunk 1 of a.py: header says 4 old lines, body has 2"


def test_overlapping_hunks():
    diff = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n@@ -2 +2 @@\n-c\n+d\n"
    assert parse_error(diff) == "hunk 2 (@@ -2,1 +2,1 @@) of f overlaps hunk 1"


def test_newline_at_end_of_file_is_honoured():
    diff = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n"
    assert apply(parse(diff)[0], "a") == "b\n"
    with pytest.raises(DiffError) as caught:
        apply(parse(diff)[0], "a\n")
    assert str(caught.value) == (
        "hunk 1 (@@ -1,1 +1,1 @@) of f does not apply: "
        'line 1 expected "a" (no newline at end of file) but found "a"'
    )


def test_expected_file(tmp_path):
    (tmp_path / "b.py").write_text("a\n")
    diff = "--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-a\n+b\n"
    assert check(diff, str(tmp_path), "./b.py") == []
    assert check(diff, str(tmp_path), "a.py") == [
        "b.py: the diff touches this file but the change is for a.py"
    ]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/etc/passwd", "/etc/passwd: absolute paths are not allowed"),
        ("../outside.txt", "../outside.txt: '..' is not allowed in paths"),
        ("src/../../x", "src/../../x: '..' is not allowed in paths"),
        ("link/secret", "link/secret: resolves outside the project root"),
    ],
)
def test_paths_must_stay_inside_the_root(tmp_path, path, message):
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(tmp_path, root / "link")
    (tmp_path / "secret").write_text("a\n")
    diff = f"--- {path}\n+++ {path}\n@@ -1 +1 @@\n-a\n+b\n"
    assert check(diff, str(root)) == [message]


def test_git_header_alone_is_not_a_patch_but_a_mode_change_is():
    assert parse_error("diff --git a/x b/x\nindex 1..2\n") == "x: no hunk header found"
    assert parse("diff --git a/x b/x\nold mode 100644\nnew mode 100755\n") == [
        FilePatch("x", "x", ())
    ]
    assert parse_error("diff --git a/x b/x\nBinary files a/x and b/x differ\n") == (
        "x: binary patches are not supported"
    )
