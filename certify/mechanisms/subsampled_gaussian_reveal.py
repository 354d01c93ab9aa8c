r"""Certified eps/delta of m Poisson-subsampled Gaussian steps at small sigma ("revealed sampling").

At small sigma (mu = 1/sigma large) a sampled step all but reveals itself: its privacy loss is
about mu^2/2, while an unsampled step costs about log(1 - p). The quadrature-based methods cost
~mu^2 there and the lattice needs a range of m mu^2; this module bounds the privacy profile of
``m x PoissonSubsampledGaussian(sigma, p)`` directly through the number K ~ Bin(m, p) of sampled
steps, in Arb (python-flint) balls throughout.

**Upper bound** (both pair orders). Write Q = (1-p) P + p R, P = N(0, 1), R = N(mu, 1). The pair
P' = Bern(p) x P, Q' = law of (b, x) with b ~ Bern(p), x ~ R if b = 1 else P, maps to (P, Q) by
forgetting b, so by data processing (post-processing cannot increase the hockey-stick
divergence) :math:`\delta_{P,Q}(\varepsilon) \le \delta_{P',Q'}(\varepsilon)`, and likewise
for (Q, P) and (Q', P'). Under both hypotheses the flags have the same law, so for m steps the
divergence splits over the flag vectors (the optimal set can be chosen per flag vector):
:math:`\delta_{P'^m,Q'^m}(\varepsilon) = \sum_K \binom mK p^K (1-p)^{m-K}
\delta_G(\varepsilon; \mu\sqrt K)`, where :math:`\delta_G(\varepsilon; s) =
\Phi(s/2 - \varepsilon/s) - e^\varepsilon\Phi(-s/2 - \varepsilon/s)` is the Gaussian
profile (Balle, Wang 2018, Thm. 8; docs/math.md) of the K sampled steps composed, N(0, I) vs
N(mu 1, I), which is symmetric, so the bound holds in both orders. delta_G is increasing in s,
so the terms K <= K_lo are bounded together by :math:`\delta_G(\varepsilon; \mu\sqrt{K_{lo}})`
(their weights sum to <= 1), the terms K > K_hi by the Chernoff-Hoeffding tail
:math:`P(K \ge k) \le e^{-m D(k/m \| p)}` for k >= mp (D the Bernoulli KL divergence; Hoeffding
1963, Thm. 1) times delta_G <= 1, and the K in between are summed term by term.

**Lower bound** (order P||Q). For the test A = {at least k of the m coordinates exceed c}:
:math:`P^m(A) \le \binom mk \bar\Phi(c)^k` (union bound over k-subsets), and under Q each
coordinate exceeds c with probability :math:`(1-p)\bar\Phi(c) + p\bar\Phi(c - \mu) \ge r_0 =
p\bar\Phi(c - \mu)`, so (the binomial tail increases with its rate) :math:`Q^m(A) \ge
\sum_{j=k}^{k+W} \binom mj r_0^j (1-r_0)^{m-j}`. Then :math:`\delta(\varepsilon) \ge Q^m(A) -
e^\varepsilon P^m(A)` for every eps (definition of the hockey-stick divergence), and since
delta(eps) is non-increasing, :math:`\varepsilon(\delta) \ge \log((Q^m(A) - \delta)/P^m(A))`
whenever :math:`Q^m(A) > \delta`. (c, k) are chosen on a float grid; only the chosen pair is
evaluated in Arb.

Applies to one term of a PoissonSubsampledGaussian with rate < 1 and sigma < 0.05 (where the
certified quadratures refuse), and at most :data:`MAX_TERMS` binomial terms.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from flint import arb

from numeric.composition import Composition
from numeric.errors import NotApplicable
from numeric.mechanisms.base import DIRECTION_PQ
from numeric.mechanisms.subsampled_gaussian import PoissonSubsampledGaussian

from ..bound import Bound
from ..budget import check_deadline
from ..engine import endpoints, to_arb, workprec
from ..search import bisect, expand
from ..special import exact_ball, exact_param, normal_sf

__all__ = ["MAX_SIGMA", "MAX_TERMS", "applies", "reveal_delta_bound", "reveal_epsilon_bound"]

MAX_SIGMA = 0.05
"""Applies below this sigma (where the certified quadratures of the subsampled Gaussian refuse)."""
MAX_TERMS = 3000
"""Largest number of binomial terms summed in Arb (K_hi - K_lo); more refuses (NotApplicable)."""
_PREC = 192
_NEGLIGIBLE = 1e-12  # relative share of delta left to the lumped ends (guide only)
_METHOD_UP = "reveal"
_METHOD_LO = "reveal-test"


_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _log_ndtr1(x: float) -> float:
    """log Phi(x) in floats (a guide): erfc, and the asymptotic series below -20."""
    if x > -20.0:
        return math.log(0.5 * math.erfc(-x / math.sqrt(2.0)))
    y = 1.0 / (x * x)
    return -0.5 * x * x - math.log(-x) - _LOG_SQRT_2PI + math.log1p(-y + 3 * y * y - 15 * y**3)


log_ndtr = np.vectorize(_log_ndtr1, otypes=[float])


def _log_choose(m: int, j: np.ndarray) -> np.ndarray:
    """log C(m, j) in floats (a guide); no lgamma(m) cancellation for huge m."""
    j = np.asarray(j, dtype=float)
    lg_j = np.array([math.lgamma(x + 1.0) for x in j.ravel()]).reshape(j.shape)
    if m <= 1e12:
        return math.lgamma(m + 1.0) - lg_j - np.array(
            [math.lgamma(m - x + 1.0) for x in j.ravel()]).reshape(j.shape)
    # log(m (m-1) ... (m-j+1)) = j log m + sum_i log1p(-i/m), |i/m| <= 1e-3 here
    return j * math.log(m) - j * (j - 1) / (2.0 * m) - (j - 1) * j * (2 * j - 1) / (12.0 * m * m) \
        - lg_j


def _logpmf(j: np.ndarray, m: int, r: float) -> np.ndarray:
    j = np.asarray(j, dtype=float)
    return _log_choose(m, j) + j * math.log(r) + (m - j) * math.log1p(-r)


def _logsumexp(v: np.ndarray) -> float:
    top = float(np.max(v)) if v.size else -math.inf
    return top if not math.isfinite(top) else top + math.log(float(np.exp(v - top).sum()))


def _log_sf(k: int, m: int, r: float) -> float:
    """log P(Bin(m, r) >= k) in floats (a guide): the pmf summed over a window of
    12 sqrt(mean) + 50 terms on the heavier side."""
    if k <= 0:
        return 0.0
    if k > m:
        return -math.inf
    mean = m * r
    width = int(12.0 * math.sqrt(mean + 1.0) + 50.0)
    if k > mean:
        return _logsumexp(_logpmf(np.arange(k, min(m, k + width) + 1), m, r))
    log_cdf = _logsumexp(_logpmf(np.arange(max(0, k - 1 - width), k), m, r))
    return math.log1p(-math.exp(min(log_cdf, 0.0))) if log_cdf < 0.0 else -math.inf


def applies(comp: Composition) -> bool:
    """One term of a PoissonSubsampledGaussian with rate < 1 and sigma < :data:`MAX_SIGMA`."""
    if len(comp.terms) != 1:
        return False
    mech = comp.terms[0][0]
    return (isinstance(mech, PoissonSubsampledGaussian) and mech.rate < 1.0
            and mech.sigma < MAX_SIGMA)


class _Problem:
    """One (sigma, p, m): float guides and Arb evaluations of the bounds (module docstring)."""

    def __init__(self, comp: Composition) -> None:
        if not applies(comp):
            raise NotApplicable(
                f"reveal: applies to one term of a PoissonSubsampledGaussian with rate < 1 and "
                f"sigma < {MAX_SIGMA} only")
        mech, m = comp.terms[0]
        spread = 24.0 * math.sqrt(m * mech.rate * (1.0 - mech.rate)) + 10.0
        if spread > MAX_TERMS:  # refuse before any work: the binomial window is too wide
            raise NotApplicable(
                f"reveal: m p = {m * mech.rate:.4g} sampled steps expected (steps={m}, "
                f"rate={mech.rate!r}): the binomial sum would need ~{spread:.0f} terms, over "
                f"its budget of {MAX_TERMS}")
        self.m = int(m)
        self.sigma: float | Fraction = exact_param(mech, "sigma")
        self.rate: float | Fraction = exact_param(mech, "rate")
        self.mu_f = 1.0 / float(self.sigma)
        self.p_f = float(self.rate)

    # -- float guides -------------------------------------------------------------------------

    def log_dg_f(self, eps: float, k: np.ndarray) -> np.ndarray:
        """log delta_G(eps; mu sqrt k) in floats (-inf at k = 0)."""
        s = self.mu_f * np.sqrt(np.asarray(k, dtype=float))
        with np.errstate(divide="ignore", invalid="ignore"):
            a = log_ndtr(s / 2 - eps / s)
            b = log_ndtr(-s / 2 - eps / s)
            out = a + np.log1p(-np.exp(np.minimum(eps + b - a, 0.0)))
        return np.where(s > 0, out, -np.inf)

    def log_tail_f(self, k: int) -> float:
        """log P(Bin(m, p) >= k) in floats."""
        return _log_sf(k, self.m, self.p_f)

    def window(self, eps: float, delta: float) -> tuple[int, int]:
        """(K_lo, K_hi): delta_G(eps; mu sqrt K_lo) and P(K > K_hi) below _NEGLIGIBLE delta."""
        m, p = self.m, self.p_f
        cut = math.log(delta * _NEGLIGIBLE)
        mean = m * p
        hi = max(1, math.ceil(mean))
        step = max(1, math.ceil(math.sqrt(mean)))
        while hi < m and self.log_tail_f(hi + 1) > cut:
            hi = min(m, hi + step)
            step *= 2
        ks = np.arange(0, hi + 1) if hi <= 4 * MAX_TERMS else np.unique(
            np.linspace(0, hi, 4 * MAX_TERMS).astype(np.int64))
        ok = ks[self.log_dg_f(eps, ks) <= cut]
        lo = int(ok.max()) if ok.size else 0
        return lo, hi

    # -- certified pieces ---------------------------------------------------------------------

    def _mu(self) -> arb:
        return 1 / exact_ball(self.sigma)

    def _p(self) -> arb:
        return exact_ball(self.rate)

    def dg(self, eps: arb, k: int) -> arb:
        """delta_G(eps; mu sqrt k) (Arb; 0 at k = 0)."""
        if k == 0:
            return arb(0)
        s = self._mu() * arb(k).sqrt()
        return normal_sf(eps / s - s / 2) - eps.exp() * normal_sf(eps / s + s / 2)

    def log_pmf(self, k: int, r: arb) -> arb:
        """log of C(m, k) r^k (1 - r)^(m - k) (Arb)."""
        m = self.m
        lc = arb(m + 1).lgamma() - arb(k + 1).lgamma() - arb(m - k + 1).lgamma()
        return lc + k * r.log() + (m - k) * (-r).log1p()

    def chernoff_tail(self, k: int) -> arb:
        """P(Bin(m, p) >= k) <= exp(-m D(k/m || p)) for k >= m p (Hoeffding 1963), else 1."""
        m, p = self.m, self._p()
        if k > m:
            return arb(0)
        a = arb(k) / m
        if not a >= p:
            return arb(1)
        if k == m:
            return (m * p.log()).exp()
        d = a * (a / p).log() + (1 - a) * ((1 - a) / (1 - p)).log()
        return (-m * d).exp()

    def delta_upper(self, eps: arb, lo: int, hi: int) -> arb:
        """Upper bound on delta(eps), both orders (module docstring); a ball whose upper end is
        the bound."""
        p = self._p()
        total = self.dg(eps, lo) + self.chernoff_tail(hi + 1)
        for k in range(lo + 1, hi + 1):
            if (k - lo) % 256 == 0:
                check_deadline("in the reveal bound's binomial sum")
            total += self.log_pmf(k, p).exp() * self.dg(eps, k)
        return total

    # -- the lower test -----------------------------------------------------------------------

    def test_f(self, k: int, z: float) -> tuple[float, float]:
        """(log Q_lo(A), log P_up(A)) in floats for the test (c = mu - z, k)."""
        m, mu = self.m, self.mu_f
        r0 = self.p_f * math.exp(_log_ndtr1(z))  # p Phibar(c - mu) = p Phi(z)
        log_q = _log_sf(k, m, r0)
        log_p = float(_log_choose(m, np.array(k))) + k * _log_ndtr1(-(mu - z))
        return log_q, log_p

    def test_arb(self, k: int, z: float) -> tuple[arb, arb]:
        """(Q_lo(A), P_up(A)) in Arb for c = mu - z (z an exact float)."""
        mu = self._mu()
        c = mu - arb(z)
        r0 = self._p() * normal_sf(c - mu)
        width = max(50, math.ceil(12 * math.sqrt(k + 1.0)))
        q_lo = arb(0)
        for j in range(k, min(self.m, k + width) + 1):
            q_lo += self.log_pmf(j, r0).exp()
        lc = arb(self.m + 1).lgamma() - arb(k + 1).lgamma() - arb(self.m - k + 1).lgamma()
        p_up = (lc + k * normal_sf(c).log()).exp()
        return q_lo, p_up

    def candidates(self, delta: float) -> list[tuple[int, float]]:
        """Test parameters (k, z) worth trying: k where P(Bin(m, p) >= k) > delta."""
        mean = self.m * self.p_f
        top = max(1, math.ceil(mean))
        step = max(1, math.ceil(math.sqrt(mean)))
        while top < self.m and self.log_tail_f(top + 1) > math.log(delta):
            top = min(self.m, top + step)
        ks = sorted({int(x) for x in np.linspace(1, top, 60)} | {top, max(1, top - 1)})
        z_top = max(10.0, math.sqrt(2.0 * math.log(1.0 / delta)) + 5.0)  # tiny delta: large z
        zs = [z_top * i / 40.0 for i in range(41)]
        return [(k, z) for k in ks for z in zs if k <= self.m]


def _pick_lower_eps(prob: _Problem, delta: float) -> tuple[int, float] | None:
    best, arg = -math.inf, None
    for i, (k, z) in enumerate(prob.candidates(delta)):
        if i % 64 == 0:
            check_deadline("in the reveal lower test's search")
        log_q, log_p = prob.test_f(k, z)
        if not log_q > math.log(delta) + 1e-9:
            continue
        val = log_q + math.log1p(-math.exp(math.log(delta) - log_q)) - log_p
        if val > best:
            best, arg = val, (k, z)
    return arg


def _pick_lower_delta(prob: _Problem, eps: float) -> tuple[int, float] | None:
    best, arg = -math.inf, None
    for i, (k, z) in enumerate(prob.candidates(1e-300)):
        if i % 64 == 0:
            check_deadline("in the reveal lower test's search")
        log_q, log_p = prob.test_f(k, z)
        if not eps + log_p < log_q:
            continue
        val = log_q + math.log1p(-math.exp(eps + log_p - log_q))
        if val > best:
            best, arg = val, (k, z)
    return arg


_ASSUMPTIONS = (
    "revealed sampling: (P, Q) is the post-processing of the pair that also reveals which steps "
    "were sampled, so delta(eps) <= sum_K Bin(m, p)(K) delta_G(eps; mu sqrt K) in both orders "
    "(data processing; Balle, Wang 2018 for delta_G); binomial ends lumped (delta_G increasing "
    "in K; Hoeffding 1963 tail)",
    "lower end: the test 'at least k coordinates exceed c' evaluated with a union bound under P "
    "and a partial binomial sum under Q (delta(eps) >= Q(A) - e^eps P(A))",
)


def _terms_check(lo: int, hi: int) -> None:
    if hi - lo > MAX_TERMS:
        raise NotApplicable(
            f"reveal: the binomial sum needs {hi - lo} terms (m p too large), over its budget "
            f"of {MAX_TERMS}")


def reveal_epsilon_bound(comp: Composition, delta) -> Bound:
    """Certified enclosure of eps(delta) (module docstring).

    Raises:
        NotApplicable: outside :func:`applies` or over :data:`MAX_TERMS` terms.
        ValueError: on a delta outside (0, 1).
    """
    prob = _Problem(comp)
    target = to_arb("delta", delta)
    if not (target > 0 and target < 1):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    d_f = float(delta)
    with workprec(_PREC):
        def log_up_f(x: float) -> float:  # float guide of the upper bound
            lo, hi = prob.window(x, d_f)
            ks = np.arange(lo + 1, hi + 1)
            logw = _logpmf(ks, prob.m, prob.p_f) if ks.size else np.empty(0)
            parts = np.concatenate([[prob.log_dg_f(x, [lo])[0]], logw + prob.log_dg_f(x, ks)])
            top = float(np.max(parts))
            return top if not math.isfinite(top) else top + math.log(np.exp(parts - top).sum())

        def guide_ok(x: float) -> bool:
            return log_up_f(x) <= math.log(d_f) - 1e-6

        if guide_ok(0.0):
            x_hi = 0.0
        else:
            prev, found = expand(guide_ok, 0.0, 1.0, tries=80)
            if found is None:
                raise NotApplicable("reveal: no finite eps found by the upper bound's guide")
            x_hi = bisect(guide_ok, prev, found, rel_tol=1e-9)[1]
        hi_end = None
        for bump in (1.0, 1.0 + 1e-9, 1.0 + 1e-6, 1.0 + 1e-3):
            check_deadline("in the reveal bound")
            x = x_hi * bump
            lo_k, hi_k = prob.window(x, d_f)
            _terms_check(lo_k, hi_k)
            if prob.delta_upper(arb(x), lo_k, hi_k).upper() <= target.lower():
                hi_end = endpoints(arb(x))[1]
                break
        if hi_end is None:
            raise NotApplicable("reveal: the certified upper bound did not confirm the guide")
        lo_val = arb(0)
        pick = _pick_lower_eps(prob, d_f)
        if pick is not None:
            q_lo, p_up = prob.test_arb(*pick)
            if q_lo > target:
                lo_val = (q_lo - target).log() - p_up.log()
        lo_end = endpoints(arb(lo_val.lower()))[0] if lo_val > 0 else endpoints(arb(0))[0]
    inputs = {"delta": delta, "window": [lo_k, hi_k],
              "test": None if pick is None else {"k": pick[0], "c": f"mu - {pick[1]}"}}
    return Bound("epsilon", lo_end, hi_end, _METHOD_LO if lo_val > 0 else "trivial",
                 _METHOD_UP, _PREC, _ASSUMPTIONS, DIRECTION_PQ, (), inputs)


def reveal_delta_bound(comp: Composition, eps) -> Bound:
    """Certified enclosure of delta(eps) (module docstring).

    Raises:
        NotApplicable: outside :func:`applies` or over :data:`MAX_TERMS` terms.
        ValueError: on a negative eps.
    """
    prob = _Problem(comp)
    e = to_arb("eps", eps)
    if not e >= 0:
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    e_f = float(eps)
    with workprec(_PREC):
        lo_k, hi_k = prob.window(e_f, 1e-300)
        if hi_k - lo_k > MAX_TERMS:  # a coarser window (a looser, still valid, upper end)
            lo_k, hi_k = prob.window(e_f, 1e-30)
        _terms_check(lo_k, hi_k)
        up = prob.delta_upper(e, lo_k, hi_k)
        hi_end = endpoints(arb(up.upper()))[1] if up.upper() < 1 else endpoints(arb(1))[1]
        pick = _pick_lower_delta(prob, e_f)
        low = arb(0)
        if pick is not None:
            q_lo, p_up = prob.test_arb(*pick)
            low = q_lo - e.exp() * p_up
        lo_end = endpoints(arb(low.lower()))[0] if low > 0 else endpoints(arb(0))[0]
    return Bound("delta", lo_end, hi_end, _METHOD_LO if low > 0 else "trivial", _METHOD_UP,
                 _PREC, _ASSUMPTIONS, DIRECTION_PQ, (),
                 {"eps": eps, "window": [lo_k, hi_k]})

