r"""The certified eps search shared by the EEAI and the lattice method.

Every certified eps(delta) end in certify rests on one fact: the true delta(eps) is
non-increasing, so a point eps_u at which a *certified* upper envelope of delta is <= delta
bounds :math:`\varepsilon(\delta) \le \varepsilon_u`, and a point eps_l at which a certified
lower envelope exceeds delta bounds :math:`\varepsilon(\delta) \ge \varepsilon_l` (docs/math.md
section 1). Where such points are looked for does not affect validity, only tightness, so the
search runs on floats with a monotone predicate and only the returned point must be certified:

* :func:`expand` walks outward from an origin with doubling steps until the predicate holds
  (a bracket);
* :func:`bisect` shrinks a bracket, keeping the predicate true at one end and not certified at
  the other;
* :func:`snap_up` and :func:`snap_down` propose short dyadic points (multiples of
  :math:`2^{-44}`) just above (below) a float estimate, moving further out at each try, for a
  final certification in Arb.

Each loop checks the time budget (:func:`certify.budget.check_deadline`) between steps.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

from .budget import check_deadline

__all__ = ["bisect", "expand", "snap_down", "snap_up"]

_SNAP_BITS = 44  # dyadic points are multiples of 2^-44


def expand(pred: Callable[[float], bool], origin: float, first: float, *,
           limit: float = math.inf, tries: int | None = None) -> tuple[float, float | None]:
    """The first point x_k = origin + first * 2^k (k = 0, 1, ...) where ``pred`` holds.

    Args:
        pred: Predicate, monotone along the walk (once true, true further out).
        origin: Start of the walk (not tested).
        first: First step (its sign is the direction).
        limit: Give up once |x_k - origin| would exceed it (x_k is then not tested).
        tries: Give up after this many tests (None: no cap).

    Returns:
        ``(previous, found)``: the last point where ``pred`` failed (``origin`` if none was
        tested) and the first where it held, or None as ``found`` if the walk gave up.
    """
    prev, step, k = origin, first, 0
    while tries is None or k < tries:
        if abs(step) > limit:
            break
        check_deadline("in the eps search (bracket)")
        x = origin + step
        if pred(x):
            return prev, x
        prev, step, k = x, step * 2.0, k + 1
    return prev, None


def bisect(pred: Callable[[float], bool], bad: float, good: float, *, rel_tol: float = 0.0,
           abs_tol: float = 0.0, steps: int = 200) -> tuple[float, float]:
    """Shrink [bad, good] (either order) keeping ``pred(good)`` true and ``pred(bad)`` not.

    Stops after ``steps`` halvings, when the width is at most ``max(abs_tol, rel_tol *
    max(|bad|, |good|))``, or when the midpoint is no longer strictly inside (float resolution).

    Returns:
        The final ``(bad, good)``.
    """
    for _ in range(steps):
        if abs(good - bad) <= max(abs_tol, rel_tol * max(abs(bad), abs(good))):
            break
        mid = 0.5 * (bad + good)
        if not (min(bad, good) < mid < max(bad, good)):
            break
        check_deadline("in the eps search (bisection)")
        if pred(mid):
            good = mid
        else:
            bad = mid
    return bad, good


def snap_up(x: float, tries: int) -> Iterator[float]:
    """Dyadic points above ``x``: x + 1e-11 * 10^k * max(1, x) (cumulative) rounded up to a
    multiple of 2^-44, k = 0 .. tries - 1."""
    cand = x
    for k in range(tries):
        cand = cand + (1e-11 * 10.0**k) * max(1.0, cand)
        yield math.ldexp(math.ceil(math.ldexp(cand, _SNAP_BITS)), -_SNAP_BITS)


def snap_down(x: float, tries: int) -> Iterator[float]:
    """Dyadic points at or below ``x`` (>= 0): x rounded down to a multiple of 2^-44, then moved
    down by 1e-11 * 10^k * max(1, x) (cumulative, floored at 0), k = 0 .. tries - 2."""
    cand = x
    for k in range(tries):
        yield math.ldexp(math.floor(math.ldexp(cand, _SNAP_BITS)), -_SNAP_BITS)
        cand = max(0.0, cand - (1e-11 * 10.0**k) * max(1.0, cand))
