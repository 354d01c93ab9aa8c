r"""Windowed exact binomial profile: certified randomized response / approx-DP to n = 10^7.

n steps that are (eps0, 0)-DP are dominated by randomized response (Kairouz, Oh, Viswanath, *The
Composition Theorem for Differential Privacy*, ICML 2015, arXiv:1311.0776 = KOV, Thm 3.3): the
composed PLLR is :math:`S = s_j = (2j - n)\varepsilon_0` with :math:`j \sim \mathrm{Bin}(n, q)`
under Q, :math:`q = t/(1+t)`, :math:`t = e^{\varepsilon_0}`, and

.. math::

    \delta(\varepsilon) = \sum_{j:\, s_j > \varepsilon} Q_j\bigl(1 - e^{\varepsilon - s_j}\bigr),
    \qquad Q_j = \binom{n}{j} q^j (1-q)^{n-j}.

:class:`certify.exact_profiles.PureProfile` sums all n + 1 masses (O(n) balls, refused above
:data:`~certify.exact_profiles.MAX_BINOMIAL_STEPS`). Here only a *window* of terms is summed in
Arb ball arithmetic and the rest is bounded rigorously, so the cost is O(sqrt(n log(1/eps_mach)))
ball operations. Every quantity is a sum of non-negative terms over :math:`j \ge c` (no
cancellation). With :math:`z = e^{-2\varepsilon_0}` (so :math:`e^{s_c - s_j} = z^{j-c}`):

.. math::

    D_c = \delta(s_c) = \sum_{j \ge c} Q_j (1 - z^{j-c}), \qquad
    G_c = e^{s_c} P(S \ge s_c) = \sum_{j \ge c} Q_j z^{j-c},

and on the lattice segment :math:`s_{c-1} \le \varepsilon \le s_c` (where exactly the points
:math:`j \ge c` lie above eps), :math:`\delta(\varepsilon) = A_c - e^\varepsilon B_c` gives

.. math::

    \delta(\varepsilon) = D_c + \bigl(1 - e^{\varepsilon - s_c}\bigr) G_c, \qquad
    D_{c-1} = D_c + (1 - z) G_c.

Inversion on that segment: :math:`\delta(\varepsilon) = \tau` iff
:math:`\varepsilon = s_c + \log1p(-(\tau - D_c)/G_c)`, equivalently
:math:`\varepsilon = s_{c-1} + \log1p((D_{c-1} - \tau)/(z G_c))`; both are evaluated on the
balls and intersected with each other and with the segment.

**Terms.** :math:`Q_j` is anchored at the start of each window segment (and every
:data:`REANCHOR` steps, intersected with the running value) by
:math:`\exp(\log\Gamma(n+1) - \log\Gamma(j+1) - \log\Gamma(n-j+1) + j\log q + (n-j)\log(1-q))`
with Arb's rigorous ``lgamma``, :math:`\log q = -\log1p(e^{-\varepsilon_0})`,
:math:`\log(1-q) = -\varepsilon_0 + \log q` (log space: eps0 up to 10^4 and beyond is fine), and
advanced by the exact ratio :math:`Q_{j+1} = Q_j\, t (n-j)/(j+1)`. The weights follow
:math:`z^{j+1-c} = z\cdot z^{j-c}` and :math:`w_{j+1} = (1 - z) + z w_j` for
:math:`w_j = 1 - z^{j-c}` (all terms positive, so ball errors grow linearly and no digits cancel).

**Truncation (proof).** The Q masses are unimodal: the ratio
:math:`\sigma(j) = Q_{j+1}/Q_j = t(n-j)/(j+1)` is decreasing in j, and
:math:`\rho(j) = Q_{j-1}/Q_j = j/(t(n-j+1)) = 1/\sigma(j-1)` is increasing in j.

* *Upper tail.* If :math:`\sigma(b) < 1` then for :math:`k \ge 0`,
  :math:`Q_{b+k+1}/Q_{b+k} = \sigma(b+k) \le \sigma(b)`, so :math:`Q_{b+k} \le Q_b\sigma(b)^k`
  and :math:`\sum_{j > b} Q_j \le Q_b\,\sigma(b)/(1 - \sigma(b))`. The G terms
  :math:`g_j = Q_j z^{j-c}` have ratio :math:`\sigma(j) z`, also decreasing, so
  :math:`\sum_{j > b} g_j \le g_b\,\sigma(b)z/(1 - \sigma(b)z)` if :math:`\sigma(b) z < 1`.
* *Lower tail.* If :math:`\rho(a) < 1` then for :math:`j \le a`, :math:`Q_{j-1}/Q_j = \rho(j)
  \le \rho(a)`, so :math:`\sum_{c \le j < a} Q_j \le \sum_{j < a} Q_j \le
  Q_a\,\rho(a)/(1 - \rho(a))`; for the G terms the downward ratio is :math:`\rho(j)/z`, giving
  :math:`g_a\,(\rho(a)/z)/(1 - \rho(a)/z)` if :math:`\rho(a)/z < 1`.
* The weights :math:`1 - z^{j-c}` and :math:`z^{j-c}` lie in [0, 1] for :math:`j \ge c`, so the
  omitted part of :math:`D_c` is at most the omitted Q mass and that of :math:`G_c` the omitted
  g mass. Each sum is therefore enclosed by (window sum) + [0, tail bounds], with the ratios,
  the conditions ``< 1`` (decided in Arb) and the bounds all evaluated on balls with outward
  rounding. Where a ratio is not certainly below 1 (a window end at the mode: tiny windows
  only), the bound used is the trivial one, omitted mass <= total mass = 1 (g_j <= Q_j).

The window itself is chosen in floating point (log-space ``math.lgamma``) as the terms within
:math:`L` nats of the largest term on :math:`[c, n]`, :math:`L = \text{prec}\cdot\ln 2 +
\ln(n+2) + \max(0, -\ln(1-z)) + 30`, which makes the omitted mass small against the sum; this
choice affects only the width, never the validity, and :func:`certify.engine.adaptive` widens
it with the precision when the width target is missed.

**Inversion.** ``eps(tau)`` needs the smallest c with :math:`D_c \le \tau`. A float guess
(bisection on a float log-space :math:`\log D_c`, guidance only) gives a starting index; each
evaluation
at c decides :math:`D_c \le \tau` and :math:`D_{c-1} > \tau` by certified ball comparisons
(undecidable raises :class:`~certify.engine.UndecidableError`, retried at a higher precision
by the caller), and a certified bisection over :math:`[c_0, n]` takes over if the guess is off.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
from flint import arb, ctx

from .budget import check_deadline, require
from .engine import UndecidableError
from .exact_model import ExactReal, as_ball
from .exact_profiles import MAX_BINOMIAL_STEPS, PureProfile

__all__ = [
    "MAX_WINDOWED_STEPS",
    "REANCHOR",
    "WINDOW_FROM",
    "WindowedBinomialProfile",
    "pure_profile",
]

MAX_WINDOWED_STEPS = 10**9
"""Largest n for the windowed binomial profile (window ~ 30 sqrt(n q (1-q)) terms)."""

WINDOW_FROM = MAX_BINOMIAL_STEPS
"""Homogeneous pure-DP compositions with n > WINDOW_FROM use the windowed profile; smaller n keep
the full sum of :class:`~certify.exact_profiles.PureProfile` (their numbers are unchanged)."""

REANCHOR = 4096
"""Steps of the ratio recurrence between two lgamma anchors."""

_EXTRA_NATS = 30.0
_TERM_SECONDS = 2e-6
"""Low estimate of the seconds one window term of :meth:`WindowedBinomialProfile.sums` costs (a few
Arb products; measured ~5-10 us): under a time budget a window that cannot fit is refused up
front, and the loop checks the deadline at every re-anchoring (issue 12). No number changes."""


def pure_profile(terms: tuple[tuple[ExactReal, int], ...]) -> PureProfile:
    """The pure-DP profile engine: windowed for one eps0 with n > :data:`WINDOW_FROM`."""
    if len(terms) == 1 and terms[0][1] > WINDOW_FROM:
        return WindowedBinomialProfile(terms)
    return PureProfile(terms)


def _nonneg_upto(x: arb) -> arb:
    """A ball containing [0, x] for a ball x >= 0 (the enclosure of an omitted sum)."""
    return arb(0).union(x)


class WindowedBinomialProfile(PureProfile):
    r"""Exact profile of n-fold (eps0, 0)-DP from a window of binomial terms (module docstring)."""

    max_binomial_steps = MAX_WINDOWED_STEPS

    def __init__(self, terms: tuple[tuple[ExactReal, int], ...]) -> None:
        if len(terms) != 1:
            raise ValueError("the windowed binomial profile takes one (eps0, n) term")
        super().__init__(terms)
        self.n = self.m[0]
        self.exact_ok = False  # exact rational masses are out of reach at this size
        self.eps0_float = self._eps0_float()

    def _eps0_float(self) -> float:
        v = self.eps[0]
        if v.rational is not None:
            return float(v.rational)
        if v.exp_rational is not None:
            t = v.exp_rational
            return math.log(t.numerator) - math.log(t.denominator)
        with ctx.workprec(64):
            return float(v.ball().mid())

    def s_key(self, c: int) -> Fraction | None:
        """Exact key as in :meth:`PureProfile.s_key`, but None (compare balls) where the key
        e^{s_c} = t^{2c-n} would be a rational of more than 4096 bits."""
        if self.order == "exp":
            t = self.eps[0].exp_rational
            if abs(2 * c - self.n) * (t.numerator.bit_length() + t.denominator.bit_length()) > 4096:
                return None
        return super().s_key(c)

    # -- per-precision constants ----------------------------------------------------------------
    def _consts(self, st: dict[str, Any]) -> dict[str, Any]:
        if "t" not in st:
            e0 = st["eps"][0]
            lq = -((-e0).exp().log1p())  # log q = -log1p(e^{-eps0})
            st.update(
                t=e0.exp(), z=(-2 * e0).exp(), omz=-((-2 * e0).expm1()), lq=lq, lp=lq - e0,
                lgn=arb(self.n + 1).lgamma(), sums={},
            )
        return st

    def _anchor(self, j: int, st: dict[str, Any]) -> arb:
        """Q_j = exp(lgamma(n+1) - lgamma(j+1) - lgamma(n-j+1) + j log q + (n-j) log(1-q))."""
        n = self.n
        return (st["lgn"] - arb(j + 1).lgamma() - arb(n - j + 1).lgamma()
                + j * st["lq"] + (n - j) * st["lp"]).exp()

    # -- float guidance (the window only; never the value) ---------------------------------------
    def _logq_f(self, j: int, g: bool) -> float:
        """Float log Q_j (g=False) or log P_j (g=True; the g_j are P_j e^{s_c})."""
        n, e0 = self.n, self.eps0_float
        lq = -math.log1p(math.exp(-e0))
        lp = lq - e0
        a, b = (lp, lq) if g else (lq, lp)
        return (math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1)
                + j * a + (n - j) * b)

    def _window(self, c: int, g: bool, nats: float) -> tuple[int, int]:
        """[a, b] within [c, n]: the terms within ``nats`` of the largest (float, guidance)."""
        n, e0 = self.n, self.eps0_float
        em = math.exp(-e0)
        p = (em if g else 1.0) / (1.0 + em)  # Q: q = 1/(1+e^{-eps0}); P: 1 - q
        mode = min(n, max(0, math.floor((n + 1) * p)))
        f = lambda j: self._logq_f(j, g)  # noqa: E731
        for _ in range(4):  # float mode of Bin(n, p), made locally maximal
            if mode < n and f(mode + 1) > f(mode):
                mode += 1
            elif mode > 0 and f(mode - 1) > f(mode):
                mode -= 1
        top = max(c, mode)
        cut = f(top) - nats
        lo, hi = top, n  # largest b in [top, n] with f(b) >= cut (f decreasing there)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if f(mid) >= cut:
                lo = mid
            else:
                hi = mid - 1
        b = lo
        lo, hi = c, top  # smallest a in [c, top] with f(a) >= cut (f increasing there)
        while lo < hi:
            mid = (lo + hi) // 2
            if f(mid) >= cut:
                hi = mid
            else:
                lo = mid + 1
        return lo, b

    # -- the certified sums ---------------------------------------------------------------------
    def sums(self, c: int, st: dict[str, Any], nats: float | None = None) -> tuple[arb, arb]:
        r"""Balls ``(D_c, G_c)`` enclosing the full sums over j >= c (module docstring).

        Args:
            c: Support index in [0, n + 1].
            st: The per-precision state (:meth:`_state`).
            nats: Window depth in nats below the largest term (default: the precision-based
                ``L`` of the module docstring). Any value gives a valid enclosure; smaller
                windows give wider balls (the omitted terms enter through the tail bounds).
        """
        st = self._consts(st)
        key = (c, nats)
        if key in st["sums"]:
            return st["sums"][key]
        n = self.n
        if c > n:
            out = (arb(0), arb(0))
            st["sums"][key] = out
            return out
        e0 = st["eps"][0]
        t, z, omz = st["t"], st["z"], st["omz"]
        if nats is None:
            nats = (ctx.prec * math.log(2) + math.log(n + 2)
                    + max(0.0, -math.log(-math.expm1(-2 * max(self.eps0_float, 1e-300))))
                    + _EXTRA_NATS)
        aq, bq = self._window(c, False, nats)
        ag, bg = self._window(c, True, nats)
        segs = sorted([(aq, bq), (ag, bg)])
        if segs[1][0] <= segs[0][1] + 1:
            segs = [(segs[0][0], max(segs[0][1], segs[1][1]))]
        size = sum(hi - lo + 1 for lo, hi in segs)
        require(size * _TERM_SECONDS, f"the exact binomial window of {size} terms (n = {n})")
        d_sum, g_sum = arb(0), arb(0)
        ends: dict[tuple[str, int], arb] = {}
        for lo, hi in segs:
            q = self._anchor(lo, st)
            zp = (-2 * (lo - c) * e0).exp()  # z^{j-c}
            w = -((-2 * (lo - c) * e0).expm1())  # 1 - z^{j-c}
            for j in range(lo, hi + 1):
                if j > lo and (j - lo) % REANCHOR == 0:
                    check_deadline("in the exact binomial window")
                    q = q.intersection(self._anchor(j, st))
                if aq <= j <= bq:
                    d_sum += q * w
                if ag <= j <= bg:
                    g_sum += q * zp
                if j in (aq, bq):
                    ends[("q", j)] = q
                if j in (ag, bg):
                    ends[("g", j)] = q * zp
                q = q * t * (n - j) / (j + 1)
                zp = zp * z
                w = omz + z * w
        d_sum += self._tails(aq, bq, c, ends["q", aq], ends["q", bq], st, g=False)
        g_sum += self._tails(ag, bg, c, ends["g", ag], ends["g", bg], st, g=True)
        out = (d_sum, g_sum)
        st["sums"][key] = out
        return out

    def _tails(self, a: int, b: int, c: int, ta: arb, tb: arb, st: dict[str, Any],
               g: bool) -> arb:
        r"""[0, bound] on the omitted terms j in [c, a) and j > b (truncation proof above)."""
        n, t, z = self.n, st["t"], st["z"]
        total = arb(0)
        if b < n:
            r = t * (n - b) / (b + 1)  # sigma(b)
            if g:
                r = r * z
            # not certainly past the mode (tiny windows only): the omitted mass is <= 1
            total += tb * r / (1 - r) if r < 1 else arb(1)
        if a > c:
            r = arb(a) / (t * (n - a + 1))  # rho(a)
            if g:
                r = r / z
            total += ta * r / (1 - r) if r < 1 else arb(1)
        return _nonneg_upto(total)

    def _qmass(self, c: int, st: dict[str, Any]) -> arb:
        return self._anchor(c, self._consts(st))

    # -- profile --------------------------------------------------------------------------------
    def delta_at(self, eps: ExactReal) -> Fraction | arb:
        r"""delta(eps) = D_k + (-expm1(eps - s_k)) G_k, k the first support point above eps.

        Support points that cannot be placed against eps at this precision contribute
        Q_c (1 - e^{eps - s_c})_+ with the positive part taken on the ball (as in
        :meth:`PureProfile.delta_at`): valid on either side of the tie.
        """
        st = self._state()
        k1, k = self.split(eps, st)
        if k1 == self.N:
            return Fraction(0)
        e = st["eps_ball"]
        total = arb(0)
        for c in range(k1, k):  # undecided support points (usually none)
            total += self._qmass(c, st) * (-(e - self.s_ball(c, st)).expm1()).nonnegative_part()
        if k < self.N:
            d, g = self.sums(k, st)
            total += d + (-(e - self.s_ball(k, st)).expm1()) * g
        return total

    def _log_d_float(self, c: int) -> float:
        """Float log D_c from the terms within 45 nats of the largest (guidance only)."""
        n, e0 = self.n, self.eps0_float
        if c >= n:
            return -math.inf
        a, b = self._window(c, False, 45.0)
        j = np.arange(a, b + 1, dtype=np.float64)
        steps = e0 + np.log(n - j[:-1]) - np.log(j[:-1] + 1)  # log Q_{j+1}/Q_j
        logq = self._logq_f(a, False) + np.concatenate(([0.0], np.cumsum(steps)))
        with np.errstate(divide="ignore"):
            terms = logq + np.log(-np.expm1(-2.0 * e0 * (j - c)))  # j = c: weight 0
        top = float(np.max(terms))
        if not math.isfinite(top):
            return -math.inf
        return top + math.log(float(np.sum(np.exp(terms - top))))

    def _guess(self, tau: Fraction | arb, c0: int) -> int | None:
        """Float guess of the segment index: bisection on the float log D_c (guidance only)."""
        if not (self.eps0_float > 0):
            return None
        with ctx.workprec(64):
            lt = as_ball(tau).log()
            if not lt.is_finite():
                return None
            log_tau = float(lt.mid())
        lo, hi = c0, self.n
        while lo < hi:
            mid = (lo + hi) // 2
            if self._log_d_float(mid) <= log_tau:
                hi = mid
            else:
                lo = mid + 1
        return lo

    def invert(self, tau: Fraction | arb, rel_width: float) -> arb:
        r"""eps* on the certified segment [s_{c-1}, s_c]: smallest c >= c0 with D_c <= tau.

        The caller has established delta(0) > tau. ``lo``/``hi`` keep the invariant that the
        smallest such c lies in [lo, hi] (D_n = 0 <= tau); every step is a certified comparison.
        """
        st = self._state()
        tb = as_ball(tau)
        c0 = self.first_above(ExactReal(0, "0"), st)
        lo, hi = c0, self.n
        guess = self._guess(tau, c0)
        guided = 0 if guess is None else 3  # probes near the float guess, then bisection
        mid = guess
        for _ in range(2 * self.n.bit_length() + 8):
            if lo >= hi:
                break
            if guided > 0 and mid is not None:
                mid = min(max(mid, lo), hi)
                guided -= 1
            else:
                mid = (lo + hi) // 2
            d, g = self.sums(mid, st)
            if d <= tb:  # D_mid <= tau: the answer is <= mid
                hi = mid
                if mid > lo:
                    d1 = d + st["omz"] * g  # D_{mid-1}
                    if d1 > tb:
                        lo = mid  # D_{mid-1} > tau: mid is the answer
                    elif not d1 <= tb:
                        raise UndecidableError(f"cannot place delta = {tb} at support {mid - 1}")
                mid = mid - 1
            elif d > tb:
                lo = mid + 1
                mid = mid + 1
            else:
                raise UndecidableError(f"cannot place delta = {tb} at support {mid}")
        if lo < hi:  # pragma: no cover - the bracket halves after the guided probes
            raise UndecidableError("the certified segment search did not converge")
        c = lo
        d, g = self.sums(c, st)
        sc = self.s_ball(c, st)
        x1 = sc + (-(tb - d) / g).log1p()
        seg_lo = arb(0) if c == c0 else self.s_ball(c - 1, st)
        d1 = d + st["omz"] * g
        x2 = seg_lo + ((d1 - tb) / (st["z"] * g)).log1p() if c > c0 else x1
        ball = x1.intersection(x2) if x1.overlaps(x2) else x1
        seg = seg_lo.union(sc)
        return ball.intersection(seg) if ball.overlaps(seg) else ball
