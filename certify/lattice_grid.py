r"""The grid of the lattice method: range, spacing, fixed-point helpers, caches and cost.

Shared by the upper bound (:mod:`certify.lattice`) and the lower bound
(:mod:`certify.lattice_lower`); the proofs are in the docstring of :mod:`certify.lattice`.

* **Range** (Lemma 2 of :mod:`certify.lattice`): per step, a grid window [lo, hi] with
  certified gap(lo) <= tol and excess(hi) <= tol, :math:`tol = 2^{-72}/m` (the chord arguments
  of Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, *Connect the Dots*, PETS 2022), found by the
  shared search of :mod:`certify.search` on exact dyadic points.
* **Spacing** (:func:`default_grid`): :math:`2^{-12}` unless the single-step or composed grids
  would exceed their size caps.
* **Fixed point**: masses are integers in units of :math:`2^{-B}`; dyadic endpoints are rounded
  up (:func:`ceil_dyadic`) or down (:func:`floor_dyadic`), tails summed exactly
  (:func:`sum_above`, :func:`sum_below`) and products truncated at :func:`cut_points`
  (Lemma 3: only in the safe direction).
* **Cost** (:func:`check_lattice_budget`): inside a :func:`certify.budget.time_budget` block the
  lattice refuses up front (:class:`numeric.errors.BudgetExceeded`) when the single-step grids it
  still has to evaluate would take longer than the time left, at a per-point cost timed on the
  spot; the loops also check the deadline between squarings, convolutions and grid steps.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache, wraps
from typing import Any

from flint import arb, fmpz_poly

from numeric.composition import Composition, compose
from numeric.errors import BudgetExceeded, NotApplicable
from numeric.mechanisms.base import DIRECTION_PQ

from .budget import check_deadline, current_deadline, remaining, require
from .engine import DEFAULT_PRECISION, Endpoint, workprec
from .intpoly import ceil_div_pow2, floor_div_pow2, plus_one_each
from .lattice_steps import lattice_step
from .search import bisect, expand
from .steps import LatticeStep

__all__ = [
    "DEFAULT_BITS",
    "EPS_QUERY_BIT_MARGIN",
    "EPS_QUERY_MIN_BITS",
    "TRUNC_BITS",
    "bounded_cache",
    "ceil_dyadic",
    "check_lattice_budget",
    "check_params",
    "coarse_to_fine",
    "cut_points",
    "cut_rescale",
    "cut_sums",
    "default_grid",
    "epsilon_query_bits",
    "floor_dyadic",
    "fold",
    "grid_points",
    "grid_range",
    "keeps_ceiling",
    "lattice_terms",
    "mul_cut_rescale",
    "single_step_delta",
    "sum_above",
    "sum_below",
]

DEFAULT_BITS = 80
"""Fixed-point bits B: masses are integers in units of 2^-B."""

TRUNC_BITS = 64
"""Per product, at most 2^-64 of mass is truncated at each end."""

EPS_QUERY_BIT_MARGIN = 47
"""Bits above log2(1/delta) that :func:`epsilon_query_bits` gives an eps query."""
EPS_QUERY_MIN_BITS = 56
"""The fewest fixed-point bits :func:`epsilon_query_bits` chooses."""


def epsilon_query_bits(delta: float) -> int:
    r"""Fixed-point bits B for an eps(delta) query of the refined lattice when none are given:
    :math:`\lceil \log_2(1/\delta) \rceil + 47`, within [56, :data:`DEFAULT_BITS`].

    Every product rounds each of its N coefficients by less than one unit :math:`2^{-B}` and
    cuts at most :math:`2^{-B}` per end, so P products move at most about
    :math:`P N 2^{-B} \le 2^{24 - B}` of mass (N <= ~1e5, P <= ~100), and the cut masses
    double with each later squaring (:math:`2^{-B} m`, m <= 2^{23}); a margin of
    :math:`2^{47}` below delta keeps that ~1e-7 of delta, far below a 1e-4 width. The choice
    only sets precision, never soundness: every rounding is directed whatever B is. Measured
    (widths of whole queries, CPU s on a contended 2-core machine): delta 1e-5 at B = 64 (the
    formula's) gave the same widths as B = 80 (rate 0.01, sigma 0.8, m = 1e3: 5.91e-5 vs
    5.95e-5; rate 0.001, sigma 0.8, m = 1e4: 6.47e-5 vs 6.45e-5) in 0.5-0.8x the time, while B =
    60 began to widen (6.72e-5); delta 1e-10 (B = 80) at B = 72 took an extra level at rate
    0.001 (8.06 s vs 4.06 s) and at B = 64 missed the target after 69 s. After the first level
    the one-term refinement may run the answer's level at 60 bits
    (:func:`certify.lattice_jump.level_bits`: one-word integers, measured 0.92x the CPU).

    Args:
        delta: The query's delta in (0, 1).

    Returns:
        An integer in [56, 80].

    Raises:
        ValueError: naming ``delta`` unless it lies in (0, 1) (NaN included).
    """
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    need = math.ceil(-math.log2(delta)) + EPS_QUERY_BIT_MARGIN
    return max(EPS_QUERY_MIN_BITS, min(DEFAULT_BITS, need))


_RANGE_BITS = 72  # per-step range error of Lemma 2 at most 2^-72 / m on each side
_N1_MAX = 60_000  # single-step grid points (Arb evaluations)
_N2_MAX = 500_000  # composed grid points (FLINT products)
_H_FINE = 2.0**-12  # default spacing when affordable (about 2.4e-4)
PRODUCT_SECONDS = 8e-7
"""Typical seconds per coefficient of the two factors of :func:`mul_cut_rescale` at up to 100
bits (FLINT product, exact cut sums and rescale; measured 0.42-0.94 us on the idle 2-core
machine for 1e3..1e6 coefficients at 64-120 bits), scaled by bits/100 above. Under a time
budget a product predicted to end after the deadline is refused before it starts (issue 12:
one product of 1e6 coefficients is ~1 s of C that cannot check the clock)."""
_PRODUCT_CHECK_POINTS = 1 << 15  # smaller products (< ~30 ms) only check the deadline after
_MAX_COUNT = 10**9
_TIMING_POINTS = 4  # evaluations timed per step kind for the cost estimate


def single_step_delta(mechanism: Any, eps: Any, direction: str = DIRECTION_PQ) -> arb:
    r"""Certified single-step hockey-stick :math:`\delta_1(\varepsilon)` (see
    :mod:`certify.lattice_steps`).

    Args:
        mechanism: A mechanism with a registered lattice step.
        eps: Any real (float taken exactly, or an ``arb``).
        direction: ``"P||Q"`` or ``"Q||P"``.

    Returns:
        An Arb ball at the current precision.

    Raises:
        NotApplicable: if the mechanism has no lattice step.
    """
    step = lattice_step(mechanism, direction)
    return step.delta(eps if isinstance(eps, arb) else arb(float(eps)))


# ---------------------------------------------------------------------------------------------
# grid range and spacing


_RANGE_STEPS = 12
"""Bisection steps refining each end of :func:`grid_range`: the end returned passes the test
and lies within 2^-12 of its doubling bracket (0.25 wide, or at most as wide as the end is far
from zero) of a point where the test fails. Any number of steps is sound; fewer only widen the
range a little. 30 until 2026-12-03: at 1000 noise levels the ends of 2000 single steps (two
pair orders) took about 140 000 evaluations at 128 bits, 4 s of an 8 s coarsest level, to pin
each end 2^-30 of its bracket, far below one lattice unit."""


def _search(pred: Callable[[arb], bool], start: float, outward: float) -> float:
    """A point x = start + k*outward (k >= 0, doubling) with pred(x) certified, then refined.

    ``pred`` is monotone: once true moving outward it stays true. Returns a point where it holds,
    refined by :data:`_RANGE_STEPS` bisection steps towards ``start`` (every returned point
    satisfies pred).
    """
    with workprec(DEFAULT_PRECISION):
        def holds(x: float) -> bool:
            return pred(arb(x))

        bad, good = expand(holds, start, outward, tries=80)
        if good is None:
            raise ArithmeticError("lattice: grid range search did not terminate")
        if holds(bad):
            return bad
        good = bisect(holds, bad, good, steps=_RANGE_STEPS)[1]
    return good


@lru_cache(maxsize=4096)  # two pair orders of up to 2000 distinct terms (1000 noise levels)
def grid_range(step: LatticeStep, count: int) -> tuple[float, float]:
    """[lo, hi] with gap(lo) <= tol and excess(hi) <= tol, tol = 2^-72 / count (certified)."""
    tol = arb(2.0**-_RANGE_BITS) / count

    def low_ok(e: arb) -> bool:
        return bool(step.gap(e).upper() <= tol)

    def high_ok(e: arb) -> bool:
        return bool(step.excess(e).upper() <= tol)

    lo = _search(low_ok, 0.0, -0.25) if not low_ok(arb(0)) else 0.0
    hi = _search(high_ok, 0.0, 0.25) if not high_ok(arb(0)) else 0.0
    if hi <= lo:
        hi = lo + 1.0
    return lo, hi


def lattice_terms(comp: Composition, direction: str
                  ) -> tuple[list[tuple[LatticeStep, int]], int]:
    """The lattice steps of the composition's terms in one pair order, and the total count.

    Raises:
        NotApplicable: for more than 1e9 steps or a term without a lattice step.
    """
    total = int(comp.total_count)
    if total > _MAX_COUNT:
        raise NotApplicable(f"lattice: does not apply to more than {_MAX_COUNT} steps")
    return [(lattice_step(mech, direction), int(c)) for mech, c in comp.terms], total


def default_grid(composition: Any, count: int | None = None,
                 direction: str = DIRECTION_PQ) -> float:
    r"""Default spacing h: :math:`2^{-12}` unless the grids would exceed their size caps.

    The largest single-step grid is kept below 60 000 points and the composed window (estimated
    as the sum of the single-step ranges plus 28 standard deviations of the composed PLLR, or the
    sum of count x range if smaller) below 500 000 points; h is rounded up to 8 significant bits
    (a short binary number).

    Args:
        composition: Anything :func:`numeric.composition.compose` accepts, or a mechanism
            together with ``count``.
        count: Number of steps when ``composition`` is a single mechanism.
        direction: ``"P||Q"`` or ``"Q||P"``.

    Returns:
        The spacing h (a binary64 number with 8 significant bits).
    """
    comp = compose(composition if count is None else [(composition, count)])
    terms, total = lattice_terms(comp, direction)
    ranges = [grid_range(step, total) for step, _ in terms]
    width1 = max(hi - lo for lo, hi in ranges)
    spread = sum(c * (hi - lo) for (_, c), (lo, hi) in zip(terms, ranges, strict=True))
    var = sum(c * step.rough_std() ** 2 for step, c in terms)
    window = sum(hi - lo for lo, hi in ranges) + 28.0 * math.sqrt(var)
    width2 = min(spread, window)
    h = max(_H_FINE, width1 / _N1_MAX, width2 / _N2_MAX)
    m, e = math.frexp(h)
    return math.ldexp(math.ceil(m * 256) / 256, e)


def check_params(h: float | None, bits: int | None) -> tuple[float | None, int]:
    """Validated (h, bits): h in (0, 1] or None, bits an integer in [24, 256] (default 80).

    Raises:
        ValueError: naming ``h`` or ``bits`` on bad values.
    """
    if h is not None:
        hf = float(h)
        if not (math.isfinite(hf) and 0.0 < hf <= 1.0):
            raise ValueError(f"grid spacing h must be in (0, 1], got {h!r}")
        h = hf
    b = DEFAULT_BITS if bits is None else bits
    if isinstance(b, bool) or not isinstance(b, int) or not 24 <= b <= 256:
        raise ValueError(f"bits must be an integer in [24, 256], got {bits!r}")
    return h, b


def _setup(composition: Any, direction: str, h: float | None, bits: int | None):
    """Validated (terms, total count, h, bits) shared by the upper and lower lattices."""
    comp = compose(composition)
    h, b = check_params(h, bits)
    terms, total = lattice_terms(comp, direction)
    if h is None:
        h = default_grid(comp, None, direction)
    for step, _ in terms:
        lo, hi = grid_range(step, total)
        if (hi - lo) / h > 4 * _N1_MAX:
            raise ValueError(f"lattice: grid spacing h = {h!r} needs more than {4 * _N1_MAX} "
                             "single-step points; use a larger h")
    return terms, total, h, b


def fold(build, combine, composition: Any, direction: str, h: float | None, bits: int | None):
    """Each term composed by ``build`` (cached), then the terms combined pairwise."""
    terms, total, h, b = _setup(composition, direction, h, bits)
    out = None
    for step, count in terms:
        check_deadline("in the lattice composition of the terms")
        part = build(step, count, h, b, direction, total)
        out = part if out is None else combine(out, part)
    return out


# ---------------------------------------------------------------------------------------------
# fixed point


def ceil_dyadic(e: Endpoint) -> int:
    """ceil(man * 2^exp) of a finite dyadic endpoint (ArithmeticError for an infinite one)."""
    if e.inf:
        raise ArithmeticError("an infinite endpoint has no integer ceiling")
    if e.exp >= 0:
        return e.man << e.exp
    return -((-e.man) >> (-e.exp))


def floor_dyadic(e: Endpoint) -> int:
    """floor(man * 2^exp) of a finite dyadic endpoint (ArithmeticError for an infinite one)."""
    if e.inf:
        raise ArithmeticError("an infinite endpoint has no integer floor")
    if e.exp >= 0:
        return e.man << e.exp
    return e.man >> (-e.exp)


def sum_above(p: fmpz_poly, k: int) -> int:
    """Sum of coefficients with index > k."""
    n = p.length()
    if k + 1 >= n:
        return 0
    return int(p.right_shift(k + 1)(1)) if k + 1 > 0 else int(p(1))


def sum_below(p: fmpz_poly, k: int) -> int:
    """Sum of coefficients with index < k."""
    if k <= 0:
        return 0
    return int(p.truncate(k)(1))


def cut_points(r: fmpz_poly, tau: int) -> tuple[int, int]:
    """(low, top): drop indices < low and > top, each side of mass <= tau."""
    low, top, _, _ = cut_sums(r, tau)
    return low, top


def cut_sums(r: fmpz_poly, tau: int) -> tuple[int, int, int, int]:
    r"""(low, top, sum above top, sum below low) of :func:`cut_points`.

    top is the smallest K in [0, n-1] with :math:`\sum_{j > K} r_j \le \tau` and low the largest
    L in [0, top] with :math:`\sum_{j < L} r_j \le \tau` (exact integer sums). The coefficients
    are non-negative, so both partial sums are monotone and each cut is the unique end of a
    bisection: every search that only compares exact partial sums with tau returns the same
    indices and sums. This one gallops in from each end first (windows of 1, 2, 4, ... end
    coefficients, until one holds more than tau), then bisects inside the last doubling with
    windows that halve: O(size of the cut) coefficient operations and copies instead of O(n) (the
    cuts are usually a small part of a product: issue 16, where the O(n) search was 14% of a
    rate-0.001 query).
    """
    n = r.length()
    # top: the largest count w of end coefficients (w <= n - 1) whose sum is <= tau; top = n-1-w
    good, above, bad = _gallop(lambda w: r.right_shift(n - w), n - 1, tau)
    lo, hi = n - 1 - bad, n - 1 - good  # hi feasible (sum above = above), lo not (or -1)
    if hi - lo > 1:
        w = r.right_shift(lo + 1).truncate(hi - lo)  # coefficients lo+1 .. hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            part = w.right_shift(mid - lo)  # coefficients mid+1 .. hi
            s = int(part(1)) if part.length() else 0
            if above + s <= tau:
                del part  # freed before the next copy (peak memory)
                hi, above, w = mid, above + s, w.truncate(mid - lo)
            else:
                lo, w = mid, part
    top = hi
    # low: the largest L in [0, top] with sum_{j < L} <= tau
    lo, below, hi = _gallop(lambda k: r.truncate(k), top, tau)
    if hi - lo > 1:
        w = r.right_shift(lo).truncate(hi - lo)  # coefficients lo .. hi-1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            part = w.truncate(mid - lo)  # coefficients lo .. mid-1
            s = int(part(1)) if part.length() else 0
            if below + s <= tau:
                del part
                w, lo, below = w.right_shift(mid - lo), mid, below + s
            else:
                hi, w = mid, part
    return lo, top, above, below


def _gallop(window, limit: int, tau: int) -> tuple[int, int, int]:
    """(good, its sum, bad) for a monotone window sum: ``window(k)`` holds the k coefficients
    counted from one end; good is the largest of 0, 1, 2, 4, ... <= limit whose sum is <= tau and
    bad the next one (its sum exceeds tau), or limit + 1 when every tried count fits."""
    good, total, k = 0, 0, 1
    while k <= limit:
        s = int(window(k)(1))
        if s > tau:
            return good, total, k
        good, total, k = k, s, 2 * k
    return good, total, limit + 1


def cut_rescale(prod: fmpz_poly, bits: int, up: bool, exact_ceiling: bool = False
                ) -> tuple[int, fmpz_poly, int, int]:
    r"""Truncate an exact product of two mass sequences, then rescale it by :math:`2^{-B}`.

    ``prod`` has units :math:`2^{-2B}`. The ends are cut on the **exact** coefficients: top =
    the smallest K with :math:`\sum_{j > K} c_j \le \tau 2^B` and low the largest L <= top with
    :math:`\sum_{j < L} c_j \le \tau 2^B`, :math:`\tau = 2^{B - 64}` (at most :math:`2^{-64}`
    of mass per end, Lemma 3 of :mod:`certify.lattice`); the kept coefficients low..top are
    rescaled coefficient-wise, down (a lower end's Q side) by the floor :math:`\lfloor c_j /
    2^B \rfloor`, up (an upper end, a lower end's tilted P side) by :math:`\lfloor c_j / 2^B
    \rfloor + 1 \ge \lceil c_j / 2^B \rceil` (equal unless :math:`2^B` divides :math:`c_j`),
    or, with ``exact_ceiling``, by the ceiling itself; the two cut masses are returned rescaled
    the same way (up: :math:`\lceil \sum / 2^B \rceil`, down: floor).

    Soundness: down, every kept mass and both cut masses only get smaller; up, every kept mass
    is at least its exact share, the mass above top (rounded up) goes to +infinity (an upper
    end, Lemma 3) or to the unlocated mass (a tilted P side, :mod:`certify.lattice_lower`) and
    the mass below low (rounded up) onto index low.

    Why floor + 1: a ceiling of a non-negative integer polynomial is an addition of
    :math:`2^B - 1` to every coefficient and a division, each allocating a multi-word integer
    per coefficient; the floor is the division alone, and it runs on the whole product before
    the cut so that the cut copies the shorter quotients; the unit added is a one-word addition
    (measured, one product and its rescaling: 52 -> 40 ms at B = 80, 80 000 coefficients; 21 ->
    16 ms at B = 60, 47 000 coefficients; issue 16). The two differ on the zero coefficients
    only, where floor + 1 adds a unit of mass that the ceiling does not: the first product of
    single-step laws is sparse (its factors' atoms sit at the adaptive points: 262 000 zeros
    among 632 000 kept coefficients at rate 0.001, sigma 0.5, m = 1e5), and a unit on each of
    those, composed m/2 more times, widened such queries by up to a quarter; callers ask for
    ``exact_ceiling`` there.

    Why exact sums for the cut: rescaling first turns every non-zero product coefficient below
    one unit into one full unit of rounding (:math:`2^{-B}`), so a support of n such "rounding
    dust" coefficients carries :math:`n 2^{-B}`, more than :math:`\tau` once n > 2^16, and the
    cut could never remove it: the support then doubled with every squaring (measured: 7000
    loss units and 2e5 coefficients at rate 0.001, sigma 0.8, m = 1e5, where the law needs a
    few hundred).

    Args:
        prod: Exact product (non-negative coefficients, units :math:`2^{-2B}`).
        bits: B.
        up: Round up (upper end, tilted P side) or down (Q side).
        exact_ceiling: Round the kept coefficients up by the ceiling (a product with a sparse
            factor), not by floor + 1.

    Returns:
        (low, kept, above, below): kept coefficients low..top rescaled (index 0 = low), and the
        rescaled masses above top and below low (units :math:`2^{-B}`).
    """
    return _cut_rescale([prod], bits, up, TRUNC_BITS, exact_ceiling)


def mul_cut_rescale(a: fmpz_poly, b: fmpz_poly, bits: int, up: bool,
                    trunc_bits: int = TRUNC_BITS, exact_ceiling: bool = False
                    ) -> tuple[int, fmpz_poly, int, int]:
    r""":func:`cut_rescale` of the exact product ``a * b``, the same numbers bit for bit, with
    the product owned here so that it is freed as soon as its kept part is copied (peak memory:
    at rate 0.001 the first squarings multiply single-step blocks of millions of coefficients,
    and the 2B-bit product and its copies dominated the process's peak, issue 16).

    Raises:
        BudgetExceeded: under a time budget, before a long product (over 2^15 coefficients)
            whose typical cost (:data:`PRODUCT_SECONDS`) exceeds the time left.

    ``trunc_bits``: at most :math:`2^{-\max(trunc\_bits, ...)}` of mass is cut per end (the cut
    is :math:`\tau = 2^{B + \max(0, B - trunc\_bits)}` in units :math:`2^{-2B}`; default
    :data:`TRUNC_BITS`, i.e. :math:`2^{-64}`; ``trunc_bits = B`` cuts at most :math:`2^{-B}`,
    for products of small sub-measures whose own mass is near :math:`2^{-64}`,
    :mod:`certify.lattice_split`). ``exact_ceiling``: as in :func:`cut_rescale`."""
    # (intpoly.square_sparse_tail, the exact square of a sparse single-step block by bands, is
    # 2-3x faster than a * a on such a block alone but made whole queries 8-15% slower in
    # paired runs, with 12-15% less peak memory: not used here; docs/lattice-speed.md)
    n = a.length() + b.length()
    if n > _PRODUCT_CHECK_POINTS:
        require(n * PRODUCT_SECONDS * max(1.0, bits / 100), f"a lattice product of {n} points")
    return _cut_rescale([a * b], bits, up, trunc_bits, exact_ceiling)


def keeps_ceiling(count_a: int, count_b: int) -> bool:
    """Whether the product of factors of these step counts rounds up by the exact ceiling
    (``exact_ceiling`` of :func:`cut_rescale`): when one factor is a single step, whose sparse
    atoms would each gain a unit on their zeros under floor + 1."""
    return count_a == 1 or count_b == 1


def _window(p: fmpz_poly, low: int, top: int) -> fmpz_poly:
    """Coefficients low..top of p (index 0 = low)."""
    if top + 1 < p.length():
        p = p.truncate(top + 1)
    return p.right_shift(low) if low > 0 else p


def _cut_rescale(box: list, bits: int, up: bool, trunc_bits: int = TRUNC_BITS,
                 exact_ceiling: bool = False) -> tuple[int, fmpz_poly, int, int]:
    """:func:`cut_rescale` on the product in ``box`` (taken out of it, so that the only
    reference left is local and each copy replaces the one before)."""
    prod = box.pop()
    tau = 1 << (bits + max(0, bits - trunc_bits))
    low, top, above, below = cut_sums(prod, tau)
    if up and exact_ceiling:
        kept = ceil_div_pow2(_window(prod, low, top), bits)
    else:  # the whole product first: the cut copies the shorter quotients
        kept = _window(floor_div_pow2(prod, bits), low, top)
        if up:  # floor + 1 >= ceiling on every kept coefficient
            kept = plus_one_each(kept, top + 1 - low)
    del prod
    if up:
        return low, kept, -((-above) >> bits), -((-below) >> bits)
    return low, kept, above >> bits, below >> bits


# ---------------------------------------------------------------------------------------------
# caches and cost


def bounded_cache(maxsize: int):
    """An LRU cache for positional arguments that can also tell whether a call is cached
    (``fn.cached(*args)``), which the cost estimate uses to skip finished work."""

    def decorate(fn):
        store: OrderedDict = OrderedDict()

        @wraps(fn)
        def wrapper(*args):
            if args in store:
                store.move_to_end(args)
                return store[args]
            value = fn(*args)
            store[args] = value
            if len(store) > maxsize:
                store.popitem(last=False)
            return value

        wrapper.cached = lambda *args: args in store
        wrapper.cache_clear = store.clear
        return wrapper

    return decorate


def _seconds_per_point(step: LatticeStep, lo: float, bits: int, lower: bool) -> float:
    """Time of one single-step evaluation (delta, or tails for the lower side), measured."""
    with workprec(DEFAULT_PRECISION + bits):
        t0 = time.perf_counter()
        for i in range(_TIMING_POINTS):
            x = arb(lo + 0.5 * i)
            try:
                step.tails(x) if lower else step.delta(x)
            except ArithmeticError:  # an undecidable comparison at a timing point: still timed
                pass
        return (time.perf_counter() - t0) / _TIMING_POINTS


COST_SAFETY = 1.6
"""The up-front estimate counts the single-step evaluations only (measured: ~70% of the whole
lattice time); the budget check multiplies it by this factor."""
COARSENINGS = 3
"""Grids up to 4^3 = 64 times coarser than the default are tried first under a time budget."""


POINTS_PER_SECOND = 12_000
"""Single-step grid points a time budget buys, for the deterministic grid choice of
:func:`coarse_to_fine` (measured on the 2-core reference machine: ~25 000 points/s for the
whole lattice of a subsampled Gaussian, Laplace a little faster; halved for safety)."""


def grid_points(composition: Any, h: float | None, builders: tuple[tuple[Any, bool], ...]) -> int:
    """Single-step grid points the lattice evaluates at spacing ``h`` (None: default), counting
    every term, pair order and builder, cached or not (so the count is deterministic)."""
    comp = compose(composition)
    points = 0
    for direction in comp.directions:
        terms, total = lattice_terms(comp, direction)
        h_d = default_grid(comp, None, direction) if h is None else h
        for step, _ in terms:
            lo, hi = grid_range(step, total)
            points += (math.ceil(hi / h_d) - math.floor(lo / h_d) + 1) * len(builders)
    return points


def coarse_to_fine(composition: Any, h: float | None, bits: int | None,
                   builders: tuple[tuple[Any, bool], ...], compute: Any) -> Any:
    """``compute(h)`` under the active time budget, on a grid the budget can afford.

    Without a budget, or with an explicit ``h``, this is :func:`check_lattice_budget` then
    ``compute(h)``. With a budget and the default grid, the target grid is the finest of the
    default and 4^k times coarser ones (k <= :data:`COARSENINGS`) whose point count fits
    ``seconds x`` :data:`POINTS_PER_SECOND`: a choice that depends on the composition and the
    budget only, never on machine load or caches, so the same query gives the same answer. The
    grids from the coarsest up to the target are computed in turn and intersected (each gives
    a sound enclosure; docs/math.md section 8), so that a deadline hit on a slow machine still
    leaves the coarser answer.

    Args:
        composition: The composition.
        h: Grid spacing (None: default).
        bits: Fixed-point bits (None: default).
        builders: What is evaluated per term (upper, lower).
        compute: ``h -> Bound``.

    Returns:
        The (intersected) bound, with a warning when the target is not the default grid.

    Raises:
        BudgetExceeded: if not even the coarsest grid fits, or the deadline passes before it
            is done.
    """
    deadline = current_deadline()
    if h is not None or deadline is None:
        check_lattice_budget(composition, h, bits, builders)
        return compute(h)
    comp = compose(composition)
    base = max(default_grid(comp, None, d) for d in comp.directions)
    afford = deadline.seconds * POINTS_PER_SECOND
    levels = [k for k in range(COARSENINGS, -1, -1) if k == 0 or base * 4.0**k <= 1.0]
    target = next((k for k in reversed(levels)
                   if grid_points(comp, base * 4.0**k if k else None, builders) <= afford), None)
    if target is None:
        raise BudgetExceeded(
            f"{deadline.describe()} too short for the lattice: even a grid {4**COARSENINGS}x "
            f"coarser than the default needs more than {afford:.0f} single-step points"
        )
    best = None
    for k in levels:
        if k < target:
            break
        try:
            b = compute(base * 4.0**k if k else None)
        except BudgetExceeded:
            if best is None:
                raise
            break
        best = b if best is None else best.intersect(b)
    if target != 0:
        note = (f"lattice grid h = {base * 4.0**target!r} (default {base!r}): the time budget "
                "affords no finer grid; a sound but wider enclosure")
        best = type(best)(best.quantity, best.lower, best.upper, best.lower_method,
                          best.upper_method, best.precision, best.assumptions, best.direction,
                          (*best.warnings, note), best.inputs)
    return best


def check_lattice_budget(composition: Any, h: float | None, bits: int | None,
                         builders: tuple[tuple[Any, bool], ...]) -> None:
    """Refuse up front when the lattice cannot finish within the active time budget.

    The estimate counts only the single-step grid evaluations still to be done (each uncached
    term's points, per pair order and per builder), at a per-point cost timed here on each kind
    of step; products, searches and repeated precisions come on top, so the estimate is a lower
    bound of the cost. Without an active budget it does nothing.

    Args:
        composition: The composition.
        h: Grid spacing (None: default).
        bits: Fixed-point bits (None: default).
        builders: ``(cached builder, lower side?)`` pairs whose work is to be estimated.

    Raises:
        BudgetExceeded: if the estimate exceeds the time left.
    """
    deadline = current_deadline()
    if deadline is None:
        return
    comp = compose(composition)
    hh, b = check_params(h, bits)
    points, seconds = 0, 0.0
    timed: dict[tuple[type, bool], float] = {}
    for direction in comp.directions:
        terms, total = lattice_terms(comp, direction)
        h_d = default_grid(comp, None, direction) if hh is None else hh
        for step, count in terms:
            lo, hi = grid_range(step, total)
            n = math.ceil(hi / h_d) - math.floor(lo / h_d) + 1
            for build, lower in builders:
                if build.cached(step, count, h_d, b, direction, total):
                    continue
                key = (type(step), lower)
                if key not in timed:
                    timed[key] = _seconds_per_point(step, lo, b, lower)
                points += n
                seconds += n * timed[key]
            check_deadline("in the lattice cost estimate")
    left = remaining()
    if seconds * COST_SAFETY > left:
        raise BudgetExceeded(
            f"{deadline.describe()} exceeded (estimated up front: the lattice needs at least "
            f"~{seconds:.2g} s for {points} single-step evaluations, {max(left, 0.0):.2g} s "
            "were left)"
        )
