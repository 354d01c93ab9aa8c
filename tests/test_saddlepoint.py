"""Tests of the saddlepoint (tilted-Edgeworth) accountant, numeric.saddlepoint."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from numeric import (
    ApproxDP,
    Gaussian,
    Laplace,
    Mechanism,
    PoissonSubsampledGaussian,
    RandomizedResponse,
    aea_epsilon,
    compose,
    delta_mu,
    epsilon,
    epsilon_mu,
    exact_epsilon,
    pure_dp_delta,
)
from numeric.errors import NotApplicable
from numeric.mechanisms.base import PLLRCumulants
from numeric.saddlepoint import pllr_cgf, saddlepoint_delta, saddlepoint_epsilon
from numeric.tilted_integrals import d_integrals

MECHS = [
    Gaussian(1.3),
    Laplace(2.0),
    Laplace(0.4),
    RandomizedResponse(0.7),
    ApproxDP(0.3, 1e-7),
    PoissonSubsampledGaussian(1.0, 0.01),
    PoissonSubsampledGaussian(0.8, 0.2),
]


# -- exactness for the Gaussian ---------------------------------------------------------------


@pytest.mark.parametrize("eps", [0.0, 0.3, 1.0, 4.0, 12.0])
def test_gaussian_order0_is_exact(eps):
    comp = compose([(Gaussian(2.0), 30)])
    mu = math.sqrt(30) / 2.0
    res = saddlepoint_delta(comp, eps, order=0)
    assert res.delta == pytest.approx(delta_mu(mu, eps), rel=1e-12)
    assert res.estimate is False and res.method == "saddlepoint"


def test_gaussian_epsilon_exact_every_order():
    comp = compose([(Gaussian(1.0), 4)])
    for order in (0, 2):
        res = saddlepoint_epsilon(comp, 1e-5, order=order)
        assert res.epsilon == pytest.approx(epsilon_mu(2.0, 1e-5), rel=1e-11)
        assert not res.warnings


# -- CGF identities ---------------------------------------------------------------------------


@pytest.mark.parametrize("mech", MECHS, ids=repr)
def test_cgf_identities(mech):
    k0, d0 = pllr_cgf(mech, 0.0, 4)
    km1, _ = pllr_cgf(mech, -1.0, 4)
    assert abs(k0) < 1e-14 and abs(km1) < 1e-14  # K_Y(0) = 0, K_Y(-1) = 0
    ref = mech.pllr_cumulants(4).y  # K^(j)(0) = kappa_j(Y)
    for j in range(4):
        assert d0[j] == pytest.approx(ref[j], rel=1e-8, abs=1e-13 * abs(ref[1]) ** ((j + 1) / 2))


@pytest.mark.parametrize("mech", MECHS, ids=repr)
@pytest.mark.parametrize("t", [-0.7, 0.4, 2.5])
def test_cgf_derivatives_match_finite_differences(mech, t):
    h = 1e-4
    k = [pllr_cgf(mech, t + i * h, 4) for i in (-1, 0, 1)]
    fd1 = (k[2][0] - k[0][0]) / (2 * h)
    fd2 = (k[2][1][0] - k[0][1][0]) / (2 * h)
    fd3 = (k[2][1][1] - k[0][1][1]) / (2 * h)
    d = k[1][1]
    scale = abs(d[1]) + 1e-300
    assert fd1 == pytest.approx(d[0], rel=1e-6, abs=1e-7 * scale)
    assert fd2 == pytest.approx(d[1], rel=1e-6, abs=1e-7 * scale)
    assert fd3 == pytest.approx(d[2], rel=1e-5, abs=1e-6 * scale)


def test_laplace_cgf_closed_form():
    mu = 0.8
    for t in (-0.3, 0.0, 1.7):
        s = t + 1.0  # E_P e^{sL}, P = Lap(0, 1), L = |x| - |x - mu|
        m = 0.5 * (math.exp(-s * mu) + math.exp((s - 1) * mu)
                   + (math.exp((s - 1) * mu) - math.exp(-s * mu)) / (2 * s - 1))
        assert pllr_cgf(Laplace(1 / mu), t, 2)[0] == pytest.approx(math.log(m), rel=1e-13)


@pytest.mark.parametrize(("sigma", "rate"), [(0.8, 0.01), (1.0, 0.001), (2.0, 0.3)])
@pytest.mark.parametrize("k", [2, 3, 5, 8])
def test_subsampled_gaussian_cgf_integer_moments(sigma, rate, k):
    mu = 1.0 / sigma
    exact = sum(math.comb(k, j) * (1 - rate) ** (k - j) * rate**j
                * math.exp(j * (j - 1) * mu * mu / 2) for j in range(k + 1))
    got, _ = pllr_cgf(PoissonSubsampledGaussian(sigma, rate), float(k - 1), 2)
    assert got == pytest.approx(math.log(exact), rel=1e-10)


def test_difference_integrals_against_quadrature():
    from scipy import integrate
    from scipy.special import eval_hermitenorm

    for a1, s in [(-1.5, 2.0), (0.0, 0.1), (1.0, 0.7), (2.9, 3.0), (6.0, 0.05), (40.0, 4.0)]:
        ls, d = d_integrals(a1, s, 6)
        for k in range(7):
            f = lambda y, k=k, a1=a1, s=s, ls=ls: ((np.exp(-a1 * y) - np.exp(-(a1 + s) * y))  # noqa: E731
                                * np.exp(-y * y / 2 - ls) / math.sqrt(2 * math.pi)
                                * eval_hermitenorm(k, y))
            ref = integrate.quad(f, 0, 60, limit=400, epsabs=1e-15, epsrel=1e-12)[0]
            assert d[k] == pytest.approx(ref, rel=1e-9, abs=1e-13 * abs(d[0]))


# -- accuracy against exact / reference values ------------------------------------------------


def test_randomized_response_vs_exact():
    comp = compose([(RandomizedResponse(0.01), 10_000)])
    eps = exact_epsilon(comp, 1e-5).epsilon
    assert saddlepoint_epsilon(comp, 1e-5).epsilon == pytest.approx(eps, rel=2e-5)
    for e in (1.0, 3.0):
        ref = pure_dp_delta(0.01, 10_000, e)
        assert saddlepoint_delta(comp, e).delta == pytest.approx(ref, rel=5e-3)


def _laplace_reference_delta(mu: float, m: int, eps: float, n: int = 400) -> float:
    """Q-only delta of m-fold Laplace on a lattice of spacing mu/n (an independent reference).

    One step under Q: atoms at -mu (mass e^-mu/2) and +mu (1/2), density e^{(l - mu)/2}/4 on
    (-mu, mu), binned exactly on the lattice (atoms fall on lattice points); the m-fold law by
    FFT convolution with repeated squaring. Agrees with dp_accounting's PLD to ~1e-8 here.
    """
    from scipy.signal import fftconvolve

    h = mu / n
    one = np.zeros(2 * n + 1)
    one[0] = 0.5 * math.exp(-mu)
    one[-1] = 0.5
    edges = -mu + h * (np.arange(2 * n + 2) - 0.5)
    cdf = lambda x: 0.5 * np.exp((np.clip(x, -mu, mu) - mu) / 2.0)  # noqa: E731
    one += cdf(edges[1:]) - cdf(edges[:-1])
    dist, base, k = np.array([1.0]), one, m
    while k:
        if k & 1:
            dist = fftconvolve(dist, base)
        k >>= 1
        if k:
            base = fftconvolve(base, base)
    s = -m * mu + h * np.arange(dist.size)
    return float(np.sum(np.clip(dist, 0.0, None) * np.clip(-np.expm1(eps - s), 0.0, None)))


def test_laplace_vs_lattice_reference():
    mu, m = 0.2, 200
    comp = compose([(Laplace(1.0 / mu), m)])
    for e in (1.0, 3.0, 6.0):
        ref = _laplace_reference_delta(mu, m, e)
        assert saddlepoint_delta(comp, e).delta == pytest.approx(ref, rel=2e-5)


def test_laplace_vs_pld():
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    mu, m = 0.1, 1000
    ref = pld.from_laplace_mechanism(1 / mu, value_discretization_interval=1e-4)
    ref = ref.self_compose(m).get_epsilon_for_delta(1e-5)
    got = saddlepoint_epsilon(compose([(Laplace(1 / mu), m)]), 1e-5)
    assert got.epsilon == pytest.approx(ref, rel=1e-5)


@pytest.mark.parametrize(("m", "pld"), [(10_000, 6.188), (100_000, 25.573)])
def test_dp_sgd_vs_pld_table(m, pld):
    comp = compose([(PoissonSubsampledGaussian(1.0, 0.01), m)])
    sp = saddlepoint_epsilon(comp, 1e-5)
    aea = aea_epsilon(comp, 1e-5)
    assert abs(sp.epsilon - pld) < 1e-3  # the table is rounded to 1e-3
    assert abs(sp.epsilon - pld) < abs(aea.epsilon - pld)
    assert sp.estimate and sp.direction == "P||Q" and not sp.warnings


def test_dp_sgd_small_m_closer_than_aea_and_flagged():
    comp = compose([(PoissonSubsampledGaussian(1.0, 0.01), 1000)])
    sp = saddlepoint_epsilon(comp, 1e-5)
    assert abs(sp.epsilon - 1.828) < abs(aea_epsilon(comp, 1e-5).epsilon - 1.828)
    assert any("tilted cumulants" in w for w in sp.warnings)


@pytest.mark.parametrize(("rate", "m"), [(0.01, 100), (0.001, 1000), (0.01, 1000)])
def test_diagnostics_fire_for_few_expected_steps(rate, m):
    res = saddlepoint_epsilon(compose([(PoissonSubsampledGaussian(0.8, rate), m)]), 1e-5)
    assert res.warnings
    det = res.details["saddlepoint"]["P||Q"]
    assert abs(det["l3"]) > 0.2 or abs(det["l4"]) > 0.1 or det["order_disagreement"] > 1e-3
    assert {"t", "l3", "l4", "order_disagreement", "roots"} <= set(det)


def test_both_pair_orders_and_approx_dp_delta_part():
    res = saddlepoint_epsilon(compose([(PoissonSubsampledGaussian(1.0, 0.05), 2000)]), 1e-5)
    assert set(res.per_direction) == {"P||Q", "Q||P"}
    assert res.epsilon == max(res.per_direction.values())
    comp = compose([(ApproxDP(0.1, 1e-6), 100)])
    d = saddlepoint_delta(comp, 2.0)
    pure = saddlepoint_delta(compose([(ApproxDP(0.1, 0.0), 100)]), 2.0).delta
    part = -math.expm1(100 * math.log1p(-1e-6))
    assert d.delta == pytest.approx(part + (1 - part) * pure, rel=1e-12)
    assert saddlepoint_epsilon(comp, 1e-5).infinite


def test_vectorized_delta_and_registry():
    comp = compose([(Laplace(1.0), 50)])
    res = saddlepoint_delta(comp, np.array([20.0, 30.0, 100.0]))
    assert res.delta.shape == (3,) and res.delta[2] == 0.0
    assert np.all(np.diff(res.delta) <= 0)
    via = epsilon(comp, 1e-5, method="saddlepoint", order=1)
    assert via.method == "saddlepoint" and via.details["order"] == 1


# -- bad input --------------------------------------------------------------------------------


def test_bad_input_names_parameter():
    comp = compose([(Gaussian(1.0), 3)])
    with pytest.raises(ValueError, match="eps"):
        saddlepoint_delta(comp, -1.0)
    with pytest.raises(ValueError, match="delta"):
        saddlepoint_epsilon(comp, 1.5)
    with pytest.raises(ValueError, match="order"):
        saddlepoint_epsilon(comp, 1e-5, order=9)
    with pytest.raises(ValueError, match="order"):
        saddlepoint_delta(comp, 1.0, order=-1)


@dataclass(frozen=True)
class _NoCGF(Mechanism):
    def _cumulants(self, order: int) -> PLLRCumulants:
        return PLLRCumulants(x=(-0.5,) + (1.0,) * (order - 1), y=(0.5,) + (1.0,) * (order - 1))


def test_mechanism_without_cgf_says_use_aea():
    # a Mechanism subclass without cgf_batch: the saddlepoint does not apply (not bad input)
    assert not _NoCGF().has_cgf and Gaussian(1.0).has_cgf
    with pytest.raises(NotApplicable, match="use aea"):
        saddlepoint_epsilon(compose([(_NoCGF(), 10)]), 1e-5)
    with pytest.raises(NotApplicable, match="use aea"):
        saddlepoint_delta(compose([(Gaussian(1.0), 3), (_NoCGF(), 10)]), 1.0)
    with pytest.raises(NotApplicable, match="no CGF"):
        pllr_cgf(_NoCGF(), 0.0, 2)


@pytest.mark.parametrize("delta", [1e-3, 1e-5])
def test_one_two_point_step_does_not_apply(delta):
    # one (or ten) two-point steps: the tilted law is a point mass at the bracket tilts (K''
    # underflows to 0), so the saddlepoint cannot answer; NotApplicable lets auto fall through
    with pytest.raises(NotApplicable, match="tilted variance"):
        saddlepoint_epsilon(compose([(RandomizedResponse(1.0), 1)]), delta)
    with pytest.raises(NotApplicable, match="tilted variance"):
        epsilon(compose([(RandomizedResponse(1.0), 1)]), delta, method="saddlepoint")
    with pytest.raises(NotApplicable, match="tilted variance"):
        saddlepoint_epsilon(compose([(RandomizedResponse(1.0), 10)]), 1e-5)


@pytest.mark.parametrize("eps0", [36.0, 99.0, 100.0, 800.0, 1e4])
def test_huge_eps0_randomized_response_is_answered_or_does_not_apply(eps0):
    # 1/(1 + e^eps0) is far below rounding (or underflows): no crash, no bad-input error
    for m in (1, 10, 1000):
        comp = compose([(RandomizedResponse(eps0), m)])
        try:
            res = saddlepoint_epsilon(comp, 1e-5)
        except NotApplicable:
            pass
        else:  # delta(eps) ~ 1 - e^{eps - m eps0} below m eps0: the root is at the top
            assert res.epsilon == pytest.approx(m * eps0, rel=1e-6) and res.warnings
        eps = np.array([0.0, 0.5 * eps0, 0.9 * m * eps0, m * eps0, 2.0 * m * eps0])
        try:
            d = saddlepoint_delta(comp, eps)
        except NotApplicable:
            continue
        assert np.all((d.delta >= 0.0) & (d.delta <= 1.0)) and d.delta[-1] == 0.0
        assert d.warnings


def test_failed_factor_at_eps_zero_is_not_a_root():
    # at eps = 0 the tilt is -1/2 and the tilted expansion is evaluated 14 sd out (factor < 0)
    res = saddlepoint_epsilon(compose([(Laplace(1.0), 1000)]), 1e-5)
    assert res.epsilon == pytest.approx(474.303521, rel=1e-5)


@pytest.mark.parametrize(("sigma", "m"), [(0.6, 10), (0.7, 10)])
def test_tiny_rate_times_steps_does_not_crash_and_warns(sigma, m):
    # regression: no grid point above the target used to raise IndexError; then it reported the
    # other pair order's eps (0.0067 at sigma 0.8, certified 0.0615) with a warning; now the
    # broken-down expansion at eps = 0 is a clear NotApplicable (auto answers certified)
    with pytest.raises(NotApplicable, match="cannot tell whether eps = 0"):
        saddlepoint_epsilon([(PoissonSubsampledGaussian(sigma, 0.001), m)], 1e-5)


def test_one_big_step_regime_is_flagged_in_both_orders():
    """Few expected sampled steps (rate * m < 10): the benchmark could not establish accuracy
    there (rate 0.001, sigma 2, m = 100: certified reference +-1.8e-2 wide), so it is flagged."""
    res = saddlepoint_epsilon(compose([(PoissonSubsampledGaussian(2.0, 0.001), 100)]), 1e-5)
    for direction in ("P||Q", "Q||P"):
        assert any(w.startswith(direction) and "few sampled steps" in w for w in res.warnings)
    assert any("few sampled steps" in w for w in res.details["diagnostics"])
    many = saddlepoint_epsilon(compose([(PoissonSubsampledGaussian(1.0, 0.01), 10_000)]), 1e-5)
    assert not any("few sampled steps" in w for w in many.warnings)
    mixed = compose([(PoissonSubsampledGaussian(2.0, 0.001), 100), (Gaussian(10.0), 50)])
    assert not any("few sampled steps" in w for w in saddlepoint_epsilon(mixed, 1e-5).warnings)


def test_eps_near_the_essential_supremum_reports_chernoff_instead_of_raising():
    """Q||P of rate 0.001, m = 1000: S <= -m log(1 - p) = 1.0005, so at eps = 1.0 the saddlepoint
    tilt runs past 1e8; the answer is Chernoff's bound there (tiny), with a diagnostic."""
    comp = compose([(PoissonSubsampledGaussian(2.0, 0.001), 1000)])
    res = saddlepoint_delta(comp, 1.0)
    assert 0.0 <= res.per_direction["Q||P"] <= 1e-300
    assert any(w.startswith("Q||P") and "saturates" in w for w in res.details["diagnostics"])
    assert 0.0 <= res.delta <= 1.0


def test_saddlepoint_imports_neither_methods_nor_auto_nor_certify():
    # the saddlepoint words its "diagnostics fired" note itself (no numeric.methods, no plug-in
    # loading), and its import path needs no scipy submodule besides scipy.special
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from numeric.composition import compose\n"
        "from numeric.mechanisms import PoissonSubsampledGaussian as PSG\n"
        "from numeric.saddlepoint import saddlepoint_epsilon\n"
        "res = saddlepoint_epsilon(compose([(PSG(0.8, 0.01), 100)]), 1e-5)\n"
        "assert res.details['diagnostics'] and 'diagnostics fired' in res.warnings[-1]\n"
        "bad = [m for m in sys.modules if m in ('numeric.methods', 'numeric.auto', 'certify')\n"
        "       or m.startswith(('certify.', 'derive', 'scipy.optimize', 'scipy.stats'))]\n"
        "assert not bad, bad\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_coincident_points_refuse_the_interpolated_step_instead_of_crashing():
    # found by the fuzz: a divided difference over coincident log-delta values raised
    # ZeroDivisionError from the saddlepoint (and from AEA's reliability check of it)
    from numeric import Gaussian, RandomizedResponse

    comp = compose([(RandomizedResponse(571.2113401915404), 34655980886404),
                    (Gaussian(13901.968258878916), 2197)])
    res = saddlepoint_epsilon(comp, 4.370334417137599e-81)
    assert math.isfinite(res.epsilon) and res.epsilon > 0.0
