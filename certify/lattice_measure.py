r"""The dominating lattice measure of :mod:`certify.lattice` and its safe product.

:class:`LatticePLD` is a non-negative measure on a grid plus +infinity with integer masses in
units :math:`2^{-B}`; :func:`multiply_lattices` convolves two of them exactly (FLINT) and rescales
and truncates only in the safe direction (Lemma 3 of :mod:`certify.lattice`, where the proofs
are). Shared by the fixed grid of :mod:`certify.lattice` and the adaptive grids of
:mod:`certify.lattice_adaptive`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from flint import arb, arb_poly, fmpz, fmpz_poly

from .budget import check_deadline
from .engine import DEFAULT_PRECISION, endpoints, workprec
from .lattice_grid import keeps_ceiling, mul_cut_rescale
from .search import bisect, snap_up

__all__ = ["LatticePLD", "epsilon_upper", "multiply_lattices"]

@dataclass(frozen=True)
class LatticePLD:
    r"""A non-negative measure on :math:`\{(o + k)h\} \cup \{+\infty\}`, masses in units 2^-B.

    Attributes:
        h: Grid spacing (binary64, exact).
        bits: Fixed-point bits B.
        offset: Grid index o of the first coefficient.
        coeffs: Masses :math:`c_k` (FLINT integer polynomial, coefficient k at index o + k).
        inf: Mass at +infinity.
        count: Number of composed steps.
        direction: Pair order.
        points: Single-step grid size.
    """

    h: float
    bits: int
    offset: int
    coeffs: fmpz_poly
    inf: int
    count: int
    direction: str
    points: int
    products: int = 0

    def composed_length(self) -> int:
        """Coefficients held."""
        return self.coeffs.length()

    @property
    def total(self) -> int:
        """Total mass (units 2^-B), >= 2^B."""
        return int(self.coeffs(1)) + self.inf

    def delta_upper(self, eps: arb) -> arb:
        r"""Enclosure of :math:`2^{-B}(c_\infty + \sum_{s_k > \varepsilon} c_k (1 - e^{\varepsilon
        - s_k}))` at the exact dyadic ``eps`` (current precision)."""
        lo, _ = endpoints(eps)
        e = Fraction(lo.man) * Fraction(2) ** lo.exp
        j0 = math.floor(e / Fraction(self.h)) - self.offset + 1  # first k with s_k > eps
        n = self.coeffs.length()
        j0 = min(max(j0, 0), n)
        tail = self.coeffs.right_shift(j0) if j0 > 0 else self.coeffs
        s0 = arb(fmpz(tail(1))) if j0 < n else arb(0)
        h = arb(self.h)
        if j0 < n:
            s1 = arb_poly(tail)((-h).exp()) * (eps - (self.offset + j0) * h).exp()
        else:
            s1 = arb(0)
        return (arb(fmpz(self.inf)) + s0 - s1) * arb(2) ** (-self.bits)

    def rounding_budget(self) -> float:
        r"""How much rounding can have raised the upper end, as an absolute delta (a float, a
        tightness diagnostic: the bound is valid whatever its size).

        Relative to the exact composition of the connect-the-dots pairs: the mass added by
        rounding products up, :math:`A = (|
u'| - 2^B)/2^B` (exact); single-step tails
        rounded up by at most :math:`2^{-B}` each, which raises each step's hockey-stick curve by
        at most :math:`2^{-B}` and so delta by at most :math:`m 2^{-B}(1 + A)` (Lemma 1's hybrid
        argument); mass moved up by truncation and lumping, :math:`2^{-63}` per product; and the
        Lemma 2 range errors, :math:`2 \cdot 2^{-72}` in all. The discretization error itself
        (second order in h) is not included: the lower end measures it.
        """
        excess = float(Fraction(self.total - (1 << self.bits), 1 << self.bits))
        return (excess + self.count * 2.0 ** (-self.bits) * (1.0 + excess)
                + self.products * 2.0**-63 + 2.0**-71)

    def float_profile(self) -> tuple[np.ndarray, np.ndarray, float]:
        """(support points, masses, mass at infinity) as floats, for searching only."""
        c = np.array([float(v) for v in self.coeffs.coeffs()]) * 2.0 ** (-self.bits)
        s = (self.offset + np.arange(len(c))) * self.h
        return s, c, float(self.inf) * 2.0 ** (-self.bits)


def multiply_lattices(a: LatticePLD, b: LatticePLD) -> LatticePLD:
    """Convolution of two lattice measures, rescaled and truncated safely (Lemma 3)."""
    check_deadline("in the lattice convolutions")
    bits = a.bits
    fa, fb = int(a.coeffs(1)), int(b.coeffs(1))
    inf2 = a.inf * (fb + b.inf) + fa * b.inf  # everything with an infinite coordinate
    inf = -((-inf2) >> bits)
    # ends cut on the exact product (top: smallest K with exact mass above <= 2^-64, moved to
    # +infinity; bottom: lumped onto index low), the rest rescaled up: floor + 1 >= ceiling
    low, kept, above, below = mul_cut_rescale(a.coeffs, b.coeffs, bits, up=True,
                                              exact_ceiling=keeps_ceiling(a.count, b.count))
    inf += above
    if low > 0:
        kept = kept + fmpz_poly([below])
    return LatticePLD(a.h, bits, a.offset + b.offset + low, kept, inf, a.count + b.count,
                      a.direction, max(a.points, b.points), a.products + b.products + 1)


def _float_delta(s: np.ndarray, c: np.ndarray, inf: float, eps: float) -> float:
    m = s > eps
    return inf + float(np.dot(c[m], -np.expm1(eps - s[m])))


def epsilon_upper(lat: LatticePLD, target: arb) -> float | None:
    """A dyadic eps* >= 0 with certified delta_upper(eps*) <= target, or None (infinite)."""
    s, c, inf = lat.float_profile()
    tf = float(target.lower())
    with workprec(DEFAULT_PRECISION):
        if bool(lat.delta_upper(arb(0)).upper() <= target.lower()):
            return 0.0
    if inf >= tf:
        return None
    top = float(s[-1]) + lat.h if len(s) else lat.h
    _, hi = bisect(lambda x: _float_delta(s, c, inf, x) <= tf, 0.0, top,
                   rel_tol=1e-13, abs_tol=1e-13)
    for q in snap_up(hi, 8):
        with workprec(DEFAULT_PRECISION):
            if bool(lat.delta_upper(arb(q)).upper() <= target.lower()):
                return q
    raise ArithmeticError("lattice: could not certify the epsilon bound")
