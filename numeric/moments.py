r"""Moments-to-cumulants conversion and fixed-order quadrature helpers.

Cumulants from central moments use the standard recursion (e.g. Stuart & Ord, *Kendall's Advanced
Theory of Statistics* vol. 1, Eq. 3.38, with kappa_1 = 0 for central moments):

.. math::

    \kappa_n = \mu_n - \sum_{k=2}^{n-2} \binom{n-1}{k-1} \kappa_k\, \mu_{n-k}, \qquad n \ge 2,

after which kappa_1 is the mean. Working with central moments avoids the cancellation that raw
moments suffer when the mean is large relative to the spread.
"""

from __future__ import annotations

import functools
from math import comb

import numpy as np

__all__ = ["cumulants_from_central_moments", "gauss_legendre_panels"]


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
