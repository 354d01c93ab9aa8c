r"""A target, not a grid: the certified lattice refined until the interval is as narrow as asked.

:func:`target_delta_interval` and :func:`target_epsilon_interval` compute the lattice enclosure
(both ends: :mod:`certify.lattice`, :mod:`certify.lattice_lower`) on the adaptive grids of
:mod:`certify.lattice_adaptive` at resolutions :data:`LEVELS` (points per rough standard
deviation of the single-step and of the composed laws), coarsest first, intersecting the
enclosures as they come (each is proven, so their intersection is; docs/math.md section 10).
The interval itself is the error measure (a posteriori): the loop stops as soon as

.. math::

    \text{upper} - \text{lower} \le \text{rel\_width} \cdot \max(|\text{upper}|, 0.01)

(relative width, or for an eps below 0.01 absolute ``rel_width / 100``; a delta is always
relative: ``upper - lower <= rel_width * upper``), or when the next level
would not fit the work budget, or at the finest level; then the result carries a warning saying
which. The work budget is counted in single-step evaluations (deterministic: the same query
and budget always give the same grid, whatever the machine's load), at :data:`EVALS_PER_SECOND`
of the active time budget (:mod:`certify.budget`), or :data:`DEFAULT_EVALUATIONS` without one;
the deadline itself still stops a slow machine, keeping the finished levels' answer. The levels
after the first (:func:`certify.lattice_jump.level_bits`) and, one term, *probe* levels
(``inputs["probe_levels"]``) may use fewer fixed-point bits; all are proven alike.

The result reports the discretization chosen (units, points, resolution), the time spent, the
a-priori rounding budget of the upper end and the Q-mass lost by the lower end in ``inputs``.
"""

from __future__ import annotations

import math
import time
from typing import Any

from flint import arb

from numeric.composition import Composition, compose
from numeric.errors import BudgetExceeded

from . import lattice_hetero, lattice_jump, lattice_memory, lattice_split
from .bound import Bound
from .budget import check_deadline, current_deadline
from .engine import DEFAULT_PRECISION, Endpoint, endpoints, to_arb, workprec
from .lattice_adaptive import (
    LOWER_OPS,
    UPPER_OPS,
    Resolution,
    adaptive_lower,
    adaptive_points,
    adaptive_upper,
    evaluation_memo,
    one_term_tail,
    power,
    unit_below,
)
from .lattice_grid import bounded_cache, check_params, epsilon_query_bits, lattice_terms
from .lattice_hetero import MultiPower, hetero_ops, leaf_lower, leaf_upper
from .lattice_hetero_ladder import (  # the HETERO_* constants also read from here
    HETERO_COST_OFFSET,  # noqa: F401
    HETERO_INITIAL,
    HETERO_LAZY_STEP,
    HETERO_MAX_JUMP,
    HETERO_WIDTH_PER_LEVEL,
    evaluation_precision,
    has_margin,
    hetero_initial,
    next_orders,
    several_cost,
)
from .lattice_lower import A_LOWER, epsilon_lower
from .lattice_measure import epsilon_upper
from .lattice_split import split_ops, tail_mass_for
from .lattice_split_lower import split_lower_ops
from .lattice_steps import step_assumptions

__all__ = [
    "DEFAULT_REL_WIDTH",
    "LEVELS",
    "check_rel_width",
    "target_delta_interval",
    "target_epsilon_interval",
]

DEFAULT_REL_WIDTH = 1e-4
"""Requested relative width of the lattice interval (``--rel-width``)."""

LEVELS = tuple(Resolution(s, c) for k in range(11)
               for s, c in ((2 << k, 4 << k), (4 << k, 4 << k))[: 1 if k == 10 else 2])
"""Resolutions tried in turn (single-step and composed points per rough standard deviation):
(2, 4), (4, 4), (4, 8), (8, 8), ..., (2048, 4096), one of the two doubled per level, so the width
falls about 2-fold per level and a target is overshot by at most about that (measured, rate
0.001, sigma 2, m = 1e6, delta 1e-5: (64, 128) 1.25e-4 wide, (128, 128) 7.5e-5 in 0.8 s of
CPU, (128, 256) 3.2e-5 in 1.7 s)."""

_WIDTH_PER_LEVEL = 1.8  # the width falls about this much per level (measured 1.76-1.83)
_COST_PER_LEVEL = 1.5  # single-step evaluations grow about this much per level

DEFAULT_EVALUATIONS = 720_000
"""Work budget without an active time budget, in single-step evaluations (about a minute of CPU
on the reference machine: 1000 subsampled Gaussians x 100 steps reach 1e-4 with ~610 000 in
~40 s; one term runs ~12 000 a second). 480 000 until 2026-12-03 (one level short there)."""

EVALS_PER_SECOND = 2_500
"""Single-step Arb evaluations a second of an active time budget buys: about a fifth of the
~12 000/s of CPU time measured for the whole lattice of subsampled Gaussians on the 2-core
reference machine, products included, so that a wall-clock budget holds on a shared machine."""

SPLIT_TAILS = True
"""One term: the upper end's composed laws carry their far tails on a coarser lattice
(:mod:`certify.lattice_split`; False: one fine lattice, as before)."""
ONE_TERM_TAIL_RATIO = lattice_split.TAIL_RATIO  # several terms: lattice_hetero.HETERO_TAIL_RATIO

_ABS_FLOOR = 0.01  # below this value the target width is absolute: rel_width * 0.01

A_TARGET = (
    "lattice on adaptive grids: connect-the-dots points chosen by the chord test, composed laws "
    "re-discretized by connect-the-dots (upper end) and by coarsening the test statistic (lower "
    "end), both only in the safe direction (proof in certify.lattice_adaptive)"
)


def check_rel_width(rel_width: Any) -> float:
    """Validated requested relative width: a finite number in (0, 1) (None: the default).

    Raises:
        ValueError: naming ``rel_width`` otherwise.
    """
    if rel_width is None:
        return DEFAULT_REL_WIDTH
    if isinstance(rel_width, bool):
        raise ValueError(f"rel_width must be a number in (0, 1), got {rel_width!r}")
    try:
        r = float(rel_width)
    except (TypeError, ValueError):
        raise ValueError(f"rel_width must be a number in (0, 1), got {rel_width!r}") from None
    if not (0.0 < r < 1.0):
        raise ValueError(f"rel_width must be a number in (0, 1), got {rel_width!r}")
    return r


# ---------------------------------------------------------------------------------------------
# one resolution


@bounded_cache(256)
def _term_points(step: Any, total: int, res: Resolution, bits: int, sigma_m: float,
                 initial: int = 6, prec: int | None = None, tail: tuple | None = None):
    """(rough std, unit, points, curve values, tails or None) of one term's single step
    (section A of :mod:`certify.lattice_adaptive`); shared by its upper and lower ends (the
    tails where the step evaluates them with the curve at no extra cost). ``initial``: the
    chord test's starting grid, ``tail`` its ``(tail_z, tail_mass)`` (None: the defaults)
    (:func:`certify.lattice_adaptive.adaptive_points`)."""
    s1 = step.rough_std()
    unit = unit_below(s1 / res.single)
    tau = s1 / (20.0 * res.single**2)
    tails = {} if step.shared_tails else None
    prec = evaluation_precision(1, bits) if prec is None else prec
    idx, values = adaptive_points(step, total, unit, tau, prec, sigma_m,
                                  float(res.single) ** 2, tails, initial, *(tail or ()),
                                  memo=evaluation_memo(step, prec, tails is not None))
    return s1, unit, idx, values, tails


@bounded_cache(64)
def _term_upper(step: Any, count: int, total: int, res: Resolution, bits: int, direction: str,
                sigma_m: float, tail_mass: float = 0.0, prec: int | None = None):
    """(upper block, evaluations) of one term composed ``count`` times, in a composition whose
    loss has rough standard deviation ``sigma_m`` (it places the points: section A); ``prec``:
    the Arb precision of the single-step evaluations (None: ``DEFAULT_PRECISION + bits``)."""
    s1, unit, idx, values, _ = _term_points(step, total, res, bits, sigma_m, 6, prec,
                                            one_term_tail(tail_mass))
    if SPLIT_TAILS:  # fine core + coarse tails (certify.lattice_split, where the proof is)
        base = leaf_upper(step, idx, values, unit, bits, direction, tail_mass,
                          ONE_TERM_TAIL_RATIO, lattice_split.MIN_SPAN)
        return power(base, count, s1, res.composed, split_ops(tail_mass)), len(idx)
    base = adaptive_upper(step, idx, values, unit, bits, direction)
    return power(base, count, s1, res.composed, UPPER_OPS), len(idx)


@bounded_cache(64)
def _term_lower(step: Any, count: int, total: int, res: Resolution, bits: int, direction: str,
                sigma_m: float, tail_mass: float = 0.0, prec: int | None = None):
    """(lower block, evaluations) of one term composed ``count`` times (``prec``: as for
    :func:`_term_upper`)."""
    s1, unit, idx, _, tails = _term_points(step, total, res, bits, sigma_m, 6, prec,
                                            one_term_tail(tail_mass))
    if SPLIT_TAILS:  # fine core + coarse tails (certify.lattice_split_lower, the proof)
        base = leaf_lower(step, idx, unit, bits, direction, tails, tail_mass,
                          ONE_TERM_TAIL_RATIO, lattice_split.MIN_SPAN)
        ops = split_lower_ops(ONE_TERM_TAIL_RATIO, tail_mass)
        return power(base, count, s1, res.composed, ops), 2 * len(idx)
    base = adaptive_lower(step, idx, unit, bits, 1, direction, tails)
    return power(base, count, s1, res.composed, LOWER_OPS), 2 * len(idx)


def _law(comp: Composition, res: Resolution, bits: int, direction: str, lower: bool,
         tail_mass: float = 0.0, prec: int | None = None):
    """One term: the composed upper (or lower) block of one pair order by binary powering
    (:func:`certify.lattice_adaptive.power`), and the evaluations it took."""
    terms, total = lattice_terms(comp, direction)
    sigma_m = math.sqrt(sum(c * st.rough_std() ** 2 for st, c in terms))
    (step, count), = terms
    build = _term_lower if lower else _term_upper
    return build(step, count, total, res, bits, direction, sigma_m, tail_mass, prec)


def _law_multi(comp: Composition, res: Resolution, bits: int, direction: str, upper: bool,
               lower: bool, tail_mass: float = 0.0, prec: int | None = None
               ) -> tuple[Any, Any, int]:
    """Several terms: (upper block or None, lower block or None, evaluations) of one pair
    order, one multi-exponentiation of the single-step blocks per end
    (:class:`certify.lattice_hetero.MultiPower`, where the proof is), built term by term in one
    pass (each term's points serve both ends; the blocks are not kept: dense, and many). The
    blocks are fine-core / coarse-tail laws split per end at ``hetero_tail_mass(tail_mass)``
    (one-term mass ``tail_mass``; proof at :data:`certify.lattice_hetero.HETERO_SPLIT_TAILS`)."""
    terms, total = lattice_terms(comp, direction)
    sigma_m = math.sqrt(sum(c * st.rough_std() ** 2 for st, c in terms))
    terms = sorted(terms, key=lambda t: t[0].rough_std())
    counts = [c for _, c in terms]
    var, ratio = [st.rough_std() ** 2 for st, _ in terms], lattice_hetero.HETERO_TAIL_RATIO
    prec = evaluation_precision(len(terms), bits) if prec is None else prec
    points = (hetero_initial(len(terms), res.single), prec,
              lattice_hetero.hetero_tail_test(tail_mass))  # _term_points' last arguments
    tail_mass = lattice_hetero.hetero_tail_mass(tail_mass)  # from here: the split mass
    up_ops, low_ops = hetero_ops(tail_mass, ratio)
    up = MultiPower(counts, var, res.composed, up_ops) if upper else None
    low = MultiPower(counts, var, res.composed, low_ops) if lower else None
    split = up_ops is not UPPER_OPS
    evals, leaf = 0, {"tail_mass": tail_mass, "ratio": ratio, "prec": prec}  # split leaves
    for step, _ in terms:
        check_deadline("in the lattice terms")
        _, unit, idx, values, tails = _term_points(step, total, res, bits, sigma_m, *points)
        lattice_memory.check_block_memory(step, idx, res)
        evals += len(idx)  # cached or not: the work measure must not depend on the caches
        if up is not None:
            up.push(leaf_upper(step, idx, values, unit, bits, direction, **leaf) if split
                    else adaptive_upper(step, idx, values, unit, bits, direction))
        if low is not None:
            low.push(leaf_lower(step, idx, unit, bits, direction, tails, **leaf) if split
                     else adaptive_lower(step, idx, unit, bits, 1, direction, tails))
            evals += 0 if tails is not None else 2 * len(idx)
    return (None if up is None else up.result(), None if low is None else low.result(), evals)


def _laws(comp: Composition, res: Resolution, bits: int, pick, skip=None, first=None,
          tail_mass: float = 0.0, prec: int | None = None) -> tuple[dict, dict, int]:
    """Upper blocks in every pair order (``first`` first) except those ``skip(d, ups)`` drops;
    the lower block only in the order ``pick(ups)`` chooses (any single order's test is a
    valid lower bound of the max over orders). Several terms: the first order's lower block is
    built in the same pass as its upper block, and kept if that order is picked."""
    ups, lows, evals = {}, {}, 0
    several = len(comp.terms) > 1
    order = sorted(comp.directions, key=lambda d: d != first)
    for d in order:
        if skip is not None and ups and skip(d, ups):
            continue
        if several:
            ups[d], low, n = _law_multi(comp, res, bits, d, True, not ups, tail_mass, prec)
            if low is not None:
                lows[d] = low
        else:
            ups[d], n = _law(comp, res, bits, d, False, tail_mass, prec)
        evals += n
    d = pick(ups)
    if d not in lows:
        if several:
            _, lows[d], n = _law_multi(comp, res, bits, d, False, True, tail_mass, prec)
        else:
            lows[d], n = _law(comp, res, bits, d, True, tail_mass, prec)
        evals += n
    return ups, {d: lows[d]}, evals


A_HETERO = (
    "several terms: one multi-exponentiation of the single-step blocks in any order of products "
    "and re-discretizations, the lower end's tilted P side renormalized with its tilt recorded "
    "(proof in certify.lattice_hetero)"
)


def _assumptions(comp: Composition) -> tuple[str, ...]:
    more = (A_HETERO,) if len(comp.terms) > 1 else ()
    return (A_TARGET, *more, *step_assumptions(comp), A_LOWER)


def _details(ups: dict, lows: dict, res: Resolution) -> dict[str, Any]:
    return {
        "resolution": {"single": res.single, "composed": res.composed},
        "h": {k: v.h for k, v in ups.items()},
        "h_lower": {k: v.h for k, v in lows.items()},
        "bits": next(iter(ups.values())).bits,
        "count": next(iter(ups.values())).count,
        "single_step_points": {k: v.points for k, v in ups.items()},
        "composed_points": {k: v.composed_length() for k, v in ups.items()},
        "rounding_budget": {k: v.rounding_budget() for k, v in ups.items()},
        "lower_q_mass_lost": {k: v.q_mass_lost() for k, v in lows.items()},
    }


def _method(ups: dict, direction: str) -> str:
    return f"lattice[h={ups[direction].h!r}]"


def _delta_once(comp: Composition, e: arb, res: Resolution, bits: int,
                carry: dict | None = None, prec: int | None = None) -> tuple[Bound, int]:
    r"""One resolution of a delta query. ``carry``: each order's certified
    delta upper end from the coarser levels (an exact ball at the upper end); an order whose
    earlier upper end lies strictly below this level's upper end of another order is not
    recomputed and its earlier value is used. Sound as for :func:`_epsilon_once`: delta of the
    composition is the max over the orders of their delta, and each earlier value is a
    certified upper end of its order's delta (so the max over the orders is this level's)."""
    e_lo = arb(e.lower()) if not e.is_exact() else e
    per_up = {}
    old = carry if carry is not None else {}

    def pick(ups: dict) -> str:
        with workprec(DEFAULT_PRECISION):
            per_up.update({d: lat.delta_upper(e_lo) for d, lat in ups.items() if d not in per_up})
        return max(per_up, key=lambda k: per_up[k].upper())

    def skip(d: str, ups: dict) -> bool:
        pick(ups)
        top = max(arb(v.upper()) for v in per_up.values())
        if old.get(d) is None or not old[d] < top:
            return False
        per_up[d] = old[d]
        return True

    ups, lows, evals = _laws(comp, res, bits, pick, skip if carry is not None else None,
                             old.get("win"), tail_mass_for(None), prec)
    if carry is not None:
        carry.update({d: arb(v.upper()) for d, v in per_up.items() if d in ups})
        carry["win"] = max(per_up, key=lambda k: per_up[k].upper())
        _mark_computed(carry, ups, res)
    with workprec(DEFAULT_PRECISION):
        win = max(per_up, key=lambda k: per_up[k].upper())
        _, hi = endpoints(arb(per_up[win].upper()))
        per_lo = {d: lows[d].delta_lower(e)[0] for d in lows}
        wl = max(per_lo, key=lambda k: per_lo[k].lower())
        lo_b = arb(per_lo[wl].lower())
    if hi.to_mpf() > 1:
        hi = Endpoint(1, 0)
    lo = endpoints(lo_b)[0] if lo_b > 0 else Endpoint(0, 0)
    inputs = _details(ups, lows, res)
    inputs["per_direction"] = {k: float(v.mid()) for k, v in per_up.items()}
    _note_carried(inputs, old, ups)
    inputs["per_direction_lower"] = {k: float(v.mid()) for k, v in per_lo.items()}
    lm = f"lattice-test[h={lows[wl].h!r}]" if lo_b > 0 else "trivial"
    return Bound("delta", lo, hi, lm, _method(ups, win), DEFAULT_PRECISION, _assumptions(comp),
                 win, (), inputs), evals


def _mark_computed(carry: dict, ups: dict, res: Resolution) -> None:
    """Record in ``carry`` the resolution each order of ``ups`` was last computed at."""
    carry.setdefault("res", {}).update({d: (res.single, res.composed) for d in ups})


def _note_carried(inputs: dict, carry: dict, ups: dict) -> None:
    """Provenance of the orders not recomputed at this level: ``inputs["carried_orders"]``
    maps each to the resolution its carried upper end was computed at."""
    done = carry.get("res", {})
    kept = {d: done[d] for d in inputs["per_direction"] if d not in ups and d in done}
    if kept:
        inputs["carried_orders"] = kept


def _epsilon_once(comp: Composition, target: arb, res: Resolution, bits: int,
                  carry: dict | None = None, prec: int | None = None) -> tuple[Bound, int]:
    r"""One resolution. ``carry`` holds each order's certified eps upper end from the coarser
    levels: an order whose earlier upper end lies strictly below this level's upper end of
    another order is not recomputed, and its earlier value is used (``inputs["carried_orders"]``
    names it and the resolution it was computed at). That is sound: the eps of the composition
    is the max over the orders of their eps, each earlier value is a certified upper end of its
    order's eps, and the max is then this level's. The upper end is never above the one
    computing every order here gives (that max includes this level's winning order), and equal
    to it unless a finer level worsens the skipped order's own upper end. For DP-SGD the order
    Q||P, far below P||Q, is then computed at the coarsest level only: one of the three composed
    laws of every finer level (one term: 15-30% of a query's CPU, measured 2026-12-02).

    *Lazy orders* (several terms only): when an order's carried upper end is not below, and it
    lay below the winning order's (:func:`certify.lattice_hetero_ladder.has_margin`: not so for
    symmetric pairs such as the Gaussian, whose two orders are one law), that order is first
    recomputed (upper end only) at the cheaper level ``HETERO_LAZY_STEP`` above the one it was
    last computed at (if that is below this level), its carried value replaced by the smaller
    of the two (both are certified upper ends of that order's eps, so their minimum is), and
    the skip test repeated; only if it still fails is the order computed here. 1000 noise
    levels: the coarsest Q||P upper end (17.99) lay above the (32, 64) P||Q upper end (17.88),
    so the fine level computed both orders (595 350 evaluations); the lazy Q||P at (4, 8) gives
    17.28 and is skipped."""
    per: dict = {}
    old = carry if carry is not None else {}
    here = LEVELS.index(res) if res in LEVELS else None
    lazy_evals = [0]
    lazy_at: dict = {}

    def lazy(d: str) -> None:
        if len(comp.terms) == 1:  # a several-term policy: its work is in that ladder's model
            return  # (lattice_hetero_ladder.next_orders); one term's model does not count it
        at = old.setdefault("at", {})
        k = None if here is None or d not in at else min(at[d] + HETERO_LAZY_STEP, here - 1)
        if k is None or k <= at[d] or not has_margin(old, d):
            return
        lat, _, n = _law_multi(comp, LEVELS[k], bits, d, True, False,
                               tail_mass_for(float(target.upper())), prec)
        lazy_evals[0] += n
        at[d] = k
        lazy_at[d] = (LEVELS[k].single, LEVELS[k].composed)
        v = epsilon_upper(lat, target)
        if v is not None and (old.get(d) is None or v < old[d]):
            old[d] = v
            old.setdefault("res", {})[d] = lazy_at[d]

    def pick(ups: dict) -> str:
        per.update({d: epsilon_upper(lat, target) for d, lat in ups.items() if d not in per})
        return max(per, key=lambda k: math.inf if per[k] is None else per[k])

    def skip(d: str, ups: dict) -> bool:
        for k, lat in ups.items():
            if k not in per:
                per[k] = epsilon_upper(lat, target)
        done = [v for v in per.values() if v is not None]
        if not done:
            return False
        if old.get(d) is None or not old[d] < max(done):
            lazy(d)
        if old.get(d) is None or not old[d] < max(done):
            return False
        per[d] = old[d]
        return True

    ups, lows, evals = _laws(comp, res, bits, pick, skip if carry is not None else None,
                             old.get("win"), tail_mass_for(float(target.upper())), prec)
    evals += lazy_evals[0]
    if carry is not None:
        carry.update({d: v for d, v in per.items() if d in ups})
        carry.setdefault("at", {}).update({d: here for d in ups if here is not None})
        _mark_computed(carry, ups, res)
        carry["win"] = max(per, key=lambda k: math.inf if per[k] is None else per[k])
    per_lo = {d: epsilon_lower(lows[d], target) for d in lows}
    wl = max(per_lo, key=lambda k: per_lo[k])
    lo = endpoints(arb(per_lo[wl]))[0]
    inputs = _details(ups, lows, res)
    inputs["per_direction"] = per
    _note_carried(inputs, old, ups)
    inputs["per_direction_lower"] = per_lo
    if lazy_at:
        inputs["lazy_orders"] = lazy_at
    lm = f"lattice-test[h={lows[wl].h!r}]" if per_lo[wl] > 0 else "trivial"
    if any(v is None for v in per.values()):
        win = next(d for d, v in per.items() if v is None)
        return Bound("epsilon", lo, Endpoint(inf=1), lm, _method(ups, win), DEFAULT_PRECISION,
                     _assumptions(comp), win,
                     ("vacuous: the lattice mass at infinity exceeds delta",), inputs), evals
    win = max(per, key=lambda k: (per[k], k in ups))
    _, hi = endpoints(arb(per[win]))
    if lo.to_mpf() > hi.to_mpf():  # impossible unless a bug
        raise ArithmeticError("lattice: lower end above upper end")
    return Bound("epsilon", lo, hi, lm, _method(ups, win), DEFAULT_PRECISION, _assumptions(comp),
                 win, (), inputs), evals


# ---------------------------------------------------------------------------------------------
# the refinement loop


def _wide(b: Bound, rel: float) -> bool:
    if not (b.lower.is_finite and b.upper.is_finite):
        return True
    width = b.upper_mpf - b.lower_mpf
    return bool(width > rel * _scale(b))


def _scale(b: Bound) -> Any:
    """What the width is relative to: |upper|, at least 0.01 for an epsilon (so eps below 0.01
    has an absolute target); a delta is always relative."""
    if b.quantity == "epsilon":
        return max(abs(b.upper_mpf), _ABS_FLOOR)
    return abs(b.upper_mpf)


def _next_level(i: int, best: Bound, rel: float, evals: float, spent: int, afford: float,
                memory=None, several: bool = False, orders: float = 1.0,
                lazy: tuple[int, ...] = (), n_terms: int = 2,
                history: tuple[tuple, ...] = ()) -> tuple[int | None, str | None]:
    """The next resolution to try after level i, or (None, why not). The width shrinks about
    2-fold per level (second order in the grid, one of the two resolutions doubled), so the
    level predicted to reach the target is tried directly (at most 6 levels up), or the finest
    the work budget and the memory budget (``memory(j)``: estimated MiB of level j) afford.
    ``several`` (a composition of several terms): the width and cost models and the jump cap
    of :data:`HETERO_WIDTH_PER_LEVEL`, :data:`HETERO_COST_OFFSET` and :data:`HETERO_MAX_JUMP` (one
    term: unchanged). Several terms: ``evals`` is the work of one pair order at level i, and
    :func:`certify.lattice_hetero_ladder.several_cost` predicts level j (``orders`` pair orders
    in full, one lazy order per entry of ``lazy``, for ``n_terms`` terms). One term: the
    factors measured on the ``history`` of finished levels (:func:`lattice_jump.one_term_model`)."""
    if i + 1 == len(LEVELS):
        return None, "the finest resolution was reached"
    per_level, cap, slack, growth = (
        (HETERO_WIDTH_PER_LEVEL, HETERO_MAX_JUMP, 0.0, _COST_PER_LEVEL) if several else
        lattice_jump.one_term_model(history, _WIDTH_PER_LEVEL, 6, _COST_PER_LEVEL))
    x = _levels_to_target(best, rel, per_level)
    jump = (min(cap, max(1, math.ceil(x - (slack if x >= lattice_jump.LONG_JUMP else 0.0))))
            if math.isfinite(x) else 1)

    def cost(j: int) -> float:
        if several:
            return several_cost([lv.single for lv in LEVELS], i, j, evals, orders, lazy,
                                n_terms)
        return evals * growth ** (j - i)

    want = min(i + jump, len(LEVELS) - 1)
    for j in range(want, i, -1):
        if spent + cost(j) > afford:
            continue
        if memory is None or memory(j) <= lattice_memory.MEMORY_BUDGET_MIB:
            return j, None
        if j == i + 1:
            cap = lattice_memory.MEMORY_BUDGET_MIB
            return None, (f"the memory budget of {cap:.0f} MiB affords no finer grid (the next "
                          f"resolution needs about {memory(j):.0f} MiB)")
    s = math.ceil((spent + (need := cost(i + 1))) / EVALS_PER_SECOND)  # the budget it needs
    return None, (f"the time budget affords no finer grid (the next resolution needs ~{need:.0f}"
                  f" more single-step evaluations, {afford:.0f} are allowed; a time budget of "
                  f"about {s} s would allow it: time_budget=, --time-budget)")


def _levels_to_target(best: Bound, rel: float, per_level: float) -> float:
    """How many levels above the last one the target needs if the width falls ``per_level``
    times per level (+inf without finite ends and a positive upper end)."""
    if not (best.upper.is_finite and best.lower.is_finite and best.upper_mpf > 0):
        return math.inf
    ratio = float((best.upper_mpf - best.lower_mpf) / (rel * _scale(best)))
    return math.log(max(ratio, 1.0), per_level)


def _is_probe(i: int, nxt: int, best: Bound, rel: float, evals: float, spent: float,
              afford: float, memory, history: list[tuple]) -> bool:
    """Whether the one-term ladder's next level ``nxt`` is a probe: predicted (model of
    :func:`_next_level`, finite width) more than ``PROBE_MARGIN`` levels short of the target,
    the budgets affording the level after it (else it may be the answer: ``level_bits``)."""
    per_level, _, _, growth = lattice_jump.one_term_model(tuple(history), _WIDTH_PER_LEVEL, 6,
                                                          _COST_PER_LEVEL)
    need = _levels_to_target(best, rel, per_level)
    if not (math.isfinite(need) and nxt - i < need - lattice_jump.PROBE_MARGIN):
        return False
    after = min(nxt + 1, len(LEVELS) - 1)
    cost = evals * (growth ** (nxt - i) + growth ** (after - i))
    return after > nxt and spent + cost <= afford and (
        memory(after) <= lattice_memory.MEMORY_BUDGET_MIB)


def _probe_drop(once, x: arb, first: Bound) -> int:
    """The bits probe levels may drop (:func:`certify.lattice_jump.probe_drop`): the first
    level's largest rounding budget or lost Q-mass against the query's delta (a delta query's:
    its first upper end)."""
    found = [*first.inputs.get("rounding_budget", {}).values(),
             *first.inputs.get("lower_q_mass_lost", {}).values()]
    if once is _epsilon_once:
        scale = float(x.mid())
    else:
        scale = float(first.upper_mpf) if first.upper.is_finite else 0.0
    return lattice_jump.probe_drop(max(found), scale) if found else 0


def _refine(once, comp: Composition, x: arb, rel_width: Any, bits: int | None) -> Bound:
    rel = check_rel_width(rel_width)
    _, b = check_params(None, bits)
    deadline = current_deadline()
    afford = (deadline.seconds * EVALS_PER_SECOND if deadline is not None
              else DEFAULT_EVALUATIONS)
    t0 = time.perf_counter()
    lattice_memory.check_memory(comp, LEVELS[0])

    def memory(j: int) -> float:
        return lattice_memory.level_memory_mib(comp, LEVELS[j])

    best, spent, why, i = None, 0, None, 0
    history: list[tuple] = []  # (level, own relative width, evaluations) of finished levels
    probe, drop = False, 0  # a level predicted short of the target; the bits it may drop
    probed: list[tuple] = []
    # the upper ends of the pair orders carried from level to level (an order whose carried
    # upper end is below another's at this level is not recomputed: _epsilon_once)
    extra: dict[str, Any] = {"carry": {}}
    # one Arb precision on every level (evaluation_memo), whatever the level's bits
    extra["prec"] = evaluation_precision(len(comp.terms), b)
    for _ in range(len(LEVELS)):
        res = LEVELS[i]
        level_bits = (lattice_jump.probe_bits if probe else lattice_jump.level_bits)(b, drop)
        if probe:
            probed.append((res.single, res.composed, level_bits))
        try:
            out, evals = once(comp, x, res, level_bits, **extra)
        except BudgetExceeded as exc:
            if best is None:
                raise
            which = "memory" if "memory budget" in str(exc) else "time"
            why = (f"the {which} budget affords no finer grid (at resolution "
                   f"{res.single}: {exc})")
            break
        spent += evals
        if out.upper.is_finite and out.lower.is_finite and out.upper_mpf > 0:
            history.append((i, float((out.upper_mpf - out.lower_mpf) / _scale(out)), evals))
        if best is None:
            best = out
            if lattice_jump.PROBE_BIT_DROP > 0:  # several terms: level_bits only, no probes
                drop = _probe_drop(once, x, out)
        else:
            merged = best.intersect(out)
            best = Bound(merged.quantity, merged.lower, merged.upper, merged.lower_method,
                         merged.upper_method, merged.precision, out.assumptions,
                         merged.direction, out.warnings, out.inputs)
        if not _wide(best, rel):
            break
        if len(comp.terms) > 1 and once is _epsilon_once:
            n = len(comp.terms)
            lower = best.lower_mpf if best.lower.is_finite else -math.inf
            per_order, orders, lazy = next_orders(len(out.inputs.get("h", {})), evals, lower,
                                                  extra["carry"],
                                                  hetero_initial(n, res.single) != HETERO_INITIAL)
            nxt, why = _next_level(i, best, rel, per_order, spent, afford, memory, True, orders,
                                   lazy, n)
        else:
            nxt, why = _next_level(i, best, rel, evals, spent, afford, memory,
                                   len(comp.terms) > 1, history=tuple(history))
            if nxt is not None and lattice_jump.PROBE_BIT_DROP > 0 and len(comp.terms) == 1:
                probe = _is_probe(i, nxt, best, rel, evals, spent, afford, memory, history)
        if nxt is None:
            break
        i = nxt
    inputs = dict(best.inputs)
    if probed:  # (single, composed, bits) of the probe levels; "bits" is the last level's
        inputs["probe_levels"] = probed
    inputs.update({"rel_width_target": rel, "seconds": time.perf_counter() - t0,
                   "single_step_evaluations": spent, "work_budget_evaluations": afford})
    warnings = best.warnings
    if why is not None and _wide(best, rel):
        width = (float((best.upper_mpf - best.lower_mpf) / max(abs(best.upper_mpf), 1e-300))
                 if best.upper.is_finite else math.inf)
        warnings = (*warnings, f"lattice: relative width {width:.3g} above the target "
                    f"{rel:g}: {why}")
    return Bound(best.quantity, best.lower, best.upper, best.lower_method, best.upper_method,
                 best.precision, best.assumptions, best.direction, warnings, inputs)


def target_delta_interval(composition: Any, eps: Any, *, rel_width: Any = None,
                          bits: int | None = None) -> Bound:
    r"""Certified enclosure of delta(eps) from the lattice, refined to ``rel_width``.

    Args:
        composition: Anything :func:`numeric.composition.compose` accepts, every term with a
            lattice step.
        eps: eps >= 0 (float taken exactly, int, decimal string or Arb ball).
        rel_width: Requested relative width (default :data:`DEFAULT_REL_WIDTH`).
        bits: Fixed-point bits (default 80).

    Returns:
        A ``Bound`` (lower end from the binned test, upper end from the dominating lattice).

    Raises:
        NotApplicable: when the method does not apply (BudgetExceeded if not even the coarsest
            level finishes within an active time budget).
        ValueError: on bad input.
    """
    comp = compose(composition)
    e = to_arb("eps", eps)
    if e < 0:
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    out = _refine(_delta_once, comp, e, rel_width, bits)
    out.inputs["eps"] = str(eps)
    return out


def target_epsilon_interval(composition: Any, delta: Any, *, rel_width: Any = None,
                            bits: int | None = None) -> Bound:
    r"""Certified enclosure of eps(delta) from the lattice, refined to ``rel_width``.

    Args:
        composition: Anything :func:`numeric.composition.compose` accepts, every term with a
            lattice step.
        delta: Target delta in (0, 1).
        rel_width: Requested relative width (default :data:`DEFAULT_REL_WIDTH`).
        bits: Fixed-point bits (default: ``epsilon_query_bits(delta)``, 56 to 80).

    Returns:
        A ``Bound`` with ``quantity="epsilon"`` (+inf, vacuous, when the lattice mass at
        infinity alone exceeds delta).

    Raises:
        NotApplicable: when the method does not apply (BudgetExceeded if not even the coarsest
            level finishes within an active time budget).
        ValueError: on a delta outside (0, 1).
    """
    comp = compose(composition)
    target = to_arb("delta", delta)
    if not (target > 0 and target < 1):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    if bits is None:  # the fixed point the delta needs (tightness only); a delta that is not
        d = float(target.mid())  # a float in (0, 1) (1e-400, 1 - 1e-20) gets the default
        bits = epsilon_query_bits(d) if 0.0 < d < 1.0 else None
    out = _refine(_epsilon_once, comp, target, rel_width, bits)
    out.inputs["delta"] = str(delta)
    return out
