"""Saddlepoint reliability (issue 12 leftovers): the diagnostic state has one source of truth
that ``auto`` reads, extreme Gaussian compositions are answered or refused (never a silently
wrong number), and eps = 0 is reported only where delta(0) <= delta.

Reference values come from independent oracles: closed forms evaluated in mpmath (GDP, Dong,
Roth, Su 2022, Cor. 2.13; the one-step Poisson-subsampled Gaussian's hockey-stick divergence
in closed form), or values copied here with their source noted.
"""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import numeric
from numeric.composition import compose
from numeric.errors import NotApplicable
from numeric.mechanisms import (
    ApproxDP,
    Gaussian,
    Laplace,
    PoissonSubsampledGaussian,
    RandomizedResponse,
)
from numeric.saddlepoint import saddlepoint_delta, saddlepoint_epsilon
from numeric.saddlepoint.diagnostics import FIRED_NOTE, finish

mp = pytest.importorskip("mpmath")


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


# ---------------------------------------------------------------------------------------------
# 1. one source of truth for the diagnostic state
# ---------------------------------------------------------------------------------------------

# fuzz draw 391 (tests/fuzz_cases.py: the inputs, the finding, the mpmath reference)
from fuzz_cases import DRAW_391 as _DRAW_391  # noqa: E402
from fuzz_cases import EPS_391 as _EPS_391  # noqa: E402
from fuzz_cases import REF_391 as _REF_391  # noqa: E402

_LATTICE = "the PLLR is purely atomic"
_NOTES = (_LATTICE, "delta=")  # the lattice note; "no finite epsilon" (delta <= delta part)


def _assert_consistent(res) -> None:
    """The warnings are the diagnostics, then the fired note iff there are any, then notes."""
    diags = res.details["diagnostics"]
    assert (FIRED_NOTE in res.warnings) == bool(diags), (res.warnings, diags)
    assert list(res.warnings[:len(diags)]) == list(diags)
    rest = res.warnings[len(diags):]
    assert all(w == FIRED_NOTE or w.startswith(_NOTES) for w in rest), rest


_QUERIES = [
    (_DRAW_391, 0),
    (_DRAW_391, 1),
    (_DRAW_391, 2),
    ([(RandomizedResponse(0.05), 2000), (ApproxDP(0.07, 1e-9), 1000)], 2),  # lattice note only
    ([(Gaussian(1.0), 4)], 2),  # nothing at all
    ([(PoissonSubsampledGaussian(0.8, 0.01), 100)], 2),  # "one big step": diagnostics fire
    ([(PoissonSubsampledGaussian(1.0, 0.01), 1000), (Laplace(3.0), 10)], 3),
]


@pytest.mark.parametrize(("terms", "order"), _QUERIES)
def test_diagnostic_state_is_consistent(terms, order):
    comp = compose(terms)
    _assert_consistent(saddlepoint_delta(comp, [0.0, 0.3, _EPS_391, 2.0], order=order))
    _assert_consistent(saddlepoint_delta(comp, 0.5, order=order))
    try:
        _assert_consistent(saddlepoint_epsilon(comp, 1e-5, order=order))
    except NotApplicable:
        pass


def test_finish_separates_fired_diagnostics_from_notes():
    lattice = compose([(RandomizedResponse(0.5), 30)])
    warnings, diags = finish(lattice, [])
    assert diags == [] and FIRED_NOTE not in warnings
    assert len(warnings) == 1 and warnings[0].startswith(_LATTICE)
    warnings, diags = finish(lattice, ["a", "b", "a"])
    assert diags == ["a", "b"]
    assert warnings[:3] == ("a", "b", FIRED_NOTE) and warnings[3].startswith(_LATTICE)
    warnings, diags = finish(compose([(Gaussian(1.0), 3)]), [])
    assert warnings == () and diags == []


@pytest.mark.parametrize("order", [0, 1, 2])
def test_auto_falls_back_whenever_the_saddlepoint_checks_fail(order):
    comp = compose(_DRAW_391)
    sp = saddlepoint_delta(comp, _EPS_391, order=order)
    assert sp.details["diagnostics"]
    assert _rel(sp.delta, _REF_391) > 0.05  # the estimate really is off here
    res = numeric.delta(comp, _EPS_391, method="auto", order=order)
    assert res.method != "saddlepoint"
    assert _rel(res.delta, _REF_391) < 1e-9
    if res.certified:  # the reference has 20 digits: compare to 1e-18
        ref = Decimal("0.18199616346396414942")
        assert res.lower - Decimal("1e-18") <= ref <= res.upper + Decimal("1e-18")


# ---------------------------------------------------------------------------------------------
# 2. Gaussian steps so spread that the float tilt cannot resolve eps
# ---------------------------------------------------------------------------------------------


def _gdp_delta(mu: float, eps: float):
    """GDP closed form (Dong, Roth, Su 2022, Cor. 2.13) in mpmath at 40 digits."""
    with mp.workdps(40):
        m, e = mp.mpf(mu), mp.mpf(eps)
        return mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)


def test_gaussian_at_composed_mu_4e9_is_refused_not_tiny():
    # Issue 12: sigma 0.006722 x 8.006e14 steps, eps 0.0167: mu = sqrt(m)/sigma ~ 4.2e9 and the
    # saddlepoint answered 6.6e-112 for a truth of 1 (to double precision)
    sigma, m, eps = 0.006722312797700852, 800596648766318, 0.016710514165802524
    comp = compose([(Gaussian(sigma), m)])
    mu = math.sqrt(m) / sigma
    truth = float(_gdp_delta(mu, eps))
    assert truth == 1.0
    try:
        sp = saddlepoint_delta(comp, eps)
    except NotApplicable as exc:
        assert "resolves eps" in str(exc)
    else:  # an answer must be right, or flagged
        assert sp.details["diagnostics"] or _rel(sp.delta, truth) < 1e-6
    res = numeric.delta(comp, eps, method="auto")
    assert res.method in ("exact", "certified")
    assert _rel(res.delta, truth) < 1e-9


# extreme (sigma, steps, eps) across the documented domain (sigma 1e-3..1e6, steps 1..1e15)
_EXTREME_GAUSSIANS = [
    (1e-3, 10**15, 1e-4), (1e-3, 10**15, 1e3), (1e-3, 1, 1e3), (0.01, 10**12, 5.0),
    (0.05, 10**9, 0.1), (1.0, 10**15, 7.0), (1e6, 10**15, 1e-4), (1e6, 1, 1e-4),
    (3e-3, 10**14, 200.0), (0.2, 10**13, 999.0),
]


@pytest.mark.parametrize(("sigma", "m", "eps"), _EXTREME_GAUSSIANS)
def test_extreme_gaussians_are_answered_or_flagged(sigma, m, eps):
    mu = math.sqrt(m) / sigma
    truth = _gdp_delta(mu, eps)
    try:
        sp = saddlepoint_delta(compose([(Gaussian(sigma), m)]), eps)
    except NotApplicable:
        return
    if sp.details["diagnostics"] and sp.estimate:  # flagged as an unreliable estimate
        return
    if truth < mp.mpf("1e-300"):  # below the float range: 0 (or a subnormal) is right
        assert sp.delta < 1e-290
    else:
        assert _rel(sp.delta, float(truth)) < 1e-6


# ---------------------------------------------------------------------------------------------
# 3. eps = 0 only where delta(0) <= delta
# ---------------------------------------------------------------------------------------------

# Issue 12: one Poisson-subsampled Gaussian step (sigma 0.35, rate 2e-5) at delta 4e-15: the
# saddlepoint returned a warned eps = 0. With P = (1-q) N(0, s^2) + q N(1, s^2) and
# Q = N(0, s^2), the loss is positive iff x > 1/2, so delta(0) = q erf(1/(2 s sqrt 2)), and for
# eps > 0 the P||Q region is x > x* = 1/2 + s^2 log((e^eps - 1 + q)/q), delta(eps) =
# (1-q) Phic(x*/s) + q Phic((x*-1)/s) - e^eps Phic(x*/s). mpmath at 50 digits (bisection, 300
# steps): delta(0) = 1.69374509796066113045770633658e-5,
# eps(4e-15) = 10.6021419745566465141806939527.
_SGD_3 = PoissonSubsampledGaussian(0.35, 2e-5)
_DELTA_3 = 4e-15
_DELTA0_3 = 1.69374509796066113045770633658e-5
_EPS_3 = "10.6021419745566465141806939527"


def _sgd_delta0(sigma: float, q: float) -> float:
    with mp.workdps(30):
        return float(mp.mpf(q) * mp.erf(mp.mpf(0.5) / (mp.mpf(sigma) * mp.sqrt(2))))


def test_one_step_subsampled_gaussian_does_not_report_eps_zero():
    assert _rel(_sgd_delta0(0.35, 2e-5), _DELTA0_3) < 1e-12  # the closed form, recomputed
    comp = compose([(_SGD_3, 1)])
    try:
        sp = saddlepoint_epsilon(comp, _DELTA_3)
    except NotApplicable:
        pass
    else:
        assert sp.epsilon > 0.0
        assert sp.details["diagnostics"] or _rel(sp.epsilon, float(_EPS_3)) < 1e-2
    res = numeric.epsilon(comp, _DELTA_3, method="auto")
    assert res.method == "certified" and res.epsilon > 0.0
    assert res.lower <= Decimal(_EPS_3) <= res.upper
    assert _rel(res.epsilon, float(_EPS_3)) < 1e-9


@pytest.mark.parametrize("delta", [1e-300, 1e-15, 1e-9, 1e-6, 1.6e-5, 1.7e-5, 1e-3, 0.3])
@pytest.mark.parametrize(("sigma", "q"), [(0.35, 2e-5), (0.5, 1e-3), (1.0, 0.01), (2.0, 1.0)])
def test_saddlepoint_eps_zero_only_where_delta0_is_at_most_delta(sigma, q, delta):
    comp = compose([(PoissonSubsampledGaussian(sigma, q), 1)])
    try:
        sp = saddlepoint_epsilon(comp, delta)
    except NotApplicable:
        return
    assert sp.epsilon >= 0.0 and not math.isnan(sp.epsilon)
    if sp.epsilon == 0.0:
        assert _sgd_delta0(sigma, q) <= delta, (sp.epsilon, sp.warnings)


# ---------------------------------------------------------------------------------------------
# 4. an unflagged saddlepoint answer is within 1% of the certified interval (issue 12)
# ---------------------------------------------------------------------------------------------

# Issue 12 (task sp's probe): at orders 0 and 1 the order check was empty or weak, and
# randomized-response mixtures (no exact method) passed every diagnostic while up to 12% low.
# The oracle is certify (Arb-ball enclosures, independent code); these two intervals were
# computed by certify.certified_epsilon at the commit of this test (ends rounded outward).
_LOW_AT_LOW_ORDERS = [
    ([(RandomizedResponse(0.0031988029455544235), 16),
      (RandomizedResponse(0.003318068560345728), 11)], 0.0063487747799788295, 0),
    ([(RandomizedResponse(0.01213853276026808), 44),
      (RandomizedResponse(0.004682853745897638), 1)], 0.031844697095899495, 1),
]


def _off(value: float, lower: float, upper: float) -> float:
    """Relative distance of ``value`` from the interval [lower, upper] (0 inside)."""
    if value < lower:
        return (lower - value) / lower if lower > 0.0 else math.inf
    if value > upper:
        return (value - upper) / upper if upper > 0.0 else math.inf
    return 0.0


@pytest.mark.parametrize(("terms", "delta", "order"), _LOW_AT_LOW_ORDERS)
def test_low_order_lattice_misses_are_flagged(terms, delta, order):
    certify = pytest.importorskip("certify")
    comp = compose(terms)
    bound = certify.certified_epsilon(comp, delta, time_budget=30)
    sp = saddlepoint_epsilon(comp, delta, order=order)
    assert _off(sp.epsilon, bound.lower_value, bound.value) > 0.05  # really off (~12%)
    assert sp.details["diagnostics"]
    _assert_consistent(sp)
    res = numeric.epsilon(comp, delta, method="auto", order=order)
    assert res.method in ("certified", "exact")
    assert _off(res.epsilon, bound.lower_value, bound.value) < 1e-9


def _mechanism(kind: str, eps0: float, d: float):
    if kind == "rr":
        return RandomizedResponse(eps0)
    if kind == "laplace":
        return Laplace(1.0 / eps0)
    return ApproxDP(eps0, d)


# eps0 = 10^(k/8), k in -24..1 (1e-3 .. 1.33); approx-DP delta part 10^-j, j in 5..9
_TERM = st.tuples(st.sampled_from(["rr", "rr", "laplace", "adp"]),
                  st.integers(-24, 1).map(lambda k: k / 8.0), st.integers(-9, -5),
                  st.sampled_from([600, 44, 200, 16, 30, 11, 5, 2, 1]))
_QUERY = st.tuples(st.lists(_TERM, min_size=1, max_size=3), st.sampled_from([2, 1, 0]),
                   st.booleans(), st.integers(1, 99).map(lambda k: k / 100.0))


def _check_unflagged_within_one_percent(query) -> None:
    certify = pytest.importorskip("certify")
    terms, order, eps_query, u = query
    comp = compose([(_mechanism(k, 10.0 ** a, 10.0 ** b), m) for k, a, b, m in terms])
    if eps_query:
        x = 10.0 ** (-10.0 + 9.5 * u)  # delta in [1e-10, 0.3]
        call = saddlepoint_epsilon
    else:
        top = math.fsum(m * mech.pllr_sup() for mech, m in comp.terms)
        x = u * min(top, 5.0 * math.sqrt(top))  # eps across the bulk of the loss
        call = saddlepoint_delta
    try:
        sp = call(comp, x, order=order)
    except NotApplicable:
        return
    _assert_consistent(sp)
    if sp.details["diagnostics"]:
        return
    try:
        if eps_query:
            _assert_eps_within_one_percent(certify, comp, x, sp)
            return
        bound = certify.certified_delta(comp, x, time_budget=10)
    except NotApplicable:
        return
    lower, upper = bound.lower_value, bound.value
    assert _off(sp.delta, lower, upper) <= 0.01, (sp.delta, lower, upper, sp.warnings)


def _assert_eps_within_one_percent(certify, comp, delta: float, sp) -> None:
    """eps(delta) within 1% of the true eps(delta), through certified delta(eps), decreasing
    in eps (one certified delta is far cheaper than a certified eps): delta(1.01 eps) > delta
    proves eps(delta) > 1.01 eps, delta(eps/1.01) < delta proves eps(delta) < eps/1.01."""
    eps = sp.epsilon
    if not math.isfinite(eps):  # no finite eps: delta at or below the delta part
        assert delta <= comp.delta_part
        return
    low = certify.certified_delta(comp, 1.01 * eps, time_budget=10).lower_value
    assert not low > delta, ("more than 1% low", eps, delta, low, sp.warnings)
    if eps > 0.0:
        high = certify.certified_delta(comp, eps / 1.01, time_budget=10).value
        assert not high < delta, ("more than 1% high", eps, delta, high, sp.warnings)


# Unflagged after the fix in task sp2's probe (seeds 1, 2), mixtures without an exact method;
# observed errors against certify 2e-4 .. 4e-3.
_UNFLAGGED = [
    ([(RandomizedResponse(0.24048174063281572), 1), (RandomizedResponse(0.943432015745383), 60)],
     0.08354434268356939, 2),
    ([(ApproxDP(0.07634793181591241, 6.596095744526372e-09), 200),
      (RandomizedResponse(0.002274360943527922), 60)], 1.5143538039145376e-05, 0),
    ([(RandomizedResponse(0.0026108949976843846), 60), (Laplace(785.5831841103957), 30)],
     4.925737043044917e-09, 0),
    ([(RandomizedResponse(0.03830868897996655), 60),
      (RandomizedResponse(0.004154659869471044), 30)], 1.6640321059139754e-05, 0),
    ([(RandomizedResponse(0.09216112240103012), 10),
      (RandomizedResponse(0.05272727422880411), 60)], 1.7372117009250553e-07, 0),
    ([(Laplace(77.42817983245874), 1), (RandomizedResponse(0.12694958594164474), 60)],
     0.011164813624932445, 2),
    ([(RandomizedResponse(0.32977756968326083), 200),
      (RandomizedResponse(0.0016553936889784258), 5)], 0.18664783490217685, 0),
]


def test_unflagged_mixtures_are_within_one_percent_and_not_all_flagged():
    certify = pytest.importorskip("certify")
    unflagged = 0
    for terms, delta, order in _UNFLAGGED:
        comp = compose(terms)
        sp = saddlepoint_epsilon(comp, delta, order=order)
        _assert_consistent(sp)
        if not sp.details["diagnostics"]:
            unflagged += 1
            _assert_eps_within_one_percent(certify, comp, delta, sp)
    assert unflagged >= len(_UNFLAGGED) // 2  # the checks do not flag everything


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(_QUERY)
def test_unflagged_saddlepoint_is_within_one_percent_of_certified(query):
    _check_unflagged_within_one_percent(query)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(_QUERY)
def test_unflagged_saddlepoint_is_within_one_percent_of_certified_many(query):
    _check_unflagged_within_one_percent(query)


# Issue 12 (task sp2's probe, seed 1): where the tilted Edgeworth factor is not positive the
# saddlepoint reported delta = 0 for a delta that certify encloses in [0.99999.., 1]. Closed
# form (randomized response: the loss under P has mean eps0 tanh(eps0/2) and variance
# eps0^2 (1 - tanh^2(eps0/2)) per step): the composed loss has mean 198.46 and standard
# deviation 17.11, so eps = 39.16 lies 9.3 deviations below it and delta(eps) =
# E_P[(1 - e^(eps - L))_+] is 1 to about 11 digits (Hoeffding: P(L <= eps) < 1.1e-12).
_NEGATIVE_FACTOR = [(RandomizedResponse(1.4606279758131875), 200),
                    (RandomizedResponse(0.407618484395628), 200)]
_EPS_NEG = 39.15902288129024


@pytest.mark.parametrize("order", [1, 2])
def test_non_positive_factor_fires_and_auto_falls_back(order):
    # delta = 0 stays flagged rather than NotApplicable: numeric.aea's honesty check asks for a
    # scalar eps and warns from the fired diagnostics (test_aea_diagnostic's SGD(0.8, 0.001) x
    # 1000 case reaches this path)
    comp = compose(_NEGATIVE_FACTOR)
    for eps in (_EPS_NEG, [_EPS_NEG]):
        sp = saddlepoint_delta(comp, eps, order=order)
        assert any("not positive" in w for w in sp.details["diagnostics"])
        _assert_consistent(sp)
    res = numeric.delta(comp, _EPS_NEG, method="auto", order=order)
    assert res.method in ("certified", "exact")
    assert res.delta > 0.999


# Fuzz seed 1206 (two silent wrong answers): near the centre t = -1/2 of a symmetric pair the
# tilted law is symmetric, every odd order adds nothing, and the r vs r - 1 check at an odd
# order compared two equal factors while the even orders did not converge: Laplace(29.02) x
# 38571091 at eps = 2.82 (about 100 standard deviations below the mean) gave 0.9543 at order 3
# with no warning. Oracle (closed form, Bhattacharyya): 1 - delta(eps) <= e^{eps/2} BC^n with
# BC = E_P[sqrt(q/p)] = e^{-1/(2b)} (1 + 1/(2b)) for Laplace(b), sensitivity 1; here the bound
# is e^{-5700}, so delta = 1 to double precision.
_LAPLACE_CENTRE = (29.022581940295957, 38571091, 2.8198062392564838)


def _laplace_one_minus_delta_bound(scale: float, n: int, eps: float) -> float:
    log_bc = -0.5 / scale + math.log1p(0.5 / scale)
    return math.exp(0.5 * eps + n * log_bc)


@pytest.mark.parametrize("order", [3, 5])
def test_symmetric_centre_odd_orders_are_flagged(order):
    scale, n, eps = _LAPLACE_CENTRE
    assert _laplace_one_minus_delta_bound(scale, n, eps) < 1e-300
    comp = compose([(Laplace(scale), n)])
    sp = saddlepoint_delta(comp, eps, order=order)
    assert sp.details["diagnostics"], sp.warnings
    assert any(f"orders {order} and {order + 1}" in w for w in sp.warnings)
    res = numeric.delta(comp, eps, method="auto", order=order)
    assert res.method != "saddlepoint"
    assert res.delta >= 1.0 - 1e-12


def test_comparison_orders():
    from numeric.saddlepoint.points import comparison_order, point_derivatives

    assert [comparison_order(r) for r in range(7)] == [2, 2, 3, 4, 5, 6, None]
    # the answer's points carry the comparison order's cumulants (r + 3 at r >= 2), one more
    # derivative for the slope; l_3 and l_4 at every order
    assert [point_derivatives(r) for r in range(7)] == [5, 5, 6, 7, 8, 9, 9]


# A probe (2026-12-03): P||Q returned eps = 0 because the order-0 delta(0) at the eps = 0 tilt
# (t_0 = -0.497, s = 144: the weight lives ~71 standard deviations out, where the series is
# broken) was 1.9e-15 for a true ~1, although its delta crosses the target at t = 0.027; the
# reported max was Q||P's 10723.03, 2.7% low, with no diagnostic at order 0. The search now
# scans for a larger root before it accepts eps = 0, and a broken order comparison fires.
# Oracle: certify's lattice (Arb balls; intervals from certify.certified_epsilon at time budget
# 8 s, and benchmarks/results/certified_grid.md at commit 59257b5, target width 1e-4).
_ZERO_TILT_BROKEN = [
    (3.0290950499674425, 0.43796976674509847, 982357, 4.0399628866311175e-05,
     11018.504981161095, 11018.888695200749),
    (0.5, 0.01, 1_000_000, 1e-5, 1617.4352367, 1617.4668288),
    (0.8, 0.1, 100_000, 1e-10, 1724.3138056, 1724.4043814),
]


@pytest.mark.parametrize(("sigma", "rate", "m", "delta", "lower", "upper"), _ZERO_TILT_BROKEN)
@pytest.mark.parametrize("order", [0, 2])
def test_a_broken_eps_zero_tilt_does_not_hide_the_root(sigma, rate, m, delta, lower, upper,
                                                       order):
    comp = compose([(PoissonSubsampledGaussian(sigma, rate), m)])
    sp = saddlepoint_epsilon(comp, delta, order=order)
    assert sp.direction == "P||Q"
    # order 2 inside the certified interval; order 0 within 1e-4 of it (1617.4813 against
    # [1617.4352, 1617.4668] for the second row: an estimate, unflagged at 1e-5 relative)
    assert _off(sp.epsilon, lower, upper) <= (1e-9 if order == 2 else 1e-4)
    assert sp.details["saddlepoint"]["P||Q"]["roots"] >= 1
