r"""The one-term refinement ladder's jump, with factors measured on the query itself.

:func:`certify.lattice_target.target_epsilon_interval` refines through the resolutions of
``LEVELS`` and jumps straight to the level predicted to meet the requested width. The fixed model
(the width falls 1.8x and the work grows 1.5x per level) holds at coarse levels but not always
at fine ones; with two finished levels the factors measured between them predict the next jump
(:func:`measured_width_per_level`, :func:`measured_cost_per_level`), and a stall (the width not
falling with the grid, :func:`stalled`) limits it to two levels; :func:`one_term_model` puts the
rules together. Only the choice of the next level depends on them: every level's interval is
proven on its own, and the refinement intersects them.
"""

from __future__ import annotations

import math

__all__ = ["FIRST_MIN_WIDTH_PER_LEVEL", "JUMP_SLACK", "LONG_JUMP", "MAX_WIDTH_PER_LEVEL",
           "MEASURED_MAX_JUMP", "PROBE_BIT_DROP", "PROBE_MARGIN", "PROBE_MIN_BITS",
           "PROBE_ROUNDING", "SMALL_BITS", "SMALL_BITS_MAX_DROP", "STALLED_MAX_JUMP", "level_bits",
           "measured_cost_per_level", "measured_width_per_level", "one_term_model", "probe_bits",
           "probe_drop", "stalled"]


MAX_WIDTH_PER_LEVEL = 2.0
"""The width factor per level used for a jump is at most 2: a level doubles one of the two
resolutions of a second-order scheme, so over two levels the width falls at most about 4x
(both error terms quartered); faster falls measured at coarse levels do not extrapolate (the
cap was 2.2)."""

FIRST_MIN_WIDTH_PER_LEVEL = 1.64
"""A factor measured from the coarsest level (2, 4), before the width falls at its asymptotic
rate, is taken as at least 1.64. Between (16, 32) and the first level meeting 1e-4 the width
fell 1.67-2.08x per level on 28 of 30 DP-SGD queries measured level by level (2026-12-02; the
others: a stall, and 2.4 over a single level), while the (2, 4) -> (16, 32) factor ranged
1.5-4.1. Two real queries bound the floor (target 1e-4, rate 0.001): sigma 0.8, m = 1e5, delta
1e-10 measured 1.52 but fell 2.0x per level, needing 7 levels from (16, 32), ratio 43.8 (with
1.52 alone the ladder jumped 9, to (512, 512): 28 s of a 30 s query; any floor >= 1.655 gives 7,
1.64 gives 8); sigma 0.5, m = 1e7, delta 1e-10 measured 1.56, fell 1.67x, needing 9 levels for
a ratio of 68.2 (a floor of 1.75 jumped 8, to 1.13e-4 wide, and the extra level made it 44 s
instead of 28; any floor < 1.643 gives 9). Later measurements, between fine levels, keep their
own value (a slow fall there is real)."""


def measured_width_per_level(history: tuple[tuple, ...]) -> float | None:
    """The factor the width fell per level between the last two finished levels ``(index,
    own relative width, evaluations)`` of one query, at most :data:`MAX_WIDTH_PER_LEVEL` (and at
    least :data:`FIRST_MIN_WIDTH_PER_LEVEL` when measured from the coarsest level, index 0);
    None with fewer than two levels or a fall below 1.25 per level (rate 0.001, sigma 0.8, m =
    1e3, delta 1e-5: the width stays 0.78 at (2, 4) and (16, 32), set by something other than
    the grid; the fixed rule applies).

    The fixed 1.8 per level of the ladder holds at coarse levels, but at fine ones the width
    can fall much more slowly (rate 0.001, sigma 0.8, m = 1e5, delta 1e-10: 1.53 per level from
    (16, 32) to (128, 256), 1.39 from there to (256, 512)), so a jump predicted with 1.8 fell
    short and cost a whole extra level (13.9 s of a 40.7 s query; since the tail points of
    :func:`certify.lattice_adaptive.adaptive_points` the same query falls 2.0x per level there).
    Only the choice of the next level depends on it: every level's interval is proven on its
    own."""
    if len(history) < 2:
        return None
    (i0, w0), (i1, w1) = (h[:2] for h in history[-2:])
    if not (i1 > i0 and w0 > 0 and w1 > 0 and math.isfinite(w0) and math.isfinite(w1)):
        return None
    factor = (w0 / w1) ** (1.0 / (i1 - i0))
    if not (factor >= 1.25):  # the width did not fall with the grid: no measurement of its rate
        return None
    if i0 == 0:
        factor = max(factor, FIRST_MIN_WIDTH_PER_LEVEL)
    return min(factor, MAX_WIDTH_PER_LEVEL)


JUMP_SLACK = 0.5
LONG_JUMP = 5.0
"""With a measured factor, a predicted jump of x levels is rounded up, but a long one (x >= 5)
to the nearest level (up from x - 0.5). Extrapolated far, the factor measured between the two
coarse levels underestimated the fine levels' (log-factor ~10% low: rate 0.001, sigma 1,
m = 1e6, delta 1e-10: 1.69 measured, 1.79 then; rate 0.01, sigma 0.8, m = 1e5: 1.71, then 1.85;
rate 0.001, sigma 0.8, m = 1e5: 1.53, then 1.60), so predicted 6.2 and 6.4 levels needed 6 and
8.75 needed 9; short jumps did not show that bias (rate 0.01, sigma 1, m = 1e3, delta 1e-5:
2.15 predicted, 3 needed; rate 0.001, sigma 2, m = 1e3 and 1e5: 3.46 and 4.19, 4 and 5
needed). A one-level overshoot costs ~1.5x, a near miss a whole extra level."""
MEASURED_MAX_JUMP = 10


STALLED_MAX_JUMP = 2
"""After a stall (:func:`stalled`) the next jump goes at most 2 levels up: the width is then set
by something the grid model does not see, which a slightly finer grid often removes (rate 0.001,
sigma 0.8, m = 1e3, delta 1e-5: 0.78 relative at (2, 4) and (16, 32), where the Q||P step had
100 points; 4.2e-5 at (32, 64) in 1.25 s; the fixed rule's 6 levels went to (128, 256), 2.6e-6
in 5.2 s)."""


def stalled(history: tuple[tuple, ...]) -> bool:
    """Whether the width fell by less than 1.25x per level between the last two finished levels
    ``(index, own relative width, evaluations)`` (False with fewer than two)."""
    if len(history) < 2:
        return False
    (i0, w0), (i1, w1) = (h[:2] for h in history[-2:])
    if not (i1 > i0 and w1 > 0 and math.isfinite(w1)):
        return False
    return not (w0 / w1 >= 1.25 ** (i1 - i0))


def measured_cost_per_level(history: tuple[tuple, ...]) -> float | None:
    """The factor the single-step evaluations (the work measure of the budget) grew per level
    between the last two finished levels ``(index, own relative width, evaluations)``, in
    [1.2, 2.0]; None with fewer than two levels. The fixed 1.5 of the ladder overestimated it
    (rate 0.1, sigma 2, m = 10: 1.28 per level from (2, 4) to (16, 32)), and under a time budget
    an overestimate stops the ladder a level early. Deterministic (evaluations, not seconds):
    the same query and budget give the same grid."""
    if len(history) < 2 or len(history[-1]) < 3 or len(history[-2]) < 3:
        return None
    (i0, _, e0), (i1, _, e1) = history[-2:]
    if not (i1 > i0 and e0 > 0 and e1 > 0):
        return None
    return min(max((e1 / e0) ** (1.0 / (i1 - i0)), 1.2), 2.0)


def one_term_model(history: tuple[tuple, ...], width_per_level: float, max_jump: int,
                   cost_per_level: float) -> tuple[float, int, float, float]:
    """``(width factor per level, jump cap, slack, cost factor per level)`` of the one-term
    ladder after the finished levels ``history`` (``(index, own relative width, evaluations)``):
    the measured width factor with :data:`MEASURED_MAX_JUMP` and :data:`JUMP_SLACK` (for jumps
    of at least :data:`LONG_JUMP` levels), else the fixed ``width_per_level`` and ``max_jump``
    (at most :data:`STALLED_MAX_JUMP` after a stall); the measured cost factor, else
    ``cost_per_level``."""
    growth = measured_cost_per_level(history) or cost_per_level
    measured = measured_width_per_level(history)
    if measured is not None:
        return measured, MEASURED_MAX_JUMP, JUMP_SLACK, growth
    return width_per_level, STALLED_MAX_JUMP if stalled(history) else max_jump, 0.0, growth


PROBE_BIT_DROP = 8
"""One term: a level the ladder runs only to measure the width's fall (a *probe*: a level
predicted from a finite width to stay more than :data:`PROBE_MARGIN` levels short of the
target, after which the budgets afford another level; the coarsest level, which has no
prediction, is not one) computes with up to this many fewer fixed-point bits
(:func:`probe_drop`, :func:`probe_bits`); 0: every level at the query's bits. Its interval is
proven like any other (every rounding is directed whatever the bits); only its width can grow,
by the rounding the fewer bits allow, and a wider probe sends the ladder's next jump further
(more CPU, a narrower answer). The single-step evaluations keep the query's Arb precision, so
that finer levels reuse them (:func:`certify.lattice_adaptive.evaluation_memo`).

Measured 2026-12-02 at level (16, 32) (relative widths, full bits -> probe bits): rate 0.01,
sigma 1, m = 1e5, delta 1e-5, 64 -> 56 bits: 2.2988e-3 both, CPU 0.33 -> 0.19 s (48 bits: the
same CPU). A drop of 16 was tried first and rejected: rate 0.001, sigma 0.5, m = 1e4, delta
1e-5: 5.1e-4 -> 2.45e-3 at 48 bits, so the grid run sent it and six others one or two levels
further (two to 2.1x and 2.5x their CPU); sigma 0.8, m = 1e7, delta 1e-10, 80 -> 72 / 64
bits: 4.31e-3 -> 6.22e-3 / 8.86e-3. With 8 bits at most and :func:`probe_drop`: 1.00-1.03x on
the rate-0.001 rows above, 1.13x and 1.29x for sigma 0.5, m = 1e6 (delta 1e-10 and 1e-5), 1.00
where the first level's rounding allows no drop."""
PROBE_ROUNDING = 1e-2
"""A probe may drop bits while its rounding (scaled up 2x per bit from the first level's) stays
below this fraction of the query's delta (:func:`probe_drop`)."""
PROBE_MARGIN = 1.0
"""A level is a probe when it is predicted more than this many levels short of the target."""
PROBE_MIN_BITS = 40


def probe_drop(rounding: float, scale: float) -> int:
    r"""The bits a probe level may drop: the largest :math:`D \le` :data:`PROBE_BIT_DROP` with
    :math:`r 2^D \le` :data:`PROBE_ROUNDING` :math:`\cdot s`, for the first level's rounding
    diagnostic r (its upper ends' a-priori rounding budgets and lower ends' lost Q-mass, at
    the query's bits; each grows at most 2x per bit dropped, the rest of it -- the range
    truncation -- not at all) and the query's delta s; 0 when either is not a usable number.
    The first level measured (rate 0.01, r / s): sigma 1, m = 1e5, delta 1e-5: 2.5e-7 (room
    for 15 bits); sigma 0.5, m = 1e6, delta 1e-10: 1.1e-3 (D = 3); sigma 0.8, m = 1e7, delta
    1e-10: 1.1e-2 (D = 0). It does not foresee every probe's rounding (that grows with the
    level's points and products, and some queries are far more sensitive than others), hence
    the cap :data:`PROBE_BIT_DROP`."""
    if not (scale > 0 and math.isfinite(scale) and rounding >= 0 and math.isfinite(rounding)):
        return 0
    if rounding == 0:
        return PROBE_BIT_DROP
    room = PROBE_ROUNDING * scale / rounding
    return max(0, min(PROBE_BIT_DROP, math.floor(math.log2(room)))) if room >= 1 else 0


def probe_bits(bits: int, drop: int = PROBE_BIT_DROP) -> int:
    """The fixed-point bits of a probe level: ``drop`` fewer than ``bits``, at least
    :data:`PROBE_MIN_BITS` (never more than ``bits``)."""
    return min(bits, max(PROBE_MIN_BITS, bits - drop))


SMALL_BITS = 60
"""The levels after the first that are not probes (those that may be the answer) run
at this many fixed-point bits instead of the query's B when B is above it by no more than the
probe drop the first level allows and :data:`SMALL_BITS_MAX_DROP` (:func:`level_bits`: B = 61..64,
delta from about 1.2e-4 down to 7.6e-6, e.g. 1e-5).
FLINT keeps an integer below 2^62 in one machine word, without a GMP allocation, so masses of at
most 2^60 make the products, rescalings and copies cheaper. Every rounding stays directed: only
the width can change.

Measured 2026-12-02 on the 72 delta-1e-5 queries of the DP-SGD grid (whole queries, a fresh
process each, the levels after the first at 60 bits against 64, one run each with another job on
the second core): CPU geometric mean 0.925 (rate 0.1: 0.93, rate 0.001: 0.91); the same
resolutions and no warning on all 72; widths within 0.3% at rates 0.01 and 0.1 (0.8% at rate
0.1, sigma 0.5, m = 1e7), up to 1.23x at rate 0.001 (sigma 0.5, m = 1e5: 1.91e-5 -> 2.35e-5;
sigma 0.8, m = 1e4: 6.47e-5 -> 6.72e-5, as :func:`certify.lattice_grid.epsilon_query_bits`
records), all below the 1e-4 target.

Several terms since 2026-12-03 (they had kept the query's B): 1000 noise levels (rate 0.01, sigma
0.8..2.0, 100 steps each, delta 1e-5), level (64, 128), P||Q, both ends, the two bit widths side
by side on the two cores: CPU 56.9 s at 64 bits, 52.2 s at 60 (0.92), widths 9.642e-5 and
9.643e-5 (a-priori rounding budget 3.4e-11 -> 5.3e-10 of delta 1e-5)."""


SMALL_BITS_MAX_DROP = 4
""":func:`level_bits` lowers a query's bits to :data:`SMALL_BITS` by at most this many (64 -> 60,
the drop measured on the grid)."""


def level_bits(bits: int, drop: int) -> int:
    """The fixed-point bits of a level that is not a probe: :data:`SMALL_BITS` when
    ``bits`` lies above it by at most ``drop`` (the probe drop the first level allows,
    :func:`probe_drop`; 0 at the first level) and :data:`SMALL_BITS_MAX_DROP`, else ``bits``."""
    return SMALL_BITS if 0 < bits - SMALL_BITS <= min(drop, SMALL_BITS_MAX_DROP) else bits
