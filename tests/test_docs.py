"""The docs keep up with the code: every docs/design.md section that code, tests or docs cite
exists, the design's module table names every module and no other, and the README's and
docs' links lead to files that exist."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import REPO

DESIGN = REPO / "docs" / "design.md"
PACKAGES = ("cli", "shared", "state", "skills", "hooks")
CITING = ("cli", "shared", "state", "skills", "hooks", "tests", "bench", "bin", "docs", ".ci")
SUFFIXES = {".py", ".md", ".j2", ".toml", ".json", ".sh", ""}
# `docs/design.md, "Section"`, across a line break and a comment's `#` too.
CITATION = re.compile(r'design\.md[,:]?\s*(?:#\s*)?\\?"([^"\\]+)\\?"')


def headings(text: str) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)]


def cited(text: str) -> list[str]:
    """The section names `text` cites, whitespace and comment markers folded."""
    return [" ".join(re.sub(r"\n\s*#", " ", m.group(1)).split()) for m in CITATION.finditer(text)]


def exists(section: str, names: list[str]) -> bool:
    """A heading is the section, or starts with it (`"The sandbox"` for "The sandbox (layer 2
    of the guard)")."""
    return any(
        h == section or (h.startswith(section) and not h[len(section)].isalnum()) for h in names
    )


def citing_files() -> list[Path]:
    files = [p for p in REPO.iterdir() if p.is_file() and p.suffix in SUFFIXES]
    for top in CITING:
        files += [p for p in (REPO / top).rglob("*") if p.is_file() and p.suffix in SUFFIXES]
    mine = (DESIGN, Path(__file__).resolve())  # the design itself, and this file's examples
    return [p for p in files if p not in mine and "__pycache__" not in p.parts]


def test_every_cited_design_section_exists() -> None:
    names = headings(DESIGN.read_text(encoding="utf-8"))
    citations = {
        (str(path.relative_to(REPO)), section)
        for path in citing_files()
        for section in cited(path.read_text(encoding="utf-8", errors="replace"))
    }
    assert len(citations) > 30  # the pattern still finds the citations the code makes
    assert sorted(c for c in citations if not exists(c[1], names)) == []


def test_a_missing_section_is_caught() -> None:
    text = 'x = 1  # docs/design.md, "The\n# guard"; (docs/design.md, "No such section")'
    assert cited(text) == ["The guard", "No such section"]
    names = ["The guard", "The sandbox (layer 2 of the guard)"]
    assert exists("The sandbox", names) and not exists("No such section", names)
    assert not exists("The guar", names)


def module_table() -> list[str]:
    """The first column of the table under "### Modules"."""
    text = DESIGN.read_text(encoding="utf-8")
    section = text.split("\n### Modules\n", 1)[1].split("\n#", 1)[0]
    return re.findall(r"^\| `([^`]+)` \|", section, re.M)


def test_the_module_table_names_every_module_once() -> None:
    listed = module_table()
    assert len(listed) == len(set(listed)), "a module is listed twice"
    modules = {"planner_entry.py"} | {
        str(p.relative_to(REPO))
        for top in PACKAGES
        for p in (REPO / top).rglob("*.py")
        if p.name != "__init__.py"
    }
    assert sorted(modules - set(listed)) == [], "modules missing from docs/design.md, Modules"
    assert sorted(set(listed) - modules) == [], "rows of docs/design.md, Modules: no such module"


def test_links_in_the_readme_and_docs_lead_to_files() -> None:
    broken = []
    for doc in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", doc.read_text(encoding="utf-8")):
            if "://" not in target and not (doc.parent / target).exists():
                broken.append(f"{doc.relative_to(REPO)}: {target}")
    assert broken == []
