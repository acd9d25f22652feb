"""Imports point down (cli → hooks → skills → shared → state), inside state/ too (its top →
storage → repo → validation → rules → ops), and state/, shared/ and skills/ hold no import
cycle; the hooks import the standard library and the vocabulary alone. Every import counts:
at the top, inside a function, or only for the type checker."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

LAYERS = ("state", "shared", "skills", "hooks", "cli")  # each may import only those before it
# Inside state/, likewise: the modules at its top (vocabulary, errors, clock, project, routes,
# status view) import no sub-package; storage knows no git, git no validation, and so on up.
STATE_ORDER = ("state", "storage", "repo", "validation", "rules", "ops")
# The hook programs run as `python3 -S -I` before any environment exists: of the package they
# import only these modules (and each other), which import only the standard library and
# each other in turn. cli/ may import the hooks (`plan status` prints the guard's line).
HOOKS_MAY_IMPORT = ("state.vocab", "state.vocab_core", "state.status_view")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {
        module_name(path): path for layer in LAYERS for path in sorted((REPO / layer).rglob("*.py"))
    }


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package modules `name` imports (`from pkg import mod` counts as pkg.mod)."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {m for m in found if m in known and m != name}


@functools.cache  # the sources do not change during a run: parsed once, read by four tests
def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports(name, path, set(found)) for name, path in found.items()}


def layer(module: str) -> int:
    return LAYERS.index(module.split(".")[0])


def test_imports_point_down() -> None:
    upward = sorted(
        f"{name} imports {target}"
        for name, targets in graph().items()
        for target in targets
        if layer(target) > layer(name)
    )
    assert not upward, "\n".join(upward)


def test_python_m_runs_each_workflow_without_an_import_up() -> None:
    """skills/*/__main__.py names its console script as data (no import of cli/): it runs."""
    for name in ("planner", "executor"):
        done = subprocess.run(
            [sys.executable, "-m", f"skills.{name}", "--version"],
            capture_output=True,
            text=True,
            cwd=REPO,
            check=False,
        )
        assert (done.returncode, done.stdout.split()[0]) == (0, name), done.stderr


def state_level(module: str) -> int:
    """0 for a module at state/'s top, else its sub-package's place in STATE_ORDER."""
    package = module.split(".")[1] if "." in module else "state"
    return STATE_ORDER.index(package) if package in STATE_ORDER else 0


def test_state_sub_packages_point_down() -> None:
    assert {p.name for p in (REPO / "state").iterdir() if (p / "__init__.py").exists()} == set(
        STATE_ORDER[1:]
    )
    upward = sorted(
        f"{name} imports {target}"
        for name, targets in graph().items()
        if name.startswith("state.")
        for target in targets
        if target.startswith("state.") and state_level(target) > state_level(name)
    )
    assert not upward, "\n".join(upward)


def test_the_state_order_sees_an_arrow_up() -> None:
    assert state_level("state.vocab") < state_level("state.storage.store")
    assert state_level("state.storage") == state_level("state.storage.store")
    assert state_level("state.storage.store") < state_level("state.rules.session_store")
    assert state_level("state.rules") < state_level("state.ops.plan_ops")


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles_below_cli() -> None:
    edges = {
        name: {t for t in targets if layer(t) < layer("cli")}
        for name, targets in graph().items()
        if layer(name) < layer("cli")
    }
    found = cycles(edges)
    assert not found, "\n".join(" ↔ ".join(cycle) for cycle in found)


def test_the_checks_see_a_cycle_and_an_upward_import() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert layer("cli.main") > layer("shared.engine") > layer("state.storage.store")
    edges = graph()
    assert "state.rules.session_store" in edges["shared.engine"]  # what the engine imports


def imported_names(path: Path) -> set[str]:
    """Every module `path` imports, as written (absolute: the hooks use no relative import)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert not node.level, f"{path}: a relative import"
            found.add(node.module or "")
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def outside_the_standard_library(path: Path, allowed: tuple[str, ...]) -> list[str]:
    known = set(modules())
    return sorted(
        name
        for name in imported_names(path)
        if name.split(".")[0] not in sys.stdlib_module_names
        and (name in known or name.split(".")[0] not in LAYERS)  # `from hooks import x`: x
        and not name.startswith("hooks.")
        and name not in ("hooks", "state", *allowed)
    )


def test_the_hooks_import_the_standard_library_and_the_vocabulary_alone() -> None:
    hooks = sorted((REPO / "hooks").glob("*.py"))
    assert len(hooks) > 10
    found = {
        str(path.relative_to(REPO)): outside_the_standard_library(path, HOOKS_MAY_IMPORT)
        for path in hooks
    }
    for name in HOOKS_MAY_IMPORT:
        path = REPO / (name.replace(".", "/") + ".py")
        found[str(path.relative_to(REPO))] = outside_the_standard_library(path, HOOKS_MAY_IMPORT)
    assert not imported_names(REPO / "state" / "__init__.py")  # imported on the way: no import
    assert {path: bad for path, bad in found.items() if bad} == {}


def test_the_hooks_rule_sees_a_forbidden_import(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import os\nfrom state.storage.store import Store\nfrom hooks import shell\n")
    assert outside_the_standard_library(module, HOOKS_MAY_IMPORT) == ["state.storage.store"]
    module.write_text("import pydantic\nfrom state.vocab import Phase\n")
    assert outside_the_standard_library(module, HOOKS_MAY_IMPORT) == ["pydantic"]


def test_bench_imports_nothing_from_tests() -> None:
    """A benchmark runs from a checkout without the test suite: what both need lives in bench/
    (docs/design.md, "Tests in tiers")."""
    benches = sorted((REPO / "bench").glob("*.py"))
    assert len(benches) > 5
    found = {
        str(path.relative_to(REPO)): sorted(
            name for name in imported_names(path) if name.split(".")[0] == "tests"
        )
        for path in benches
    }
    assert {path: bad for path, bad in found.items() if bad} == {}
