"""The fast cold AEA path (issue 13) computes what the straightforward one computes.

Oracles independent of the code under test: numpy.polynomial's own operations (herme2poly,
polyadd, polysub, polymul, in the construction's order) for the correction polynomial's bits;
mpmath at 30 digits for the surrogate's derivative; closed-form roots for the Newton solver; and
Brent's method (numeric.solvers.brentq, checked against SciPy's in test_solvers.py) for the AEA
roots. Timings are not tested here (benchmarks/bench_aea_vs_pld.py --cold-grid measures them).
"""

from __future__ import annotations

import math
from math import comb

import mpmath as mp
import numpy as np
import pytest
from numpy.polynomial import hermite_e as herm
from numpy.polynomial import polynomial as poly

import numeric
from numeric import solvers
from numeric.edgeworth import (
    SERIES_ORDERS,
    QOnlyScalar,
    edgeworth_sf,
    q_only_delta,
    series_coefficients,
    standardize,
)


def _numpy_polynomial_reference(sigma: float, coeffs: dict[int, float]) -> np.ndarray:
    """sum_k c_k [He_{k-1}(z) - sum_j C(k,j) (-sigma)^{k-j} He_{j-1}(z + sigma)] in powers of z,
    built with numpy.polynomial's functions (He_{j-1}(z + sigma) by Horner in z + sigma)."""
    total = np.zeros(1)
    for k, c in sorted(coeffs.items()):
        term = herm.herme2poly(np.eye(k)[k - 1])
        for j in range(1, k + 1):
            he = herm.herme2poly(np.eye(j)[j - 1])
            shifted = np.array([he[-1] + 0.0])
            for i in range(2, len(he) + 1):
                shifted = poly.polyadd(np.array([he[-i]]), poly.polymul(shifted, [sigma, 1.0]))
            term = poly.polysub(term, poly.polymul([comb(k, j) * (-sigma) ** (k - j)], shifted))
        total = poly.polyadd(total, poly.polymul([c], term))
    return total


def test_correction_polynomial_has_numpy_polynomials_bits():
    from numeric.edgeworth import _correction_polynomial

    rng = np.random.default_rng(13)
    for order in sorted(o for o in SERIES_ORDERS if o > 0):
        need = SERIES_ORDERS[order][0]
        for _ in range(12):
            lam = {j: float(rng.normal() * 0.3) for j in range(3, need + 1)}
            coeffs = series_coefficients(lam, order)
            sigma = float(np.exp(rng.uniform(-4.0, 6.0)))
            want = _numpy_polynomial_reference(sigma, coeffs)
            got = _correction_polynomial(sigma, coeffs)
            assert got.tobytes() == want.tobytes(), (order, sigma)


@pytest.mark.parametrize("order", [0, 1, 2, 3])
def test_scalar_surrogate_matches_the_vectorized_one(order):
    rng = np.random.default_rng(order)
    need = SERIES_ORDERS[order][0]
    for _ in range(20):
        lam = {j: float(rng.normal() * 0.2) for j in range(3, need + 1)}
        coeffs = series_coefficients(lam, order)
        sigma = float(np.exp(rng.uniform(-2.0, 3.0)))
        one = QOnlyScalar(sigma, coeffs)
        for z0 in (-2.0, 0.0, 0.3, 2.5, 7.0, 30.0):
            d, sf, cancel = one(z0)
            want, want_cancel = q_only_delta(np.array([z0]), sigma, coeffs)
            scale = abs(float(want[0])) * float(want_cancel[0]) + 1e-300
            assert abs(d - float(want[0])) <= 1e-13 * scale
            assert sf == pytest.approx(float(edgeworth_sf(np.array([z0]), coeffs)[0]),
                                       rel=1e-12, abs=1e-300)
            # the bound is a ratio to |delta|: as precise as delta itself
            assert cancel == pytest.approx(float(want_cancel[0]),
                                           rel=1e-14 * float(want_cancel[0]))


def _mp_q_only(eps: mp.mpf, k1: float, sigma: float, coeffs: dict[int, float]) -> mp.mpf:
    """delta_G(eps) = int_eps^inf (1 - e^{eps - s}) g(s) ds of the Edgeworth density (mpmath)."""
    def density(s):
        z = (s - k1) / sigma
        he = [mp.mpf(1), z]
        for j in range(1, max(coeffs, default=1)):
            he.append(z * he[j] - j * he[j - 1])
        return mp.npdf(z) / sigma * (1 + sum(c * he[k] for k, c in coeffs.items()))
    return mp.quad(lambda s: (1 - mp.e ** (eps - s)) * density(s), [eps, eps + 5 * sigma, mp.inf])


def test_surrogate_slope_is_delta_minus_survival():
    # d delta_G / d eps = delta_G - (1 - G): against mpmath's numerical derivative of delta_G
    mp.mp.dps = 30
    k1, sigma = 1.3, 0.9
    coeffs = series_coefficients({3: 0.25, 4: -0.1}, 2)
    profile = QOnlyScalar(sigma, coeffs)
    for eps in (1.5, 4.0):
        val, sf, _ = profile((eps - k1) / sigma)
        want = mp.diff(lambda e: _mp_q_only(e, k1, sigma, coeffs), mp.mpf(eps))
        assert val - sf == pytest.approx(float(want), rel=1e-9)


def test_newton_log_root_closed_forms():
    # f(x) = e^{-x^2 / 2}: log f = log t at x = sqrt(-2 log t)
    def f(x):
        v = math.exp(-0.5 * x * x)
        return v, -x * v

    for t in (1e-3, 1e-10, 1e-100):
        want = math.sqrt(-2.0 * math.log(t))
        got = solvers.newton_log_root(f, 0.5, want + 3.0, t, 0.5)
        assert got == pytest.approx(want, rel=1e-14)


def test_newton_log_root_bisects_where_newton_cannot():
    # the slope is reported with the wrong sign: every step bisects, and the root is still found
    def f(x):
        v = math.exp(-x)
        return v, +v

    got = solvers.newton_log_root(f, 0.0, 50.0, math.exp(-7.25), 49.0)
    assert got == pytest.approx(7.25, rel=1e-13)
    with pytest.raises(ValueError, match="NaN"):
        solvers.newton_log_root(lambda x: (math.nan, -1.0), 0.0, 1.0, 0.5, 0.5)
    with pytest.raises(ValueError, match="target"):
        solvers.newton_log_root(f, 0.0, 1.0, 0.0, 0.5)


@pytest.mark.parametrize(("sigma", "rate", "steps", "delta"), [
    (0.8, 0.001, 1000, 1e-5), (1.0, 0.01, 10**6, 1e-5), (2.0, 0.01, 100, 1e-10),
    (0.5, 0.1, 10**4, 1e-5), (1.0, 0.01, 1000, 1e-300),
])
def test_newton_and_brent_find_the_same_aea_root(sigma, rate, steps, delta):
    comp = numeric.compose([(numeric.PoissonSubsampledGaussian(sigma, rate), steps)])
    k1, s, lam = standardize(comp.cumulants(4)[1])
    coeffs = series_coefficients(lam, 2)
    one = QOnlyScalar(s, coeffs)

    def surrogate(x):
        return q_only_delta((np.asarray(x) - k1) / s, s, coeffs, cancellation=False)[0]

    def value_and_slope(x):
        val, sf, _ = one((x - k1) / s)
        return val, val - sf

    hi = max(k1 + 60.0 * s, 1.0)
    brent = solvers.largest_crossing(surrogate, 0.0, hi, delta, 4001)
    newton = solvers.largest_crossing(surrogate, 0.0, hi, delta, 4001, value_and_slope)
    assert newton.crossings == brent.crossings
    assert newton.root == pytest.approx(brent.root, rel=1e-12)
    aea = numeric.epsilon(comp, delta, method="aea").per_direction["P||Q"]
    assert aea == pytest.approx(brent.root, rel=1e-12)  # the AEA answer is that root


def test_cold_aea_query_needs_no_adaptive_quadrature(monkeypatch):
    # the hot path uses fixed Gauss rules only: an adaptive scipy quad would raise here
    import scipy.integrate

    def refuse(*args, **kwargs):
        raise AssertionError("adaptive quadrature on the AEA hot path")

    monkeypatch.setattr(scipy.integrate, "quad", refuse)
    from numeric.cgf import clear_cgf_cache

    clear_cgf_cache()
    comp = numeric.compose([(numeric.PoissonSubsampledGaussian(1.234567, 0.00987), 10**6)])
    res = numeric.epsilon(comp, 1e-5, method="aea")
    assert math.isfinite(res.epsilon) and res.epsilon > 0.0


# ---------------------------------------------------------------- the cheaper cumulant rule (cold)


def test_fast_logaddexp_matches_numpy():
    """_logaddexp_const (the cumulant PLLR's log(e^a + e^b)) agrees with numpy's logaddexp to a
    few ulps of the larger argument, over 14 decades and both signs of b - a."""
    from numeric.mechanisms.subsampled_gaussian import _logaddexp_const

    rng = np.random.default_rng(13)
    for a in (math.log1p(-1e-3), 0.0, -3.2, math.log1p(-0.5), -745.0):
        b = np.concatenate([rng.normal(size=4000) * s for s in (1e-6, 1e-2, 1.0, 30.0, 700.0)])
        got = _logaddexp_const(a, b.copy())
        ref = np.logaddexp(a, b)
        scale = np.maximum(np.abs(a), np.abs(b)) + math.log(2.0)
        assert np.all(np.abs(got - ref) <= 4.0 * np.finfo(float).eps * scale)


def test_fast_pllr_matches_the_public_one():
    """_pllr_fast (the cumulant rule's PLLR) is subsampled_gaussian_pllr up to a few ulps."""
    from numeric.mechanisms.subsampled_gaussian import _pllr_fast, subsampled_gaussian_pllr

    x = np.linspace(-40.0, 60.0, 5001)
    for mu, rate in ((1.0, 1e-3), (1.25, 0.01), (20.0, 1e-6), (0.5, 0.5), (2.0, 0.9)):
        got, ref = _pllr_fast(x, mu, rate), subsampled_gaussian_pllr(x, mu, rate)
        # a few ulps of the arguments of log(e^a + e^b): |log(1 - p)| and |log p + u|
        scale = np.abs(mu * x - 0.5 * mu * mu) + abs(math.log(rate)) + 1.0
        assert np.all(np.abs(got - ref) <= 4.0 * np.finfo(float).eps * scale)
        small = mu * x - 0.5 * mu * mu < 0.0  # the log1p branch is the same code: same bits
        assert np.array_equal(got[small], ref[small])


@pytest.mark.parametrize(("sigma", "rate", "order"), [
    (0.8, 1e-3, 16), (1.0, 0.01, 8), (2.0, 1e-3, 6), (0.05, 1e-6, 8), (0.5, 0.5, 12),
    (0.3, 0.1, 6),
])
def test_cumulant_rule_on_twenty_margin_matches_forty(monkeypatch, sigma, rate, order):
    """The rule on [-20, mu + 20] (issue 13) gives the cumulants of the former [-40, mu + 40]
    rule (the reference: the same integrand with twice the tail margin, where the Gaussian
    weights underflow) to 1e-12 relative or 1e-14 in standardized units, up to order 16."""
    from numeric.mechanisms import subsampled_gaussian as sg

    mu = 1.0 / sigma
    got = sg._quadrature_cumulants(mu, rate, order, 24)
    monkeypatch.setattr(sg, "_RULE_TAIL", 40.0)
    ref = sg._quadrature_cumulants(mu, rate, order, 24)
    for g, r in zip(got, ref, strict=True):
        unit = abs(r[1]) ** (np.arange(1, order + 1) / 2.0)
        assert np.all(np.abs(g - r) <= 1e-12 * np.abs(r) + 1e-14 * unit), (g - r) / r
