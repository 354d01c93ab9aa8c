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
  non-negative or bounded in modulus.
"""

from __future__ import annotations

from flint import arb

__all__ = [
    "ipow",
    "lower_end",
    "nonneg",
    "normal_cdf",
    "normal_pdf",
    "normal_sf",
    "symmetric_ball",
    "upper_end",
]


def normal_pdf(x: arb) -> arb:
    """Standard normal density exp(-x^2/2)/sqrt(2 pi) (Arb ball)."""
    return (-x * x / 2).exp() / (2 * arb.pi()).sqrt()


def normal_sf(x: arb) -> arb:
    """Upper tail of N(0, 1): erfc(x / sqrt 2) / 2 (Arb ball)."""
    return (x / arb(2).sqrt()).erfc() / 2


def normal_cdf(x: arb) -> arb:
    """Lower tail of N(0, 1): erfc(-x / sqrt 2) / 2 (Arb ball)."""
    return (-x / arb(2).sqrt()).erfc() / 2


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
