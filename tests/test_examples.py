"""Every example runs, with small parameters, and its numbers are sane."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_example_is_tested():
    tested = {"dp_sgd", "heterogeneous_pipeline", "seed_example", "shuffle_worked_example",
              "poisson_vs_shuffle"}
    tested |= {"logistic_noise", "generalized_gaussian_noise"}  # tests/test_derive_examples.py
    tested |= {"plot_tradeoff", "check_your_formula"}  # tests/test_plot.py
    tested |= {"check_gdp", "check_edgeworth"}  # tests/test_check.py
    tested |= {"check_shuffle"}  # tests/test_check_shuffle.py
    assert {p.stem for p in EXAMPLES.glob("*.py")} == tested


def test_dp_sgd(capsys):
    out = _load("dp_sgd").main(steps=1000)
    assert out["aea order 2"] == pytest.approx(1.783, abs=5e-4)  # docs/math.md section 3 table
    assert "estimate" in capsys.readouterr().out


def test_heterogeneous_pipeline(capsys):
    out = _load("heterogeneous_pipeline").main(sgd_steps=2000, queries=5)
    assert all(math.isfinite(v) and v > 0 for v in out.values())
    assert "spec file" in capsys.readouterr().out


def test_seed_example():
    rows = _load("seed_example").main(deltas=(1e-3,))
    _, exact, gdp, _ = rows[0]
    assert exact == pytest.approx(2.88967273935981121, rel=1e-12)
    assert gdp == pytest.approx(3.13867054858293921, rel=1e-12)


def test_poisson_vs_shuffle(capsys, tmp_path):
    # small parameters: one epoch of M = 20 rounds (the full example: N = 1e5, B = 100, E to 100)
    pytest.importorskip("matplotlib")
    rows = _load("poisson_vs_shuffle").main(sigma=2.0, batch_size=10, dataset_size=200,
                                            epochs=(1,), method="auto",
                                            output=str(tmp_path / "p.png"))
    (r,) = rows
    assert (r["rounds"], r["steps"]) == (20, 20)
    assert 0 < r["shuffle_epsilon"] < math.inf and 0 < r["poisson_epsilon"] < math.inf
    assert r["ratio"] == pytest.approx(r["shuffle_epsilon"] / r["poisson_epsilon"], rel=1e-15)
    assert (tmp_path / "p.png").stat().st_size > 1000
    assert "random allocation" in capsys.readouterr().out


def test_shuffle_worked_example(capsys, tmp_path):
    # small parameters: sigma = 2, TV 0.05, one epoch (the full example: sigma = 1, delta 0.01)
    out = _load("shuffle_worked_example").main(sigma=2.0, delta=0.05, epochs=(1,),
                                               rounds=(10, 100), output=str(tmp_path / "f.png"))
    plan = out["plans"][1]
    assert plan["exact"]["rounds"] <= plan["chi_square"]["rounds"] < plan["theorem_4_1"]["rounds"]
    f = out["curves"][100]
    assert np.all(f <= 1 - out["alpha"] + 1e-12) and np.all(np.diff(f) <= 0)
    assert "reconstructed" in capsys.readouterr().out
