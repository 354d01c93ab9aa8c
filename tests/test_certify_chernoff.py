"""certify.chernoff: certified Renyi / moment (Chernoff) upper bounds.

Oracles: the exact certified profiles of :mod:`certify.exact` (Gaussian GDP, randomized response
binomial), ``numeric.delta_mu`` / ``numeric.pure_dp_delta``, closed-form moments of the
subsampled Gaussian (E_P[w^2] = 1 + p^2 (e^{mu^2} - 1)), mpmath quadrature, and the PLD values
of DP-SGD recorded in docs/math.md / the issue (dp_accounting, rate 0.01, sigma 1, delta 1e-5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest

pytest.importorskip("flint")
mp = pytest.importorskip("mpmath")

from flint import arb  # noqa: E402

from certify.chernoff import (  # noqa: E402
    chernoff_delta_bound,
    chernoff_epsilon_bound,
    log_mgf,
    sg_power_moment,
)
from certify.combine import certified_delta, certified_epsilon  # noqa: E402
from certify.engine import workprec  # noqa: E402
from certify.exact import exact_delta_bound, exact_epsilon_bound  # noqa: E402
from numeric.gdp import delta_mu  # noqa: E402
from numeric.mechanisms import (  # noqa: E402
    ApproxDP,
    Gaussian,
    Laplace,
    PoissonSubsampledGaussian,
    RandomizedResponse,
)
from numeric.mechanisms.base import Mechanism, symmetric_cumulants  # noqa: E402
from numeric.pure_dp import pure_dp_delta  # noqa: E402

DPSGD = PoissonSubsampledGaussian(1.0, 0.01)
PLD_EPS = {1000: 1.828, 10000: 6.188, 100000: 25.573}  # dp_accounting PLD, delta = 1e-5


# --- delta bounds against known truths -----------------------------------------------------------


@pytest.mark.parametrize(("mu", "eps"), [(1.0, 1.0), (1.0, 3.0), (0.5, 2.0), (2.0, 5.0)])
def test_gaussian_delta_is_valid_and_reasonably_tight(mu, eps):
    b = chernoff_delta_bound(Gaussian(1.0 / mu), eps)
    ex = exact_delta_bound(Gaussian(1.0 / mu), eps)
    assert b.quantity == "delta" and b.lower_mpf == 0 and b.lower_method == "trivial"
    assert b.upper_method.startswith("chernoff[alpha=")
    assert b.upper_mpf >= ex.upper_mpf  # above the certified truth
    ratio = float(b.upper_mpf / ex.upper_mpf)
    assert ratio >= 1.0 and ratio < 10.0, ratio  # measured 1.9 .. 5.9
    assert math.isclose(float(ex.upper_mpf), delta_mu(mu, eps), rel_tol=1e-9)


@pytest.mark.parametrize(("eps0", "n", "eps"), [(0.1, 1000, 2.0), (0.5, 50, 3.0), (1.0, 3, 1.0)])
def test_randomized_response_delta_is_valid(eps0, n, eps):
    comp = [(RandomizedResponse(eps0), n)]
    b = chernoff_delta_bound(comp, eps)
    assert b.upper_mpf >= exact_delta_bound(comp, eps).upper_mpf
    assert float(b.upper_mpf) >= pure_dp_delta(eps0, n, eps) * (1 - 1e-12)


def test_delta_bound_clipped_at_one_and_vacuous():
    b = chernoff_delta_bound([(Gaussian(0.1), 100)], 0.0)
    assert b.upper_mpf == 1 and b.vacuous


def test_approx_dp_delta_part_enters_by_eq13():
    comp = [(ApproxDP(0.2, 1e-6), 100)]
    b = chernoff_delta_bound(comp, 3.0)
    ex = exact_delta_bound(comp, 3.0)
    assert b.upper_mpf >= ex.upper_mpf
    d = -math.expm1(100 * math.log1p(-1e-6))
    assert float(b.upper_mpf) >= d
    assert any("Eq. 13" in a or "Eq. 12-13" in a for a in b.assumptions)


# --- epsilon bounds ------------------------------------------------------------------------------


@pytest.mark.parametrize("m", [1000, 10000, 100000])
def test_dp_sgd_epsilon_above_pld_and_close(m):
    b = chernoff_epsilon_bound([(DPSGD, m)], 1e-5)
    up = float(b.upper_mpf)
    assert b.lower_mpf == 0 and b.lower_method == "trivial"
    assert up >= PLD_EPS[m]
    assert up <= 1.2 * PLD_EPS[m]  # measured 2.1013 / 6.7123 / 27.2310: +15.0%, +8.5%, +6.5%
    assert set(b.inputs["per_direction"]) == {"P||Q", "Q||P"}
    assert b.direction == "P||Q"  # the (P, Q) order wins for DP-SGD here


def test_gaussian_and_rr_epsilon_upper_bounds_exact():
    for comp in ([(Gaussian(2.0), 4)], [(RandomizedResponse(0.1), 1000)]):
        b = chernoff_epsilon_bound(comp, 1e-5)
        ex = exact_epsilon_bound(comp, 1e-5)
        assert b.upper_mpf >= ex.upper_mpf
        assert b.upper_mpf <= 1.5 * ex.upper_mpf


def test_epsilon_infinite_when_delta_part_too_large():
    b = chernoff_epsilon_bound([(ApproxDP(0.5, 1e-3), 10)], 1e-3)
    assert b.vacuous and not b.upper.is_finite
    assert any("vacuous" in w for w in b.warnings)


def test_epsilon_and_delta_bounds_agree():
    # the eps bound at tau inverts the delta bound: delta_bound(eps_bound(tau)) <= tau (approx.)
    comp = [(Laplace(10.0), 1000)]
    e = chernoff_epsilon_bound(comp, 1e-5)
    d = chernoff_delta_bound(comp, float(e.upper_mpf))
    assert float(d.upper_mpf) <= 1e-5 * (1 + 1e-6)


# --- the moment machinery ------------------------------------------------------------------------


def test_subsampled_gaussian_moments():
    sigma, p = 0.8, 0.05
    with workprec(128):
        k2 = log_mgf(PoissonSubsampledGaussian(sigma, p), 2.0)
        mu2 = 1 / arb(sigma) ** 2  # E_P[w^2] = 1 + p^2 (e^{mu^2} - 1)
        assert k2.overlaps((1 + arb(p) ** 2 * mu2.expm1()).log())
        # exact integer sum vs certified quadrature at the same integer order
        for k in (2, 5):
            quad = sg_power_moment(sigma, p, arb(k))
            exact = log_mgf(PoissonSubsampledGaussian(sigma, p), float(k)).exp()
            assert quad.overlaps(exact)
            assert quad.rel_accuracy_bits() > 90
        # the swapped order against mpmath quadrature: E_P[w^{-1.5}]
        v = sg_power_moment(sigma, p, arb(-1.5))
    with mp.workdps(30):
        mu = 1 / mp.mpf(sigma)

        def f(x):
            w = 1 - p + p * mp.exp(mu * x - mu * mu / 2)
            return mp.npdf(x) * w ** mp.mpf(-1.5)

        ref = mp.quad(f, [-mp.inf, 0, mu / 2, mu, mp.inf])
    assert abs(float(v.mid()) - float(ref)) < 1e-20
    q = log_mgf(PoissonSubsampledGaussian(sigma, p), 2.5, "Q||P")
    assert q.overlaps(sg_power_moment(sigma, p, arb(-1.5)).log())


def test_symmetric_cgfs_closed_forms():
    with workprec(128):
        g = log_mgf(Gaussian(2.0), 3.0)  # mu = 1/2: 3 * 2 / 2 / 4 = 0.75
        assert g.overlaps(arb("0.75")) and g.rad() < 1e-30
        lap = log_mgf(Laplace(2.0), 2.0)  # mu = 1/2: 2/3 e^{1/2} + 1/3 e^{-1}
        assert lap.overlaps((arb(2) / 3 * arb("0.5").exp() + arb(-1).exp() / 3).log())
        rr = log_mgf(RandomizedResponse(0.5), 2.0)
        e = arb("0.5")
        assert rr.overlaps(((2 * e).exp() + (-e).exp()).log() - (1 + e.exp()).log())
        assert log_mgf(Laplace(2.0), 2.0, "Q||P").overlaps(lap)


# --- combination ---------------------------------------------------------------------------------


def test_combined_dp_sgd_epsilon_is_finite_at_small_delta():
    b = certified_epsilon([(DPSGD, 10000)], 1e-5)
    assert not b.vacuous and b.upper.is_finite
    assert b.upper_method.startswith(("lattice", "chernoff"))  # the tightest proven upper end
    # PLD_EPS is rounded to 3 decimals (true value ~6.1877): allow the rounding
    assert PLD_EPS[10000] - 5e-4 <= float(b.upper_mpf) <= 1.1 * PLD_EPS[10000]
    assert b.lower_mpf <= PLD_EPS[10000]


@pytest.mark.parametrize("comp", [
    [(Gaussian(1.0), 1)],
    [(Gaussian(3.0), 50)],
    [(RandomizedResponse(0.1), 1000)],
    [(Laplace(10.0), 1000)],
    [(DPSGD, 1000)],
    [(ApproxDP(0.1, 1e-7), 200)],
    [(Gaussian(4.0), 10), (Laplace(20.0), 30)],
])
def test_methods_are_mutually_consistent(comp):
    # combine intersects exact / EEAI / Chernoff and raises if any two are disjoint
    for eps in (0.5, 2.0):
        certified_delta(comp, eps)
    for delta in (1e-3, 1e-6):
        certified_epsilon(comp, delta)


# --- bad input and applicability -----------------------------------------------------------------


@dataclass(frozen=True)
class _Opaque(Mechanism):
    def _cumulants(self, order):
        return symmetric_cumulants([-0.5, 1.0][:order] + [0.0] * max(0, order - 2))


@pytest.mark.parametrize("eps", [-1.0, float("nan"), float("inf"), "abc"])
def test_bad_eps(eps):
    with pytest.raises(ValueError, match="eps"):
        chernoff_delta_bound(Gaussian(1.0), eps)


@pytest.mark.parametrize("delta", [0.0, 1.0, 1.5, -1e-3, float("nan")])
def test_bad_delta(delta):
    with pytest.raises(ValueError, match="delta"):
        chernoff_epsilon_bound(Gaussian(1.0), delta)


def test_unsupported_mechanism_is_not_applicable():
    with pytest.raises(ValueError, match="no certified cumulant generating function") as ei:
        chernoff_delta_bound(_Opaque(), 1.0)
    assert "must" not in str(ei.value)  # combine reads "must" + eps/delta as bad input


def test_log_mgf_bad_order():
    with pytest.raises(ValueError, match="alpha"):
        log_mgf(Gaussian(1.0), 1.0)
    with pytest.raises(ValueError, match="direction"):
        log_mgf(Gaussian(1.0), 2.0, "sideways")


def _sg_one_step_epsilon(sigma: float, rate: float, delta: float) -> mp.mpf:
    """Exact eps(delta) of one Poisson-subsampled Gaussian step in the order Q||P, Q the mixture
    (the other order's delta is 0 above -log(1 - rate)), by mpmath at 40 digits: the hockey
    stick at eps is (1 - p) Phi(-x) + p Phi(mu - x) - e^eps Phi(-x), with x the point where the
    loss log(1 - p + p e^(mu x - mu^2 / 2)) equals eps."""
    with mp.workdps(40):
        mu, p = 1 / mp.mpf(sigma), mp.mpf(rate)

        def hockey(eps):
            x = (mp.log((mp.exp(eps) - (1 - p)) / p) + mu * mu / 2) / mu
            tail = mp.ncdf(-x)
            return (1 - p) * tail + p * mp.ncdf(mu - x) - mp.exp(eps) * tail - mp.mpf(delta)

        lo, hi = mp.mpf(1), mp.mpf(40)  # hockey is decreasing in eps: bisect
        for _ in range(120):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if hockey(mid) > 0 else (lo, mid)
        return hi


def test_chernoff_where_the_full_quadrature_tolerance_gave_up():
    """SG(0.5, 0.5) x 1 at delta 1e-10: with acb.integral's default tolerance (2^-prec) the
    quadrature at the chosen order returned no finite enclosure at any precision
    (ArithmeticError); the Chernoff CGF now asks for 2^-(prec - 48) and certifies a bound, which
    lies above the exact eps (mpmath)."""
    exact = _sg_one_step_epsilon(0.5, 0.5, 1e-10)
    assert 13.3 < exact < 13.4
    b = chernoff_epsilon_bound([(PoissonSubsampledGaussian(0.5, 0.5), 1)], 1e-10)
    assert b.upper.is_finite and b.upper_mpf >= exact
    assert b.upper_mpf < 1.1 * exact  # a Chernoff bound, not vacuous


def test_sg_power_moment_tolerance_is_an_enclosure_and_looser():
    """A coarser quadrature tolerance still encloses the exact integer-order sum, only wider."""
    sigma, p = 0.8, 0.05
    exact = log_mgf(PoissonSubsampledGaussian(sigma, p), 5.0)
    with workprec(128):
        full = sg_power_moment(sigma, p, arb(5))
        loose = sg_power_moment(sigma, p, arb(5), 80)
        assert loose.overlaps(exact.exp()) and full.overlaps(exact.exp())
        assert 70 <= loose.rel_accuracy_bits() < full.rel_accuracy_bits()


def test_chernoff_builds_each_float_rule_once(monkeypatch):
    """300 distinct noise levels (more than the shared cache's 256 rules): each step's float
    rule is built once per pair order, not once per order tried (with the shared cache alone,
    1000 levels rebuilt every rule at every step of the order search: 16 s of 27)."""
    import certify.mechanisms.subsampled_gaussian as sg

    built = []
    real = sg._float_grid

    def counting(mu, rate):
        built.append((mu, rate))
        return real(mu, rate)

    monkeypatch.setattr(sg, "_float_grid", counting)
    comp = [(PoissonSubsampledGaussian(0.8 + 1.2 * i / 299, 0.01), 1) for i in range(300)]
    b = chernoff_epsilon_bound(comp, 1e-5)
    assert b.upper.is_finite and b.upper_mpf > 0
    assert len(built) <= 2 * 300
