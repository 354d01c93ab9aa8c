"""Tests for numeric.tradeoff: trade-off functions, delta parts and profile conversions.

Reference values are copied from shared/reference/fdp_reference.csv (computed with mpmath at
dps 80/120, independently of this code); each literal names its row. Identities follow Dong, Roth,
Su, *Gaussian Differential Privacy* (arXiv:1905.02383), Prop. 2.12, Cor. 2.13, Eqs. (11)-(13).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import partial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special

from numeric.gdp import delta_mu
from numeric.tradeoff import (
    compose_delta_parts,
    delta_from_tradeoff,
    delta_profile_with_delta_part,
    eps_delta_tradeoff,
    gaussian_tradeoff,
    sup_distance,
    tensor_with_delta,
    tradeoff_from_delta_curve,
)

# shared/reference/fdp_reference.csv, rows `gdp` (quantity delta, mpmath dps80/120):
# (mu, eps) -> Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).
GDP_DELTA = {
    (0.5, 0.0): 0.197412651365847448481707583162067478564094962,
    (0.5, 0.5): 0.0524403232876696617118967162667797315442629826,
    (0.5, 1.0): 0.00682959498311457538423501287992687275002686298,
    (0.5, 2.0): 9.43916863494723375851126696403039436235339697e-6,
    (1.0, 0.0): 0.382924922548026207275409221216675479767204351,
    (1.0, 0.5): 0.238421708134876628318156163154351502445851583,
    (1.0, 1.0): 0.126936737506643945800829624757766880415080650,
    (1.0, 2.0): 0.0209236358211137314196037625870992252129365640,
    (1.0, 3.0): 0.00153718536940095484694386966631603964672769797,
    (1.0, 5.0): 5.79372169191949410420681779021892023246676625e-7,
    (2.0, 0.0): 0.682689492137085897170465091264075844955825933,
    (2.0, 1.0): 0.509861660054670153076238845974442360182285001,
    (2.0, 5.0): 0.0322819847500728213517653066121381630656830463,
    (3.0, 2.0): 0.685874165716049366422235851516575314295526862,
}
# Same rows, deltas too small for 1e-9 relative accuracy through 1 - inf(f + e^eps a).
GDP_DELTA_TINY = {
    (0.5, 3.0): 3.40091173567352882417679680914764582442486865e-10,
    (0.5, 5.0): 4.41544347029961926997758165125360610293024374e-24,
}

# shared/reference/fdp_reference.csv, rows `fig5` (n = 10 compositions of (1/sqrt 10, 0)-DP vs G_1).
FIG5_EPS0 = 1.0 / math.sqrt(10.0)
FIG5_N = 10
FIG5_SUP_F_MINUS_G = 0.0122881705659670224260617294374736077195966680  # sup_alpha_(f - G)_+
FIG5_ARGMAX_ALPHA = 0.03878935695651490670581973940739780659761  # argmax_alpha
FIG5_SUP_G_MINUS_F = 0.00878367755757906947255101781503981744752286837  # sup_alpha_(G - f)_+
FIG5_ARGMAX_EPS = 0.325323652282791107342746722238450883294594959  # argmax_eps_(delta_exact - ..)
FIG5_EPS_GDP = 3.13867054858293920858075477000320084916774930  # eps_gdp (mu=1, delta=1e-3)
FIG5_DELTA_EXACT = 9.77787585271081579597738656869678044499797047e-5  # delta_exact at eps_gdp
FIG5_EPS_EXACT = 2.88967273935981121240934495430976391917933761  # eps_exact_composition
FIG5_DELTA_GDP = 0.00213824702283743088697498596904011207810422880  # delta_gdp at eps_exact

# docs/math.md section 2 / GDP Sec. 3.3: 1 - (1 - 1e-6)^100.
SEC33_DELTA_PART = 9.9995050e-5

mus = st.floats(min_value=0.05, max_value=8.0)
unit = st.floats(min_value=0.0, max_value=1.0)
epss = st.floats(min_value=0.0, max_value=8.0)
delta_parts = st.floats(min_value=0.0, max_value=0.5)


def gauss(mu: float):
    return partial(gaussian_tradeoff, mu)


def kov_delta(eps: float, eps0: float, n: int) -> float:
    """Exact profile of n-fold (eps0, 0)-DP (KOV).

    delta(eps) = sum_j C(n, j) (t^j - e^eps t^(n-j))_+ / (1 + t)^n with t = e^eps0.
    """
    t = math.exp(eps0)
    total = math.fsum(
        max(0.0, math.comb(n, j) * (t**j - math.exp(eps) * t ** (n - j))) for j in range(n + 1)
    )
    return total / (1.0 + t) ** n


# --------------------------------------------------------------------------------------------
# G_mu
# --------------------------------------------------------------------------------------------


@given(mu=mus, a=unit, b=unit, c=unit)
def test_gaussian_tradeoff_is_a_tradeoff_function(mu: float, a: float, b: float, c: float) -> None:
    a, b, c = sorted((a, b, c))
    ga, gb, gc = (gaussian_tradeoff(mu, x) for x in (a, b, c))
    for x, gx in ((a, ga), (b, gb), (c, gc)):
        assert 0.0 <= gx <= 1.0
        assert gx <= 1.0 - x + 1e-15  # f(a) <= 1 - a
    assert ga >= gb >= gc  # non-increasing
    if c - a > 1e-9:  # convex: below the chord
        chord = ((c - b) * ga + (b - a) * gc) / (c - a)
        assert gb <= chord + 1e-12


@given(mu=mus)
def test_gaussian_tradeoff_endpoints_exact(mu: float) -> None:
    assert gaussian_tradeoff(mu, 0.0) == 1.0
    assert gaussian_tradeoff(mu, 1.0) == 0.0
    out = gaussian_tradeoff(mu, np.array([0.0, 1.0]))
    assert out.tolist() == [1.0, 0.0]


@given(mu=st.floats(min_value=0.1, max_value=6.0), a=st.floats(min_value=0.5, max_value=1.0))
def test_gaussian_tradeoff_symmetric_even_where_values_are_tiny(mu: float, a: float) -> None:
    # G_mu(G_mu(a)) = a. For a near 1, G_mu(a) can be far below 1e-16, so this only holds if the
    # tiny-alpha branch Phi(-Phi^{-1}(a) - mu) is used (1 - a would round to 1).
    assert abs(gaussian_tradeoff(mu, gaussian_tradeoff(mu, a)) - a) <= 1e-12


def test_gaussian_tradeoff_tiny_alpha_and_shapes() -> None:
    # a = 1 - 1e-10, mu = 5: G = Phi(-6.36 - 5) ~ 5e-30; going back must recover ~1.
    a = 1.0 - 1e-10
    g = gaussian_tradeoff(5.0, a)
    assert 0.0 < g < 1e-25
    assert gaussian_tradeoff(5.0, g) == pytest.approx(a, abs=1e-14)
    assert isinstance(gaussian_tradeoff(1.0, 0.3), float)
    grid = np.linspace(0.0, 1.0, 12).reshape(3, 4)
    assert gaussian_tradeoff(1.0, grid).shape == (3, 4)
    # Phi(-Phi^{-1}(1/2) - mu) = Phi(-mu).
    assert gaussian_tradeoff(1.5, 0.5) == pytest.approx(special.ndtr(-1.5), rel=1e-15)


# --------------------------------------------------------------------------------------------
# f_{eps,delta} and Eqs. (11)-(13)
# --------------------------------------------------------------------------------------------


@given(eps=epss, delta=delta_parts, a=unit, b=unit, c=unit)
def test_eps_delta_tradeoff_is_a_tradeoff_function(
    eps: float, delta: float, a: float, b: float, c: float
) -> None:
    a, b, c = sorted((a, b, c))
    fa, fb, fc = (eps_delta_tradeoff(eps, delta, x) for x in (a, b, c))
    assert fa >= fb >= fc >= 0.0
    assert fb <= 1.0 - b + 1e-15
    if c - a > 1e-9:
        assert fb <= ((c - b) * fa + (b - a) * fc) / (c - a) + 1e-12
    assert eps_delta_tradeoff(eps, delta, 0.0) == pytest.approx(1.0 - delta, abs=1e-15)
    assert eps_delta_tradeoff(eps, delta, 1.0) == 0.0


def test_eps_delta_tradeoff_values_and_overflow() -> None:
    e, d = 1.0, 0.1
    kink = (1 - d) / (1 + math.e)
    assert eps_delta_tradeoff(e, d, kink) == pytest.approx((1 - d) / (1 + math.e), rel=1e-14)
    assert eps_delta_tradeoff(e, d, 0.05) == pytest.approx(0.9 - math.e * 0.05, rel=1e-14)
    assert eps_delta_tradeoff(e, d, 0.5) == pytest.approx((0.9 - 0.5) / math.e, rel=1e-14)
    assert eps_delta_tradeoff(e, d, 0.95) == 0.0
    assert eps_delta_tradeoff(0.0, 0.0, 0.3) == pytest.approx(0.7, rel=1e-15)  # f_{0,0} = 1 - a
    # e^eps overflows: the limit curve 1 - delta at a = 0, 0 elsewhere, no NaN.
    out = eps_delta_tradeoff(1000.0, 0.2, np.array([0.0, 1e-300, 0.5]))
    assert out.tolist() == [0.8, 0.0, 0.0]


@given(eps=epss, delta=delta_parts, a=unit)
def test_eq11_eps_delta_is_pure_tensor_delta(eps: float, delta: float, a: float) -> None:
    # GDP Eq. (11): f_{eps,delta} = f_{eps,0} (x) f_{0,delta}, with (x) f_{0,d} from Eq. (13).
    lhs = eps_delta_tradeoff(eps, delta, a)
    rhs = tensor_with_delta(partial(eps_delta_tradeoff, eps, 0.0), delta)(a)
    assert rhs == pytest.approx(lhs, abs=1e-14)


@given(d1=delta_parts, d2=delta_parts, a=unit)
def test_eq12_pure_delta_parts_compose(d1: float, d2: float, a: float) -> None:
    # GDP Eq. (12): f_{0,d1} (x) f_{0,d2} = f_{0, 1-(1-d1)(1-d2)}.
    d = compose_delta_parts([d1, d2])
    assert d == pytest.approx(1.0 - (1.0 - d1) * (1.0 - d2), abs=1e-15)
    lhs = tensor_with_delta(partial(eps_delta_tradeoff, 0.0, d1), d2)(a)
    assert lhs == pytest.approx(eps_delta_tradeoff(0.0, d, a), abs=1e-14)


def test_eq12_section33_example() -> None:
    d = compose_delta_parts([1e-6] * 100)
    exact = float(1 - (1 - Fraction(1, 10**6)) ** 100)  # exact rational, rounded once
    assert d == pytest.approx(exact, rel=1e-14)
    assert d == pytest.approx(SEC33_DELTA_PART, abs=5e-13)  # docs/math.md's 8 digits
    assert compose_delta_parts(np.full(10**6, 1e-18)) == pytest.approx(1e-12, rel=1e-9)
    assert compose_delta_parts(0.0) == 0.0
    assert compose_delta_parts([0.25]) == 0.25


@given(mu=st.floats(min_value=0.3, max_value=3.0), d=delta_parts, a=unit)
def test_tensor_with_delta_pointwise(mu: float, d: float, a: float) -> None:
    h = tensor_with_delta(gauss(mu), d)
    expected = (1 - d) * gaussian_tradeoff(mu, a / (1 - d)) if a <= 1 - d else 0.0
    assert h(a) == pytest.approx(expected, abs=1e-14)
    assert tensor_with_delta(gauss(mu), 0.0)(a) == gaussian_tradeoff(mu, a)


def test_tensor_with_delta_shapes() -> None:
    h = tensor_with_delta(gauss(1.0), 0.2)
    assert isinstance(h(0.1), float)
    out = h(np.array([[0.0, 0.5], [0.8, 1.0]]))
    assert out.shape == (2, 2)
    assert out[0, 0] == pytest.approx(0.8, abs=1e-15)
    assert out[1].tolist() == [0.0, 0.0]


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("d", [1e-6, 1e-3, 0.05])
def test_eq13_profile_of_tensor_with_delta(mu: float, d: float) -> None:
    # GDP Eq. (13) in (eps, delta) terms: delta'(eps) = d + (1 - d) delta_f(eps).
    eps = np.array([0.0, 0.5, 1.0, 2.0, 4.0])
    got = delta_from_tradeoff(tensor_with_delta(gauss(mu), d), eps)
    want = delta_profile_with_delta_part(delta_mu(mu, eps), d)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-15)
    assert delta_profile_with_delta_part(0.0, d) == d
    assert delta_profile_with_delta_part(1.0, d) == 1.0


# --------------------------------------------------------------------------------------------
# delta_from_tradeoff (trade-off -> profile)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("mu", "eps"), sorted(GDP_DELTA))
def test_delta_from_gaussian_tradeoff_matches_reference(mu: float, eps: float) -> None:
    ref = GDP_DELTA[(mu, eps)]
    got = delta_from_tradeoff(gauss(mu), eps)
    assert isinstance(got, float)
    assert got == pytest.approx(ref, rel=1e-9)
    assert got == pytest.approx(delta_mu(mu, eps), rel=1e-9)


@pytest.mark.parametrize(("mu", "eps"), sorted(GDP_DELTA_TINY))
def test_delta_from_tradeoff_tiny_delta_absolute_accuracy(mu: float, eps: float) -> None:
    # 1 - inf(f + e^eps a) has absolute, not relative, accuracy ~1e-16 (documented).
    assert abs(delta_from_tradeoff(gauss(mu), eps) - GDP_DELTA_TINY[(mu, eps)]) <= 1e-15


def test_delta_from_tradeoff_fig5_gdp_point() -> None:
    assert delta_from_tradeoff(gauss(1.0), FIG5_EPS_EXACT) == pytest.approx(
        FIG5_DELTA_GDP, rel=1e-9
    )


@pytest.mark.parametrize("mu", [0.3, 1.0, 2.5])
def test_delta_from_tradeoff_vectorized_matches_delta_mu(mu: float) -> None:
    eps = np.linspace(0.0, 6.0, 25).reshape(5, 5)
    got = delta_from_tradeoff(gauss(mu), eps)
    assert got.shape == (5, 5)
    want = delta_mu(mu, eps)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=2e-16)


@pytest.mark.parametrize(
    ("mu1", "mu2", "eps"), [(0.6, 0.8, 0.5), (0.6, 0.8, 2.0), (1.0, 2.0, 1.0), (0.3, 0.4, 0.25)]
)
def test_gaussian_composition_through_profile(mu1: float, mu2: float, eps: float) -> None:
    # G_mu1 (x) G_mu2 = G_sqrt(mu1^2 + mu2^2) (GDP Cor. 3.3). Independent side: the composed
    # profile E_Q[(1 - e^(eps - Y1 - Y2))_+] with Y_i ~ N(mu_i^2/2, mu_i^2) (docs/math.md section
    # 1), integrating Y1 by quadrature and Y2 in closed form.
    def inner(c: float) -> float:  # E[(1 - e^(c - Y2))_+]
        return special.ndtr(-c / mu2 + mu2 / 2) - math.exp(c) * special.ndtr(-c / mu2 - mu2 / 2)

    def integrand(z: float) -> float:
        return math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi) * inner(eps - mu1**2 / 2 - mu1 * z)

    composed, _ = integrate.quad(integrand, -40.0, 40.0, epsabs=1e-15, epsrel=1e-13, limit=200)
    got = delta_from_tradeoff(gauss(math.hypot(mu1, mu2)), eps)
    assert got == pytest.approx(composed, rel=1e-9)


@given(e=st.floats(min_value=0.0, max_value=6.0), d=delta_parts)
@settings(deadline=None, max_examples=40)
def test_delta_from_eps_delta_tradeoff_at_its_eps_is_delta(e: float, d: float) -> None:
    f = partial(eps_delta_tradeoff, e, d)
    assert delta_from_tradeoff(f, e) == pytest.approx(d, abs=1e-15)
    assert delta_from_tradeoff(f, e + 1.0) == pytest.approx(d, abs=1e-15)


@given(e=st.floats(min_value=0.0, max_value=6.0), d=delta_parts, s=unit)
@settings(deadline=None, max_examples=40)
def test_delta_from_eps_delta_tradeoff_below_its_eps(e: float, d: float, s: float) -> None:
    # For eps' <= e the minimum of f_{e,d}(a) + e^{eps'} a sits at the kink a = (1-d)/(1+e^e):
    # delta(eps') = 1 - (1 - d)(1 + e^{eps'})/(1 + e^e).
    ep = s * e
    want = 1.0 - (1.0 - d) * (1.0 + math.exp(ep)) / (1.0 + math.exp(e))
    got = delta_from_tradeoff(partial(eps_delta_tradeoff, e, d), ep)
    assert got == pytest.approx(want, abs=1e-14)


def test_delta_from_tradeoff_large_eps_limit() -> None:
    # e^eps overflows: delta -> 1 - f(0).
    assert delta_from_tradeoff(partial(eps_delta_tradeoff, 1.0, 0.2), 800.0) == pytest.approx(
        0.2, abs=1e-15
    )
    assert delta_from_tradeoff(gauss(1.0), 800.0) == 0.0


# --------------------------------------------------------------------------------------------
# tradeoff_from_delta_curve (profile -> trade-off) and the fig5 round trip
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mu", [0.5, 1.0, 3.0])
def test_tradeoff_from_dense_gdp_profile_is_lower_envelope(mu: float) -> None:
    eps_grid = np.linspace(0.0, 12.0 * max(1.0, mu), 6001)
    env = partial(tradeoff_from_delta_curve, eps_grid, delta_mu(mu, eps_grid))
    alpha = np.concatenate((np.logspace(-6, -1, 200), np.linspace(0.0, 1.0, 801)))
    g = gaussian_tradeoff(mu, alpha)
    f = env(alpha)
    assert np.all(f <= g + 1e-12)  # lower envelope: the implied guarantee never overstates
    assert np.max(g - f) <= 1e-6
    assert sup_distance(env, gauss(mu), alpha) <= 1e-6


def test_tradeoff_from_delta_curve_sparse_grid_is_valid_but_loose() -> None:
    eps_grid = np.array([0.0, 1.0, 3.0])
    deltas = delta_mu(1.0, eps_grid)
    alpha = np.linspace(0.0, 1.0, 501)
    f = tradeoff_from_delta_curve(eps_grid, deltas, alpha)
    g = gaussian_tradeoff(1.0, alpha)
    assert np.all(f <= g + 1e-12)
    assert np.max(g - f) > 1e-3
    # A single pair gives f_{eps,delta} itself.
    one = tradeoff_from_delta_curve([1.0], [0.1], alpha)
    np.testing.assert_allclose(one, eps_delta_tradeoff(1.0, 0.1, alpha), rtol=0, atol=1e-15)
    assert isinstance(tradeoff_from_delta_curve([1.0], [0.1], 0.3), float)


def _fig5_envelope():
    # The 10-fold composition of (eps0, 0)-DP is piecewise linear with slopes -e^{(2j-n) eps0};
    # its supporting lines for L = 0, 2 eps0, ..., n eps0 (and their mirror images) are exactly
    # f_{L, delta(L)}, so the envelope over these L reproduces f exactly.
    lgrid = np.array([(2 * j - FIG5_N) * FIG5_EPS0 for j in range(FIG5_N // 2, FIG5_N + 1)])
    deltas = np.array([kov_delta(x, FIG5_EPS0, FIG5_N) for x in lgrid])
    return partial(tradeoff_from_delta_curve, lgrid, deltas)


def test_fig5_sup_distances_to_g1() -> None:
    f = _fig5_envelope()
    g = gauss(1.0)
    assert f(FIG5_ARGMAX_ALPHA) - g(FIG5_ARGMAX_ALPHA) == pytest.approx(
        FIG5_SUP_F_MINUS_G, rel=1e-10
    )
    alpha_v = float(special.ndtr(-(FIG5_ARGMAX_EPS + 0.5)))  # eps* = Phi^{-1}(1 - a_v) - 1/2
    assert g(alpha_v) - f(alpha_v) == pytest.approx(FIG5_SUP_G_MINUS_F, rel=1e-9)
    grid = np.linspace(0.0, 1.0, 20001)
    grid_sup = sup_distance(f, g, grid)
    assert grid_sup <= FIG5_SUP_F_MINUS_G + 1e-15  # a grid maximum never exceeds the sup
    assert grid_sup == pytest.approx(FIG5_SUP_F_MINUS_G, abs=1e-6)


def test_fig5_profile_round_trip() -> None:
    f = _fig5_envelope()
    # Back to a profile at a non-grid eps: the exact KOV value, to rounding.
    assert delta_from_tradeoff(f, FIG5_EPS_GDP) == pytest.approx(FIG5_DELTA_EXACT, rel=1e-10)
    eps = np.array([0.1, 0.7, 1.5, 2.2, 3.0])
    want = [kov_delta(x, FIG5_EPS0, FIG5_N) for x in eps]
    np.testing.assert_allclose(delta_from_tradeoff(f, eps), want, rtol=1e-10, atol=1e-15)


# --------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------

G1 = gauss(1.0)

BAD_CALLS = [
    ("mu", lambda: gaussian_tradeoff(0.0, 0.5)),
    ("mu", lambda: gaussian_tradeoff(-1.0, 0.5)),
    ("mu", lambda: gaussian_tradeoff(float("nan"), 0.5)),
    ("mu", lambda: gaussian_tradeoff(float("inf"), 0.5)),
    ("alpha", lambda: gaussian_tradeoff(1.0, -0.1)),
    ("alpha", lambda: gaussian_tradeoff(1.0, 1.5)),
    ("alpha", lambda: gaussian_tradeoff(1.0, float("nan"))),
    ("alpha", lambda: gaussian_tradeoff(1.0, [0.2, float("inf")])),
    ("alpha", lambda: gaussian_tradeoff(1.0, [])),
    ("eps", lambda: eps_delta_tradeoff(-1.0, 0.0, 0.5)),
    ("eps", lambda: eps_delta_tradeoff(float("nan"), 0.0, 0.5)),
    ("eps", lambda: eps_delta_tradeoff(float("inf"), 0.0, 0.5)),
    ("delta", lambda: eps_delta_tradeoff(1.0, 1.0, 0.5)),
    ("delta", lambda: eps_delta_tradeoff(1.0, -0.1, 0.5)),
    ("delta", lambda: eps_delta_tradeoff(1.0, float("nan"), 0.5)),
    ("alpha", lambda: eps_delta_tradeoff(1.0, 0.0, 2.0)),
    ("d", lambda: tensor_with_delta(G1, 1.0)),
    ("d", lambda: tensor_with_delta(G1, -0.1)),
    ("d", lambda: tensor_with_delta(G1, float("nan"))),
    ("f", lambda: tensor_with_delta("G", 0.1)),
    ("alpha", lambda: tensor_with_delta(G1, 0.1)(1.5)),
    ("deltas", lambda: compose_delta_parts([0.1, 1.0])),
    ("deltas", lambda: compose_delta_parts([0.1, -1e-3])),
    ("deltas", lambda: compose_delta_parts([])),
    ("deltas", lambda: compose_delta_parts([float("nan")])),
    ("delta_eps", lambda: delta_profile_with_delta_part(1.5, 0.1)),
    ("delta_eps", lambda: delta_profile_with_delta_part(float("nan"), 0.1)),
    ("d", lambda: delta_profile_with_delta_part(0.1, 1.0)),
    ("eps_grid", lambda: tradeoff_from_delta_curve([0.0, 1.0], [0.1], 0.5)),
    ("eps_grid", lambda: tradeoff_from_delta_curve([-1.0], [0.1], 0.5)),
    ("eps_grid", lambda: tradeoff_from_delta_curve([float("inf")], [0.1], 0.5)),
    ("eps_grid", lambda: tradeoff_from_delta_curve([float("nan")], [0.1], 0.5)),
    ("eps_grid", lambda: tradeoff_from_delta_curve(np.ones((2, 2)), np.ones((2, 2)) / 2, 0.5)),
    ("deltas", lambda: tradeoff_from_delta_curve([1.0], [1.5], 0.5)),
    ("deltas", lambda: tradeoff_from_delta_curve([1.0], [float("nan")], 0.5)),
    ("alpha", lambda: tradeoff_from_delta_curve([1.0], [0.1], 2.0)),
    ("eps", lambda: delta_from_tradeoff(G1, -1.0)),
    ("eps", lambda: delta_from_tradeoff(G1, float("nan"))),
    ("eps", lambda: delta_from_tradeoff(G1, [1.0, float("inf")])),
    ("f", lambda: delta_from_tradeoff(None, 1.0)),
    ("f", lambda: delta_from_tradeoff(lambda a: 2.0 * np.ones_like(a), 1.0)),
    ("f", lambda: delta_from_tradeoff(lambda a: 0.5, 1.0)),
    ("grid_size", lambda: delta_from_tradeoff(G1, 1.0, grid_size=2)),
    ("refine_steps", lambda: delta_from_tradeoff(G1, 1.0, refine_steps=-1)),
    ("g", lambda: sup_distance(G1, 3.0, 0.5)),
    ("alpha", lambda: sup_distance(G1, G1, [0.5, -0.5])),
]


@pytest.mark.parametrize(("name", "call"), BAD_CALLS)
def test_bad_input_raises_value_error_naming_parameter(name: str, call) -> None:
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()
