"""`plan context scan`: the documents the project already has, the files changed since a base,
what kinds of change those are, and which documents each kind should read first.

Relevance: a change type reads the documents of its kinds (READ_FIRST) plus any document whose
path names one of the type's words; CLAUDE.md and AGENTS.md apply to every change, so they are
listed once under the key "all" (a nested one only when a changed file lies below it).
"""

from __future__ import annotations

import fnmatch
import os
import re

from state import clock
from state.errors import PreconditionFailed, UsageError
from state.repo.gitinfo import head_commit, run_git

TYPE_CHECKING = False
if TYPE_CHECKING:
    from state.storage.documents import Gathered

MAX_DOCUMENTS = 50  # the shallowest are kept: top-level documents matter most
MAX_RELEVANT = 8  # documents listed per change type
MAX_DEPTH = 4  # directory levels walked outside git
MAX_CONTENT = 200_000  # characters of added lines searched for words
MAX_FILE = 20_000  # bytes read from one new file
MAX_NEW_FILES = 20  # new files read
LISTING = 110  # characters of paths on one summary line
SKIP_DIRS = frozenset(
    {".git", "node_modules", ".venv", "venv", "__pycache__", ".planner", "dist", "build", ".tox"}
)
DOC_EXTS = frozenset({"", ".md", ".markdown", ".rst", ".txt", ".adoc"})
EXCEPT_PLANNER = ":(exclude,top).planner"  # sessions may be committed; they are not the change
ADR_DIRS = ("/adr/", "/docs/decisions/", "/doc/decisions/")

# change type: (path globs, matched against "/" + the lowercased path;
#               words and phrases, matched whole in the task and in the added lines)
CHANGE_RULES: dict[str, tuple[str, str]] = {
    "auth": ("*auth* *login* *session* *token* *password* *jwt* *permission*",
             "authentication, authenticate, authorization, authorize, login, logout, sign in, "
             "signup, password, oauth, jwt, access token, bearer, permission, credential, sso"),
    "database": ("*migration* */models/* */models.py *.sql */db/* */database/* *alembic*",
                 "db, sql, sqlite, postgres, postgresql, mysql, mongodb, migration, orm, "
                 "sqlalchemy, alembic, create table, alter table, insert into"),
    "api": ("*/api/* *routes* *router* *endpoint* *handlers* */views* *openapi* *swagger* "
            "*graphql* *.proto",
            "endpoint, route, graphql, grpc, openapi, swagger, webhook, status code"),
    "ui": ("*/components/* *.tsx *.jsx *.vue *.svelte *.css *.scss *.less *.html */templates/*",
           "frontend, button, css, html, react, vue, svelte, modal, dropdown, stylesheet"),
    "tests": ("*/test_*.py *_test.py *_test.go */tests/* */test/* */spec/* *.spec.[jt]s "
              "*.test.[jt]s */__tests__/* */conftest.py",
              "test, testing, pytest, unittest, jest, coverage, fixture"),
    "config": ("*.ini *.cfg *.toml *.yaml *.yml *.conf *settings* */config/* *config.* */.env*",
               "configuration, setting, environment variable, feature flag, dotenv"),
    "ci": ("*/.github/workflows/* */.gitlab-ci.yml */jenkinsfile */.circleci/* */.ci/* "
           "*/.travis.yml */azure-pipelines.yml",
           "pipeline, github actions, gitlab ci, jenkins, circleci, continuous integration"),
    "dependencies": ("*/requirements*.txt */pyproject.toml */setup.py */package.json "
                     "*/package-lock.json */yarn.lock */pnpm-lock.yaml */poetry.lock */uv.lock "
                     "*/pipfile* */go.mod */go.sum */cargo.toml */cargo.lock */gemfile*",
                     "dependency, dependencies, upgrade, bump, npm, yarn, pip, lockfile, "
                     "requirements"),
    "docs": ("*.md *.rst *.adoc */docs/* */doc/*",
             "documentation, readme, docstring, changelog, tutorial"),
    "security": ("*security* *crypto* *secret* *sanitiz* *csrf* *xss*",
                 "vulnerability, cve, exploit, crypto, encrypt, encryption, decrypt, secret, "
                 "sanitize, csrf, xss, injection, rate limit, rate limiting, brute force, tls, "
                 "certificate, cors"),
    "infra": ("*/dockerfile* */docker-compose* */compose.y*ml *.tf */k8s/* */helm/* "
              "*/terraform/* */kubernetes/*",
              "docker, dockerfile, container, kubernetes, k8s, helm, terraform, deploy, "
              "deployment, infrastructure, nginx"),
}  # fmt: skip
# The type's own name counts as one of its words ("auth", "api", "ci", "docs", …).
# A path that also looks like config is only CI, dependencies or infra (pyproject.toml).
CONFIG_GIVES_WAY_TO = frozenset({"ci", "dependencies", "infra"})
# change type → the kinds of document (document_kind) it reads first
READ_FIRST = {
    "auth": "security", "security": "security", "ui": "design",
    "api": "architecture design", "database": "architecture design", "infra": "architecture design",
    "tests": "contributing", "ci": "contributing", "dependencies": "contributing",
    "docs": "contributing docs-site",
}  # fmt: skip
# A documentation site's configuration: mkdocs, and sphinx's conf.py beside its sources.
DOCS_SITE = ("mkdocs.yml", "mkdocs.yaml")
DOC_DIRS = ("/docs/", "/doc/")


def scan(root: str, base: str | None, task: str = "") -> Gathered:
    """What context.json's `gathered` holds for the project at `root`; base defaults to HEAD."""
    in_git = os.path.exists(os.path.join(root, ".git"))
    fresh = in_git and base is None and head_commit(root) is None  # nothing committed yet
    tracked, untracked = _git_files(root) if in_git else (_walked_files(root), [])
    found = sorted(
        (f for f in tracked + untracked if document_kind(f) and _is_file(root, f)),
        key=lambda f: (f.count("/"), f),
    )
    if not in_git:
        changed, added = [], ""
    elif fresh:
        changed, added = sorted({*tracked, *untracked}), _read_texts(root, tracked + untracked)
    else:
        changed, added = _changes(root, base or "HEAD", untracked)
    types = change_types(changed, f"{task}\n{added}")
    gathered: Gathered = {
        "base": (base or "HEAD") if in_git and not fresh else None,
        "scanned_at": clock.now(),
        "documents": found[:MAX_DOCUMENTS],
        "changed_files": changed,
        "change_types": types,
        "relevant_documents": relevant_documents(found, types, changed),
        "summary": "",
    }
    gathered["summary"] = _summary(gathered, len(found), in_git)
    return gathered


def document_kind(path: str) -> str | None:
    """readme, agents, architecture, security, contributing, adr, design, docs (pages under
    docs/), or docs-site (mkdocs.yml, sphinx's docs/conf.py); None otherwise."""
    name = os.path.basename(path)
    lower = name.lower()
    stem, ext = os.path.splitext(lower)
    where = "/" + path.lower()
    if lower in DOCS_SITE or (lower == "conf.py" and any(d in where for d in DOC_DIRS)):
        return "docs-site"
    if ext not in DOC_EXTS or lower.startswith("."):
        return None
    if lower in ("claude.md", "agents.md"):
        return "agents"
    for kind in ("readme", "architecture", "security", "contributing"):
        if lower.startswith(kind):
            return kind
    if "/docs/architecture/" in where or "/doc/architecture/" in where:
        return "architecture"
    if any(d in where for d in ADR_DIRS):
        return "adr"
    if "DESIGN" in name or "/docs/design/" in where or ("/docs/" in where and "design" in stem):
        return "design"
    if ext in (".md", ".markdown", ".rst", ".adoc") and any(d in where for d in DOC_DIRS):
        return "docs"
    return None


def change_types(paths: list[str], text: str) -> list[str]:
    """The CHANGE_RULES types that a path or the text (task and added lines) points to."""
    found = set().union(*map(_path_types, paths), _word_types(text))
    return [t for t in CHANGE_RULES if t in found]


def relevant_documents(
    documents: list[str], types: list[str], changed: list[str]
) -> dict[str, list[str]]:
    """For each change type, the documents to read first (see the module docstring)."""
    relevant: dict[str, list[str]] = {}
    agents = [d for d in documents if document_kind(d) == "agents" and _applies(d, changed)]
    if agents:
        relevant["all"] = agents
    for t in types:
        kinds = READ_FIRST.get(t, "").split()
        hits = [d for d in documents if document_kind(d) in kinds or _path_names(d, t)]
        if hits:
            relevant[t] = hits[:MAX_RELEVANT]
    return relevant


# ---------------------------------------------------------------- files and git


def _git_files(root: str) -> tuple[list[str], list[str]]:
    """Tracked files, and untracked ones that .gitignore and SKIP_DIRS (.planner/) do not hide."""
    tracked = run_git(root, "ls-files", "-z").split("\0")
    untracked = run_git(root, "ls-files", "-z", "--others", "--exclude-standard").split("\0")
    return [f for f in tracked if f], [f for f in untracked if f and not _skipped(f)]


def _walked_files(root: str) -> list[str]:
    files = []
    for here, dirs, names in os.walk(root):
        rel = os.path.relpath(here, root)
        depth = 0 if rel == "." else rel.count(os.sep) + 1
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and depth < MAX_DEPTH]
        prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
        files += [prefix + n for n in names]
    return files


def _skipped(path: str) -> bool:
    return any(part in SKIP_DIRS for part in path.split("/")[:-1])


def _is_file(root: str, path: str) -> bool:
    return not _skipped(path) and os.path.isfile(os.path.join(root, path))


def _changes(root: str, base: str, untracked: list[str]) -> tuple[list[str], str]:
    """Files changed since base (untracked included, .planner/ left out) and the text they add."""
    since = (_commit(root, base), "--", ".", EXCEPT_PLANNER)
    diffed = run_git(root, "diff", "--no-renames", "--name-only", "-z", *since).split("\0")
    patch = run_git(root, "diff", "--no-renames", "-U0", "--no-color", "--no-ext-diff", *since)
    added = [line[1:] for line in patch.splitlines() if line[:1] == "+" and line[:3] != "+++"]
    changed = sorted({*filter(None, diffed), *untracked})
    return changed, "\n".join(added)[:MAX_CONTENT] + "\n" + _read_texts(root, untracked)


def _commit(root: str, ref: str) -> str:
    if not ref.startswith("-"):  # an option is not a ref
        try:
            return run_git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()
        except PreconditionFailed:
            pass
    raise UsageError(f"base {ref}: not a commit in {root} (a branch, tag or commit)", field="base")


def _read_texts(root: str, paths: list[str]) -> str:
    """The start of the first MAX_NEW_FILES text files; binary files are skipped."""
    texts = []
    for path in paths[:MAX_NEW_FILES]:
        try:
            with open(os.path.join(root, path), "rb") as f:
                data = f.read(MAX_FILE)
        except OSError:
            continue
        if b"\0" not in data:
            texts.append(data.decode(errors="replace"))
    return "\n".join(texts)


# ---------------------------------------------------------------- words and paths


def _words(text: str) -> str:
    """Text as " word word … ": camelCase and snake_case split, lowercased, plurals trimmed."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text).lower()
    return " " + " ".join(map(_singular, re.findall(r"[a-z0-9]+", spaced))) + " "


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


_RULES: dict[str, tuple[re.Pattern[str], list[str]]] = {}


def _rules() -> dict[str, tuple[re.Pattern[str], list[str]]]:
    """CHANGE_RULES compiled once: one regex of the globs, the words as _words spells them."""
    if not _RULES:
        for t, (globs, said) in CHANGE_RULES.items():
            pattern = re.compile("|".join(map(fnmatch.translate, globs.split())))
            _RULES[t] = (pattern, [_words(w) for w in [t, *said.split(", ")]])
    return _RULES


def _says(words: str, change_type: str) -> bool:
    return any(w in words for w in _rules()[change_type][1])


def _word_types(text: str) -> set[str]:
    words = _words(text)
    return {t for t in CHANGE_RULES if _says(words, t)}


def _path_types(path: str) -> set[str]:
    where = "/" + path.lower()
    hits = {t for t, (pattern, _) in _rules().items() if pattern.match(where)}
    return hits - {"config"} if hits & CONFIG_GIVES_WAY_TO else hits


def _path_names(document: str, change_type: str) -> bool:
    """Whether the document's path (the folders docs/ and doc/ aside) names the change type."""
    parts = os.path.splitext(document)[0].split("/")
    return _says(_words(" ".join(p for p in parts if p not in ("docs", "doc"))), change_type)


def _applies(document: str, changed: list[str]) -> bool:
    folder = os.path.dirname(document)
    return not folder or any(f.startswith(folder + "/") for f in changed)


# ---------------------------------------------------------------- summary


def _summary(gathered: Gathered, found: int, in_git: bool) -> str:
    documents, changed = gathered["documents"], gathered["changed_files"]
    kept = f" found, {len(documents)} kept" if found > len(documents) else ""
    lines = [f"Documents ({found}{kept}): {_listing(documents, found) or 'none found'}"]
    if in_git:
        since = f"Changed since {gathered['base']}" if gathered["base"] else "Nothing committed yet"
        files = f" ({len(changed)} file{'s' * (len(changed) != 1)})" if changed else ""
        lines.append(f"{since}{files}: {_listing(changed) or 'nothing'}")
    else:
        lines.append("Changed files: none listed (not a git repository)")
    if gathered["change_types"]:
        lines.append("Topics (task, changed files): " + ", ".join(gathered["change_types"]))
    read_first = _read_first(gathered["relevant_documents"])
    return "\n".join(lines + ([f"Read first: {read_first}"] if read_first else []))


def _read_first(relevant: dict[str, list[str]]) -> str:
    """Each relevant document once, with the types it serves: SECURITY.md (auth, security)."""
    serves: dict[str, list[str]] = {}
    for t, documents in relevant.items():
        for d in documents:
            serves.setdefault(d, []).append(t)
    return _listing([f"{d} ({', '.join(ts)})" for d, ts in serves.items()])


def _listing(items: list[str], total: int = 0) -> str:
    """Items joined while they fit on a summary line, then how many more (of total) there are."""
    shown: list[str] = []
    for item in items:
        if shown and len(", ".join([*shown, item])) > LISTING:
            break
        shown.append(item if len(item) <= LISTING else "…" + item[1 - LISTING :])
    rest = max(total, len(items)) - len(shown)
    return ", ".join(shown) + (f" (+{rest} more)" if rest else "")
