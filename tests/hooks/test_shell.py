"""The guard's shell parser: simple commands, words, redirections, and never an exception."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hooks import shell

ARITH = shell.ARITHMETIC


def argvs(text):
    commands, error = shell.parse(text)
    assert error is None, error
    return [c.argv for c in commands]


def redirects(text):
    commands, error = shell.parse(text)
    assert error is None, error
    return [(r.fd, r.op, r.target) for c in commands for r in c.redirects]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ls -la", [["ls", "-la"]]),
        ("echo 'a b' \"c d\" e\\ f", [["echo", "a b", "c d", "e f"]]),
        ("echo 'a;b' \"x && y\"", [["echo", "a;b", "x && y"]]),
        ("a; b && c || d | e |& f & g", [["a"], ["b"], ["c"], ["d"], ["e"], ["f"], ["g"]]),
        ("a\nb", [["a"], ["b"]]),
        ("r''m \\rm \"r\"m", [["rm", "rm", "rm"]]),
        ("echo $'a\\tb' $'\\x72\\155'", [["echo", "a\tb", "rm"]]),
        ('echo "a\\"b" "\\$x"', [["echo", 'a"b', "$x"]]),
        ("ls # a comment; rm x", [["ls"]]),
        ("echo a#b", [["echo", "a#b"]]),
        ("ls \\\n -la", [["ls", "-la"]]),
        ("(a; b)", [["a"], ["b"]]),
        ("{ a; b; }", [["a"], ["b"]]),
        ("if a; then b; elif c; then d; else e; fi", [["a"], ["b"], ["c"], ["d"], ["e"]]),
        ("for x in 1 2; do a $x; done", [[], ["a", "$x"]]),
        ("for ((i=0; i<3; i++)); do a; done", [[ARITH, "i=0; i<3; i++"], ["a"]]),
        ("while a; do b; done", [["a"], ["b"]]),
        ("until a; do b; done", [["a"], ["b"]]),
        ("case $x in a|b) c;; (d) e;; *) ;; esac", [["c"], ["e"]]),
        ("f() { a; }", [["a"]]),
        ("function f { a; }", [["a"]]),
        ("! a | b", [["a"], ["b"]]),
        ("[[ a < b && ( c ) ]]", [["[[", "a", "<", "b", "&&", "(", "c", ")", "]]"]]),
        ("(( x = 1 + 2 ))", [[ARITH, " x = 1 + 2 "]]),
        ("(( 1 + 2 ))", []),
        ("echo $[1<<2]\nrm -rf src", [["echo", "$[1<<2]"], ["rm", "-rf", "src"]]),
        ("ls !(<<EOF)\nrm x\nEOF", [["ls", "!(<<EOF)"], ["rm", "x"], ["EOF"]]),
        ("echo ${a[$i]}", [[ARITH, "${a[$i]}"], ["echo", "${a[$i]}"]]),
        ("echo $((1 + (2 * 3)))", [["echo", "$((1 + (2 * 3)))"]]),
        ("A=1 B=2 cmd arg", [["cmd", "arg"]]),
        ("A=(1 2 3)", [[]]),
        ("time ls", [["time", "ls"]]),
    ],
)
def test_simple_commands_are_found(text, expected):
    assert argvs(text) == expected


@pytest.mark.parametrize(
    ("text", "inner"),
    [
        ("echo $(rm x)", ["rm", "x"]),
        ("echo `rm x`", ["rm", "x"]),
        ('echo "$(rm x)"', ["rm", "x"]),
        ("echo $(echo $(rm x))", ["rm", "x"]),
        ("echo `echo \\`rm x\\``", ["rm", "x"]),
        ("echo ${X:-$(rm x)}", ["rm", "x"]),
        ("echo $(( $(rm x) + 1 ))", ["rm", "x"]),
        ("echo $((rm x) )", ["rm", "x"]),
        ("diff <(rm x) >(ls)", ["rm", "x"]),
        ("A=$(rm x) ls", ["rm", "x"]),
        ("cat <<EOF\n$(rm x)\nEOF", ["rm", "x"]),
        ("x=$(case a in a) rm x;; esac)", ["rm", "x"]),
    ],
)
def test_commands_inside_substitutions_are_found(text, inner):
    assert inner in argvs(text)


def test_quoted_here_doc_bodies_are_skipped():
    assert argvs("cat <<'EOF'\nrm x\n$(rm y)\nEOF\nls") == [["cat"], ["ls"]]
    assert argvs("cat <<-END\n\trm x\n\tEND\nls") == [["cat"], ["ls"]]
    assert argvs('cat <<"A" <<B\nrm a\nA\nrm b\nB\npwd') == [["cat"], ["pwd"]]


def test_unquoted_substitutions_have_the_expands_flag():
    commands, _ = shell.parse("$CMD 'lit$x' \"$y\" `a` *.py")
    flags = commands[-1].flags
    assert flags[0] & shell.EXPANDS
    assert flags[1] == 0
    assert flags[2] & shell.EXPANDS
    assert flags[3] & shell.EXPANDS
    assert flags[4] == shell.GLOBS


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a > f", [(None, ">", "f")]),
        (
            "a >> f 2> e &> b &>> c",
            [(None, ">>", "f"), ("2", ">", "e"), (None, "&>", "b"), (None, "&>>", "c")],
        ),
        ("a >| f <> g < h", [(None, ">|", "f"), (None, "<>", "g"), (None, "<", "h")]),
        (
            "a 2>&1 >&2 >&- 3<&0",
            [("2", ">&", "1"), (None, ">&", "2"), (None, ">&", "-"), ("3", "<&", "0")],
        ),
        ("a <<< 'text'", [(None, "<<<", "text")]),
        ("a <<EOF\nbody\nEOF", [(None, "<<", "EOF")]),
        ("{ a; } > f", [(None, ">", "f")]),
        ("while a; do b; done > f", [(None, ">", "f")]),
        ("> f", [(None, ">", "f")]),
        ("a 12>f", [("12", ">", "f")]),
    ],
)
def test_redirections(text, expected):
    assert redirects(text) == expected


def test_assignments_are_kept_apart_from_argv():
    (command,) = shell.parse("A=1 B+=2 C[0]=3 cmd D=4")[0]
    assert command.assignments == ["A=1", "B+=2", "C[0]=3"]
    assert command.argv == ["cmd", "D=4"]


@pytest.mark.parametrize(
    "text",
    [
        "echo 'open",
        'echo "open',
        "echo $(open",
        "echo `open",
        "echo ${open",
        "echo $'open",
        "ls )",
        "if a; then b",
        "for x in a; do b",
        "case x in a) b",
        "{ a",
        "( a",
        "a |",
        "a && || b",
        "then",
        "a > ",
        "f() {",
        "[[ a",
        "$(" * 200 + "x",
        "(" * 200 + "x",
        "`" * 3,
    ],
)
def test_incomplete_input_is_a_parse_error_not_an_exception(text):
    error = shell.parse(text)[1]
    assert isinstance(error, str) and error


def test_not_a_string_is_a_parse_error():
    assert shell.parse(None)[1] == "not a string"


SHELLISH = st.text(alphabet="ab $(){}[]<>|&;'\"\\`#\n\t=-!*?~EOF0123456789", max_size=80)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=200), SHELLISH))
def test_parse_never_raises(text):
    commands, error = shell.parse(text)
    assert error is None or isinstance(error, str)
    for command in commands:
        assert len(command.argv) == len(command.flags)
        assert all(isinstance(word, str) for word in command.argv)
