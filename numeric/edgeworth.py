r"""Edgeworth expansions of a standardized PLLR sum and their closed-form Q-only delta.

Standardize S with z = (s - K1)/sigma, sigma^2 = K2, lambda_j = K_j / K2^{j/2} (summed cumulants).
The Edgeworth density of order r is g(z) = phi(z) [1 + sum_k c_k He_k(z)] with probabilists'
Hermite polynomials He_k, and the CDF is G(z) = Phi(z) - phi(z) sum_k c_k He_{k-1}(z)
(Hall, *The Bootstrap and Edgeworth Expansion*, 1992, Section 2.2; Petrov 1975, Ch. VI;
Wang et al., arXiv:2206.04236, Eq. (3.3)-(3.4)). Orders 1 and 2 (docs/math.md section 3):

* order 1: c_3 = lambda_3/6;
* order 2: c_3 = lambda_3/6, c_4 = lambda_4/24, c_6 = lambda_3^2/72.

Higher orders plug in through :func:`register_series_order` (derive generates them).

**Q-only delta** (this project's AEA, docs/math.md section 3): with eps = K1 + sigma z0 and
a = z0 + sigma,

.. math::

    \delta_G(\varepsilon) = \int_{z_0}^\infty \bigl(1 - e^{-\sigma (z - z_0)}\bigr) g(z)\,dz
      = H(z_0, \sigma) + \sum_k c_k T_k,

    T_k = \varphi(z_0)\Bigl[He_{k-1}(z_0)
          - \sum_{j=1}^{k} \binom{k}{j} (-\sigma)^{k-j} He_{j-1}(a)\Bigr]
          - (-\sigma)^k e^{\sigma z_0 + \sigma^2/2}\, \bar\Phi(a),

using e^{-sigma z} phi(z) = e^{sigma^2/2} phi(z + sigma), the Appell identity
He_k(w - sigma) = sum_j C(k, j) He_j(w) (-sigma)^{k-j}, and int_a^inf phi He_j = phi(a) He_{j-1}(a).
H is the normal hockey stick (:func:`numeric.special.normal_hockey_stick`) and
e^{sigma z0 + sigma^2/2} Phibar(a) = phi(z0) R(a) with the Mills ratio R, so every term carries the
factor phi(z0) and nothing overflows. The result is an *approximation* of delta, not a bound.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from math import comb

import numpy as np
from scipy import special

from .errors import NotApplicable
from .special import SQRT_2PI, normal_hockey_stick

_SQRT_HALF = float(np.sqrt(0.5))

__all__ = [
    "SERIES_ORDERS",
    "edgeworth_cdf",
    "edgeworth_sf",
    "hermite_e",
    "q_only_delta",
    "register_series_order",
    "series_coefficients",
    "standardize",
]

SeriesFn = Callable[[dict[int, float]], dict[int, float]]
SERIES_ORDERS: dict[int, tuple[int, SeriesFn]] = {}


def register_series_order(order: int, cumulants_needed: int, fn: SeriesFn) -> None:
    """Register the density coefficients ``{k: c_k}`` of Edgeworth order ``order``.

    Args:
        order: Expansion order r (terms up to m^{-r/2}).
        cumulants_needed: Highest cumulant order the coefficients use (r + 2).
        fn: Map from standardized cumulants ``{j: lambda_j}`` to ``{k: c_k}``.
    """
    SERIES_ORDERS[order] = (cumulants_needed, fn)


register_series_order(0, 2, lambda lam: {})
register_series_order(1, 3, lambda lam: {3: lam[3] / 6.0})
register_series_order(
    2, 4, lambda lam: {3: lam[3] / 6.0, 4: lam[4] / 24.0, 6: lam[3] ** 2 / 72.0}
)


def standardize(kappas: np.ndarray) -> tuple[float, float, dict[int, float]]:
    """Return ``(K1, sigma, {j: lambda_j})`` from summed cumulants ``[K1, K2, ...]``.

    Raises:
        ValueError: if fewer than two cumulants are given.
        NotApplicable: if K2 is not positive and finite (computed cumulants of valid input,
            e.g. a quadrature variance lost to rounding at a small subsampled-Gaussian sigma;
            found by the fuzz): the Edgeworth expansion cannot be standardized.
    """
    k = np.asarray(kappas, dtype=float)
    if len(k) < 2:
        raise ValueError(f"need the cumulants K1 and K2, got {len(k)}")
    if not (k[1] > 0.0 and np.isfinite(k[1])):
        raise NotApplicable(f"the PLLR variance K2 is {float(k[1])!r}, not finite and > 0: the "
                            "Edgeworth expansion cannot be standardized here")
    sigma = float(np.sqrt(k[1]))
    log_sigma = 0.5 * float(np.log(k[1]))
    lam = {
        j: float(np.sign(k[j - 1]) * np.exp(np.log(abs(k[j - 1])) - j * log_sigma))
        if k[j - 1] != 0.0 else 0.0
        for j in range(3, len(k) + 1)
    }
    return float(k[0]), sigma, lam


def series_coefficients(lam: dict[int, float], order: int) -> dict[int, float]:
    """Edgeworth density coefficients ``{k: c_k}`` of the given order.

    Raises:
        ValueError: if the order is not available or cumulants are missing.
    """
    if order not in SERIES_ORDERS:
        raise ValueError(f"order must be one of {sorted(SERIES_ORDERS)}, got {order!r}")
    need, fn = SERIES_ORDERS[order]
    if any(j not in lam for j in range(3, need + 1)):
        raise ValueError(f"order {order} needs cumulants up to {need}")
    return fn(lam)


def cumulants_needed(order: int) -> int:
    """Highest cumulant order used by Edgeworth order ``order``."""
    if order not in SERIES_ORDERS:
        raise ValueError(f"order must be one of {sorted(SERIES_ORDERS)}, got {order!r}")
    return SERIES_ORDERS[order][0]


def hermite_e(n: int, x: np.ndarray) -> list[np.ndarray]:
    """Probabilists' Hermite polynomials ``[He_0(x), ..., He_n(x)]`` (three-term recurrence)."""
    x = np.asarray(x, dtype=float)
    out = [np.ones_like(x), x.copy()]
    for j in range(1, n):
        out.append(x * out[j] - j * out[j - 1])
    return out[: n + 1]


def _phi(z: np.ndarray) -> np.ndarray:
    return np.exp(-0.5 * z * z) / SQRT_2PI


def _phi_poly(z: np.ndarray, coeffs: dict[int, float], shift: float = 0.0) -> np.ndarray:
    """exp(shift) phi(z) sum_k c_k He_{k-1}(z), zero where the Gaussian factor underflows."""
    log_g = shift - 0.5 * z * z
    live = log_g > -745.0
    zl = np.where(live, z, 0.0)
    he = hermite_e(max(coeffs), zl)
    poly = sum(c * he[k - 1] for k, c in coeffs.items())
    return np.where(live, np.exp(np.where(live, log_g, 0.0)) / SQRT_2PI * poly, 0.0)


def edgeworth_sf(z: np.ndarray, coeffs: dict[int, float]) -> np.ndarray:
    """Survival function 1 - G(z) = Phibar(z) + phi(z) sum_k c_k He_{k-1}(z) (may leave [0,1])."""
    z = np.asarray(z, dtype=float)
    out = special.ndtr(-z)
    if coeffs:
        out = out + _phi_poly(z, coeffs)
    return out


def edgeworth_cdf(z: np.ndarray, coeffs: dict[int, float]) -> np.ndarray:
    """CDF G(z) = Phi(z) - phi(z) sum_k c_k He_{k-1}(z) (may leave [0,1])."""
    z = np.asarray(z, dtype=float)
    out = special.ndtr(z)
    if coeffs:
        out = out - _phi_poly(z, coeffs)
    return out


def _correction_polynomial(sigma: float, coeffs: dict[int, float]) -> np.ndarray:
    return _correction_polynomial_cached(float(sigma), tuple(sorted(coeffs.items())))


@lru_cache(maxsize=512)
def _correction_polynomial_cached(
    sigma: float, items: tuple[tuple[int, float], ...]
) -> np.ndarray:
    r"""Power-series coefficients of P(z) = sum_k c_k [He_{k-1}(z) - sum_{j=1}^k C(k,j)
    (-sigma)^{k-j} He_{j-1}(z + sigma)], so that sum_k c_k T_k = phi(z0) P(z0) - C W with
    C = sum_k c_k (-sigma)^k (module docstring). Built once per call; evaluated by Horner."""
    # numpy.polynomial's operations done on plain arrays (np.convolve, padded adds, trailing
    # zeros trimmed), in the same order and with the same float operations: the same bits,
    # without its per-operation overhead (a cold query builds this once per composition)
    shift = np.array([sigma, 1.0])
    total = np.zeros(1)
    for k, c in items:
        term = _herme_power(k - 1)
        for j in range(1, k + 1):
            he = _herme_power(j - 1)
            he_shifted = np.array([he[-1] + 0.0])  # Horner in the polynomial z + sigma
            for i in range(2, len(he) + 1):
                he_shifted = _padd(np.array([he[-i]]), _trim(np.convolve(he_shifted, shift)))
            scaled = _trim(np.convolve(np.array([comb(k, j) * (-sigma) ** (k - j)]), he_shifted))
            term = _padd(term, -scaled)
        total = _padd(total, _trim(np.convolve(np.array([c]), term)))
    out = total
    out.setflags(write=False)  # cached: shared between calls
    return out


@lru_cache(maxsize=64)
def _herme_power(n: int) -> np.ndarray:
    """Power-series coefficients of He_n (exact small integers; numpy's ``herme2poly``)."""
    e = np.zeros(n + 1)
    e[n] = 1.0
    out = np.polynomial.hermite_e.herme2poly(e)
    out.setflags(write=False)
    return out


def _trim(c: np.ndarray) -> np.ndarray:
    """Trailing zeros dropped (at least one entry kept), as numpy.polynomial's ``trimseq``."""
    n = len(c)
    while n > 1 and c[n - 1] == 0:
        n -= 1
    return c[:n]


def _padd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b padded with zeros and trimmed, as numpy.polynomial's ``polyadd``."""
    if len(a) < len(b):
        a, b = b, a
    out = a.copy()
    out[: len(b)] += b
    return _trim(out)


def q_only_delta(
    z0: np.ndarray, sigma: float, coeffs: dict[int, float], *, cancellation: bool = True
) -> tuple[np.ndarray, np.ndarray | None]:
    """Closed-form Q-only delta of the Edgeworth law (module docstring) and a cancellation factor.

    Evaluated as H(z0, sigma) + phi(z0) P(z0) - C W(z0) with the polynomial P of
    :func:`_correction_polynomial` in Horner form, W = e^{sigma z0 + sigma^2/2} Phibar(z0 + sigma)
    = phi(z0) R(z0 + sigma) and the two erfcx evaluations shared between H and W: about 70 ns per
    point at order 2, cancellation bound included (``benchmarks/bench_kernels.py``).

    Args:
        z0: Standardized thresholds (eps - K1)/sigma.
        sigma: sqrt(K2) > 0.
        coeffs: Density coefficients from :func:`series_coefficients`.
        cancellation: Also return the cancellation bound (costs a second Horner pass).

    Returns:
        ``(delta, cancellation)``: the surrogate delta (may be slightly negative where the
        Edgeworth density is) and an upper bound on ``sum |terms| / |delta|`` (1 means no
        cancellation; the relative rounding error is about 1e-16 times this), or None when
        ``cancellation`` is False.
    """
    z0 = np.asarray(z0, dtype=float)
    a = z0 + sigma
    g = np.exp(-0.5 * z0 * z0)  # underflows to 0 for |z0| > 38.6: corrections then vanish
    ea = special.erfcx(np.maximum(a, 0.0) * _SQRT_HALF)
    if np.all(z0 > 0.0):
        base = np.maximum(0.5 * g * (special.erfcx(z0 * _SQRT_HALF) - ea), 0.0)
        w = 0.5 * g * ea
    else:
        base = normal_hockey_stick(z0, sigma)
        with np.errstate(over="ignore"):
            w = np.where(
                a > 0.0, 0.5 * g * ea,
                np.exp(sigma * z0 + 0.5 * sigma * sigma + special.log_ndtr(-np.minimum(a, 0.0))),
            )
    if not coeffs:
        return base, (np.ones_like(base) if cancellation else None)
    poly = _correction_polynomial(sigma, coeffs)
    big_c = sum(c * (-sigma) ** k for k, c in coeffs.items())
    live = g > 0.0
    zl = np.where(live, z0, 0.0)  # avoid inf * 0 where phi(z0) underflows
    phi0 = g / SQRT_2PI
    total = base + phi0 * np.polynomial.polynomial.polyval(zl, poly) - big_c * w
    if not cancellation:
        return total, None
    magnitude = (np.abs(base) + phi0 * np.polynomial.polynomial.polyval(np.abs(zl), np.abs(poly))
                 + abs(big_c) * np.abs(w))
    with np.errstate(divide="ignore", invalid="ignore"):
        cancel = np.where(total != 0.0, magnitude / np.abs(total), np.inf)
    cancel = np.where(magnitude == 0.0, 1.0, cancel)
    return total, cancel


def two_sided_delta(
    eps: np.ndarray,
    x_std: tuple[float, float, dict[int, float]],
    y_std: tuple[float, float, dict[int, float]],
) -> np.ndarray:
    """EA's two-sided plug-in 1 - G_Y(eps) - e^eps (1 - G_X(eps)) (arXiv:2206.04236, Eq. (3.6)).

    Kept as the named variant ``aea-ea`` for checks of the paper; the Q-only form is more
    accurate. ``x_std`` and ``y_std`` are ``(K1, sigma, coeffs)`` of X and Y.

    Raises:
        NotApplicable: where e^eps (1 - G_X(eps)) is NaN (inf - inf or inf * 0): its log,
            eps - z_x^2/2 + ..., cancels terms of size ~K1_X (e.g. 4e19 for Gaussian steps at a
            composed mu ~ 4e9), so its rounding error alone overflows exp (a NaN or inf would
            otherwise reach the root search).
    """
    eps = np.asarray(eps, dtype=float)
    k1y, sy, cy = y_std
    k1x, sx, cx = x_std
    zy = (eps - k1y) / sy
    zx = (eps - k1x) / sx
    sf_y = edgeworth_sf(zy, cy)
    # e^eps (1 - G_X): e^eps Phibar(zx) + e^eps phi(zx) poly(zx), in log-space.
    with np.errstate(over="ignore"):
        term = np.exp(eps + special.log_ndtr(-zx))
    if cx:
        with np.errstate(over="ignore", invalid="ignore"):
            term = term + _phi_poly(zx, cx, shift=eps)
    bad = np.isnan(term)  # (+inf alone, far past the root, just reads as "below the target")
    if np.any(bad):
        at = float(np.asarray(eps * np.ones_like(term))[bad].reshape(-1)[0])
        raise NotApplicable(
            f"aea-ea: e^eps (1 - G_X(eps)) is not a number at eps={at!r} (its log cancels "
            f"terms of size |K1_X| = {abs(k1x):.3g}, sd_X = {sx:.3g}: the rounding alone "
            "overflows exp); the two-sided plug-in cannot answer this query (use 'aea', "
            "'exact' or a certified method)")
    return sf_y - term


# Orders >= 3: generated by derive (python -m derive.codegen) into numeric/_generated; no sympy at
# import time. Orders 0-2 stay hand-written above (the generated 1-2 agree; tests check it).
from ._generated import edgeworth_series as _edgeworth_series  # noqa: E402

for _order, (_need, _fn) in sorted(_edgeworth_series.ORDERS.items()):
    if _order >= 3:
        register_series_order(_order, _need, _fn)
del _order, _need, _fn
