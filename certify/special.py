r"""Small Arb helpers shared by the mechanism modules: normal tails, integer powers, ball ends.

Every function returns an Arb ball containing the exact value (python-flint; Johansson, *Arb:
efficient arbitrary-precision midpoint-radius interval arithmetic*, IEEE Trans. Computers 2017):

* :math:`\varphi(x) = e^{-x^2/2}/\sqrt{2\pi}`, :math:`\bar\Phi(x) =
  \tfrac12\operatorname{erfc}(x/\sqrt2)` and
  :math:`\Phi(x) = \tfrac12\operatorname{erfc}(-x/\sqrt2)`
  (the standard normal density and tails, through Arb's rigorous ``erfc``; the relation of the
  normal distribution to erfc is in Abramowitz and Stegun, *Handbook of Mathematical
  Functions*, chapters 7 and 26);
* integer powers by repeated multiplication (python-flint's ``**`` is NaN on balls containing 0);
* the exact ends of a ball as zero-radius balls, and enclosures of quantities known to be
  non-negative or bounded in modulus;
* mechanism parameters as exact rationals: :func:`exact_param` is the decimal a user typed
  (``Mechanism.exact_value``; ``--eps0 0.1`` means 1/10) where it is not a binary64 number, else
  the float itself, and :func:`exact_ball` encloses either (zero radius for binary64 values, so
  untyped inputs give exactly the balls of ``arb(float)``).
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from typing import Any

from flint import arb, ctx

__all__ = [
    "exact_ball",
    "exact_param",
    "ipow",
    "lower_end",
    "nonneg",
    "normal_cdf",
    "normal_pdf",
    "normal_sf",
    "show",
    "symmetric_ball",
    "upper_end",
]


def exact_param(mech: Any, name: str) -> float | Fraction:
    """Parameter ``name`` of ``mech`` as certified methods must use it: the exact rational typed
    for it where that is not a binary64 number (``Mechanism.exact_value``), else the float."""
    value = getattr(mech, name)
    exact_value = getattr(mech, "exact_value", None)
    if exact_value is None:
        return value
    exact = exact_value(name)
    return value if exact == Fraction(float(value)) else exact


def exact_ball(x: float | int | Fraction) -> arb:
    """A ball containing the exact real ``x``; zero radius when ``x`` is a binary64 number."""
    if isinstance(x, Fraction):
        return arb(x.numerator) / x.denominator
    return arb(x)


def show(x: float | int | Fraction) -> str:
    """``repr`` of a float, ``p/q`` of an exact rational (certificate and step descriptions)."""
    if isinstance(x, Fraction):
        return f"{x.numerator}/{x.denominator}"
    return repr(x)


def normal_pdf(x: arb) -> arb:
    """Standard normal density exp(-x^2/2)/sqrt(2 pi) (Arb ball)."""
    return (-x * x / 2).exp() / (2 * arb.pi()).sqrt()


@lru_cache(maxsize=16)
def _sqrt2(prec: int) -> arb:
    """sqrt 2 at working precision ``prec`` (the ball ``arb(2).sqrt()`` gives there: the normal
    tails are the lattices' inner loop, where computing it afresh cost a quarter of a tail)."""
    return arb(2).sqrt()


def normal_sf(x: arb) -> arb:
    """Upper tail of N(0, 1): erfc(x / sqrt 2) / 2 (Arb ball)."""
    return (x / _sqrt2(ctx.prec)).erfc() / 2


def normal_cdf(x: arb) -> arb:
    """Lower tail of N(0, 1): erfc(-x / sqrt 2) / 2 (Arb ball)."""
    return (-x / _sqrt2(ctx.prec)).erfc() / 2


def ipow(x, k: int):
    """x**k by repeated multiplication (python-flint's ``**`` is NaN on balls containing 0)."""
    out = x * 0 + 1
    for _ in range(k):
        out = out * x
    return out


def lower_end(x: arb) -> arb:
    """The exact lower end of a ball, as a zero-radius ball."""
    return arb(x.lower())


def upper_end(x: arb) -> arb:
    """The exact upper end of a ball as a zero-radius ball (+inf for a non-finite ball)."""
    if not x.is_finite():
        return arb("inf")
    return arb(x.upper())


def symmetric_ball(t: arb) -> arb:
    """The ball [-|t|, |t|] (an enclosure of any number of modulus at most t)."""
    u = arb(abs(t).upper())
    return u.union(-u)


def nonneg(x: arb) -> arb:
    """Intersect an enclosure of a non-negative quantity with [0, inf)."""
    if x >= 0:
        return x
    return arb(0).union(arb(x.upper())) if x.upper() > 0 else arb(0)
