r"""Exact composition of n copies of the canonical (eps0, 0)-DP pair (randomized response).

Source: Kairouz, Oh, Viswanath, *The Composition Theorem for Differential Privacy*, ICML 2015,
arXiv:1311.0776 (cited as KOV), Thm 3.3. The n-fold composition of (eps0, 0)-DP is dominated by
the n-fold product of randomized response, whose PLLR is a lattice variable: with ``j`` the
number of '+' outcomes,

.. math::

    S = (2j - n)\,\varepsilon_0, \qquad j \sim \mathrm{Bin}(n, q) \text{ under } Q,
    \qquad q = \operatorname{expit}(\varepsilon_0)
             = \frac{e^{\varepsilon_0}}{1 + e^{\varepsilon_0}},

and the privacy profile in its Q-only form (no cancellation, every term positive) is

.. math::

    \delta(\varepsilon) = \sum_{j:\,(2j-n)\varepsilon_0 > \varepsilon}
        \binom{n}{j} q^j (1-q)^{n-j}\,\bigl(1 - e^{\varepsilon - (2j-n)\varepsilon_0}\bigr)
        = A_k - e^{\varepsilon} B_k,

where on the segment between consecutive lattice points, ``k`` is the first index with
``(2k - n) eps0 > eps``, ``A_k = Q(j >= k)`` and ``B_k = P(j >= k) = sum_{j>=k} Q(j) e^{-s_j}``.
Multiplying by ``(1 + e^{eps0})^n`` gives KOV's integer polynomial form
``sum_{2j-n>k} C(n,j) (t^j - t^{n-j+k})`` at ``eps = k eps0``, ``t = e^{eps0}``.

Numerics: the sum is taken in log space (logsumexp of positive terms) over a window of ``j``
chosen by exponential search; the log-terms are concave in ``j`` (the binomial is log-concave
and ``log(1 - e^{-x})`` is concave), so the terms outside the window are provably below
``e^{-60}`` relative. The binomial log-pmf uses Loader's saddle-point form (C. Loader, *Fast and
accurate computation of binomial probabilities*, 2000)

.. math::

    \log b(j; n, q) = \sigma(n) - \sigma(j) - \sigma(n-j) - D(j, nq) - D(n-j, n(1-q))
        + \tfrac12 \log\frac{n}{2\pi j (n-j)},

with the Stirling error ``sigma(k) = log k! - log sqrt(2 pi k) - k log k + k`` and the deviance
``D(x, M) = x log(x/M) + M - x`` (series in ``v = (x-M)/(x+M)`` for small ``|v|``), with
``x - nq`` formed from ``tanh(eps0/2)`` or ``n expit(-eps0)`` rather than the large product ``nq``.
The log-pmf then carries ~1e-15 relative error plus at most ~1e-12 absolute (from the rounding
of ``q`` itself) over the relevant window at ``n = 10^6..10^7``, where differences of
``gammaln`` lose 1e-9..1e-8; the rounding of ``q`` moves log Q(j) by about
``|j - nq| / (q (1 - q)) * 1e-16``, i.e. ~1e-16 z sqrt(n / (q (1 - q))) at z standard deviations
(~1e-9 at n = 1e12, eps0 ~ 1; less for larger eps0). Beyond 10^7 steps the sums are bounded
in work (at most 6e5 terms, checked up front from sqrt(n q (1 - q)): NotApplicable beyond) and
memory (chunks of 2^18 terms). The lattice points are the correctly rounded products
``s_j = fl((2j - n) eps0)`` (one rounding), so ``eps = n * eps0`` computed in floats gives exactly
0, as it does for the exact decimal that ``eps0`` stands for; ``eps - s_j`` is then exact near a
kink (Sterbenz).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import special

from ._validation import as_float_array, check_count, check_delta, check_positive
from .errors import NotApplicable

__all__ = ["pure_dp_delta", "pure_dp_epsilon", "pure_dp_log_delta"]

_MAX_N = 10**15
_LOG_2PI = math.log(2.0 * math.pi)
_LN2 = math.log(2.0)
# Terms whose log is more than this below a reference term are dropped; by concavity the
# dropped mass is < 2 e^{-60} * n / 60 < 1e-20 relative for n <= 1e7 (< 4e-13 at n = 1e15; the
# window is then bounded by _MAX_WINDOW, i.e. n q (1 - q) <= ~1.9e8, so n is small or eps0 large).
_WINDOW_DROP = 60.0
_OFFSETS = 2 ** np.arange(0, 51, dtype=np.int64)  # exponential search steps up to 2^50 > 1e15
# Work and memory bounds: at most _MAX_WINDOW terms per sum (checked up front from the binomial
# standard deviation and again on the window found), summed in chunks of _CHUNK terms (a few
# arrays of _CHUNK floats: ~20 MB of temporaries, whatever n is).
_MAX_WINDOW = 600_000
_CHUNK = 1 << 18
_WINDOW_PER_SD = 4.0 * math.sqrt(2.0 * _WINDOW_DROP)  # both sides, x2 for the search's overshoot

# sigma(k) = log k! - (k + 1/2) log k + k - log(2 pi)/2 for k = 0..30 (sigma(0) unused);
# computed at 50 digits (C. Loader 2000 tabulates the same values).
_STIRLERR_TABLE = np.array(
    [
        0.0,
        0.08106146679532726,
        0.0413406959554093,
        0.02767792568499834,
        0.020790672103765093,
        0.016644691189821193,
        0.013876128823070748,
        0.01189670994589177,
        0.010411265261972096,
        0.009255462182712733,
        0.00833056343336287,
        0.007573675487951841,
        0.00694284010720953,
        0.006408994188004207,
        0.0059513701127588475,
        0.005554733551962801,
        0.0052076559196096404,
        0.004901395948434738,
        0.004629153749334028,
        0.004385560249232324,
        0.004166319691996922,
        0.00396795421864086,
        0.0037876180684444346,
        0.0036229602246830948,
        0.003472021382978767,
        0.003333155636728093,
        0.003204970228055038,
        0.0030862786826087773,
        0.002976063983550409,
        0.0028734493623524663,
        0.0027776749297526936,
    ]
)
_STIRLERR_TABLE_MAX = len(_STIRLERR_TABLE) - 1
# Asymptotic series sigma(k) ~ 1/(12k) - 1/(360k^3) + 1/(1260k^5) - 1/(1680k^7) + 1/(1188k^9);
# the first omitted term is 691/(360360 k^11) < 1e-19 for k > 30.
_S0, _S1, _S2, _S3, _S4 = 1.0 / 12.0, 1.0 / 360.0, 1.0 / 1260.0, 1.0 / 1680.0, 1.0 / 1188.0
# 1/(2i+1), i = 1..10, for the deviance series (|v| < 0.1: v^20 / 21 < 1e-21).
_BD0_COEF = 1.0 / (2.0 * np.arange(1, 11) + 1.0)
_BD0_SERIES_MAX_V = 0.1


def _stirlerr(k: np.ndarray) -> np.ndarray:
    r"""Stirling error :math:`\sigma(k) = \log k! - \log\sqrt{2\pi k} - k\log k + k` (Loader 2000).

    Args:
        k: Integer-valued float array, every entry >= 1.

    Returns:
        sigma(k): exact table for k <= 30, the asymptotic series (error < 1e-19) above.
    """
    out = np.empty_like(k)
    small = k <= _STIRLERR_TABLE_MAX
    out[small] = _STIRLERR_TABLE[k[small].astype(np.int64)]
    big = ~small
    r = 1.0 / k[big]
    r2 = r * r
    out[big] = r * (_S0 - r2 * (_S1 - r2 * (_S2 - r2 * (_S3 - r2 * _S4))))
    return out


def _bd0(x: np.ndarray, mean: float, log_mean: float, dev: np.ndarray) -> np.ndarray:
    r"""Deviance :math:`D(x, M) = x\log(x/M) + M - x \ge 0` (Loader 2000), vectorized.

    For :math:`|v| < 0.1`, :math:`v = (x-M)/(x+M)`, the series
    :math:`D = (x-M) v + 2x \sum_{i\ge1} v^{2i+1}/(2i+1)` avoids the cancellation of the direct
    form; otherwise ``x log1p((x-M)/M) - (x-M)`` (or ``x (log x - log M) + M - x`` when ``M``
    underflows).

    Args:
        x: Positive counts.
        mean: ``M >= 0`` (may underflow to 0 for huge eps0).
        log_mean: ``log M`` computed in log space (finite even when ``M`` underflows).
        dev: ``x - M`` computed accurately by the caller.

    Returns:
        D(x, M), same shape as ``x``.
    """
    v = dev / (x + mean)
    out = np.empty_like(x)
    near = np.abs(v) < _BD0_SERIES_MAX_V
    vn = v[near]
    v2 = vn * vn
    poly = np.zeros_like(vn)
    for c in _BD0_COEF[::-1]:
        poly = poly * v2 + c
    out[near] = dev[near] * vn + 2.0 * x[near] * vn * v2 * poly
    far = ~near
    xf, df = x[far], dev[far]
    if mean > 1e-280:
        out[far] = xf * np.log1p(df / mean) - df
    else:
        out[far] = xf * (np.log(xf) - log_mean) + mean - xf
    return out


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """``log(1 - e^x)`` for ``x < 0`` to full relative precision (``-inf`` maps to 0)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(
            x > -_LN2, np.log(-np.expm1(np.minimum(x, 0.0))), np.log1p(-np.exp(np.minimum(x, 0.0)))
        )


def _logsumexp(a: np.ndarray) -> float:
    """``log(sum(exp(a)))`` for a 1-d array; ``-inf`` if empty or all ``-inf``."""
    if a.size == 0:
        return -math.inf
    m = float(np.max(a))
    if not math.isfinite(m):
        return m
    return m + math.log(float(np.sum(np.exp(a - m))))


def _chunked_logsumexp(f: Callable[[np.ndarray], np.ndarray], lo: int, hi: int) -> float:
    """``log sum_{j=lo}^{hi} exp(f(j))`` with at most :data:`_CHUNK` terms in memory.

    One chunk (every window at n <= 1e7) is exactly :func:`_logsumexp` of the whole window;
    longer windows combine the per-chunk logsumexps by a logsumexp (the same sum, regrouped).

    Raises:
        NotApplicable: if the window holds more than :data:`_MAX_WINDOW` terms (a work bound).
    """
    size = hi - lo + 1
    if size > _MAX_WINDOW:
        raise NotApplicable(
            f"exact: the binomial sum needs {size} terms (more than {_MAX_WINDOW}): too many "
            "steps for the exact binomial composition at this eps0 (use the saddlepoint or a "
            "certified method)")
    if size <= _CHUNK:
        return _logsumexp(f(np.arange(lo, hi + 1, dtype=np.int64)))
    parts = [_logsumexp(f(np.arange(a, min(a + _CHUNK, hi + 1), dtype=np.int64)))
             for a in range(lo, hi + 1, _CHUNK)]
    return _logsumexp(np.array(parts))


def _check_work(eps0: float, n: int) -> None:
    """Refuse up front when the windows would exceed :data:`_MAX_WINDOW` terms.

    The log-terms are within :data:`_WINDOW_DROP` of their maximum over about
    2 sqrt(2 * 60) binomial standard deviations sqrt(n q (1 - q)) (Gaussian tail of the
    log-concave binomial), and the exponential search overshoots by up to a factor 2.

    Raises:
        NotApplicable: naming ``steps`` (n) and ``eps0`` when that estimate is above the bound.
    """
    var = float(n) * float(special.expit(eps0)) * float(special.expit(-eps0))
    width = _WINDOW_PER_SD * math.sqrt(var)
    if width > _MAX_WINDOW:
        raise NotApplicable(
            f"exact: steps = {n} at eps0 = {eps0!r} needs binomial sums over ~{width:.3g} terms "
            f"(more than {_MAX_WINDOW}; the standard deviation sqrt(n q (1 - q)) grows with the "
            "steps): too expensive for the exact binomial composition (use the saddlepoint or a "
            "certified method)")


class _RandomizedResponseComposition:
    """Binomial lattice of the n-fold randomized-response PLLR (KOV Thm 3.3); internal helper."""

    def __init__(self, eps0: float, n: int) -> None:
        _check_work(eps0, n)
        self.eps0 = eps0
        self.n = n
        self.nf = float(n)
        # q = expit(eps0), 1 - q = expit(-eps0), both to full relative precision.
        self.q = float(special.expit(eps0))
        self.qc = float(special.expit(-eps0))
        self.log_q = -float(np.logaddexp(0.0, -eps0))  # log q = -softplus(-eps0)
        self.log_qc = -float(np.logaddexp(0.0, eps0))  # log(1-q) = -softplus(eps0)
        self.tanh_half = math.tanh(0.5 * eps0)  # 2q - 1
        self.mean = self.nf * self.q  # n q
        self.mean_c = self.nf * self.qc  # n (1 - q)
        self.log_mean = math.log(self.nf) + self.log_q
        self.log_mean_c = math.log(self.nf) + self.log_qc
        self.stirlerr_n = float(_stirlerr(np.array([self.nf]))[0])
        self.mode = min(math.floor((self.nf + 1.0) * self.q), n)

    # -- lattice ---------------------------------------------------------------------------
    def lattice(self, j: int) -> float:
        """The PLLR value s_j = fl((2j - n) eps0), rounded once (2j - n is exact)."""
        return float(2 * j - self.n) * self.eps0

    def gap_scalar(self, j: int, eps: float) -> float:
        """``eps - s_j`` (Python floats are IEEE doubles: identical to :meth:`gap`)."""
        return eps - float(2 * j - self.n) * self.eps0

    def gap(self, j: np.ndarray, eps: float) -> np.ndarray:
        """Vectorized :meth:`gap_scalar` (same operations, hence identical values)."""
        return eps - (2 * j - self.n).astype(float) * self.eps0

    def first_above(self, eps: float) -> int:
        """Smallest j in [0, n] with s_j > eps (strictly), or n + 1 if there is none."""
        n = self.n
        est = 0.5 * (self.nf + eps / self.eps0)
        j = n + 1 if not est < self.nf + 1.0 else max(math.floor(est) + 1, 0)
        while j <= n and not self.gap_scalar(j, eps) < 0.0:
            j += 1
        while j - 1 >= 0 and self.gap_scalar(j - 1, eps) < 0.0:
            j -= 1
        return j

    # -- binomial log-pmf (Loader 2000) -----------------------------------------------------
    def log_pmf(self, j: np.ndarray) -> np.ndarray:
        r"""``log Q(j)`` for ``j ~ Bin(n, q)`` by Loader's saddle-point form (module docstring).

        Args:
            j: Integer array with entries in [0, n].

        Returns:
            The log-pmf, accurate to a few 1e-15 absolute near the bulk.
        """
        n, nf = self.n, self.nf
        j = np.asarray(j, dtype=np.int64)
        out = np.empty(j.shape, dtype=float)
        out[j == 0] = nf * self.log_qc
        out[j == n] = nf * self.log_q
        inner = (j > 0) & (j < n)
        if not inner.any():
            return out
        x = j[inner].astype(float)
        xc = nf - x
        # dev = x - n q to full precision: the two formulas avoid the large product n q.
        if self.tanh_half <= 0.5:
            dev = (x - 0.5 * nf) - (0.5 * nf) * self.tanh_half
        else:
            dev = self.mean_c - xc
        val = (
            self.stirlerr_n
            - _stirlerr(x)
            - _stirlerr(xc)
            - _bd0(x, self.mean, self.log_mean, dev)
            - _bd0(xc, self.mean_c, self.log_mean_c, -dev)
            + 0.5 * (np.log(nf / (x * xc)) - _LOG_2PI)
        )
        out[inner] = val
        return out

    # -- windows over concave log-term sequences --------------------------------------------
    @staticmethod
    def window(
        f: Callable[[np.ndarray], np.ndarray], j_ref: int, a: int, b: int
    ) -> tuple[int, int]:
        """Index range [lo, hi] in [a, b] outside which a concave log-sequence f is negligible.

        Exponential search from ``j_ref``: the first probe with ``f < f(j_ref) - 60`` bounds the
        window; by concavity all terms beyond it decay at least geometrically from there.
        """
        right = j_ref + _OFFSETS
        right = right[right <= b]
        left = j_ref - _OFFSETS
        left = left[left >= a]
        pts = np.concatenate((np.array([j_ref], dtype=np.int64), right, left))
        vals = f(pts)
        thr = vals[0] - _WINDOW_DROP
        r_vals = vals[1 : 1 + right.size]
        l_vals = vals[1 + right.size :]
        r_below = np.nonzero(r_vals < thr)[0]
        l_below = np.nonzero(l_vals < thr)[0]
        hi = int(right[r_below[0]]) if r_below.size else b
        lo = int(left[l_below[0]]) if l_below.size else a
        return lo, hi

    # -- privacy profile ---------------------------------------------------------------------
    def log_delta(self, eps: float) -> float:
        """log delta(eps) by logsumexp of the positive Q-only terms (KOV Thm 3.3)."""
        n = self.n
        j_lo = self.first_above(eps)
        if j_lo > n:
            return -math.inf

        def terms(j: np.ndarray) -> np.ndarray:
            g = self.gap(j, eps)
            with np.errstate(invalid="ignore"):
                return np.where(g < 0.0, self.log_pmf(j) + _log1mexp(g), -np.inf)

        j_ref = min(max(j_lo + 1, self.mode), n)
        lo, hi = self.window(terms, j_ref, j_lo, n)
        return _chunked_logsumexp(terms, lo, hi)

    def log_shifted_tail(self, k: int) -> float:
        """log B'_k = log sum_{j>=k} Q(j) e^{-(s_j - s_k)} = log(e^{s_k} P(j >= k))."""

        def terms(j: np.ndarray) -> np.ndarray:
            return self.log_pmf(j) - (2 * (j - k)).astype(float) * self.eps0

        # P(j) = Bin(n, 1 - q) has its mode at n(1-q) <= n/2 < k: the terms decrease on [k, n].
        lo, hi = self.window(terms, k, k, self.n)
        return _chunked_logsumexp(terms, lo, hi)


def _profile(eps0: float, n: int, eps: object) -> tuple[np.ndarray, bool]:
    eps0 = check_positive("eps0", eps0)
    n = check_count("n", n, maximum=_MAX_N)
    e = as_float_array("eps", eps, nonnegative=True)
    comp = _RandomizedResponseComposition(eps0, n)
    uniq, inv = np.unique(e.ravel(), return_inverse=True)
    logs = np.array([comp.log_delta(float(u)) for u in uniq])
    return logs[inv].reshape(e.shape), e.ndim == 0


def pure_dp_log_delta(eps0: float, n: int, eps: float | np.ndarray) -> float | np.ndarray:
    r"""Natural log of :func:`pure_dp_delta`, finite where delta underflows (KOV Thm 3.3).

    Args:
        eps0: Per-step privacy parameter, finite and > 0.
        n: Number of composed steps, a whole number in [1, 10^15].
        eps: Privacy parameter(s), finite and >= 0 (scalar or array).

    Returns:
        log delta(eps) <= 0; ``-inf`` where delta(eps) = 0, i.e. eps >= n eps0.

    Raises:
        ValueError: if ``eps0``, ``n`` or any ``eps`` is out of range.
        NotApplicable: if the binomial sums would exceed their work bound (n q (1 - q) above
            ~1.9e8: many steps at a small eps0).
    """
    logs, scalar = _profile(eps0, n, eps)
    logs = np.minimum(logs, 0.0)
    return float(logs) if scalar else logs


def pure_dp_delta(eps0: float, n: int, eps: float | np.ndarray) -> float | np.ndarray:
    r"""Exact privacy profile of n-fold (eps0, 0)-DP composition (KOV Thm 3.3).

    .. math::

        \delta(\varepsilon) = \sum_{j:\,(2j-n)\varepsilon_0 > \varepsilon} Q(j)
            \bigl(1 - e^{\varepsilon - (2j-n)\varepsilon_0}\bigr),
        \qquad j \sim \mathrm{Bin}(n, \operatorname{expit}\varepsilon_0).

    Args:
        eps0: Per-step privacy parameter, finite and > 0.
        n: Number of composed steps, a whole number in [1, 10^15].
        eps: Privacy parameter(s), finite and >= 0 (scalar or array).

    Returns:
        delta(eps) in [0, 1], a float for scalar input else an array of the input's shape;
        exactly 0 for eps >= n eps0.

    Raises:
        ValueError: if ``eps0``, ``n`` or any ``eps`` is out of range.
        NotApplicable: if the binomial sums would exceed their work bound (n q (1 - q) above
            ~1.9e8: many steps at a small eps0).
    """
    logs, scalar = _profile(eps0, n, eps)
    out = np.minimum(np.exp(logs), 1.0)
    return float(out) if scalar else out


def pure_dp_epsilon(eps0: float, n: int, delta: float) -> float:
    r"""Smallest eps >= 0 with delta(eps) <= delta for n-fold (eps0, 0)-DP (KOV Thm 3.3).

    The profile is ``A_k - e^eps B_k`` between consecutive lattice points
    ``s_{k-1} <= eps <= s_k`` (``s_j = (2j - n) eps0``). The active segment is found by
    bisection over ``k`` on the exact profile at the lattice points and inverted in closed form,
    ``eps = log(A_k - delta) - log(B_k)``, evaluated as
    ``s_k + log1p(-(delta - delta(s_k)) / (e^{s_k} B_k))`` so that no difference of large tail
    sums is formed; then polished by Newton steps on ``log delta(eps)`` (slope
    ``d delta / d eps = -e^eps B_k``) using the positive-term sum.

    Args:
        eps0: Per-step privacy parameter, finite and > 0.
        n: Number of composed steps, a whole number in [1, 10^15].
        delta: Target delta in (0, 1).

    Returns:
        eps in [0, n eps0]; 0.0 when delta(0) <= delta already.

    Raises:
        ValueError: if ``eps0``, ``n`` or ``delta`` is out of range.
        NotApplicable: if the binomial sums would exceed their work bound (n q (1 - q) above
            ~1.9e8: many steps at a small eps0).
    """
    eps0 = check_positive("eps0", eps0)
    n = check_count("n", n, maximum=_MAX_N)
    delta = check_delta("delta", delta)
    comp = _RandomizedResponseComposition(eps0, n)
    log_t = math.log(delta)
    if comp.log_delta(0.0) <= log_t:
        return 0.0
    # delta(s_n) = 0 < delta; find the smallest k with delta(s_k) <= delta (bisection on k).
    k0 = comp.first_above(0.0)
    lo, hi = k0 - 1, n  # delta(max(s_lo, 0)) > delta >= delta(s_hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if comp.log_delta(comp.lattice(mid)) <= log_t:
            hi = mid
        else:
            lo = mid
    k = hi
    seg_lo = 0.0 if k == k0 else comp.lattice(k - 1)
    s_k = comp.lattice(k)
    # On [seg_lo, s_k]: delta(eps) = A_k - e^eps B_k = D_k + B'_k (1 - e^{eps - s_k}) with
    # D_k = delta(s_k) = A_k - B'_k and B'_k = e^{s_k} B_k (all positive sums), hence the
    # closed form eps = s_k + log1p(-(delta - D_k) / B'_k), free of the cancellation in A - e^eps B.
    log_dk = comp.log_delta(s_k)
    log_bp = comp.log_shifted_tail(k)
    log_num = log_t if log_dk == -math.inf else log_t + float(_log1mexp(np.array(log_dk - log_t)))
    r = log_num - log_bp
    x = float(_log1mexp(np.array(r))) if r < 0.0 else -math.inf
    eps = min(max(s_k + x, seg_lo), s_k)
    # Newton polish on g(eps) = log delta(eps) - log delta_target, using the positive-term sum;
    # g'(eps) = -e^eps B_k / delta(eps) = -e^{eps - s_k} B'_k / delta(eps).
    ld = comp.log_delta(eps)
    for _ in range(3):
        g = ld - log_t
        if not math.isfinite(g) or g == 0.0:
            break
        slope = -math.exp((eps - s_k) + log_bp - ld)
        if not (slope < 0.0 and math.isfinite(slope)):
            break
        cand = min(max(eps - g / slope, seg_lo), s_k)
        ld_cand = comp.log_delta(cand)
        if not abs(ld_cand - log_t) < abs(g):
            break
        eps, ld = cand, ld_cand
    return max(eps, 0.0)
