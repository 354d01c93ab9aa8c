r"""Grids that follow the law: adaptive single-step points and composed laws re-discretized as
they spread, for both ends of the certified lattice (:mod:`certify.lattice`).

All grids are lattices :math:`\{k u\}` with a power-of-two unit u, so any two units nest. The
proofs below use the notation and Lemmas 1-3 of :mod:`certify.lattice` (docs/math.md section 8).

**A. Adaptive single-step points (upper end).** Lemma 2 holds for *any* increasing points
:math:`\varepsilon_0 < \dots < \varepsilon_n`, not only for a uniform grid: chords of the convex
:math:`H` lie above it, whatever the spacing. Here the points are lattice points :math:`k_i u`
in the certified range [lo, hi] of :func:`certify.lattice_grid.grid_range` (so the range errors
are those of the fixed grid), chosen by bisection: an interval :math:`[k_a u, k_b u]` is split at
its lattice midpoint while the chord there exceeds H by more than a tolerance
:math:`\tau` (evaluated in Arb; the test only decides *where* points go, never soundness: every
point set gives a dominating measure). With the unit :math:`u \le \sigma_1/R` (:math:`\sigma_1`
a rough standard deviation of L) and :math:`\tau = \sigma_1/(20R^2)` the bulk of the law gets
spacing about :math:`\sigma_1/R` (the chord gap of spacing :math:`\Delta` is about
:math:`\Delta^2 f(s)/8` for a loss density f) and the tails, where f is small, far fewer points.
The gap at loss s is weighted by :math:`e^{zx - x^2/2}`, :math:`x = s/\sigma_m` for the
composed standard deviation :math:`\sigma_m` (the density of the other steps, which weights a
step's error in Lemma 1's hybrid sum, grows like this towards the upper tail where eps lies).
Beyond :math:`z\sigma_m`, where the curve exceeds :math:`10^{-12}/m`, the gap is also kept
below a fraction
:math:`1/(4R^2)` of the curve's value (the far upper tail of one step drives delta when m is
small). Atoms (randomized response) make the gap first order, so their neighbourhoods are
refined to u.
The atoms :math:`c_i` then sit at lattice points, and the fixed-point tails, rounding and
truncation are those of the fixed grid (Lemma 3).

**B. Adaptive cells (lower end).** The binned test of :mod:`certify.lattice_lower` is valid for
*any* deterministic integer labelling of the outputs: here the cells are
:math:`[k_i u, k_{i+1} u)` (first and last cells open), labelled by their lower lattice index
:math:`k_i`. S, the sum of the labels, is a post-processing, so the test inequality holds; the
tilting identity :math:`P^m(S = j) = e^{-ju - m\gamma} r^{*m}_j` with :math:`r_i = e^{k_i u +
\gamma} p_i` holds for any integer labels, and :math:`e^{k_i u} p_i \le q_i` still (on the cell
:math:`dP = e^{-L} dQ \le e^{-k_i u} dQ`), so the normalisation argument is unchanged.

**C. Re-discretizing a composed law (upper end).** Let :math:`\mu` be a composed dominating
lattice measure (unit u) and :math:`U = r u` (r a power of two). Connect the dots applied to
:math:`H_\mu` at the coarse points :math:`J U` gives, by Lemma 2 (which only needs H convex and
non-increasing with :math:`H(0) = \mu(\text{all})`, true for every finite non-negative
measure), a measure :math:`\mu'` with :math:`H_{\mu'} \ge H_\mu`; by Lemma 1 (a statement about
any finite non-negative factors) composing :math:`\mu'` instead of :math:`\mu` with the
remaining steps only raises the bound. Concretely, an atom c at :math:`s = JU + ju`
(:math:`0 < j < r`) contributes :math:`c(1 - te^{-s})_+` to :math:`H_\mu`; its chord
interpolation at :math:`0, e^{JU}, e^{(J+1)U}` is the measure with mass
:math:`c\,w_j` at :math:`(J+1)U` and :math:`c(1 - w_j)` at :math:`JU`,

.. math::

    w_j = \frac{1 - e^{-ju}}{1 - e^{-ru}} \in (0, 1)

(equal at t = 0 and at :math:`t = e^{JU}`; on :math:`[e^{JU}, e^{(J+1)U}]` the chord of the
convex :math:`c(1 - te^{-s})_+` lies above it; both vanish beyond). The weights are rounded up
to 64-bit fixed point and each upper share :math:`\lceil c W_j / 2^{64} \rceil` (at most c)
is taken from the lower neighbour: the total is unchanged and mass only moves up (Lemma 3). So
the grid can coarsen with each squaring while the points per standard deviation of the composed
law stay bounded; the error of each re-discretization is second order in U (DGKKM).

**D. Re-discretizing the binned test (lower end).** Replacing the statistic S (unit u) by
:math:`S' = \lfloor S/r \rfloor` (unit U) is a post-processing, and so is adding coarsened
statistics of independent blocks, so the test stays valid. Q side: the masses of the fine
indices in a coarse cell are added (exact integer sums, so "every value rounded down" holds
still). P side: for the exact tilted law, :math:`P(S' = J) = \sum_{j = rJ}^{rJ + r - 1} e^{-ju -
\Gamma} r_j = e^{-JU - \Gamma} \sum_i e^{-iu} r_{rJ + i}`, so the coarse tilted masses are
:math:`r'_J = \sum_i e^{-iu} r_{rJ+i}`, computed with the weights :math:`e^{-iu} \le 1` rounded
up and the sums rounded up; the invariant :math:`2^B r^{*n} \le R' + e` (total of e at most
E) survives, because the weights are at most 1, so E is unchanged. The final evaluation uses
the coarse unit U as h.

**E. Balanced trees.** Convolution is associative and commutative, and Lemmas 1 and 3 apply
factor by factor, so a heterogeneous composition can be multiplied in any order: a balanced
binary tree (:func:`compose_tree`) or the multi-exponentiation of :mod:`certify.lattice_hetero`
(used by :mod:`certify.lattice_target`); two factors on different units are first brought to the
coarser one by C (upper) or D (lower).
"""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flint import arb, fmpz_poly

from numeric.errors import NotApplicable
from numeric.progress import progress

from .budget import check_deadline, require
from .engine import DEFAULT_PRECISION, ceil_upper, floor_lower, workprec
from .intpoly import ceil_div_pow2, cell_sums, decimate, up_div_pow2
from .lattice_grid import (
    TRUNC_BITS,
    cut_points,
    grid_range,
    sum_above,
    sum_below,
)
from .lattice_lower import LowerLattice, Seq, combine_lowers, merge_tilts, retilt
from .lattice_measure import LatticePLD, multiply_lattices
from .steps import LatticeStep

__all__ = [
    "LOWER_OPS",
    "ONE_TERM_TAIL_Z",
    "UPPER_OPS",
    "Z_UPPER",
    "Resolution",
    "adaptive_lower",
    "adaptive_points",
    "adaptive_upper",
    "coarsen_lower",
    "coarsen_upper",
    "common_unit",
    "compose_tree",
    "evaluation_memo",
    "lower_atoms",
    "one_term_tail",
    "power",
    "require_coarsen",
    "settle",
    "tilt_weights",
    "unit_below",
    "upper_atoms",
    "upper_weights",
]

_WEIGHT_BITS = 64
_COARSEN_SECONDS = 2e-5
"""Typical seconds a re-discretization costs per unit of the ratio r (the r Arb weights and
the r-way loops: 9 us per unit idle at r = 262144, 15-40 us measured under load); a budget
refuses a huge r up front (found by the issue 12 fuzz: r ~ 4e6 ran 56 s under a 3.5 s budget;
with the low 1e-5 an r = 262144 still ran ~1.5 s past an ``auto`` deadline under load)."""
_COARSEN_SECONDS_PER_POINT = 3e-7
"""Typical seconds a re-discretization costs per coefficient of its input (the residue classes
and the weighted sums over them: 0.76 s for a lower-end sequence of 2.6e6 coefficients at
r = 2, idle machine); added to the r term, so that a budget refuses a long re-discretization
that would end past the deadline (issue 12: the fuzz's slowest ``auto`` call after the product
estimates ran 0.7 s over in one)."""
_Z = 7.0  # standard deviations out where eps lies, for the point weights of section A
Z_UPPER = 12.0
r"""The point weights of section A above zero loss: :math:`e^{zx - x^2/2}` with z = ``Z_UPPER``
for :math:`x > 0` and z = 7 below (:func:`adaptive_points`). Tightness and work only: any
points are valid (Lemma 2 of :mod:`certify.lattice`).

Why: the Gaussian picture's z = 7 gave the single step's upper tail too few points. Measured
2026-12-03 (paired runs, each query once per tree in fresh processes, the DP-SGD grid of
``benchmarks/pair_trees.py``; every interval still meets 1e-4): CPU geometric mean 0.902 at
rate 0.01, 0.915 at rate 0.001, 0.970 at rate 0.1, mostly because a coarser level meets the
target (at the same level the widths fall, e.g. sigma 0.8, m = 1e6, delta 1e-10: 4.55e-5 ->
3.64e-5). z = 20 gave 0.917 at rate 0.01 (more points at the same level). 1000 noise levels
(several terms, level (64, 128)): 1.33e-4 -> 9.6e-5 wide with 2% more evaluations. z = 12 on
both sides took points from the lower side, where the order Q||P of a small-rate pair lives:
rate 0.001, sigma 0.8, m = 1e3, delta 1e-5 kept 116 points in that order, its upper end 0.458
instead of 0.167, and the refinement climbed to level (512, 1024) (25 s instead of 1.4 s)."""
_REL_GAP = 0.25  # relative chord gap (over cap) refined where the curve exceeds _FLOOR / count
_FLOOR = 1e-12
_UNIT_MIN = 2.0**-40
_MAX_POINTS = 200_000  # single-step evaluation points per term and order (refinement stops)
MAX_LENGTH = 1 << 18
"""Composed lattices longer than this are coarsened further (memory and FLINT time)."""


ONE_TERM_TAIL_Z = 1.0
"""One term, an eps query: the single-step points' relative tail test also runs from 1 rough
standard deviation of the composed loss out where the curve is below the absolute tolerance and
above 10 x the query's tail mass (``tail_z``, ``tail_mass`` of
:func:`certify.lattice_adaptive.adaptive_points`; several terms: at delta <= 1e-7 only,
:func:`certify.lattice_hetero.hetero_tail_test`; see :func:`one_term_tail`), so that the loss
tail that decides a small delta at small sampling rates gets its points. Tightness only."""


def one_term_tail(tail_mass: float) -> tuple[float, float]:
    """``(tail_z, tail_mass)`` of :func:`adaptive_points` for a one-term query splitting its
    tails at ``tail_mass`` (:func:`certify.lattice_split.tail_mass_for`). At its floor 1e-18 (a
    delta query, whose delta is unknown, or an eps query at delta <= 1e-13) the extra tail test
    is off (the defaults): refining the tail down to curve values of 1e-17 cost a delta query
    (rate 0.1, sigma 2, m = 10, eps 1) so many evaluations that its time budget bought a coarser
    level, 4.5e-3 wide instead of 5.8e-4."""
    if not (tail_mass > 1e-18):
        return _Z, 1.0
    return ONE_TERM_TAIL_Z, 10.0 * tail_mass


@dataclass(frozen=True)
class Resolution:
    """Points per rough standard deviation: ``single`` for single-step laws (Arb evaluations),
    ``composed`` for composed laws (polynomial length)."""

    single: int
    composed: int

    def __post_init__(self) -> None:
        for name in ("single", "composed"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 1 << 20:
                raise ValueError(f"{name} must be an integer in [1, 2^20], got {v!r}")


def unit_below(x: float) -> float:
    """The largest power of two <= x, clamped to [2^-40, 1]."""
    if not (x > 0 and math.isfinite(x)):
        return _UNIT_MIN
    return min(1.0, max(_UNIT_MIN, 2.0 ** math.floor(math.log2(x))))


_MEMO_POINTS = 1 << 17
"""Single-step evaluations kept over all steps (~500 bytes each with their Arb limbs, so at most
about 65 MB): the least recently used steps' memos go first (:func:`evaluation_memo`)."""


class MemoStore:
    """The memos of :func:`evaluation_memo`, least recently used first, with a running count of
    the points they hold (recounting every memo on each call cost O(number of steps): at 1000
    noise levels about 3 s of a 9 s level, measured 2026-12-02)."""

    def __init__(self) -> None:
        self.memos: OrderedDict = OrderedDict()  # key -> (memo, its length when last counted)
        self.kept = 0

    def keys(self) -> list:
        """The keys, least recently used first."""
        return list(self.memos)

    def get(self, key: tuple, limit: int) -> dict:
        """The memo of ``key`` (new, or emptied when it alone holds more than ``limit``
        points), made the most recently used; then the least recently used others are dropped
        while more than ``limit`` points are kept. Callers fill a memo right after getting it,
        so only the memo handed out last can have grown since the last call: it is recounted."""
        if self.memos:
            last = next(reversed(self.memos))
            memo, counted = self.memos[last]
            self.kept += len(memo) - counted
            self.memos[last] = (memo, len(memo))
        memo, counted = self.memos.pop(key, ({}, 0))
        self.kept -= counted
        if len(memo) > limit:
            memo = {}
        self.memos[key] = (memo, len(memo))
        self.kept += len(memo)
        while self.kept > limit and len(self.memos) > 1:
            _, (_, n) = self.memos.popitem(last=False)
            self.kept -= n
        return memo


_memos = MemoStore()


def evaluation_memo(step: Any, prec: int, tails: bool) -> dict:
    """The single-step evaluations of ``step`` at Arb precision ``prec`` made so far, keyed by
    point (the ``memo`` of :func:`adaptive_points`; ``tails``: whether they hold the tails): a
    query's levels evaluate about half of each level's points on the level before. The memos of
    the least recently used steps are dropped while more than :data:`_MEMO_POINTS` points are
    kept (one term keeps both pair orders'; a composition of many terms keeps what fits)."""
    return _memos.get((step, prec, tails), _MEMO_POINTS)


# ---------------------------------------------------------------------------------------------
# A. adaptive single-step points


def adaptive_points(step: LatticeStep, total: int, unit: float, tau: float, prec: int,
                    sigma_m: float = math.inf, cap: float = 1.0, tails: dict | None = None,
                    initial: int = 6, tail_z: float = _Z, tail_mass: float = 1.0,
                    memo: dict | None = None) -> tuple[list[int], list[arb]]:
    r"""Sorted lattice indices k (points :math:`k u`) covering the certified range, refined by
    the chord test of section A, and the curve there (Arb balls at precision ``prec``). The
    gap at loss s is weighted by :math:`e^{zx - x^2/2}`, :math:`x = s/\sigma_m`: in a
    composition the error of one step at s enters through the density of the other steps at
    :math:`\varepsilon - s`, about that many times the density at eps when eps lies z
    standard deviations :math:`\sigma_m` out (a Gaussian picture, z = 7 for delta down to about
    1e-12; above zero loss z = :data:`Z_UPPER`, measured there), at most ``cap``; and, beyond
    ``tail_z`` sigma_m (default z) where the curve is above 1e-12 / total (the single-step
    loss tail that matters when one step's large loss drives delta), while the gap exceeds
    0.25 / cap of the curve's value; the same relative test from
    ``tail_z`` sigma_m on where the curve lies between ``tail_mass / total`` and tau (where the
    absolute test cannot see it). Any output is valid; tau, sigma_m, cap, tail_z, tail_mass and
    unit govern tightness only.

    Why: at small sampling rates delta = 1e-10 is reached through one step's rare large loss,
    whose curve there (1e-10 .. 1e-17) lies far below tau, and with the relative test only
    beyond 7 sigma_m that region kept a few points (rate 0.001, sigma 1, m = 1e4, delta 1e-10:
    2.0e-3 relative width at (64, 128); 1.0e-4 with the test from 1 sigma_m, in the same
    time). ``tail_mass`` (about 1e-4 delta) keeps it off curve values too small to matter: from
    1 sigma_m with the old 1e-12 floor instead, rate 0.1, sigma 2, m = 10, delta 1e-5 took
    twice the evaluations for no gain.

    With a dict ``tails``, the curve and the tails are evaluated together
    (:meth:`certify.steps.LatticeStep.delta_tails`, the same balls as separate calls) and
    ``tails[k]`` receives :math:`(T_Q, T_P)` at every point k u, at precision ``prec``, for
    :func:`adaptive_lower`.

    ``initial``: the chord test starts from about :math:`2^{initial-1}..2^{initial}` evenly
    spaced lattice points over the certified range (tightness and work only: any points are
    valid, Lemma 2 of :mod:`certify.lattice` holds for any increasing points).

    ``memo``: evaluations already made, keyed by the point :math:`k u` (a float, exact: u is a
    power of two), for this ``step``, this ``prec`` and this ``tails`` mode only (the caller's
    key). A finer level's lattice contains the coarser one's points (u halves, the chord test
    bisects from the same initial points), so about half of its points were evaluated on the
    level before; the ball of an exact argument at one precision is the same whichever call
    computes it, so results are bit-identical with or without the memo."""
    lo, hi = grid_range(step, total)
    i0, i1 = math.floor(lo / unit), math.ceil(hi / unit)
    i1 = max(i1, i0 + 2)
    k = max(0, (i1 - i0).bit_length() - initial)
    s0 = 1 << k
    pts = sorted({i0, i1, *range(-((-i0) // s0) * s0, i1, s0)})
    u = arb(unit)  # a power of two: exact
    tol = arb(tau)
    rel = arb(_REL_GAP) / cap if cap > 1 else arb(_REL_GAP)
    floor = arb(_FLOOR) / total
    tail_floor = tail_mass / total
    def at(i: int) -> arb:
        hit = None if memo is None else memo.get(i * unit)
        if hit is None:
            hit = (step.delta(arb(i) * u),) if tails is None else step.delta_tails(arb(i) * u)
            if memo is not None:
                memo[i * unit] = hit
        if tails is not None:
            tails[i] = hit[1:]
        return hit[0]

    with workprec(prec):
        val = {i: at(i) for i in pts}
        t = {i: (arb(i) * u).exp() for i in pts}
        stack = list(itertools.pairwise(pts))
        while stack:
            a, b = stack.pop()
            if b - a < 2 or len(val) >= _MAX_POINTS:
                continue
            if len(val) % 256 == 0:
                check_deadline("in the lattice single-step points")
            m = (a + b) // 2
            t[m] = (arb(m) * u).exp()
            val[m] = at(m)
            chord = val[a] + (t[m] - t[a]) * (val[b] - val[a]) / (t[b] - t[a])
            x = m * unit / sigma_m
            weight = min(math.exp(min((Z_UPPER if x > 0 else _Z) * x - x * x / 2, 40.0)), cap)
            gap, here = (chord - val[m]).mid(), val[m].mid()
            if gap * weight > tol or (here > floor and gap > here * rel and x > _Z) or (
                    x > tail_z and tail_floor < here < tau and gap > here * rel):
                stack.append((a, m))
                stack.append((m, b))
    idx = sorted(val)
    return idx, [val[i] for i in idx]


def _truncated(offset: int, masses: list[int], inf: int, bits: int) -> tuple[int, fmpz_poly, int]:
    """Lemma 3: mass <= 2^(bits-64) above the top moves to +inf, below the bottom is lumped."""
    r = fmpz_poly(masses)
    low, top = cut_points(r, 1 << max(0, bits - TRUNC_BITS))
    inf += sum_above(r, top)
    lump = sum_below(r, low)
    kept = r.truncate(top + 1)
    if low > 0:
        kept = kept.right_shift(low) + fmpz_poly([lump])
    return offset + low, kept, inf


def _check_span(idx: list[int], unit: float) -> None:
    """Refuse up front a single step whose loss support spans more than MAX_LENGTH units of 1
    (:func:`settle` could not bring its products under the point budget)."""
    if (idx[-1] - idx[0]) * unit > MAX_LENGTH:
        raise NotApplicable(
            f"lattice: one step's privacy loss spans {(idx[-1] - idx[0]) * unit:.6g} (more than "
            f"{MAX_LENGTH} units of 1, the lattice's point budget; e.g. a subsampled Gaussian "
            "with a very small sigma)")


def adaptive_upper(step: LatticeStep, idx: list[int], values: list[arb], unit: float, bits: int,
                   direction: str) -> LatticePLD:
    r"""The connect-the-dots measure of ``step`` at the points ``idx`` (section A), fixed-point
    tails rounded up as in :mod:`certify.lattice`, ends truncated safely. ``values`` are the
    curve's enclosures at the points (re-evaluated at a higher precision if too wide)."""
    atoms, inf = upper_atoms(step, idx, values, unit, bits)
    masses = [0] * (idx[-1] - idx[0] + 1)
    for k, c in zip(idx, atoms, strict=True):
        masses[k - idx[0]] = c
    off, kept, inf = _truncated(idx[0], masses, inf, bits)
    return LatticePLD(unit, bits, off, kept, inf, 1, direction, len(idx))


def upper_atoms(step: LatticeStep, idx: list[int], values: list[arb], unit: float, bits: int,
                prec: int | None = None) -> tuple[list[int], int]:
    r"""The masses (units :math:`2^{-B}`) of :func:`adaptive_upper`'s measure at the points
    ``idx``, one per point, and its mass at +infinity, before the safe truncation of the ends
    (a sparse form: at small sampling rates the points are ~1e3 over ~1e6 lattice units).
    ``prec``: the first working precision (None: ``DEFAULT_PRECISION + bits``; time only: the
    masses are recomputed at twice the precision while a chord's radius exceeds
    :math:`2^{-B-8}`)."""
    n = len(idx)
    _check_span(idx, unit)
    scale = 1 << bits
    prec = DEFAULT_PRECISION + bits if prec is None else prec
    H = list(values)
    while True:
        with workprec(prec):
            u = arb(unit)
            eps = [arb(i) * u for i in idx]
            t = [e.exp() for e in eps]
            if H is None:
                H = []
                for i, e in enumerate(eps):
                    if i % 256 == 0:
                        check_deadline("in the lattice single-step grid")
                    H.append(step.delta(e))
            tails = [scale]
            worst = 0.0
            for k in range(n):
                g = H[k] - t[k] * (H[k + 1] - H[k]) / (t[k + 1] - t[k]) if k < n - 1 else H[k]
                worst = max(worst, float(g.rad()))
                tails.append(max(0, min(tails[-1], ceil_upper(g * scale))))
        if worst <= 2.0 ** (-bits - 8) or prec >= 4 * (DEFAULT_PRECISION + bits):
            break
        prec *= 2
        H = None
    return [tails[k] - tails[k + 1] for k in range(n)], tails[-1]


def adaptive_lower(step: LatticeStep, idx: list[int], unit: float, bits: int, count: int,
                   direction: str, tails: dict | None = None) -> LowerLattice:
    r"""The binned-test laws of one step on the cells of section B (Q rounded down, tilted P
    rounded up), as :func:`certify.lattice_lower.lower_term` builds them on a uniform grid,
    composed ``count`` times is left to the caller (count is recorded only). ``tails``: the
    tails at the points as :func:`adaptive_points` records them (at the first precision here,
    ``DEFAULT_PRECISION + bits``), used instead of evaluating them again."""
    qa, ra, q_inf_int, tilt = lower_atoms(step, idx, unit, bits, tails)
    qs = [0] * (idx[-1] - idx[0] + 1)
    rs = [0] * len(qs)
    for k, x, y in zip(idx, qa, ra, strict=True):
        qs[k - idx[0]], rs[k - idx[0]] = x, y
    q = Seq(idx[0], fmpz_poly(qs), inf=q_inf_int)
    r = Seq(idx[0], fmpz_poly(rs))
    return LowerLattice(unit, bits, q, r, 1, direction, len(idx), ((tilt, 1),))


def lower_atoms(step: LatticeStep, idx: list[int], unit: float, bits: int,
                tails: dict | None = None, prec: int | None = None
                ) -> tuple[list[int], list[int], int, float]:
    r"""The cell masses of :func:`adaptive_lower` in sparse form: (Q masses rounded down,
    tilted P masses rounded up, one per point of ``idx``; the Q mass of the cell at +infinity;
    the tilt gamma). ``prec``: as for :func:`upper_atoms` (a cell mass's radius)."""
    n = len(idx)
    _check_span(idx, unit)
    scale = 1 << bits
    prec = DEFAULT_PRECISION + bits if prec is None else prec
    tilt = None
    while True:
        with workprec(prec):
            u = arb(unit)
            tq, tp = [arb(1)], [arb(1)]
            for j, k in enumerate(idx[1:]):
                if j % 256 == 0:
                    check_deadline("in the lattice lower end (single-step cells)")
                x, y = tails[k] if tails is not None else step.tails(arb(k) * u)
                tq.append(x)
                tp.append(y)
            q_inf = step.end_masses()[0]
            tq.append(q_inf)
            tp.append(arb(0))
            dp = [tp[i] - tp[i + 1] for i in range(n)]  # the P mass of each cell
            if tilt is None:  # renormalising constant gamma (any value is valid)
                z = sum(((arb(k) * u).exp() * dp[i] for i, k in enumerate(idx)), arb(0))
                tilt = float((-z.log()).mid()) if z > 0 else 0.0
                if not math.isfinite(tilt):
                    tilt = 0.0
            qs, rs = [0] * n, [0] * n
            worst = 0.0
            gamma = arb(tilt)  # a float: exact
            for i, k in enumerate(idx):
                qk = tq[i] - tq[i + 1]
                rk = (arb(k) * u + gamma).exp() * dp[i]
                worst = max(worst, float(qk.rad()), float(rk.rad()))
                qs[i] = max(0, floor_lower(qk * scale))
                rs[i] = max(0, ceil_upper(rk * scale))
            q_inf_int = max(0, floor_lower(q_inf * scale))
        if worst <= 2.0 ** (-bits - 8) or prec >= 4 * (DEFAULT_PRECISION + bits):
            break
        prec *= 2
        tails = None
    return qs, rs, q_inf_int, tilt


# ---------------------------------------------------------------------------------------------
# C, D. re-discretization


def _weights(values: list[arb]) -> list[int]:
    return [ceil_upper(v * (1 << _WEIGHT_BITS)) for v in values]


def require_coarsen(r: int, points: int) -> None:
    """Refuse, under a time budget, a re-discretization by ``r`` of ``points`` coefficients
    that cannot end before the deadline (:func:`certify.budget.require`)."""
    require(r * _COARSEN_SECONDS + points * _COARSEN_SECONDS_PER_POINT,
            f"the lattice re-discretization by a factor r = {r} of {points} points")


def upper_weights(unit: float, r: int) -> list[int]:
    r"""Section C's upper shares :math:`w_j = (1 - e^{-ju})/(1 - e^{-ru})`, j = 1..r-1, rounded
    up to 64-bit fixed point (units :math:`2^{-64}`)."""
    with workprec(DEFAULT_PRECISION):
        u = arb(unit)
        den = 1 - (-(r * u)).exp()
        return _weights([(1 - (-(j * u)).exp()) / den for j in range(1, r)])


def tilt_weights(unit: float, r: int) -> list[int]:
    r"""Section D's tilted weights :math:`e^{-iu}`, i = 0..r-1, rounded up to 64-bit fixed
    point (the first is exactly :math:`2^{64}`)."""
    with workprec(DEFAULT_PRECISION):
        u = arb(unit)
        return [1 << _WEIGHT_BITS, *_weights([(-(i * u)).exp() for i in range(1, r)])]


def coarsen_upper(lat: LatticePLD, r: int) -> LatticePLD:
    """Section C: the connect-the-dots re-discretization onto unit ``r * lat.h``."""
    if r == 1:
        return lat
    check_deadline("in the lattice re-discretization")
    require_coarsen(r, lat.coeffs.length())
    w = upper_weights(lat.h, r)
    j0, first = divmod(lat.offset, r)
    subs = decimate(lat.coeffs, r, first)  # subs[j]: fine index r * (j0 + J) + j at J
    out = subs[0]
    for j in range(1, r):
        ups = ceil_div_pow2(subs[j] * w[j - 1], _WEIGHT_BITS)  # ceil(c w_j / 2^64) <= c
        out = out + subs[j] - ups + ups.left_shift(1)
    return LatticePLD(lat.h * r, lat.bits, j0, out, lat.inf, lat.count,
                      lat.direction, lat.points, lat.products)


def _coarsen_seq(s: Seq, r: int, w: list[int] | None) -> Seq:
    j0, first = divmod(s.offset, r)
    if w is None:
        out = cell_sums(s.coeffs, r, first, [1] * r)
    else:
        # the tilted side needs upper bounds only: floor + 1 >= ceiling
        out = up_div_pow2(cell_sums(s.coeffs, r, first, w), _WEIGHT_BITS)
    return Seq(j0, out, s.extra, s.inf)


def coarsen_lower(low: LowerLattice, r: int) -> LowerLattice:
    """Section D: the statistic floor(S / r) on unit ``r * low.h``."""
    if r == 1:
        return low
    check_deadline("in the lattice re-discretization (lower end)")
    require_coarsen(r, low.q.coeffs.length() + low.r.coeffs.length())
    w = tilt_weights(low.h, r)
    return LowerLattice(low.h * r, low.bits, _coarsen_seq(low.q, r, None),
                        _coarsen_seq(low.r, r, w), low.count, low.direction, low.points,
                        low.tilts)


# ---------------------------------------------------------------------------------------------
# powering and trees with re-discretization


@dataclass(frozen=True)
class _Ops:
    mul: Callable[[Any, Any], Any]
    coarsen: Callable[[Any, int], Any]
    length: Callable[[Any], int]


def _mul_lower(a: LowerLattice, b: LowerLattice) -> LowerLattice:
    """Product of independent blocks (:func:`certify.lattice_lower.combine_lowers`), with the
    per-term tilts (gamma_i, m_i) of equal gamma merged so that squarings keep the list short
    (sum_i m_i gamma_i is unchanged)."""
    out = combine_lowers(a, b)
    return retilt(LowerLattice(out.h, out.bits, out.q, out.r, out.count, out.direction,
                               out.points, merge_tilts(out.tilts)))


UPPER_OPS = _Ops(multiply_lattices, coarsen_upper, lambda x: x.coeffs.length())
LOWER_OPS = _Ops(_mul_lower, coarsen_lower,
                 lambda x: max(x.q.coeffs.length(), x.r.coeffs.length()))


def settle(x: Any, sigma: float, per_sigma: int, ops: _Ops) -> Any:
    """Coarsen x to the unit sigma / per_sigma (a power of two, never finer than x's), and
    further while it is longer than MAX_LENGTH."""
    unit = max(x.h, unit_below(sigma / per_sigma))
    x = ops.coarsen(x, round(unit / x.h))
    while ops.length(x) > MAX_LENGTH and x.h < 1.0:
        x = ops.coarsen(x, 2)
    if ops.length(x) > MAX_LENGTH:  # unit 1 and still too long: the products would not finish
        raise NotApplicable(
            f"lattice: the composed privacy loss spans {ops.length(x)} grid units of "
            f"{x.h:g} (more than {MAX_LENGTH}); a loss this spread out (e.g. a subsampled "
            "Gaussian with a very small sigma) is beyond the lattice's point budget")
    return x


def common_unit(a: Any, b: Any, ops: _Ops) -> tuple[Any, Any]:
    unit = max(a.h, b.h)
    return ops.coarsen(a, round(unit / a.h)), ops.coarsen(b, round(unit / b.h))


def power(base: Any, m: int, sigma1: float, per_sigma: int, ops: _Ops) -> Any:
    """``base`` composed m times by binary powering, re-discretized after every product to
    ``per_sigma`` points per standard deviation (sigma1 sqrt(count)) of the composed law."""
    if m < 1:
        raise ValueError(f"count must be >= 1, got {m!r}")
    result, res_n, sq, sq_n = None, 0, base, 1
    with progress(m.bit_length(), "lattice squarings") as bar:
        for bit in range(m.bit_length()):
            check_deadline("in the lattice squarings")
            if bit:
                sq = settle(ops.mul(sq, sq), sigma1 * math.sqrt(2 * sq_n), per_sigma, ops)
                sq_n *= 2
            if (m >> bit) & 1:
                if result is None:
                    result, res_n = sq, sq_n
                else:
                    a, b = common_unit(result, sq, ops)
                    res_n += sq_n
                    result = settle(ops.mul(a, b), sigma1 * math.sqrt(res_n), per_sigma, ops)
            bar.report()
    return result


def compose_tree(parts: list[tuple[Any, float]], per_sigma: int, ops: _Ops) -> Any:
    """Balanced binary tree of products of ``(block, variance)`` parts (section E)."""
    level = list(parts)
    while len(level) > 1:
        check_deadline("in the lattice composition of the terms")
        nxt = []
        for i in range(0, len(level) - 1, 2):
            (a, va), (b, vb) = level[i], level[i + 1]
            x, y = common_unit(a, b, ops)
            nxt.append((settle(ops.mul(x, y), math.sqrt(va + vb), per_sigma, ops), va + vb))
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0][0]
