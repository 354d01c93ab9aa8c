r"""E epochs of random allocation: the one-epoch privacy-loss law on a grid, composed by FFT.

The privacy loss of one epoch is L = log(S/M) (:mod:`numeric.mechanisms.random_allocation`).
We cut the range of L into cells of width Delta (centres ell_k = ell_lo + k Delta), and take
each cell's exact masses under both hypotheses from the Fourier quadrature (:mod:`.law`):
:math:`p_k = P(L \in \text{cell}) = F(e^{b_{k+1}}) - F(e^{b_k})` and
:math:`q_k = Q(L \in \text{cell}) = G(e^{b_{k+1}}) - G(e^{b_k})` with
:math:`G(\kappa) = E_P[S/M; S/M \le \kappa] = \kappa F(\kappa) - (A(\kappa) + \kappa - 1)/2`.
The cell index is a post-processing of one epoch's outcome, so the discrete pair (p, q) is
dominated by (H0, H1), and so is its E-fold composition: the composed cell index is the sum of
the indices, whose laws are the E-fold convolutions of p and of q (computed by one FFT each,
the way PLD accountants compose; Koskela, Jalko, Honkela, AISTATS 2020). Its hockey-stick
divergence :math:`\delta_\Delta(\varepsilon) = \sum_j (q^{*E}_j - e^\varepsilon p^{*E}_j)_+`
is therefore <= the true delta(eps) (data processing; up to the quadrature error of the masses)
and converges to it as Delta -> 0. The swapped order uses
:math:`\sum_j (p^{*E}_j - e^\varepsilon q^{*E}_j)_+`.

Accuracy. The reported value uses cells of width Delta = sd(L)/``cells_per_sd``; the same masses
merged in pairs (width 2 Delta) give a second value, and the stated accuracy is twice their
difference (for E >= 2 the difference falls like Delta^2, 4x per halving, in our
measurements, so this over-states the error about 6x), plus for E = 1 the mass of the cells
within Delta/2 of eps (merging does not see the cell that straddles eps), plus E times the
mass left outside the grid (whose loss is counted as infinite, i.e. added to delta). This is
an estimate of the error, not a bound (benchmarks/bench_shuffle.py measures it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_count
from ..errors import BudgetExceeded
from .exact import check_pair
from .law import kappa_range, one_epoch_law

__all__ = ["MAX_FFT", "ComposedLoss", "composed_loss"]

MAX_FFT = 1 << 24
"""Budget: the longest FFT (cells x epochs)."""

_TAIL = 1e-14


@dataclass(frozen=True)
class ComposedLoss:
    """The E-fold composed discrete pair on two grids (width Delta and 2 Delta).

    Attributes:
        p, q: composed masses (width Delta); ``p2, q2`` on width 2 Delta.
        tail_q, tail_p: mass of one epoch outside the grid under Q above, under P below.
        epochs: E; delta_l: Delta; ``origin``: loss value of index 0.
    """

    p: np.ndarray = field(repr=False)
    q: np.ndarray = field(repr=False)
    p2: np.ndarray = field(repr=False)
    q2: np.ndarray = field(repr=False)
    origin: float
    origin2: float
    delta_l: float
    epochs: int
    tail_q: float
    tail_p: float
    quad_error: float

    @staticmethod
    def _hockey(a: np.ndarray, b: np.ndarray, eps: float) -> float:
        return float(np.sum(np.maximum(a - math.exp(eps) * b, 0.0)))

    def delta(self, eps: float, order: str = "P||Q") -> tuple[float, float]:
        r"""(delta(eps), estimated accuracy) in pair order ``order`` (module docstring)."""
        if order == "P||Q":
            d1 = self._hockey(self.q, self.p, eps)
            d2 = self._hockey(self.q2, self.p2, eps)
            tail = self.epochs * self.tail_q
        else:
            d1 = self._hockey(self.p, self.q, eps)
            d2 = self._hockey(self.p2, self.q2, eps)
            tail = self.epochs * self.tail_p
        value = min(d1 + tail, 1.0)
        straddle = self._straddle(eps, order) if self.epochs == 1 else 0.0
        return value, 2.0 * abs(d1 - d2) + straddle + tail + self.quad_error

    def _straddle(self, eps: float, order: str) -> float:
        r"""sum |q_j - e^eps p_j| over the composed cells within E Delta / 2 of eps: the within-cell
        spread of the composed loss is <= E Delta, so only these cells can sit on the wrong side
        of eps (merging cells in pairs does not see this error when eps falls inside a pair)."""
        a, b = (self.q, self.p) if order == "P||Q" else (self.p, self.q)
        sign = 1.0 if order == "P||Q" else -1.0
        half = 0.5 * self.epochs * self.delta_l
        j0 = math.floor((sign * eps - half - self.origin) / self.delta_l)
        j1 = math.ceil((sign * eps + half - self.origin) / self.delta_l)
        j0, j1 = max(j0, 0), min(j1 + 1, a.size)
        if j1 <= j0:
            return 0.0
        return float(np.sum(np.abs(a[j0:j1] - math.exp(eps) * b[j0:j1])))

    def epsilon(self, delta: float, order: str = "P||Q") -> tuple[float, float]:
        """(eps(delta), estimated accuracy) by bisection on the discrete delta (100 steps)."""
        def f(e: float) -> float:
            return self.delta(e, order)[0]

        if f(0.0) <= delta:
            return 0.0, 0.0
        hi = _smallest_eps_at_most(f, delta, 1.0)
        if hi == math.inf:
            return math.inf, 0.0
        # accuracy in eps: the delta accuracy over the slope -d delta/d eps = e^eps P(L > eps)
        d_hi, acc = self.delta(hi, order)
        slope = (f(hi * (1 - 1e-3)) - d_hi) / (hi * 1e-3) if hi > 0 else 0.0
        eps_acc = acc / slope if slope > 0 else math.inf
        # and the eps-difference between the two grids
        other = _eps_on(self.q2 if order == "P||Q" else self.p2,
                        self.p2 if order == "P||Q" else self.q2, delta, hi)
        return hi, max(eps_acc, 2.0 * abs(other - hi))


def _smallest_eps_at_most(f, delta: float, start: float) -> float:
    """Smallest eps >= 0 (to 1e-12 relative, from above) with ``f(eps) <= delta`` for a
    non-increasing f, bracketing from ``start`` by at most 60 doublings; inf if none brackets."""
    hi = start
    for _ in range(60):
        if f(hi) <= delta:
            break
        hi *= 2.0
    else:
        return math.inf
    lo = 0.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if f(mid) <= delta:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-12 * hi:
            break
    return hi


def _eps_on(a: np.ndarray, b: np.ndarray, delta: float, start: float) -> float:
    def f(e: float) -> float:
        return float(np.sum(np.maximum(a - math.exp(e) * b, 0.0)))

    return _smallest_eps_at_most(f, delta, max(start, 1e-6))


def _cdf_and_partial_mean(sigma: float, rounds: int, kap: np.ndarray, sd: float):
    r"""F(k) = P(S/M <= k) and G(k) = E[S/M; S/M <= k] at the increasing points ``kap``.

    The bulk (k <= 1 + 12 sd(S/M), or e^{12 sd} in log scale) uses a Fourier rule resolving only
    the bulk; the right tail beyond it, where both laws decay smoothly in log k, uses the rule
    resolving the whole range at every 16th point and the last, and interpolates log(1 - F) and
    log(1 - G) linearly in log k in between (the tail masses are < 1e-6 there, so the
    interpolation error is far below the stated accuracy). Returns (F, G, F error, MAD error).
    """
    edge = min(math.exp(12.0 * sd), float(kap[-1]))
    bulk = kap <= edge
    f = np.empty(kap.size)
    g = np.empty(kap.size)

    def evaluate(law, k):
        ff, fe = law.cdf(k)
        aa, ae = law.mad(k)
        return ff, np.clip(k * ff - 0.5 * (aa + k - 1.0), 0.0, 1.0), float(np.max(fe) * k[-1]), \
            float(np.max(ae))

    kb = kap[bulk]
    law_b = one_epoch_law(sigma, rounds, max(float(kb[-1]) - 1.0, 1.0 - float(kb[0])))
    f[bulk], g[bulk], ferr, aerr = evaluate(law_b, kb)
    tail = np.flatnonzero(~bulk)
    if tail.size:
        law_t = one_epoch_law(sigma, rounds, max(float(kap[-1]) - 1.0, 1.0 - float(kap[0])))
        pick = np.unique(np.concatenate([tail[::16], tail[-1:]]))
        fe_, ge_, e1, e2 = evaluate(law_t, kap[pick])
        ferr, aerr = max(ferr, e1), max(aerr, e2)
        x = np.log(kap[pick])
        with np.errstate(divide="ignore"):
            f[tail] = 1.0 - np.exp(np.interp(np.log(kap[tail]), x, np.log(1.0 - fe_)))
            g[tail] = 1.0 - np.exp(np.interp(np.log(kap[tail]), x, np.log(1.0 - ge_)))
    return np.maximum.accumulate(f), np.maximum.accumulate(g), ferr, aerr


def _power(x: np.ndarray, epochs: int, size: int) -> np.ndarray:
    out = np.fft.irfft(np.fft.rfft(x, size) ** epochs, size)[: epochs * (x.size - 1) + 1]
    return np.maximum(out, 0.0)


def composed_loss(sigma: float, rounds: int, epochs: int, cells_per_sd: int = 200
                  ) -> ComposedLoss:
    r"""The E-fold composition of the one-epoch pair on a loss grid (module docstring).

    Args:
        sigma: Noise multiplier (>= 0.05); rounds: M (>= 2); epochs: E (>= 1).
        cells_per_sd: Cells per standard deviation of one epoch's L under P (>= 20).

    Returns:
        A :class:`ComposedLoss`.

    Raises:
        ValueError: for bad input. BudgetExceeded: FFT or Fourier rule over budget.
    """
    sigma, rounds = check_pair(sigma, rounds)
    epochs = check_count("epochs", epochs, maximum=10**6)
    cells_per_sd = check_count("cells_per_sd", cells_per_sd, minimum=20, maximum=10**5)
    if rounds < 2:
        raise ValueError("rounds must be >= 2 here (rounds = 1 is the Gaussian mechanism)")
    klo, khi = kappa_range(sigma, rounds, _TAIL)
    lo, hi = math.log(klo), math.log(khi)
    sd = math.sqrt(math.log1p(math.expm1(1.0 / sigma**2) / rounds))  # sd of log S/M, lognormal fit
    step = sd / cells_per_sd
    n = 2 * math.ceil(0.5 * (hi - lo) / step)  # even: cells merge in pairs
    if (n - 1) * epochs + 1 > MAX_FFT or n > 2_000_000:
        raise BudgetExceeded(f"the loss grid needs {n} cells x {epochs} epochs, over the FFT "
                             f"budget {MAX_FFT}; lower cells_per_sd or epochs")
    edges = lo + step * np.arange(n + 1)
    kap = np.exp(edges)
    f, g, ferr, aerr = _cdf_and_partial_mean(sigma, rounds, kap, sd)
    p = np.maximum(np.diff(f), 0.0)
    q = np.maximum(np.diff(g), 0.0)
    tail_p = float(f[0])  # P(L < lo): its loss for the swapped order is counted as infinite
    tail_q = float(1.0 - g[-1])  # Q(L > hi)
    p[0] += tail_p  # keep the mass (its loss under P||Q is bounded by lo's)
    quad = float(ferr + aerr) * epochs
    size = 1 << math.ceil(math.log2(epochs * (n - 1) + 1))
    p2, q2 = p.reshape(-1, 2).sum(axis=1), q.reshape(-1, 2).sum(axis=1)
    size2 = 1 << math.ceil(math.log2(epochs * (n // 2 - 1) + 1))
    return ComposedLoss(
        p=_power(p, epochs, size), q=_power(q, epochs, size),
        p2=_power(p2, epochs, size2), q2=_power(q2, epochs, size2),
        origin=epochs * (lo + 0.5 * step), origin2=epochs * (lo + step), delta_l=step,
        epochs=epochs, tail_q=max(tail_q, 0.0), tail_p=max(tail_p, 0.0), quad_error=quad,
    )
