"""Layering of the certify package, read from the source (AST), not by importing it.

* no import cycle among certify's modules (every import counts: module level, inside
  functions, lazy ones; only ``if TYPE_CHECKING:`` blocks are skipped, they never run);
* no import of another certify module's private (``_underscore``) name;
* certify never imports sympy or derive;
* no ``functools.singledispatch`` registry, and no ``isinstance`` test on a numeric mechanism
  class outside ``certify/mechanisms/`` (per-mechanism knowledge goes through
  :mod:`certify.registry`);
* source modules stay under 700 lines (``_generated`` excluded).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "certify"
MAX_LINES = 700
MECHANISM_CLASSES = {"Gaussian", "Laplace", "RandomizedResponse", "ApproxDP",
                     "PoissonSubsampledGaussian"}


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _sources() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST):
    """Import nodes, skipping ``if TYPE_CHECKING:`` bodies."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _graph() -> tuple[dict[str, set[str]], list[str], list[str]]:
    """(edges between certify modules, private-name imports, forbidden imports)."""
    sources = _sources()
    edges: dict[str, set[str]] = {m: set() for m in sources}
    private, forbidden = [], []
    for module, path in sources.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
                names: list[tuple[str, str]] = []
            else:
                target = _resolve(module, path, node)
                names = [(target, a.name) for a in node.names]
                # "from . import x" / "from .pkg import mod": the submodule is the target
                subs = [f"{target}.{a.name}" for a in node.names
                        if f"{target}.{a.name}" in sources]
                targets = subs if len(subs) == len(node.names) else [target, *subs]
            for t in targets:
                top = t.split(".")[0]
                if top in ("sympy", "derive"):
                    forbidden.append(f"{module} imports {t}")
                if t in sources and t != module:
                    edges[module].add(t)
            for target, name in names:
                if (target.split(".")[0] == "certify" and name.startswith("_")
                        and not name.startswith("__") and f"{target}.{name}" not in sources
                        and target != module):
                    private.append(f"{module}: from {target} import {name}")
    return edges, private, forbidden


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component with more than one module (or a self-loop)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in edges[v]:
                out.append(sorted(comp))

    for v in edges:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_inside_certify():
    edges, _, _ = _graph()
    assert "certify.cli" in edges and "certify.plugin" in edges
    assert _cycles(edges) == []


def test_no_private_name_imported_from_another_certify_module():
    _, private, _ = _graph()
    assert private == []


def test_certify_never_imports_sympy_or_derive():
    _, _, forbidden = _graph()
    assert forbidden == []


def test_the_cycle_finder_finds_cycles():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"a"}}) == [["a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def _mechanism_isinstance(tree: ast.AST) -> list[int]:
    lines = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2):
            names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
            names |= {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}
            if names & MECHANISM_CLASSES:
                lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("module", sorted(_sources()))
def test_generic_modules_dispatch_through_the_registry(module):
    path = _sources()[module]
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    assert "singledispatch" not in text, f"{module}: use certify.registry, not singledispatch"
    if not module.startswith("certify.mechanisms"):
        assert _mechanism_isinstance(tree) == [], f"{module}: isinstance on a mechanism type"


@pytest.mark.parametrize("module", [m for m in sorted(_sources()) if "_generated" not in m])
def test_modules_stay_small(module):
    n = len(_sources()[module].read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"{module} has {n} lines (> {MAX_LINES})"
