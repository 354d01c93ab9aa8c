"""certify.lattice: certified upper bounds from a dominating (connect-the-dots) lattice PLD.

Oracles: the exact GDP profile (certify.exact, numeric.delta_mu) for Gaussian compositions,
mpmath quadrature of the single-step hockey-stick integral for the subsampled Gaussian, and the
PLD values of DP-SGD recorded in docs/math.md (dp_accounting, rate 0.01, sigma 1, delta 1e-5;
rounded to three decimals, so "above" is checked up to that rounding).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

pytest.importorskip("flint")
mp = pytest.importorskip("mpmath")

from flint import arb  # noqa: E402

from certify.combine import certified_delta, certified_epsilon  # noqa: E402
from certify.engine import workprec  # noqa: E402
from certify.exact import exact_delta_bound  # noqa: E402
from certify.lattice import (  # noqa: E402
    default_grid,
    lattice_delta_bound,
    lattice_delta_interval,
    lattice_epsilon_bound,
    lattice_epsilon_interval,
    lattice_pld,
    lower_lattice,
    single_step_delta,
)
from numeric.gdp import delta_mu  # noqa: E402
from numeric.mechanisms import Gaussian, PoissonSubsampledGaussian  # noqa: E402
from numeric.mechanisms.base import Mechanism, symmetric_cumulants  # noqa: E402

DPSGD = PoissonSubsampledGaussian(1.0, 0.01)
PLD_EPS = {1000: 1.828, 10000: 6.188, 100000: 25.573}  # dp_accounting PLD, delta = 1e-5
ROUND = 5e-4  # the PLD values are rounded to three decimals


# --- single step ---------------------------------------------------------------------------------


def _hockey_stick_quad(sigma: float, rate: float, eps: float, swap: bool) -> float:
    """delta(eps) = int (q - e^eps p)_+ (or (p - e^eps q)_+) by mpmath quadrature."""
    mu = 1 / mp.mpf(sigma)

    def f(x):
        p = mp.npdf(x)
        q = (1 - rate) * p + rate * mp.npdf(x, mu)
        a, b = (p, q) if swap else (q, p)
        return max(a - mp.exp(eps) * b, 0)

    with mp.workdps(30):
        pts = [-5, 0, mu / 2, 5, 10, 20]
        e = -eps if swap else eps
        if mp.exp(e) > 1 - rate:  # the kink of (.)_+ where L(x) = e
            pts.append((mp.log((mp.exp(e) - 1 + rate) / rate) + mu * mu / 2) / mu)
        return float(mp.quad(f, [-mp.inf, *sorted(pts), mp.inf]))


@pytest.mark.parametrize("eps", [-2.0, -0.5, 0.0, 0.005, 0.3, 1.5, 4.0])
@pytest.mark.parametrize("swap", [False, True])
def test_single_step_closed_forms_match_quadrature(eps, swap):
    sigma, rate = 0.8, 0.05
    mech = PoissonSubsampledGaussian(sigma, rate)
    with workprec(128):
        d = single_step_delta(mech, eps, "Q||P" if swap else "P||Q")
    ref = _hockey_stick_quad(sigma, rate, eps, swap)
    assert d.rel_accuracy_bits() > 60 or d.is_zero() or abs(float(d.mid())) < 1e-30
    assert math.isclose(float(d.mid()), ref, rel_tol=1e-8, abs_tol=1e-15), (float(d.mid()), ref)


def test_single_step_gaussian_matches_gdp_profile():
    for eps in (0.0, 0.5, 2.0):
        with workprec(128):
            d = single_step_delta(Gaussian(1.0), eps)
        assert math.isclose(float(d.mid()), delta_mu(1.0, eps), rel_tol=1e-12)


# --- Gaussian compositions: valid and convergent --------------------------------------------------


@pytest.mark.parametrize(("mu", "m", "eps"), [(1.0, 1, 0.7), (0.5, 16, 2.0), (0.1, 1000, 3.0)])
def test_gaussian_upper_bound_is_valid_and_converges(mu, m, eps):
    comp = [(Gaussian(1.0 / mu), m)]
    exact = exact_delta_bound(comp, eps)
    assert math.isclose(float(exact.upper_mpf), delta_mu(mu * math.sqrt(m), eps), rel_tol=1e-9)
    gaps = []
    for h in (2.0**-5, 2.0**-7, 2.0**-9):
        b = lattice_delta_bound(comp, eps, h=h)
        assert b.upper_method == f"lattice[h={h!r}]" and b.lower_mpf == 0
        assert b.upper_mpf >= exact.upper_mpf  # dominating: never below the truth
        gaps.append(float(b.upper_mpf - exact.upper_mpf))
    # second order in h: each 4x refinement shrinks the gap by about 16 (>= 6 asserted)
    if gaps[0] > 1e-12:
        assert gaps[1] <= gaps[0] / 6 and gaps[2] <= gaps[1] / 6 + 1e-15, gaps
    assert gaps[2] <= 2e-4 * float(exact.upper_mpf)


def test_gaussian_epsilon_upper_bound_is_valid():
    comp = [(Gaussian(4.0), 100)]  # mu = 0.25 per step, 2.5 in total
    b = lattice_epsilon_bound(comp, 1e-5, h=2.0**-8)
    eps_up = b.upper_mpf
    assert delta_mu(2.5, float(eps_up)) <= 1e-5  # the exact delta at eps* is below the target
    assert delta_mu(2.5, float(eps_up) - 0.01) > 1e-5  # and eps* is tight to 0.01
    assert b.upper_method.startswith("lattice[")


def test_lattice_measure_is_dominating_and_sized():
    lat = lattice_pld([(Gaussian(2.0), 4)], h=2.0**-8)
    assert lat.total >= 1 << lat.bits  # masses rounded up: total mass >= 1
    assert lat.total - (1 << lat.bits) < 1 << (lat.bits - 40)  # ... but only by rounding
    assert lat.count == 4 and lat.coeffs.length() > 100


# --- DP-SGD ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("m", "h", "rel"), [(1000, 2.0**-10, 1e-3), (10000, 2.0**-10, 1e-3)])
def test_dp_sgd_upper_epsilon_above_pld(m, h, rel):
    b = lattice_epsilon_bound([(DPSGD, m)], 1e-5, h=h)
    up = float(b.upper_mpf)
    # measured: m=1e3: 1.82890 (h=2^-10), 1.82828 (2^-12); m=1e4: 6.19083, 6.18791;
    # m=1e5: 25.5890, 25.5741 (PLD 1.828, 6.188, 25.573)
    assert up >= PLD_EPS[m] - ROUND
    assert up <= PLD_EPS[m] * (1 + rel)
    assert b.direction == "P||Q"  # the add-one order wins for DP-SGD
    per = b.inputs["per_direction"]
    assert per["Q||P"] < per["P||Q"]


@pytest.mark.slow
@pytest.mark.parametrize("m", [1000, 10000, 100000])
def test_dp_sgd_default_grid_within_a_tenth_of_a_percent(m):
    b = lattice_epsilon_bound([(DPSGD, m)], 1e-5)
    up = float(b.upper_mpf)
    assert PLD_EPS[m] - ROUND <= up <= PLD_EPS[m] * (1 + 2e-4)


def test_dp_sgd_delta_and_epsilon_agree():
    comp = [(DPSGD, 1000)]
    e = lattice_epsilon_bound(comp, 1e-5, h=2.0**-9)
    d = lattice_delta_bound(comp, e.upper_mpf, h=2.0**-9)
    assert d.upper_mpf <= 1e-5
    d2 = lattice_delta_bound(comp, float(e.upper_mpf) - 1e-3, h=2.0**-9)
    assert d2.upper_mpf > 1e-5


def test_default_grid():
    assert default_grid(DPSGD, 1000) == 2.0**-12
    h = default_grid(Gaussian(0.01), 10**6)  # mu = 100 per step: a coarse grid
    assert h > 2.0**-12


# --- consistency with the other certified methods ----------------------------------------------


@pytest.mark.parametrize("comp", [[(Gaussian(3.0), 50)], [(DPSGD, 1000)]])
def test_consistent_with_combine(comp):
    # certified runs the lattice on adaptive grids to a 1e-4 relative target
    # (certify.lattice_target), no longer this fixed grid: the two certified intervals must
    # overlap, and certified must be as tight as the target or as the fixed grid
    def tight(b, ref):
        width = b.upper_mpf - b.lower_mpf
        return width <= max(1e-4 * b.upper_mpf, ref.upper_mpf - ref.lower_mpf)

    for eps in (0.5, 2.0):
        b = certified_delta(comp, eps)  # raises if any two certified intervals are disjoint
        lat = lattice_delta_bound(comp, eps)
        assert b.lower_mpf <= lat.upper_mpf
        low = lattice_delta_interval(comp, eps)
        assert low.lower_mpf <= b.upper_mpf and b.lower_mpf <= low.upper_mpf and tight(b, low)
    for delta in (1e-3, 1e-6):
        b = certified_epsilon(comp, delta)
        lat = lattice_epsilon_bound(comp, delta)
        assert b.lower_mpf <= lat.upper_mpf
        low = lattice_epsilon_interval(comp, delta)
        assert low.lower_mpf <= b.upper_mpf and b.lower_mpf <= low.upper_mpf and tight(b, low)


def test_combine_takes_lattice_upper_end_for_dp_sgd():
    b = certified_epsilon([(DPSGD, 1000)], 1e-5)
    assert b.upper_method.startswith("lattice[")
    assert PLD_EPS[1000] - ROUND <= float(b.upper_mpf) <= PLD_EPS[1000] * 1.001


# --- lower end: the exactly evaluated binned threshold test -----------------------------------


@pytest.mark.parametrize(("mu", "m", "eps"), [(1.0, 1, 0.7), (0.5, 16, 2.0), (0.1, 1000, 3.0)])
def test_gaussian_lower_bound_is_valid_and_tightens(mu, m, eps):
    comp = [(Gaussian(1.0 / mu), m)]
    exact = exact_delta_bound(comp, eps)
    widths = []
    for h in (2.0**-5, 2.0**-7, 2.0**-9):
        b = lattice_delta_interval(comp, eps, h=h)
        assert b.lower_method == f"lattice-test[h={h!r}]"
        assert 0 < b.lower_mpf <= exact.lower_mpf <= exact.upper_mpf <= b.upper_mpf
        widths.append(float(b.upper_mpf - b.lower_mpf))
    # measured (mu, m) = (0.1, 1000): [0.61766, 0.63016], [0.62158, 0.62237], [0.62183, 0.62188]
    assert widths[1] <= widths[0] / 6 and widths[2] <= widths[1] / 6, widths
    assert widths[2] <= 1e-4 * float(exact.upper_mpf)


def test_gaussian_epsilon_interval_contains_exact():
    comp = [(Gaussian(4.0), 100)]  # mu = 2.5 in total
    b = lattice_epsilon_interval(comp, 1e-5, h=2.0**-8)
    lo, up = float(b.lower_mpf), float(b.upper_mpf)
    assert delta_mu(2.5, lo) > 1e-5 >= delta_mu(2.5, up)
    assert 0 < up - lo < 0.01


def test_lower_lattice_laws():
    lat = lower_lattice([(DPSGD, 1000)], "P||Q", h=2.0**-9)
    assert int(lat.q.coeffs(1)) <= 1 << lat.bits  # rounded down: Q' total mass <= 1
    assert int(lat.q.coeffs(1)) > (1 << lat.bits) * (1 - 1e-12)
    assert int(lat.r.coeffs(1)) > (1 << lat.bits) // 2  # renormalised tilt keeps R' of order 1
    assert lat.r.extra < 1 << (lat.bits - 50)


@pytest.mark.parametrize(("m", "h", "width"), [(1000, 2.0**-10, 1.2e-3), (10000, 2.0**-10, 5e-3)])
def test_dp_sgd_epsilon_interval_brackets_pld(m, h, width):
    b = lattice_epsilon_interval([(DPSGD, m)], 1e-5, h=h)
    lo, up = float(b.lower_mpf), float(b.upper_mpf)
    # measured: m=1e3: [1.827905, 1.828903] (h=2^-10), [1.828216, 1.828278] (2^-12);
    # m=1e4: [6.186161, 6.190825], [6.187615, 6.187907]; m=1e5: [25.44262, 25.82095] (2^-8),
    # [25.54189, 25.63694] (2^-9), [25.56520, 25.58897] (2^-10), [25.57260, 25.57411] (default)
    assert 0 < lo <= PLD_EPS[m] + ROUND
    assert up - lo <= width
    assert b.lower_method == f"lattice-test[h={h!r}]"
    per = b.inputs["per_direction_lower"]
    assert per["Q||P"] < per["P||Q"] == lo  # the max over pair orders


def test_dp_sgd_delta_interval_consistent_with_epsilon_interval():
    comp, h = [(DPSGD, 1000)], 2.0**-9
    e = lattice_epsilon_interval(comp, 1e-5, h=h)
    d = lattice_delta_interval(comp, e.lower_mpf, h=h)
    assert d.lower_mpf > 1e-5  # the certificate behind the eps lower end
    d2 = lattice_delta_interval(comp, float(e.lower_mpf) + 1e-3, h=h)
    assert d2.lower_mpf <= 1e-5
    for eps in (0.0, 0.5, 2.0, 4.0):
        d = lattice_delta_interval(comp, eps, h=h)
        assert d.lower_mpf <= d.upper_mpf
        # measured relative widths (eps = 0, 0.5, 2, 4): 2.8e-3, 8.5e-3, 3.2e-2, 2.9e-2 at
        # h = 2^-9; 1.8e-4, 5.3e-4, 2.0e-3, 2.0e-3 at h = 2^-11 (second order in h)
        assert d.lower_mpf > 0 and d.upper_mpf - d.lower_mpf < 0.05 * float(d.upper_mpf)


@pytest.mark.slow
def test_dp_sgd_large_count_tilted_lower_end():
    b = lattice_epsilon_interval([(DPSGD, 100000)], 1e-5, h=2.0**-9)
    lo, up = float(b.lower_mpf), float(b.upper_mpf)
    assert 25.5 < lo <= PLD_EPS[100000] + ROUND <= up + 2 * ROUND
    assert up - lo < 0.1


def test_combine_takes_lattice_lower_end_for_dp_sgd():
    b = certified_epsilon([(DPSGD, 1000)], 1e-5)
    assert b.lower_method.startswith("lattice-test[")
    assert b.upper_method.startswith("lattice[")
    assert float(b.lower_mpf) <= PLD_EPS[1000] + ROUND
    assert b.width() <= 1e-4 * PLD_EPS[1000]


# --- bad input and applicability ---------------------------------------------------------------


@dataclass(frozen=True)
class _Opaque(Mechanism):
    def _cumulants(self, order):
        return symmetric_cumulants([-0.5, 1.0][:order] + [0.0] * max(0, order - 2))


@pytest.mark.parametrize("comp", [
    [(_Opaque(), 3)],
    [(Gaussian(1.0), 3), (_Opaque(), 5)],
])
def test_not_applicable(comp):
    with pytest.raises(ValueError, match="does not apply") as ei:
        lattice_delta_bound(comp, 1.0)
    assert "must" not in str(ei.value)  # combine reads "must" + eps/delta as bad input


@pytest.mark.parametrize("eps", [-1.0, float("nan"), float("inf"), "abc"])
def test_bad_eps(eps):
    with pytest.raises(ValueError, match="eps"):
        lattice_delta_bound(Gaussian(1.0), eps)


@pytest.mark.parametrize("delta", [0.0, 1.0, 1.5, -1e-3, float("nan")])
def test_bad_delta(delta):
    with pytest.raises(ValueError, match="delta"):
        lattice_epsilon_bound(Gaussian(1.0), delta)


@pytest.mark.parametrize(("h", "bits"), [(0.0, None), (-1.0, None), (float("nan"), None),
                                          (None, 8), (None, 2.5)])
def test_bad_grid_parameters(h, bits):
    with pytest.raises(ValueError, match="must"):
        lattice_pld(Gaussian(1.0), h=h, bits=bits)


def test_bad_direction():
    with pytest.raises(ValueError, match="direction"):
        lattice_pld(Gaussian(1.0), "sideways")


def test_arb_eps_ball_is_evaluated_at_its_lower_end():
    with workprec(64):
        ball = arb(1.0) + arb(0).union(arb(1e-3))
    b = lattice_delta_bound(Gaussian(1.0), ball, h=2.0**-8)
    assert b.upper_mpf >= delta_mu(1.0, 1.0)


@pytest.mark.parametrize("swapped", [False, True])
@pytest.mark.parametrize(("sigma", "rate", "count"), [(0.8, 0.01, 100), (2.0, 0.001, 10**4),
                                                      (1.0, 0.1, 10)])
def test_grid_range_ends_pass_their_test_and_sit_near_its_boundary(sigma, rate, count, swapped):
    # the ends pass the range test (mass beyond them at most 2^-72 / count, certified), and the
    # bisection (lattice_grid._RANGE_STEPS = 12) leaves each within 2^-12 of its doubling bracket
    # (0.25 wide, or at most as wide as the end is far from zero), so moving an end by 2^-11 of
    # max(0.25, |end|) inwards fails the test
    from certify.lattice_grid import grid_range
    from certify.mechanisms.subsampled_gaussian import SubsampledGaussianStep

    step = SubsampledGaussianStep(sigma, rate, swapped)
    lo, hi = grid_range(step, count)
    tol = arb(2.0**-72) / count
    with workprec(128):
        assert lo <= 0.0 <= hi
        for end, test in ((lo, step.gap), (hi, step.excess)):
            if end == 0.0:
                continue
            assert test(arb(end)).upper() <= tol
            inward = end - math.copysign(2.0**-11 * max(0.25, abs(end)), end)
            assert not test(arb(inward)).upper() <= tol
