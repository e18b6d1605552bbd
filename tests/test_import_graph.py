"""The project's own modules import each other without a cycle, and without shims.

The graph is read from the source (``ast``), every ``import`` counted, also the ones
inside functions: a cycle hidden in a function is still a cycle, only one that fails
later. ``from package import name`` counts as importing ``package.name`` when that is a
module, else the package itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGES = ("needlework", "store", "components")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    """Every module of the project's packages, by dotted name."""
    return {module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}


def imports_of(name: str, path: Path, modules: set[str]) -> set[str]:
    """The project modules ``name`` (at ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    found.add(f"{base}.{alias.name}")
                elif base in modules:
                    found.add(base)
    return found - {name}


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imports_of(name, path, set(modules)) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path (first node repeated at the end), or ``None``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


@pytest.mark.slow
def test_the_project_import_graph_has_no_cycle():
    graph = import_graph()
    assert len(graph) > 100  # the walk found the packages
    cycle = find_cycle(graph)
    assert cycle is None, " -> ".join(cycle or [])


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_package_imports_are_edges():
    package = ROOT / "needlework" / "formats"
    edges = imports_of("needlework.formats", package / "__init__.py", set(project_modules()))
    assert "needlework.formats.garage" in edges  # the package imports its modules


@pytest.mark.slow
def test_no_shim_modules():
    """A module that only re-exports another is a shim: callers import the real one."""
    shims = []
    for name, path in project_modules().items():
        if path.name == "__init__.py":
            continue
        body = [n for n in ast.parse(path.read_text(encoding="utf-8")).body
                if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
        if body and all(isinstance(n, (ast.ImportFrom, ast.Import)) or (
                isinstance(n, ast.Assign) and [t.id for t in n.targets if isinstance(t, ast.Name)]
                == ["__all__"]) for n in body):
            shims.append(name)
    assert shims == []


def _imported_modules(path: Path) -> set[str]:
    """The modules a file imports by absolute name (``from x.y import z`` gives ``x.y``)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module)
    return names


def _imported_roots(path: Path) -> set[str]:
    """The top-level packages a file imports."""
    return {name.split(".")[0] for name in _imported_modules(path)}


def test_the_layers_import_downwards_only():
    """app_pages -> components -> needlework -> store: logic never imports streamlit or the
    components, and the store imports nothing of the logic."""
    wrong = []
    for package, refused in (("needlework", {"streamlit", "components", "app_pages"}),
                             ("store", {"streamlit", "components", "app_pages", "needlework"})):
        for path in (ROOT / package).rglob("*.py"):
            found = _imported_roots(path) & refused
            if found:
                wrong.append(f"{path.relative_to(ROOT)} imports {sorted(found)}")
    assert wrong == []


PAGE_PACKAGES = {"annotate": "annotate", "agreement": "agreement", "review": "review",
                 "rewards": "rewards", "needle": "needle", "home": "home", "data": "transfer",
                 "users": "teams", "assign": "teams", "quality": "teams", "guidelines": "teams",
                 "audit": "teams", "rag": "rag", "suggestions": "suggest"}
# models: engine components shared by the reward page and the needle lab; teams: the sign-in
# gate, who is signed in, guidelines beside the task and progress, used by every page
SHARED_PACKAGES = {"models", "teams"}


def _component_packages(path: Path) -> set[str]:
    """The subpackages of components/ a file imports from (``components.review.pair`` -> review)."""
    subpackages = {p.name for p in (ROOT / "components").iterdir() if (p / "__init__.py").is_file()}
    found = set()
    for root in _imported_modules(path):
        parts = root.split(".")
        if parts[0] == "components" and len(parts) > 1 and parts[1] in subpackages:
            found.add(parts[1])
    return found


# one page's panel drawn on another: the annotate page shows a RAG run's model answer
# beside the human one (components/rag/answer_panel.py, linked from the RAG answers page);
# the quality and agreement pages show the suggestions' figures (components/suggest/figures.py)
CROSS_PAGE = {"annotate": {"rag"}, "quality": {"suggest"}, "agreement": {"suggest"}}


def test_a_page_uses_its_own_components_and_the_shared_ones():
    assert {p.stem for p in (ROOT / "app_pages").glob("*.py")} == set(PAGE_PACKAGES)
    wrong = []
    for page, package in PAGE_PACKAGES.items():
        allowed = {package} | SHARED_PACKAGES | CROSS_PAGE.get(page, set())
        for path in [ROOT / "app_pages" / f"{page}.py", *(ROOT / "components" / package).glob("*.py")]:
            other = _component_packages(path) - allowed
            if other:
                wrong.append(f"{path.relative_to(ROOT)} imports components.{sorted(other)}")
    for path in [*(ROOT / "components").glob("*.py"), *(ROOT / "components" / "models").glob("*.py")]:
        if _component_packages(path) - SHARED_PACKAGES:  # shared modules use no page's components
            wrong.append(f"{path.relative_to(ROOT)} imports {sorted(_component_packages(path))}")
    assert wrong == []
