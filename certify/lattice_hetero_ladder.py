r"""The refinement ladder of heterogeneous (several-term) compositions: its constants, the
chord test's starting grid per term, and the work model that picks the next level.

Used by :mod:`certify.lattice_target` (the refinement loop and the per-level enclosures are
there). Everything here is a choice of *where to compute*, never of what is proven: every level's
interval is a certified enclosure whatever the resolution, the starting grid or the order of
the levels, and the intervals are intersected.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .engine import DEFAULT_PRECISION

__all__ = [
    "CARRY_KEYS",
    "HETERO_COARSE_SINGLE",
    "HETERO_COST_OFFSET",
    "HETERO_EVAL_GUARD",
    "HETERO_INITIAL",
    "HETERO_INITIAL_COST",
    "HETERO_INITIAL_MANY",
    "HETERO_LAZY_STEP",
    "HETERO_MANY_TERMS",
    "HETERO_MAX_JUMP",
    "HETERO_WIDTH_PER_LEVEL",
    "evaluation_precision",
    "has_margin",
    "hetero_initial",
    "next_orders",
    "several_cost",
]

HETERO_WIDTH_PER_LEVEL = 1.96
"""Several terms (heterogeneous compositions): the width falls about this much per level.
Measured, 100 DP-SGD noise levels (sigma 0.8..2.0, rate 0.01, 100 steps each, delta 1e-5):
(2, 4) 7.6e-2 -> (16, 32) 1.46e-3 (1.93 per level), (64, 64) 2.35e-4 -> (64, 128) 9.54e-5
(2.46) -> (128, 128) 6.11e-5 (1.56): 1.96 on average. With the one-term 1.8 the refinement
jumped from (16, 32) over (64, 128), which meets 1e-4, to (128, 128) (6.1e-5, 1.6x the CPU).
Tightness and time only: any level's interval is sound."""

HETERO_MAX_JUMP = 12
"""Several terms: at most this many levels up in one step (one term: 6). Each level of a
heterogeneous composition costs a pass over all its terms, so the intermediate levels the
one-term cap forces (100 levels: (2, 4) -> (16, 32) -> ..., 2.2 s of CPU for (16, 32)) are
skipped when the coarsest level already predicts the target's level."""

HETERO_INITIAL = 6
"""Several terms: the chord test's starting grid per term (``initial`` of
:func:`certify.lattice_adaptive.adaptive_points`: 32-64 points, as for one term). Tried and
rejected: 4 (~16 points) at the coarse levels (single <= 4), whose job is to predict the
target's level. At 100 levels (2, 4) took 7 884 evaluations and 0.8 s instead of 20 826 and
1.9 s and predicted the same level; but at 10 levels its interval widened from [1.740, 1.800]
to [0.70, 2.12], the jump went to (128, 256), and the coarse Q||P upper end no longer let the
fine level skip that order (the carry of :func:`certify.lattice_target._epsilon_once`): 5.7 s
instead of 1.4 s."""


HETERO_MANY_TERMS = 50
"""Several terms: from this many terms on, the coarse levels (``single`` at most
:data:`HETERO_COARSE_SINGLE`) start the chord test from :data:`HETERO_INITIAL_MANY` instead of
:data:`HETERO_INITIAL` (see there)."""

HETERO_COARSE_SINGLE = 4
HETERO_INITIAL_MANY = 4
"""The chord test's starting grid (``initial``) of the coarse levels of a composition of at
least :data:`HETERO_MANY_TERMS` terms (tightness and work only: any points are valid)."""


HETERO_EVAL_GUARD = 40
"""Several terms: the single-step curve and tails are evaluated at ``bits + HETERO_EVAL_GUARD``
bits of working precision (one term: ``DEFAULT_PRECISION + bits``). Tightness and time only:
every value is an Arb ball, and the blocks re-evaluate at a higher precision whenever a
chord's or a cell mass's radius exceeds :math:`2^{-B-8}` (:func:`certify.lattice_adaptive.
adaptive_upper`, :func:`~certify.lattice_adaptive.adaptive_lower`, and the single-step atoms
of :func:`certify.lattice_hetero.leaf_upper` / ``leaf_lower``, which run at this precision too);
40 guard bits cover the chords' cancellation (adjacent points at most 2^-20 apart lose about 20
bits). 64 until 2026-12-03: 40 keeps a first level's 64 + 40 bits at two limbs where Arb's erfc
is cheap (2.8 us at 104 bits, 3.7 us at 108, 4.2 us at 128, measured), ~2 s of the 1000-level
final level (the same interval to 10 digits)."""


def evaluation_precision(terms: int, bits: int) -> int:
    """The Arb working precision of the single-step evaluations of a composition of ``terms``
    distinct terms at ``bits`` fixed-point bits: ``DEFAULT_PRECISION + bits`` for one term,
    ``bits + HETERO_EVAL_GUARD`` for several (the one rule of every caller)."""
    return (DEFAULT_PRECISION if terms == 1 else HETERO_EVAL_GUARD) + bits

HETERO_LAZY_STEP = 2
"""Several terms: an order that cannot be skipped is first recomputed this many levels above
the level it was last computed at (:func:`certify.lattice_target._epsilon_once`; about 3.8x
narrower)."""

HETERO_INITIAL_COST = 2.63
"""Several terms: the evaluations of a level with the normal starting grid over those with the
small one (:data:`HETERO_INITIAL_MANY`), for the work prediction. Measured at the coarsest
level (2, 4): 100 noise levels 20 826 / 7 884 = 2.64, 1000 levels 207 490 / 78 940 = 2.63."""

HETERO_COST_OFFSET = 12
"""Several terms: the work of level j predicted from level i's evaluations as
``evals_i (OFFSET + single_j) / (OFFSET + single_i)`` per pair order (:func:`next_orders`).
Session hetero3: 12, was 8. A term's evaluations per pair order are about 86 + 7 single with
the normal starting grid, at 100 and at 1000 noise levels alike: (2, 4) 104, (32, 64) 298,
(64, 128) 566 per term and order, predicted from (2, 4) with 12: 327 and 565. With 8 (and the
work of the orders counted in bulk: the coarsest level computes two, the finer ones one) the
model over-estimated: 100 levels (2, 4) -> (64, 128) predicted 150 000, taken 56 591.
Earlier trials: the one-term 1.5^(j - i) made every jump of more than a few levels look
unaffordable; s_j / s_i kept 100 levels from jumping to (64, 128) (666 000 predicted) and cost an
extra level (17.1 s instead of 12.6); a 1000-level run that computed both orders at (32, 64)
(the carry could not skip Q||P; now a lazy order, :func:`certify.lattice_target._epsilon_once`)
overspent the default budget (674 290 evaluations of 480 000)."""

def hetero_initial(n_terms: int, single: int) -> int:
    """The chord test's ``initial`` for one term of a composition of ``n_terms`` terms at a
    level with ``single`` points per rough standard deviation of the single step."""
    if n_terms >= HETERO_MANY_TERMS and single <= HETERO_COARSE_SINGLE:
        return HETERO_INITIAL_MANY
    return HETERO_INITIAL


CARRY_KEYS = ("win", "at", "res")
"""The keys of a refinement's carry that are not pair orders (the carry maps each order to its
certified upper end): the winning order, the level index each order was last computed at, and
the resolution each carried value was computed at (``inputs["carried_orders"]``)."""


def has_margin(carry: dict, d: str) -> bool:
    """Order d's carried eps upper end lies strictly below the winning order's (a lazy
    recomputation of d may then let a finer level skip it; a work choice only)."""
    v, w = carry.get(d), carry.get(carry.get("win"))
    return v is not None and w is not None and v < w


def next_orders(computed: int, evals: int, lower: Any, carry: dict, initial_changes: bool
                ) -> tuple[float, float, tuple[int, ...]]:
    r"""Several terms, eps queries: (work of one pair order at this level, given its ``evals``
    over the ``computed`` orders; pair orders the next level computes in full; levels of its
    lazy orders) for the work model (:func:`several_cost`; a prediction only).

    The next level computes the winning order and every other order whose carried upper end is
    not below the intersected interval's lower end ``lower`` lazily (where
    :func:`has_margin`; else in full): an order d with carried :math:`\bar\varepsilon_d <`
    lower is skipped for sure, since then :math:`\varepsilon_d < \text{lower} \le \max_o
    \varepsilon_o`, so the maximum is another order's eps, and that order's upper end at the
    next level is at least its eps, which is above :math:`\bar\varepsilon_d`. For DP-SGD the
    order Q||P is then computed at the coarsest level only. ``initial_changes``: this level
    started the chord test from the small grid (:func:`hetero_initial`), and the next is
    predicted with the normal one (the jump usually leaves the coarse levels): the work per
    order is scaled by :data:`HETERO_INITIAL_COST`."""
    per_order = evals / max(computed, 1)
    if initial_changes:
        per_order *= HETERO_INITIAL_COST
    win = carry.get("win")
    at = carry.get("at", {})
    unsure = [d for d, v in carry.items()
              if d not in (*CARRY_KEYS, win) and (v is None or not v < lower)]
    lazy = tuple(at.get(d, 0) for d in unsure if has_margin(carry, d))
    return per_order, 1.0 + len(unsure) - len(lazy), lazy


def several_cost(singles: Sequence[int], i: int, j: int, evals: float, orders: float,
                 lazy: tuple[int, ...], n_terms: int) -> float:
    """Predicted evaluations of level j from level i (``singles``: the levels' single-step
    resolutions; ``evals``: the work of one pair order at level i): ``orders`` pair orders at
    level j, each ``evals (OFFSET + s_j) / (OFFSET + s_i)`` (:data:`HETERO_COST_OFFSET`), and one
    upper end per entry of ``lazy`` (the level that order was last computed at) at
    :data:`HETERO_LAZY_STEP` levels above it, cheaper by :data:`HETERO_INITIAL_COST` where that
    level starts from the small grid of :func:`hetero_initial`."""
    more = 0.0
    for k in lazy:
        s = singles[min(k + HETERO_LAZY_STEP, j)]
        small = hetero_initial(n_terms, s) != HETERO_INITIAL
        more += (HETERO_COST_OFFSET + s) / (HETERO_INITIAL_COST if small else 1.0)
    return evals * (orders * (HETERO_COST_OFFSET + singles[j]) + more) / (
        HETERO_COST_OFFSET + singles[i])

