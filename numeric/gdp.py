r"""Gaussian differential privacy (GDP): the mu-GDP privacy profile and its inverse.

Source: Dong, Roth, Su, *Gaussian Differential Privacy*, JRSS-B 84 (2022), arXiv:1905.02383
(cited as GDP). A mechanism is mu-GDP iff it is (eps, delta_mu(eps))-DP for every eps (Cor. 2.13)

.. math::

    \delta_\mu(\varepsilon) = \Phi\!\left(-\frac{\varepsilon}{\mu} + \frac{\mu}{2}\right)
        - e^{\varepsilon}\,\Phi\!\left(-\frac{\varepsilon}{\mu} - \frac{\mu}{2}\right).

Composition: G_mu1 (x) G_mu2 = G_sqrt(mu1^2 + mu2^2) (GDP Cor. 3.3). The Poisson-subsampling CLT
(GDP Section 5; Bu, Dong, Long, Su 2020, Thm 5): T steps at rate p with noise multiplier sigma are
asymptotically mu-GDP with mu = p sqrt(T (e^{1/sigma^2} - 1)) -- an *asymptotic estimate*, not a
guarantee.

Numerics: the profile is evaluated through :func:`numeric.special.normal_hockey_stick`, which
keeps full relative precision for large eps; the inverse is a bracketed root of
``log delta_mu(eps) - log delta`` polished by Newton steps
(``d delta/d eps = -e^eps Phi(-eps/mu - mu/2)``).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from ._validation import as_float_array, check_count, check_delta, check_positive, check_rate
from .solvers import brentq
from .special import log_normal_hockey_stick, mills_ratio, normal_hockey_stick

__all__ = ["MAX_MU", "delta_mu", "epsilon_mu", "log_delta_mu", "poisson_subsampling_clt_mu"]

MAX_MU = 1e12  # eps ~ mu^2/2 ~ 5e23 at the cap (checked to 1e-16 against mpmath at 80 digits)


def delta_mu(mu: float, eps: float | np.ndarray) -> float | np.ndarray:
    r"""Privacy profile of mu-GDP, :math:`\delta_\mu(\varepsilon)` (GDP Cor. 2.13).

    Args:
        mu: GDP parameter, finite and > 0.
        eps: Privacy parameter(s), finite and >= 0 (scalar or array).

    Returns:
        delta_mu(eps), a float for scalar input else an array, each in [0, 1].

    Raises:
        ValueError: if ``mu`` or any ``eps`` is out of range.
    """
    mu = check_positive("mu", mu)
    e = as_float_array("eps", eps, nonnegative=True)
    out = normal_hockey_stick(e / mu - 0.5 * mu, mu)
    return float(out) if out.ndim == 0 else out


def log_delta_mu(mu: float, eps: float | np.ndarray) -> float | np.ndarray:
    """Natural log of :func:`delta_mu`, accurate where delta_mu underflows.

    Args:
        mu: GDP parameter, finite and > 0.
        eps: Privacy parameter(s), finite and >= 0.

    Returns:
        log delta_mu(eps).
    """
    mu = check_positive("mu", mu)
    e = as_float_array("eps", eps, nonnegative=True)
    out = log_normal_hockey_stick(e / mu - 0.5 * mu, mu)
    return float(out) if out.ndim == 0 else out


def epsilon_mu(mu: float, delta: float) -> float:
    r"""Smallest eps >= 0 with delta_mu(eps) <= delta (inverse of GDP Cor. 2.13).

    delta_mu is strictly decreasing in eps, so the root is unique; it is bracketed using
    delta_mu(eps) <= Phi(-eps/mu + mu/2) and refined in log-space.

    Args:
        mu: GDP parameter, finite and > 0.
        delta: Target delta in (0, 1).

    Returns:
        eps >= 0 (0 when delta_mu(0) <= delta already).
    """
    mu = check_positive("mu", mu)
    if not mu <= MAX_MU:
        raise ValueError(f"mu must be <= {MAX_MU:g} for epsilon_mu, got {mu!r}")
    delta = check_delta("delta", delta)
    log_target = math.log(delta)
    if float(log_normal_hockey_stick(-0.5 * mu, mu)) <= log_target:
        return 0.0
    # delta_mu(eps) <= Phi(mu/2 - eps/mu) <= delta  when  eps >= mu (mu/2 - Phi^{-1}(delta)).
    hi = max(mu * (0.5 * mu - float(special.ndtri(delta))), 1e-300) * 1.0001 + 1e-12

    def g(e: float) -> float:
        return float(log_normal_hockey_stick(e / mu - 0.5 * mu, mu)) - log_target

    root = brentq(g, 0.0, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200)
    # Newton polish on log delta: d/d eps log delta = -e^eps Phi(-eps/mu - mu/2) / delta_mu.
    # With z0 = eps/mu - mu/2 and a = z0 + mu, e^eps Phibar(a) = phi(z0) R(a) (R the Mills
    # ratio): free of the cancellation between eps and log Phibar(a) (both ~ mu^2/2) that
    # made the slope's log wrong by several units at mu ~ 1e8 (fuzz seed 31337: -5.6e-7).
    def log_slope_at(e: float, logd: float) -> float:
        z0 = e / mu - 0.5 * mu
        a = z0 + mu
        if a >= 0.0:
            log_tail = -0.5 * z0 * z0 - 0.5 * math.log(2.0 * math.pi) + math.log(
                float(mills_ratio(np.float64(a))))
        else:
            log_tail = e + float(special.log_ndtr(-a))
        return log_tail - logd

    for _ in range(2):
        logd = float(log_normal_hockey_stick(root / mu - 0.5 * mu, mu))
        # slope = -exp(log_slope); step = (logd - log_target) / slope, formed without overflow
        log_slope = log_slope_at(root, logd)
        if not math.isfinite(log_slope) or log_slope < -700.0:
            break
        step = -(logd - log_target) * math.exp(-log_slope)
        if not (abs(step) < 1e-6 * max(1.0, root)):
            break
        new = max(root - step, 0.0)
        if not abs(g(new)) < abs(logd - log_target):  # keep only a step that improves
            break
        root = new
    return float(root)  # a Python float (brentq may return np.float64), same value


def poisson_subsampling_clt_mu(sigma: float, rate: float, steps: int) -> float:
    r"""Asymptotic GDP parameter of Poisson-subsampled Gaussian steps (an estimate).

    mu = p sqrt(T (e^{1/sigma^2} - 1)) (Bu, Dong, Long, Su, *Deep Learning with Gaussian
    Differential Privacy*, HDSR 2020, Thm 5; GDP Section 5). This is a central-limit
    approximation: it can under-report the privacy loss (especially for small T p).

    Args:
        sigma: Noise multiplier, finite and > 0.
        rate: Poisson sampling rate in (0, 1].
        steps: Number of steps T (whole number >= 1).

    Returns:
        The CLT GDP parameter mu.
    """
    sigma = check_positive("sigma", sigma)
    rate = check_rate("rate", rate)
    steps = check_count("steps", steps)
    return rate * math.sqrt(steps * math.expm1(sigma**-2))
