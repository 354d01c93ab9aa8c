r"""What finitely many certified intervals prove about a curve: the bands the figures draw.

A certified method gives, at finitely many points x_i, an interval [lo_i, hi_i] that contains
the true value. A figure draws a curve over a continuum, so every band here comes with the
argument that carries the finite information to the points in between; a band end that no
argument supports is not drawn (``upper`` is ``None``).

**Privacy profile delta(eps)** (``delta_staircase``). delta(eps) is non-increasing in eps
(delta(eps) = sup_S P(S) - e^eps Q(S), and e^eps Q(S) grows with eps). Hence for
eps_i <= eps <= eps_{i+1}:  lo_{i+1} <= delta(eps_{i+1}) <= delta(eps) <= delta(eps_i) <= hi_i.
Beyond the last point, 0 <= delta(eps) <= hi_K. So the staircase (upper: hi_i on
[eps_i, eps_{i+1}); lower: lo_{i+1} there) contains the profile everywhere on the drawn range.

**Epsilon vs steps** (``steps_staircase``). eps_m(delta) of m composed steps is non-decreasing
in m: the first m outputs of an (m+1)-fold composition are a post-processing of it, so every
(eps, delta) guarantee of the (m+1)-fold run holds for the m-fold one. Hence for
m_i <= m <= m_{i+1}:  lo_i <= eps(m) <= hi_{i+1}.

**Trade-off curve** (``tradeoff_band``), for f_prof(a) = sup_{eps >= 0} f_{eps, delta(eps)}(a),
where delta is the privacy profile (for an asymmetric pair, the larger of the two orders, which
is what certified methods bound) and
f_{eps,delta}(a) = max{0, 1 - delta - e^eps a, e^-eps (1 - delta - a)} (GDP Sec. 2.2).
For a symmetric pair f_prof is the trade-off function T(P, Q) itself (GDP Prop. 2.12: a
symmetric f has delta(eps) = 1 + f^*(-e^eps) and f = sup_eps f_{eps, delta(eps)}); for an
asymmetric pair it is the tightest f-DP guarantee that the profile implies.

* Lower end: the mechanism is (eps_i, hi_i)-DP for every i, hence f_{eps_i, hi_i}-DP for every
  i, hence f_prof(a) >= max_i f_{eps_i, hi_i}(a) (:func:`numeric.tradeoff.
  tradeoff_from_delta_curve`; f_{eps,delta} is non-increasing in delta, so replacing delta(eps_i)
  by its upper end hi_i lowers every line).
* Upper end: with eps_0 = 0 < eps_1 < ... < eps_K and the step lower bound
  ell(eps) = lo_{i+1} on (eps_i, eps_{i+1}], ell(0) = lo_0, ell(eps) = 0 beyond eps_K (delta is
  non-increasing, as above, and delta >= 0), every eps has delta(eps) >= ell(eps), and
  f_{eps,delta} is non-increasing in delta, so
  f_prof(a) <= sup_eps f_{eps, ell(eps)}(a). On each piece ell is constant, and both
  1 - d - e^eps a and e^-eps (1 - d - a) (for 1 - d - a >= 0) are non-increasing in eps, so the
  supremum over the piece (eps_i, eps_{i+1}] is at most the value at its left end eps_i:
  f_prof(a) <= max( f_{0, lo_0}(a), max_i f_{eps_i, lo_{i+1}}(a), f_{eps_K, 0}(a) ).
  Convexity of delta in t = e^eps tightens lo_{i+1} on each piece to a linear function of t
  (:func:`_left_end_lower`).
  (If 1 - d - a < 0 the second form is negative and the max with 0 takes over.) Also
  f_prof(a) <= 1 - a (every trade-off function, GDP Prop. 2.2), and the minimum is taken.
  The grid must start at eps_0 = 0; a missing certified point (a refused one) is dropped and its
  neighbours' pieces merge, which keeps the argument valid.

**Rounding.** The ends arrive as exact decimals and are rounded outward to binary64
(:func:`float_down`, :func:`numeric.results.float_up`). The envelope formulas then take a few
binary64 operations on numbers in [0, 1] whenever the result is positive (a product e^eps a > 1
only yields a negative candidate, replaced by 0), each with relative error 2^-53; the drawn ends
are moved outward by :data:`SLACK` = 1e-14, far more than those few roundings.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from decimal import Decimal

import numpy as np

from ..tradeoff import tradeoff_from_delta_curve

__all__ = ["SLACK", "delta_staircase", "float_down", "steps_staircase", "tradeoff_band"]

SLACK = 1e-14
"""Absolute outward margin covering the binary64 rounding of the envelope formulas."""


def float_down(value: Decimal) -> float:
    """The largest binary64 number <= ``value`` (an exact decimal); -inf stays -inf."""
    x = float(value)
    if math.isfinite(x) and Decimal(x) > value:
        x = math.nextafter(x, -math.inf)
    return x


def _checked(xs: Sequence[float], lo: Sequence[float], hi: Sequence[float], what: str):
    x = np.asarray(xs, dtype=float)
    lo_a = np.asarray(lo, dtype=float)
    hi_a = np.asarray(hi, dtype=float)
    if not (x.ndim == 1 and x.shape == lo_a.shape == hi_a.shape and x.size >= 1):
        raise ValueError(f"{what}: points and their interval ends must be 1-D of one length >= 1")
    if not np.all(np.diff(x) > 0):
        raise ValueError(f"{what}: points must be strictly increasing")
    if not np.all(lo_a <= hi_a):
        raise ValueError(f"{what}: every interval needs lower <= upper")
    return x, lo_a, hi_a


def delta_staircase(eps: Sequence[float], lo: Sequence[float], hi: Sequence[float]):
    """The band that certified delta intervals at increasing eps prove for every eps between.

    Args:
        eps: Strictly increasing eps_i >= 0.
        lo: Proven lower ends of delta(eps_i) (rounded down).
        hi: Proven upper ends of delta(eps_i) (rounded up).

    Returns:
        ``(x, lower, upper)`` arrays for a step drawing (``x`` repeats each inner point): on
        [eps_i, eps_{i+1}] delta lies in [lo_{i+1}, hi_i] (monotonicity; module docstring).

    Raises:
        ValueError: on mismatched, unsorted or inverted input.
    """
    x, lo_a, hi_a = _checked(eps, lo, hi, "delta_staircase")
    xs, lows, ups = [], [], []
    for i in range(x.size - 1):
        xs += [x[i], x[i + 1]]
        lows += [lo_a[i + 1], lo_a[i + 1]]
        ups += [hi_a[i], hi_a[i]]
    if x.size == 1:
        xs, lows, ups = [x[0]], [lo_a[0]], [hi_a[0]]
    return np.array(xs), np.array(lows), np.array(ups)


def steps_staircase(steps: Sequence[float], lo: Sequence[float], hi: Sequence[float]):
    """The band that certified eps intervals at increasing step counts prove in between.

    Args:
        steps: Strictly increasing step counts m_i.
        lo: Proven lower ends of eps(m_i).
        hi: Proven upper ends of eps(m_i) (may be inf).

    Returns:
        ``(x, lower, upper)`` for a step drawing: on [m_i, m_{i+1}] eps lies in
        [lo_i, hi_{i+1}] (eps is non-decreasing in m; module docstring).
    """
    x, lo_a, hi_a = _checked(steps, lo, hi, "steps_staircase")
    xs, lows, ups = [], [], []
    for i in range(x.size - 1):
        xs += [x[i], x[i + 1]]
        lows += [lo_a[i], lo_a[i]]
        ups += [hi_a[i + 1], hi_a[i + 1]]
    if x.size == 1:
        xs, lows, ups = [x[0]], [lo_a[0]], [hi_a[0]]
    return np.array(xs), np.array(lows), np.array(ups)


def _eps_delta_lines(eps: np.ndarray, deltas: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """max_i f_{eps_i, delta_i}(alpha), with f = 1 - alpha where a delta_i is 0 at eps_i = 0."""
    return np.asarray(tradeoff_from_delta_curve(eps, np.clip(deltas, 0.0, 1.0), alpha))


def _left_end_lower(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    r"""For each piece (eps_i, eps_{i+1}], i < K: a lower bound of delta at its left end that
    holds, by a linear function of t = e^eps, on the whole piece (module docstring).

    delta is convex in t (a supremum over events S of the affine P(S) - t Q(S)), so for
    t <= t_{i+1} < t_{i+2} the three-slope inequality gives
    delta(t) >= delta(t_{i+1}) + s (t_{i+1} - t) with
    s = -(delta(t_{i+2}) - delta(t_{i+1}))/(t_{i+2} - t_{i+1}) >= (lo_{i+1} - hi_{i+2})/(t_{i+2} -
    t_{i+1}) =: s_raw. With s = max(s_raw, 0) (s = 0: monotonicity alone) the bound
    ell(t) = lo_{i+1} + s (t_{i+1} - t) is linear in t on the piece; 1 - ell(t) - t a is then
    linear in t and (1 - ell(t) - a)/t = c/t + s monotone in t, so the supremum of
    f_{eps, ell(eps)}(a) over the piece is attained at an end: at t_{i+1} it is
    f_{eps_{i+1}, lo_{i+1}} <= f_{eps_i, lo_{i+1}}, so the value at the left end,
    f_{eps_i, ell(t_i)}, dominates the piece.
    """
    t = np.exp(x)
    out = lo[1:].copy()
    for i in range(x.size - 2):
        span = t[i + 2] - t[i + 1]
        if np.isfinite(span) and span > 0:
            slope = (lo[i + 1] - hi[i + 2]) / span
            if slope > 0:
                # rounded down: a smaller lower end of delta only raises the drawn upper end
                out[i] = np.nextafter(lo[i + 1] + slope * (t[i + 1] - t[i]) * (1 - 1e-12), 0.0)
    return np.minimum(out, 1.0)


def tradeoff_band(eps: Sequence[float], lo: Sequence[float], hi: Sequence[float],
                  alpha: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    r"""Proven lower and upper ends of f_prof(alpha) from certified delta intervals.

    See the module docstring for the proof: lower = max_i f_{eps_i, hi_i}; upper =
    min(1 - a, max(f_{0, lo_0}, max_i f_{eps_i, ell_i}, f_{eps_K, 0})) with ell_i >= lo_{i+1}
    from convexity of delta in e^eps (:func:`_left_end_lower`).

    Args:
        eps: Strictly increasing eps_i, starting at 0.
        lo: Proven lower ends of delta(eps_i), rounded down.
        hi: Proven upper ends of delta(eps_i), rounded up.
        alpha: Type I errors in [0, 1].

    Returns:
        ``(lower, upper)`` arrays of alpha's length, moved outward by :data:`SLACK` and clipped
        to [0, 1].

    Raises:
        ValueError: if the grid does not start at eps = 0, or on malformed input.
    """
    x, lo_a, hi_a = _checked(eps, lo, hi, "tradeoff_band")
    if x[0] != 0.0:
        raise ValueError(f"tradeoff_band: the eps grid must start at 0, got {x[0]!r}")
    a = np.asarray(alpha, dtype=float)
    lower = _eps_delta_lines(x, hi_a, a)
    # upper: lines at the left end of each piece with the next point's lower end, plus eps = 0
    # with lo_0 and the tail beyond eps_K with delta >= 0
    up_eps = np.concatenate(([0.0], x))
    up_delta = np.concatenate(([lo_a[0]], _left_end_lower(x, lo_a, hi_a), [0.0]))
    upper = np.minimum(_eps_delta_lines(up_eps, up_delta, a), 1.0 - a)
    return (np.clip(lower - SLACK, 0.0, 1.0), np.clip(upper + SLACK, 0.0, 1.0))

