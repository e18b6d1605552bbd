"""The project's own modules import each other without a cycle, and without shims; the
units of needlework/ are layered; the layers import downwards only.

The graph is read from the source (``ast``), every ``import`` counted, also the ones
inside functions: a cycle hidden in a function is still a cycle, only one that fails
later. ``from package import name`` counts as importing ``package.name`` when that is a
module, else the package itself.

The *units* of needlework/ are its subpackages (``needlework.judges``) and its top-level
modules (``needlework.words``); no arrow between two units runs back up, so no two
units import each other, directly or round a longer loop (docs/ARCHITECTURE.md, Layers).
For that rule an import under ``if TYPE_CHECKING:`` is left out (it runs only for the
type checker); every other import counts, inside functions too. A unit cycle names
every hop's import as ``file:line``, the one that closes the loop first.
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


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _runtime_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import of ``tree`` but those under ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking_only(child):
                for other in child.orelse:  # the else branch runs
                    visit(other)
                continue
            visit(child)

    visit(tree)
    return found


def unit_of(module: str) -> str:
    """``needlework.judges.local`` -> ``needlework.judges``; ``needlework.words`` stays."""
    return ".".join(module.split(".")[:2])


def unit_imports() -> dict[tuple[str, str], list[str]]:
    """``(unit, unit it imports)`` -> where, as ``file:line`` (first first), over needlework/;
    imports under ``if TYPE_CHECKING:`` left out."""
    modules = {name: path for name, path in project_modules().items()
               if name.startswith("needlework.")}
    known = set(modules) | {"needlework"}
    edges: dict[tuple[str, str], list[str]] = {}
    for name, path in sorted(modules.items()):
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        where = path.relative_to(ROOT).as_posix()
        for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[:len(parts) - node.level + 1]
                                    + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                           for a in node.names]
            for target in targets:
                if target not in known or target == "needlework":
                    continue
                edge = (unit_of(name), unit_of(target))
                site = f"{where}:{node.lineno}"
                if edge[0] != edge[1] and site not in edges.setdefault(edge, []):
                    edges[edge].append(site)
    return edges


def unit_cycle_message(cycle: list[str], edges: dict[tuple[str, str], list[str]]) -> str:
    """The cycle's units and each hop's first import, the closing hop (last to first) first."""
    hops = list(zip(cycle, cycle[1:], strict=False))
    closing = hops[-1]
    lines = [f"units import each other: {' -> '.join(cycle)}",
             f"  closed by {edges[closing][0]} ({closing[0]} imports {closing[1]})"]
    lines += [f"  {a} -> {b}: {', '.join(edges[(a, b)][:3])}" for a, b in hops[:-1]]
    return "\n".join(lines)


def test_no_unit_of_needlework_imports_back_up():
    edges = unit_imports()
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    assert len(graph) > 20  # the walk found the units (25 when written)
    cycle = find_cycle(graph)
    assert cycle is None, unit_cycle_message(cycle or [], edges)


def test_a_unit_cycle_names_the_import_that_closes_it():
    edges = {("n.a", "n.b"): ["n/a/x.py:3"], ("n.b", "n.c"): ["n/b/y.py:7", "n/b/z.py:9"],
             ("n.c", "n.a"): ["n/c.py:12"]}
    cycle = find_cycle({"n.a": {"n.b"}, "n.b": {"n.c"}, "n.c": {"n.a"}})
    assert cycle == ["n.a", "n.b", "n.c", "n.a"]
    assert unit_cycle_message(cycle, edges).splitlines() == [
        "units import each other: n.a -> n.b -> n.c -> n.a",
        "  closed by n/c.py:12 (n.c imports n.a)",
        "  n.a -> n.b: n/a/x.py:3",
        "  n.b -> n.c: n/b/y.py:7, n/b/z.py:9"]


def test_imports_for_the_type_checker_only_are_left_out():
    tree = ast.parse("from typing import TYPE_CHECKING\nimport a\nif TYPE_CHECKING:\n"
                     "    import b\nelse:\n    import c\ndef f():\n    import d\n")
    assert [a.name for node in _runtime_imports(tree) if isinstance(node, ast.Import)
            for a in node.names] == ["a", "c", "d"]


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
    components, the components never import a page, and the store imports nothing of the
    logic (nor streamlit). Imports inside functions count too."""
    wrong = []
    for package, refused in (("needlework", {"streamlit", "components", "app_pages"}),
                             ("components", {"app_pages"}),
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
