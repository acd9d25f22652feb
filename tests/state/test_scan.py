"""`plan context scan` on real repositories: documents, changed files, change types, relevance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from state.errors import UsageError
from state.repo.scan import change_types, scan
from tests.conftest import Plan, git

NEUTRAL = "x = 1\n"


def write(root: Path, *paths: str, text: str = "# notes\n") -> None:
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def commit(root: Path, message: str = "more") -> str:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)
    return git(root, "rev-parse", "HEAD").strip()


DOCUMENTS = [
    "AGENTS.md",
    "ARCHITECTURE.md",
    "CLAUDE.md",
    "CONTRIBUTING.md",
    "README.md",
    "SECURITY.md",
    "STORE_DESIGN.md",
    ".github/SECURITY.md",
    "adr/0003-queue.md",
    "docs/adr/0001-use-sqlite.md",
    "docs/architecture/overview.md",
    "docs/decisions/0002-rest.md",
    "docs/guide/design-notes.md",
]
NOT_DOCUMENTS = [
    "CHANGELOG.md",
    "docs/guide.txt",
    "src/security.py",
    "docs/adr/.gitkeep",
    "node_modules/pkg/README.md",
    ".venv/lib/README.md",
    "ignored/README.md",
]


def test_documents_are_found_and_ignored_or_vendored_ones_are_not(project: Path) -> None:
    write(project, *DOCUMENTS, *NOT_DOCUMENTS)
    (project / ".gitignore").write_text("ignored/\nnode_modules/\n")
    commit(project)
    git(project, "add", "-f", "node_modules/pkg/README.md")  # vendored and tracked: still skipped
    write(project, "docs/adr/0004-untracked.md")  # untracked but not ignored: found
    found = scan(str(project), None)["documents"]
    assert found == [*DOCUMENTS[:10], "docs/adr/0004-untracked.md", *DOCUMENTS[10:]]


def test_documentation_sites_are_found(project: Path) -> None:
    """docs/ pages, mkdocs.yml and a sphinx source tree (issue 12: the scan missed them)."""
    site = ["mkdocs.yml", "docs/conf.py", "docs/index.rst", "docs/usage.md", "doc/api.md"]
    write(project, *site, "docs/source/conf.py", "src/conf.py", "docs/notes.txt")
    commit(project)
    found = scan(str(project), None)["documents"]
    assert found == ["README.md", *site[:1], *sorted(site[1:]), "docs/source/conf.py"]
    git(project, "rm", "-q", "docs/usage.md")
    write(project, "docs/usage.md", text="# new usage\n")
    gathered = scan(str(project), None)
    assert "docs" in gathered["change_types"]
    assert "mkdocs.yml" in gathered["relevant_documents"]["docs"]


def test_documents_outside_git_are_walked_to_a_depth_limit(tmp_path: Path) -> None:
    write(tmp_path, "README.md", "docs/adr/0001-x.md", "a/b/c/d/README.md", "a/b/c/d/e/README.md")
    write(tmp_path, "node_modules/x/README.md", "build/README.md", ".planner/s/README.md")
    gathered = scan(str(tmp_path), None, "tidy the docs")
    assert gathered["documents"] == ["README.md", "docs/adr/0001-x.md", "a/b/c/d/README.md"]
    assert gathered["base"] is None and gathered["changed_files"] == []
    assert gathered["change_types"] == ["docs"]  # from the task alone
    assert "Changed files: none listed (not a git repository)" in gathered["summary"]


def test_changed_files_are_modified_and_untracked_ones_since_head_or_base(project: Path) -> None:
    first = git(project, "rev-parse", "HEAD").strip()
    write(project, "src/later.py", text=NEUTRAL)
    commit(project)
    (project / "src" / "app.py").write_text(NEUTRAL)
    write(project, "src/new.py", ".planner/s/context.json", text=NEUTRAL)
    assert scan(str(project), None)["changed_files"] == ["src/app.py", "src/new.py"]
    older = scan(str(project), first)
    assert older["changed_files"] == ["src/app.py", "src/later.py", "src/new.py"]
    assert older["base"] == first
    assert f"Changed since {first} (3 files): src/app.py, src/later.py" in older["summary"]


def test_before_the_first_commit_every_file_is_new(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    write(tmp_path, "README.md", "src/login.py", text=NEUTRAL)
    gathered = scan(str(tmp_path), None)
    assert gathered["base"] is None
    assert gathered["changed_files"] == ["README.md", "src/login.py"]
    assert gathered["change_types"] == ["auth", "docs"]
    assert "Nothing committed yet (2 files): README.md, src/login.py" in gathered["summary"]


@pytest.mark.parametrize("ref", ["nope", "-x", "HEAD~5"])
def test_a_bad_base_is_a_usage_error_naming_the_field_and_the_ref(project: Path, ref: str) -> None:
    with pytest.raises(UsageError) as raised:
        scan(str(project), ref)
    assert raised.value.message.startswith(f"base {ref}: not a commit in {project}")
    assert raised.value.field == "base"  # the command says --base (test below)


@pytest.mark.parametrize(
    ("path", "types"),
    [
        ("src/auth/views.py", {"auth", "api"}),
        ("app/login_form.tsx", {"auth", "ui"}),
        ("db/migrations/0002_users.sql", {"database"}),
        ("shop/models.py", {"database"}),
        ("api/orders.py", {"api"}),
        ("proto/orders.proto", {"api"}),
        ("web/components/Cart.vue", {"ui"}),
        ("site/templates/base.html", {"ui"}),
        ("tests/unit/helpers.py", {"tests"}),
        ("pkg/test_cart.py", {"tests"}),
        ("cmd/run_test.go", {"tests"}),
        ("web/cart.spec.ts", {"tests"}),
        ("config/app.yaml", {"config"}),
        ("setup.cfg", {"config"}),
        (".env.example", {"config"}),
        (".github/workflows/ci.yml", {"ci"}),
        (".gitlab-ci.yml", {"ci"}),
        ("Jenkinsfile", {"ci"}),
        ("pyproject.toml", {"dependencies"}),
        ("requirements-dev.txt", {"dependencies"}),
        ("web/package.json", {"dependencies"}),
        ("go.mod", {"dependencies"}),
        ("docs/guide.rst", {"docs"}),
        ("NOTES.md", {"docs"}),
        ("lib/crypto_box.py", {"security"}),
        ("web/csrf.py", {"security"}),
        ("Dockerfile", {"infra"}),
        ("docker-compose.yml", {"infra"}),
        ("deploy/main.tf", {"infra"}),
        ("k8s/app.yaml", {"infra"}),
        ("src/app.py", set()),
    ],
)
def test_each_change_type_is_detected_from_a_path(path: str, types: set[str]) -> None:
    assert set(change_types([path], "")) == types


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("if not check_password(user, given):", "auth"),
        ("db.execute('CREATE TABLE users (id INTEGER)')", "database"),
        ("@app.route('/orders')", "api"),
        ("render('<button>Buy</button>')", "ui"),
        ("import pytest", "tests"),
        ("TIMEOUT = settings.get('timeout')  # configuration", "config"),
        ("# runs in the CI pipeline", "ci"),
        ("# bump the dependencies", "dependencies"),
        ('"""See the README for the docstring style."""', "docs"),
        ("safe = sanitize(text)  # against XSS", "security"),
        ("# deploy with docker", "infra"),
    ],
)
def test_each_change_type_is_detected_from_added_lines(project: Path, line: str, kind: str) -> None:
    (project / "src" / "app.py").write_text(NEUTRAL + line + "\n")
    assert scan(str(project), None)["change_types"] == [kind]


def test_new_files_content_counts_and_undecodable_bytes_do_not_fail(project: Path) -> None:
    (project / "src" / "app.py").write_bytes(b"caf\xe9 = 1\n")  # latin-1, not UTF-8
    write(project, "src/jobs.py", text="engine = connect_database()\n")
    assert scan(str(project), None)["change_types"] == ["database"]


def test_the_task_names_change_types_before_any_file_changed(project: Path) -> None:
    gathered = scan(str(project), None, "Add login rate limiting")
    assert gathered["changed_files"] == []
    assert gathered["change_types"] == ["auth", "security"]


def test_relevant_documents_by_kind_by_path_words_and_agent_files(project: Path) -> None:
    docs = ["ARCHITECTURE.md", "CLAUDE.md", "CONTRIBUTING.md", "SECURITY.md"]
    adrs = ["docs/adr/0001-rest-api.md", "docs/adr/0002-auth-tokens.md"]
    write(project, *docs, *adrs, "web/CLAUDE.md", "cli/AGENTS.md", "docs/design/database.md")
    commit(project)
    write(project, "src/auth.py", "tests/test_auth.py", "web/views.py", text=NEUTRAL)
    gathered = scan(str(project), None)
    assert gathered["change_types"] == ["auth", "api", "tests"]
    assert gathered["relevant_documents"] == {
        "all": ["CLAUDE.md", "web/CLAUDE.md"],  # cli/AGENTS.md: nothing changed below cli/
        "auth": ["SECURITY.md", "docs/adr/0002-auth-tokens.md"],
        "api": ["ARCHITECTURE.md", "docs/adr/0001-rest-api.md", "docs/design/database.md"],
        "tests": ["CONTRIBUTING.md"],
    }
    assert gathered["summary"].splitlines()[-1] == (
        "Read first: CLAUDE.md (all), web/CLAUDE.md (all), SECURITY.md (auth), "
        "docs/adr/0002-auth-tokens.md (auth) (+4 more)"
    )


def test_the_summary_stays_short_for_a_hundred_documents(project: Path) -> None:
    write(project, *(f"docs/adr/{n:04}-decision-number-{n}.md" for n in range(1, 101)))
    write(project, "SECURITY.md", "ARCHITECTURE.md", "CONTRIBUTING.md")
    commit(project)
    write(project, *(f"src/auth/handler_{n}.py" for n in range(40)), text=NEUTRAL)
    gathered = scan(str(project), None, "add login rate limiting to the api")
    lines = gathered["summary"].splitlines()
    assert 3 <= len(lines) <= 6 and len(gathered["summary"]) <= 600
    assert len(gathered["documents"]) == 50
    assert lines[0].startswith("Documents (104 found, 50 kept): ARCHITECTURE.md, CONTRIBUTING.md,")
    assert lines[0].endswith(" (+99 more)")
    assert lines[1].startswith("Changed since HEAD (40 files): src/auth/handler_0.py,")
    assert lines[2] == "Topics (task, changed files): auth, api, security"
    assert lines[3].startswith("Read first: SECURITY.md (auth, security), ARCHITECTURE.md (api)")


def test_the_summary_leaves_out_change_types_when_none_is_detected(project: Path) -> None:
    summary = scan(str(project), None, "tidy up")["summary"]
    assert "Topics" not in summary and summary.startswith("Documents (")


def test_plan_context_scan_stores_the_scan_in_context_json(
    project: Path, session_dir: Path
) -> None:
    plan = Plan(project)
    first = git(project, "rev-parse", "HEAD").strip()
    write(project, "tests/test_farewell.py", text="def test_bye():\n    assert bye()\n")
    commit(project)
    (project / "src" / "app.py").write_text(NEUTRAL)
    assert plan("context", "scan").stdout == ""
    gathered = json.loads((session_dir / "context.json").read_text())["gathered"]
    assert gathered["base"] == "HEAD" and gathered["changed_files"] == ["src/app.py"]
    assert gathered["documents"] == ["README.md"] and gathered["scanned_at"]
    plan("context", "scan", "--base", first)
    gathered = json.loads((session_dir / "context.json").read_text())["gathered"]
    assert gathered["changed_files"] == ["src/app.py", "tests/test_farewell.py"]
    assert gathered["change_types"] == ["tests"]
    refused = plan("context", "scan", "--base", "no-such-branch", code=2)
    assert f"--base no-such-branch: not a commit in {project}" in refused.stderr
