"""Questions, choices and configuration: bad input gets a precise, one-line answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO, Plan
from tests.conftest import run_in_process as run  # `plan` and `planner` in this process


def question(**fields: object) -> dict:
    return {"category": "scope", "kind": "yes_no", "text": "Also wave?", **fields}


@pytest.mark.parametrize(
    "payload, message",
    [
        (
            '[{"category": "scope",}]',
            "not valid JSON: Expecting property name enclosed in double quotes at line 1 column 23",
        ),
        ('```json\n[\n  {"kind": "x"\n]\n```', "at line 3 column 1"),
        ("{}", "expected a non-empty list of questions"),
        (
            json.dumps([question(kind="multi")]),
            "questions[0].kind: 'multi' is not one of choice, yes_no, text",
        ),
        (
            json.dumps([question(), question(text="")]),
            "questions[1].text: required text is missing",
        ),
        (json.dumps([question(colour="red")]), "questions[0]: unknown key 'colour'"),
        (json.dumps([question(kind="choice", options=["only one"])]), "at least two options"),
        (
            json.dumps([question(kind="choice", options=["a", "b"], recommended=3)]),
            "questions[0].recommended: 3 is not an option number (1 to 2)",
        ),
        (json.dumps([question(kind="text", options=["a"])]), "a text question takes no options"),
        (json.dumps([question(), question(text="also WAVE")]), "questions[1]: Q-001 already asks"),
    ],
)
def test_question_import_says_what_is_wrong(
    plan: Plan, session_dir: Path, payload: str, message: str
) -> None:
    before = (session_dir / "context.json").read_bytes()
    done = plan("question", "import", "-", input=payload, code=2)
    assert message in done.stderr, done.stderr
    assert (session_dir / "context.json").read_bytes() == before  # all or nothing


def test_imported_questions_accept_the_forms_an_llm_writes(plan: Plan) -> None:
    fenced = (
        "Sure!\n```json\n"
        + json.dumps(
            {
                "questions": [
                    {
                        "id": 1,
                        "category": "technical",
                        "kind": "choice",
                        "text": "Which store?",
                        "options": ["sqlite", {"label": "postgres", "description": "server"}],
                        "recommended": "postgres",
                    },
                    question(recommended=2),
                ]
            }
        )
        + "\n```\nHope this helps."
    )
    assert plan.ids("question", "import", "-", input=fenced) == ["Q-001", "Q-002"]
    listed = json.loads(plan("question", "list", "--json").stdout)
    assert listed[0]["recommended"] == "postgres" and listed[1]["recommended"] == "no"
    assert [o["label"] for o in listed[1]["options"]] == ["yes", "no"]


def test_a_question_on_record_is_refused_as_a_duplicate(plan: Plan) -> None:
    plan.ids("question", "add", "--category", "scope", "--kind", "text", "--text", "Which users?")
    plan("question", "answer", "Q-001", "admins")
    done = plan(
        "question",
        "add",
        "--category",
        "scope",
        "--kind",
        "text",
        "--text",
        "  which USERS ",
        code=2,
    )
    assert "Q-001 already asks this" in done.stderr


@pytest.mark.parametrize(
    "kind, options, answer, recorded",
    [
        ("choice", ["sqlite", "postgres"], "2", "postgres"),
        ("choice", ["sqlite", "postgres"], "SQLite", "sqlite"),
        ("yes_no", [], "Y", "yes"),
        ("yes_no", [], "no", "no"),
        ("text", [], " admins only ", "admins only"),
    ],
)
def test_answers_are_normalised(
    plan: Plan, kind: str, options: list[str], answer: str, recorded: str
) -> None:
    plan(
        "question",
        "add",
        "--category",
        "scope",
        "--kind",
        kind,
        "--text",
        "Q?",
        *[arg for o in options for arg in ("--option", o)],
    )
    plan("question", "answer", "Q-001", answer)
    assert json.loads(plan("question", "list", "--json").stdout)[0]["answer"] == recorded


@pytest.mark.parametrize(
    "args, message",
    [
        (["Q-001", "maybe"], "answer yes or no"),
        (["Q-001"], "give the answer, or skip or assume it: one of them"),
        (["Q-001", "yes", "--skip"], "one of them"),
        (["Q-001", "yes", "--assume"], "one of them"),
        (["Q-009", "yes"], "no question Q-009"),
        (["Q-001", "  "], "the answer is empty"),
    ],
)
def test_bad_answers_are_refused(plan: Plan, args: list[str], message: str) -> None:
    plan("question", "add", "--category", "scope", "--kind", "yes_no", "--text", "Q?")
    assert message in plan("question", "answer", *args, code=2).stderr


def test_plan_ask_without_a_terminal_explains_how_to_answer(plan: Plan) -> None:
    assert "No open questions" in plan("ask").stdout
    plan("question", "add", "--category", "scope", "--kind", "yes_no", "--text", "Wave too?")
    done = plan("ask", code=3)  # stdin is a pipe here: nothing asked, and the agent can tell
    assert "no terminal here" in done.stderr and "plan question answer Q-n" in done.stderr
    assert "Q-001 Wave too?" in done.stderr and done.stdout == ""
    assert "nobody to answer: plan question answer Q-n --assume" in done.stderr


def test_assume_records_the_recommended_option_as_an_assumption(
    plan: Plan, session_dir: Path
) -> None:
    """Nobody can answer (a headless run): the recommended option, marked assumed, with its
    line in the context's assumptions, as non-interactive mode records it."""
    payload = [question(kind="choice", options=["inline", "module"], recommended=2),
               question(text="Say why?", kind="text")]  # fmt: skip
    plan("question", "import", "-", input=json.dumps(payload))
    plan("question", "answer", "Q-001", "--assume")
    plan(
        "apply",
        "-",
        input=json.dumps([{"op": "question answer", "args": {"id": "Q-002", "assume": True}}]),
    )
    q1, q2 = json.loads(plan("question", "list", "--json").stdout)
    assert (q1["answer"], q1["assumed"], q1["skipped"]) == ("module", True, False)
    assert (q2["answer"], q2["assumed"], q2["skipped"]) == (None, True, True)  # none recommended
    assumptions = json.loads((session_dir / "context.json").read_text())["assumptions"]
    assert assumptions == [
        "Q-001 Also wave?: assumed 'module' (nobody to answer)",
        "Q-002 Say why?: no answer: nobody to answer",
    ]
    plan("context", "add", "assumptions", "ascii names only")
    shown = plan("review", "show").stdout.split("Open questions and assumptions:\n")[1]
    assert shown.splitlines()[:3] == [
        "  Q-001 (assumed) Also wave? -> module",
        "  Q-002 (assumed) Say why? -> no answer",
        "  ascii names only",
    ]  # each assumption once: the question's own line stands for its assumptions entry
    plan("question", "answer", "Q-001", "inline")
    assert "Q-001" not in plan("review", "show").stdout.split("assumptions:")[1]


@pytest.mark.parametrize(
    "options, message",
    [
        ([{"name": "a", "recommended": True}], "at least two options"),
        ([{"name": "a"}, {"name": "b"}], "mark exactly one option"),
        (
            [{"name": "a", "recommended": True}, {"name": "b", "pros": "fast"}],
            "options[1].pros: expected a list of strings",
        ),
        ([{"name": "a", "recommended": True}, {"title": "b"}], "options[1]: unknown key 'title'"),
    ],
)
def test_choice_import_says_what_is_wrong(plan: Plan, options: list, message: str) -> None:
    payload = json.dumps({"choices": [{"topic": "Store", "options": options}]})
    assert message in plan("choice", "import", "-", input=payload, code=2).stderr


def test_a_bad_option_json_names_the_option_the_user_typed(plan: Plan) -> None:
    """state/ names the field (option_json 2); the command says the option (--option-json 2)."""
    good = '{"name": "sqlite"}'
    args = ("choice", "add", "--topic", "T", "--option-json", good, "--option-json", "{bad")
    assert "plan: --option-json 2: not valid JSON" in plan(*args, code=2).stderr


def test_choice_pick_writes_the_decision_and_rejected_alternatives(plan: Plan) -> None:
    plan(
        "choice",
        "add",
        "--topic",
        "Store",
        "--option-json",
        '{"name": "sqlite", "pros": ["no server"], "recommended": true}',
        "--option-json",
        '{"name": "postgres", "cons": ["needs a server", "ops work"]}',
    )
    assert plan.ids("choice", "pick", "D-001", "OPT-B", "--rationale", "we have one") == [
        "DL-001",
        "RA-001",
    ]
    shown = json.loads(plan("show", "--json").stdout)["planning_context"]
    assert shown["decision_log"][0]["decision"] == "Store: postgres"
    assert shown["rejected_alternatives"][0] == {
        "id": "RA-001",
        "alternative": "Store: sqlite",
        "decision_ref": "DL-001",
        "rejection_reason": "postgres was picked instead",
    }
    assert (
        "was picked" in plan("choice", "pick", "D-001", "OPT-A", "--rationale", "r", code=2).stderr
    )
    plan("choice", "pick", "D-001", "OPT-Z", "--rationale", "r", code=2)


@pytest.mark.parametrize(
    "config, message",
    [
        ("[tool.planner]\ncolour = 'blue'\n", "unknown key 'colour'"),
        ("[tool.planner]\nqr_max_iterations = 0\n", "qr_max_iterations: 0 is less than 1"),
        ("[tool.planner]\napproval_timeout = 'soon'\n", "'soon' is not a duration"),
        ("[tool.planner]\ndepth = 'deep'\n", "'deep' is not one of quick, standard"),
        ("[tool.planner]\ninteractive = 'yes'\n", "interactive: expected boolean"),
        ("[tool.planner\n", "cannot read the configuration"),
        ("[tool.planner]\nquestions_min = 6\n", "questions_min is larger than questions_max"),
    ],
)
def test_configuration_errors_name_the_file_and_key(
    project: Path, config: str, message: str
) -> None:
    (project / "pyproject.toml").write_text(config)
    done = run("planner", "--step", "1", "--task", "t", cwd=project)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "pyproject.toml" in done.stderr or "questions_min" in message
    assert not (project / ".planner").exists()


def test_configuration_from_planner_config_toml_and_durations(project: Path) -> None:
    (project / ".planner").mkdir()
    (project / ".planner" / "config.toml").write_text(
        "[planner]\napproval_timeout = '1h'\nquestion_timeout = '90s'\nguard = 'strict'\n"
    )
    done = run("planner", "--step", "1", "--task", "t", cwd=project)
    assert done.returncode == 0, done.stderr
    [state] = [p for p in (project / ".planner").iterdir() if p.is_dir()]
    config = json.loads((state / "session.json").read_text())["config"]
    assert (config["approval_timeout"], config["question_timeout"], config["guard"]) == (
        3600,
        90,
        "strict",
    )


def test_resume_refuses_a_failed_session(plan: Plan, session_dir: Path) -> None:
    plan("fail", "--error", "out of disk")
    done = plan("resume", session_dir.name, code=4)
    assert "failed (out of disk); it cannot be resumed" in done.stderr


def test_the_words_the_commands_offer_are_the_models() -> None:
    """--category, --kind and `context add FIELD` offer exactly what the models accept."""
    from typing import get_args

    from state.ops import context_ops, question_ops
    from state.storage import models

    fields = models.Question.model_fields
    assert get_args(fields["category"].annotation) == question_ops.CATEGORIES
    assert get_args(fields["kind"].annotation) == question_ops.KINDS
    lists = [n for n, f in models.Context.model_fields.items() if f.annotation == list[str]]
    assert list(context_ops.LISTS) == lists


TEMPLATES = str(REPO / "shared" / "templates")


def add_store_question(plan: Plan, kind: str = "choice") -> None:
    options = ["--option", "sqlite", "--option", "postgres server"] if kind == "choice" else []
    plan("question", "add", "--category", "technical", "--kind", kind, "--text", "Which?",
         *options)  # fmt: skip


@pytest.mark.parametrize(
    "text, answer, condition",
    [
        ("1", "sqlite", None),
        ("b", "postgres server", None),
        ("OPT-B", "postgres server", None),
        ("Postgres Server", "postgres server", None),
        ("1 - and also accept a bare number", "sqlite", "and also accept a bare number"),
        ("B) if ops agree", "postgres server", "if ops agree"),
        ("sqlite, for now", "sqlite", "for now"),
        ("1 - but never more than 3", "sqlite", "but never more than 3"),
        ("b: keep it (round 1)", "postgres server", "keep it (round 1)"),
        ("2 -- -v only", "postgres server", "-v only"),
    ],
)
def test_a_choice_answer_resolves_to_an_option_and_keeps_the_rest(
    plan: Plan, text: str, answer: str, condition: str | None
) -> None:
    add_store_question(plan)
    assert plan.ids("question", "answer", "Q-001", text) == ["Q-001"]
    q = plan.json("show", "Q-001")
    assert (q["answer"], q["condition"]) == (answer, condition)


@pytest.mark.parametrize("text", ["whatever the team uses", "a bare number", "c", "3"])
def test_a_choice_answer_naming_no_option_is_refused_with_the_options(
    plan: Plan, text: str
) -> None:
    add_store_question(plan)
    done = plan("question", "answer", "Q-001", text, code=2)
    assert "1) sqlite, 2) postgres server" in done.stderr or "1 to 2" in done.stderr


@pytest.mark.parametrize("text", ["other: read stdin instead", "Other - read stdin instead"])
def test_a_choice_none_of_whose_options_fits_takes_other(plan: Plan, text: str) -> None:
    """The person's feedback overrode the answer on record (the termcolor trial): the new
    answer is recorded as said, as a question tool's "Other" does; a typo is still refused."""
    add_store_question(plan)
    plan("question", "answer", "Q-001", "1")
    assert plan.ids("question", "answer", "Q-001", text) == ["Q-001"]
    q = plan.json("show", "Q-001")
    assert (q["answer"], q["condition"]) == ("read stdin instead", None)
    refused = plan("question", "answer", "Q-001", "sqlit", code=2)
    assert 'none fits: "other: THE ANSWER"' in refused.stderr
    plan("question", "add", "--category", "scope", "--kind", "yes_no", "--text", "Also -q?")
    assert "answer yes or no" in plan("question", "answer", "Q-002", "other: x", code=2).stderr


def test_a_yes_no_answer_with_a_condition_is_yes_and_the_condition(plan: Plan) -> None:
    add_store_question(plan, "yes_no")
    plan("question", "answer", "Q-001", "yes, but only for admins")
    q = plan.json("show", "Q-001")
    assert (q["answer"], q["condition"]) == ("yes", "but only for admins")
    listed = plan("question", "list").stdout
    assert "-> yes (condition: but only for admins)" in listed
    plan("question", "answer", "Q-001", "n")
    assert plan.json("show", "Q-001")["condition"] is None


def test_a_yes_no_answer_by_number_is_its_option_as_the_prompt_says(plan: Plan) -> None:
    """The ordered-set trial: options ["No, leave it out of scope", "Yes"] and answer "1"
    were recorded as "yes" ("1" read as true); a number is the option's, from 1."""
    plan("question", "add", "--category", "scope", "--kind", "yes_no", "--text", "Fix pop?",
         "--option", "No, leave it out of scope", "--option", "Yes")  # fmt: skip
    plan("question", "answer", "Q-001", "1")
    assert plan.json("show", "Q-001")["answer"] == "No, leave it out of scope"
    plan("question", "answer", "Q-001", "2 - and pop(0) too")
    assert (plan.json("show", "Q-001")["answer"], plan.json("show", "Q-001")["condition"]) == (
        "Yes",
        "and pop(0) too",
    )
    assert "1 to 2" in plan("question", "answer", "Q-001", "3", code=2).stderr
    assert "answer yes or no" in plan("question", "answer", "Q-001", "b", code=2).stderr


def test_the_condition_is_shown_with_the_users_words() -> None:
    from shared.render import render

    q = {"id": "Q-001", "text": "Wave too?", "answer": "yes", "assumed": False}

    def user(**fields: object) -> str:
        return render("_user.j2", {"answers": [{**q, **fields}], "feedback": []}, [TEMPLATES])

    text = user(condition="but only for admins")
    assert "Q-001 Wave too? -> yes: but only for admins\n" in text
    assert "condition" not in user(condition=None) + user()


def test_the_trials_yes_answer_with_words_after_it_reads_as_the_person_said_it(
    plan: Plan,
) -> None:
    add_store_question(plan, "yes_no")
    said = "pass condition through the cachetools.func decorators (review round 1)"
    plan("question", "answer", "Q-001", f"yes: {said}")
    assert plan.json("show", "Q-001")["condition"] == said
    assert f"Q-001 Which? -> yes: {said}\n" in plan("show", "--answers").stdout + "\n"


JOINS = [": ", ", ", " - ", " — ", ") ", "; ", ". ", ":", " -- "]
WORDS = st.text(
    st.one_of(st.sampled_from(":()[]-,.;'\" "), st.characters(blacklist_categories=("Cs", "Cc"))),
    min_size=1,
).map(str.strip)


@settings(max_examples=300, deadline=None)
@given(
    words=WORDS,
    join=st.sampled_from(JOINS),
    said=st.sampled_from(["yes", "No", "y", "1", "b", "OPT-B", "Postgres Server"]),
)
def test_an_answers_condition_keeps_every_character_of_the_persons_words(
    words: str, join: str, said: str
) -> None:
    """Whatever follows an option or yes/no and what joins it (": ", ") ", " - "), the
    condition recorded is the person's words whole, and the prompts show them on the
    answer's line: `-> yes: pass … (review round 1)`."""
    from shared.render import render
    from state.ops.question_ops import normal_answer

    assume(words and words[0] not in "-–—:;,.)")
    kind = "yes_no" if said.lower() in ("yes", "no", "y") else "choice"
    labels = ["sqlite", "postgres server"] if kind == "choice" else []
    q = {"id": "Q-001", "kind": kind, "text": "Which?", "assumed": False,
         "options": [{"label": label} for label in labels]}  # fmt: skip
    answer, condition = normal_answer(q, f"{said}{join}{words}")  # type: ignore[arg-type]
    assert condition == words
    shown = render("_user.j2", {"answers": [{**q, "answer": answer, "condition": condition}],
                                "feedback": []}, [TEMPLATES])  # fmt: skip
    assert f"  Q-001 Which? -> {answer}: {words}\n" in shown
