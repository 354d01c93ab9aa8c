r"""Moments-to-cumulants conversion and fixed-order quadrature helpers.

Cumulants from central moments use the standard recursion (e.g. Stuart & Ord, *Kendall's Advanced
Theory of Statistics* vol. 1, Eq. 3.38, with kappa_1 = 0 for central moments):

.. math::

    \kappa_n = \mu_n - \sum_{k=2}^{n-2} \binom{n-1}{k-1} \kappa_k\, \mu_{n-k}, \qquad n \ge 2,

after which kappa_1 is the mean. Working with central moments avoids the cancellation that raw
moments suffer when the mean is large relative to the spread. :func:`cumulants_from_weights` and
:func:`tilted_cumulants` apply it to batches of discrete (or quadrature-discretized) laws, e.g.
the exponentially tilted laws whose cumulants are the derivatives of a CGF (:mod:`numeric.cgf`).
"""

from __future__ import annotations

import functools
from math import comb

import numpy as np

__all__ = [
    "cumulants_from_central_moments",
    "cumulants_from_weights",
    "gauss_legendre_panels",
    "tilted_cumulants",
]

_COMB = [[float(comb(k, j)) for j in range(k + 1)] for k in range(32)]


def cumulants_from_central_moments(mean: float, central: np.ndarray) -> np.ndarray:
    """Return ``[kappa_1, ..., kappa_r]`` from the mean and central moments ``mu_1..mu_r``.

    Args:
        mean: The first cumulant (the mean).
        central: Central moments ``[mu_1, mu_2, ..., mu_r]`` (``mu_1`` is ignored; it is 0).

    Returns:
        Array of the first ``r`` cumulants.
    """
    mu = np.concatenate([[1.0], np.asarray(central, dtype=float)])
    r = len(mu) - 1
    kappa = np.zeros(r + 1)
    for n in range(2, r + 1):
        acc = mu[n]
        for k in range(2, n - 1):
            acc -= comb(n - 1, k - 1) * kappa[k] * mu[n - k]
        kappa[n] = acc
    kappa[1] = mean
    return kappa[1:]


@functools.lru_cache(maxsize=16)
def _leggauss(nodes: int) -> tuple[np.ndarray, np.ndarray]:
    t, w = np.polynomial.legendre.leggauss(nodes)
    t.setflags(write=False)
    w.setflags(write=False)
    return t, w


for _nodes in (16, 24):  # the rules the mechanisms use: constants, computed once at import
    _leggauss(_nodes)
del _nodes


def gauss_legendre_panels(a: float, b: float, panels: int, nodes: int = 24):
    """Nodes and weights of a composite Gauss-Legendre rule on ``[a, b]``.

    Args:
        a: Left end.
        b: Right end (> a).
        panels: Number of equal panels (>= 1).
        nodes: Gauss-Legendre nodes per panel.

    Returns:
        ``(x, w)`` arrays such that ``sum(w * f(x))`` approximates the integral.
    """
    t, wt = _leggauss(nodes)  # cached: leggauss costs ~0.3 ms per call
    edges = np.linspace(a, b, panels + 1)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[:-1] + edges[1:])
    x = (mid[:, None] + half[:, None] * t[None, :]).ravel()
    w = (half[:, None] * wt[None, :]).ravel()
    return x, w


def cumulants_from_weights(values: np.ndarray, w: np.ndarray, n: int) -> np.ndarray:
    r"""Cumulants 1..n (columns) of the discrete laws ``values`` ~ ``w[i]`` (one law per row).

    Central moments by one weighted sum over the stacked powers of the deviations, then
    :math:`\kappa_k = \mu_k - \sum_j \binom{k-1}{j-1}\kappa_j\mu_{k-j}` (module docstring;
    Stuart & Ord, Eq. 3.38).

    Args:
        values: Support points, shared by the rows (1-D) or one row each (2-D).
        w: Normalized weights, one law per row (2-D).
        n: Highest cumulant order, 1 <= n <= 31.

    Returns:
        Array of shape (rows, n): kappa_1..kappa_n of each row's law.
    """
    mean = w @ values if values.ndim == 1 else np.einsum("rn,rn->r", w, values)
    if n == 1:
        return mean[:, None]
    dev = values - mean[:, None]
    power = np.empty((dev.shape[0], n - 1, dev.shape[1]))
    np.multiply(dev, dev, out=power[:, 0])
    for k in range(1, n - 1):
        np.multiply(power[:, k - 1], dev, out=power[:, k])
    mu = (power @ w[:, :, None])[:, :, 0]  # central moments mu_2 .. mu_n (columns)
    out = np.empty((dev.shape[0], n))
    out[:, 0] = mean
    out[:, 1:4] = mu[:, :3]  # kappa_2, kappa_3 = mu_2, mu_3 (and mu_4 corrected below)
    for k in range(4, n + 1):
        acc = mu[:, k - 2].copy()
        for j in range(2, k - 1):
            acc -= _COMB[k - 1][j - 1] * out[:, j - 1] * mu[:, k - j - 2]
        out[:, k - 1] = acc
    return out


def tilted_cumulants(values: np.ndarray, logw: np.ndarray, n: int) -> tuple[np.ndarray,
                                                                               np.ndarray]:
    """Log total weight and cumulants 1..n of the discrete laws ``values`` ~ e^logw[i].

    The weights are taken relative to each row's largest (no overflow), so the cumulants of an
    exponentially tilted discrete law come out at any tilt.

    Args:
        values: Support points, shared by the rows (1-D) or one row each (2-D).
        logw: Unnormalized log weights, one law per row (2-D).
        n: Highest cumulant order, 1 <= n <= 31.

    Returns:
        ``(log_total, kappa)``: log of each row's total weight and an array (rows, n) of its
        cumulants.
    """
    top = logw.max(axis=1)
    w = np.exp(logw - top[:, None])
    total = w.sum(axis=1)
    w /= total[:, None]
    return top + np.log(total), cumulants_from_weights(values, w, n)
