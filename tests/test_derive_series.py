"""derive.series: Edgeworth series of any order, its generated numeric code, and the AEA at order r.

Oracles: exact Gaussian moment algebra (E[Z^p] = (p-1)!! for even p) applied to the derived density
polynomial, sympy's own integration, Petrov's explicit partition sum, docs/math.md section 3
(order-2 formula and the PLD reference eps 25.573 / 1.828 at delta = 1e-5), the exact GDP profile
for Gaussian compositions, and mpmath quadrature of the derived density for the Q-only delta.
"""

from __future__ import annotations

import ast
import itertools
import math
import re

import pytest

sp = pytest.importorskip("sympy")

import mpmath as mp  # noqa: E402
import numpy as np  # noqa: E402

from derive.codegen import (  # noqa: E402
    EDGEWORTH_SERIES_PATH,
    SERIES_MAX_ORDER,
    render_edgeworth_series,
    strict_pycode,
)
from derive.series import (  # noqa: E402
    Z,
    edgeworth_cdf_expr,
    edgeworth_density_coefficients,
    edgeworth_density_expr,
    edgeworth_term,
    lambda_symbol,
    petrov_term,
    q_only_delta_expr,
)
from numeric import (  # noqa: E402
    Gaussian,
    PoissonSubsampledGaussian,
    aea_delta,
    aea_epsilon,
    compose,
    delta_mu,
    epsilon_mu,
)
from numeric._generated import edgeworth_series as gen  # noqa: E402
from numeric.edgeworth import SERIES_ORDERS, cumulants_needed, q_only_delta  # noqa: E402

L3, L4 = lambda_symbol(3), lambda_symbol(4)


# --- the symbolic series -----------------------------------------------------------------------


def _gauss_moment(p: int) -> int:
    """E[Z^p] for Z ~ N(0, 1): (p - 1)!! for even p, else 0."""
    return 0 if p % 2 else math.prod(range(p - 1, 0, -2))


def _cumulants_of_density(order: int, n: int) -> list:
    """kappa_1..kappa_n of the derived density, by exact integration against phi.

    g(z)/phi(z) is a polynomial sum_m a_m z^m, so E_g[Z^j] = sum_m a_m E[Z^(j+m)] exactly; moments
    go to cumulants by kappa_j = m_j - sum_{i<j} C(j-1, i-1) kappa_i m_(j-i).
    """
    poly = sp.Poly(sp.expand(sp.simplify(edgeworth_density_expr(order) / sp.exp(-Z**2 / 2))
                             * sp.sqrt(2 * sp.pi)), Z)
    terms = poly.terms()
    mom = [sp.expand(sum(c * _gauss_moment(j + m[0]) for m, c in terms)) for j in range(n + 1)]
    assert sp.expand(mom[0] - 1) == 0, "the density does not integrate to 1"
    kap = [sp.Integer(0)]
    for j in range(1, n + 1):
        kap.append(sp.expand(mom[j] - sum(math.comb(j - 1, i - 1) * kap[i] * mom[j - i]
                                          for i in range(1, j))))
    return kap[1:]


@pytest.mark.parametrize("order", [1, 2, 3, 4, 5])
def test_density_integrates_to_one_and_reproduces_cumulants(order):
    kap = _cumulants_of_density(order, order + 2)
    expected = [0, 1] + [lambda_symbol(j) for j in range(3, order + 3)]
    for j, (got, want) in enumerate(zip(kap, expected, strict=True), start=1):
        assert sp.expand(got - want) == 0, (order, j, got)


def test_truncation_error_is_the_first_missing_term():
    # Order 2 drops P_3 = lambda_5 x^5/120 + lambda_3 lambda_4 x^7/144 + ...; with lambda_j = 0 for
    # j >= 5, log(1 + P_1 + P_2) = A - lambda_3 lambda_4 x^7/144 + O(x^8): kappa_5 = kappa_6 = 0 and
    # kappa_7 = -7!/144 lambda_3 lambda_4 = -35 lambda_3 lambda_4.
    kap = _cumulants_of_density(2, 7)
    assert sp.expand(kap[4]) == 0 and sp.expand(kap[5]) == 0
    assert sp.expand(kap[6] + 35 * L3 * L4) == 0


@pytest.mark.parametrize("order", [1, 2, 3])
def test_density_integrates_to_one_sympy(order):
    total = sp.integrate(sp.expand(edgeworth_density_expr(order)), (Z, -sp.oo, sp.oo))
    assert sp.simplify(total - 1) == 0


@pytest.mark.parametrize("nu", range(1, 9))
def test_recurrence_equals_petrov_partition_sum(nu):
    a, b = edgeworth_term(nu), petrov_term(nu)
    assert set(a) == set(b)
    assert all(sp.expand(a[k] - b[k]) == 0 for k in a)
    assert set(a) == set(range(nu + 2, 3 * nu + 1, 2))  # He_{nu+2}, ..., He_{3 nu}


def test_orders_1_and_2_equal_math_md():
    z = Z
    phi = sp.exp(-z**2 / 2) / sp.sqrt(2 * sp.pi)
    Phi = (1 + sp.erf(z / sp.sqrt(2))) / 2
    he2, he3, he5 = z**2 - 1, z**3 - 3 * z, z**5 - 10 * z**3 + 15 * z
    first = Phi - phi * (L3 / 6 * he2)
    second = Phi - phi * (L3 / 6 * he2 + L4 / 24 * he3 + L3**2 / 72 * he5)
    assert sp.simplify(edgeworth_cdf_expr(1) - first) == 0
    assert sp.simplify(edgeworth_cdf_expr(2) - second) == 0
    assert edgeworth_density_coefficients(2) == {3: L3 / 6, 4: L4 / 24, 6: L3**2 / 72}
    assert edgeworth_density_coefficients(0) == {}


def test_cdf_is_integral_of_density():
    for order in (2, 4):
        diff = sp.diff(edgeworth_cdf_expr(order), Z) - edgeworth_density_expr(order)
        assert sp.simplify(sp.expand(diff)) == 0


def test_bad_order_rejected():
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="order"):
            edgeworth_density_coefficients(bad)
    with pytest.raises(ValueError, match="order 3"):
        lambda_symbol(2)


# --- Q-only delta: symbolic closed form vs numeric and quadrature -------------------------------

LAM = {3: 0.21, 4: -0.13, 5: 0.07, 6: 0.05, 7: -0.02, 8: 0.015}


@pytest.mark.parametrize(("order", "z0", "sigma"), [(3, 0.4, 0.7), (5, 2.5, 3.0), (6, -1.0, 1.5)])
def test_q_only_delta_expr_matches_numeric_and_quadrature(order, z0, sigma):
    z0s, ss = sp.Symbol("z0", real=True), sp.Symbol("sigma", positive=True)
    expr = q_only_delta_expr(order, z0s, ss)
    subs = {lambda_symbol(j): sp.Rational(LAM[j]) for j in range(3, order + 3)}
    subs |= {z0s: sp.Rational(z0), ss: sp.Rational(sigma)}
    sym = float(expr.evalf(30, subs=subs))
    got, _ = q_only_delta(np.array([z0]), sigma, gen.ORDERS[order][1](LAM))
    dens = sp.lambdify(Z, edgeworth_density_expr(order).xreplace(subs), "mpmath")
    with mp.workdps(30):
        ref = mp.quad(lambda z: (1 - mp.exp(-sigma * (z - z0))) * dens(z),
                      [z0, z0 + 4, z0 + 12, mp.inf])
    assert sym == pytest.approx(float(ref), rel=1e-12)
    assert float(got[0]) == pytest.approx(sym, rel=1e-11)


# --- generated code -----------------------------------------------------------------------------


def _exact(expr, lam):
    return expr.xreplace({lambda_symbol(j): sp.Rational(v) for j, v in lam.items()})


@pytest.mark.parametrize("order", range(1, SERIES_MAX_ORDER + 1))
def test_generated_coefficients_equal_sympy(order):
    rng = np.random.default_rng(order)
    coeffs = edgeworth_density_coefficients(order)
    need, fn = gen.ORDERS[order]
    assert need == order + 2
    for _ in range(20):
        draws = rng.uniform(-1.5, 1.5, need - 2)
        lam = {j: float(v) for j, v in zip(range(3, need + 1), draws, strict=True)}
        got = fn(lam)
        assert set(got) == set(coeffs)
        for k, c in coeffs.items():
            exact = _exact(c, lam)
            # all monomial coefficients are positive: c(|lambda|) bounds the rounding scale
            scale = float(_exact(c, {j: abs(v) for j, v in lam.items()}))
            assert abs(got[k] - float(exact)) <= 1e-14 * scale, (order, k)
            if all(v > 0 for v in lam.values()):
                assert got[k] == pytest.approx(float(exact), rel=1e-14)
        lam_pos = {j: abs(v) for j, v in lam.items()}
        for k, v in fn(lam_pos).items():
            assert v == pytest.approx(float(_exact(coeffs[k], lam_pos)), rel=1e-14)


def test_generated_orders_agree_with_handwritten_and_are_registered():
    rng = np.random.default_rng(7)
    for _ in range(20):
        lam = {j: float(v) for j, v in zip(range(3, 9), rng.uniform(-1, 1, 6), strict=True)}
        for order in (1, 2):
            hand, generated = SERIES_ORDERS[order][1](lam), gen.ORDERS[order][1](lam)
            assert set(hand) == set(generated)
            for k in hand:
                assert generated[k] == pytest.approx(hand[k], rel=1e-15, abs=0.0)
    for order in range(3, SERIES_MAX_ORDER + 1):
        assert SERIES_ORDERS[order] == gen.ORDERS[order]
        assert cumulants_needed(order) == order + 2
    assert sorted(SERIES_ORDERS) == list(range(SERIES_MAX_ORDER + 1))


def test_generated_module_is_plain_python():
    tree = ast.parse(EDGEWORTH_SERIES_PATH.read_text(encoding="utf-8"))
    imported = {n.module if isinstance(n, ast.ImportFrom) else a.name
                for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)
                for a in n.names}
    assert imported <= {"__future__", "collections.abc"}, imported


def test_strict_printer_refuses_non_polynomials():
    x = sp.Symbol("x")
    assert strict_pycode(x**2 / 72 + 3 * x) in {"3*x + x**2/72", "x**2/72 + 3*x"}
    for bad in (sp.Integral(x, x), sp.Float(0.5) * x, sp.sqrt(x), 1 / x, sp.exp(x)):
        with pytest.raises(TypeError, match="strict printer"):
            strict_pycode(bad)


def test_generated_file_is_fresh():
    text = EDGEWORTH_SERIES_PATH.read_bytes()
    head = text.decode("utf-8").splitlines()[:3]
    assert head[0].startswith("# Generated by derive.codegen") and "DO NOT EDIT" in head[0]
    assert head[1] == "# Regenerate with: python -m derive.codegen"
    match = re.fullmatch(r"# sympy version: (\S+)", head[2])
    assert match, head[2]
    if match.group(1) != sp.__version__:
        pytest.skip(
            f"{EDGEWORTH_SERIES_PATH.name} was generated with sympy {match.group(1)} but sympy "
            f"{sp.__version__} is installed; its printing may differ, so the byte-for-byte "
            f"freshness check only runs under sympy {match.group(1)}"
        )
    assert render_edgeworth_series().encode("utf-8") == text, (
        "numeric/_generated/edgeworth_series.py is stale: run python -m derive.codegen"
    )


# --- the AEA at higher orders through numeric ---------------------------------------------------

SGD = PoissonSubsampledGaussian
ORDERS_AEA = range(2, 7)


@pytest.fixture(scope="module")
def sgd_eps():
    """eps at delta = 1e-5 for s = 1, p = 0.01, by order; docs/math.md PLD: 25.573 (1e5),
    1.828 (1e3)."""
    return {m: {r: aea_epsilon([(SGD(1.0, 0.01), m)], 1e-5, order=r).epsilon
                for r in ORDERS_AEA} for m in (1_000, 100_000)}


def test_aea_higher_orders_converge_to_pld_m1e5(sgd_eps):
    eps = sgd_eps[100_000]
    assert abs(eps[2] - 25.572) <= 5e-4, eps  # docs/math.md table, order 2
    for r in range(3, 7):
        assert abs(eps[r] - 25.573) <= 5e-4, eps  # agrees with PLD to its 3 printed decimals
    steps = [abs(eps[r + 1] - eps[r]) for r in range(2, 6)]
    assert all(b < a for a, b in itertools.pairwise(steps)), (steps, eps)
    assert steps[-1] < 1e-6, eps


def test_aea_higher_orders_closer_to_pld_m1e3(sgd_eps):
    eps = sgd_eps[1_000]
    err = {r: abs(e - 1.828) for r, e in eps.items()}
    assert all(err[r] < err[2] for r in range(3, 7)), eps
    assert all(err[r] < 5e-3 for r in range(4, 7)), eps


@pytest.mark.parametrize("order", range(0, SERIES_MAX_ORDER + 1))
def test_gaussian_composition_stays_exact(order):
    comp = compose([(Gaussian(2.0), 3), (Gaussian(1.0, sensitivity=0.5), 5)])
    mu = math.sqrt(3 * 0.25 + 5 * 0.25)
    eps = np.array([0.0, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0])
    got = aea_delta(comp, eps, order=order)
    np.testing.assert_allclose(got.delta, delta_mu(mu, eps), rtol=1e-12)
    assert aea_epsilon(comp, 1e-5, order=order).epsilon == pytest.approx(
        epsilon_mu(mu, 1e-5), rel=1e-12)
