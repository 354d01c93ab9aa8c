"""Layer and module rules, checked on the source (AST) and at run time.

* numeric <- certify <- derive: numeric imports neither certify, derive, sympy, mpmath nor
  python-flint; certify imports neither derive nor sympy (run-time imports inside functions
  included, since the AST sees them).
* No import cycles inside a package, and no module imports another module's private
  (underscore) name.
* No source module is over 700 lines (generated code excepted).
* No estimate method loads certify, even at run time: each is run in a fresh process and the
  loaded modules are inspected afterwards.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("numeric", "certify", "derive")
FORBIDDEN = {
    "numeric": ("certify", "derive", "sympy", "mpmath", "flint"),
    "certify": ("derive", "sympy"),
    "derive": (),
}
MAX_LINES = 700


def _modules(package: str) -> dict[str, Path]:
    out = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path) -> list[tuple[str, tuple[str, ...], int]]:
    """(absolute module, imported names, line) for every import in the file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_pkg = path.name == "__init__.py"
    package = name if is_pkg else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, (), node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append((mod, tuple(a.name for a in node.names), node.lineno))
    return out


def _all_modules() -> dict[str, Path]:
    out = {}
    for p in PACKAGES:
        out.update(_modules(p))
    return out


@pytest.mark.parametrize("package", PACKAGES)
def test_layer_direction(package):
    bad = []
    for name, path in _modules(package).items():
        for mod, _, line in _imports(name, path):
            top = mod.split(".")[0]
            if top in FORBIDDEN[package]:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {mod}")
    assert not bad, "\n".join(bad)


def _edges(package: str) -> dict[str, set[str]]:
    mods = _modules(package)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, path in mods.items():
        for mod, names, _ in _imports(name, path):
            targets = [mod] + [f"{mod}.{n}" for n in names]
            for t in targets:
                if t in mods and t != name:
                    graph[name].add(t)
    return graph


def _cycles(graph: dict[str, set[str]], skip: set[str] = frozenset()) -> list[list[str]]:
    """Every cycle found by depth-first search (each reported once, from where it closes)."""
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt in skip and node.startswith(nxt + "."):
                continue  # a submodule may import names its package's __init__ defines
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt):], nxt])
            elif state.get(nxt) is None:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if state.get(node) is None and node not in skip:
            visit(node)
    return cycles


def test_the_checks_see_what_they_must():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
    graph = _edges("derive")
    assert "derive.lattice" in graph["derive.compile"]  # a lazy import inside a function
    assert "numeric.registry" in _edges("numeric")["numeric.auto"]


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycles_inside_a_package(package):
    graph = _edges(package)
    inits = {m for m, p in _modules(package).items() if p.name == "__init__.py"}
    cycles = _cycles(graph, inits)
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


_MECHANISM_CLASSES = {"Gaussian", "Laplace", "RandomizedResponse", "ApproxDP",
                      "PoissonSubsampledGaussian", "CompiledMechanism"}


@pytest.mark.parametrize("package", ["numeric", "certify"])
def test_no_dispatch_on_mechanism_types_outside_the_mechanisms(package):
    """Methods reach a mechanism through its contract and registrations only: no singledispatch
    registry and no isinstance on a mechanism class outside ``<package>/mechanisms/``."""
    bad = []
    for name, path in _modules(package).items():
        if ".mechanisms" in name:
            continue
        text = path.read_text()
        if "singledispatch" in text:
            bad.append(f"{path.relative_to(ROOT)}: singledispatch")
        for node in ast.walk(ast.parse(text)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2):
                names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                names |= {n.attr for n in ast.walk(node.args[1]) if isinstance(n, ast.Attribute)}
                if names & _MECHANISM_CLASSES:
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno} isinstance on a mechanism")
    assert not bad, "\n".join(bad)


def test_no_imports_of_private_names_across_modules():
    mods = _all_modules()
    bad = []
    for name, path in mods.items():
        for mod, names, line in _imports(name, path):
            if mod == name or mod not in mods:
                continue
            # (package-private modules such as numeric._validation are fine: their names are
            # public to the package; a private *name* belongs to its module alone)
            for n in names:
                if n.startswith("_") and not n.startswith("__") and f"{mod}.{n}" not in mods:
                    bad.append(f"{path.relative_to(ROOT)}:{line} imports {n} from {mod}")
    assert not bad, "\n".join(bad)


def test_modules_are_under_the_size_limit():
    big = []
    for path in _all_modules().values():
        if "_generated" in path.parts:
            continue
        n = len(path.read_text().splitlines())
        if n > MAX_LINES:
            big.append(f"{path.relative_to(ROOT)}: {n} lines")
    assert not big, "\n".join(big)


_RUN_METHOD = """
import sys
import numeric
from numeric import PoissonSubsampledGaussian, RandomizedResponse, Laplace, compose, epsilon, delta
sgd = compose([(PoissonSubsampledGaussian(1.0, 0.01), 1000)])
rr = compose([(RandomizedResponse(0.5), 20)])
lap = compose([(Laplace(0.5), 20)])
method = sys.argv[1]
for comp in (sgd, rr, lap):
    try:
        epsilon(comp, 1e-5, method)
        delta(comp, 1.0, method)
    except numeric.NotApplicable:
        pass
loaded = sorted({m.split('.')[0] for m in sys.modules} & {'certify', 'derive', 'sympy', 'mpmath',
                                                         'flint'})
print(','.join(loaded))
"""


@pytest.mark.parametrize("method", ["aea", "aea-ea", "saddlepoint", "gdp", "clt", "exact"])
def test_estimate_methods_never_load_certify(method):
    out = subprocess.run([sys.executable, "-c", _RUN_METHOD, method], capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"{method} loaded {out.stdout.strip()}"
