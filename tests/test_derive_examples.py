"""The derive examples (mechanisms no peer library ships) run with small parameters."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

pytest.importorskip("sympy")
pytest.importorskip("mpmath")

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
FAST = 0.5  # seconds per sympy integral (as in test_derive_mechanism, sharing its caches)


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", ["logistic_noise", "generalized_gaussian_noise"])
def test_example_runs(name, capsys):
    mod = _load(name)
    out = mod.main(mu=0.3, steps=20, delta=1e-5, symbolic_timeout=FAST)
    assert all(math.isfinite(out[k]) and out[k] > 0 for k in ("aea", "gdp"))
    kx, ky = out["cumulants_x"], out["cumulants_y"]
    assert kx[0] < 0 < ky[0] and kx[1] > 0
    assert any(p.startswith("mpmath quadrature") for p in out["provenance"])
    text = capsys.readouterr().out
    assert "estimate" in text and "mpmath quadrature" in text
    if name == "logistic_noise" and "certified" in out:  # certify extra installed
        lo, hi = out["certified"]
        assert 0 < lo <= hi <= lo * (1 + 1e-3) and "proven" in text


def test_example_definitions_are_short():
    """Each mechanism is defined in under 30 lines (imports to the spec's closing paren)."""
    for name in ("logistic_noise", "generalized_gaussian_noise"):
        lines = (EXAMPLES / f"{name}.py").read_text().splitlines()
        start = next(i for i, s in enumerate(lines) if s.startswith("import sympy"))
        end = next(i for i, s in enumerate(lines) if s.startswith(")"))
        assert end - start < 30, name
