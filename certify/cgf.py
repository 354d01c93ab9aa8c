r"""Per-step Renyi cumulant generating functions for the Chernoff bound of :mod:`certify.chernoff`.

For one step in pair order (P, Q), :math:`\Lambda(\alpha) = \log E_P[(q/p)^\alpha] = (\alpha - 1)
D_\alpha(Q\|P)` (Mironov, *Renyi Differential Privacy*, CSF 2017); it adds over independent
steps. A :class:`StepCGF` carries a floating-point version (to choose alpha) and an Arb
enclosure (to certify the bound at the chosen exact alpha). Each mechanism module builds its
own; the two closed forms shared by several mechanisms are here:

* the normal PLLR N(-mu^2/2, mu^2) (Gaussian mechanism, and the subsampled Gaussian at rate 1):
  :math:`\Lambda(\alpha) = \alpha(\alpha-1)\mu^2/2` (the normal moment generating function at
  alpha; Mironov 2017, Gaussian mechanism), real alpha;
* the two-point law of randomized response / the pure part of (eps0, delta)-DP, PLLR
  :math:`\pm\varepsilon_0` with :math:`P(+\varepsilon_0) = 1/(1 + e^{\varepsilon_0})`:
  :math:`\Lambda(\alpha) = \log\bigl((e^{\alpha\varepsilon_0} + e^{(1-\alpha)\varepsilon_0})
  /(1 + e^{\varepsilon_0})\bigr)`, real alpha (the worst case of an (eps0, 0)-DP step: Kairouz,
  Oh, Viswanath, ICML 2015, Thm 3.3).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from flint import arb

from .special import exact_ball

__all__ = ["INT_ORDER_MAX", "StepCGF", "gaussian_cgf", "logaddexp", "two_point_cgf", "zero_cgf"]

INT_ORDER_MAX = 20000
"""Largest integer order with an exact finite sum (subsampled Gaussian, order (P, Q)); also the
cap of the integer-order search."""


@dataclass(frozen=True)
class StepCGF:
    """Lambda_i(alpha) = log E[(dQ'/dP')^alpha] of one step in one pair order.

    Attributes:
        floating: Float estimate ``alpha -> Lambda`` (for choosing alpha only).
        certified: Arb enclosure at an exact alpha (a ball), at the current precision.
        integer_only: True if only integer orders are certified.
        note: The formula and its source, for the bound's assumptions.
        cost: Optional *low* estimate of the seconds one ``certified`` call at order alpha
            costs at 53 bits (None: negligible). Under a time budget the Chernoff evaluation
            is refused up front when the estimated cost exceeds the time left
            (:func:`certify.budget.require`); it never changes a number.
    """

    floating: Callable[[float], float]
    certified: Callable[[arb], arb]
    integer_only: bool
    note: str
    cost: Callable[[float], float] | None = None


def logaddexp(a: float, b: float) -> float:
    """log(e^a + e^b) in floating point (numpy, no overflow)."""
    return float(np.logaddexp(a, b))


def gaussian_cgf(mu2: Callable[[], arb], mu2f: float, note: str) -> StepCGF:
    """Lambda(alpha) = alpha (alpha - 1) mu^2 / 2 for a normal PLLR.

    Args:
        mu2: Encloses mu^2 at the current precision.
        mu2f: mu^2 as a float.
        note: Assumption text.
    """
    return StepCGF(
        lambda a: a * (a - 1.0) * mu2f / 2.0,
        lambda a: a * (a - 1) * mu2() / 2,
        False,
        note,
    )


def two_point_cgf(eps0: float | Fraction, note: str) -> StepCGF:
    """Lambda of the two-point PLLR +-eps0 (randomized response), eps0 > 0 (a float or an exact
    rational)."""
    eps0f = float(eps0)

    def fl(a: float) -> float:
        return logaddexp(a * eps0f, (1.0 - a) * eps0f) - logaddexp(0.0, eps0f)

    def cert(a: arb) -> arb:
        e = exact_ball(eps0)
        return ((a * e).exp() + ((1 - a) * e).exp()).log() - (1 + e.exp()).log()

    return StepCGF(fl, cert, False, note)


def zero_cgf(note: str) -> StepCGF:
    """Lambda = 0: a step whose PLLR is 0 (e.g. the pure part of ApproxDP(0, delta))."""
    return StepCGF(lambda a: 0.0, lambda a: arb(0), False, note)
