"""The three layers are importable, come from this distribution, and keep their import rules."""

from __future__ import annotations

import importlib
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DIST = "edgeworth-accountant"
PACKAGES = ("numeric", "derive", "certify")


@pytest.mark.parametrize("name", PACKAGES)
def test_package_comes_from_this_distribution(name):
    """Another PyPI project is called ``derive``: make sure we import ours."""
    mod = importlib.import_module(name)
    path = Path(mod.__file__).resolve()
    in_tree = path.parent.parent == ROOT
    files = metadata.distribution(DIST).files or []
    in_dist = any(str(f).startswith(f"{name}/") for f in files)
    assert in_tree or in_dist, f"{name} imported from {path}, not from {DIST}"
    assert DIST in metadata.packages_distributions().get(name, []) or in_tree
    # and it is really ours: every layer names itself in its docstring
    assert "edgeworth-accountant" in (mod.__doc__ or "")


@pytest.mark.parametrize("name", PACKAGES)
def test_version_from_metadata(name):
    mod = importlib.import_module(name)
    assert mod.__version__ == metadata.version(DIST)


def test_numeric_imports_no_sympy_mpmath_or_upper_layers():
    code = (
        "import sys, numeric, numeric.cli; "
        "bad = [m for m in ('sympy', 'mpmath', 'flint', 'derive', 'certify') if m in sys.modules]; "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_public_api_is_declared():
    import numeric

    for name in numeric.__all__:
        assert hasattr(numeric, name), name


def test_console_script_declared():
    eps = metadata.distribution(DIST).entry_points
    assert any(e.name == "edgeworth" and e.value == "numeric.cli:main" for e in eps)
