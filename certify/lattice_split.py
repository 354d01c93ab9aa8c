r"""Fine core, coarse tails: a composed lattice law whose far tails live on a coarser lattice.

At small sampling rates the composed privacy-loss laws of the certified lattice are long and
mostly empty: at rate 0.001 the single-step block spans ~5e5 units of the fine lattice (its
sampled component's loss reaches L ~ 2-4 with mass 1e-5 .. 1e-19), and the first squarings
multiplied those lengths in full (docs/lattice-speed.md). Here a law is a **sum of two
lattice measures**: a *core* on the fine lattice :math:`\{k u\}` and a *tail* on the coarse
lattice :math:`\{K U\}`, :math:`U = r u` (r a power of two, :data:`TAIL_RATIO`), together with
a mass at :math:`+\infty`. The split point is chosen by mass only (the core keeps all but a
fraction :data:`TAIL_MASS` of the mass per end); the choice governs tightness, never soundness.

Notation and Lemmas 1-3 are those of :mod:`certify.lattice`; section C is that of
:mod:`certify.lattice_adaptive`. For a finite non-negative measure :math:`\nu` write
:math:`H_\nu(t) = \int (1 - te^{-s})_+ d\nu(s)`; :math:`\mu \succeq \nu` means
:math:`H_\mu \ge H_\nu` on :math:`[0, \infty)`.

**Step 1 (linearity).** :math:`H` is linear in the measure: :math:`H_{\nu_1 + \nu_2} =
H_{\nu_1} + H_{\nu_2}`. So if :math:`\mu_i \succeq \nu_i` then :math:`\mu_1 + \mu_2 \succeq
\nu_1 + \nu_2`, and a law may be handled piece by piece.

**Step 2 (coarsening a piece, section C on a sub-measure).** Section C of
:mod:`certify.lattice_adaptive` replaces each atom c at :math:`s = JU + ju` by
:math:`c(1 - w_j)` at :math:`JU` and :math:`c w_j` at :math:`(J+1)U`, and the replacement
dominates the atom *for every t* (the two are linear and equal on :math:`[0, e^{JU}]`; the chord
of the convex :math:`c(1 - te^{-s})_+` lies above it on :math:`[e^{JU}, e^{(J+1)U}]`; both vanish
beyond), with the upper share rounded up (mass only moves up: Lemma 3). The argument is atom by
atom, so it holds for any non-negative measure on the fine lattice, in particular for the part of
a composed law outside the core: coarsening the low and the high piece of a law and adding them
to the tail gives, by Step 1, a dominating law.

**Step 3 (products).** For laws :math:`C_1 + T_1` and :math:`C_2 + T_2` (core + tail),

.. math::

    (C_1 + T_1) * (C_2 + T_2) = C_1 * C_2 + C_1 * T_2 + T_1 * (C_2 + T_2)
    \preceq C_1 * C_2 + \hat C_1 * T_2 + T_1 * (\hat C_2 + T_2),

with :math:`\hat C` the section-C coarsening of C onto the coarse lattice (:math:`\hat C
\succeq C`, Step 2): by Lemma 1 (a statement about any finite non-negative factors) :math:`\hat
C_1 * T_2 \succeq C_1 * T_2`, likewise for the last term, and Step 1 adds them. The first term
lies on the fine lattice, the others on the coarse one (the sum of two multiples of U is one);
each is an exact FLINT product, rescaled up and truncated safely (Lemma 3: a small mass per
end per product, below, moved up to the lowest kept point or to :math:`+\infty`). Masses at
:math:`+\infty`: :math:`(F_1 + I_1)(F_2 + I_2) = F_1 F_2 + [I_1(F_2 + I_2) + F_1 I_2]` for
finite parts F and infinite parts I; the bracket is rounded up and goes to :math:`+\infty`.
The product's fine law is then split again (Step 2). A square needs one cross product:
:math:`2 C * T + T * T \preceq T * (2\hat C + T)` (the same Lemma 1 and linearity). The
cuts (any amount is safe by Lemma 3; only tightness depends on it) are :math:`2^{-80}` per
end for core products and :math:`2^{-B}` for products with a tail factor
(:data:`CORE_TRUNC_BITS`).

**Step 4 (re-discretization of the whole law).** The section-C coarsening by a factor r' of the
core and of the tail separately (units u r' and U r') dominates the law (Steps 1 and 2), so the
law follows :func:`certify.lattice_adaptive.settle` with the ratio U/u unchanged.

**Step 5 (evaluation).** :math:`\delta(\varepsilon) \le 2^{-B}(I + \sum_{s_k > \varepsilon}
c_k(1 - e^{\varepsilon - s_k}))` summed over the atoms of both lattices: the Arb enclosures of
the two pieces (:meth:`certify.lattice_measure.LatticePLD.delta_upper`) are added.

By induction over the products and re-discretizations of the binary powering, the computed law
dominates the composition of the single-step connect-the-dots measures, hence the composed pair
(Lemma 1 and Lemma 2).

Why the error is small: a coarsened atom differs from the atom only for :math:`t` in one coarse
cell :math:`(e^{JU}, e^{(J+1)U})`; after composition that is the event that the other steps'
loss lies within U of :math:`\varepsilon - s`, so the error is about :math:`M U^2 f/8` for a
tail of mass M and a density f of the rest there, second order in U and weighted by M. With
:math:`M \le 10^{-12}` per end and :math:`r = 64` the tails add about :math:`4 \cdot 10^{-9}`
of the core's own discretization error (at equal densities).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from flint import arb, fmpz_poly

from .intpoly import ceil_div_pow2, cell_sums
from .lattice_adaptive import UPPER_OPS, require_coarsen, upper_weights
from .lattice_grid import cut_sums, keeps_ceiling, mul_cut_rescale
from .lattice_measure import LatticePLD

__all__ = ["MIN_SPAN", "SPLIT_UPPER_OPS", "TAIL_FRACTION", "TAIL_MASS", "TAIL_RATIO", "SplitPLD",
           "absorb", "check_tail_params", "coarsen_cells", "coarsen_split", "core_ends",
           "multiply_split", "split_atoms", "split_ops", "split_upper", "tail_mass_for"]

TAIL_RATIO = 64
"""Coarse unit / fine unit of the tails (a power of two)."""

TAIL_MASS = 1e-12
"""Per end, at most this fraction of a law's mass is moved to the coarse tail after each
product (tightness only; the default of the functions here)."""

TAIL_FRACTION = 1e-5
"""An eps query at delta splits at ``TAIL_FRACTION * delta`` (:func:`tail_mass_for`), at most
1e-10. Measured (one run each, level (128, 256) unless said, CPU seconds of one
`_epsilon_once`; split mass: width, CPU):

* rate 0.001, sigma 1, m = 1e6, delta 1e-5: one lattice 8.25e-5, 5.4 s; 1e-11: 7.61e-5, 2.8 s;
  1e-10: 7.61e-5, 2.2 s; 1e-9: 7.63e-5, 2.3 s; 1e-7: 7.99e-5, 1.7 s.
* rate 0.001, sigma 0.8, m = 1e5, delta 1e-5: one lattice 8.34e-5, 7.8 s; 1e-11: 7.05e-5,
  6.1 s; 1e-10: 7.22e-5, 5.2 s; 1e-9: 7.71e-5, 4.1 s.
* rate 0.001, sigma 2, m = 100 (split forced, its laws are short; the 100-fold law's delta
  lives in its far tail), level (64, 128): delta 1e-10, split at 1e-12: 7.30e-5 -> 7.72e-5 wide,
  at 1e-14 and 1e-16 7.30e-5 again; delta 1e-5 (width 5.13e-7 absolute): the upper end rose by
  1.3e-10 (split at 1e-9), 5.7e-12 (1e-10), 1.7e-13 (1e-11).

The one-lattice laws are wider at the larger m because their longest products were coarsened
further by :data:`certify.lattice_adaptive.MAX_LENGTH`, which the split laws stay under."""

_TAIL_MASS_MIN = 1e-18  # a few 2^-64 cuts: nothing below this is worth a tail
_TAIL_MASS_MAX = 1e-10


def tail_mass_for(delta: float | None) -> float:
    """The split mass for a query at ``delta`` (None: a delta query, whose delta is not known
    in advance: the smallest split), in [1e-18, 1e-10]. Tightness only."""
    if delta is None or not (delta > 0):
        return _TAIL_MASS_MIN
    return min(_TAIL_MASS_MAX, max(_TAIL_MASS_MIN, TAIL_FRACTION * delta))

CORE_TRUNC_BITS = 80
r"""The core products cut at most :math:`2^{-80}` of mass per end (Lemma 3), not the
:math:`2^{-64}` of :data:`certify.lattice_grid.TRUNC_BITS`: the cuts go to +infinity (upper
end) or are dropped (the lower end's Q side), and every later squaring doubles them, so after
~23 squarings a 2^-64 cut weighs ~1e-12, 1% of delta = 1e-10. Measured (one run each, CPU s of
one `_epsilon_once`): rate 0.001, sigma 0.5, m = 1e7, delta 1e-10, level (512, 1024):
1.85e-4 wide, 18.2 s -> 4.29e-5, 19.1 s; rate 0.01, sigma 1, m = 1e7, delta 1e-10, (128, 256):
2.08e-4, 1.9 s -> 9.04e-5, 2.1 s; rate 0.001, sigma 0.8, m = 1e5, delta 1e-10, (256, 512):
1.40e-4, 12.2 s -> 1.37e-4, 13.7 s; rate 0.001, sigma 1, m = 1e6, delta 1e-5: unchanged."""

MIN_SPAN = 1 << 14
"""A law whose core and tail together span at most this many fine units is kept as one fine
law (the tail absorbed, exactly): below it the extra products and re-discretizations of a
split cost more than they save (tightness and time only)."""


def check_tail_params(ratio: int, tail_mass: float) -> None:
    """Raise ValueError unless ``ratio`` is a power of two >= 2 and ``tail_mass`` in [0, 0.5)."""
    if isinstance(ratio, bool) or not isinstance(ratio, int) or ratio < 2 or ratio & (ratio - 1):
        raise ValueError(f"ratio must be a power of two >= 2, got {ratio!r}")
    if not (0.0 <= tail_mass < 0.5):
        raise ValueError(f"tail_mass must be in [0, 0.5), got {tail_mass!r}")


@dataclass(frozen=True)
class SplitPLD:
    r"""A dominating lattice law: ``core`` (unit h) + ``tail`` (unit ``ratio * h``) + ``inf``
    units of :math:`2^{-B}` at :math:`+\infty` (the two pieces carry no mass at infinity).

    Attributes:
        core: Fine piece (a :class:`certify.lattice_measure.LatticePLD` with ``inf = 0``).
        tail: Coarse piece (``inf = 0``, ``h = ratio * core.h``).
        inf: Mass at +infinity (units :math:`2^{-B}`).
        ratio: Coarse unit over fine unit (a power of two).
        products: Exact products formed (for the rounding budget).
    """

    core: LatticePLD
    tail: LatticePLD
    inf: int
    ratio: int
    products: int = 0

    def __post_init__(self) -> None:
        if self.core.inf or self.tail.inf:
            raise ValueError("SplitPLD pieces must carry no mass at infinity")
        if self.tail.h != self.core.h * self.ratio:
            raise ValueError(f"tail unit {self.tail.h!r} is not {self.ratio} x {self.core.h!r}")

    h = property(lambda self: self.core.h)
    bits = property(lambda self: self.core.bits)
    count = property(lambda self: self.core.count)
    direction = property(lambda self: self.core.direction)
    points = property(lambda self: self.core.points)

    @property
    def total(self) -> int:
        """Total mass (units 2^-B)."""
        return int(self.core.coeffs(1)) + int(self.tail.coeffs(1)) + self.inf

    def composed_length(self) -> int:
        """Coefficients held (core and tail)."""
        return self.core.coeffs.length() + self.tail.coeffs.length()

    def delta_upper(self, eps: arb) -> arb:
        """Step 5: the sum of the two pieces' enclosures plus the mass at infinity."""
        return (self.core.delta_upper(eps) + self.tail.delta_upper(eps)
                + arb(self.inf) * arb(2) ** (-self.bits))

    def rounding_budget(self) -> float:
        """As :meth:`certify.lattice_measure.LatticePLD.rounding_budget` (a diagnostic)."""
        excess = (self.total - (1 << self.bits)) / 2.0**self.bits
        return (excess + self.count * 2.0 ** (-self.bits) * (1.0 + excess)
                + self.products * 2.0**-63 + 2.0**-71)

    def float_profile(self) -> tuple[np.ndarray, np.ndarray, float]:
        """(support points sorted, masses, mass at infinity) as floats, for searching only."""
        s1, c1, _ = self.core.float_profile()
        s2, c2, _ = self.tail.float_profile()
        s, c = np.concatenate([s1, s2]), np.concatenate([c1, c2])
        order = np.argsort(s, kind="stable")
        return s[order], c[order], float(self.inf) * 2.0 ** (-self.bits)


def _piece(like: LatticePLD, h: float, offset: int, coeffs: fmpz_poly) -> LatticePLD:
    return LatticePLD(h, like.bits, offset, coeffs, 0, like.count, like.direction, like.points)


def _add(x: LatticePLD, y: LatticePLD) -> LatticePLD:
    """The sum of two pieces on one lattice (exact)."""
    if x.coeffs.length() == 0:
        return y
    if y.coeffs.length() == 0:
        return x
    o = min(x.offset, y.offset)
    c = x.coeffs.left_shift(x.offset - o) + y.coeffs.left_shift(y.offset - o)
    return _piece(x, x.h, o, c)


def _split(fine: LatticePLD, tail: LatticePLD, inf: int, ratio: int, products: int,
           tail_mass: float, min_span: int | None = None) -> SplitPLD:
    """Move the fine law's ends beyond :data:`TAIL_MASS` of the total mass (per end) to the
    coarse tail by section C (Step 2); the fine law's own mass at infinity joins ``inf``.
    ``min_span``: a law spanning at most this many fine units stays one fine law (None:
    :data:`MIN_SPAN`; tightness and time only)."""
    inf += fine.inf
    c = fine.coeffs
    n = c.length()
    fine = _piece(fine, fine.h, fine.offset, c)
    nt = tail.coeffs.length()
    lo = min(fine.offset, tail.offset * ratio) if nt else fine.offset
    hi = max(fine.offset + n, (tail.offset + nt) * ratio) if nt else fine.offset + n
    if hi - lo <= (MIN_SPAN if min_span is None else min_span):  # short: one fine law (the
        # tail's atoms moved to it exactly)
        if nt:
            fine = _add(fine, _piece(fine, fine.h, tail.offset * ratio,
                                     tail.coeffs.inflate(ratio)))
        return SplitPLD(fine, _piece(tail, tail.h, 0, fmpz_poly([])), inf, ratio, products)
    tau = int(tail_mass * (int(c(1)) + int(tail.coeffs(1)) + inf))
    low, top, _, _ = cut_sums(c, tau)
    if low == 0 and top + 1 >= n:
        return SplitPLD(fine, tail, inf, ratio, products)
    if top + 1 < n:
        high = _piece(fine, fine.h, fine.offset + top + 1, c.right_shift(top + 1))
        tail = _add(tail, coarsen_cells(high, ratio))
        c = c.truncate(top + 1)
    if low > 0:
        tail = _add(tail, coarsen_cells(_piece(fine, fine.h, fine.offset, c.truncate(low)),
                                       ratio))
        c = c.right_shift(low)
    core, tail = absorb(_piece(fine, fine.h, fine.offset + low, c), tail, ratio)
    return SplitPLD(core, tail, inf, ratio, products)


def absorb(core: LatticePLD, tail: LatticePLD, ratio: int) -> tuple[LatticePLD, LatticePLD]:
    r"""Move the tail's atoms that lie inside the core's range to the core, exactly: a coarse
    point :math:`JU` is the fine point :math:`(Jr)u`, so the law is unchanged.

    Why: a product's tail holds every path with one coarse factor, so without this its mass
    doubles with each squaring (measured: rate 0.01, sigma 1, m = 1e7, 23 squarings, the
    upper end 0.5% higher), and those paths, back in the bulk, would keep being composed on
    the coarse lattice."""
    n, nt = core.coeffs.length(), tail.coeffs.length()
    if n == 0 or nt == 0:
        return core, tail
    a, b = core.offset, core.offset + n - 1
    ia = max(-((-a) // ratio) - tail.offset, 0)
    ib = min(b // ratio - tail.offset, nt - 1)
    if ib < ia:
        return core, tail
    mid = tail.coeffs.truncate(ib + 1).right_shift(ia) if ia else tail.coeffs.truncate(ib + 1)
    if mid.length() == 0:
        return core, tail
    shift = (tail.offset + ia) * ratio - a
    core = _piece(core, core.h, a, core.coeffs + mid.inflate(ratio).left_shift(shift))
    tail = _piece(tail, tail.h, tail.offset, tail.coeffs - mid.left_shift(ia))
    return core, tail


def split_upper(lat: LatticePLD, ratio: int = TAIL_RATIO, tail_mass: float = TAIL_MASS,
                min_span: int | None = None) -> SplitPLD:
    """A single-step (or any) lattice law as core + coarse tail (Step 2).

    Raises:
        ValueError: on a bad ``ratio`` or ``tail_mass`` (:func:`check_tail_params`)."""
    check_tail_params(ratio, tail_mass)
    empty = _piece(lat, lat.h * ratio, 0, fmpz_poly([]))
    return _split(lat, empty, 0, ratio, lat.products, tail_mass, min_span)


def core_ends(masses: list[int], tau: int) -> tuple[int, int]:
    """(first, last) positions of the core: the masses before ``first`` and after ``last`` sum
    to at most ``tau`` each (exact integers)."""
    n = len(masses)
    last, above = n - 1, 0
    while last > 0 and above + masses[last] <= tau:
        above += masses[last]
        last -= 1
    first, below = 0, 0
    while first < last and below + masses[first] <= tau:
        below += masses[first]
        first += 1
    return first, last


def split_atoms(idx: list[int], masses: list[int], inf: int, unit: float, bits: int,
                direction: str, ratio: int = TAIL_RATIO, tail_mass: float = TAIL_MASS
                ) -> SplitPLD:
    r"""The single-step law with atoms ``masses`` at the fine points ``idx`` (sorted, units
    :math:`2^{-B}`; :func:`certify.lattice_adaptive.upper_atoms`) as core + tail, without the
    dense fine array (at rate 0.001, ~1e3 atoms over ~1e6 units): the atoms beyond
    ``tail_mass`` of the mass per end are moved by section C one by one (each atom c at
    :math:`JU + ju` becomes :math:`c - \lceil c w_j \rceil` at J and :math:`\lceil c w_j
    \rceil` at J + 1: the same weights and rounding as
    :func:`certify.lattice_adaptive.coarsen_upper`, so Step 2's proof applies); the others form
    the core (no truncation of the ends: none is needed for soundness)."""
    check_tail_params(ratio, tail_mass)
    tau = int(tail_mass * (sum(masses) + inf))
    first, last = core_ends(masses, tau)
    a = idx[first]
    core = [0] * (idx[last] - a + 1)
    for k in range(first, last + 1):
        core[idx[k] - a] = masses[k]
    like = LatticePLD(unit, bits, a, fmpz_poly(core), 0, 1, direction, len(idx))
    outside = [k for k in range(len(idx)) if k < first or k > last]
    if not outside:
        return SplitPLD(like, _piece(like, unit * ratio, 0, fmpz_poly([])), inf, ratio)
    w = upper_weights(unit, ratio)
    coarse: dict[int, int] = {}
    for k in outside:
        big, j = divmod(idx[k], ratio)
        c = masses[k]
        up = -((-c * w[j - 1]) >> 64) if j else 0  # ceil(c w_j / 2^64) <= c
        coarse[big] = coarse.get(big, 0) + c - up
        if up:
            coarse[big + 1] = coarse.get(big + 1, 0) + up
    j0 = min(coarse)
    tc = [0] * (max(coarse) - j0 + 1)
    for big, c in coarse.items():
        tc[big - j0] = c
    core_pld, tail = absorb(like, _piece(like, unit * ratio, j0, fmpz_poly(tc)), ratio)
    return SplitPLD(core_pld, tail, inf, ratio)


def _mul(x: LatticePLD, y: LatticePLD, tail: bool = False) -> tuple[LatticePLD, int]:
    """Exact product rescaled up, ends cut (Lemma 3): (product, mass cut above, to +inf).
    A product with a tail factor is cut at :math:`2^{-B}` per end, not :math:`2^{-64}`: its own
    mass is about the split mass (down to 1e-18), and cuts of :math:`2^{-64}` per product,
    doubled by every later squaring, put 1.6e-13 at +infinity at rate 0.001, sigma 2, m = 1e6
    (delta 1e-10: the interval 1.4e-4 wide instead of 6.4e-5)."""
    if x.coeffs.length() == 0 or y.coeffs.length() == 0:
        return _piece(x, x.h, 0, fmpz_poly([])), 0
    low, kept, above, below = mul_cut_rescale(x.coeffs, y.coeffs, x.bits, True,
                                              x.bits if tail else CORE_TRUNC_BITS,
                                              keeps_ceiling(x.count, y.count))
    if low > 0:
        kept = kept + fmpz_poly([below])
    out = LatticePLD(x.h, x.bits, x.offset + y.offset + low, kept, 0, x.count + y.count,
                     x.direction, max(x.points, y.points))
    return out, above


def multiply_split(a: SplitPLD, b: SplitPLD, tail_mass: float = TAIL_MASS,
                   min_span: int | None = None) -> SplitPLD:
    """Step 3: the dominating product of two laws on one unit, split again (the fine product's
    ends beyond ``tail_mass`` of the mass go to the tail; ``min_span`` as in :func:`_split`)."""
    if a.h != b.h or a.ratio != b.ratio:
        raise ValueError("multiply_split: the laws must share their units")
    r, bits = a.ratio, a.bits
    fa = int(a.core.coeffs(1)) + int(a.tail.coeffs(1))
    fb = int(b.core.coeffs(1)) + int(b.tail.coeffs(1))
    inf2 = a.inf * (fb + b.inf) + fa * b.inf
    inf = -((-inf2) >> bits)
    fine, cut = _mul(a.core, b.core)
    inf += cut
    count = a.count + b.count
    tail = _piece(a.tail, a.tail.h, 0, fmpz_poly([]))
    products = a.products + b.products + 1
    if a is b and a.tail.coeffs.length():  # a square: 2 C T + T T <= T (2 C^ + T), one product
        hat = coarsen_cells(a.core, r)
        hat2 = _piece(hat, hat.h, hat.offset, hat.coeffs * 2)
        t, cut = _mul(a.tail, _add(hat2, a.tail), True)
        tail, inf, products = _add(tail, t), inf + cut, products + 1
    else:
        tail, inf, products = _cross(a, b, r, tail, inf, products)
    fine = dataclasses.replace(fine, count=count)
    tail = dataclasses.replace(tail, count=count)
    return _split(fine, tail, inf, r, products, tail_mass, min_span)


def _cross(a: SplitPLD, b: SplitPLD, r: int, tail: LatticePLD, inf: int, products: int
           ) -> tuple[LatticePLD, int, int]:
    r"""The cross terms of Step 3, :math:`\hat C_a T_b + T_a(\hat C_b + T_b)`, added to
    ``tail`` (their cut masses to ``inf``)."""
    if b.tail.coeffs.length():
        t, cut = _mul(coarsen_cells(a.core, r), b.tail, True)
        tail, inf, products = _add(tail, t), inf + cut, products + 1
    if a.tail.coeffs.length():
        t, cut = _mul(a.tail, _add(coarsen_cells(b.core, r), b.tail), True)
        tail, inf, products = _add(tail, t), inf + cut, products + 1
    return tail, inf, products


def coarsen_cells(lat: LatticePLD, r: int) -> LatticePLD:
    r"""Section C onto the unit ``r * lat.h`` with one rounding per coarse cell: the upper share
    of cell J is :math:`U_J = \lceil \sum_{j \ge 1} c_{J,j} W_j / 2^{64} \rceil` (the
    weights of :func:`certify.lattice_adaptive.coarsen_upper`, :math:`W_j \ge 2^{64} w_j`),
    moved from J to J + 1. Proof: :math:`U_J` is at least the sum of the atoms' exact upper
    shares :math:`c_{J,j} w_j` (section C), and the excess only moves mass up (Lemma 3); and
    :math:`U_J \le \sum_{j \ge 1} c_{J,j}` (each :math:`W_j < 2^{64}`), so no cell goes
    negative. One rounding per cell instead of one per atom: r - 1 FLINT scalar products and
    a single rescaling (:func:`coarsen_upper` rescales r - 1 times)."""
    if r == 1:
        return lat
    if lat.coeffs.length() == 0:
        return LatticePLD(lat.h * r, lat.bits, 0, lat.coeffs, lat.inf, lat.count,
                          lat.direction, lat.points, lat.products)
    require_coarsen(r, lat.coeffs.length())
    w = upper_weights(lat.h, r)
    j0, first = divmod(lat.offset, r)
    # cell J holds fine indices r * (j0 + J) + j, j < r: its mass and its atoms' weighted sum
    cells = cell_sums(lat.coeffs, r, first, [1] * r)
    ups = ceil_div_pow2(cell_sums(lat.coeffs, r, first, [0, *w]), 64)
    return LatticePLD(lat.h * r, lat.bits, j0, cells - ups + ups.left_shift(1), lat.inf,
                      lat.count, lat.direction, lat.points, lat.products)


def coarsen_split(x: SplitPLD, r: int) -> SplitPLD:
    """Step 4: both pieces coarsened by section C (:func:`coarsen_cells`), the ratio kept."""
    if r == 1:
        return x
    return SplitPLD(coarsen_cells(x.core, r), coarsen_cells(x.tail, r), x.inf, x.ratio,
                    x.products)


def split_ops(tail_mass: float = TAIL_MASS, min_span: int | None = None):
    """Operations of :func:`certify.lattice_adaptive.power` on core + tail laws, the products
    splitting at ``tail_mass`` (the ratio is the laws' own; ``min_span`` as in
    :func:`_split`)."""
    check_tail_params(TAIL_RATIO, tail_mass)
    return dataclasses.replace(
        UPPER_OPS, mul=lambda a, b: multiply_split(a, b, tail_mass, min_span),
        coarsen=coarsen_split,
        length=lambda x: max(x.core.coeffs.length(), x.tail.coeffs.length()))


SPLIT_UPPER_OPS = split_ops()
"""Operations of :func:`certify.lattice_adaptive.power` on core + tail laws (defaults)."""
