"""Contract tests for every built-in mechanism, and cumulants against independent oracles.

Oracles: docs/math.md section 4 closed forms evaluated with mpmath at 50 digits (Laplace, randomized
response), docs/math.md check values (subsampled Gaussian, s = 0.8, p = 0.01, computed
independently by the maintainers), mpmath quadrature at 30 digits, and the exact integer moments of
the likelihood ratio E_P[e^{kL}] = sum_j C(k,j) (1-p)^{k-j} p^j e^{j(j-1) mu^2/2}.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from numeric.errors import NotApplicable
from numeric.mechanisms import (
    MECHANISMS,
    ApproxDP,
    Gaussian,
    Laplace,
    PoissonSubsampledGaussian,
    RandomizedResponse,
)
from numeric.mechanisms.subsampled_gaussian import _rule, subsampled_gaussian_pllr

ALL_MECHANISMS = [
    Gaussian(1.0),
    Gaussian(3.0, sensitivity=2.0),
    Laplace(2.0),
    Laplace(1e3),
    RandomizedResponse(0.5),
    RandomizedResponse(3.0),
    ApproxDP(0.1, 1e-6),
    PoissonSubsampledGaussian(0.8, 0.01),
    PoissonSubsampledGaussian(2.0, 0.001),
    PoissonSubsampledGaussian(0.5, 0.3),
]


@pytest.mark.parametrize("mech", ALL_MECHANISMS, ids=repr)
def test_contract(mech):
    c = mech.pllr_cumulants(4)
    assert c.order == 4
    assert c.x[0] <= 0.0 <= c.y[0]  # kappa1(X) = -KL(P||Q) <= 0 <= KL(Q||P)
    assert c.x[1] > 0.0 and c.y[1] > 0.0
    # prefix consistency across orders
    c2 = mech.pllr_cumulants(2)
    np.testing.assert_allclose(c2.x, c.x[:2], rtol=1e-12)
    # swapping twice is the identity; the swap exchanges X <-> -Y
    assert c.swapped().swapped() == c
    s = c.swapped()
    np.testing.assert_allclose(s.x, [(-1) ** (k + 1) * v for k, v in enumerate(c.y)])
    if mech.symmetric:
        np.testing.assert_allclose(c.y, [(-1) ** (k + 1) * v for k, v in enumerate(c.x)],
                                   rtol=1e-12)
    assert mech.clt_mu_squared() > 0.0
    with pytest.raises(ValueError, match="order"):
        mech.pllr_cumulants(0)


def _mp_laplace(mu):
    mu = mp.mpf(mu)
    e = mp.exp
    k1 = 1 - mu - e(-mu)
    k2 = 3 - 4 * mu * e(-mu) - 2 * e(-mu) - e(-2 * mu)
    k3 = 2 * e(-3 * mu) * (7 * e(3 * mu) - 3 * (2 * mu**2 + 2 * mu + 1) * e(2 * mu)
                           - 3 * (2 * mu + 1) * e(mu) - 1)
    k4 = 2 * e(-4 * mu) * (45 * e(4 * mu) - 4 * (4 * mu**3 + 6 * mu**2 + 6 * mu + 3) * e(3 * mu)
                           - 6 * (8 * mu**2 + 8 * mu + 3) * e(2 * mu) - 12 * (2 * mu + 1) * e(mu)
                           - 3)
    return [float(k1), float(k2), float(k3), float(k4)]


def test_laplace_check_values():
    # docs/math.md section 4: kappa(X) at mu = 0.5
    c = Laplace(2.0).pllr_cumulants(4)
    np.testing.assert_allclose(c.x, [-0.1065306597, 0.2059979200, 0.0412264900, -0.0712012547],
                               rtol=1e-8)


@pytest.mark.parametrize("mu", [1e-4, 1e-3, 0.05, 0.3, 1.0, 2.5, 8.0, 30.0])
def test_laplace_closed_forms_all_mu(mu):
    with mp.workdps(60):
        ref = _mp_laplace(mu)
    got = Laplace(1.0 / mu).pllr_cumulants(4).x
    np.testing.assert_allclose(got, ref, rtol=1e-9)


@pytest.mark.parametrize("eps0", [1e-3, 0.1, 1.0, 5.0])
def test_randomized_response_closed_forms(eps0):
    with mp.workdps(50):
        e = mp.mpf(eps0)
        a = 1 / (1 + mp.exp(e))
        ref = [-e * mp.tanh(e / 2), 4 * e**2 * a * (1 - a), 8 * e**3 * a * (1 - a) * (1 - 2 * a),
               16 * e**4 * a * (1 - a) * (1 - 6 * a * (1 - a))]
    got = RandomizedResponse(eps0).pllr_cumulants(4).x
    np.testing.assert_allclose(got, [float(v) for v in ref], rtol=1e-12)


def test_subsampled_gaussian_check_values():
    # docs/math.md section 4 check values (s = 0.8, p = 0.01)
    c = PoissonSubsampledGaussian(0.8, 0.01).pllr_cumulants(4)
    np.testing.assert_allclose(c.x, [-1.6716530e-4, 3.1710468e-4, 4.7076684e-5, 1.6198168e-5],
                               rtol=1e-6)
    np.testing.assert_allclose(c.y, [1.7665254e-4, 3.7427977e-4, 6.9811751e-5, 3.1728216e-5],
                               rtol=1e-6)


def test_subsampled_gaussian_against_mpmath_quadrature():
    sigma, p = 1.0, 0.05
    with mp.workdps(30):
        mu = mp.mpf(1) / sigma
        pp = mp.mpf(p)

        def L(x):
            return mp.log(1 - pp + pp * mp.exp(mu * x - mu**2 / 2))

        def phi(x):
            return mp.npdf(x)

        def moment(k, mean):
            return mp.quad(lambda x: (L(x) - mean) ** k * phi(x), [-mp.inf, 0, mu, mp.inf])

        m1 = mp.quad(lambda x: L(x) * phi(x), [-mp.inf, 0, mu, mp.inf])
        mu2, mu3, mu4 = (moment(k, m1) for k in (2, 3, 4))
        ref = [m1, mu2, mu3, mu4 - 3 * mu2**2]
    got = PoissonSubsampledGaussian(sigma, p).pllr_cumulants(4).x
    np.testing.assert_allclose(got, [float(v) for v in ref], rtol=1e-10)


@pytest.mark.parametrize(("sigma", "p"), [(0.8, 0.01), (0.5, 0.2), (2.0, 0.001), (0.3, 0.05)])
def test_subsampled_gaussian_quadrature_identities(sigma, p):
    """The rule reproduces K_X(1) = 0 (E_P e^L = 1) and the exact integer moments of e^L."""
    mu = 1.0 / sigma
    x, w = _rule(mu, 24)
    wp = w * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    L = subsampled_gaussian_pllr(x, mu, p)
    assert float(np.dot(wp, np.exp(L))) == pytest.approx(1.0, rel=1e-13)
    for k in (2, 3, 4):
        exact = sum(math.comb(k, j) * (1 - p) ** (k - j) * p**j * math.exp(j * (j - 1) * mu**2 / 2)
                    for j in range(k + 1))
        assert float(np.dot(wp, np.exp(k * L))) == pytest.approx(exact, rel=1e-12)


def test_subsampled_gaussian_rate_one_is_gaussian():
    c = PoissonSubsampledGaussian(1.5, 1.0).pllr_cumulants(4)
    g = Gaussian(1.5).pllr_cumulants(4)
    np.testing.assert_allclose(c.x, g.x, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(c.y, g.y, rtol=1e-12, atol=1e-15)


def test_subsampled_gaussian_is_asymmetric():
    c = PoissonSubsampledGaussian(0.8, 0.01).pllr_cumulants(3)
    assert not PoissonSubsampledGaussian.symmetric
    assert c.y[0] != pytest.approx(-c.x[0], rel=1e-3)


def test_mechanisms_are_frozen_and_hashable():
    g = Gaussian(1.0)
    with pytest.raises(AttributeError):
        g.sigma = 2.0
    assert hash(g) == hash(Gaussian(1.0))


def test_integer_like_inputs_are_floats():
    assert Gaussian(2).sigma == 2.0 and isinstance(Gaussian(2).sigma, float)


# -- the CGF contract, for every registered mechanism ------------------------------------------

# representative parameters (spec keys) per registry name; a built-in mechanism added without
# an entry here fails test_cgf_contract until it gets one
# every registered mechanism, at the representative parameters its registration declares
_CASES = [(name, params) for name in sorted(MECHANISMS)
          for params in (MECHANISMS[name].examples or [None])]


def _close(a: float, b: float, rel: float, scale: float = 0.0) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b), scale)


@pytest.mark.parametrize(("name", "params"), _CASES, ids=lambda v: str(v))
def test_cgf_contract(name, params):
    entry = MECHANISMS[name]
    if params is None:
        assert not entry.cls.__module__.startswith("numeric."), (
            f"declare examples= in the registration of the built-in mechanism {name!r}")
        pytest.skip(f"{name!r} is registered by another package")
    mech = entry.build(params)
    c = mech.pllr_cumulants(2)
    sup, inf = mech.pllr_sup(), mech.pllr_inf()
    # the essential range of L brackets both means: inf <= kappa_1(X) <= 0 <= kappa_1(Y) <= sup
    assert inf <= c.x[0] <= 0.0 <= c.y[0] <= sup
    if mech.symmetric:
        assert inf == -sup
    rate = mech.poisson_rate
    assert rate is None or 0.0 < rate < 1.0
    if not mech.has_cgf:
        with pytest.raises(NotApplicable, match="use aea"):
            mech.cgf_batch(np.array([0.0]), 2)
        return
    t = np.array([-1.0, 0.0, -0.5, 1.0])
    k, d = mech.cgf_batch(t, 4)
    assert k.shape == (4,) and d.shape == (4, 4)
    # K_Y(-1) = log E_P 1 = 0 and K_Y(0) = 0
    assert abs(k[0]) <= 1e-12 and abs(k[1]) <= 1e-12
    # K_Y'(0) = kappa_1(Y), K_Y''(0) = kappa_2(Y); K_X(t) = K_Y(t - 1): K_Y^(j)(-1) = kappa_j(X)
    for j in (0, 1):
        assert _close(d[1, j], c.y[j], 1e-9, 1e-12 * c.y[1]), (j, d[1, j], c.y[j])
        assert _close(d[0, j], c.x[j], 1e-9, 1e-12 * c.x[1]), (j, d[0, j], c.x[j])
    assert np.all(d[:, 1] > 0.0)  # a convex CGF (a non-degenerate tilted law)
    # the batch agrees with one tilt at a time (the form numeric.cgf.pllr_cgf uses)
    for i, ti in enumerate(t):
        k1, d1 = mech.cgf_batch(np.array([ti]), 4)
        assert _close(k1[0], k[i], 1e-12, 1e-3)  # K(-1), K(0) are rounding-level zeros
        np.testing.assert_allclose(d1[0], d[i], rtol=1e-10, atol=1e-12 * d[i, 1])
    # the tilted mean K' stays within the essential range of L
    assert np.all(d[:, 0] <= sup) and np.all(d[:, 0] >= inf)
