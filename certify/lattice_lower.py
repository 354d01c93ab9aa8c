r"""The lower end of the lattice method: an exactly evaluated binned threshold test.

Used by :func:`certify.lattice.lattice_delta_interval` and
:func:`certify.lattice.lattice_epsilon_interval`, whose upper ends are the dominating lattice PLD
of :mod:`certify.lattice`. The construction and its proof are in :data:`LOWER_DOC` (appended to
this docstring and to :mod:`certify.lattice`'s).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np
from flint import arb, arb_poly, ctx, fmpz, fmpz_poly

from numeric.mechanisms.base import DIRECTION_PQ

from .budget import check_deadline
from .engine import DEFAULT_PRECISION, ceil_upper, floor_lower, workprec
from .intpoly import up_div_pow2
from .lattice_grid import (
    TRUNC_BITS,
    bounded_cache,
    fold,
    grid_range,
    keeps_ceiling,
    mul_cut_rescale,
    sum_above,
)
from .search import bisect, expand, snap_down
from .steps import LatticeStep

__all__ = [
    "A_LOWER",
    "LOWER_DOC",
    "LowerLattice",
    "Seq",
    "epsilon_lower",
    "lower_lattice",
    "lower_term",
    "merge_tilts",
    "retilt",
]

LOWER_DOC = r"""
**Lower bound (a concrete test, evaluated with directed rounding).** Fix one pair order with
PLLR :math:`L = \log(dQ/dP)` (for the order (Q, P) of the subsampled Gaussian the roles of P and
Q are swapped and L is negated; the formulas below are written for "numerator" Q and
"denominator" P). Fix integers :math:`a < b` and bin one observation by the cell index

.. math::

    c(x) = a \text{ if } L(x) < (a+1)h, \quad c(x) = k \text{ if } kh \le L(x) < (k+1)h
    \ (a < k < b), \quad c(x) = b \text{ if } L(x) \ge bh.

c is a deterministic function of the output, so for the m-fold composition the statistic
:math:`S = \sum_i c(x_i)` is a post-processing and for every threshold K and every eps the
event :math:`\{S > K\}` gives :math:`\delta_{P^m, Q^m}(\varepsilon) \ge Q^m(S > K) -
e^\varepsilon P^m(S > K)` (the hockey-stick divergence is the supremum over events).

*Q side.* With :math:`q_k = Q(c = k)`, :math:`Q^m(S = j) = q^{*m}_j`. The single-step masses are
rounded **down** to fixed point, every product of the binary powering is rescaled by
:math:`\lfloor \cdot / 2^B \rfloor`, and tails are simply dropped: each operation only lowers
coefficients pointwise and convolution of non-negative sequences is monotone, so the computed
:math:`Q'_j \le 2^B Q^m(S = j)` for every j and :math:`2^{-B}\sum_{j > K} Q'_j \le Q^m(S > K)`.

*P side, exponentially tilted (exact identity).* Put :math:`r_k = e^{kh + \gamma} p_k`,
:math:`p_k = P(c = k)`, with a binary64 constant :math:`\gamma` (exact) chosen in floating point
so that :math:`\sum_k r_k \approx 1` (renormalisation; any :math:`\gamma` is valid). For any
cell sequence with :math:`\sum c_i = j`, :math:`\prod p_{c_i} = e^{-jh - m\gamma} \prod
r_{c_i}`, hence :math:`P^m(S = j) = e^{-jh - m\gamma} r^{*m}_j` exactly. The tilted masses are
O(1)-normalised (:math:`e^{kh} p_k \le q_k` on the interior cells, since there :math:`dP =
e^{-L} dQ \le e^{-kh} dQ`; without :math:`\gamma` the total would be about :math:`e^{-h/2}` per
step and :math:`e^{-mh/2}` after m steps, below the fixed-point unit at m = 1e5, h = 2^-8), so
the relevant tail :math:`P^m(S > K) \approx e^{-\varepsilon}\delta` is carried with full
*relative* precision even when it is ~1e-17
(m = 1e5, eps ~ 25.6). The :math:`r_k` are rounded **up**, products rescaled up (by
:math:`\lfloor \cdot / 2^B \rfloor + 1 \ge \lceil \cdot / 2^B \rceil`), and mass cut from
either end of a product is not lost but
added to a scalar E ("mass at an unknown index"). Invariant:
:math:`2^B r^{*n} \le R' + e` pointwise for some non-negative e of total mass :math:`\le E`;
for a product, :math:`(R'_a + e_a) * (R'_b + e_b) = R'_a * R'_b + [e_a * (R'_b + e_b) + R'_a *
e_b]`, the bracket having total mass :math:`E_a(|R'_b| + E_b) + |R'_a| E_b`, which is rounded up
and added to E together with the cut mass. Then

.. math::

    P^m(S > K) \le 2^{-B} e^{-m\gamma}\Bigl(\sum_{j > K} e^{-jh} R'_j + e^{-(K+1)h} E\Bigr)

since :math:`e^{-jh} \le e^{-(K+1)h}` for j > K.

*Result.* :math:`\delta(\varepsilon) \ge \max_K \bigl[2^{-B}\sum_{j>K} Q'_j - e^\varepsilon
\cdot (\text{the P bound})\bigr]`, clipped at 0. K is chosen in floating point; the chosen K is
evaluated in Arb (exact integer sums, ``arb_poly`` Horner at :math:`e^{-h}`), so the choice
affects only tightness. The profile is non-increasing in eps; if it exceeds the target delta at
eps_lo then :math:`\delta(\varepsilon) > \delta` for all :math:`\varepsilon \le` eps_lo, so
:math:`\varepsilon(\delta) \ge` eps_lo. For a pair with both orders, delta and eps(delta) are the
max over orders, so the max of the per-order lower bounds is a lower bound.

*Cell masses* (closed forms in Arb, :mod:`certify.lattice_steps`): with tails :math:`T_Q(s) =
Q(L \ge s)`, :math:`T_P(s) = P(L \ge s)`, :math:`q_k = T_Q(kh) - T_Q((k+1)h)` (with
:math:`T(-\infty) = 1`, i.e. :math:`q_a = 1 - T_Q((a+1)h)`, and :math:`q_b = T_Q(bh) - Q(L =
+\infty)`). The binning window [a, b] is the upper bound's grid range; any choice is valid.

*The cell L = +infinity* (pairs that are not mutually continuous, e.g. ApproxDP): it gets its own
symbol, so the test is :math:`\{\text{some } c(x_i) = +\infty\} \cup \{\text{all finite}, S >
K\}`, still a post-processing. P never charges it, and its Q-mass after m steps is carried as a
scalar (the Q-mass of "some coordinate infinite", rounded down in every product like the rest of
the Q side) and added to the Q tail.

*Several terms* (heterogeneous compositions): each term has its own tilt :math:`\gamma_i`; the
identity becomes :math:`P(S = j) = e^{-jh - \sum_i m_i\gamma_i} r_j` for the convolution r of the
tilted laws, so :math:`m\gamma` above is replaced by :math:`\sum_i m_i \gamma_i` (computed
exactly in Arb).
"""

__doc__ = (__doc__ or "") + LOWER_DOC

A_LOWER = (
    "lattice lower end: exact evaluation (directed fixed-point rounding, exponential tilting of "
    "the P side) of the threshold test on the sum of PLLR cell indices, a post-processing "
    "(proof in certify.lattice)"
)


@dataclass(frozen=True)
class Seq:
    """Integer sequence at grid indices offset + k (units 2^-B), plus unlocated mass ``extra``
    (tilted P side) and mass ``inf`` of the cell L = +infinity (Q side)."""

    offset: int
    coeffs: fmpz_poly
    extra: int = 0
    inf: int = 0


def _sorted_unique(x: np.ndarray) -> np.ndarray:
    """The sorted distinct values of a 1-d array (``np.unique``'s values, without its masked-array
    check: numpy 2.4's ``np.unique`` imports ``numpy.ma`` on first use, ~7 ms of CPU in a fresh
    process's first lattice query, measured 2026-12-02)."""
    s = np.sort(x)
    if s.size < 2:
        return s
    keep = np.empty(s.size, dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def multiply_seqs(a: Seq, b: Seq, bits: int, up: bool, trunc_bits: int = TRUNC_BITS,
                  exact_ceiling: bool = False) -> Seq:
    """Product, rescaled down (Q side: floor, cut mass dropped) or up (tilted P side: floor + 1,
    or the ceiling with ``exact_ceiling``; cut mass and the extra-mass cross terms added to
    ``extra``); the ends are cut on the exact product (:func:`certify.lattice_grid.cut_rescale`)."""
    # ends cut on the exact product, which is freed as soon as its kept part is copied
    low, kept, above, below = mul_cut_rescale(a.coeffs, b.coeffs, bits, up, trunc_bits,
                                              exact_ceiling)
    extra = inf = 0
    fa, fb = int(a.coeffs(1)), int(b.coeffs(1))
    if up:
        cross = a.extra * (fb + b.extra) + fa * b.extra
        extra = -((-cross) >> bits) + above + below
    else:  # some coordinate infinite: a.inf with anything of b, or a finite part with b.inf
        inf = (a.inf * (fb + b.inf) + fa * b.inf) >> bits
    return Seq(a.offset + b.offset + low, kept, extra, inf)


def _power_seq(base: Seq, m: int, bits: int, up: bool) -> Seq:
    result = None
    sq = base
    for bit in range(m.bit_length()):
        check_deadline("in the lattice lower end (squarings)")
        if bit:
            sq = multiply_seqs(sq, sq, bits, up)
        if (m >> bit) & 1:
            result = sq if result is None else multiply_seqs(result, sq, bits, up)
    return result


@dataclass(frozen=True)
class LowerLattice:
    r"""Composed binned test laws: Q' (rounded down) and tilted P' (rounded up, with extra mass).

    ``q`` and ``r`` hold integers (units 2^-B) at grid indices ``offset + k``; see the lower-bound
    section of the module docstring for the certified inequality.
    """

    h: float
    bits: int
    q: Seq
    r: Seq
    count: int
    direction: str
    points: int
    tilts: tuple[tuple[float, int], ...] = ()  # (gamma_i, m_i) per term (binary64, exact)
    tail: Any = None
    """None, or the coarse tail of :mod:`certify.lattice_split_lower`: a ``LowerLattice`` on
    the unit ``ratio * h`` (the statistic's values outside this law's core, labels in units of
    the tail's h), with the same tilts, no extra mass and no cell at infinity (those are
    carried here)."""

    @property
    def ratio(self) -> int:
        """Tail unit over core unit (1 without a tail)."""
        return 1 if self.tail is None else round(self.tail.h / self.h)

    def composed_length(self) -> int:
        """Coefficients held (both sides, core and tail)."""
        n = max(self.q.coeffs.length(), self.r.coeffs.length())
        return n if self.tail is None else n + self.tail.composed_length()

    def q_mass_lost(self) -> float:
        """Q-mass lost to rounding down and dropped tails (a tightness diagnostic: the test's Q
        term is low by at most this much)."""
        kept = int(self.q.coeffs(1)) + self.q.inf
        if self.tail is not None:
            kept += int(self.tail.q.coeffs(1))
        return float(Fraction((1 << self.bits) - kept, 1 << self.bits))

    def _shift(self) -> arb:
        """sum_i m_i gamma_i exactly (53-bit times <= 30-bit products, few terms)."""
        with workprec(max(ctx.prec, 128 + 64 * len(self.tilts))):
            return sum((arb(g) * c for g, c in self.tilts), arb(0))

    @property
    def shift(self) -> float:
        """sum_i m_i gamma_i in floating point (search only)."""
        return math.fsum(g * c for g, c in self.tilts)

    @cached_property
    def _candidates(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r"""(indices j, Q' masses, R' masses) at the indices that carry mass, as floats.

        Only these thresholds need be searched: in a gap between the two sequences' supports
        (they can lie 10^7 units apart, e.g. 10^8 randomized-response steps next to far
        (eps, delta) steps) both tail sums are constant and the unlocated term
        :math:`E e^{-jh}` decreases in j, so the float test value is largest at the gap's last
        index, the first index of the next block (a candidate). The dense grid between them
        took 24 million points, 2 GB and 9 s for one search."""
        sc = 2.0 ** (-self.bits)
        qo, ro = self.q.offset, self.r.offset
        qc = np.array([float(v) * sc for v in self.q.coeffs.coeffs()], dtype=float)
        rc = np.array([float(v) * sc for v in self.r.coeffs.coeffs()], dtype=float)
        qj, rj = qo + np.arange(len(qc)), ro + np.arange(len(rc))
        if self.tail is not None:  # a coarse label J is the fine label J * ratio (same tilt)
            tj, tq, tr = self.tail._candidates
            qj, rj = np.concatenate([qj, tj * self.ratio]), np.concatenate([rj, tj * self.ratio])
            qc, rc = np.concatenate([qc, tq]), np.concatenate([rc, tr])
            j = _sorted_unique(np.concatenate([qj, rj]))
            qa, ra = np.zeros(len(j)), np.zeros(len(j))
            np.add.at(qa, np.searchsorted(j, qj), qc)
            np.add.at(ra, np.searchsorted(j, rj), rc)
            return j, qa, ra
        j = _sorted_unique(np.concatenate([qj, rj]))
        qa, ra = np.zeros(len(j)), np.zeros(len(j))
        qa[np.searchsorted(j, qj)] = qc
        ra[np.searchsorted(j, rj)] = rc
        return j, qa, ra

    @cached_property
    def _float_parts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """(indices j, Q' tails, tilted R' tails, extra) as floats, for choosing K only."""
        j, qa, ra = self._candidates
        sc = 2.0 ** (-self.bits)
        qt = np.cumsum(qa[::-1])[::-1]
        rw = np.cumsum((ra * np.exp(np.clip(-j * self.h, -745.0, 700.0)))[::-1])[::-1]
        return j, qt + float(self.q.inf) * sc, rw, float(self.r.extra) * sc

    def float_profile(self, eps: float) -> tuple[float, int]:
        """(approximate max_K test value, argmax K) in floating point (search only)."""
        j, qt, rw, extra = self._float_parts
        # tails above K = j[i] - 1, i.e. sums over indices >= j[i], in the tilted frame:
        # P-tail = e^eps * sum_{j' >= j} e^{-j' h} R'_{j'}
        shift = eps - self.shift
        w = np.exp(np.clip(shift - j * self.h, -745.0, 700.0))
        with np.errstate(over="ignore", invalid="ignore"):
            pt = math.exp(min(shift, 700.0)) * rw + extra * w
        if shift > 700.0 or float(np.max(np.abs(j * self.h), initial=0.0)) > 700.0:
            pt = self._log_p_tail(shift)  # large losses: the exponentials above over/underflow
        val = np.nan_to_num(qt - pt, nan=-np.inf)
        i = int(np.argmax(val))
        return float(val[i]), int(j[i] - 1)

    @cached_property
    def _log_r_tail(self) -> np.ndarray:
        """log sum_{j' >= j} e^{-j' h} R'_{j'} (float, log domain; search only)."""
        j, _, ra = self._candidates
        with np.errstate(divide="ignore"):
            terms = np.log(ra) - j * self.h
        return np.logaddexp.accumulate(terms[::-1])[::-1]

    def _log_p_tail(self, shift: float) -> np.ndarray:
        """The P-side tail of :meth:`float_profile` computed in the log domain (for losses
        beyond the float range of e^x, e.g. eps ~ 1000 at m = 1e7)."""
        j, _, _, extra = self._float_parts
        with np.errstate(divide="ignore", over="ignore"):
            a = shift + self._log_r_tail
            b = math.log(extra) + shift - j * self.h if extra > 0 else np.full(len(j), -np.inf)
            return np.exp(np.clip(np.logaddexp(a, b), -745.0, 709.0))

    def delta_lower_at(self, eps: arb, k: int) -> arb:
        r"""Enclosure of :math:`2^{-B}[\sum_{j>K} Q'_j - e^\varepsilon(\sum_{j>K} e^{-jh}R'_j +
        e^{-(K+1)h} E)]` at threshold K = ``k`` (current precision)."""
        h = arb(self.h)
        qs = sum_above(self.q.coeffs, k - self.q.offset) if k - self.q.offset >= -1 else int(
            self.q.coeffs(1))
        qs += self.q.inf
        j0 = max(k + 1 - self.r.offset, 0)
        n = self.r.coeffs.length()
        if j0 < n:
            tail = self.r.coeffs.right_shift(j0) if j0 > 0 else self.r.coeffs
            ps = arb_poly(tail)((-h).exp()) * (eps - (self.r.offset + j0) * h).exp()
        else:
            ps = arb(0)
        ps = (ps + arb(fmpz(self.r.extra)) * (eps - (k + 1) * h).exp()) * (-self._shift()).exp()
        out = (arb(fmpz(qs)) - ps) * arb(2) ** (-self.bits)
        if self.tail is not None:
            # the tail's labels J stand for the fine labels J * ratio: J * ratio > k iff
            # J > floor(k / ratio); its own test term is that of a sub-measure (same tilts)
            out += self.tail.delta_lower_at(eps, k // self.ratio)
        return out

    def delta_lower(self, eps: arb) -> tuple[arb, int]:
        """Best certified test value at ``eps`` (an Arb ball; its upper end is used) and K."""
        e_hi = arb(eps.upper())
        _, k = self.float_profile(float(e_hi.mid()))
        best, kb = None, k
        for kk in (k - 1, k, k + 1):
            v = self.delta_lower_at(e_hi, kk)
            if best is None or v.lower() > best.lower():
                best, kb = v, kk
        return best, kb


def _lower_single(step: LatticeStep, h: float, bits: int, count: int
                  ) -> tuple[Seq, Seq, int, float]:
    lo, hi = grid_range(step, count)
    a, b = math.floor(lo / h), math.ceil(hi / h)
    n = b - a + 1
    scale = 1 << bits
    prec = DEFAULT_PRECISION + bits
    tilt = None
    while True:
        with workprec(prec):
            hh = arb(h)
            # tails at the interior edges (a+1)h .. bh; T(-inf) = 1 and T(+inf) = 0
            tq, tp = [arb(1)], [arb(1)]
            for k in range(a + 1, b + 1):
                if (k - a) % 256 == 0:
                    check_deadline("in the lattice lower end (single-step grid)")
                x, y = step.tails(arb(k) * hh)
                tq.append(x)
                tp.append(y)
            q_inf = step.end_masses()[0]
            tq.append(q_inf)  # the cell L = +infinity has its own symbol in the test
            tp.append(arb(0))  # P(L = +infinity) = 0 always
            if tilt is None:  # renormalising constant gamma (any value is valid)
                z = sum(((arb(a + i) * hh).exp() * (tp[i] - tp[i + 1]) for i in range(n)),
                        arb(0))
                # in Arb: z can lie below the smallest double (a float log would fail)
                tilt = float((-z.log()).mid()) if z > 0 else 0.0
                if not math.isfinite(tilt):
                    tilt = 0.0
            qs, rs, worst = [], [], 0.0
            for i in range(n):
                qk = tq[i] - tq[i + 1]
                rk = (arb(a + i) * hh + arb(tilt)).exp() * (tp[i] - tp[i + 1])
                worst = max(worst, float(qk.rad()), float(rk.rad()))
                qs.append(max(0, floor_lower(qk * scale)))
                rs.append(max(0, ceil_upper(rk * scale)))
            q_inf_int = max(0, floor_lower(q_inf * scale))
        if worst <= 2.0 ** (-bits - 8) or prec >= 4 * (DEFAULT_PRECISION + bits):
            break
        prec *= 2
    return Seq(a, fmpz_poly(qs), inf=q_inf_int), Seq(a, fmpz_poly(rs)), n, tilt


@bounded_cache(16)
def lower_term(step: LatticeStep, count: int, h: float, bits: int, direction: str,
                  total: int) -> LowerLattice:
    """One term composed ``count`` times (the binning window uses the ``total`` count); cached
    (:func:`certify.lattice_grid.bounded_cache`)."""
    q1, r1, n, tilt = _lower_single(step, h, bits, total)
    q = _power_seq(q1, count, bits, up=False)
    r = _power_seq(r1, count, bits, up=True)
    return LowerLattice(h, bits, q, r, count, direction, n, ((tilt, count),))


def merge_tilts(tilts) -> tuple[tuple[float, int], ...]:
    """The per-term tilts (gamma_i, m_i) with equal gamma merged, in first-seen order
    (sum_i m_i gamma_i is unchanged), so that squarings keep the list short."""
    merged: dict[float, int] = {}
    for g, c in tilts:
        merged[g] = merged.get(g, 0) + c
    return tuple(merged.items())


def combine_lowers(a: LowerLattice, b: LowerLattice, trunc_bits: int = TRUNC_BITS
                   ) -> LowerLattice:
    """Two independent blocks of steps: the laws convolve and the tilts add (``trunc_bits``:
    :func:`certify.lattice_grid.mul_cut_rescale`)."""
    check_deadline("in the lattice lower end (convolutions)")
    return LowerLattice(a.h, a.bits, multiply_seqs(a.q, b.q, a.bits, False, trunc_bits),
                        multiply_seqs(a.r, b.r, a.bits, True, trunc_bits,
                                      keeps_ceiling(a.count, b.count)),
                        a.count + b.count,
                        a.direction, max(a.points, b.points), a.tilts + b.tilts)


_RETILT_BITS = 64  # fixed-point bits of the re-tilting factor
_RETILT_MIN = 2.0**-40  # |log total| below this: the tilted side is left as it is


def retilt(low: LowerLattice) -> LowerLattice:
    r"""Renormalise the tilted P side to total mass about 1 (a numerical step; exact identity).

    With :math:`g = -\log(\text{total})` in binary64 (exact as a number) the identity
    :math:`P(S = j) = e^{-jh - \Gamma} r_j` reads :math:`P(S = j) = e^{-jh - (\Gamma + g)} (e^g
    r_j)`, so the masses are multiplied by :math:`e^g` (fixed-point weight :math:`W \ge e^g
    2^{64}`, every product rounded up: :math:`R'' \ge e^g R'`), the unlocated mass likewise
    (:math:`E'' \ge e^g E`), and ``(g, 1)`` joins the tilts (:math:`\Gamma` is their exact sum).
    The invariant :math:`2^B r^{*n} \le R' + e` of the lower-bound proof becomes :math:`2^B e^g
    r^{*n} \le e^g (R' + e) \le R'' + e''`, the same statement for the new :math:`\Gamma`.

    Why: the re-discretization of the test statistic (section D of
    :mod:`certify.lattice_adaptive`) weights the tilted masses by :math:`e^{-iu} < 1`, so each
    coarsening leaves the tilted law a little below 1 (0.02-0.5% measured), and every squaring
    squares the deficit: at rate 0.01, sigma 1, m = 1e7 the total fell to 1e-14 and then below
    the fixed-point cut, so the whole P side sat in the unlocated mass and the lower end was
    stuck 2-4% below the upper (978-995 vs 1014).

    Args:
        low: Composed binned-test laws.

    Returns:
        The same laws with the tilted side renormalised (unchanged if already within
        :math:`2^{-40}` of 1 in log, or empty).
    """
    tail = low.tail
    tot = int(low.r.coeffs(1)) + low.r.extra + (0 if tail is None else int(tail.r.coeffs(1)))
    if tot <= 0:
        return low
    g = -(math.log(tot) - low.bits * math.log(2.0))
    if not (math.isfinite(g) and abs(g) > _RETILT_MIN):
        return low
    with workprec(DEFAULT_PRECISION):
        w = ceil_upper(arb(g).exp() * (1 << _RETILT_BITS))
    r = Seq(low.r.offset, up_div_pow2(low.r.coeffs * w, _RETILT_BITS),
            -((-low.r.extra * w) >> _RETILT_BITS), low.r.inf)
    tilts = merge_tilts((*low.tilts, (g, 1)))
    if tail is not None:  # the same identity, factor and tilts for the coarse tail
        tr = Seq(tail.r.offset, up_div_pow2(tail.r.coeffs * w, _RETILT_BITS), 0, 0)
        tail = LowerLattice(tail.h, tail.bits, tail.q, tr, tail.count, tail.direction,
                            tail.points, tilts)
    return LowerLattice(low.h, low.bits, low.q, r, low.count, low.direction, low.points,
                        tilts, tail)


def lower_lattice(
    composition: Any, direction: str = DIRECTION_PQ, *, h: float | None = None,
    bits: int | None = None,
) -> LowerLattice:
    """The composed binned-test laws (lower-bound side) in one pair order; cf. :func:`lattice_pld`.

    Raises:
        NotApplicable: if the method does not apply.
        ValueError: on bad h / bits.
        BudgetExceeded: past the deadline of an active time budget.
    """
    return fold(lower_term, combine_lowers, composition, direction, h, bits)


def epsilon_lower(lat: LowerLattice, target: arb) -> float:
    """A dyadic eps_lo >= 0 with a certified test value > target at eps_lo (0 if none).

    Floating-point bracket and bisection on the test profile (:mod:`certify.search`), then
    certification in Arb at dyadic points at or just below the estimate.

    A bracket that is not found (the profile above the target at every eps up to 2^80) gives
    the trivially valid lower end 0.
    """
    tf = float(target.upper())

    def at_most(x: float) -> bool:  # the float test value is <= target at x
        return not lat.float_profile(x)[0] > tf

    if at_most(0.0):
        return 0.0
    lo, hi = expand(at_most, 0.0, 1.0, tries=81)  # up to 2^80: every eps a double can hold
    if hi is None:
        return 0.0
    lo, hi = bisect(at_most, lo, hi, rel_tol=1e-13, abs_tol=1e-13)
    for q in snap_down(lo, 10):
        with workprec(DEFAULT_PRECISION):
            v, _ = lat.delta_lower(arb(q))
            if bool(v.lower() > target.upper()):
                return q
    return 0.0
