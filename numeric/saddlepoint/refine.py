r"""The root refinement of the saddlepoint accountant's eps(delta) search.

Between two grid points with g = log delta_r - log delta of opposite signs (g_lo > 0 >= g_hi),
:func:`refine_root` runs a safeguarded Newton iteration in t with the analytic slope of
:mod:`numeric.saddlepoint` (package docstring), started at the root of the cubic Hermite
interpolant of the cell; each batch evaluates the Newton steps for g and for
:math:`\psi = \delta_r/\delta - 1` (:func:`_delta_step`), plus the bisection point when the
bracket stops halving. The last small step may be extrapolated instead of evaluated when two
estimates of it agree to 1e-10 (the two Newton steps, or inverse quintic and cubic Hermite
interpolants of t(g); Hermite interpolation by divided differences with doubled nodes,
Stoer & Bulirsch, *Introduction to Numerical Analysis*, Chapter 2), with eps from the Taylor
polynomial of K'.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Iterable

from .diagnostics import point_diagnostics
from .driver import Request
from .points import Point

__all__ = ["refine_root"]


def _hermite_start(lo: float, hi: float, g_lo: float, g_hi: float, d_lo: float,
                   d_hi: float) -> float:
    """Root in (lo, hi) of the cubic Hermite interpolant of g (g_lo > 0 > g_hi), or nan."""
    h = hi - lo
    if not (math.isfinite(d_lo) and math.isfinite(d_hi) and math.isfinite(g_hi) and h > 0.0):
        return math.nan
    # p(x) = g_lo + c1 x + c2 x^2 + c3 x^3 on [0, 1], p(0) = g_lo > 0 > p(1) = g_hi
    m0, m1 = d_lo * h, d_hi * h
    c1 = m0
    c2 = 3.0 * (g_hi - g_lo) - 2.0 * m0 - m1
    c3 = 2.0 * (g_lo - g_hi) + m0 + m1
    a, b = 0.0, 1.0
    x = g_lo / (g_lo - g_hi)  # the secant point
    for _ in range(60):  # Newton on the cubic, safeguarded by bisection (no CGF evaluations)
        p = g_lo + x * (c1 + x * (c2 + x * c3))
        if p > 0.0:
            a = x
        else:
            b = x
        dp = c1 + x * (2.0 * c2 + 3.0 * x * c3)
        new = x - p / dp if dp != 0.0 else math.nan
        if abs(new - x) <= 1e-15:
            return lo + new * h
        if not (a < new < b):
            new = 0.5 * (a + b)
        if b - a <= 1e-15:
            break
        x = new
    return lo + x * h


def _delta_step(p: Point, log_target: float) -> float:
    r"""Newton step for :math:`\psi(t) = \delta_r(t)/\delta - 1 = e^{b - \tau} F - 1` at ``p``.

    b = log_base, tau = log_target, F the tilted factor (any sign: psi is smooth where log delta
    is not), :math:`\psi' = e^{b - \tau}(F' - t K'' F)` since b' = -t K'' + (log scale)'.
    """
    den = p.dfactor - p.t * p.var * p.factor
    gap = log_target - p.log_base  # log of the factor the target needs
    if not (den < 0.0 and gap < 700.0):
        return math.nan
    return -(p.factor - math.exp(gap)) / den


_DOMINATED_WIDTH = 1e-2  # eps bracket (relative) at which a dominated, flagged root may stop
_EXTRAPOLATE = 1e-4  # Newton steps below this (relative in t) may be taken without evaluating,
_AGREE = 1e-10  # when two estimates of that step agree this well (:func:`_agree_tolerance`)


def _agree_tolerance(p: Point) -> float:
    """How closely two estimates of the last step from ``p`` must agree: 1e-10 relative in t
    (absolute below |t| = 1), and in eps, which moves by K'' per unit t (eps' = K'' can
    amplify an error in t many times where eps / K'' is small)."""
    return _AGREE * min(max(1.0, abs(p.t)), max(abs(p.eps), 1e-300) / p.var)


def _extrapolated(p: Point, step: float, log_target: float) -> Point:
    r"""The root one small step from ``p``, extrapolated instead of evaluated: t + step,
    :math:`\varepsilon = K'(t) + K''(t)\,h + K'''(t)\,h^2/2 + K''''(t)\,h^3/6` (h = step,
    :math:`K^{(j)} = l_j s^j`, as far as the order's cumulants go: K'' alone at order 0), log
    delta at the target. The step comes from :func:`refine_root` only when two independent
    estimates of it agree to 1e-10 (:func:`_agree_tolerance`); the diagnostics (l3, l4,
    orders) are those of ``p``."""
    eps = p.eps + p.var * step
    term = step
    for j, lam in enumerate(p.lams[:2], start=3):
        term *= step / (j - 1)
        eps += lam * p.s ** j * term
    return Point(p.t + step, eps, log_target, p.factor, p.factor_lower, p.s,
                  p.lams, p.slope, p.var, p.log_base, p.dfactor, p.log_terms)


def _inverse_hermite_root(p: Point, known: Iterable[Point], log_target: float) -> float:
    r"""Root of g = log delta_r - log delta near ``p`` from the inverse function t(g), or nan.

    t(g) is interpolated through (g, t, dt/dg = 1/g') at ``p`` and its nearest evaluated
    neighbours on the left and on the right: by the quintic Hermite polynomial through all
    three, and by the two cubic ones through ``p`` and one neighbour. All are exact to first
    order at p (their leading term is the Newton step); the quintic's value at g = 0 is
    returned only if both cubics agree with it to 1e-10 (:func:`_agree_tolerance`) -- the
    difference between an estimate and one of higher order bounds the lower one's error (the
    two cubics alone can share an error even in the neighbours' distance). Needs g decreasing
    through the three points, with negative slopes.
    """
    gp = p.log_delta - log_target
    if not (math.isfinite(gp) and p.slope < 0.0):
        return math.nan
    left = right = None
    for q in known:
        if not (q.slope < 0.0 and math.isfinite(q.log_delta)):
            continue
        if q.t < p.t and (left is None or q.t > left.t):
            left = q
        elif q.t > p.t and (right is None or q.t < right.t):
            right = q
    if left is None or right is None:
        return math.nan
    if not (left.log_delta > p.log_delta > right.log_delta):
        return math.nan
    try:
        quintic = _osculating_value([left, p, right], log_target)
        tol = _agree_tolerance(p)
        for q in (left, right):
            if not abs(_osculating_value([p, q], log_target) - quintic) <= tol:
                return math.nan
    except ZeroDivisionError:  # coincident values or a zero slope: no interpolant, no shortcut
        return math.nan
    return quintic


def _osculating_value(pts: list[Point], log_target: float) -> float:
    """Value at g = 0 of the Hermite polynomial t(g) through (g, t, 1/g') at ``pts``
    (g = log_delta - log_target distinct; divided differences with doubled nodes)."""
    z = [q.log_delta - log_target for q in pts for _ in (0, 1)]
    col = [q.t for q in pts for _ in (0, 1)]
    coef = [col[0]]
    for k in range(1, len(z)):  # column k of the divided-difference table
        col = [1.0 / pts[i // 2].slope if k == 1 and i % 2 == 0
               else (col[i + 1] - col[i]) / (z[i + k] - z[i]) for i in range(len(col) - 1)]
        coef.append(col[0])
    value = coef[-1]
    for k in range(len(z) - 2, -1, -1):  # Newton form at g = 0
        value = value * (0.0 - z[k]) + coef[k]
    return value


def refine_root(log_target: float, p_lo: Point, p_hi: Point,
                other: Callable[[], float] | None = None,
                stopped: list[float] | None = None) -> Generator[Request, dict, Point]:
    r"""The root of g(t) = log delta_r(t) - log_target between two grid points (g_lo > 0 >= g_hi).

    Safeguarded Newton with the analytic slope (module docstring), started at the root of the
    cubic Hermite interpolant of the two grid ends when their slopes are alike (within a factor
    10), else by a delta_r Newton step from the lower end. Each further batch evaluates the
    Newton steps for g = log delta_r - log delta and for :math:`\psi = \delta_r/\delta - 1`
    (:func:`_delta_step`; smooth where the tilted factor F approaches or crosses 0 and log
    delta_r is not) from the best point so far, plus the bisection point when the bracket has
    not halved in two batches or no step stays inside it. The bracket keeps its largest sign
    change. Stops at |g| <= 1e-13, a Newton step below 1e-11 relative in t (log delta carries
    rounding noise of ~1e-11 when the tilted factor is small) or a bracket of relative width
    4e-16 (a jump, if g is not finite at its upper end). Stops early -- with the best point in
    the bracket, the bracket's eps range appended to ``stopped`` -- when that point's
    diagnostics fire, the eps of the bracket's upper end lies below ``other()`` (the other pair
    order's final eps; the root's eps is then below it too, so the reported max does not depend
    on this root) and the bracket spans at most 1e-2 relative in eps.

    Args:
        log_target: log delta (of the pure part).
        p_lo: The grid point at the lower end of the cell (g > 0).
        p_hi: The grid point at its upper end (g <= 0).
        other: The other pair order's final eps (-inf while there is none), or None.
        stopped: Receives the eps bracket when the search stops early.

    Returns:
        A generator (for :func:`~numeric.saddlepoint.driver.drive`) returning the root's point.

    Raises:
        NotApplicable: if a point it needs has a degenerate tilted law.
    """
    lo, hi = p_lo.t, p_hi.t
    if not (p_hi.log_delta - log_target < 0.0):  # the grid end is exactly at the target
        return p_hi
    g_lo = p_lo.log_delta - log_target
    cands = []
    if p_lo.slope <= 0.0 and p_hi.slope < 0.0:
        t = _hermite_start(lo, hi, g_lo, p_hi.log_delta - log_target, p_lo.slope, p_hi.slope)
        if lo < t < hi:
            cands.append(t)
    if not (p_lo.slope < 0.0 and 0.1 <= p_hi.slope / p_lo.slope <= 10.0):
        # slopes unlike (a strongly curved cell): the cubic's root is a guess only, so the
        # delta_r Newton step from the lower end is evaluated with it
        t = lo + _delta_step(p_lo, log_target)
        if lo < t < hi:
            cands.append(t)
    if not cands:
        cands.append(0.5 * (lo + hi))
    known = {lo: p_lo, hi: p_hi}
    widths = [hi - lo]
    for _ in range(100):
        new = [x for x in cands if x not in known]
        if new:
            reply = yield "point", new
            known.update((x, reply[x].checked()) for x in new)
        inside = sorted(x for x in cands if lo < x < hi)
        # the bracket: the largest sign change among lo, the new points and hi
        ends = [lo, *inside, hi]
        above = [known[x].log_delta - log_target > 0.0 for x in ends]
        j = max(i for i in range(len(ends) - 1) if above[i] and not above[i + 1])
        lo, hi = ends[j], ends[j + 1]
        widths.append(hi - lo)
        finite = [known[x] for x in cands if math.isfinite(known[x].log_delta)]
        if finite:
            p = min(finite, key=lambda q: abs(q.log_delta - log_target))
            if abs(p.log_delta - log_target) <= 1e-13:
                return p
        else:
            p = known[cands[0]]
        dominated = False
        if stopped is not None and other is not None and known[hi].eps < other():
            # this root's eps is below the other pair order's: if its estimate is flagged
            # anyway, bisect towards a 1e-2 eps bracket and stop there
            q = min((known[x] for x in (lo, *cands, hi) if lo <= x <= hi
                     and math.isfinite(known[x].log_delta)),
                    key=lambda q: abs(q.log_delta - log_target), default=known[lo])
            e_lo, e_hi = known[lo].eps, known[hi].eps
            dominated = bool(point_diagnostics(q, ""))
            if dominated and e_hi - e_lo <= _DOMINATED_WIDTH * abs(e_hi):
                stopped.extend((e_lo, e_hi))
                return q
        if hi - lo <= 4e-16 * max(1.0, abs(hi)):
            g_hi = known[hi].log_delta - log_target
            return known[lo] if not math.isfinite(g_hi) else p
        gt = p.log_delta - log_target
        steps = [_delta_step(p, log_target)]
        if math.isfinite(gt) and p.slope < 0.0:
            steps.append(-gt / p.slope)
            if gt < 0.0:  # below the target the log step is the primary one
                steps.reverse()
        if math.isfinite(gt) and abs(steps[0]) <= 1e-11 * max(1.0, abs(p.t)):
            return p  # at the rounding noise of log delta
        if len(steps) == 2 and abs(steps[0]) <= _EXTRAPOLATE * max(1.0, abs(p.t)):
            if (lo < p.t + steps[0] < hi
                    and abs(steps[0] - steps[1]) <= _agree_tolerance(p)):
                return _extrapolated(p, steps[0], log_target)
            x = _inverse_hermite_root(p, known.values(), log_target)
            if lo < x < hi:
                return _extrapolated(p, x - p.t, log_target)
        cands = []
        for step in steps:
            x = p.t + step
            if lo < x < hi and not any(abs(x - c) <= 1e-14 * max(1.0, abs(x)) for c in cands):
                cands.append(x)
        if not cands or dominated or (len(widths) > 2 and widths[-1] > 0.5 * widths[-3]):
            cands.append(0.5 * (lo + hi))
    return min((q for q in known.values() if lo <= q.t <= hi and math.isfinite(q.log_delta)),
               key=lambda q: abs(q.log_delta - log_target), default=known[lo])
