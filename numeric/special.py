r"""Numerically stable normal-distribution kernels shared by GDP and the Edgeworth accountant.

The central quantity is the *normal hockey-stick divergence*

.. math::

    H(z_0, \sigma) = \bar\Phi(z_0) - e^{\sigma z_0 + \sigma^2/2}\, \bar\Phi(z_0 + \sigma),

which is the Q-only delta (docs/math.md section 1) of a PLLR ``S ~ N(K1, sigma^2)`` at
``eps = K1 + sigma z0`` (Dong, Roth, Su, *Gaussian Differential Privacy*, JRSS-B 2022, Cor. 2.13,
written in the standardized variable). The two terms cancel for large ``z0``; we factor out
``exp(-z0^2/2)`` and use the scaled complementary error function ``erfcx`` so that both terms are
computed to full relative precision and their difference loses only ``log10(z0/sigma)`` digits.

Also the elementary kernels that keep a small step's CGF at full relative precision (a
composition multiplies a step's error by its number of steps, docs/math.md section 6):
:func:`log1p_minus_x`, :func:`sinhc_minus_one` and :func:`log_cosh`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

__all__ = ["SQRT_2PI", "log1p_minus_x", "log_cosh", "log_normal_hockey_stick", "mills_ratio",
           "normal_hockey_stick", "sinhc_minus_one"]

SQRT_2PI = float(np.sqrt(2.0 * np.pi))
_SQRT_HALF = float(np.sqrt(0.5))
_SQRT_HALF_PI = float(np.sqrt(0.5 * np.pi))


def mills_ratio(a: np.ndarray) -> np.ndarray:
    r"""Mills ratio :math:`R(a) = \bar\Phi(a) / \varphi(a)` for ``a >= 0`` via ``erfcx``.

    Args:
        a: Non-negative standardized points.

    Returns:
        ``sqrt(pi/2) * erfcx(a / sqrt(2))``, accurate to full relative precision.
    """
    return _SQRT_HALF_PI * special.erfcx(np.asarray(a, dtype=float) * _SQRT_HALF)


def _hockey_parts(z0: np.ndarray, sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return (log prefactor, bracket) with H = exp(log prefactor) * bracket, bracket >= 0."""
    z0, sigma = np.broadcast_arrays(np.asarray(z0, dtype=float), np.asarray(sigma, dtype=float))
    a = z0 + sigma
    logpre = np.empty_like(z0)
    bracket = np.empty_like(z0)
    pos = z0 > 0.0
    # z0 > 0: H = exp(-z0^2/2)/2 * [erfcx(z0/sqrt2) - erfcx(a/sqrt2)],
    # since sigma z0 + sigma^2/2 - a^2/2 = -z0^2/2.
    zp, ap = z0[pos], a[pos]
    logpre[pos] = -0.5 * zp * zp + np.log(0.5)
    bracket[pos] = special.erfcx(zp * _SQRT_HALF) - special.erfcx(ap * _SQRT_HALF)
    # z0 <= 0: the first term is >= 1/2, so the difference loses at most a factor
    # first / H of relative accuracy.
    neg = ~pos
    zn, an, sn = z0[neg], a[neg], sigma[neg]
    first = special.ndtr(-zn)
    second = np.where(
        an > 0.0,
        0.5 * np.exp(-0.5 * zn * zn) * special.erfcx(np.maximum(an, 0.0) * _SQRT_HALF),
        np.exp(sn * zn + 0.5 * sn * sn + special.log_ndtr(-an)),
    )
    logpre[neg] = 0.0
    bracket[neg] = first - second
    # Where c = sigma z0 + sigma^2/2 <= 1 (small sigma: H can be ~sigma, far below first),
    # H = P(z0 < Z <= a) - expm1(c) Phibar(a) has no cancellation: the interval mass is a sum
    # of two positive erf terms when z0 < 0 < a, and expm1(c) Phibar(a) is O(c) small or
    # negative (then both parts add).  Accurate evaluation keeps H monotone in z0 to rounding.
    c = sn * zn + 0.5 * sn * sn
    small = c <= 1.0
    if np.any(small):
        zs, as_, cs = zn[small], an[small], c[small]
        straddle = special.erf(np.maximum(as_, 0.0) * _SQRT_HALF) + special.erf(
            np.maximum(-zs, 0.0) * _SQRT_HALF)
        mass = np.where(
            (zs < 0.0) & (as_ > 0.0),
            0.5 * straddle,
            np.where(as_ <= 0.0, special.ndtr(as_) - special.ndtr(zs),
                     special.ndtr(-zs) - special.ndtr(-as_)),
        )
        accurate = mass - np.expm1(cs) * special.ndtr(-as_)
        sub = bracket[neg]
        sub[small] = accurate
        bracket[neg] = sub
    return logpre, np.maximum(bracket, 0.0)


def normal_hockey_stick(z0: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    r"""Stable :math:`\bar\Phi(z_0) - e^{\sigma z_0+\sigma^2/2}\bar\Phi(z_0+\sigma)`.

    Args:
        z0: Standardized threshold(s), ``(eps - K1) / sigma``.
        sigma: Standard deviation(s) of the normal PLLR, ``> 0``.

    Returns:
        The hockey-stick value(s), in ``[0, 1]``; underflows to 0 only below ~1e-308.
    """
    logpre, bracket = _hockey_parts(z0, sigma)
    return np.exp(logpre) * bracket


def log_normal_hockey_stick(z0: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """Natural log of :func:`normal_hockey_stick`, finite far below the float underflow limit.

    Args:
        z0: Standardized threshold(s).
        sigma: Standard deviation(s), ``> 0``.

    Returns:
        ``log H``; ``-inf`` only where the bracket itself underflows.
    """
    logpre, bracket = _hockey_parts(z0, sigma)
    with np.errstate(divide="ignore"):
        return logpre + np.log(bracket)


_ATANH_TERMS = 14  # z <= 0.2: z^28 / 31 < 1e-20, far below the double rounding of the sum


def log1p_minus_x(x: np.ndarray) -> np.ndarray:
    r""":math:`\log(1 + x) - x` for :math:`x \ge 0` to full relative precision.

    ``log1p(x) - x`` cancels for small x (the result is about :math:`-x^2/2`, from two numbers of
    size x). Below x = 1/2 it is computed from :math:`\log(1 + x) = 2\,\operatorname{atanh} z`,
    :math:`z = x/(2 + x)` (Abramowitz and Stegun 4.1.27), so that

    .. math:: \log(1 + x) - x = -\frac{x^2}{2 + x} + 2 z^3 \sum_{k \ge 0} \frac{z^{2k}}{2k + 3},

    every term positive but the exact first one (:math:`z \le 0.2`: 14 terms); above, directly.

    Args:
        x: Non-negative reals (array).

    Returns:
        The array of :math:`\log(1 + x) - x` (non-positive).
    """
    x = np.asarray(x, dtype=float)
    out = np.log1p(x) - x
    small = x < 0.5
    if np.any(small):
        xs = x[small]
        z = xs / (2.0 + xs)
        z2 = z * z
        acc = np.zeros_like(z)
        for k in range(_ATANH_TERMS - 1, -1, -1):
            acc = acc * z2 + 1.0 / (2 * k + 3)
        out[small] = -xs * xs / (2.0 + xs) + 2.0 * z * z2 * acc
    return out


def sinhc_minus_one(u: np.ndarray) -> np.ndarray:
    r""":math:`\sinh(u)/u - 1` to full relative precision (0 at u = 0).

    For :math:`|u| < 2` the Taylor series :math:`\sum_{k \ge 1} u^{2k}/(2k + 1)!` (14 terms: the
    next is below :math:`4^{15}/31! < 2 \cdot 10^{-25}`); above, directly (the result is then
    above 0.8, so subtracting 1 loses at most a factor 2.3 of the last place).

    Args:
        u: Reals (array).

    Returns:
        The array of :math:`\sinh(u)/u - 1` (non-negative).
    """
    u = np.asarray(u, dtype=float)
    a = np.abs(u)
    small = a < 2.0
    out = np.empty_like(u)
    with np.errstate(over="ignore", invalid="ignore"):
        out[~small] = np.sinh(a[~small]) / a[~small] - 1.0
    u2 = u[small] ** 2
    acc = np.zeros_like(u2)
    for k in range(14, 0, -1):  # u^2 (1/3! + u^2 (1/5! + ...)) by Horner
        acc = acc * u2 + 1.0 / math.factorial(2 * k + 1)
    out[small] = acc * u2
    return out


def log_cosh(x: np.ndarray) -> np.ndarray:
    r""":math:`\log\cosh x` to full relative precision: :math:`\log(1 + 2\sinh^2(x/2))` by
    ``log1p`` for :math:`|x| \le 1` (about :math:`x^2/2`), else
    :math:`|x| - \log 2 + \log(1 + e^{-2|x|})` (no overflow).

    Args:
        x: Reals (array).

    Returns:
        The array of :math:`\log\cosh x` (non-negative).
    """
    x = np.asarray(x, dtype=float)
    a = np.abs(x)
    small = a <= 1.0
    out = np.empty_like(x)
    out[small] = np.log1p(2.0 * np.sinh(0.5 * a[small]) ** 2)
    out[~small] = a[~small] - math.log(2.0) + np.log1p(np.exp(-2.0 * a[~small]))
    return out
