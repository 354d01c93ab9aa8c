"""certify.exact_binomial: the windowed exact binomial profile (randomized response / approx-DP).

Oracles (independent of the code under test):

* n <= ~1e4: the *full* KOV binomial sum (Kairouz, Oh, Viswanath, ICML 2015, Thm 3.3) in mpmath at
  60 digits, every one of the n + 1 terms, no window, no truncation; eps(delta) by scanning the
  lattice segments and inverting ``delta = A_c - e^eps B_c`` in closed form.
* n = 1e6 .. 1e7: the float exact method ``numeric.exact`` (log-space Loader binomial, a
  different algorithm), which agrees to ~1e-12 relative; the certified width must be <= 1e-10.
* eps0 = 1e3, 1e4 at n = 1, 2, 3: the closed forms of the KOV sum for one, two and three steps.

The windowed engine normally starts above n = 1e5; here ``WINDOW_FROM`` is set to 0 so that it
runs at small n against the full-sum oracle (``monkeypatch``).
"""

from __future__ import annotations

import functools
from fractions import Fraction

import pytest

pytest.importorskip("flint")
mpmath = pytest.importorskip("mpmath")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import certify.exact_binomial as eb  # noqa: E402
from certify.exact import exact_delta_bound, exact_epsilon_bound, pure_dp  # noqa: E402
from certify.exact_binomial import WindowedBinomialProfile, pure_profile  # noqa: E402
from certify.exact_model import RationalExp, as_real  # noqa: E402
from certify.exact_profiles import PureProfile  # noqa: E402
from numeric import ApproxDP, RandomizedResponse, exact_delta, exact_epsilon  # noqa: E402
from numeric.errors import NotApplicable  # noqa: E402

DPS = 60


@pytest.fixture
def windowed(monkeypatch):
    """Route every homogeneous pure-DP composition through the windowed engine."""
    monkeypatch.setattr(eb, "WINDOW_FROM", 0)


@functools.lru_cache(maxsize=8)
def _masses(eps0, n):
    """Full list of Q_j = C(n, j) q^j (1-q)^(n-j) in mpmath (ratio recurrence at DPS digits)."""
    with mpmath.workdps(DPS):
        e0 = mpmath.mpf(eps0)
        t = mpmath.exp(e0)
        q = [(1 / (1 + t)) ** n]
        for j in range(n):
            q.append(q[-1] * t * (n - j) / (j + 1))
        return e0, tuple(q)


def mp_delta(eps0, n, eps):
    """delta(eps) = sum_{s_j > eps} Q_j (1 - e^{eps - s_j}), all n + 1 terms."""
    with mpmath.workdps(DPS):
        e0, q = _masses(eps0, n)
        e = mpmath.mpf(eps)
        total = mpmath.mpf(0)
        for j, qj in enumerate(q):
            s = (2 * j - n) * e0
            if s > e:
                total += qj * (1 - mpmath.exp(e - s))
        return total


@functools.lru_cache(maxsize=8)
def _suffix(eps0, n):
    """A_c = Q(j >= c) and B_c = P(j >= c) = sum_{j >= c} Q_j e^{-s_j}, c = 0..n+1."""
    with mpmath.workdps(DPS):
        e0, q = _masses(eps0, n)
        a = [mpmath.mpf(0)] * (n + 2)
        b = [mpmath.mpf(0)] * (n + 2)
        for j in range(n, -1, -1):
            a[j] = a[j + 1] + q[j]
            b[j] = b[j + 1] + q[j] * mpmath.exp(-(2 * j - n) * e0)
        return e0, a, b


def mp_epsilon(eps0, n, delta):
    """eps(delta): the segment (s_{c-1}, s_c] with delta(s_c) <= delta < delta(s_{c-1})."""
    with mpmath.workdps(DPS):
        e0, a, b = _suffix(eps0, n)
        tau = mpmath.mpf(delta)
        for c in range(n, -1, -1):
            s_prev = (2 * (c - 1) - n) * e0
            d_prev = a[c] - mpmath.exp(s_prev) * b[c] if s_prev >= 0 else None
            if s_prev < 0 or d_prev > tau:
                if a[c] - tau <= 0 or b[c] == 0:
                    return mpmath.mpf(0)
                return max(mpmath.mpf(0), mpmath.log((a[c] - tau) / b[c]))
        return mpmath.mpf(0)  # pragma: no cover


def _contains(bound, ref, slack=1e-45):
    with mpmath.workdps(DPS):
        lo, hi = bound.lower_mpf, bound.upper_mpf
        pad = mpmath.mpf(slack) * abs(ref)
        return lo - pad <= ref <= hi + pad


def _rel_width(bound):
    return float((bound.upper_mpf - bound.lower_mpf) / bound.upper_mpf)


# --- engine selection: numbers at n <= 1e5 keep the full sum ------------------------------------


def test_engine_selection_keeps_full_sum_up_to_1e5():
    assert type(pure_profile(((as_real(0.1, "e"), 10**5),))) is PureProfile
    assert type(pure_profile(((as_real(0.1, "e"), 10**5 + 1),))) is WindowedBinomialProfile
    two = ((as_real(0.1, "e"), 10), (as_real(0.2, "e"), 10))
    assert type(pure_profile(two)) is PureProfile


def test_refuses_beyond_the_windowed_limit():
    with pytest.raises(NotApplicable, match="steps"):
        exact_delta_bound(pure_dp(0.1, eb.MAX_WINDOWED_STEPS + 1), 1.0)


# --- small n: the full mpmath sum -----------------------------------------------------------------


@pytest.mark.parametrize("eps0,n", [(0.1, 1000), (1.0, 10000), (0.01, 4000), (3.0, 50),
                                    (1e-3, 2000)])
def test_windowed_matches_full_mpmath_sum(windowed, eps0, n):
    for delta in ("1e-5", "1e-10", "0.3"):
        b = exact_epsilon_bound(pure_dp(eps0, n), delta)
        assert b.upper_method == "exact-binomial"
        ref = mp_epsilon(eps0, n, delta)
        assert _contains(b, ref), (delta, b, ref)
        assert ref == 0 or _rel_width(b) < 1e-28
        eps = float(b.upper_mpf) * 0.97
        bd = exact_delta_bound(pure_dp(eps0, n), eps)
        ref_d = mp_delta(eps0, n, eps)
        assert _contains(bd, ref_d), (eps, bd, ref_d)


def test_windowed_agrees_with_full_sum_engine(windowed):
    # the legacy full-sum enclosure (independently computed) must overlap the windowed one
    comp = pure_dp(0.05, 3000)
    eb.WINDOW_FROM = 10**9
    full = exact_epsilon_bound(comp, "1e-6")
    eb.WINDOW_FROM = 0
    win = exact_epsilon_bound(comp, "1e-6")
    assert win.lower_mpf <= full.upper_mpf and full.lower_mpf <= win.upper_mpf


@settings(max_examples=25, deadline=None)
@given(
    eps0=st.floats(1e-3, 8.0),
    n=st.integers(1, 300),
    exp10=st.integers(1, 12),
    frac=st.floats(0.0, 1.2),
)
def test_windowed_soundness_property(eps0, n, exp10, frac):
    eb_from = eb.WINDOW_FROM
    eb.WINDOW_FROM = 0
    try:
        delta = f"1e-{exp10}"
        b = exact_epsilon_bound(pure_dp(eps0, n), delta)
        assert _contains(b, mp_epsilon(eps0, n, delta))
        eps = frac * n * eps0
        bd = exact_delta_bound(pure_dp(eps0, n), eps)
        assert _contains(bd, mp_delta(eps0, n, eps))
    finally:
        eb.WINDOW_FROM = eb_from


def test_exact_tie_on_the_lattice(windowed):
    # eps exactly on a support point s_c = (2c - n) eps0 (dyadic eps0): decided exactly
    n, eps0 = 401, Fraction(1, 8)
    eps = Fraction(2 * 230 - n, 8)
    b = exact_delta_bound(pure_dp(eps0, n), eps)
    assert _contains(b, mp_delta(0.125, n, 7.375))
    assert _rel_width(b) < 1e-28


# --- large eps0 (log space) vs the closed forms ---------------------------------------------------


def _closed_eps(eps0, n, delta):
    r"""n = 1, 2, 3 with delta below the top mass: eps on the top segment [s_{n-1}, s_n],
    delta = Q_n (1 - e^{eps - n eps0}) + 0, so eps = n eps0 + log1p(-delta / Q_n) when
    delta(s_{n-1}) = Q_n (1 - e^{-2 eps0}) > delta; Q_n = (t/(1+t))^n."""
    with mpmath.workdps(DPS):
        e0 = mpmath.mpf(eps0)
        qn = (1 / (1 + mpmath.exp(-e0))) ** n
        return n * e0 + mpmath.log1p(-mpmath.mpf(delta) / qn)


@pytest.mark.parametrize("eps0", [1e3, 1e4])
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("route", ["full", "windowed"])
def test_huge_eps0_closed_form(monkeypatch, eps0, n, route):
    if route == "windowed":
        monkeypatch.setattr(eb, "WINDOW_FROM", 0)
    for delta in ("1e-5", "0.5"):
        b = exact_epsilon_bound(pure_dp(eps0, n), delta)
        ref = _closed_eps(eps0, n, delta)
        assert _contains(b, ref), (b, ref)
        assert _rel_width(b) < 1e-28
        eps = n * eps0 - 0.5
        with mpmath.workdps(DPS):
            e0 = mpmath.mpf(eps0)
            ref_d = (1 / (1 + mpmath.exp(-e0))) ** n * -mpmath.expm1(mpmath.mpf(eps) - n * e0)
        assert _contains(exact_delta_bound(pure_dp(eps0, n), eps), ref_d)


# --- n = 1e6 .. 1e7: agreement with the float exact method, width target --------------------------

LARGE = [
    ([(RandomizedResponse(0.1), 10**6)], "rr 1e6"),
    ([(RandomizedResponse(0.1), 10**7)], "rr 1e7"),
    ([(RandomizedResponse(1e-3), 10**7)], "rr 1e7 small eps0"),
    ([(RandomizedResponse(2.0), 10**7)], "rr 1e7 eps0 2"),
    ([(RandomizedResponse(1e3), 10**7)], "rr 1e7 eps0 1e3"),
    ([(ApproxDP(0.1, 1e-12), 5 * 10**6), (RandomizedResponse(0.1), 5 * 10**6)], "approx mix"),
]


@pytest.mark.parametrize("comp,label", LARGE, ids=[x[1] for x in LARGE])
def test_large_n_matches_float_exact(comp, label):
    for delta in (1e-5, 3e-5) if label == "approx mix" else (1e-5, 1e-9):  # mix: d = 5e-6
        b = exact_epsilon_bound(comp, delta)
        assert b.upper_method == "exact-binomial"
        assert _rel_width(b) <= 1e-10
        ref = exact_epsilon(comp, delta).epsilon
        assert abs(float(b.upper_mpf) - ref) <= 1e-9 * ref, (label, b, ref)
        eps = float(b.upper_mpf) * 0.999
        bd = exact_delta_bound(comp, eps)
        assert _rel_width(bd) <= 1e-10
        ref_d = exact_delta(comp, eps).delta
        assert abs(float(bd.upper_mpf) - ref_d) <= 1e-9 * ref_d, (label, bd, ref_d)


def test_large_n_rational_exp_and_tiny_delta():
    comp = pure_dp(RationalExp(Fraction(11, 10)), 10**7)
    b = exact_epsilon_bound(comp, "1e-5")
    assert _rel_width(b) <= 1e-10
    # eps0 = log(1.1) as a float input: the float layer agrees to its own rounding
    import math

    ref = exact_epsilon([(RandomizedResponse(math.log(1.1)), 10**7)], 1e-5).epsilon
    assert abs(float(b.upper_mpf) - ref) <= 1e-9 * ref
    tiny = exact_epsilon_bound(pure_dp(0.1, 10**7), "1e-100")  # below binary64's delta range
    assert _rel_width(tiny) <= 1e-10
    bd = exact_delta_bound(pure_dp(0.1, 10**7), float(tiny.upper_mpf))
    assert bd.upper_mpf <= mpmath.mpf("1e-100") and bd.lower_mpf > mpmath.mpf("0.99e-100")


# --- the truncation bounds themselves: tiny windows must still enclose the full sums ------------


@pytest.mark.parametrize("eps0,n", [(0.1, 3000), (1.5, 800), (0.002, 5000)])
@pytest.mark.parametrize("nats", [0.0, 1.0, 6.0, 25.0])
def test_tail_bounds_enclose_the_omitted_terms(eps0, n, nats):
    from certify.engine import workprec

    prof = WindowedBinomialProfile(((as_real(eps0, "eps0"), n),))
    with mpmath.workdps(DPS):
        e0, q = _masses(eps0, n)
        z = mpmath.exp(-2 * e0)
    widest = 0.0
    with workprec(128):
        st = prof._state()
        for frac in (0.5, 0.52, 0.55, 0.6, 0.75):
            c = int(frac * n)
            d, g = prof.sums(c, st, nats=nats)
            with mpmath.workdps(DPS):
                d_ref = mpmath.fsum(q[j] * (1 - z ** (j - c)) for j in range(c, n + 1))
                g_ref = mpmath.fsum(q[j] * z ** (j - c) for j in range(c, n + 1))
                for ball, ref in ((d, d_ref), (g, g_ref)):
                    lo, hi = mpmath.mpf(ball.lower().mid().str(70, radius=False)), \
                        mpmath.mpf(ball.upper().mid().str(70, radius=False))
                    pad = mpmath.mpf("1e-55") * ref
                    assert lo - pad <= ref <= hi + pad, (c, nats, ball, ref)
                    if ref > 0:
                        widest = max(widest, float((hi - lo) / ref))
    if nats <= 1.0:  # the window really was cut: the tail bounds carry the omitted mass
        assert widest > 1e-6


@pytest.mark.parametrize("bad", ["none", "low", "high", "off"])
def test_inversion_does_not_trust_the_float_guess(windowed, monkeypatch, bad):
    # the float guess only orders the probes: a missing or wrong guess gives the same segment
    n, eps0 = 700, 0.2
    ref = mp_epsilon(eps0, n, "1e-7")
    guesses = {"none": None, "low": 0, "high": n, "off": None}
    if bad == "off":
        good = WindowedBinomialProfile(((as_real(eps0, "e"), n),))._guess(Fraction(1, 10**7),
                                                                          n // 2 + 1)
        guesses["off"] = good + 37
    monkeypatch.setattr(WindowedBinomialProfile, "_guess", lambda self, tau, c0: guesses[bad])
    b = exact_epsilon_bound(pure_dp(eps0, n), "1e-7")
    assert _contains(b, ref)
    assert _rel_width(b) < 1e-28


def test_irrational_tie_is_not_guessed_windowed(windowed):
    # eps = 21 sqrt(1/100) is exactly the support point s_c (2c - n = 21) of n x sqrt(1/100)-DP:
    # undecidable at every precision; that term is (1 - e^0)_+ = 0 on both sides (positive part
    # taken on the ball), and the rest comes from the segment sums D_{c+1}, G_{c+1}
    from flint import arb, fmpq

    from certify.exact_model import ArbReal

    n = 401
    comp = pure_dp(ArbReal.sqrt(Fraction(1, 100)), n)
    b = exact_delta_bound(comp, ArbReal(lambda: 21 * arb(fmpq(1, 100)).sqrt(), "21/10"))
    with mpmath.workdps(DPS):
        e0 = mpmath.sqrt(mpmath.mpf(1) / 100)
        _, q = _masses.__wrapped__(e0, n)
        truth = mpmath.fsum(q[j] * -mpmath.expm1((21 - (2 * j - n)) * e0)
                            for j in range((n + 21) // 2 + 1, n + 1))
    assert _contains(b, truth) and _rel_width(b) < 1e-20
