r"""The Poisson-subsampled Gaussian mechanism (one DP-SGD step).

With noise multiplier sigma and rate p, mu = 1/sigma, the dominating pair is P = N(0, 1),
Q = (1 - p) N(0, 1) + p N(mu, 1), with PLLR (MATH.md section 4; Mironov, Talwar, Zhang 2019;
Zhu, Dong, Wang 2022)

.. math::

    L(x) = \log\bigl(1 - p + p\, e^{\mu x - \mu^2/2}\bigr) = \operatorname{log1p}\bigl(p\,
    \operatorname{expm1}(\mu x - \mu^2/2)\bigr).

The pair is *not* symmetric: both orders (P, Q) and (Q, P) are accounted for and the larger
privacy loss is reported. No closed form exists for the cumulants. We integrate central moments
with a composite Gauss-Legendre rule on [-40, mu + 40] (panel width <= min(1/2, 1/mu), which
resolves the transition of L near x = mu/2 + log((1-p)/p)/mu, whose complex singularities lie at
distance pi/mu from the real axis) and check the rule against a second, coarser one.

Tail control: outside [-40, mu + 40] both P and Q have mass below 2 * Phi(-40) < 1e-348, and
|L(x)| <= max(-log(1-p), mu |x|), so the neglected part of every moment of order <= 16 is below
1e-300 -- far below rounding. Identity checks (tested): E_P[e^L] = 1 (K_X(1) = 0) and the exact
integer moments E_P[e^{kL}] = sum_j C(k,j) (1-p)^{k-j} p^j e^{j(j-1) mu^2/2}.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .._validation import check_positive, check_rate
from ..moments import cumulants_from_central_moments, gauss_legendre_panels
from .base import Mechanism, PLLRCumulants, register_mechanism

__all__ = ["PoissonSubsampledGaussian", "subsampled_gaussian_pllr"]

_TAIL = 40.0
_MAX_ORDER = 16


def subsampled_gaussian_pllr(x: np.ndarray, mu: float, rate: float) -> np.ndarray:
    """L(x) = log(1 - p + p exp(mu x - mu^2/2)), stable for all x (no overflow, no cancellation).

    Args:
        x: Points (standardized noise scale).
        mu: 1/sigma.
        rate: Sampling rate p in (0, 1].

    Returns:
        The PLLR at ``x``.
    """
    u = mu * np.asarray(x, dtype=float) - 0.5 * mu * mu
    log1m = math.log1p(-rate) if rate < 1.0 else -math.inf
    if rate > 0.5:  # log1p(p expm1(u)) would cancel as p expm1(u) -> -1
        return np.logaddexp(log1m, math.log(rate) + u)
    small = u < 0.0
    out = np.empty_like(u)
    out[small] = np.log1p(rate * np.expm1(u[small]))
    out[~small] = np.logaddexp(log1m, math.log(rate) + u[~small])
    return out


def _log1p_minus_x(w: np.ndarray) -> np.ndarray:
    """log1p(w) - w without cancellation: series sum_{k>=2} (-1)^{k+1} w^k / k for |w| < 1e-2."""
    out = np.log1p(w) - w
    s = np.abs(w) < 1e-2
    ws = w[s]
    acc = np.zeros_like(ws)
    for k in range(9, 1, -1):  # Horner; truncation < |w|^10 / 10, below 1e-16 relative
        acc = ws * (acc + (-1.0) ** (k + 1) / k)
    out[s] = ws * acc
    return out


def _xlog1p_minus_x(w: np.ndarray) -> np.ndarray:
    """(1 + w) log1p(w) - w = sum_{k>=2} (-1)^k w^k / (k (k - 1)), series for |w| < 1e-2."""
    out = (1.0 + w) * np.log1p(w) - w
    s = np.abs(w) < 1e-2
    ws = w[s]
    acc = np.zeros_like(ws)
    for k in range(9, 1, -1):
        acc = ws * (acc + (-1.0) ** k / (k * (k - 1)))
    out[s] = ws * acc
    return out


def _rule(mu: float, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    width = min(0.5, 1.0 / mu)
    a, b = -_TAIL, mu + _TAIL
    panels = math.ceil((b - a) / width)
    return gauss_legendre_panels(a, b, panels, nodes)


def _central_cumulants(
    values: np.ndarray, weights: np.ndarray, order: int, mean: float | None = None
) -> np.ndarray:
    if mean is None:
        mean = float(np.dot(weights, values))
    dev = values - mean
    central = np.empty(order)
    power = np.ones_like(dev)
    for k in range(order):
        power = power * dev
        central[k] = float(np.dot(weights, power))
    return cumulants_from_central_moments(mean, central)


def _quadrature_cumulants(mu: float, rate: float, order: int, nodes: int):
    x, w = _rule(mu, nodes)
    phi = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    wp = w * phi
    wq = w * ((1.0 - rate) * phi + rate * np.exp(-0.5 * (x - mu) ** 2) / math.sqrt(2.0 * math.pi))
    L = subsampled_gaussian_pllr(x, mu, rate)
    if rate >= 0.1:  # the means are O(p^2) against terms O(p): no significant cancellation
        return _central_cumulants(L, wp, order), _central_cumulants(L, wq, order)
    mean_x, mean_y = _means(x, w, mu, rate, L)
    return (_central_cumulants(L, wp, order, mean_x), _central_cumulants(L, wq, order, mean_y))


def _means(x: np.ndarray, w: np.ndarray, mu: float, rate: float, L: np.ndarray):
    r"""E_P[L] = -KL(P||Q) and E_Q[L] = KL(Q||P) without the cancellation of small rates.

    With v = p expm1(u), u = mu x - mu^2/2, E_P[v] = 0 exactly, so
    E_P[L] = E_P[log1p(v) - v] and E_Q[L] = E_P[(1 + v) L] = E_P[(1 + v) log1p(v) - v]; the
    integrands are O(v^2) pointwise and keep full relative precision when p is tiny (a direct
    integral of L ~ v would lose a factor 1/p). Where u > 50 (v huge, no cancellation) the terms
    are integrated directly with v phi(x) = p (phi(x - mu) - phi(x)), which cannot overflow.
    """
    phi = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    phi_mu = np.exp(-0.5 * (x - mu) ** 2) / math.sqrt(2.0 * math.pi)
    u = mu * x - 0.5 * mu * mu
    near = u <= 50.0
    v = rate * np.expm1(np.minimum(u, 50.0))
    gx = np.where(near, _log1p_minus_x(v), 0.0)
    gy = np.where(near, _xlog1p_minus_x(v), 0.0)
    far = ~near
    vphi = rate * (phi_mu[far] - phi[far])
    mean_x = float(np.dot(w * phi, gx) + np.dot(w[far], L[far] * phi[far] - vphi))
    qphi = (1.0 - rate) * phi[far] + rate * phi_mu[far]
    mean_y = float(np.dot(w * phi, gy) + np.dot(w[far], L[far] * qphi - vphi))
    return mean_x, mean_y


@lru_cache(maxsize=256)
def _cached_cumulants(mu: float, rate: float, order: int) -> tuple[tuple, tuple]:
    kx, ky = _quadrature_cumulants(mu, rate, order, 24)
    cx, cy = _quadrature_cumulants(mu, rate, order, 16)
    # Tolerance per order: 1e-9 relative, or 1e-12 in standardized units (kappa_k / kappa_2^{k/2})
    # for cumulants that vanish (rate = 1 gives kappa_{>=3} = 0).
    k = np.arange(1, order + 1)
    unit = np.maximum(kx[1] if order > 1 else abs(kx[0]), 1e-300) ** (k / 2.0)
    scale = np.maximum(np.abs(kx), np.abs(ky))
    err = np.maximum(np.abs(kx - cx), np.abs(ky - cy))
    if not np.all(err <= 1e-9 * scale + 1e-12 * unit):
        worst = float(np.max(err / np.maximum(scale, 1e-300)))
        raise ValueError(
            f"quadrature for the subsampled Gaussian (sigma={1 / mu!r}, rate={rate!r}) did not "
            f"converge: relative disagreement {worst:.2e} between rules at order {order}"
        )
    return tuple(kx.tolist()), tuple(ky.tolist())


@register_mechanism(
    "subsampled-gaussian", {"sigma": "sigma", "rate": "rate"}, required=("sigma", "rate")
)
@dataclass(frozen=True)
class PoissonSubsampledGaussian(Mechanism):
    """One DP-SGD step: Gaussian noise multiplier ``sigma``, Poisson sampling ``rate``.

    Args:
        sigma: Noise multiplier (noise std / clipping norm), finite and > 0.
        rate: Poisson sampling rate in (0, 1].
    """

    sigma: float
    rate: float
    symmetric = False
    max_order = _MAX_ORDER

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive("sigma", self.sigma))
        object.__setattr__(self, "rate", check_rate("rate", self.rate))
        if self.sigma < 0.05:
            raise ValueError(f"sigma must be >= 0.05 for quadrature cumulants, got {self.sigma!r}")

    @property
    def mu(self) -> float:
        """mu = 1/sigma."""
        return 1.0 / self.sigma

    def _cumulants(self, order: int) -> PLLRCumulants:
        # one quadrature serves every order up to 6 (the cache is keyed by the order computed)
        kx, ky = _cached_cumulants(self.mu, self.rate, max(order, 6))
        return PLLRCumulants(x=kx[:order], y=ky[:order])

    def exact_family(self) -> tuple[str, float] | None:
        return ("gaussian", self.mu**2) if self.rate == 1.0 else None

    def clt_mu_squared(self) -> float:
        """p^2 (e^{mu^2} - 1) (Bu, Dong, Long, Su 2020, Thm 5)."""
        return self.rate**2 * math.expm1(self.mu**2)
