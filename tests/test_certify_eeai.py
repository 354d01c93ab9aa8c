"""certify.moments and certify.eeai: certified PLLR moments and the EEAI enclosures.

Oracles (all independent of the code under test):

* closed forms evaluated in mpmath at 50 digits (Gaussian, randomized response, the Laplace
  cumulant formulas of docs/math.md section 4) and mpmath quadrature (absolute moments);
* docs/math.md section 4 check values (Laplace mu = 0.5; subsampled Gaussian s = 0.8, p = 0.01);
* the DGG reference values of ``shared/reference/dgg_bound_reference.csv`` (the authors' R
  package BoundEdgeworth), copied below;
* exact privacy profiles: GDP (Gaussian compositions, mpmath), the binomial (KOV) sum for
  randomized response (mpmath), and an exact mixture formula for heterogeneous
  randomized-response-plus-Gaussian compositions.
"""

from __future__ import annotations

import json
import math

import pytest

pytest.importorskip("flint")
mp = pytest.importorskip("mpmath")

from flint import arb, ctx  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from certify.eeai import (  # noqa: E402
    METHODS,
    characteristic_kappa,
    delta_interval,
    dgg_continuity_bound_iid,
    dgg_moment_bound,
    epsilon_interval,
    first_order_q_delta,
    summed_moments,
)
from certify.engine import workprec  # noqa: E402
from certify.moments import continuous_parts, pllr_moments  # noqa: E402
from numeric import compose  # noqa: E402
from numeric.aea import aea_epsilon  # noqa: E402
from numeric.edgeworth import q_only_delta  # noqa: E402
from numeric.mechanisms import (  # noqa: E402
    ApproxDP,
    Gaussian,
    Laplace,
    PoissonSubsampledGaussian,
    RandomizedResponse,
)
from numeric.pure_dp import pure_dp_epsilon  # noqa: E402

SGD = PoissonSubsampledGaussian
FAST = settings(max_examples=30, deadline=None)


def _mp_ball(x: mp.mpf) -> arb:
    with workprec(256):  # parse the decimal at a precision above the enclosures'
        return arb(mp.nstr(x, 60, strip_zeros=False))


def _encloses(ball: arb, value: mp.mpf) -> bool:
    """The Arb ball contains the 50-digit mpmath value (itself a ~1e-50 ball)."""
    return ball.contains(_mp_ball(value))


def _rounds_to(x: float, text: str) -> bool:
    """x rounds to the printed decimal ``text`` (half a unit in its last digit)."""
    mant = text.lower().split("e")[0]
    exp = int(text.lower().split("e")[1]) if "e" in text.lower() else 0
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    return abs(x - float(text)) <= 0.5 * 10.0 ** (exp - decimals) * (1 + 1e-9)


# --- moments ---------------------------------------------------------------------------------


def test_gaussian_moments_exact():
    with mp.workdps(50):
        m = pllr_moments(Gaussian(2.0))  # mu = 1/2
        x, y = m.x, m.y
        assert x.kappa1.contains(arb(-0.125)) and y.kappa1.contains(arb(0.125))
        assert x.kappa2.contains(arb(0.25)) and x.kappa3.is_zero() and x.kappa4.is_zero()
        s2p = mp.sqrt(2 / mp.pi)
        assert _encloses(x.abs1, mp.mpf(0.5) * s2p)
        assert _encloses(y.abs3, 2 * mp.mpf(0.125) * s2p)
        assert _encloses(x.mu4, mp.mpf(3) / 16)


def test_laplace_moments_math_md_and_closed_forms():
    m = pllr_moments(Laplace(2.0))  # mu = 0.5
    check = ("-0.1065306597", "0.2059979200", "0.0412264900", "-0.0712012547")  # docs/math.md s4
    got = (m.x.kappa1, m.x.kappa2, m.x.kappa3, m.x.kappa4)
    for ball, ref in zip(got, check, strict=True):
        assert _rounds_to(float(ball.mid()), ref), (ball, ref)
        assert ball.rad() < 1e-30
    with mp.workdps(50):
        u = mp.mpf("0.5")
        e = mp.exp(-u)
        forms = (
            1 - u - e,
            3 - 4 * u * e - 2 * e - e**2,
            2 * mp.exp(-3 * u) * (7 * mp.exp(3 * u) - 3 * (2 * u**2 + 2 * u + 1) * mp.exp(2 * u)
                                  - 3 * (2 * u + 1) * mp.exp(u) - 1),
            2 * mp.exp(-4 * u) * (45 * mp.exp(4 * u)
                                  - 4 * (4 * u**3 + 6 * u**2 + 6 * u + 3) * mp.exp(3 * u)
                                  - 6 * (8 * u**2 + 8 * u + 3) * mp.exp(2 * u)
                                  - 12 * (2 * u + 1) * mp.exp(u) - 3),
        )
        for ball, ref in zip(got, forms, strict=True):
            assert _encloses(ball, ref)
        # symmetric pair: Y =d -X
        assert _encloses(m.y.kappa3, -forms[2]) and _encloses(m.y.kappa1, -forms[0])
    with mp.workdps(30):
        mean = 1 - u - e
        c = 1 - e
        for k, ball in ((1, m.x.abs1), (3, m.x.abs3)):
            cont = mp.quad(lambda t, k=k: abs(2 * t - c) ** k * mp.exp(-t) / 2, [0, c / 2, u])
            ref = abs(-u - mean) ** k / 2 + e / 2 * (u - mean) ** k + cont
            assert abs(float(ball.mid()) - float(ref)) < 1e-25 and ball.rad() < 1e-30


def test_two_point_moments_exact():
    eps0 = 0.7
    m = pllr_moments(RandomizedResponse(eps0))
    with mp.workdps(50):
        e0 = mp.mpf(eps0)
        a = 1 / (1 + mp.exp(e0))
        mean = -e0 * mp.tanh(e0 / 2)
        up, down = e0 - mean, -e0 - mean
        mu = {k: a * up**k + (1 - a) * down**k for k in (2, 3, 4)}
        assert _encloses(m.x.kappa1, mean)
        assert _encloses(m.x.kappa2, mu[2])
        assert _encloses(m.x.kappa3, mu[3])
        assert _encloses(m.x.kappa4, mu[4] - 3 * mu[2] ** 2)
        assert _encloses(m.x.abs3, a * abs(up) ** 3 + (1 - a) * abs(down) ** 3)
        assert _encloses(m.y.kappa3, -mu[3])
    assert pllr_moments(ApproxDP(0.0, 1e-3)).y.degenerate


def test_subsampled_gaussian_moments():
    m = pllr_moments(SGD(0.8, 0.01))
    # docs/math.md section 4 check values (X then Y)
    check_x = ("-1.6716530e-4", "3.1710468e-4", "4.7076684e-5", "1.6198168e-5")
    check_y = ("1.7665254e-4", "3.7427977e-4", "6.9811751e-5", "3.1728216e-5")
    for law, check in ((m.x, check_x), (m.y, check_y)):
        got = (law.kappa1, law.kappa2, law.kappa3, law.kappa4)
        for ball, ref in zip(got, check, strict=True):
            assert _rounds_to(float(ball.mid()), ref), (ball, ref)
            assert ball.rad() < 1e-25 * abs(float(ball.mid()))
    # the float layer agrees
    num = SGD(0.8, 0.01).pllr_cumulants(4)
    for law, vals in ((m.x, num.x), (m.y, num.y)):
        for ball, v in zip((law.kappa1, law.kappa2, law.kappa3, law.kappa4), vals, strict=True):
            assert abs(float(ball.mid()) - v) <= 1e-9 * abs(v)
    # absolute central moments against an independent mpmath quadrature (split at L = mean)
    with mp.workdps(30):
        mu, p = 1 / mp.mpf(0.8), mp.mpf(0.01)

        def pllr(t):
            return mp.log(1 - p + p * mp.exp(mu * t - mu**2 / 2))

        for law, weight in ((m.x, mp.npdf),
                            (m.y, lambda t: (1 - p) * mp.npdf(t) + p * mp.npdf(t - mu))):
            mean = mp.mpf(float(law.kappa1.mid()))
            xc = (mp.log((mp.exp(mean) - 1 + p) / p) + mu**2 / 2) / mu
            for k, ball in ((1, law.abs1), (3, law.abs3)):
                ref = mp.quad(lambda t, k=k, w=weight, mean=mean: abs(pllr(t) - mean) ** k * w(t),
                              [-mp.inf, xc, 4, mp.inf])
                assert abs(float(ball.mid()) / float(ref) - 1) < 1e-12
    # the swap (Q, P) has X' = -Y, Y' = -X
    sw = m.for_direction("Q||P")
    assert sw.y.kappa1.overlaps(-m.x.kappa1) and sw.x.abs3.overlaps(m.y.abs3)


def test_continuous_parts_and_kappa():
    assert continuous_parts(RandomizedResponse(0.5)) is None  # lattice: no certificate
    lap = continuous_parts(Laplace(2.0))
    (f0, length), = lap.x
    assert f0 * length <= 0.5 * math.exp(-0.5) * 0.5 + 1e-15  # alpha = mu e^-mu / 2
    comp = compose([(SGD(0.8, 0.01), 10_000)])
    with workprec(128):
        kap, desc = characteristic_kappa(summed_moments(comp, "P||Q"))
    assert kap < 1 and "continuous component" in desc
    with workprec(128):
        assert characteristic_kappa(summed_moments(compose([(RandomizedResponse(0.3), 100)]),
                                                   "P||Q")) is None


# --- DGG reference values ----------------------------------------------------------------------

# Copied from shared/reference/dgg_bound_reference.csv (authors' reference implementation, R
# package BoundEdgeworth; K4 = 9, eps = 0.1, package defaults K3 = K4^(3/4), |lambda3| =
# 0.621 K3, K3tilde = K3 + 1 (iid) or 2 K3 (non-iid)). Columns: continuity, iid, no_skewness, n,
# regularity (kappa), bound. The non-i.i.d. continuity rows (C0 = 1, p = 2) are not used: that
# variant is not implemented (its condition is not certified for any mechanism).
DGG_ROWS = [
    (0, 0, 0, 100, None, "0.9071327056"),
    (0, 0, 0, 1000, None, "0.1462589347"),
    (0, 0, 1, 100, None, "0.3978963377"),
    (0, 0, 1, 1000, None, "0.07573076589"),
    (0, 1, 0, 100, None, "0.5056493439"),
    (0, 1, 0, 1000, None, "0.1626857058"),
    (0, 1, 1, 100, None, "0.2213642495"),
    (0, 1, 1, 1000, None, "0.05733747835"),
    (1, 1, 0, 100, "0.99", "1.452321476"),
    (1, 1, 0, 1000, "0.99", "0.1214038476"),
    (1, 1, 1, 100, "0.99", "1.056677552"),
    (1, 1, 1, 1000, "0.99", "0.01070798"),
]


def _package_defaults(iid: bool) -> tuple[arb, arb, arb, arb]:
    k4 = arb(9)
    k3 = k4.root(4) ** 3
    return k4, k3, (k3 + 1 if iid else 2 * k3), arb("0.621") * k3


@pytest.mark.parametrize(("cont", "iid", "noskew", "n", "kappa", "ref"), DGG_ROWS)
def test_dgg_reference_rows(cont, iid, noskew, n, kappa, ref):
    with workprec(128):
        k4, k3, k3t, lam = _package_defaults(bool(iid))
        if cont:
            val = dgg_continuity_bound_iid(n, k4, k3, k3t, lam, arb(kappa), skewed=not noskew)
        else:
            val = dgg_moment_bound(n, k4, k3, k3t, lam, iid=bool(iid), skewed=not noskew)
    assert val.rad() < 1e-30
    assert _rounds_to(float(val.mid()), ref), (float(val.mid()), ref)


def test_dgg_reference_extra_values():
    # shared/reference/README.md: K4 = 3.5, K3 = 1.7, lambda3 = 0.3, K3tilde = 2.7, n = 1000,
    # i.i.d., no continuity, skewed -> 0.04513010107; Berry-Esseen variant (i.i.d., skewed,
    # n = 1000, K4 = 9) -> 0.1694704316 = bound + |lambda3| phi(0) / (6 sqrt n).
    with workprec(128):
        v = dgg_moment_bound(1000, "3.5", "1.7", "2.7", "0.3", iid=True)
        assert _rounds_to(float(v.mid()), "0.04513010107")
        k4, k3, k3t, lam = _package_defaults(True)
        be = (dgg_moment_bound(1000, k4, k3, k3t, lam, iid=True)
              + lam / (6 * arb(1000).sqrt() * (2 * arb.pi()).sqrt()))
        assert _rounds_to(float(be.mid()), "0.1694704316")


# --- the centre ----------------------------------------------------------------------------------


@pytest.mark.parametrize("term", [(Laplace(2.0), 200), (SGD(0.8, 0.01), 10_000),
                                  (RandomizedResponse(0.2), 300)])
def test_first_order_centre_matches_numeric(term):
    comp = compose([term])
    _, ky = comp.cumulants(3)
    k1, sigma = ky[0], math.sqrt(ky[1])
    with workprec(128):
        s = summed_moments(comp, "P||Q")
        for z in (-1.0, 0.0, 1.5, 4.0):
            eps = max(0.0, k1 + sigma * z)
            want, _ = q_only_delta((eps - k1) / sigma, sigma, {3: ky[2] / ky[1] ** 1.5 / 6})
            got = first_order_q_delta(s.k1, s.k2, s.k3, arb(eps))
            assert abs(float(got.mid()) - float(want)) <= 1e-9 * abs(float(want)) + 1e-15


# --- soundness against exact profiles ----------------------------------------------------------


def _gdp_delta(mu2: mp.mpf, eps: mp.mpf) -> mp.mpf:
    mu = mp.sqrt(mu2)
    return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2)


def _rr_pmf_q(eps0: float, n: int) -> list[tuple[mp.mpf, mp.mpf]]:
    """(value, Q-probability) of a sum of n randomized-response PLLRs (Y = +eps0 w.p. e/(1+e))."""
    e0 = mp.mpf(eps0)
    q = mp.exp(e0) / (1 + mp.exp(e0))
    return [((2 * j - n) * e0, mp.binomial(n, j) * q**j * (1 - q) ** (n - j))
            for j in range(n + 1)]


def _rr_delta(eps0: float, n: int, eps: float) -> mp.mpf:
    return mp.fsum(pr * max(mp.mpf(0), 1 - mp.exp(mp.mpf(eps) - s))
                   for s, pr in _rr_pmf_q(eps0, n))


@FAST
@given(sigma=st.floats(0.05, 50.0), count=st.integers(1, 10**6), eps=st.floats(0.0, 60.0),
       methods=st.sampled_from([None, ("berry-esseen",), ("dgg",), ("dgg-cf",)]))
def test_gaussian_delta_sound(sigma, count, eps, methods):
    b = delta_interval(compose([(Gaussian(sigma), count)]), eps, methods=methods)
    with mp.workdps(60):
        truth = _gdp_delta(count / mp.mpf(sigma) ** 2, mp.mpf(eps))
        assert b.contains(truth)
    if methods is None:  # exact-normal: D = 0, the enclosure is a tight ball
        assert b.upper_method == "eeai[exact-normal]"
        assert b.width() <= 1e-30 * max(float(truth), 1e-300) + 1e-300


def _gdp_epsilon(mu2: mp.mpf, delta: mp.mpf) -> tuple[mp.mpf, mp.mpf]:
    """A bracket [lo, hi] of width ~1e-30 (relative) around the exact GDP eps(delta)."""
    lo, hi = mp.mpf(0), mp.mpf(1)
    while _gdp_delta(mu2, hi) > delta:
        hi *= 2
    if _gdp_delta(mu2, lo) <= delta:
        return lo, lo
    for _ in range(400):  # bisection on the decreasing GDP profile
        if hi - lo < mp.mpf(10) ** -30 * hi:
            break
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _gdp_delta(mu2, mid) <= delta else (mid, hi)
    return lo, hi


@FAST
@given(sigma=st.floats(0.1, 20.0), count=st.integers(1, 1000), delta=st.floats(1e-12, 0.9))
def test_gaussian_epsilon_sound(sigma, count, delta):
    b = epsilon_interval(compose([(Gaussian(sigma), count)]), delta)
    with mp.workdps(40):
        lo, hi = _gdp_epsilon(count / mp.mpf(sigma) ** 2, mp.mpf(delta))
        assert b.contains(lo) and b.contains(hi)
    assert b.width() <= 1e-9 * max(1.0, float(hi))


@pytest.mark.parametrize(("count", "delta"), [(10**12, 1e-6), (10**15, 1e-6), (10**15, 0.5)])
def test_gaussian_extreme_counts(count, delta):
    # sigma = sqrt(K2) ~ 3e7: Arb's erfc of an inexact ball this far out loses all accuracy, so
    # the centre must evaluate erfc at exact endpoints (regression test)
    b = epsilon_interval(compose([(Gaussian(1.0), count)]), delta)
    with mp.workdps(40):
        lo, hi = _gdp_epsilon(mp.mpf(count), mp.mpf(delta))
        assert b.contains(lo) and b.contains(hi)
    assert b.width() <= 1e-9 * float(hi)


@FAST
@given(eps0=st.floats(1e-3, 2.0), n=st.integers(1, 600), eps=st.floats(0.0, 8.0))
def test_randomized_response_delta_sound(eps0, n, eps):
    b = delta_interval(compose([(RandomizedResponse(eps0), n)]), eps)
    with mp.workdps(50):
        assert b.contains(_rr_delta(eps0, n, eps))


@FAST
@given(eps0=st.floats(0.02, 0.5), n=st.integers(20, 400), delta=st.floats(1e-3, 0.3))
def test_randomized_response_epsilon_sound(eps0, n, delta):
    b = epsilon_interval(compose([(RandomizedResponse(eps0), n)]), delta)
    truth = pure_dp_epsilon(eps0, n, delta)  # exact KOV profile (float root, ~1e-12 accurate)
    assert float(b.lower_mpf) <= truth + 1e-9
    assert truth <= float(b.upper_mpf) + 1e-9


@FAST
@given(eps0=st.floats(0.02, 0.5), n=st.integers(1, 100), d0=st.floats(0.0, 1e-3),
       eps=st.floats(0.0, 3.0))
def test_approx_dp_delta_part_sound(eps0, n, d0, eps):
    b = delta_interval(compose([(ApproxDP(eps0, d0), n)]), eps)
    with mp.workdps(50):
        d = -mp.expm1(n * mp.log1p(-mp.mpf(d0)))  # GDP Eq. 12
        assert b.contains(d + (1 - d) * _rr_delta(eps0, n, eps))  # GDP Eq. 13


@FAST
@given(a=st.floats(0.05, 0.4), b=st.floats(0.05, 0.4), n1=st.integers(1, 25),
       n2=st.integers(1, 10), sigma=st.floats(1.0, 6.0), eps=st.floats(0.0, 3.0))
def test_heterogeneous_delta_sound(a, b, n1, n2, sigma, eps):
    # S_Y = RR sums + N(mu^2/2, mu^2): E_Q[(1 - e^(eps - s - G))_+] is the GDP hockey stick at
    # eps - s, valid for every real threshold.
    comp = compose([(RandomizedResponse(a), n1), (RandomizedResponse(b), n2), (Gaussian(sigma), 3)])
    got = delta_interval(comp, eps)
    assert "non-i.i.d." in " ".join(got.assumptions) or got.upper_method == "eeai[dgg]"
    with mp.workdps(40):
        mu2 = 3 / mp.mpf(sigma) ** 2
        truth = mp.fsum(p1 * p2 * _gdp_delta(mu2, mp.mpf(eps) - s1 - s2)
                        for s1, p1 in _rr_pmf_q(a, n1) for s2, p2 in _rr_pmf_q(b, n2))
        assert got.contains(truth)


@FAST
@given(term=st.sampled_from([(Laplace(2.0), 300), (RandomizedResponse(0.3), 200),
                             (Laplace(5.0), 1000)]),
       e1=st.floats(0.0, 20.0), gap=st.floats(0.01, 10.0))
def test_delta_intervals_monotone_consistent(term, e1, gap):
    # the true delta is non-increasing: delta(e2) <= delta(e1), so lower(e2) <= upper(e1)
    comp = compose([term])
    b1, b2 = delta_interval(comp, e1), delta_interval(comp, e1 + gap)
    assert b2.lower_mpf <= b1.upper_mpf


def test_trivial_and_infeasible():
    comp = compose([(ApproxDP(0.0, 1e-3), 10)])
    b = delta_interval(comp, 0.5)
    with mp.workdps(50):
        assert b.contains(-mp.expm1(10 * mp.log1p(-mp.mpf(1e-3))))
    assert b.width() < 1e-30
    e = epsilon_interval(comp, 0.5)
    assert e.lower_mpf == 0 and e.upper_mpf == 0
    e = epsilon_interval(compose([(ApproxDP(0.1, 1e-4), 500)]), 0.04)  # below the delta part
    assert e.vacuous and not e.lower.is_finite and any("delta part" in w for w in e.warnings)


# --- EA settings, honesty, provenance ----------------------------------------------------------


def test_ea_setting_widths():
    # EA setting sigma = 0.8, rate = 0.01, delta = 0.015. Measured (this code, 128 bits):
    # m = 5e4 vacuous (Berry-Esseen D = 0.018 > delta); 1e5 [28.59, 34.47] (Berry-Esseen);
    # 5e5 [116.58, 117.89] and 1e6 [217.50, 218.11] (DGG with certified kappa < 1).
    mech = SGD(0.8, 0.01)
    widths = {}
    for m in (50_000, 100_000, 500_000, 1_000_000):
        b = epsilon_interval(compose([(mech, m)]), 0.015)
        widths[m] = b.width()
        if m == 50_000:
            assert b.vacuous and any("vacuous" in w for w in b.warnings)
            continue
        assert not b.vacuous and b.lower_mpf > 0
        # sanity (not a proof): the Edgeworth estimate lies inside the certified interval
        assert b.contains(aea_epsilon(compose([(mech, m)]), 0.015, order=2).epsilon)
    assert widths[100_000] < 7.0 and widths[500_000] < 1.5 and widths[1_000_000] < 0.7
    assert widths[1_000_000] < widths[500_000] < widths[100_000]


def test_dp_sgd_small_delta_is_vacuous():
    comp = compose([(SGD(1.0, 0.01), 10_000)])
    b = epsilon_interval(comp, 1e-5)
    assert b.vacuous and not b.upper.is_finite
    assert any("vacuous" in w and "1e-05" in w for w in b.warnings)
    assert b.lower_mpf <= 6.188  # docs/math.md: PLD reference eps = 6.188 (the lower end is sound)
    assert b.direction in ("P||Q", "Q||P")
    d = b.to_dict()
    assert d["upper"] is None and d["upper_infinite"] and d["vacuous"]
    json.dumps(d)


def test_delta_interval_vacuous_flag_and_provenance():
    b = delta_interval(compose([(RandomizedResponse(1.0), 3)]), 0.0)
    assert b.vacuous and any("vacuous" in w for w in b.warnings)
    b = delta_interval(compose([(SGD(0.8, 0.01), 200_000)]), 60.0)
    text = " ".join(b.assumptions)
    assert "i.i.d." in text and b.upper_method.startswith("eeai[")
    assert "0.4748" in text or "0.33554" in text or "DGG" in text
    assert "subsampled Gaussian tails" in text  # the quadrature tail bounds are recorded
    assert set(b.inputs["uniform_error"]) == {"P||Q", "Q||P"}
    assert b.direction in b.inputs["uniform_error"]
    assert 0 <= b.lower_mpf <= b.upper_mpf < 1


def test_methods_validation_and_precision_restored():
    with pytest.raises(ValueError, match="unknown"):
        delta_interval(compose([(Gaussian(1.0), 2)]), 1.0, methods=("bogus",))
    with pytest.raises(ValueError):
        epsilon_interval(compose([(Gaussian(1.0), 2)]), 1.5)
    before = ctx.prec
    delta_interval(compose([(Laplace(1.0), 10)]), 1.0)
    assert ctx.prec == before
    assert set(METHODS) == {"exact-normal", "berry-esseen", "dgg", "dgg-cf"}
