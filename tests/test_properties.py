"""Hypothesis property tests: bad and boundary input for every public function and mechanism.

Negative properties: NaN, +-inf, zero, negatives, out-of-range rates and deltas, non-integer,
negative, boolean and non-numeric counts and orders all raise ``ValueError`` whose message names
the offending parameter. Positive properties (moderate parameter ranges, fast examples): every
public delta is finite and in [0, 1]; every epsilon is finite and >= 0, or inf with the
``infinite`` flag; exact and GDP delta(eps) are non-increasing; the AEA of a pure Gaussian
composition is delta_mu at orders 0, 1, 2; GDP eps(delta(eps)) round-trips.
"""

from __future__ import annotations

import math
import re
import warnings
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from scipy import special

import numeric
from numeric import (
    ApproxDP,
    Composition,
    EdgeworthAccountant,
    Gaussian,
    Laplace,
    PoissonSubsampledGaussian,
    RandomizedResponse,
    aea_delta,
    aea_epsilon,
    clt_delta,
    clt_epsilon,
    compose,
    delta_mu,
    eps_delta_tradeoff,
    epsilon_mu,
    exact_delta,
    exact_epsilon,
    gaussian_tradeoff,
    gdp_delta,
    gdp_epsilon,
    log_delta_mu,
    parse_spec,
    poisson_subsampling_clt_mu,
    pure_dp_delta,
    pure_dp_epsilon,
)
from numeric.edgeworth import SERIES_ORDERS
from numeric.exact import exact_family_of

NAN, INF = math.nan, math.inf
MAX_ORDER = max(SERIES_ORDERS)
METHOD_NAMES = ("aea", "aea-ea", "gdp", "clt", "exact")

FAST = settings(
    max_examples=40,
    deadline=timedelta(seconds=2),
    suppress_health_check=[HealthCheck.too_slow],
)
QUICK = settings(
    max_examples=25,
    deadline=timedelta(seconds=3),
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.fixture(autouse=True)
def _quiet_numpy():
    # Overflow warnings inside numpy are not the subject here; results are checked directly.
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def raises_naming(name: str, fn, *args, **kwargs) -> None:
    """``fn(*args, **kwargs)`` raises ValueError whose message names ``name`` (as a word)."""
    with pytest.raises(ValueError) as info:
        fn(*args, **kwargs)
    msg = str(info.value)
    assert re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", msg), (name, msg)


# --------------------------------------------------------------------------------------------
# strategies of bad values
# --------------------------------------------------------------------------------------------

TINY = 5e-324
non_finite = st.sampled_from([NAN, INF, -INF])
non_real = st.sampled_from([None, "1.0", "abc", [1.0], (0.5,), {}, True, False, 1j])
negative = st.one_of(
    st.floats(max_value=-TINY, allow_nan=False, allow_infinity=False),
    st.integers(max_value=-1),
)
zero = st.sampled_from([0, 0.0, -0.0, np.float64(0.0), np.int64(0)])

# parameters that must be finite and > 0 (sigma, scale, sensitivity, mu, eps of RR, eps0)
bad_positive = st.one_of(non_finite, zero, negative, non_real)
# parameters that must be finite and >= 0 (eps of ApproxDP and of f_{eps,delta})
bad_nonnegative = st.one_of(non_finite, negative, non_real)
# sampling rates in (0, 1]
bad_rate = st.one_of(
    non_finite,
    zero,
    negative,
    st.floats(min_value=1.0, exclude_min=True, allow_nan=False),
    st.integers(min_value=2),
    non_real,
)
# target deltas in the open interval (0, 1)
bad_delta = st.one_of(
    non_finite,
    zero,
    negative,
    st.floats(min_value=1.0, allow_nan=False),
    st.integers(min_value=1),
    non_real,
)
# delta parts in [0, 1)
bad_delta_part = st.one_of(
    non_finite, negative, st.floats(min_value=1.0, allow_nan=False), st.just(1), non_real
)
# eps arguments of vectorized delta functions (finite and >= 0); booleans and numeric strings
# are converted by numpy, so they are not drawn here.
bad_eps_scalar = st.one_of(non_finite, negative, st.sampled_from([None, "abc"]))
bad_eps_array = st.tuples(
    st.lists(st.floats(0.0, 10.0), max_size=3),
    st.one_of(non_finite, negative),
    st.lists(st.floats(0.0, 10.0), max_size=3),
).map(lambda t: np.array([*t[0], t[1], *t[2]], dtype=float))
bad_eps = st.one_of(bad_eps_scalar, bad_eps_array)
# alpha in [0, 1]
bad_alpha = st.one_of(
    non_finite, negative, st.floats(min_value=1.0, exclude_min=True, allow_nan=False)
)


def _non_whole(x: float) -> bool:
    return not (math.isfinite(x) and x == math.floor(x) and 1 <= x <= 1e15)


# counts: whole numbers in [1, 10^15]
bad_count = st.one_of(
    st.integers(max_value=0),
    st.integers(min_value=10**15 + 1),
    st.integers(min_value=-(2**62), max_value=0).map(np.int64),
    st.booleans(),
    non_finite,
    st.floats(allow_nan=False, allow_infinity=False).filter(_non_whole),
    st.sampled_from([1.5, 2.5, 0.5, 1e16, "10", None, [3], 3j]),
)


def bad_order_for(maximum: int, minimum: int = 0):
    """Orders outside [minimum, maximum] or not whole numbers."""
    return st.one_of(
        st.integers(max_value=minimum - 1),
        st.integers(min_value=maximum + 1),
        st.booleans(),
        non_finite,
        st.sampled_from([2.5, 0.5, 1.5, -1.0, "2", None]),
    )


bad_order = bad_order_for(MAX_ORDER)

# --------------------------------------------------------------------------------------------
# fixtures shared by the negative properties
# --------------------------------------------------------------------------------------------

G1 = Gaussian(1.0)
# An asymmetric composition (both pair orders) and an exactly solvable one.
MIXED = compose([(G1, 10), (PoissonSubsampledGaussian(1.0, 0.1), 10)])
EXACT_COMPS = {
    "gaussian": compose([(G1, 10)]),
    "pure": compose([(RandomizedResponse(0.5), 10), (ApproxDP(0.5, 1e-6), 3)]),
}


def _accountant(method: str) -> EdgeworthAccountant:
    return EdgeworthAccountant(method=method).compose(G1, 3)


DELTA_FNS = {
    "aea_delta": lambda e: aea_delta(MIXED, e),
    "aea_delta[aea-ea]": lambda e: aea_delta(MIXED, e, variant="aea-ea"),
    "aea_delta[order0]": lambda e: aea_delta(MIXED, e, order=0),
    "gdp_delta": lambda e: gdp_delta(MIXED, e),
    "clt_delta": lambda e: clt_delta(MIXED, e),
    "exact_delta[gaussian]": lambda e: exact_delta(EXACT_COMPS["gaussian"], e),
    "exact_delta[pure]": lambda e: exact_delta(EXACT_COMPS["pure"], e),
    "delta_mu": lambda e: delta_mu(1.0, e),
    "log_delta_mu": lambda e: log_delta_mu(1.0, e),
    "pure_dp_delta": lambda e: pure_dp_delta(0.5, 10, e),
    **{f"delta[{m}]": (lambda e, m=m: numeric.delta(EXACT_COMPS["gaussian"], e, m))
       for m in METHOD_NAMES},
    **{f"EdgeworthAccountant[{m}].get_delta": (lambda e, m=m: _accountant(m).get_delta(e))
       for m in METHOD_NAMES},
}

EPSILON_FNS = {
    "aea_epsilon": lambda d: aea_epsilon(MIXED, d),
    "aea_epsilon[aea-ea]": lambda d: aea_epsilon(MIXED, d, variant="aea-ea"),
    "gdp_epsilon": lambda d: gdp_epsilon(MIXED, d),
    "clt_epsilon": lambda d: clt_epsilon(MIXED, d),
    "exact_epsilon[gaussian]": lambda d: exact_epsilon(EXACT_COMPS["gaussian"], d),
    "exact_epsilon[pure]": lambda d: exact_epsilon(EXACT_COMPS["pure"], d),
    "epsilon_mu": lambda d: epsilon_mu(1.0, d),
    "pure_dp_epsilon": lambda d: pure_dp_epsilon(0.5, 10, d),
    **{f"epsilon[{m}]": (lambda d, m=m: numeric.epsilon(EXACT_COMPS["gaussian"], d, m))
       for m in METHOD_NAMES},
    **{f"EdgeworthAccountant[{m}].get_epsilon": (lambda d, m=m: _accountant(m).get_epsilon(d))
       for m in METHOD_NAMES},
}

# (constructor, parameter name, strategy of bad values) -- other arguments valid.
CONSTRUCTOR_CASES = {
    "Gaussian.sigma": (lambda v: Gaussian(v), "sigma", bad_positive),
    "Gaussian.sensitivity": (lambda v: Gaussian(1.0, v), "sensitivity", bad_positive),
    "Laplace.scale": (lambda v: Laplace(v), "scale", bad_positive),
    "Laplace.sensitivity": (lambda v: Laplace(1.0, v), "sensitivity", bad_positive),
    "RandomizedResponse.eps": (lambda v: RandomizedResponse(v), "eps", bad_positive),
    "PoissonSubsampledGaussian.sigma": (
        lambda v: PoissonSubsampledGaussian(v, 0.1), "sigma", bad_positive,
    ),
    "PoissonSubsampledGaussian.rate": (
        lambda v: PoissonSubsampledGaussian(1.0, v), "rate", bad_rate,
    ),
    "ApproxDP.eps": (lambda v: ApproxDP(v, 1e-6), "eps", bad_nonnegative),
    "ApproxDP.delta": (lambda v: ApproxDP(0.5, v), "delta", bad_delta_part),
    "Gaussian(sigma=kw)": (lambda v: Gaussian(sigma=v, sensitivity=2.0), "sigma", bad_positive),
}

# Scalar functions of the gdp / pure_dp / tradeoff modules: (call, name, strategy).
FUNCTION_CASES = {
    "delta_mu.mu": (lambda v: delta_mu(v, 1.0), "mu", bad_positive),
    "log_delta_mu.mu": (lambda v: log_delta_mu(v, 1.0), "mu", bad_positive),
    "epsilon_mu.mu": (lambda v: epsilon_mu(v, 1e-5), "mu", bad_positive),
    "poisson_subsampling_clt_mu.sigma": (
        lambda v: poisson_subsampling_clt_mu(v, 0.1, 10), "sigma", bad_positive,
    ),
    "poisson_subsampling_clt_mu.rate": (
        lambda v: poisson_subsampling_clt_mu(1.0, v, 10), "rate", bad_rate,
    ),
    "poisson_subsampling_clt_mu.steps": (
        lambda v: poisson_subsampling_clt_mu(1.0, 0.1, v), "steps", bad_count,
    ),
    "pure_dp_delta.eps0": (lambda v: pure_dp_delta(v, 10, 1.0), "eps0", bad_positive),
    "pure_dp_delta.n": (lambda v: pure_dp_delta(0.5, v, 1.0), "n", bad_count),
    "pure_dp_epsilon.eps0": (lambda v: pure_dp_epsilon(v, 10, 1e-3), "eps0", bad_positive),
    "pure_dp_epsilon.n": (lambda v: pure_dp_epsilon(0.5, v, 1e-3), "n", bad_count),
    "gaussian_tradeoff.mu": (lambda v: gaussian_tradeoff(v, 0.5), "mu", bad_positive),
    "gaussian_tradeoff.alpha": (lambda v: gaussian_tradeoff(1.0, v), "alpha", bad_alpha),
    "eps_delta_tradeoff.eps": (lambda v: eps_delta_tradeoff(v, 0.1, 0.5), "eps",
                               bad_nonnegative),
    "eps_delta_tradeoff.delta": (lambda v: eps_delta_tradeoff(1.0, v, 0.5), "delta",
                                 bad_delta_part),
    "eps_delta_tradeoff.alpha": (lambda v: eps_delta_tradeoff(1.0, 0.1, v), "alpha",
                                 bad_alpha),
}

# --------------------------------------------------------------------------------------------
# negative properties
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(CONSTRUCTOR_CASES))
@FAST
@given(data=st.data())
def test_mechanism_constructor_rejects_bad_parameter(case, data):
    build, name, strategy = CONSTRUCTOR_CASES[case]
    raises_naming(name, build, data.draw(strategy, label=name))


@pytest.mark.parametrize("case", sorted(FUNCTION_CASES))
@FAST
@given(data=st.data())
def test_function_rejects_bad_parameter(case, data):
    call, name, strategy = FUNCTION_CASES[case]
    raises_naming(name, call, data.draw(strategy, label=name))


@pytest.mark.parametrize("fn", sorted(DELTA_FNS))
@FAST
@given(eps=bad_eps)
def test_delta_functions_reject_bad_eps(fn, eps):
    raises_naming("eps", DELTA_FNS[fn], eps)


@pytest.mark.parametrize("fn", sorted(EPSILON_FNS))
@FAST
@given(delta=bad_delta)
def test_epsilon_functions_reject_bad_delta(fn, delta):
    raises_naming("delta", EPSILON_FNS[fn], delta)


@FAST
@given(mu=bad_positive, delta=st.floats(1e-10, 0.5))
def test_epsilon_mu_rejects_bad_mu_any_delta(mu, delta):
    raises_naming("mu", epsilon_mu, mu, delta)


@FAST
@given(count=bad_count)
def test_compose_rejects_bad_count(count):
    raises_naming("count", compose, [(G1, count)])
    raises_naming("count", compose, [(G1, 2), (Laplace(1.0), count)])
    raises_naming("count", Composition, ((G1, count),))


@FAST
@given(count=bad_count)
def test_accountant_compose_rejects_bad_count(count):
    raises_naming("count", EdgeworthAccountant().compose, G1, count)


@FAST
@given(count=bad_count)
def test_parse_spec_rejects_bad_count(count):
    assume(not isinstance(count, complex))  # TOML has no complex numbers
    data = {"mechanism": [{"type": "gaussian", "sigma": 1.0, "count": count}]}
    raises_naming("count", parse_spec, data)


@FAST
@given(sigma=bad_positive)
def test_parse_spec_rejects_bad_sigma(sigma):
    data = {"mechanism": [{"type": "gaussian", "sigma": sigma, "count": 3}]}
    raises_naming("sigma", parse_spec, data)


@pytest.mark.parametrize("variant", ["q-only", "aea-ea"])
@pytest.mark.parametrize("order", [-1, 2.5, True, False, NAN, INF, "2", None, MAX_ORDER + 1])
def test_aea_rejects_listed_bad_orders(variant, order):
    raises_naming("order", aea_delta, MIXED, 1.0, order=order, variant=variant)
    raises_naming("order", aea_epsilon, MIXED, 1e-5, order=order, variant=variant)


@FAST
@given(order=bad_order, variant=st.sampled_from(["q-only", "aea-ea"]))
def test_aea_rejects_bad_order(order, variant):
    raises_naming("order", aea_delta, MIXED, 1.0, order=order, variant=variant)
    raises_naming("order", aea_epsilon, MIXED, 1e-5, order=order, variant=variant)


@FAST
@given(order=bad_order, method=st.sampled_from(["aea", "aea-ea"]))
def test_method_dispatch_and_accountant_reject_bad_order(order, method):
    raises_naming("order", numeric.delta, MIXED, 1.0, method, order=order)
    raises_naming("order", numeric.epsilon, MIXED, 1e-5, method, order=order)
    raises_naming("order", EdgeworthAccountant, order=order, method=method)


@pytest.mark.parametrize(
    "mech", [G1, Laplace(1.0), RandomizedResponse(0.5), ApproxDP(0.5, 1e-6),
             PoissonSubsampledGaussian(1.0, 0.1)],
    ids=type,
)
@FAST
@given(data=st.data())
def test_pllr_cumulants_rejects_bad_order(mech, data):
    maximum = mech.max_order if mech.max_order is not None else 64
    order = data.draw(bad_order_for(maximum, minimum=1), label="order")
    raises_naming("order", mech.pllr_cumulants, order)


def test_aea_rejects_bad_variant():
    raises_naming("variant", aea_delta, MIXED, 1.0, variant="foo")
    raises_naming("variant", aea_epsilon, MIXED, 1e-5, variant="foo")


def test_method_dispatch_rejects_unknown_method_and_option():
    raises_naming("method", numeric.delta, MIXED, 1.0, "foo")
    raises_naming("method", numeric.epsilon, MIXED, 1e-5, "foo")
    raises_naming("order", numeric.epsilon, MIXED, 1e-5, "gdp", order=2)


@pytest.mark.parametrize("items", [[], (), [("x", 1)], ["x"], [(G1, 1, 2)], [(1.0, G1)]])
def test_compose_rejects_bad_items(items):
    with pytest.raises(ValueError):
        compose(items)


@pytest.mark.parametrize("items", [None, 5, 1.5])
def test_compose_rejects_non_iterables_with_value_error(items):
    # The docstring promises ValueError "on ... a non-mechanism"; found: TypeError escapes.
    with pytest.raises(ValueError):
        compose(items)


def test_exact_refuses_what_it_cannot_do():
    for comp in (
        compose([(Laplace(1.0), 3)]),
        compose([(PoissonSubsampledGaussian(1.0, 0.1), 3)]),
        compose([(G1, 3), (RandomizedResponse(0.5), 3)]),
        compose([(RandomizedResponse(0.5), 3), (RandomizedResponse(0.7), 3)]),
    ):
        with pytest.raises(ValueError, match="exact"):
            exact_delta(comp, 1.0)
        with pytest.raises(ValueError, match="exact"):
            exact_epsilon(comp, 1e-5)


def test_accountant_rejects_misuse():
    with pytest.raises(ValueError, match="empty"):
        EdgeworthAccountant().get_epsilon(1e-5)
    with pytest.raises(ValueError, match="empty"):
        EdgeworthAccountant().get_delta(1.0)
    raises_naming("mechanism", EdgeworthAccountant().compose, "gaussian", 1)


def test_accountant_rejects_unknown_method_at_construction():
    # The constructor says "validate eagerly so a typo fails at construction"; found: only the
    # order is validated, a mistyped method fails later, at the first query.
    raises_naming("method", EdgeworthAccountant, method="aae")


# --------------------------------------------------------------------------------------------
# boundary input that is valid
# --------------------------------------------------------------------------------------------


def test_boundary_values_are_accepted():
    assert PoissonSubsampledGaussian(1.0, 1.0).rate == 1.0
    assert ApproxDP(0.0, 0.0).delta_part == 0.0
    assert ApproxDP(0.0, 0.5).eps == 0.0
    assert compose([(G1, 10**15)]).total_count == 10**15
    assert compose([(G1, 1e4)]).total_count == 10_000  # integral floats are counts
    assert compose([(G1, np.int64(7))]).total_count == 7
    assert poisson_subsampling_clt_mu(1.0, 1.0, 1) == pytest.approx(math.sqrt(math.e - 1))
    for name, fn in DELTA_FNS.items():
        fn(0.0)
        if "EdgeworthAccountant" not in name:  # get_delta takes a scalar eps
            fn(np.array([0.0, 1.0, 5.0]))
    for fn in EPSILON_FNS.values():
        fn(0.5)


@pytest.mark.parametrize("method", ["aea", "aea-ea", "gdp", "clt", "exact"])
@pytest.mark.parametrize("eps", [1e3, 1e10, 1e100, 1e300])
def test_huge_finite_eps_gives_valid_delta(method, eps):
    # eps is only required to be finite and >= 0; delta(eps) must then be a valid delta (~0).
    res = numeric.delta(EXACT_COMPS["gaussian"], eps, method)
    assert 0.0 <= res.delta <= 1e-300


@pytest.mark.parametrize("mu", [1e3, 1e6, 1e10, 1e100])
@pytest.mark.parametrize("delta", [1e-300, 1e-10, 0.5])
def test_epsilon_mu_huge_mu_is_valid_or_value_error(mu, delta):
    # A finite mu > 0 is valid input: the answer must be a finite eps (or a clear ValueError),
    # never OverflowError or scipy's RuntimeError.
    try:
        eps = epsilon_mu(mu, delta)
    except ValueError:
        return
    assert math.isfinite(eps) and eps >= 0.0


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0])
def test_subsampled_gaussian_at_rate_one_is_the_gaussian(sigma):
    # rate = 1 is inside the documented range (0, 1]; the pair is then exactly N(0,1) vs N(mu,1).
    # Found: for sigma below about 1.08 the quadrature returns NaN (log1p(rate * expm1(u)) is
    # log1p(-1) = -inf once expm1(u) rounds to -1) and every AEA query raises.
    got = PoissonSubsampledGaussian(sigma, 1.0).pllr_cumulants(4)
    want = Gaussian(sigma).pllr_cumulants(4)
    np.testing.assert_allclose(got.x, want.x, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got.y, want.y, rtol=1e-9, atol=1e-12)
    comp = compose([(PoissonSubsampledGaussian(sigma, 1.0), 10)])
    assert aea_epsilon(comp, 1e-5).epsilon == pytest.approx(
        epsilon_mu(math.sqrt(10) / sigma, 1e-5), rel=1e-9
    )


@pytest.mark.parametrize(
    "mech",
    [RandomizedResponse(1e-120), ApproxDP(1e-120, 0.0), Gaussian(1e110), Laplace(1e110)],
    ids=repr,
)
@pytest.mark.parametrize("variant", ["q-only", "aea-ea"])
def test_aea_of_vanishing_privacy_loss(mech, variant):
    # Valid parameters whose privacy loss is ~0: delta(eps) ~ 0 and eps(delta) ~ 0. Found: once
    # sigma^4 of the summed PLLR underflows, the standardized cumulants are 0/0 = NaN and AEA
    # raises ("delta values must lie in [0, 1], got nan" / "target delta ... too small").
    comp = compose([(mech, 10)])
    d = aea_delta(comp, np.array([0.0, 1.0]), variant=variant)
    _check_delta_result(d)
    assert np.all(np.asarray(d.delta) <= 1e-50)
    assert aea_epsilon(comp, 1e-5, variant=variant).epsilon <= 1e-50


@pytest.mark.parametrize(("sigma", "rate"), [(100.0, 1e-10), (100.0, 1e-20), (1000.0, 1e-100)])
def test_subsampled_gaussian_tiny_rate_cumulant_signs_and_gdp(sigma, rate):
    # Contract (mechanisms.base): kappa_1(X) = -KL(P||Q) <= 0 <= KL(Q||P) = kappa_1(Y). Found: for
    # tiny privacy loss the quadrature mean is pure rounding, kappa_1(Y) comes out negative, the
    # Q||P GDP mu is negative and gdp_epsilon raises "mu must be finite and > 0".
    mech = PoissonSubsampledGaussian(sigma, rate)
    c = mech.pllr_cumulants(2)
    assert c.x[0] <= 0.0 <= c.y[0], c
    comp = compose([(mech, 10)])
    _check_epsilon_result(gdp_epsilon(comp, 1e-5))
    _check_delta_result(gdp_delta(comp, 0.5))


# --------------------------------------------------------------------------------------------
# strategies of valid input (moderate ranges)
# --------------------------------------------------------------------------------------------

gaussians = st.builds(Gaussian, st.floats(0.3, 20.0), st.floats(0.1, 5.0))
laplaces = st.builds(Laplace, st.floats(0.3, 20.0), st.floats(0.1, 5.0))
rrs = st.builds(RandomizedResponse, st.floats(0.01, 3.0))
psgs = st.builds(PoissonSubsampledGaussian, st.floats(0.5, 5.0), st.floats(1e-3, 1.0))
adps = st.builds(ApproxDP, st.one_of(st.just(0.0), st.floats(1e-3, 2.0)), st.floats(0.0, 1e-3))
mechanisms = st.one_of(gaussians, laplaces, rrs, psgs, adps)
counts = st.integers(1, 2000)
compositions = st.lists(st.tuples(mechanisms, counts), min_size=1, max_size=3).map(compose)
gaussian_compositions = st.lists(st.tuples(gaussians, counts), min_size=1, max_size=3).map(compose)


@st.composite
def pure_compositions(draw) -> Composition:
    """Randomized response and (eps0, delta)-DP steps sharing one eps0 (the exact family)."""
    eps0 = draw(st.floats(0.01, 2.0))
    terms = [(RandomizedResponse(eps0), draw(st.integers(1, 500)))]
    if draw(st.booleans()):
        terms.append((ApproxDP(eps0, draw(st.floats(0.0, 1e-4))), draw(st.integers(1, 50))))
    if draw(st.booleans()):
        terms.append((ApproxDP(0.0, draw(st.floats(0.0, 1e-4))), draw(st.integers(1, 50))))
    return compose(terms)


exact_compositions = st.one_of(gaussian_compositions, pure_compositions())
valid_eps = st.floats(0.0, 30.0)
valid_delta = st.floats(1e-10, 0.5)


def _has_exact(comp: Composition) -> bool:
    try:
        exact_family_of(comp)
    except ValueError:
        return False
    return True


def _non_increasing(d: np.ndarray) -> bool:
    """Non-increasing up to rounding: a rise of at most ~4 ulps (1e-15 relative) is tolerated.

    (Near delta = 1 the exact binomial profile is a sum of positive terms accurate to a few ulps;
    e.g. 354 steps of eps0 = 1.56 give 1 - 2^-51 at eps = 19 and 1.0 at eps = 22.)
    """
    d = np.asarray(d, dtype=float)
    return bool(np.all(np.diff(d) <= 1e-15 * d[:-1]))


def _check_delta_result(res) -> None:
    d = np.asarray(res.delta, dtype=float)
    assert np.all(np.isfinite(d)), res
    assert np.all((d >= 0.0) & (d <= 1.0)), res


def _check_epsilon_result(res) -> None:
    eps = res.epsilon
    assert not math.isnan(eps), res
    if math.isinf(eps):
        assert eps > 0 and res.infinite, res
        assert res.to_dict()["epsilon"] is None and res.to_dict()["infinite"] is True
    else:
        assert eps >= 0.0 and not res.infinite, res


# --------------------------------------------------------------------------------------------
# positive properties
# --------------------------------------------------------------------------------------------


@QUICK
@given(comp=compositions, eps=valid_eps, method=st.sampled_from(METHOD_NAMES))
def test_every_delta_is_finite_in_unit_interval(comp, eps, method):
    assume(method != "exact" or _has_exact(comp))
    _check_delta_result(numeric.delta(comp, eps, method))
    _check_delta_result(numeric.delta(comp, np.array([0.0, eps, 2.0 * eps + 1.0]), method))


@QUICK
@given(comp=compositions, delta=valid_delta, method=st.sampled_from(METHOD_NAMES))
def test_every_epsilon_is_finite_nonnegative_or_flagged_inf(comp, delta, method):
    assume(method != "exact" or _has_exact(comp))
    res = numeric.epsilon(comp, delta, method)
    _check_epsilon_result(res)
    if delta > comp.delta_part and method != "clt":
        assert not res.infinite, res  # only a delta at or below the delta part is infeasible


@QUICK
@given(comp=compositions, delta=valid_delta, eps=valid_eps,
       order=st.integers(0, MAX_ORDER), method=st.sampled_from(["aea", "aea-ea"]))
def test_accountant_returns_valid_estimates(comp, delta, eps, order, method):
    acc = EdgeworthAccountant(order=order, method=method)
    for mech, count in comp.terms:
        acc.compose(mech, count)
    e = acc.get_epsilon(delta)
    assert e.is_estimate is e.result.estimate
    _check_epsilon_result(e.result)
    d = acc.get_delta(eps)
    assert 0.0 <= float(d) <= 1.0


@FAST
@given(mu=st.floats(1e-3, 50.0), eps=st.floats(0.0, 200.0))
def test_delta_mu_and_log_delta_mu_valid(mu, eps):
    d = delta_mu(mu, eps)
    assert math.isfinite(d) and 0.0 <= d <= 1.0
    ld = log_delta_mu(mu, eps)
    assert ld <= 0.0 and not math.isnan(ld)
    if d > 1e-300:
        assert math.exp(ld) == pytest.approx(d, rel=1e-9)


@FAST
@given(mu=st.floats(1e-3, 50.0), delta=valid_delta)
def test_epsilon_mu_valid(mu, delta):
    eps = epsilon_mu(mu, delta)
    assert math.isfinite(eps) and eps >= 0.0


@FAST
@given(sigma=st.floats(0.1, 50.0), rate=st.floats(1e-6, 1.0), steps=st.integers(1, 10**9))
def test_poisson_subsampling_clt_mu_valid(sigma, rate, steps):
    mu = poisson_subsampling_clt_mu(sigma, rate, steps)
    assert math.isfinite(mu) and mu > 0.0


@FAST
@given(eps0=st.floats(0.01, 3.0), n=st.integers(1, 5000), eps=st.floats(0.0, 100.0),
       delta=valid_delta)
def test_pure_dp_profile_valid(eps0, n, eps, delta):
    d = pure_dp_delta(eps0, n, eps)
    assert math.isfinite(d) and 0.0 <= d <= 1.0
    if eps >= n * eps0:
        assert d == 0.0
    e = pure_dp_epsilon(eps0, n, delta)
    assert math.isfinite(e) and 0.0 <= e <= n * eps0 * (1 + 1e-12)


@QUICK
@given(comp=exact_compositions, grid=st.lists(st.floats(0.0, 40.0), min_size=2, max_size=25))
def test_exact_delta_non_increasing(comp, grid):
    eps = np.sort(np.array(grid))
    d = np.asarray(exact_delta(comp, eps).delta)
    assert _non_increasing(d), (eps, d)


@QUICK
@given(comp=compositions, grid=st.lists(st.floats(0.0, 40.0), min_size=2, max_size=25),
       method=st.sampled_from(["gdp", "clt"]))
def test_gdp_delta_non_increasing(comp, grid, method):
    eps = np.sort(np.array(grid))
    d = np.asarray(numeric.delta(comp, eps, method).delta)
    assert _non_increasing(d), (eps, d)


@FAST
@given(mu=st.floats(1e-3, 50.0), grid=st.lists(st.floats(0.0, 200.0), min_size=2, max_size=25))
@example(mu=0.25, grid=[0.0, 2.2e-16])  # found by Hypothesis: rose by 8 ulps before the z0 <= 0 fix
def test_delta_mu_non_increasing(mu, grid):
    eps = np.sort(np.array(grid))
    d = np.asarray(delta_mu(mu, eps))
    assert _non_increasing(d), (mu, eps, d)


@QUICK
@given(comp=gaussian_compositions, eps=st.lists(st.floats(0.0, 60.0), min_size=1, max_size=8),
       delta=st.floats(1e-12, 0.5))
def test_aea_of_gaussian_composition_is_delta_mu(comp, eps, delta):
    mu = math.sqrt(sum(count * mech.mu**2 for mech, count in comp.terms))
    e = np.array(eps)
    ref = np.asarray(delta_mu(mu, e))
    want_eps = epsilon_mu(mu, delta)
    for order in (0, 1, 2):
        res = aea_delta(comp, e, order=order)
        assert res.estimate is False
        np.testing.assert_allclose(np.asarray(res.delta), ref, rtol=1e-12, atol=1e-300)
        got = aea_epsilon(comp, delta, order=order)
        assert got.estimate is False
        assert got.epsilon == pytest.approx(want_eps, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("steps", [72, 100, 1000])
@pytest.mark.parametrize("delta", [1e-5, 0.5])
def test_aea_ea_epsilon_of_large_mu_gaussian(steps, delta):
    # Found by test_every_epsilon_is_finite_nonnegative_or_flagged_inf: for a composed mu above
    # about 8.5 the aea-ea search range overflows (e^eps in the envelope) and aea_epsilon raises
    # "target delta ... is too small for the Edgeworth search range" even at delta = 0.5.
    comp = compose([(G1, steps)])
    got = aea_epsilon(comp, delta, variant="aea-ea").epsilon
    assert got == pytest.approx(epsilon_mu(math.sqrt(steps), delta), rel=1e-6)


def _profile_slope(mu: float, eps: float) -> float:
    """-d delta_mu / d eps = e^eps Phi(-eps/mu - mu/2), computed in log space."""
    return math.exp(eps + float(special.log_ndtr(-eps / mu - 0.5 * mu)))


@FAST
@given(mu=st.floats(0.05, 20.0), eps=st.floats(0.0, 60.0))
def test_gdp_round_trip_epsilon_mu(mu, eps):
    d = delta_mu(mu, eps)
    assume(1e-300 < d < 1.0)
    back = epsilon_mu(mu, d)
    # Consistent in delta to rounding ...
    assert delta_mu(mu, back) == pytest.approx(d, rel=1e-9)
    # ... and in eps up to the conditioning of the profile (flat near eps = 0 for large mu).
    slope = _profile_slope(mu, eps)
    tol = 1e-9 * (1.0 + eps) + 1e-12 * d / slope
    assert abs(back - eps) <= tol, (mu, eps, d, back)


@QUICK
@given(comp=compositions, eps=st.floats(0.0, 30.0))
def test_gdp_round_trip_through_compositions(comp, eps):
    for delta_fn, eps_fn in ((gdp_delta, gdp_epsilon), (clt_delta, clt_epsilon)):
        res = delta_fn(comp, eps)
        d = res.delta
        assume(res.details["delta_part"] + 1e-300 < d < 1.0)
        mu, part = res.details["mu"], res.details["delta_part"]
        back = eps_fn(comp, d).epsilon
        assert math.isfinite(back)
        assert delta_fn(comp, back).delta == pytest.approx(d, rel=1e-9)
        pure = (d - part) / (1.0 - part)
        if mu > 0.0 and pure > 1e-250:
            tol = 1e-9 * (1.0 + eps) + 1e-12 * d / ((1.0 - part) * _profile_slope(mu, eps))
            assert abs(back - eps) <= tol, (mu, part, eps, d, back)
