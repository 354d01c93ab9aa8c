r"""Fine core, coarse tails for the lower end: the binned test with a statistic that is coarse
in its far tails (the lower-end analogue of :mod:`certify.lattice_split`).

The lower end of the lattice (:mod:`certify.lattice_lower`, proofs there; section D of
:mod:`certify.lattice_adaptive`) evaluates a threshold test on a statistic S that is a
deterministic function of the outputs (a post-processing). Here each composed block carries a
pair (value, flag): a *core* value on the fine unit u, or a *tail* value on the coarse unit
:math:`U = r u` (:data:`certify.lattice_split.TAIL_RATIO`). The law is stored as a
:class:`certify.lattice_lower.LowerLattice` (the core, unit u) whose ``tail`` is a second
``LowerLattice`` (unit U, the same tilts), the unlocated tilted mass E and the Q-mass of the
cell :math:`L = +\infty` carried by the core.

**Step 1 (the statistic is a post-processing).** Every operation below maps the block
statistics to a new one by a deterministic function: a product of two independent blocks with
values :math:`S_a, S_b` has the fine value :math:`S_a + S_b` if both are core values, else the
tail value :math:`\lfloor (S_a + S_b)/U \rfloor` (S in loss units); the split after a product
keeps a value in the core range :math:`[a, b]` (fine labels) and sends any other to the tail
value :math:`\lfloor S/U \rfloor`; a re-discretization by r' maps core labels k to
:math:`\lfloor k/r' \rfloor` and tail labels J to :math:`\lfloor J/r' \rfloor` (units
:math:`ur'`, :math:`Ur'`). The flag is itself a function of the outputs, so the final test
event :math:`\{\text{core value} > Ku\} \cup \{\text{tail value} > Ku\}` is an event on the
outputs and :math:`\delta(\varepsilon) \ge Q(\cdot) - e^\varepsilon P(\cdot)` holds for it.

**Step 2 (Q side).** The Q-law of a tail value is the sum of the fine Q masses it collects
(section D: exact integer sums), a product is the convolution of the pieces' laws: core x core
on u; :math:`\hat C_a * T_b` and :math:`T_a * (\hat C_b + T_b)` on U, with :math:`\hat C` the
section-D coarsening of the core (for a core label s and a tail label K,
:math:`\lfloor (su + KU)/U \rfloor = \lfloor s/r \rfloor + K`, so the law of the tail value is
exactly that convolution). Every product is rounded down and its cut ends dropped, so the
computed masses stay below the true ones pointwise, as in the uniform case. The cell at
infinity: :math:`(F_a + I_a)(F_b + I_b) - F_aF_b` rounded down, F the finite Q masses of core
and tail together.

**Step 3 (tilted P side).** With labels in units u (a tail label J is the fine label Jr), the
identity :math:`P(S = j) = e^{-ju - \Gamma} r_j` of :mod:`certify.lattice_lower` holds for any
integer labels, so for the tail value, by section D, the tilted mass at J is :math:`\sum_i
e^{-iu} r_{Jr + i}` (weights rounded up), and its convolution with another block's tilted law
is again of that form (:math:`e^{-(s - r\lfloor s/r \rfloor)u}` is the section-D weight of the
core label s). Products round up; cut masses and the cross terms of the unlocated masses,
:math:`E_a(R_b + E_b) + R_a E_b` with R the total tilted masses of core and tail together, go
to the unlocated mass E. One E serves both pieces: a mass at an unknown label j > K (fine or
Jr) weighs at most :math:`e^{-(K+1)u}`. Re-tilting (:func:`certify.lattice_lower.retilt`)
multiplies both pieces and E by the same factor and records one tilt.

**Step 4 (evaluation).** :meth:`certify.lattice_lower.LowerLattice.delta_lower_at` adds the
tail's own test term at the coarse threshold :math:`\lfloor K/r \rfloor` (:math:`Jr > K \iff J >
\lfloor K/r \rfloor`); both pieces share the tilts.

The split points govern tightness only; the tail's values are far from the threshold of the
test unless a block's statistic lies beyond its :data:`certify.lattice_split.TAIL_MASS`
quantile.
"""

from __future__ import annotations

import dataclasses

from flint import fmpz_poly

from . import lattice_split
from .lattice_adaptive import LOWER_OPS, coarsen_lower, tilt_weights
from .lattice_grid import cut_sums
from .lattice_lower import LowerLattice, Seq, combine_lowers, merge_tilts, retilt
from .lattice_split import TAIL_MASS, TAIL_RATIO, check_tail_params, core_ends

__all__ = ["SPLIT_LOWER_OPS", "coarsen_split_lower", "multiply_split_lower", "split_lower",
           "split_lower_atoms", "split_lower_ops"]



def _bare(x: LowerLattice) -> LowerLattice:
    """The core alone: no tail, no unlocated mass, no cell at infinity."""
    return LowerLattice(x.h, x.bits, Seq(x.q.offset, x.q.coeffs), Seq(x.r.offset, x.r.coeffs),
                        x.count, x.direction, x.points, x.tilts)


def _seq_add(a: Seq, b: Seq) -> Seq:
    if a.coeffs.length() == 0:
        return Seq(b.offset, b.coeffs, a.extra + b.extra, a.inf + b.inf)
    if b.coeffs.length() == 0:
        return Seq(a.offset, a.coeffs, a.extra + b.extra, a.inf + b.inf)
    o = min(a.offset, b.offset)
    c = a.coeffs.left_shift(a.offset - o) + b.coeffs.left_shift(b.offset - o)
    return Seq(o, c, a.extra + b.extra, a.inf + b.inf)


def _add(x: LowerLattice | None, y: LowerLattice | None) -> LowerLattice | None:
    """Sum of two tail pieces on one unit with the same tilts (exact)."""
    if x is None:
        return y
    if y is None:
        return x
    if x.h != y.h or x.tilts != y.tilts:
        raise ValueError("lattice_split_lower: pieces on different units or tilts")
    return LowerLattice(x.h, x.bits, _seq_add(x.q, y.q), _seq_add(x.r, y.r), x.count,
                        x.direction, max(x.points, y.points), x.tilts)


def _slice(s: Seq, lo: int, hi: int) -> Seq:
    """The coefficients of labels in [lo, hi] (absolute), exact."""
    n = s.coeffs.length()
    a, b = max(lo - s.offset, 0), min(hi - s.offset, n - 1)
    if b < a:
        return Seq(lo, fmpz_poly([]))
    c = s.coeffs
    if b + 1 < n:
        c = c.truncate(b + 1)
    if a > 0:
        c = c.right_shift(a)
    return Seq(s.offset + a, c)


def _label_range(s: Seq, bits: int, tail_mass: float) -> tuple[int, int] | None:
    n = s.coeffs.length()
    if n == 0:
        return None
    tot = int(s.coeffs(1))
    low, top, _, _ = cut_sums(s.coeffs, int(tail_mass * max(tot, 1 << bits)))
    return s.offset + low, s.offset + top


def _split(fine: LowerLattice, tail: LowerLattice | None, extra: int, inf: int, ratio: int,
           tail_mass: float, min_span: int | None = None) -> LowerLattice:
    """Step 1's split: labels outside the core range [a, b] (the union of the two sides'
    ranges beyond :data:`TAIL_MASS` of mass per end) go to the tail by section D. A law
    spanning at most ``min_span`` fine labels stays one fine law (None:
    :data:`certify.lattice_split.MIN_SPAN`; tightness and time only)."""
    if min_span is None:
        min_span = lattice_split.MIN_SPAN
    q, r = fine.q, fine.r
    ends = [(x.offset, x.offset + x.coeffs.length()) for x in (q, r) if x.coeffs.length()]
    if tail is not None:
        ends += [(x.offset * ratio, (x.offset + x.coeffs.length()) * ratio)
                 for x in (tail.q, tail.r) if x.coeffs.length()]
    if ends and max(e for _, e in ends) - min(o for o, _ in ends) <= min_span:
        if tail is not None:  # short: one fine law, the tail's labels moved to it exactly
            q = _seq_add(q, Seq(tail.q.offset * ratio, tail.q.coeffs.inflate(ratio)))
            r = _seq_add(r, Seq(tail.r.offset * ratio, tail.r.coeffs.inflate(ratio)))
            tail = None
        ends = []
    ranges = [x for x in (_label_range(q, fine.bits, tail_mass),
                          _label_range(r, fine.bits, tail_mass)) if x] if ends else []
    if ranges:
        a, b = min(x[0] for x in ranges), max(x[1] for x in ranges)
        lo_q, lo_r = min(q.offset, a), min(r.offset, a)
        hi_q = max(q.offset + q.coeffs.length(), b + 1)
        hi_r = max(r.offset + r.coeffs.length(), b + 1)
        for (qa, qb), (ra, rb) in (((lo_q, a - 1), (lo_r, a - 1)),
                                   ((b + 1, hi_q), (b + 1, hi_r))):
            pq, pr = _slice(q, qa, qb), _slice(r, ra, rb)
            if pq.coeffs.length() or pr.coeffs.length():
                piece = LowerLattice(fine.h, fine.bits, pq, pr, fine.count, fine.direction,
                                     fine.points, fine.tilts)
                tail = _add(tail, coarsen_lower(piece, ratio))
        q, r = _slice(q, a, b), _slice(r, a, b)
        if tail is not None:
            q, tq = _absorb(q, tail.q, a, b, ratio)
            r, tr = _absorb(r, tail.r, a, b, ratio)
            tail = LowerLattice(tail.h, tail.bits, tq, tr, tail.count, tail.direction,
                                tail.points, tail.tilts)
    core = LowerLattice(fine.h, fine.bits, Seq(q.offset, q.coeffs, 0, inf),
                        Seq(r.offset, r.coeffs, extra, 0), fine.count, fine.direction,
                        fine.points, fine.tilts, tail)
    return core


def _absorb(core: Seq, tail: Seq, a: int, b: int, ratio: int) -> tuple[Seq, Seq]:
    r"""Tail labels J with Jr in the core range [a, b] become the core labels Jr, masses
    unchanged: the statistic's value (loss :math:`JU = Jr u`) is the same, only its flag
    changes, a deterministic function (Step 1); the tilted identity holds at the label Jr
    with the same mass (:math:`e^{-JU} = e^{-(Jr)u}`). Without this the tail's mass doubled
    with each squaring (see :func:`certify.lattice_split.absorb`)."""
    nt = tail.coeffs.length()
    ia = max(-((-a) // ratio) - tail.offset, 0)
    ib = min(b // ratio - tail.offset, nt - 1)
    if nt == 0 or ib < ia:
        return core, tail
    mid = tail.coeffs.truncate(ib + 1).right_shift(ia) if ia else tail.coeffs.truncate(ib + 1)
    if mid.length() == 0:
        return core, tail
    core = _seq_add(core, Seq((tail.offset + ia) * ratio, mid.inflate(ratio)))
    return core, Seq(tail.offset, tail.coeffs - mid.left_shift(ia), tail.extra, tail.inf)


def _dense(idx: list[int], masses: list[int], first: int, last: int) -> Seq:
    a = idx[first]
    out = [0] * (idx[last] - a + 1)
    for k in range(first, last + 1):
        out[idx[k] - a] = masses[k]
    return Seq(a, fmpz_poly(out))


def _cells(cells: dict[int, int]) -> Seq:
    if not cells:
        return Seq(0, fmpz_poly([]))
    j0 = min(cells)
    out = [0] * (max(cells) - j0 + 1)
    for j, c in cells.items():
        out[j - j0] = c
    return Seq(j0, fmpz_poly(out))


def split_lower_atoms(idx: list[int], qm: list[int], rm: list[int], q_inf: int, tilt: float,
                      unit: float, bits: int, direction: str, ratio: int = TAIL_RATIO,
                      tail_mass: float = TAIL_MASS) -> LowerLattice:
    r"""The single-step laws (:func:`certify.lattice_adaptive.lower_atoms`: Q masses ``qm``
    rounded down, tilted P masses ``rm`` rounded up, at the labels ``idx``) as core + tail
    without the dense fine arrays: labels outside the core range go to the tail value
    :math:`\lfloor k/r \rfloor` (Step 1) with the masses of section D computed cell by cell
    (Q: exact sums; P: :math:`\lceil \sum_i r_{Jr+i} W_i / 2^{64} \rceil`, the weights of
    :func:`certify.lattice_adaptive.coarsen_lower`)."""
    check_tail_params(ratio, tail_mass)
    tau_q = int(tail_mass * max(sum(qm), 1 << bits))
    tau_r = int(tail_mass * max(sum(rm), 1 << bits))
    n = len(idx)
    (f1, l1), (f2, l2) = core_ends(qm, tau_q), core_ends(rm, tau_r)
    first, last = min(f1, f2), max(l1, l2)
    tilts = ((tilt, 1),)
    q, r = _dense(idx, qm, first, last), _dense(idx, rm, first, last)
    outside = [k for k in range(n) if k < first or k > last]
    tail = None
    if outside:
        w = tilt_weights(unit, ratio)
        qc: dict[int, int] = {}
        rc: dict[int, int] = {}
        for k in outside:
            big, i = divmod(idx[k], ratio)
            qc[big] = qc.get(big, 0) + qm[k]
            rc[big] = rc.get(big, 0) + rm[k] * w[i]
        rc = {j: -((-c) >> 64) for j, c in rc.items()}
        tq, tr = _cells(qc), _cells(rc)
        a, b = idx[first], idx[last]
        q, tq = _absorb(q, tq, a, b, ratio)
        r, tr = _absorb(r, tr, a, b, ratio)
        tail = LowerLattice(unit * ratio, bits, tq, tr, 1, direction, n, tilts)
    return LowerLattice(unit, bits, Seq(q.offset, q.coeffs, 0, q_inf), Seq(r.offset, r.coeffs),
                        1, direction, n, tilts, tail)


def _merge_tilts(x: LowerLattice) -> LowerLattice:
    tilts = merge_tilts(x.tilts)
    tail = x.tail
    if tail is not None:
        tail = dataclasses.replace(tail, tilts=tilts)
    return dataclasses.replace(x, tilts=tilts, tail=tail)


def split_lower(low: LowerLattice, ratio: int = TAIL_RATIO, tail_mass: float = TAIL_MASS,
                min_span: int | None = None) -> LowerLattice:
    """A single-step (or any tail-free) lower law as core + coarse tail (Step 1).

    Raises:
        ValueError: on a law that has a tail already, or bad ``ratio`` / ``tail_mass``."""
    check_tail_params(ratio, tail_mass)
    if low.tail is not None:
        raise ValueError("split_lower: the law already has a tail")
    return _split(_bare(low), None, low.r.extra, low.q.inf, ratio, tail_mass, min_span)


def multiply_split_lower(a: LowerLattice, b: LowerLattice, ratio: int = TAIL_RATIO,
                         tail_mass: float = TAIL_MASS, min_span: int | None = None
                         ) -> LowerLattice:
    """Steps 2 and 3: the product of two independent blocks (core + tail each), split again,
    equal tilts merged and the tilted side re-tilted (:func:`certify.lattice_lower.retilt`)."""
    if a.h != b.h:
        raise ValueError("multiply_split_lower: the laws must share their unit")
    bits = a.bits
    ac, bc = _bare(a), _bare(b)
    fine = combine_lowers(ac, bc, lattice_split.CORE_TRUNC_BITS)
    tail = None
    if a is b and a.tail is not None:  # a square: the two cross terms are equal laws
        hat = coarsen_lower(ac, ratio)
        hat2 = LowerLattice(hat.h, bits, Seq(hat.q.offset, hat.q.coeffs * 2),
                            Seq(hat.r.offset, hat.r.coeffs * 2), hat.count, hat.direction,
                            hat.points, hat.tilts)
        tail = combine_lowers(a.tail, _add(hat2, a.tail), bits)
    else:  # products with a tail factor cut at 2^-B per end (lattice_split)
        if b.tail is not None:
            tail = combine_lowers(coarsen_lower(ac, ratio), b.tail, bits)
        if a.tail is not None:
            tail = _add(tail, combine_lowers(a.tail, _add(coarsen_lower(bc, ratio), b.tail),
                                             bits))

    def tot(x: LowerLattice, side: str) -> int:
        s = int(getattr(x, side).coeffs(1))
        return s if x.tail is None else s + int(getattr(x.tail, side).coeffs(1))

    ra, rb, fa, fb = tot(a, "r"), tot(b, "r"), tot(a, "q"), tot(b, "q")
    cross = a.r.extra * (rb + b.r.extra) + ra * b.r.extra
    extra = -((-cross) >> bits) + fine.r.extra + (0 if tail is None else tail.r.extra)
    inf = (a.q.inf * (fb + b.q.inf) + fa * b.q.inf) >> bits
    if tail is not None:  # its cut masses now live in the core's E (Step 3)
        tail = LowerLattice(tail.h, bits, Seq(tail.q.offset, tail.q.coeffs),
                            Seq(tail.r.offset, tail.r.coeffs), tail.count, tail.direction,
                            tail.points, tail.tilts)
    return retilt(_merge_tilts(_split(fine, tail, extra, inf, ratio, tail_mass, min_span)))


def coarsen_split_lower(x: LowerLattice, r: int) -> LowerLattice:
    """Step 1's re-discretization by r: core and tail by section D, the ratio kept."""
    if r == 1:
        return x
    core = coarsen_lower(dataclasses.replace(x, tail=None), r)
    tail = None if x.tail is None else coarsen_lower(x.tail, r)
    return dataclasses.replace(core, tail=tail)


def _length(x: LowerLattice) -> int:
    n = max(x.q.coeffs.length(), x.r.coeffs.length())
    if x.tail is not None:
        n = max(n, x.tail.q.coeffs.length(), x.tail.r.coeffs.length())
    return n


def split_lower_ops(ratio: int = TAIL_RATIO, tail_mass: float = TAIL_MASS,
                    min_span: int | None = None):
    """Operations of :func:`certify.lattice_adaptive.power` on core + tail lower laws
    (``min_span`` as in :func:`_split`)."""
    check_tail_params(ratio, tail_mass)
    return dataclasses.replace(
        LOWER_OPS, mul=lambda a, b: multiply_split_lower(a, b, ratio, tail_mass, min_span),
        coarsen=coarsen_split_lower, length=_length)


SPLIT_LOWER_OPS = split_lower_ops()
"""Operations of :func:`certify.lattice_adaptive.power` on core + tail lower laws (defaults)."""
