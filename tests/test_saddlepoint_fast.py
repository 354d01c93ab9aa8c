"""Tests of the batched, cached evaluation in numeric.saddlepoint (speed work, issue 5).

The accountant's results must not depend on how tilts are batched or cached: cached and
uncached queries agree, the cache is keyed by the mechanism (its parameters), the analytic slope
that steers the Newton steps matches finite differences, and the values match those of the
previous (unbatched) implementation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from numeric import (
    ApproxDP,
    Gaussian,
    Laplace,
    PoissonSubsampledGaussian,
    RandomizedResponse,
    cgf,
    compose,
)
from numeric import saddlepoint as sp
from numeric import tilted_integrals as ti
from numeric.errors import NotApplicable
from numeric.mechanisms import subsampled_gaussian as sg
from numeric.saddlepoint import (
    clear_cgf_cache,
    pllr_cgf,
    points,
    refine,
    saddlepoint_delta,
    saddlepoint_epsilon,
    search,
)

PSG = PoissonSubsampledGaussian

COMPOSITIONS = [
    [(PSG(1.0, 0.01), 10_000)],
    [(PSG(2.0, 0.001), 1_000_000)],
    [(PSG(0.8, 0.01), 100)],  # "one big step": diagnostics fire
    [(PSG(1.0, 0.01), 5000), (Gaussian(4.0), 100)],
    [(Laplace(1 / 0.3), 1000)],
    [(RandomizedResponse(0.1), 2000)],
]


def _rel(a: float, b: float) -> float:
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


# -- values of the previous implementation (unbatched, per-t lru cache) -----------------------


@pytest.mark.parametrize(
    ("terms", "delta", "expected"),
    [
        ([(PSG(1.0, 0.01), 10_000)], 1e-5, {"P||Q": 6.187688283068612, "Q||P": 5.611509934438626}),
        ([(PSG(2.0, 0.001), 1_000_000)], 1e-5,
         {"P||Q": 2.1427005585089898, "Q||P": 2.13709933189708}),
        ([(PSG(0.8, 0.01), 100_000)], 1e-5,
         {"P||Q": 43.544543173373114, "Q||P": 39.58136747189339}),
        ([(PSG(1.0, 0.01), 10_000)], 1e-8, {"P||Q": 8.185094618513993, "Q||P": 7.2381320895879}),
        ([(PSG(2.0, 0.01), 1000)], 1e-6, {"P||Q": 0.7209157938751742, "Q||P": 0.665531468098942}),
        ([(PSG(1.0, 0.01), 5000), (Gaussian(4.0), 100)], 1e-5,
         {"P||Q": 14.34626296958145, "Q||P": 14.245651973696162}),
        ([(Laplace(1 / 0.3), 1000)], 1e-5, {"P||Q": 78.01287411021445}),
    ],
)
def test_values_of_the_previous_implementation(terms, delta, expected):
    for cache in (True, False):
        res = saddlepoint_epsilon(compose(terms), delta, cache=cache)
        for direction, eps in expected.items():
            assert _rel(res.per_direction[direction], eps) < 1e-9


def test_delta_values_of_the_previous_implementation():
    res = saddlepoint_delta(compose([(PSG(1.0, 0.01), 10_000)]), np.array([2.0, 6.0, 10.0]))
    ref = [0.08270848914769562, 1.7596514676352496e-05, 4.909744093977644e-12]
    # The float accuracy of log delta: each step's K and K' carry ~1e-13 relative (mpmath, 60
    # digits: 7.8e-14 at the eps = 10 tilt t = 4.35, 2.4e-13 at t = 2), and log delta sums
    # |n K| + |t n K'| = 4.3, 31 and 66 at eps = 2, 6, 10: 4e-13, 3e-12 and 7e-12. The accurate
    # PLLR (subsampled_gaussian_pllr, full relative precision at small u) moved the eps = 10
    # value by 4.5e-12 relative; 1e-12 there was tighter than either implementation's accuracy.
    tols = [1e-12, 1e-12, 1e-11]
    assert all(_rel(a, b) < tol for a, b, tol in zip(res.delta, ref, tols, strict=True))


# -- cached vs uncached -----------------------------------------------------------------------


@pytest.mark.parametrize("terms", COMPOSITIONS, ids=lambda t: repr(t[0][0]))
@pytest.mark.parametrize("order", [0, 2, 4])
def test_cached_and_uncached_agree(terms, order):
    comp = compose(terms)
    clear_cgf_cache()
    cold = saddlepoint_epsilon(comp, 1e-5, order=order)  # fills the cache
    warm = saddlepoint_epsilon(comp, 1e-5, order=order)  # reads it
    fresh = saddlepoint_epsilon(comp, 1e-5, order=order, cache=False)
    for res in (warm, fresh):
        assert set(res.per_direction) == set(cold.per_direction)
        for direction, eps in cold.per_direction.items():
            assert _rel(res.per_direction[direction], eps) < 1e-9
            a, b = cold.details["saddlepoint"][direction], res.details["saddlepoint"][direction]
            assert a["roots"] == b["roots"]
            assert _rel(a["l3"], b["l3"]) < 1e-6 or abs(a["l3"] - b["l3"]) < 1e-12
        assert [w.split(" at ")[0] for w in res.warnings] == \
            [w.split(" at ")[0] for w in cold.warnings]


def test_warm_queries_for_other_m_and_delta_reuse_the_mechanism_entry():
    mech = PSG(1.0, 0.01)
    clear_cgf_cache()
    saddlepoint_epsilon(compose([(mech, 10_000)]), 1e-5)
    built = sg._cgf_rule.cache_info().misses  # the quadrature rule: kept per (mu, rate)
    memo = cgf._CACHE.get(("cgf", mech))
    assert built == 1 and memo

    def per_mechanism() -> int:  # entries that do not depend on m (points are per composition)
        return sum(1 for key in cgf._CACHE._data if key[0] != "points")

    size = per_mechanism()
    for m, delta in [(20_000, 1e-5), (10_000, 1e-6), (3_000, 2e-5)]:
        warm = saddlepoint_epsilon(compose([(mech, m)]), delta)
        fresh = saddlepoint_epsilon(compose([(mech, m)]), delta, cache=False)
        assert _rel(warm.epsilon, fresh.epsilon) < 1e-9
    assert sg._cgf_rule.cache_info().misses == built  # built once, reused for every m
    assert per_mechanism() == size  # the eps = 0 tilt is keyed by count proportions, not m
    point_keys = [key for key in cgf._CACHE._data if key[0] == "points"]
    assert len(point_keys) == 3  # m = 10_000, 20_000, 3_000 at order 2


def test_same_composition_reuses_its_points():
    comp = compose([(PSG(1.0, 0.01), 10_000)])
    clear_cgf_cache()
    first = saddlepoint_epsilon(comp, 1e-5)
    again = saddlepoint_epsilon(comp, 2e-5)
    assert again.details["saddlepoint"]["P||Q"]["evals"] < first.details["saddlepoint"]["P||Q"][
        "evals"]
    fresh = saddlepoint_epsilon(comp, 2e-5, cache=False)
    for direction, eps in fresh.per_direction.items():
        assert _rel(again.per_direction[direction], eps) < 1e-12


def test_cache_is_keyed_by_mechanism_parameters():
    clear_cgf_cache()
    a = saddlepoint_epsilon(compose([(PSG(1.0, 0.01), 10_000)]), 1e-5).epsilon
    n_a = len(cgf._CACHE)
    b = saddlepoint_epsilon(compose([(PSG(1.0, 0.02), 10_000)]), 1e-5).epsilon
    c = saddlepoint_epsilon(compose([(PSG(1.1, 0.01), 10_000)]), 1e-5).epsilon
    assert len(cgf._CACHE) == 3 * n_a  # new entries for every changed parameter
    assert b > a > c
    assert _rel(b, saddlepoint_epsilon(compose([(PSG(1.0, 0.02), 10_000)]), 1e-5,
                                       cache=False).epsilon) < 1e-9
    assert saddlepoint_epsilon(compose([(PSG(1.0, 0.01), 10_000)]), 1e-5).epsilon == a
    clear_cgf_cache()
    assert len(cgf._CACHE) == 0
    assert _rel(saddlepoint_epsilon(compose([(PSG(1.0, 0.01), 10_000)]), 1e-5).epsilon, a) < 1e-12


def test_tilt_cache_keyed_by_count_proportions():
    clear_cgf_cache()
    one = compose([(PSG(1.0, 0.01), 1000), (Gaussian(4.0), 10)])
    two = compose([(PSG(1.0, 0.01), 2000), (Gaussian(4.0), 20)])  # same proportions
    other = compose([(PSG(1.0, 0.01), 1000), (Gaussian(4.0), 30)])
    keys = {search._shape_key(c, "P||Q") for c in (one, two)}
    assert len(keys) == 1 and search._shape_key(other, "P||Q") not in keys
    for comp in (one, two, other):
        assert _rel(saddlepoint_epsilon(comp, 1e-5).epsilon,
                    saddlepoint_epsilon(comp, 1e-5, cache=False).epsilon) < 1e-9


def test_cache_is_bounded_least_recently_used():
    cache = cgf.CGFCache(maxsize=3)
    for k in range(5):
        cache.put(k, k)
    assert len(cache) == 3 and cache.get(0) is None and cache.get(4) == 4
    cache.get(2)  # touch: 3 is now the oldest
    cache.put(5, 5)
    assert cache.get(3) is None and cache.get(2) == 2
    assert cache.get("x", lambda: "built") == "built" and cache.get("x") == "built"


@pytest.mark.parametrize("bad", ["yes", 1, None, 0.0])
def test_bad_cache_argument(bad):
    comp = compose([(PSG(1.0, 0.01), 1000)])
    with pytest.raises(ValueError, match="cache"):
        saddlepoint_epsilon(comp, 1e-5, cache=bad)
    with pytest.raises(ValueError, match="cache"):
        saddlepoint_delta(comp, 1.0, cache=bad)


def test_bad_input_still_names_the_parameter():
    comp = compose([(PSG(1.0, 0.01), 1000)])
    with pytest.raises(ValueError, match="delta"):
        saddlepoint_epsilon(comp, 0.0, cache=False)
    with pytest.raises(ValueError, match="eps"):
        saddlepoint_delta(comp, np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="order"):
        saddlepoint_epsilon(comp, 1e-5, order=7)


# -- batching does not change results ---------------------------------------------------------


def test_vectorized_delta_matches_scalar_queries():
    comp = compose([(PSG(1.0, 0.01), 10_000)])
    eps = np.array([0.0, 0.5, 2.0, 6.0, 10.0, 30.0])
    vec = saddlepoint_delta(comp, eps, cache=False)
    for i, e in enumerate(eps):
        one = saddlepoint_delta(comp, float(e), cache=False)
        assert _rel(vec.delta[i], one.delta) < 1e-12
        assert vec.direction[i] == one.direction


def test_speculative_grids_do_not_change_the_search(monkeypatch):
    for terms in COMPOSITIONS[:4]:
        comp = compose(terms)
        with_guess = saddlepoint_epsilon(comp, 1e-5, cache=False)
        monkeypatch.setattr(search, "_likely_brackets", lambda *args: [])
        without = saddlepoint_epsilon(comp, 1e-5, cache=False)
        monkeypatch.undo()
        for direction, eps in with_guess.per_direction.items():
            assert _rel(without.per_direction[direction], eps) < 1e-12
            assert (without.details["saddlepoint"][direction]["roots"]
                    == with_guess.details["saddlepoint"][direction]["roots"])


@pytest.mark.parametrize("order", [0, 1, 2, 4])
def test_small_and_large_batch_arithmetic_agree(monkeypatch, order):
    t = np.array([-0.7, -0.3, 0.05, 0.4, 1.3, 3.0, 7.5, 30.0])
    for terms in ([(PSG(1.0, 0.01), 10_000)], [(PSG(0.8, 0.001), 100)], [(Laplace(2.0), 50)]):
        comp = compose(terms)
        for swap in (False, True):
            sw = np.full(t.size, swap)
            monkeypatch.setattr(points, "_SMALL_BATCH", 100)
            python = points.points_batch(comp, order, sw, t, cgf.CGFCache())
            monkeypatch.setattr(points, "_SMALL_BATCH", 0)
            numpy = points.points_batch(comp, order, sw, t, cgf.CGFCache())
            for p, q in zip(python, numpy, strict=True):
                assert p.lam == pytest.approx(q.lam, rel=1e-14)
                for name in ("log_delta", "factor", "factor_lower", "s", "log_base"):
                    a, b = getattr(p, name), getattr(q, name)
                    assert (a == b) or (math.isnan(a) and math.isnan(b)) or _rel(a, b) < 1e-12



def test_rule_prefix_does_not_depend_on_its_length():
    # the quadrature rule is shared by every query on (mu, rate): its values must not depend on
    # how far earlier queries extended it
    mech = PSG(0.8, 0.01)
    t = np.array([-0.5, 2.0])
    clear_cgf_cache()
    a, da = mech.cgf_batch(t, 5)  # a fresh, short rule
    clear_cgf_cache()
    mech.cgf_batch(np.array([400.0]), 5)  # extends the rule far beyond what t = 2 needs
    b, db = mech.cgf_batch(t, 5)
    assert np.array_equal(a, b) and np.array_equal(da, db)


def test_subsampled_gaussian_cgf_finite_at_extreme_tilts():
    # rate near 1 and a deep negative tilt: s L reaches ~2000 at the left end of the rule
    for t in (-300.0, -50.0, 300.0):
        k0, d = pllr_cgf(PSG(1 / 0.3, 0.999), t, 4)
        assert math.isfinite(k0) and np.all(np.isfinite(d)) and d[1] > 0.0


# -- the analytic slope and the integrals -----------------------------------------------------


@pytest.mark.parametrize("order", [0, 1, 2, 3])
@pytest.mark.parametrize(
    "terms",
    [[(PSG(1.0, 0.01), 10_000)], [(PSG(0.8, 0.001), 100)], [(PSG(2.0, 0.01), 10**6)],
     [(Laplace(2.0), 50)], [(Gaussian(1.0), 3)]],
    ids=lambda t: f"{t[0][0]!r} x {t[0][1]}",
)
def test_slope_matches_finite_differences(terms, order):
    comp = compose(terms)
    for swap in (False, True):
        for t in (-0.7, -0.3, 0.05, 0.4, 1.3, 3.0, 7.5):
            h = 1e-5 * max(1.0, abs(t))
            pts = points.points_batch(comp, order, np.full(3, swap), np.array([t - h, t, t + h]),
                                   cgf.CGFCache())
            if not all(math.isfinite(p.log_delta) for p in pts):
                continue
            fd = (pts[2].log_delta - pts[0].log_delta) / (2 * h)
            assert pts[1].slope == pytest.approx(fd, rel=1e-5, abs=1e-6)


def test_delta_step_is_newton_for_delta_itself():
    comp = compose([(PSG(1.0, 0.01), 10_000)])
    target = math.log(1e-5)
    p = points.points_batch(comp, 2, np.array([False]), np.array([2.5]), cgf.CGFCache())[0]
    # psi = delta_r/delta - 1 = e^{g} - 1, psi' = e^{g} g' (factor > 0 here)
    g = p.log_delta - target
    assert refine._delta_step(p, target) == pytest.approx(-math.expm1(g) / (math.exp(g) * p.slope),
                                                      rel=1e-10)


@pytest.mark.parametrize(
    ("a1", "s"),
    [(-20.0, 0.2), (-5.0, 0.1), (-3.0, 0.3), (-1.5, 2.0), (0.0, 0.1), (0.5, 1e-4), (2.0, 0.01),
     (2.5, 0.2), (1.0, 0.7), (2.9, 3.0), (6.0, 0.05), (40.0, 4.0), (3.5, 1000.0), (10.0, 100.0)],
)
def test_difference_integrals_every_regime(a1, s):
    from scipy import integrate
    from scipy.special import eval_hermitenorm

    ls, d = ti.d_integrals(a1, s, 6)
    c = max(0.0, -a1)
    for k in range(7):
        def f(y, k=k):
            return (np.exp(-a1 * y - y * y / 2 - ls) * -np.expm1(-s * y) / math.sqrt(2 * math.pi)
                    * eval_hermitenorm(k, y))

        ref = integrate.quad(f, 0.0, c + 60.0, points=[c, 1 / (a1 + s) if a1 + s > 0 else 1.0],
                             limit=400, epsabs=1e-15 * abs(d[0]), epsrel=1e-12)[0]
        assert d[k] == pytest.approx(ref, rel=1e-9, abs=1e-13 * abs(d[0]))


def test_ds_is_the_s_derivative_of_the_integrals():
    for a1, s in [(-1.5, 2.0), (0.5, 0.1), (1.0, 0.7), (6.0, 0.5), (3.5, 1000.0)]:
        h = 1e-6 * s
        a = np.array([a1, a1, a1])
        _, d, ds = ti.d_batch(a, np.array([s - h, s, s + h]), 6)
        assert ds[1] == pytest.approx((d[2, :7] - d[0, :7]) / (2 * h), rel=1e-6,
                                      abs=1e-9 * abs(d[1, 0]) / s)


# -- cost per query ---------------------------------------------------------------------------


@pytest.mark.parametrize("m", [10_000, 100_000, 1_000_000])
def test_tilts_evaluated_per_query_do_not_grow_with_m(m):
    res = saddlepoint_epsilon(compose([(PSG(1.0, 0.01), m)]), 1e-5, cache=False)
    assert not res.warnings
    for det in res.details["saddlepoint"].values():
        assert det["evals"] <= 40 and det["roots"] == 1


def test_warm_queries_in_the_one_big_step_regime():
    # regression: a Newton step for delta_r needed e^(log delta - log base) beyond float range
    mech = PSG(2.0, 0.001)
    clear_cgf_cache()
    for m, delta in [(1000, 1e-5), (1000, 2e-5), (1000, 5e-6), (1100, 1e-5), (900, 1e-5)]:
        warm = saddlepoint_epsilon(compose([(mech, m)]), delta)
        fresh = saddlepoint_epsilon(compose([(mech, m)]), delta, cache=False)
        assert warm.warnings and _rel(warm.epsilon, fresh.epsilon) < 1e-9


def test_guesses_are_harmless_at_extreme_targets():
    assert math.isnan(search._normal_root(0.0, -10.0))
    assert math.isnan(search._normal_root(1.0, math.inf))
    assert search._normal_root(1e6, -1e-12) > 0.0
    assert search._likely_brackets(math.nan, [1.0, 3.0]) == []
    assert search._likely_brackets(1e9, [1.0, 3.0]) == []
    for delta in (0.5, 0.999, 1e-300):
        res = saddlepoint_epsilon(compose([(PSG(1.0, 0.01), 10_000)]), delta, cache=False)
        assert res.epsilon >= 0.0


@pytest.mark.parametrize("mech", [RandomizedResponse(0.003), ApproxDP(1.0, 1e-9)], ids=repr)
def test_degenerate_lattice_tilts_do_not_apply(mech):
    # the tilted two-point law degenerates (K'' underflows to 0) before the bracket is found;
    # this used to end in ZeroDivisionError, then in a bad-input ValueError
    with pytest.raises(NotApplicable, match="tilted variance"):
        saddlepoint_epsilon(compose([(mech, 10)]), 1e-8, order=4)


@pytest.mark.parametrize(("mech", "m", "delta"), [
    (PSG(1.0, 0.01), 100_000, 1e-5), (PSG(0.8, 0.01), 1_000_000, 1e-10),
    (PSG(2.0, 0.001), 10_000, 1e-5), (PSG(1.0, 0.01), 1000, 1e-5),
    (PSG(0.8, 0.01), 1_000_000, 1e-5),  # accepted through the inverse Hermite estimates
    (PSG(1.0, 0.001), 100_000, 1e-5), (Laplace(1.0), 10_000, 1e-5),
    (Laplace(1 / 0.3), 1000, 1e-8),
])
def test_first_order_extrapolated_root_agrees_with_the_evaluated_one(monkeypatch, mech, m,
                                                                      delta):
    """The last step is extrapolated only when two estimates of it agree to 1e-10 (the two
    Newton steps, or the inverse quintic Hermite root and both cubic ones): the result moves by
    far less than 1e-9 relative against evaluating every step."""
    comp = compose([(mech, m)])
    sp.clear_cgf_cache()
    fast = sp.saddlepoint_epsilon(comp, delta).per_direction
    monkeypatch.setattr(refine, "_EXTRAPOLATE", 0.0)
    sp.clear_cgf_cache()
    full = sp.saddlepoint_epsilon(comp, delta).per_direction
    for d in full:
        assert fast[d] == pytest.approx(full[d], rel=1e-9)


# -- the refinement's building blocks ---------------------------------------------------------


def _point(t: float, g: float, slope: float) -> points.Point:
    """A point with log delta_r = g (log target 0) and the given slope (the rest is unused)."""
    return points.Point(t, t, g, 1.0, math.nan, 1.0, (), slope, 1.0, g, 0.0)


def _parabola(t: float) -> points.Point:
    return _point(t, 2.0 - t * t, -2.0 * t)  # g(t) = 2 - t^2, root sqrt(2)


def test_inverse_hermite_root_of_a_smooth_decreasing_function():
    p = _parabola(math.sqrt(2.0) + 1e-5)
    x = refine._inverse_hermite_root(p, [_parabola(1.2), p, _parabola(1.6)], 0.0)
    assert x == pytest.approx(math.sqrt(2.0), rel=1e-12)
    newton = p.t - p.log_delta / p.slope
    # the inverse function t(g) = sqrt(2 - g): Newton errs by ~|t''|/2 dg^2, the interpolants
    # by far less (the cubics ~|t''''|/24 dg^2 (g_q - g_p)^2, the quintic less again)
    assert abs(x - math.sqrt(2.0)) < 0.1 * abs(newton - math.sqrt(2.0))


def _inverse_quartic(g: float) -> points.Point:
    """A point of the function whose inverse is t(g) = 1 - g/10 + g^4/10 (root t = 1)."""
    return _point(1.0 - 0.1 * g + 0.1 * g ** 4, g, 1.0 / (-0.1 + 0.4 * g ** 3))


def test_osculating_value_is_exact_for_polynomials_of_its_degree():
    pts = [_inverse_quartic(g) for g in (0.5, 1e-3, -0.5)]
    assert refine._osculating_value(pts, 0.0) == pytest.approx(1.0, rel=1e-14)  # quintic: exact
    cubic = refine._osculating_value(pts[1:], 0.0)  # misses the g^4 term by g_p^2 g_q^2 / 10
    assert 1.0 - cubic == pytest.approx(0.1 * 1e-6 * 0.25, rel=1e-6)


def test_inverse_hermite_root_refuses_cubics_that_share_their_error():
    # neighbours at g = +-0.5: both cubics miss the g^4 term by the same 2.5e-8, so they agree
    # with each other; the quintic reveals the error
    left, p, right = (_inverse_quartic(g) for g in (0.5, 1e-3, -0.5))
    cubics = [refine._osculating_value([p, q], 0.0) for q in (left, right)]
    assert cubics[0] == pytest.approx(cubics[1], abs=1e-15) and 1.0 - cubics[0] > 2e-8
    assert math.isnan(refine._inverse_hermite_root(p, [left, p, right], 0.0))


def test_inverse_hermite_root_refuses_when_it_cannot_vouch_for_the_step():
    far = _parabola(1.3)  # far from the root: the left and right interpolants disagree
    assert math.isnan(refine._inverse_hermite_root(far, [_parabola(1.0), far, _parabola(1.6)], 0.0))
    near = _parabola(math.sqrt(2.0) + 1e-5)
    assert math.isnan(refine._inverse_hermite_root(near, [near, _parabola(1.6)], 0.0))  # one side
    bent = _point(1.3, 0.1, -1.0)  # g not decreasing through the three points
    assert math.isnan(refine._inverse_hermite_root(bent, [_point(1.0, 0.05, -1.0), bent,
                                                      _point(1.6, -0.5, -1.0)], 0.0))
    flat = _point(1.3, 0.1, 0.0)  # no usable slope at the point
    assert math.isnan(refine._inverse_hermite_root(flat, [_parabola(1.0), flat, _parabola(1.6)],
                                               0.0))


@pytest.mark.parametrize("mech", [PSG(1.0, 0.01), PSG(0.8, 0.001), Laplace(2.0)])
def test_extrapolated_eps_is_third_order_in_the_step(mech):
    comp = compose([(mech, 10_000)])
    for t, rel_step in ((0.3, 1e-5), (2.0, 1e-5), (7.0, 1e-5), (7.0, 1e-4)):
        h = rel_step * t
        p, q = points.points_batch(comp, 2, np.zeros(2, dtype=bool), np.array([t, t + h]),
                                cgf.CGFCache())
        ext = refine._extrapolated(p, h, -11.0)
        assert ext.t == q.t and ext.log_delta == -11.0
        # the neglected term is O(h^4): 1e4 times larger at the largest step allowed (1e-4)
        assert ext.eps == pytest.approx(q.eps, rel=1e-13 if rel_step <= 1e-5 else 1e-11)
        first = p.eps + p.var * h
        assert abs(ext.eps - q.eps) <= abs(first - q.eps)


@pytest.mark.parametrize(("sigma", "rate"), [(1.0, 0.01), (2.0, 0.001), (0.8, 0.001),
                                             (0.3, 0.999)])
def test_single_tilt_cgf_path_matches_the_batched_one(sigma, rate):
    mech = PSG(sigma, rate)
    for t in (-300.0, -0.7, -0.5, 0.05, 1.3, 7.5, 30.0, 51.0, 400.0):
        k_one, d_one = mech.cgf_batch(np.array([t]), 5)
        k_two, d_two = mech.cgf_batch(np.array([t, t]), 5)
        # K = log1p(sum_i w_i expm1(s L_i)), s = t + 1: the terms, ~s p mu x_i (p = rate, mu =
        # 1/sigma), cancel to K ~ p^2 mu^2 s t / 2, and the two paths sum them in different
        # orders (a dot product, a matrix product): ~100 ulps of sum_i |w_i expm1(s L_i)| <=
        # s p mu apart at most (rate 1e-3, sigma 2, t = 0.05: 2e-12 relative)
        floor = 1e-14 * rate * abs(t + 1.0) / sigma
        assert k_one[0] == pytest.approx(k_two[0], rel=1e-12, abs=max(floor, 1e-300))
        var = d_two[0, 1]
        for j in range(5):  # K^(j+1): relative to its size or to the spread var^((j+1)/2)
            scale = max(abs(d_two[0, j]), var ** ((j + 1) / 2))
            assert abs(d_one[0, j] - d_two[0, j]) <= 1e-10 * scale


def test_guess_tilts_for_closed_form_cgfs_do_not_change_the_root(monkeypatch):
    for mech, m in [(Laplace(1.0), 10_000), (Laplace(10.0), 100), (Gaussian(3.0), 50),
                    (RandomizedResponse(0.1), 2000)]:
        comp = compose([(mech, m)])
        with_guess = saddlepoint_epsilon(comp, 1e-6, cache=False)
        monkeypatch.setattr(search, "closed_form", lambda comp: False)
        without = saddlepoint_epsilon(comp, 1e-6, cache=False)
        monkeypatch.undo()
        for direction, eps in without.per_direction.items():
            assert _rel(with_guess.per_direction[direction], eps) < 1e-9


def test_dominated_flagged_pair_order_stops_early_without_changing_the_result(monkeypatch):
    # one big step: the P||Q expansion breaks down (diagnostics fire) and its eps is far below
    # the Q||P one, which is the reported max
    comp = compose([(PSG(2.0, 0.001), 1000)])
    early = saddlepoint_epsilon(comp, 1e-5, cache=False)
    notes = [w for w in early.warnings if "refined only to eps in" in w]
    assert len(notes) == 1 and notes[0].startswith("P||Q")
    monkeypatch.setattr(refine, "_DOMINATED_WIDTH", 0.0)  # refine every root fully
    full = saddlepoint_epsilon(comp, 1e-5, cache=False)
    assert not any("refined only" in w for w in full.warnings)
    assert early.direction == full.direction == "Q||P"
    # the reported max does not depend on the stop (to rounding: batches are grouped differently)
    assert early.epsilon == pytest.approx(full.epsilon, rel=1e-12)
    assert early.per_direction["P||Q"] == pytest.approx(full.per_direction["P||Q"], rel=1e-2)
    assert early.per_direction["P||Q"] < early.epsilon
    details = early.details["saddlepoint"]["P||Q"]
    assert details["evals"] < full.details["saddlepoint"]["P||Q"]["evals"]


@pytest.mark.parametrize("terms", COMPOSITIONS[:2] + COMPOSITIONS[3:5])
def test_pair_orders_whose_diagnostics_pass_are_always_refined_fully(terms):
    res = saddlepoint_epsilon(compose(terms), 1e-5, cache=False)
    assert not any("refined only" in w for w in res.warnings)


@settings(max_examples=25, deadline=None, derandomize=True)  # fixed draws: CI stays repeatable
@example(log_sigma=0.1, log_rate=-1.76953125, log_m=1.5, log_delta=-11.0)  # eps' = K'' large
@example(log_sigma=-0.2799006063049922, log_rate=-1.5, log_m=3.0234375, log_delta=-12.0)
@example(log_sigma=0.0, log_rate=-2.875, log_m=4.0, log_delta=-8.0)  # several roots in a cell
@given(log_sigma=st.floats(-0.3, 0.6), log_rate=st.floats(-3.5, -0.5), log_m=st.floats(1.0, 6.0),
       log_delta=st.floats(-12.0, -3.0))
def test_shortcuts_do_not_move_the_result(log_sigma, log_rate, log_m, log_delta):
    """Guessed grids, the extrapolated last step, the early stop of a dominated flagged pair
    order and the caches only save evaluations: against a search without any of them the
    reported eps agrees to 1e-9 (randomized DP-SGD compositions, flagged or not); where one
    raises NotApplicable the other raises the same."""
    comp = compose([(PSG(10.0 ** log_sigma, 10.0 ** log_rate), round(10.0 ** log_m))])
    delta = 10.0 ** log_delta
    try:
        fast = saddlepoint_epsilon(comp, delta)
    except NotApplicable as exc:  # the shortcuts must not change whether the method applies
        fast = exc
    saved = (refine._EXTRAPOLATE, refine._DOMINATED_WIDTH, search._likely_brackets)
    try:
        refine._EXTRAPOLATE, refine._DOMINATED_WIDTH = 0.0, 0.0
        search._likely_brackets = lambda *args: []
        plain = saddlepoint_epsilon(comp, delta, cache=False)
    except NotApplicable as exc:
        plain = exc
    finally:
        refine._EXTRAPOLATE, refine._DOMINATED_WIDTH, search._likely_brackets = saved
    if isinstance(fast, NotApplicable) or isinstance(plain, NotApplicable):
        assert isinstance(fast, NotApplicable) and isinstance(plain, NotApplicable), (fast, plain)
        assert str(fast) == str(plain)
        return
    assert fast.epsilon == pytest.approx(plain.epsilon, rel=1e-9)
    assert fast.direction == plain.direction or _rel(*fast.per_direction.values()) < 1e-9
