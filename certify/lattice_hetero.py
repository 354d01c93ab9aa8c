r"""Many mechanisms: a heterogeneous composition multiplied as one multi-exponentiation.

A composition :math:`\prod_i \mu_i^{*c_i}` of n distinct single-step laws (n noise levels of
DP-SGD, each run :math:`c_i` times) was computed as n binary powerings followed by a balanced
tree of the n powers: about :math:`n(\log_2 c + \mathrm{popcount}(c))` products of composed
laws. Convolution is commutative and associative, so with the binary digits
:math:`c_i = \sum_b \beta_{ib} 2^b`

.. math::

    \prod_i \mu_i^{*c_i} = \prod_b \Bigl(\prod_{i:\,\beta_{ib} = 1} \mu_i\Bigr)^{*2^b}
    = \Bigl(\cdots\bigl(P_{b_{\max}}^{*2} * P_{b_{\max}-1}\bigr)^{*2} \cdots\Bigr)^{*2} * P_0,
    \qquad P_b = \prod_{i:\,\beta_{ib} = 1} \mu_i

(Straus' simultaneous exponentiation, in Horner form). Each :math:`P_b` is a balanced tree of
*single-step* laws (cheap: short polynomials), and only :math:`\lceil\log_2 \max c_i\rceil`
squarings and as many products act on long ones: for 100 levels x 100 steps, about 7 + 3 long
products per law instead of about 800 + 99.

**Soundness (upper end).** Write :math:`\mu \succeq \nu` when :math:`H_\mu \ge H_\nu` everywhere
(the hockey-stick curves of :mod:`certify.lattice`, Lemma 1). Each operation used here maps
dominating factors to a dominating result: the product with every mass rounded up and the safe
truncation (Lemma 3 and Lemma 1, which is a statement about any finite non-negative factors:
:math:`\mu_1 \succeq \nu_1, \mu_2 \succeq \nu_2 \Rightarrow \mu_1 * \mu_2 \succeq \nu_1 * \nu_2`),
and the connect-the-dots re-discretization (section C of :mod:`certify.lattice_adaptive`:
:math:`\mu' \succeq \mu`). By induction over the expression above, whose exact value is the
composition of the single-step connect-the-dots measures (each dominating its step, Lemma 2),
the computed measure dominates the composed pair; the order of the products plays no part.

**Soundness (lower end).** The binned test of :mod:`certify.lattice_lower` is valid for any
statistic that is a deterministic function of the outputs. Here the statistic is built by the
same expression: a product adds the statistics of two independent blocks of steps, a squaring
adds those of two independent copies (disjoint blocks of steps with the same laws), and a
re-discretization replaces a partial sum S by :math:`\lfloor S/r \rfloor` (section D): all
post-processings. The tilted identity :math:`P(S = j) = e^{-jh - \Gamma} r_j` multiplies over
independent blocks (the tilts :math:`(\gamma_i, m_i)` are concatenated, the counts of equal
gammas merged), and each product rounds Q down and the tilted P up as in the uniform case, so
the invariants of :mod:`certify.lattice_lower` hold whatever the order of the products.

Grids: after every product the result is re-discretized to ``per_sigma`` points per rough
standard deviation of its own law (the square root of the sum of its steps' single-step
variances, at least a floor unit, below), never finer than its factors' unit
(:func:`certify.lattice_adaptive.settle`); the factors of a product are first brought to the
coarser unit. The caller gives the terms sorted by their rough standard deviation, so that tree
neighbours have similar units, and may build the single-step blocks one at a time
(:class:`MultiPower` keeps a binary-counter stack per digit set: O(log n) blocks in memory).

Floor unit: a re-discretization at unit U adds about :math:`U^2` times the density of the final
law to the error, whichever factor it is applied to (the chord gap of section C, convolved with
the other factors); the squarings of the Horner chain cost about :math:`2(\sigma/R)^2` (units
growing by :math:`\sqrt 2` up to the final :math:`\sigma/R`), so the about 2n
re-discretizations of the trees are kept at units no finer than
:math:`\sigma / (R\sqrt{2 \cdot \mathrm{FLOOR\_SHARE} \cdot 2n})`, a share
:math:`1/\mathrm{FLOOR\_SHARE}` of the squarings' error. With many terms the squarings run
finer (:data:`HORNER_FACTOR`). Tightness only: any units are sound.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from .budget import check_deadline
from .lattice_adaptive import (
    LOWER_OPS,
    UPPER_OPS,
    adaptive_lower,
    adaptive_upper,
    coarsen_lower,
    common_unit,
    lower_atoms,
    one_term_tail,
    settle,
    upper_atoms,
)
from .lattice_lower import LowerLattice, retilt
from .lattice_split import TAIL_RATIO, SplitPLD, split_atoms, split_ops, split_upper
from .lattice_split_lower import (
    coarsen_split_lower,
    split_lower,
    split_lower_atoms,
    split_lower_ops,
)
from .steps import LatticeStep

__all__ = ["FLOOR_SHARE", "HETERO_MIN_SPAN", "HETERO_SPLIT_TAILS", "HETERO_TAIL_RATIO",
           "HETERO_TAIL_SCALE", "HETERO_TAIL_TEST_MASS", "HORNER_FACTOR", "HORNER_MIN_TERMS",
           "LOWER_OPS_RENORM", "MultiPower", "hetero_ops", "hetero_tail_mass", "hetero_tail_test",
           "leaf_lower", "leaf_upper", "multi_power", "renormalize_lower"]


FLOOR_SHARE = 4.0
"""The trees' re-discretization error is kept below 1/FLOOR_SHARE of the squarings' (the floor
unit; module docstring)."""

HORNER_FACTOR = 4
HORNER_MIN_TERMS = 50
r"""From ``HORNER_MIN_TERMS`` terms on, the Horner chain of :meth:`MultiPower.result` (its
:math:`\lceil\log_2 \max c_i\rceil` squarings and as many products) and the products of the
trees re-discretize to ``HORNER_FACTOR`` times ``per_sigma`` points per standard deviation
(never finer than their factors' unit: :func:`certify.lattice_adaptive.settle` only coarsens,
so a tree's products stay at the floor unit until their law is ``HORNER_FACTOR`` floor units
wide). Tightness and time only: any units are sound (module docstring).

Why: with many terms the chain is a few products among the trees' n - 1, so making it finer
costs little, and its error is a large share of the composed laws'. Measured 2026-12-02 (rate
0.01, sigma 0.8..2.0, 100 steps each, delta 1e-5, P||Q at one level, relative widths):
100 terms at (64, 64): 2.36e-4 -> 1.75e-4 (factor 2) -> 1.68e-4 (factor 4); at (64, 128),
where the ladder stops: 9.6e-5 -> 7.9e-5, whole query 5.7-5.8 -> 5.9-6.0 s (the same levels);
1000 terms under the default work budget, level (32, 64): 6.2e-4 -> 5.5e-4 in the same CPU; with
a larger budget 1000 terms meet 1e-4 a level earlier (benchmarks/results/hetero_82f74fe.md).
A finer floor (:data:`FLOOR_SHARE` 16 or 64 instead of 4) gains less: 100 terms at (64, 64)
2.36e-4 -> 2.00e-4 / 1.88e-4, so the floor is unchanged. Below ``HORNER_MIN_TERMS`` terms (few
terms, large counts) the chain is most of the work: factor 1.

The trees' products since 2026-12-03 (before, ``per_sigma``): their error was most of the
composed laws' at 1000 noise levels. Measured (rate 0.01, sigma 0.8..2.0, 100 steps each, delta
1e-5, P||Q at one level, relative widths, CPU of the level): 1000 terms at (64, 128) 1.565e-4
in 41.5 s -> 1.334e-4 in 45.4 s (factor 8: 1.330e-4); at (64, 64) 3.03e-4 -> 2.21e-4 (factor 2)
in the same CPU; 100 terms at (64, 128) 7.92e-5 -> 7.13e-5, 6.5 -> 6.8 s (both orders). A finer
floor gains less for more CPU (1000 terms at (64, 64), floor halved: 2.54e-4 in 42.1 s instead
of 34.5 s)."""


def renormalize_lower(low: LowerLattice) -> LowerLattice:
    r"""The tilted P side of a lower block scaled back to total mass about :math:`2^B`
    (:func:`certify.lattice_lower.retilt`, where the proof is).

    Why after every coarsening too: the re-discretization of section D multiplies the tilted
    masses by weights :math:`e^{-iu} \le 1`, so in a long chain of products and coarsenings the
    total decays geometrically and would fall below the fixed-point unit (the lower end then
    vanishes; seen at 1000 terms).
    """
    return retilt(low)


LOWER_OPS_RENORM = dataclasses.replace(
    LOWER_OPS, coarsen=lambda low, r: renormalize_lower(coarsen_lower(low, r)))
"""Lower-end operations whose re-discretization also renormalizes (:func:`renormalize_lower`)."""


# ---------------------------------------------------------------------------------------------
# fine core, coarse tails


HETERO_SPLIT_TAILS = True
r"""Several terms: the single-step blocks and every product of the multi-exponentiation carry
their far tails on a 64x coarser lattice (the fine-core / coarse-tail laws of
:mod:`certify.lattice_split` and :mod:`certify.lattice_split_lower`, as the one-term path
does; False: one fine lattice per law, as before session hetero4).

**Soundness.** :class:`MultiPower` only needs operations that map dominating factors to a
dominating result (upper end) and statistics to post-processed statistics (lower end), in any
order (module docstring). The split operations are such: the product of two core + tail laws
(:func:`certify.lattice_split.multiply_split`, Step 3 there: Lemma 1 on each cross term and
linearity of H) dominates the product of the laws, the split after it (Step 2: section C on
the sub-measure beyond the core, then linearity) and the re-discretization of both pieces
(Step 4) dominate their input; on the lower end the product, split and re-discretization are
deterministic functions of the blocks' statistics (Step 1 of
:mod:`certify.lattice_split_lower`) with the masses rounded as in the uniform case (Steps 2-3
there). A leaf built by :func:`leaf_upper` dominates the single-step connect-the-dots measure
(:func:`certify.lattice_split.split_atoms`, Step 2), a leaf built by :func:`leaf_lower` is a
post-processing of the single-step binned statistic (:func:`certify.lattice_split_lower.
split_lower_atoms`). Two factors of a product are first brought to one unit by the split
re-discretization (:func:`certify.lattice_adaptive.common_unit` with the split ``coarsen``),
which keeps the tail ratio, so :func:`certify.lattice_split.multiply_split`'s precondition
(equal units and ratios) holds. The induction of the module docstring then goes through
unchanged. The split mass (``tail_mass``) governs tightness only.

Why: at 1000 noise levels (rate 0.01) the single-step blocks span ~2e4 units of their unit
after the first re-discretization while all but 1e-10 of their mass lies in ~2e3 of them; the
balanced trees' leaf products were more than half of the CPU time."""


HETERO_TAIL_RATIO = 16
"""Coarse unit / fine unit of the several-term split laws (a power of two; tightness and time
only). Measured (session hetero4; one pair order, both ends, one run each, CPU under load ~2;
split mass 1e-10 per end, eps at delta 1e-5): 100 noise levels at (64, 128): one lattice
9.535e-5 wide, 10.1 s; ratio 64 9.633e-5, 7.2-9.1 s; ratio 16 9.557e-5, 7.3 s; 300 levels:
one lattice 1.275e-4, 51.2 s; ratio 64 1.277e-4, 34.6 s; ratio 16 1.276e-4, 35.7 s. A larger
split mass costs width (ratio 64, 1e-9: 1.049e-4; ratio 8, 1e-6: 1.27e-4; 1e-3: 1.6e-3): the
eps at delta lies in the composed law's far upper tail, which the blocks' tails feed. The
one-term :data:`certify.lattice_split.TAIL_RATIO` (64) is unchanged."""


HETERO_TAIL_SCALE = 100.0
r"""Several terms split their laws at this many times the one-term split mass
(:func:`hetero_tail_mass`; tightness and time only: any split mass is valid). The cores of the
single-step blocks end where the loss's heavy upper tail falls below the split mass, so a larger
mass shortens the trees' first products, which were half of their CPU. Measured 2026-12-03
(1000 noise levels, rate 0.01, x 100 steps, delta 1e-5, level (64, 128), 60 bits, one run
each, two runs side by side): scale 1 (1e-10 per end) 9.643e-5 wide, ~43 s; 100 (1e-8)
9.658e-5, 37.7 s; 1000 (1e-7) 9.751e-5, 33.5 s; 1e4 (1e-6) 1.036e-4, 31.7 s. The lower end
loses most (its test statistic is coarse in the tails, which feed eps's far upper tail: with
1e5 steps, 1e5 x 1e-8 of the paths have a step in its tail); 1e-6 on the upper end alone:
9.715e-5."""


HETERO_TAIL_TEST_MASS = 1e-12
r"""Several terms run the single-step points' tail test of one term
(:func:`certify.lattice_adaptive.one_term_tail`) when the one-term split mass is at most this,
i.e. at delta <= 1e-7 (:func:`hetero_tail_test`; tightness and time only: any points are
valid). At small delta a step's rare large loss decides eps, and without the test the ladder
climbed to fine levels. Measured 2026-12-03 (``target_epsilon_interval``, one run each, two side
by side; test on vs off): 30 levels (sigma 0.8..2.0, rate 0.01, x 100) at delta 1e-10: 8.7e-5
wide in 4.1 s at (64, 64) vs 2.1e-5 in 33.3 s at (512, 512); 100 such levels: 3.9e-5, 13.9 s vs
7.9e-5, 24.6 s; 10 levels with counts 50..383 (rate 0.02): 3.2e-5, 6.2 s vs 3.4e-5, 20.5 s; the
same at delta 1e-7: 4.3e-5, 2.9 s vs 5.6e-5, 4.9 s; 20 levels at rate 0.001 x 1000, delta
1e-10: 6.6e-5, 7.1 s vs 6.9e-5, 5.8 s. At delta 1e-6 .. 1e-5 the test costs more than it
gains: 100 levels, delta 1e-7: 9.1 vs 6.0 s (both within 1e-4), delta 1e-6: 7.6 vs 5.3 s; 1000
levels at delta 1e-5: 74 000 more evaluations (685 000 of the 720 000 budget) for the same
width."""


def hetero_tail_test(tail_mass: float) -> tuple[float, float] | None:
    """The ``(tail_z, tail_mass)`` of the single-step points of a several-term composition
    whose one-term split mass is ``tail_mass`` (:data:`HETERO_TAIL_TEST_MASS`), or None (the
    chord test's defaults)."""
    return one_term_tail(tail_mass) if tail_mass <= HETERO_TAIL_TEST_MASS else None


def hetero_tail_mass(tail_mass: float) -> float:
    r"""The split mass per end of a several-term composition's laws: :data:`HETERO_TAIL_SCALE`
    times the one-term ``tail_mass`` (:func:`certify.lattice_split.tail_mass_for`: so 1e-8 at
    delta >= 1e-5, 1e-3 delta below), at most 0.25."""
    return min(HETERO_TAIL_SCALE * tail_mass, 0.25)


HETERO_MIN_SPAN = 2048
"""A several-term law spanning at most this many fine units stays one fine law (the one-term
:data:`certify.lattice_split.MIN_SPAN` is 16384; tightness and time only). At 1000 noise
levels the blocks of level (32, 64) span ~4 000-10 000 units, so with 16384 nothing was split
there (the interval bit-identical to the one-lattice one, the same CPU). Measured (300 levels,
(64, 128), one pair order, both ends, ratio 16; one run each, load ~2): 16384: 1.276e-4 wide,
35.7 s; 2048: 1.276e-4, 32.4 s."""


def leaf_upper(step: LatticeStep, idx: list[int], values: list[Any], unit: float, bits: int,
               direction: str, tail_mass: float, ratio: int = TAIL_RATIO,
               min_span: int = HETERO_MIN_SPAN, prec: int | None = None) -> SplitPLD:
    r"""The single-step dominating block of section A (:mod:`certify.lattice_adaptive`) as a
    core + coarse tail law (:data:`HETERO_SPLIT_TAILS`).

    A span of at least ``min_span`` units (default :data:`HETERO_MIN_SPAN`; the one-term path
    passes :data:`certify.lattice_split.MIN_SPAN`) is split from the sparse
    atoms (:func:`certify.lattice_split.split_atoms`: the atoms beyond ``tail_mass`` per end
    moved to the coarse lattice by section C, Step 2 of :mod:`certify.lattice_split`), a
    shorter one built dense and split by :func:`certify.lattice_split.split_upper` (which keeps
    a law of at most :data:`HETERO_MIN_SPAN` units on one fine lattice, exactly). Either
    dominates the connect-the-dots measure of the points (Lemma 2), as
    :func:`certify.lattice_adaptive.adaptive_upper` does.

    Args:
        step: The single step (a ``LatticeStep``).
        idx: Sorted lattice points (section A).
        values: The hockey-stick curve's Arb enclosures at the points.
        unit: The lattice unit.
        bits: Fixed-point bits B.
        direction: Pair order.
        tail_mass: Split mass per end (tightness only).
        prec: The atoms' first working precision (None: the default of
            :func:`certify.lattice_adaptive.upper_atoms`; time only).

    Returns:
        A :class:`certify.lattice_split.SplitPLD` of count 1.
    """
    if idx[-1] - idx[0] >= min_span:
        atoms, inf = upper_atoms(step, idx, values, unit, bits, prec)
        return split_atoms(idx, atoms, inf, unit, bits, direction, ratio, tail_mass)
    return split_upper(adaptive_upper(step, idx, values, unit, bits, direction), ratio,
                       tail_mass, min_span)


def leaf_lower(step: LatticeStep, idx: list[int], unit: float, bits: int, direction: str,
               tails: dict | None, tail_mass: float, ratio: int = TAIL_RATIO,
               min_span: int = HETERO_MIN_SPAN, prec: int | None = None) -> LowerLattice:
    r"""The single-step binned-test laws of section B (:mod:`certify.lattice_adaptive`) as core
    + coarse tail (:func:`certify.lattice_split_lower.split_lower_atoms` for a span of at least
    ``min_span`` units (default :data:`HETERO_MIN_SPAN`), else
    :func:`certify.lattice_split_lower.split_lower` of the dense laws): the statistic's labels
    outside the core go to the coarse value :math:`\lfloor k/r \rfloor`, a post-processing
    (Step 1 of :mod:`certify.lattice_split_lower`), with the Q masses summed exactly and the
    tilted P masses weighted and rounded up (section D).

    Args:
        step: The single step.
        idx: Sorted lattice labels (section B).
        unit: The lattice unit.
        bits: Fixed-point bits B.
        direction: Pair order.
        tails: The step's tails at the points if evaluated already, else None.
        tail_mass: Split mass per end (tightness only).
        prec: As for :func:`leaf_upper`.

    Returns:
        A :class:`certify.lattice_lower.LowerLattice` of count 1 (its ``tail`` the coarse piece).
    """
    if idx[-1] - idx[0] >= min_span:
        qm, rm, q_inf, tilt = lower_atoms(step, idx, unit, bits, tails, prec)
        return split_lower_atoms(idx, qm, rm, q_inf, tilt, unit, bits, direction, ratio,
                                 tail_mass)
    return split_lower(adaptive_lower(step, idx, unit, bits, 1, direction, tails), ratio,
                       tail_mass, min_span)


def hetero_ops(tail_mass: float, ratio: int = TAIL_RATIO) -> tuple[Any, Any]:
    """(upper, lower) operations of :class:`MultiPower`: the split ones splitting at
    ``tail_mass`` (:data:`HETERO_SPLIT_TAILS`), the lower end's re-discretization renormalizing
    (:func:`renormalize_lower`; its products re-tilt already,
    :func:`certify.lattice_split_lower.multiply_split_lower`); or the one-lattice
    ``UPPER_OPS`` and :data:`LOWER_OPS_RENORM`.

    Raises:
        ValueError: on a ``tail_mass`` outside [0, 0.5).
    """
    if not HETERO_SPLIT_TAILS:
        return UPPER_OPS, LOWER_OPS_RENORM
    low = split_lower_ops(ratio, tail_mass, HETERO_MIN_SPAN)
    return split_ops(tail_mass, HETERO_MIN_SPAN), dataclasses.replace(
        low, coarsen=lambda x, r: renormalize_lower(coarsen_split_lower(x, r)))


class MultiPower:
    r"""Accumulates :math:`\prod_i \mu_i^{*c_i}` from single-step blocks given one at a time.

    Args:
        counts: c_i >= 1 per term, in the order the blocks will be pushed.
        variances: Single-step rough variances per term (place the grids only).
        per_sigma: Points per rough standard deviation of each composed law (the Horner
            chain's: :data:`HORNER_FACTOR` times that from :data:`HORNER_MIN_TERMS` terms on).
        ops: :data:`certify.lattice_adaptive.UPPER_OPS` or ``LOWER_OPS``.

    Raises:
        ValueError: on no terms, a count below 1 or lists of different lengths.
    """

    def __init__(self, counts: Sequence[int], variances: Sequence[float], per_sigma: int,
                 ops: Any) -> None:
        if not counts or len(counts) != len(variances):
            raise ValueError(f"counts and variances must be non-empty lists of one length, got "
                             f"{len(counts)} and {len(variances)}")
        for c in counts:
            if isinstance(c, bool) or not isinstance(c, int) or c < 1:
                raise ValueError(f"count must be an integer >= 1, got {c!r}")
        self.counts, self.variances = list(counts), [float(v) for v in variances]
        self.per_sigma, self.ops = per_sigma, ops
        self.horner = HORNER_FACTOR if len(counts) >= HORNER_MIN_TERMS else 1
        self.top = max(counts).bit_length()
        keys = {self._key(b) for b in range(self.top)} - {()}
        self.floor = math.sqrt(sum(c * v for c, v in zip(counts, variances, strict=True)) /
                               (2.0 * FLOOR_SHARE * sum(2 * len(k) for k in keys)))
        # one stack per distinct digit set; the digit sets a term belongs to
        self.stacks: dict[tuple[int, ...], list[tuple[Any, float, int]]] = {k: [] for k in keys}
        self.member = [[k for k in keys if i in k] for i in range(len(counts))]
        self.pushed = 0

    def _key(self, bit: int) -> tuple[int, ...]:
        return tuple(i for i, c in enumerate(self.counts) if (c >> bit) & 1)

    def _merge(self, a: tuple[Any, float, int], b: tuple[Any, float, int]
               ) -> tuple[Any, float, int]:
        check_deadline("in the lattice composition of the terms")
        x, y = common_unit(a[0], b[0], self.ops)
        v = a[1] + b[1]  # HORNER_FACTOR: the trees' products as fine as the chain
        return (settle(self.ops.mul(x, y), max(math.sqrt(v), self.floor),
                       self.per_sigma * self.horner, self.ops), v, a[2] + b[2])

    def push(self, block: Any) -> None:
        """The single-step block of the next term (binary-counter merging: a balanced tree)."""
        i = self.pushed
        if i >= len(self.counts):
            raise ValueError("more blocks pushed than terms")
        self.pushed += 1
        v = self.variances[i]
        blk = settle(block, max(math.sqrt(v), self.floor), self.per_sigma, self.ops)
        for k in self.member[i]:
            st = self.stacks[k]
            st.append((blk, v, 1))
            while len(st) > 1 and st[-1][2] == st[-2][2]:
                b, a = st.pop(), st.pop()
                st.append(self._merge(a, b))

    def _tree(self, key: tuple[int, ...]) -> tuple[Any, float]:
        st = self.stacks[key]
        out = st.pop()
        while st:
            out = self._merge(st.pop(), out)
        return out[0], out[1]

    def result(self) -> Any:
        """The composed block (Horner over the digits, module docstring)."""
        if self.pushed != len(self.counts):
            raise ValueError(f"{self.pushed} blocks pushed for {len(self.counts)} terms")
        ops, per_sigma = self.ops, self.per_sigma * self.horner  # HORNER_FACTOR
        trees: dict[tuple[int, ...], tuple[Any, float]] = {}  # equal digit sets: one tree
        result, var = None, 0.0
        for bit in range(self.top - 1, -1, -1):
            check_deadline("in the lattice squarings")
            if result is not None:
                result = settle(ops.mul(result, result), math.sqrt(2.0 * var), per_sigma, ops)
                var *= 2.0
            key = self._key(bit)
            if not key:
                continue
            if key not in trees:
                trees[key] = self._tree(key)
            blk, v = trees[key]
            if result is None:
                result, var = blk, v
            else:
                x, y = common_unit(result, blk, ops)
                var += v
                result = settle(ops.mul(x, y), math.sqrt(var), per_sigma, ops)
        return result


def multi_power(parts: list[tuple[Any, int, float]], per_sigma: int, ops: Any) -> Any:
    r"""The composition :math:`\prod_i \mu_i^{*c_i}` of single-step blocks (module docstring).

    Args:
        parts: ``(block, count, variance)`` per term: a single-step block (a
            :class:`certify.lattice_measure.LatticePLD` or
            :class:`certify.lattice_lower.LowerLattice` of one step), its count c >= 1 and its
            single-step rough variance (places the grids only).
        per_sigma: Points per rough standard deviation of each composed law.
        ops: :data:`certify.lattice_adaptive.UPPER_OPS` or ``LOWER_OPS``.

    Returns:
        The composed block (upper: dominating measure; lower: binned test laws).

    Raises:
        ValueError: on an empty list or a count below 1.
        BudgetExceeded: past the deadline of an active time budget.
    """
    if not parts:
        raise ValueError("parts must not be empty")
    order = sorted(parts, key=lambda p: p[2])
    acc = MultiPower([c for _, c, _ in order], [v for _, _, v in order], per_sigma, ops)
    for blk, _, _ in order:
        acc.push(blk)
    return acc.result()
