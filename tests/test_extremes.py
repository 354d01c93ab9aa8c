"""Extreme parameter ranges (issue 12): small sigma for the subsampled Gaussian, huge step
counts, tiny delta, and clean CLI output at the extremes."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_derive_cli_short_timeout_keeps_stderr_clean():
    """`edgeworth derive laplace --order 2 --timeout 1e-9`: the quadrature fallback is reported on
    stdout ("warning:" lines), not as a Python warning with a file path on stderr (issue 12)."""
    pytest.importorskip("sympy")
    code = ("import sys; from numeric.cli import main; "
            "sys.exit(main(['derive', 'laplace', '--order', '2', '--timeout', '1e-9']))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "warning: some cumulants were computed by mpmath quadrature" in proc.stdout
    # Laplace pair, closed form E_P[L] = -(mu - 1 + e^{-mu}) = -e^{-1} at mu = 1
    assert "kappa_1: X = -0.367879441171442" in proc.stdout


# --------------------------------------------------------------------------------------------
# item 2: aea-ea overflow cases from the fuzz (fixed in numeric/aea.py, numeric/edgeworth.py)


def test_aea_ea_tiny_sigma_huge_steps_refuses_cleanly():
    """Gaussian sigma 0.00146 x 1.8e14 steps at delta 9e-127: once a plain ValueError from a NaN
    (exp overflow); now a NotApplicable naming the cancellation."""
    from numeric import Gaussian, NotApplicable, compose, epsilon

    with pytest.raises(NotApplicable, match="aea-ea"):
        epsilon(compose([(Gaussian(sigma=0.00146), 180_000_000_000_000)]), 9e-127,
                method="aea-ea")


def test_aea_ea_rr_and_gaussian_no_zero_division():
    """Once ZeroDivisionError. The RR part dominates: its loss is the point mass m eps0
    tanh(eps0 / 2) = m eps0 in floats (closed form), so eps is m eps0 up to the Gaussian part."""
    from numeric import Gaussian, RandomizedResponse, compose, epsilon

    eps0, m = 571.2113401915404, 34655980886404
    res = epsilon(compose([(RandomizedResponse(eps=eps0), m),
                           (Gaussian(sigma=13901.968258878916), 2197)]),
                  4.370334417137599e-81, method="aea-ea")
    assert res.estimate and res.warnings
    assert res.epsilon == pytest.approx(m * eps0, rel=1e-6)


# --------------------------------------------------------------------------------------------
# item 1: the subsampled Gaussian at small sigma


def _mp_sg_cumulants(sigma, rate, under_q):
    """Oracle: kappa_1..4 of L under P or Q by mpmath quadrature at 40 digits, split at the
    kink of L and around 0 and mu; central moments through g = L - log(1-p) =
    log1p(p e^u/(1-p)) (no cancellation)."""
    mp = pytest.importorskip("mpmath")
    with mp.workdps(40):
        mu, p = 1 / mp.mpf(sigma), mp.mpf(rate)

        def g(x):
            return mp.log1p(p / (1 - p) * mp.exp(mu * x - mu * mu / 2))

        def phi(x):
            return mp.exp(-x * x / 2) / mp.sqrt(2 * mp.pi)

        def dens(x):
            return (1 - p) * phi(x) + p * phi(x - mu) if under_q else phi(x)

        kink = mu / 2 + mp.log((1 - p) / p) / mu
        pts = sorted({mp.mpf(-12), mp.mpf(0), kink - 3 / mu, kink, kink + 3 / mu, mu - 12, mu,
                      mu + 12})
        pts = [-mp.inf, *pts, mp.inf]
        eg = mp.quad(lambda x: g(x) * dens(x), pts)
        c2, c3, c4 = (mp.quad(lambda x, k=k: (g(x) - eg) ** k * dens(x), pts) for k in (2, 3, 4))
        return [float(mp.log1p(-p) + eg), float(c2), float(c3), float(c4 - 3 * c2 * c2)]


@pytest.mark.parametrize("sigma,rate", [pytest.param(0.05, 0.01, marks=pytest.mark.slow),
                                        (0.01, 0.01)])
def test_sg_cumulants_small_sigma_against_mpmath(sigma, rate):
    """Numeric quadrature cumulants vs mpmath at 40 digits. Under Q every cumulant to 1e-13
    relative; under P the mean to 1e-13 and the higher cumulants to 1e-12 relative at sigma 0.05,
    and at sigma 0.01 (true values ~1e-545, below the float range) exactly 0 -- no rounding noise
    (they were ~1e-34 before: L - mean cancelled)."""
    from numeric import PoissonSubsampledGaussian

    c = PoissonSubsampledGaussian(sigma=sigma, rate=rate).pllr_cumulants(4)
    oy = _mp_sg_cumulants(sigma, rate, True)
    assert list(c.y) == pytest.approx(oy, rel=1e-13)
    ox = _mp_sg_cumulants(sigma, rate, False)
    assert c.x[0] == pytest.approx(ox[0], rel=1e-13)
    if sigma >= 0.05:
        assert list(c.x[1:]) == pytest.approx(ox[1:], rel=1e-12)
    else:
        assert all(abs(v) < 1e-300 for v in ox[1:])
        assert list(c.x[1:]) == [0.0, 0.0, 0.0]


def _mp_delta_one_step(sigma, rate, eps):
    """Oracle: delta(eps) of one subsampled-Gaussian step (order P||Q, the larger at small
    sigma) in mpmath at 50 digits: (1 - p - e^eps) Phibar(x) + p Phibar(x - mu),
    x = (log((e^eps - 1 + p)/p) + mu^2/2)/mu (Zhu, Dong, Wang 2022)."""
    import mpmath as mp

    with mp.workdps(50):
        mu, p, e = 1 / mp.mpf(sigma), mp.mpf(rate), mp.mpf(eps)
        x = (mp.log((mp.exp(e) - 1 + p) / p) + mu * mu / 2) / mu
        sf = lambda z: mp.erfc(z / mp.sqrt(2)) / 2  # noqa: E731
        return (1 - p - mp.exp(e)) * sf(x) + p * sf(x - mu)


def _mp_reveal_upper(sigma, rate, m, eps):
    """Oracle for the revealed-sampling bound's exact value: sum_K Bin(m, p)(K) delta_G(eps;
    mu sqrt K) over all K, mpmath at 80 digits (a true upper bound on delta(eps))."""
    import mpmath as mp

    with mp.workdps(80):
        mu, p, e = 1 / mp.mpf(sigma), mp.mpf(rate), mp.mpf(eps)
        sf = lambda z: mp.erfc(z / mp.sqrt(2)) / 2  # noqa: E731
        total = mp.mpf(0)
        for k in range(1, m + 1):
            s = mu * mp.sqrt(k)
            total += mp.binomial(m, k) * p**k * (1 - p) ** (m - k) * (
                sf(e / s - s / 2) - mp.exp(e) * sf(e / s + s / 2))
        return total


def test_reveal_one_step_contains_exact_delta():
    """m = 1: the reveal enclosure of delta(eps) contains the exact one-step delta (mpmath)."""
    pytest.importorskip("flint")
    from certify.mechanisms.subsampled_gaussian_reveal import reveal_delta_bound
    from numeric import PoissonSubsampledGaussian, compose

    for sigma, rate, eps in [(0.001, 0.01, 4.9e5), (0.01, 0.3, 4000.0), (0.04, 0.5, 300.0)]:
        b = reveal_delta_bound(compose([(PoissonSubsampledGaussian(sigma=sigma, rate=rate), 1)]),
                               eps)
        exact = _mp_delta_one_step(sigma, rate, eps)
        assert b.lower_mpf <= exact <= b.upper_mpf
        assert exact > 0


@pytest.mark.parametrize("sigma,rate,m,eps", [(0.001, 0.01, 300, 4.0e6), (0.01, 0.05, 60, 3e4)])
def test_reveal_delta_against_mpmath(sigma, rate, m, eps):
    """The certified upper end is >= the bound's exact value (mpmath, all K summed) and within
    1e-9 of it (the lumped ends are negligible); the lower end is a true lower bound, so below
    it, and positive (informative)."""
    pytest.importorskip("flint")
    from certify.mechanisms.subsampled_gaussian_reveal import reveal_delta_bound
    from numeric import PoissonSubsampledGaussian, compose

    b = reveal_delta_bound(compose([(PoissonSubsampledGaussian(sigma=sigma, rate=rate), m)]),
                           eps)
    ref = _mp_reveal_upper(sigma, rate, m, eps)
    assert ref <= b.upper_mpf <= ref * (1 + 1e-9)
    assert 0 < b.lower_mpf <= ref


def test_reveal_epsilon_small_sigma_is_tight_and_consistent():
    """sigma 1e-3, rate 0.01, 1000 steps, delta 1e-5: a certified interval under 1% wide; its
    upper end satisfies the mpmath upper-bound sum (delta_upper(eps_hi) <= delta); the Chernoff
    bound (a different certified method) lies above its lower end."""
    pytest.importorskip("flint")
    from certify.chernoff import chernoff_epsilon_bound
    from certify.mechanisms.subsampled_gaussian_reveal import reveal_epsilon_bound
    from numeric import PoissonSubsampledGaussian, compose

    comp = compose([(PoissonSubsampledGaussian(sigma=0.001, rate=0.01), 1000)])
    b = reveal_epsilon_bound(comp, 1e-5)
    lo, hi = float(b.lower_mpf), float(b.upper_mpf)
    assert 0 < lo < hi < lo * 1.01
    ch = chernoff_epsilon_bound(comp, 1e-5)
    assert float(ch.upper_mpf) >= lo


def test_chernoff_small_sigma_integer_order_against_mpmath():
    """The Chernoff bound at sigma 0.01 (beyond the certified quadrature) uses the exact integer
    order sums: at alpha = 2, eps <= m log E_P[w^2] + log c(1) + log(1/delta) with
    E_P[w^2] = (1-p)^2 + 2p(1-p) + p^2 e^{mu^2} (Mironov, Talwar, Zhang 2019), mpmath here."""
    pytest.importorskip("flint")
    import mpmath as mp

    from certify.chernoff import chernoff_epsilon_bound
    from numeric import PoissonSubsampledGaussian, compose

    sigma, p, m, delta = 0.01, 0.01, 100, 1e-5
    b = chernoff_epsilon_bound(compose([(PoissonSubsampledGaussian(sigma=sigma, rate=p), m)]),
                               delta)
    assert b.upper_method == "chernoff[alpha=2]"
    with mp.workdps(80):
        mu2, q = 1 / mp.mpf(sigma) ** 2, mp.mpf(p)
        lam = m * mp.log((1 - q) ** 2 + 2 * q * (1 - q) + q**2 * mp.exp(mu2))
        ref = lam + (-mp.log(2) - mp.log(2)) + mp.log(1 / mp.mpf(delta))  # log c(1) = -2 log 2
    assert ref <= b.upper_mpf <= ref * (1 + 1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("sigma,rate,m,delta", [(0.001, 0.01, 1000, 1e-5),
                                                (0.001, 1e-6, 1000, 1e-300)])
def test_auto_answers_certified_at_sigma_1e3(sigma, rate, m, delta):
    """auto answers sigma = 1e-3 with a certified enclosure (it raised BudgetExceeded)."""
    pytest.importorskip("flint")
    from numeric import PoissonSubsampledGaussian, compose, epsilon

    res = epsilon(compose([(PoissonSubsampledGaussian(sigma=sigma, rate=rate), m)]), delta)
    assert res.certified and res.method == "certified"
    assert 0 < float(res.lower) <= res.epsilon < float("inf")


# --------------------------------------------------------------------------------------------
# item 4: found on the extreme grid (numeric/aea.py belongs to helper "aea")


def _mp_threshold_lower_delta(sigma, rate, m, eps, c):
    """A proven lower bound on delta(eps) of m subsampled-Gaussian steps (order P||Q), mpmath at
    50 digits: the test A = {max_i x_i > c} has P^m(A) <= m Phibar(c) (union bound) and
    Q^m(A) = 1 - (1 - r)^m with r >= p Phibar(c - mu), and delta(eps) >= Q^m(A) - e^eps P^m(A)."""
    import mpmath as mp

    with mp.workdps(50):
        mu, p = 1 / mp.mpf(sigma), mp.mpf(rate)
        sf = lambda z: mp.erfc(z / mp.sqrt(2)) / 2  # noqa: E731
        r = p * sf(mp.mpf(c) - mu)
        return -mp.expm1(m * mp.log1p(-r)) - mp.exp(eps) * m * sf(mp.mpf(c))


@pytest.mark.parametrize("method", ["aea", "aea-ea"])
def test_aea_tiny_rate_tiny_delta_warns_or_is_right(method):
    from numeric import PoissonSubsampledGaussian, compose, epsilon

    sigma, rate, m, delta = 1.0, 1e-9, 10**6, 1e-300
    assert _mp_threshold_lower_delta(sigma, rate, m, 14.0, 37.7) > delta  # eps(delta) >= 14
    res = epsilon(compose([(PoissonSubsampledGaussian(sigma=sigma, rate=rate), m)]), delta,
                  method=method)
    assert res.warnings or res.epsilon >= 14.0 * 0.99


def test_gdp_epsilon_is_a_python_float():
    """gdp returned np.float64 for a Gaussian with sigma 0.01 at delta 0.5 (found on the grid).
    Value: the Gaussian mechanism's exact eps(delta) with mu = 100; at delta = 1/2 it solves
    Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) = 1/2, i.e. eps = mu^2/2 - O(mu^2 e^{-...}):
    mpmath root, 30 digits."""
    import mpmath as mp

    from numeric import Gaussian, compose, epsilon

    res = epsilon(compose([(Gaussian(sigma=0.01), 1)]), 0.5, method="gdp")
    assert type(res.epsilon) is float
    with mp.workdps(30):
        mu = mp.mpf(100)
        f = lambda e: mp.ncdf(mu / 2 - e / mu) - mp.exp(e) * mp.ncdf(-mu / 2 - e / mu) - 0.5  # noqa: E731
        ref = mp.findroot(f, 4999)
    assert res.epsilon == pytest.approx(float(ref), rel=1e-9)


def test_aea_order_6_with_huge_cumulants_refuses_clearly():
    """Fuzz finding (seed 4242): the order-6 series coefficients overflowed (l4**2) for a
    subsampled Gaussian at sigma 0.0154, rate 1.6e-7, 8.1e14 steps: a bare OverflowError. Now
    NotApplicable (a ValueError) naming the order, so auto and the CLI handle it."""
    from numeric import PoissonSubsampledGaussian, compose, epsilon
    from numeric.errors import NotApplicable

    comp = compose([(PoissonSubsampledGaussian(sigma=0.01536883696820773,
                                               rate=1.5997904890379704e-07), 814018069515959)])
    with pytest.raises(NotApplicable, match="order-6 Edgeworth series overflows"):
        epsilon(comp, 1.201084761397831e-10, method="aea", order=6)
