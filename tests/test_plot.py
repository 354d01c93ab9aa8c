"""Figures (numeric.plotting, edgeworth plot): points against independent oracles, proven bands,
files in every format, JSON shape, bad input.

Oracles: G_mu = Phi(Phi^{-1}(1 - a) - mu) (GDP Def. 2.6) and delta_mu (GDP Cor. 2.13) in mpmath
at 40 digits; the n-fold randomized response trade-off curve by the Neyman-Pearson lemma in exact
rationals (eps0 = log 3, so e^eps0 = 3 and the per-step probabilities are 3/4 and 1/4).
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from fractions import Fraction
from math import comb
from pathlib import Path

import numpy as np
import pytest

from numeric import Gaussian, PoissonSubsampledGaussian, RandomizedResponse, compose
from numeric.cli import main
from numeric.plotting import (
    delta_data,
    delta_staircase,
    save_figure,
    steps_data,
    tradeoff_band,
    tradeoff_data,
)

mpmath = pytest.importorskip("mpmath")
mpmath.mp.dps = 40
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _has_certify() -> bool:
    try:
        import flint  # noqa: F401
    except ImportError:
        return False
    return True


needs_certify = pytest.mark.skipif(not _has_certify(), reason="needs the certify extra")
needs_mpl = pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                               reason="needs the plot extra")


def g_mu(mu, a) -> float:
    """G_mu(a) in mpmath (GDP Def. 2.6)."""
    a = mpmath.mpf(a)
    if a == 0:
        return 1.0
    if a == 1:
        return 0.0
    z = -mpmath.sqrt(2) * mpmath.erfinv(2 * a - 1)  # Phi^{-1}(1 - a)
    return float(mpmath.ncdf(z - mu))


def delta_mu(mu, eps) -> float:
    """delta_mu(eps) in mpmath (GDP Cor. 2.13)."""
    mu, eps = mpmath.mpf(mu), mpmath.mpf(eps)
    return float(mpmath.ncdf(-eps / mu + mu / 2)
                 - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2))


def rr_tradeoff(n: int, a: Fraction) -> Fraction:
    """n-fold randomized response with e^eps0 = 3: T(P, Q)(a) by Neyman-Pearson, exactly.

    K = number of outputs equal to the input 0: Bin(n, 3/4) under P, Bin(n, 1/4) under Q. The
    likelihood ratio Q/P = 3^(n - 2k) decreases in k, so the optimal tests reject k = 0, 1, ...
    in turn, randomizing on the boundary atom.
    """
    p, q = Fraction(3, 4), Fraction(1, 4)
    P = [comb(n, k) * p**k * q ** (n - k) for k in range(n + 1)]
    Q = [comb(n, k) * q**k * p ** (n - k) for k in range(n + 1)]
    used, beta = Fraction(0), Fraction(1)
    for k in range(n + 1):
        if used + P[k] >= a:
            return beta - (a - used) / P[k] * Q[k]
        used += P[k]
        beta -= Q[k]
    return Fraction(0)


def _series(data, kind):
    return [s for s in data.series if s.kind == kind]


def test_gaussian_curve_and_reference_match_mpmath():
    data = tradeoff_data([compose([(Gaussian(2.0), 4)])], mus=[0.5], alpha_points=101)
    (exact,) = _series(data, "exact")
    (ref,) = _series(data, "reference")
    for s, mu in ((exact, 1.0), (ref, 0.5)):  # 4 steps of sigma 2: mu = sqrt(4)/2 = 1
        for a, y in zip(s.x[::7], s.y[::7], strict=True):
            assert y == pytest.approx(g_mu(mu, a), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("n", [1, 5, 12])
def test_randomized_response_curve_is_exact_in_rationals(n):
    data = tradeoff_data([compose([(RandomizedResponse(math.log(3)), n)])], alpha_points=101)
    (s,) = _series(data, "exact")
    checked = 0
    for a, y in zip(s.x, s.y, strict=True):
        if a in (0.0, 0.1, 0.25, 0.5, 0.75, 0.93) or 0 < a < 1e-3:
            want = float(rr_tradeoff(n, Fraction(a)))
            assert y == pytest.approx(want, rel=1e-12, abs=1e-15)
            checked += 1
    assert checked >= 6


def test_band_formula_contains_the_gaussian_curve():
    mu = 1.3
    eps = np.linspace(0.0, 6.0, 25)
    exact = np.array([delta_mu(mu, e) for e in eps])
    lo, hi = exact * (1 - 1e-9), np.minimum(exact * (1 + 1e-9), 1.0)  # a narrow enclosure
    alpha = np.concatenate((np.linspace(0, 1, 201), np.logspace(-9, -1, 30)))
    lower, upper = tradeoff_band(eps, lo, hi, alpha)
    truth = np.array([g_mu(mu, a) for a in alpha])
    assert np.all(lower <= truth) and np.all(truth <= upper)
    assert np.max(upper - lower) < 0.02  # informative, not just [0, 1 - a]


def test_band_needs_eps_zero_and_sorted_points():
    with pytest.raises(ValueError, match="start at 0"):
        tradeoff_band([0.5, 1.0], [0.1, 0.05], [0.1, 0.05], [0.5])
    with pytest.raises(ValueError, match="increasing"):
        tradeoff_band([0.0, 1.0, 0.5], [0.1] * 3, [0.1] * 3, [0.5])
    with pytest.raises(ValueError, match="lower <= upper"):
        delta_staircase([0.0, 1.0], [0.2, 0.1], [0.1, 0.1])


def test_delta_staircase_contains_the_profile_between_points():
    mu = 1.0
    eps = np.linspace(0.0, 4.0, 9)
    d = np.array([delta_mu(mu, e) for e in eps])
    x, lo, hi = delta_staircase(eps, d, d)
    for i in range(0, x.size, 2):  # each step [x_i, x_{i+1}]
        for e in np.linspace(x[i], x[i + 1], 7):
            assert lo[i] <= delta_mu(mu, e) <= hi[i]


@needs_certify
def test_certified_band_contains_exact_gaussian_and_rr_curves():
    g = compose([(Gaussian(2.0), 4)])
    rr = compose([(RandomizedResponse(math.log(3)), 5)])
    data = tradeoff_data([g, rr], certified=True, points=20, alpha_points=101)
    bands = _series(data, "certified")
    assert len(bands) == 2 and all(b.upper for b in bands)
    for a, lo, hi in zip(bands[0].x, bands[0].lower, bands[0].upper, strict=True):
        assert lo <= g_mu(1.0, a) <= hi
    for a, lo, hi in zip(bands[1].x, bands[1].lower, bands[1].upper, strict=True):
        assert lo <= float(rr_tradeoff(5, Fraction(a))) <= hi
    assert max(h - lo for lo, h in zip(bands[0].lower, bands[0].upper, strict=True)) < 0.05
    assert len(bands[0].intervals) == 20 and isinstance(bands[0].intervals[0][1], str)


@needs_certify
def test_certified_delta_and_steps_bands_contain_gaussian_truth():
    g = compose([(Gaussian(1.0), 1)])
    data = delta_data(g, certified=True, points=10, eps_max=3.0)
    (band,) = _series(data, "certified")
    for i in range(0, len(band.x), 2):
        for e in np.linspace(band.x[i], band.x[i + 1], 5):
            assert band.lower[i] <= delta_mu(1.0, e) <= band.upper[i]
    steps = steps_data(compose([(Gaussian(4.0), 50)]), 1e-5, certified=True, points=8)
    (line,) = _series(steps, "exact")
    (band,) = _series(steps, "certified")
    for m, y in zip(line.x, line.y, strict=True):
        i = max(j for j in range(0, len(band.x), 2) if band.x[j] <= m)
        assert band.lower[i] <= y * (1 + 1e-12) and y <= band.upper[i] * (1 + 1e-12)


def test_estimates_are_labelled_and_fast():
    import time

    sgd = compose([(PoissonSubsampledGaussian(1.0, 0.01), 1000)])
    t0 = time.perf_counter()
    data = tradeoff_data(sgd)
    d2 = delta_data(sgd)
    assert time.perf_counter() - t0 < 5.0
    for d in (data, d2):
        (s,) = d.series
        assert s.kind == "estimate" and "estimate" in s.label


@needs_mpl
@pytest.mark.parametrize("suffix,magic", [(".png", b"\x89PNG"), (".svg", b"<?xml"),
                                          (".pdf", b"%PDF")])
def test_files_in_every_format(tmp_path, suffix, magic):
    data = tradeoff_data(compose([(RandomizedResponse(0.5), 4)]), mus=[1.0],
                         eps_deltas=[(1.0, 1e-3)])
    out = save_figure(data, tmp_path / f"f{suffix}")
    assert out.read_bytes().startswith(magic)
    assert main(["plot", "delta", "--mechanism", "gaussian", "--sigma", "2", "--steps", "3",
                 "--output", str(tmp_path / f"d{suffix}")]) == 0
    assert (tmp_path / f"d{suffix}").read_bytes().startswith(magic)


def test_json_points(capsys):
    argv = ["plot", "tradeoff", "--mechanism", "gaussian", "--sigma", "2", "--steps", "4",
            "--gdp-mu", "1", "--eps-delta", "1,1e-3", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["figure"] == "tradeoff" and out["xlabel"] and out["caption"]
    kinds = [s["kind"] for s in out["series"]]
    assert kinds == ["exact", "reference", "reference"]
    s = out["series"][0]
    assert len(s["x"]) == len(s["y"]) > 100
    i = s["x"].index(0.25)
    assert s["y"][i] == pytest.approx(g_mu(1.0, 0.25), rel=1e-13)  # full precision
    assert main(["plot", "steps", "--mechanism", "gaussian", "--sigma", "3", "--steps", "30",
                 "--delta", "1e-5", "--points", "5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["xscale"] == "log" and out["series"][0]["x"][0] == 1.0


@pytest.mark.parametrize("argv,msg", [
    (["tradeoff", "--mechanism", "gaussian", "--sigma", "1", "--steps", "1", "--output",
      "x.jpg"], "--output must end in"),
    (["tradeoff", "--json"], "give --mechanism"),
    (["tradeoff", "--mechanism", "gaussian", "--sigma", "1", "--steps", "1"], "--output"),
    (["tradeoff", "--mechanism", "gaussian", "--sigma", "1", "--steps", "1", "--gdp-mu", "-1",
      "--json"], "--gdp-mu"),
    (["tradeoff", "--mechanism", "gaussian", "--sigma", "1", "--steps", "1", "--eps-delta",
      "1", "--json"], "EPS,DELTA"),
    (["delta", "--mechanism", "gaussian", "--sigma", "1", "--steps", "1", "--points", "1",
      "--json"], "points"),
    (["steps", "--mechanism", "gaussian", "--sigma", "1", "--steps", "5", "--delta", "2",
      "--json"], "delta"),
    (["bogus"], "invalid choice"),
])
def test_bad_input_exits_2(argv, msg, capsys):
    assert main(["plot", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("edgeworth: error:") and msg in err


def test_missing_matplotlib_names_the_extra(monkeypatch, tmp_path, capsys):
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg"):
        monkeypatch.setitem(sys.modules, name, None)
    data = tradeoff_data(compose([(Gaussian(1.0), 1)]))
    with pytest.raises(ImportError, match=r"pip install '\.\[plot\]'"):
        save_figure(data, tmp_path / "x.png")
    assert main(["plot", "tradeoff", "--mechanism", "gaussian", "--sigma", "1", "--steps", "1",
                 "--output", str(tmp_path / "x.png")]) == 1
    assert "needs the plot extra" in capsys.readouterr().err


def test_points_import_no_matplotlib():
    import subprocess

    code = ("import sys, numeric.plotting, numeric.cli; "
            "from numeric import Gaussian, compose; "
            "numeric.plotting.tradeoff_data(compose([(Gaussian(1.0), 1)])); "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@needs_mpl
def test_plot_tradeoff_example(tmp_path, capsys):
    out = _load("plot_tradeoff").main(str(tmp_path / "t.png"), n=4, sgd_steps=50,
                                      certified=_has_certify(), points=6,
                                      time_budget=3.0)
    assert out["path"].exists()
    text = capsys.readouterr().out
    assert "ESTIMATE" in text and "exact" in text


def rr_delta(eps0: float, m: int, eps: float) -> float:
    """delta(eps) of m-fold randomized response in mpmath: sum_k (P_k - e^eps Q_k)_+ (KOV)."""
    e = mpmath.exp(mpmath.mpf(eps0))
    p, q = e / (1 + e), 1 / (1 + e)
    total = mpmath.mpf(0)
    for k in range(m + 1):
        pk = mpmath.binomial(m, k) * p**k * q ** (m - k)
        qk = mpmath.binomial(m, k) * q**k * p ** (m - k)
        total += max(mpmath.mpf(0), pk - mpmath.exp(mpmath.mpf(eps)) * qk)
    return float(total)


def test_check_your_formula_example_refutes_the_naive_bound(capsys):
    pytest.importorskip("sympy")
    if not _has_certify():
        pytest.skip("needs the certify extra")
    rows = _load("check_your_formula").main("randomized-response", eps0=1.0, steps=(30,),
                                            symbolic_timeout=2.0)
    claim, drv = rows
    assert claim["eps"] == pytest.approx(math.sqrt(60 * math.log(1e5)), rel=1e-15)
    truth = rr_delta(1.0, 30, claim["eps"])  # 8.3156e-4 > 1e-5: the claim is false here
    assert claim["lower"] <= truth <= claim["upper"] and claim["lower"] > 1e-5
    assert claim["rr_exact"] == pytest.approx(truth, rel=1e-9)
    assert claim["verdict"].startswith("FAILS") and drv["verdict"].startswith("holds")
    assert rr_delta(1.0, 30, drv["eps"]) <= drv["upper"] <= 1e-5
    assert "The claim is false" in capsys.readouterr().out


@pytest.mark.slow
def test_check_your_formula_example_with_laplace_from_its_density():
    pytest.importorskip("sympy")
    if not _has_certify():
        pytest.skip("needs the certify extra")
    rows = _load("check_your_formula").main("laplace", eps0=0.5, steps=(30, 50))
    verdicts = {(r["m"], r["formula"]): r["verdict"].split()[0] for r in rows}
    assert verdicts == {(30, "claim"): "holds", (30, "DRV"): "holds",
                        (50, "claim"): "FAILS", (50, "DRV"): "holds"}
    # randomized response is the worst eps0-DP mechanism (KOV): Laplace never exceeds it
    assert all(r["upper"] <= r["rr_exact"] * (1 + 1e-9) + 1e-20 for r in rows)


@needs_mpl
def test_a_band_without_a_proven_upper_end_is_drawn_as_a_lower_bound(tmp_path):
    from numeric.plotting import FigureData, Series

    band = Series("x: certified band (2 points)", "certified", (0.0, 0.5, 1.0),
                  lower=(0.9, 0.3, 0.0), method="certified", intervals=((0.0, "0", "0.1"),))
    data = FigureData("tradeoff", "t", "alpha", "beta", "caption", (band,))
    out = save_figure(data, tmp_path / "lower.svg")
    assert "certified lower bound only" in out.read_text()
    assert data.to_dict()["series"][0]["upper_proven"] is False
