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

import math
from collections.abc import Callable
from functools import lru_cache
from math import comb

import numpy as np
from scipy import special

from .errors import NotApplicable
from .special import SQRT_2PI

_SQRT_HALF = float(np.sqrt(0.5))
_LOG_HALF = float(np.log(0.5))

__all__ = [
    "SERIES_ORDERS",
    "QOnlyScalar",
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
        NotApplicable: if the coefficients overflow (huge standardized cumulants).
    """
    if order not in SERIES_ORDERS:
        raise ValueError(f"order must be one of {sorted(SERIES_ORDERS)}, got {order!r}")
    need, fn = SERIES_ORDERS[order]
    if any(j not in lam for j in range(3, need + 1)):
        raise ValueError(f"order {order} needs cumulants up to {need}")
    try:
        coeffs = fn(lam)
    except OverflowError:  # standardized cumulants so large that their products overflow
        coeffs = None
    if coeffs is None or not all(math.isfinite(v) for v in coeffs.values()):
        big = max(abs(v) for j, v in lam.items() if j >= 3)
        raise NotApplicable(
            f"the order-{order} Edgeworth series overflows (standardized cumulants up to "
            f"{big:.3g}): the expansion does not apply here; use method 'auto' or 'certified'")
    return coeffs


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
    """:func:`_correction_polynomial_cached` of ``(sigma, coeffs)`` (read-only, shared)."""
    return _correction_polynomial_cached(float(sigma), tuple(sorted(coeffs.items())))


@lru_cache(maxsize=512)
def _correction_polynomial_cached(sigma: float,
                                  items: tuple[tuple[int, float], ...]) -> np.ndarray:
    r"""Power-series coefficients of P(z) = sum_k c_k [He_{k-1}(z) - sum_{j=1}^k C(k,j)
    (-sigma)^{k-j} He_{j-1}(z + sigma)], so that sum_k c_k T_k = phi(z0) P(z0) - C W with
    C = sum_k c_k (-sigma)^k (module docstring). Built once per composition; evaluated by Horner.

    numpy.polynomial's construction (Horner in the polynomial z + sigma, scaled copies, padded
    adds, trailing zeros trimmed) done on Python lists of floats: every coefficient is the same
    one product or one sum of two products as there, so the result has the same bits (checked
    against that construction on 3000 random inputs of orders 1-6, tests/test_aea_speed.py)
    at about 30 us instead of 0.1-0.2 ms of per-operation numpy overhead. The shifted
    He_{j-1}(z + sigma) do not depend on k and are built once.
    """
    total = [0.0]
    shifted: dict[int, list[float]] = {}
    for k, c in items:
        term = list(_HERME_POWERS[k - 1])
        for j in range(1, k + 1):
            he_shifted = shifted.get(j)
            if he_shifted is None:
                he = _HERME_POWERS[j - 1]
                he_shifted = [he[-1] + 0.0]
                for i in range(2, len(he) + 1):  # Horner: h <- he[-i] + (z + sigma) h
                    h = he_shifted
                    times = [h[0] * sigma, *(h[m] * sigma + h[m - 1] for m in range(1, len(h))),
                             h[-1] * 1.0]
                    he_shifted = _padd([he[-i]], _trim(times))
                shifted[j] = he_shifted
            scale = comb(k, j) * (-sigma) ** (k - j)
            term = _padd(term, [-x for x in _trim([scale * x for x in he_shifted])])
        total = _padd(total, _trim([c * x for x in term]))
    out = np.array(total)
    out.setflags(write=False)  # cached: shared between calls
    return out


def _herme_power(n: int) -> tuple[float, ...]:
    """Power-series coefficients of He_n (exact small integers; numpy's ``herme2poly``)."""
    e = np.zeros(n + 1)
    e[n] = 1.0
    return tuple(float(x) for x in np.polynomial.hermite_e.herme2poly(e))


def _trim(c: list[float]) -> list[float]:
    """Trailing zeros dropped (at least one entry kept), as numpy.polynomial's ``trimseq``."""
    n = len(c)
    while n > 1 and c[n - 1] == 0:
        n -= 1
    return c[:n]


def _padd(a: list[float], b: list[float]) -> list[float]:
    """a + b padded with zeros and trimmed, as numpy.polynomial's ``polyadd``."""
    if len(a) < len(b):
        a, b = b, a
    out = list(a)
    for i, x in enumerate(b):
        out[i] = out[i] + x
    return _trim(out)


_MAX_HERMITE = 24  # He indices tabulated (the generated orders, up to 6, use up to He_17)
_HERME_POWERS = tuple(_herme_power(n) for n in range(_MAX_HERMITE))  # constants, built at import


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
        with np.errstate(over="ignore"):
            w = np.where(
                a > 0.0, 0.5 * g * ea,
                np.exp(sigma * z0 + 0.5 * sigma * sigma + special.log_ndtr(-np.minimum(a, 0.0))),
            )
        # normal_hockey_stick(z0, sigma) with its formulas per sign of z0, on whole arrays (no
        # boolean indexing; the same operations per element, so the same bits): for z0 <= 0 its
        # second term is w itself, for z0 > 0 it is e^{-z0^2/2 + log 1/2} [erfcx - erfcx]
        with np.errstate(over="ignore", invalid="ignore"):
            pos = np.exp(-0.5 * z0 * z0 + _LOG_HALF) * np.maximum(
                special.erfcx(z0 * _SQRT_HALF) - ea, 0.0)
        base = np.where(z0 > 0.0, pos, np.maximum(special.ndtr(-z0) - w, 0.0))
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


class QOnlyScalar:
    r"""The Q-only delta of :func:`q_only_delta` at one point, with the survival function and the
    cancellation bound, in plain Python floats (no numpy call per evaluation).

    For a root search at one threshold at a time (:func:`numeric.solvers.newton_log_root`):
    the same closed form as :func:`q_only_delta` (z0 > 0 branch; other points go through the
    vectorized functions), with the correction polynomial P and the survival polynomial
    Q(z) = sum_k c_k He_{k-1}(z) in Horner form, so that one evaluation costs about 3 us
    instead of about 15 us. It also returns the survival function of the Edgeworth law,
    1 - G(z0) = Phibar(z0) + phi(z0) Q(z0), because the surrogate's derivative in eps is
    d delta_G / d eps = delta_G - (1 - G): differentiate
    delta_G(eps) = int_eps^inf (1 - e^{eps - s}) g(s) ds under the integral (the integrand
    vanishes at s = eps), giving -int_eps^inf e^{eps - s} g(s) ds = delta_G - (1 - G(eps)).

    Args:
        sigma: sqrt(K2) > 0.
        coeffs: Density coefficients from :func:`series_coefficients`.
    """

    __slots__ = ("_abs_poly", "_big_c", "_coeffs", "_poly", "_sf_poly", "sigma")

    def __init__(self, sigma: float, coeffs: dict[int, float]) -> None:
        self.sigma = float(sigma)
        self._coeffs = dict(coeffs)
        if coeffs:
            poly = _correction_polynomial(sigma, coeffs).tolist()
            sf_poly = [0.0] * max(coeffs)  # sum_k c_k He_{k-1} in powers of z
            for k, c in coeffs.items():
                for i, h in enumerate(_HERME_POWERS[k - 1]):
                    sf_poly[i] += c * h
            self._poly = poly[::-1]  # highest power first, for Horner
            self._abs_poly = [abs(x) for x in self._poly]
            self._sf_poly = sf_poly[::-1]
            self._big_c = float(sum(c * (-sigma) ** k for k, c in coeffs.items()))
        else:
            self._poly = self._abs_poly = self._sf_poly = []
            self._big_c = 0.0

    def __call__(self, z0: float) -> tuple[float, float, float]:
        """``(delta, survival, cancellation)`` at the standardized threshold ``z0``.

        Returns:
            The surrogate delta (as :func:`q_only_delta`), 1 - G(z0) and the cancellation
            bound of :func:`q_only_delta`.
        """
        sigma = self.sigma
        if not (0.0 < z0 < 1e150):  # z0 <= 0, huge or NaN: the vectorized forms
            z = np.array([z0])
            d, cancel = q_only_delta(z, sigma, self._coeffs)
            sf = edgeworth_sf(z, self._coeffs)
            return float(d[0]), float(sf[0]), float(cancel[0])
        a = z0 + sigma
        g = math.exp(-0.5 * z0 * z0)
        ez = float(special.erfcx(z0 * _SQRT_HALF))
        ea = float(special.erfcx(a * _SQRT_HALF))
        base = max(0.5 * g * (ez - ea), 0.0)
        w = 0.5 * g * ea
        sf = 0.5 * g * ez
        if not self._poly:
            return base, sf, 1.0
        phi0 = g / SQRT_2PI
        zl = z0 if g > 0.0 else 0.0
        p = q = m = 0.0
        for c in self._poly:
            p = p * zl + c
        for c in self._abs_poly:
            m = m * zl + c
        for c in self._sf_poly:
            q = q * zl + c
        big_c = self._big_c
        total = base + phi0 * p - big_c * w
        magnitude = abs(base) + phi0 * m + abs(big_c) * abs(w)
        if magnitude == 0.0:
            cancel = 1.0
        else:
            cancel = magnitude / abs(total) if total != 0.0 else math.inf
        return total, sf + phi0 * q, cancel


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
