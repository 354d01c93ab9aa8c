"""derive's module structure: no import cycles, no private cross-module imports, small modules.

The import graph is built from the AST of every module of the ``derive`` package, counting every
import: module level, inside functions (a lazy import still couples the modules) and under
``if TYPE_CHECKING:`` (an annotation-only import back is still a cycle of the design).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

DERIVE = Path(__file__).resolve().parent.parent / "derive"
MAX_LINES = 700


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(DERIVE.rglob("*.py")):
        if "_generated" in path.parts:
            continue
        rel = path.relative_to(DERIVE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _package_of(module: str) -> str:
    return module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = _package_of(module).split(".")
    if node.level > 1:
        base = base[: len(base) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def _imports(module: str) -> tuple[set[str], list[str]]:
    """(derive modules imported, private names imported from another module)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    deps: set[str] = set()
    private: list[str] = []
    aliases: dict[str, str] = {}  # local name -> derive module bound to it
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in MODULES:
                    deps.add(a.name)
                    if a.asname:
                        aliases[a.asname] = a.name
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(module, node)
            for a in node.names:
                sub = f"{target}.{a.name}"
                if sub in MODULES:  # ``from . import lattice``: a submodule
                    deps.add(sub)
                    aliases[a.asname or a.name] = sub
                    continue
                if target in MODULES:
                    deps.add(target)
                if a.name.startswith("_") and not a.name.startswith("__"):
                    private.append(f"{module}: from {target} import {a.name}")
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in aliases and node.attr.startswith("_")
                and not node.attr.startswith("__")):
            private.append(f"{module}: {aliases[node.value.id]}.{node.attr}")
    deps.discard(module)
    return deps, private


GRAPH = {m: _imports(m)[0] for m in MODULES}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_graph_sees_the_known_edges():
    """The graph builder finds module-level, relative and lazy (function-level) imports."""
    assert "derive.mechanism" in GRAPH["derive.builtins"]
    assert "derive.lattice" in GRAPH["derive.compile"]  # lazy, inside _register_lattice_step
    assert "derive.engine" in GRAPH["derive.mechanism"]
    assert "derive.mechanism" not in GRAPH["derive.results"]


def test_no_import_cycles():
    assert _cycles(GRAPH) == []


def test_cycle_detection_works():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_private_cross_module_imports():
    bad = [p for m in MODULES for p in _imports(m)[1]]
    assert bad == []


def test_submodules_do_not_import_the_package():
    """derive/__init__ loads submodules lazily; a submodule importing the package could hide a
    cycle through it."""
    offenders = [m for m, deps in GRAPH.items() if m != "derive" and "derive" in deps]
    assert offenders == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_size(module):
    n = len(MODULES[module].read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"{module} has {n} lines (limit {MAX_LINES}): split it along a seam"
