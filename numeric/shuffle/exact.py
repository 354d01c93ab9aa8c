r"""Exact one-epoch quantities of random allocation, with a stated (estimated) accuracy.

For the pair P = H0, Q = H1 (:mod:`numeric.mechanisms.random_allocation`) the likelihood ratio
is S/M; with :math:`A(\kappa) = E_P|S/M - \kappa|` (Fourier integral, :mod:`.law`) and E S = M:

* total variation :math:`TV = E|S - M|/(2M) = A(1)/2 = \delta(0)` (Ertan and van Dijk,
  arXiv:2610.09651);
* P = H0 first: :math:`\delta(\varepsilon) = E_{H0}(S/M - e^\varepsilon)_+ = (A(e^\varepsilon)
  + 1 - e^\varepsilon)/2`;
* P = H1 first (the swapped pair): :math:`\delta(\varepsilon) = E_{H1}(M/S - e^\varepsilon)_+ =
  E_{H0}(1 - e^\varepsilon S/M)_+ = e^\varepsilon (A(e^{-\varepsilon}) + e^{-\varepsilon} - 1)/2`;
* the trade-off curve of H0 vs H1 (Neyman-Pearson; reject H0 when S/M > kappa):
  :math:`\alpha = P(S/M > \kappa)`, :math:`\beta = E_{H0}[S/M; S/M \le \kappa] = \kappa F(\kappa)
  - E(\kappa - S/M)_+` with :math:`E(\kappa - S/M)_+ = (A(\kappa) + \kappa - 1)/2`.

At M = 1 the pair is the Gaussian mechanism with mu = 1/sigma and the closed forms are used
(TV = 2 Phi(mu/2) - 1, delta of Balle and Wang 2018, f = G_mu of Dong, Roth, Su 2022).
Each result carries ``accuracy``: the estimated absolute error of the quadrature (difference of
two Gauss-Legendre rules plus the truncated Fourier tail; :mod:`.law`), and ``derivation``.
These are accurate numerical values, not certified bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri

from .._validation import check_count, check_finite, check_positive
from ..errors import NotApplicable
from .law import kappa_range, one_epoch_law

__all__ = [
    "ORDERS",
    "ShuffleValue",
    "check_pair",
    "delta_from_law",
    "delta_one_epoch",
    "tradeoff_one_epoch",
    "tv_one_epoch",
]

ORDERS = ("P||Q", "Q||P")
FOURIER = "Fourier integral E|S/M - kappa| = 2/(pi M) int (1 - Re phi(w))/w^2 dw (arXiv:2610.09651)"
GAUSSIAN = "rounds = 1: the Gaussian mechanism, mu = 1/sigma (closed form)"


@dataclass(frozen=True)
class ShuffleValue:
    """A numerical value with its estimated absolute accuracy and how it was derived."""

    value: float
    accuracy: float
    derivation: str

    def __post_init__(self) -> None:
        if not (math.isfinite(self.value) and self.accuracy >= 0.0):
            raise ValueError(f"value must be finite and accuracy >= 0, got {self!r}")


def check_pair(sigma: object, rounds: object) -> tuple[float, int]:
    """Validate (sigma, rounds): sigma finite and >= 0.05, rounds a whole number in [1, 1e9]."""
    sigma = check_positive("sigma", sigma)
    if not (sigma >= 0.05):
        raise ValueError(f"sigma must be >= 0.05, got {sigma!r}")
    return sigma, check_count("rounds", rounds, maximum=10**9)


def _gauss_delta(mu: float, eps: float) -> float:
    """delta(eps) of mu-GDP (Balle and Wang 2018, Thm 8; GDP Cor. 2.13)."""
    return float(ndtr(-eps / mu + mu / 2) - math.exp(eps) * ndtr(-eps / mu - mu / 2))


def tv_one_epoch(sigma: float, rounds: int) -> ShuffleValue:
    r"""Total variation E|S - M|/(2M) between H0 and H1 for one epoch (module docstring).

    Raises:
        ValueError: for bad input. NotApplicable (BudgetExceeded): the Fourier rule would exceed
            its budget (small M with a heavy lognormal tail, sigma <~ 0.6).
    """
    sigma, rounds = check_pair(sigma, rounds)
    if rounds == 1:
        return ShuffleValue(float(2.0 * ndtr(0.5 / sigma) - 1.0), 1e-16, GAUSSIAN)
    law = one_epoch_law(sigma, rounds)
    a, err = law.mad(np.array([1.0]))
    return ShuffleValue(float(a[0] / 2.0), float(err[0] / 2.0 + 1e-16), FOURIER)


def delta_one_epoch(sigma: float, rounds: int, eps: float, order: str = "P||Q") -> ShuffleValue:
    r"""delta(eps) of one epoch in the pair order ``order`` (module docstring).

    Args:
        sigma: Noise multiplier (>= 0.05).
        rounds: M >= 1.
        eps: eps >= 0.
        order: ``"P||Q"`` (P = H0) or ``"Q||P"`` (P = H1).

    Returns:
        A :class:`ShuffleValue` (value clipped at 0; the accuracy is absolute).
    """
    sigma, rounds = check_pair(sigma, rounds)
    eps = check_finite("eps", eps)
    if not (eps >= 0.0):
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    if rounds == 1:
        return ShuffleValue(max(_gauss_delta(1.0 / sigma, eps), 0.0), 1e-15, GAUSSIAN)
    spread = math.expm1(eps) if order == "P||Q" else -math.expm1(-eps)
    return delta_from_law(one_epoch_law(sigma, rounds, spread), eps, order)


def delta_from_law(law, eps: float, order: str) -> ShuffleValue:
    """:func:`delta_one_epoch` on a given :class:`~.law.OneEpochLaw` (whose spread covers
    e^eps - 1 resp. 1 - e^-eps)."""
    if order == "P||Q":
        kappa = math.exp(eps)
        a, err = law.mad(np.array([kappa]))
        val = 0.5 * (float(a[0]) + 1.0 - kappa)
        acc = 0.5 * float(err[0]) + 1e-16 * kappa
    else:
        kappa = math.exp(-eps)
        a, err = law.mad(np.array([kappa]))
        val = 0.5 * (float(a[0]) + kappa - 1.0) / kappa
        acc = (0.5 * float(err[0]) + 1e-16) / kappa
    return ShuffleValue(max(val, 0.0), acc, FOURIER)


def tradeoff_one_epoch(sigma: float, rounds: int, alpha) -> tuple[np.ndarray, float]:
    r"""The trade-off curve f(alpha) of H0 vs H1 for one epoch (module docstring).

    Solves P(S/M > kappa) = alpha for kappa (safeguarded Newton with the density, 60 steps at
    most, on the bracket of :func:`kappa_range`) and returns beta(kappa).

    Args:
        sigma: Noise multiplier; rounds: M.
        alpha: Type-I errors in [1e-12, 1] (array-like).

    Returns:
        ``(f, accuracy)``: f(alpha) (array) and the estimated absolute accuracy.

    Raises:
        ValueError: for alpha outside [1e-12, 1]; NotApplicable for a rule over budget.
    """
    sigma, rounds = check_pair(sigma, rounds)
    alpha = np.atleast_1d(np.asarray(alpha, dtype=float))
    if not np.all((alpha >= 1e-12) & (alpha <= 1.0)):
        raise ValueError(f"alpha must lie in [1e-12, 1], got {alpha!r}")
    if rounds == 1:  # f = G_mu (GDP Eq. 6)
        mu = 1.0 / sigma
        return ndtr(-ndtri(alpha) - mu), 1e-15
    lo, hi = kappa_range(sigma, rounds, float(max(alpha.min(), 1e-12)) * 0.5)
    law = one_epoch_law(sigma, rounds, max(hi - 1.0, 1.0 - lo))
    lo = np.full(alpha.size, 1.0 - law.spread)
    hi = np.full(alpha.size, 1.0 + law.spread)
    kap = np.clip(np.ones(alpha.size), lo, hi)
    target = 1.0 - alpha
    for _ in range(60):
        f, _ = law.cdf(kap)
        too_big = f > target
        hi = np.where(too_big, kap, hi)
        lo = np.where(too_big, lo, kap)
        dens = law.density(kap)
        newton = kap - (f - target) / np.where(dens > 0, dens, np.inf)
        ok = (newton > lo) & (newton < hi) & np.isfinite(newton)
        kap_new = np.where(ok, newton, 0.5 * (lo + hi))
        if np.all(np.abs(kap_new - kap) <= 1e-13 * kap):
            kap = kap_new
            break
        kap = kap_new
    if np.any(alpha < 1.0) and np.any(hi[alpha < 1.0] >= 1.0 + law.spread * (1 - 1e-12)):
        raise NotApplicable("trade-off: the quantile lies beyond the Fourier rule's range")
    f, ferr = law.cdf(kap)
    a, aerr = law.mad(kap)
    beta = kap * f - 0.5 * (a + kap - 1.0)
    beta = np.where(alpha >= 1.0, 0.0, np.clip(beta, 0.0, 1.0 - alpha))
    acc = float(np.max(kap * ferr + 0.5 * aerr)) + 1e-15
    return beta, acc
