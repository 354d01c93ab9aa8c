r"""The eps(delta) search of the saddlepoint accountant, one pair order at a time.

t parametrizes eps = K'(t) monotonically, so eps(delta) is a 1-D root find in t of
:math:`g(t) = \log\delta_r(t) - \log\delta` (:mod:`numeric.saddlepoint`, package docstring):
the tilt t_0 of eps = 0 (:func:`tilt_search`; cached per mechanisms and count proportions), a
bracket t_hi from the sequence 1, 3, 7, ..., 2 t_hi + 1, a 10-point grid scan on [t_0, t_hi]
that counts the down-crossings, and the refinement of the last sign change
(:func:`~numeric.saddlepoint.refine.refine_root`). The first batch also holds the grids of the
bracket ends a normal approximation makes likely, and for closed-form CGFs five tilts around its
guess (they only save batches; the bracket, grid and root are the same without them).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Generator

from ..cgf import CGFCache, closed_form
from ..composition import Composition
from ..errors import NotApplicable
from .diagnostics import FEW_SAMPLED_STEPS, sampled_steps
from .driver import Request
from .points import Point
from .refine import refine_root

__all__ = ["SaturatedError", "solve_direction", "tilt_search"]


def tilt_search(eps: float, start: float,
                tol: float = 1e-15) -> Generator[Request, dict, tuple[float, float]]:
    """The saddlepoint t with K'(t) = eps (K' is increasing; K'(-1) <= 0 <= K'(0)).

    Newton from ``start``, safeguarded by bisection on [-1, inf) (bisection alone where the
    tilted variance K'' is not positive: a numerically degenerate tilted law), to a step below
    ``tol`` relative.

    Args:
        eps: The target K'(t).
        start: The first tilt.
        tol: Relative step at which the search stops.

    Returns:
        A generator (for :func:`~numeric.saddlepoint.driver.drive`) returning t and K'' at the
        last tilt evaluated.

    Raises:
        SaturatedError: if K' stays below eps up to t = 1e8 (eps at the essential supremum).
        NotApplicable: if no saddlepoint is found otherwise.
    """
    lo, hi = -1.0, math.inf
    t = start
    for _ in range(200):
        d = (yield "cgf", [t])[t]
        f = float(d[0]) - eps
        if f == 0.0:
            return t, float(d[1])
        if f < 0.0:
            lo = t
        else:
            hi = t
        var = float(d[1])
        new = t - f / var if var > 0.0 else math.nan  # degenerate tilted law: bisect instead
        if not (lo < new < hi):
            new = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * max(t, 0.0) + 1.0
        if abs(new - t) <= tol * max(1.0, abs(t)) or (math.isfinite(hi) and hi - lo
                                                         <= 4e-16 * max(1.0, abs(hi))):
            return new, float(d[1])
        if new > 1e8:
            if f < 0.0 and not math.isfinite(hi):  # K' saturates below eps
                raise SaturatedError(eps, t, float(d[2]) - t * eps)
            break
        t = new
    raise NotApplicable(
        f"no saddlepoint found for eps={eps!r}: K'(t) = eps has no root where the tilted law "
        "is usable; the saddlepoint method does not apply to this query")


class SaturatedError(NotApplicable):
    r"""K'(t) stays below eps up to the largest tilt tried (eps within rounding of the essential
    supremum of S): no saddlepoint, but Chernoff's bound :math:`\delta(\varepsilon) \le
    P_Q(S > \varepsilon) \le e^{K(t) - t\varepsilon}` holds at that tilt."""

    def __init__(self, eps: float, t: float, log_bound: float) -> None:
        super().__init__(f"no saddlepoint found for eps={eps!r} (K' saturates below it)")
        self.t = t
        self.log_bound = log_bound


def _shape_key(comp: Composition, direction: str) -> tuple:
    """Cache key of the eps = 0 tilt: the mechanisms and count proportions (K_S/m)."""
    total = sum(c for _, c in comp.terms)
    return ("tilt0", direction, tuple((m, c / total) for m, c in comp.terms))


def _tilt_zero(comp: Composition, direction: str,
               cache: CGFCache) -> Generator[Request, dict, tuple[float, float]]:
    """The eps = 0 tilt t_0 and K''(t_0) (cached per mechanisms and count proportions)."""
    key = _shape_key(comp, direction)
    total = sum(c for _, c in comp.terms)
    hit = cache.get(key)
    if hit is None:
        # from the Gaussian's t_0 = -1/2; t_0 only places the grid, so 1e-12 is plenty (K' at
        # small rates carries rounding noise that keeps steps near 1e-13 from settling)
        t0, var = yield from tilt_search(0.0, -0.5, 1e-12)
        cache.put(key, (t0, var / total))
        return t0, var
    return hit[0], hit[1] * total


def _normal_root(var0: float, log_target: float) -> float:
    r"""Guess of the root t: :math:`-v t^2/2 - \log(\sqrt{2\pi v}\, t(t+1)) = \log\delta`,
    v = K''(t_0) (the normal approximation; nan if v is not positive)."""
    if not (var0 > 0.0 and math.isfinite(var0) and math.isfinite(log_target)):
        return math.nan
    lo, hi = 0.0, math.inf
    t = math.sqrt(max(-2.0 * log_target, 1.0) / var0)
    for _ in range(60):  # Newton on a decreasing function, safeguarded by bisection
        if not (t > 0.0 and math.isfinite(t)):
            return math.nan
        f = -0.5 * var0 * t * t - math.log(math.sqrt(2.0 * math.pi * var0) * t * (t + 1.0)) \
            - log_target
        if f > 0.0:
            lo = t
        else:
            hi = t
        new = t + f / (var0 * t + (2.0 * t + 1.0) / (t * (t + 1.0)))
        if not (lo < new < hi):
            new = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * t
        if abs(new - t) <= 1e-6 * t:
            return new
        t = new
    return t


def _likely_brackets(guess: float, cands: list[float]) -> list[float]:
    """Bracket ends t_hi whose grids are worth evaluating together with the bracket.

    A guess only (it saves a batch when right, costs a few tilts when wrong): the candidate
    above the :func:`_normal_root` guess, and its neighbour when the guess is within 15% of
    the boundary between them (where the guess was checked it was within -7% .. +11% of the
    root, outside the few-sampled-steps regime).
    """
    k = next((i for i, c in enumerate(cands) if c > guess), None)
    if k is None:
        return []
    out = [cands[k]]
    if k > 0 and guess < 1.15 * cands[k - 1]:
        out.append(cands[k - 1])
    if k + 1 < len(cands) and guess > 0.87 * cands[k]:
        out.append(cands[k + 1])
    return out


def _linspace(a: float, b: float, num: int) -> list[float]:
    """``numpy.linspace(a, b, num)`` as floats (the same values: a + i (b - a)/(num - 1), b)."""
    step = (b - a) / (num - 1)
    return [*(i * step + a for i in range(num - 1)), b]


_BRACKET_FIRST = 5  # bracket candidates 1, 3, ..., 31 in the first batch
_BRACKET_MORE = 3
_BRACKET_CAP = 16  # candidates in the first batch at most
_GUESS_MAX = 63.0  # normal guesses beyond this place no grids (the few-sampled-steps regime,
# where the guess can be off by a factor 50 and large tilts need long quadrature rules)


def solve_direction(comp: Composition, direction: str, log_target: float, cache: CGFCache,
                    found: dict[str, float] | None = None,
                    grid: int = 10) -> Generator[Request, dict, tuple]:
    """Largest eps with log delta_r(eps) = log_target for one pair order (module docstring).

    Args:
        comp: The composition.
        direction: The pair order (``"P||Q"`` or ``"Q||P"``).
        log_target: log delta (of the pure part).
        cache: The per-mechanism cache (eps = 0 tilts).
        found: Shared by the pair orders searched in lockstep: receives this order's eps when
            it is final, and supplies the other order's to :func:`refine_root`.
        grid: Points of the grid scan.

    Returns:
        A generator (for :func:`~numeric.saddlepoint.driver.drive`) returning
        ``(eps, point, roots, notes)``.

    Raises:
        NotApplicable: where the tilted law degenerates or the target is never bracketed.
    """
    found = {} if found is None else found
    result = yield from _solve_direction_inner(comp, direction, log_target, cache, found, grid)
    found[direction] = result[0]
    return result


def _solve_direction_inner(comp: Composition, direction: str, log_target: float,
                           cache: CGFCache, found: dict[str, float],
                           grid: int) -> Generator[Request, dict, tuple]:
    notes: list[str] = []
    t0, var0 = yield from _tilt_zero(comp, direction, cache)
    cands = [max(t0, 0.0) + 1.0]
    for _ in range(_BRACKET_FIRST - 1):
        cands.append(2.0 * cands[-1] + 1.0)
    guess = _normal_root(var0, log_target)
    while cands[-1] <= guess and len(cands) < _BRACKET_CAP:  # candidates up to the guess
        cands.append(2.0 * cands[-1] + 1.0)
    if not guess <= _GUESS_MAX or sampled_steps(comp) < FEW_SAMPLED_STEPS:
        # far out, or in the one-big-step regime, the normal guess is poor (off by up to a
        # factor 50) and guessed grids would mostly be wasted (dear on a cold query)
        guess = math.nan
    likely = _likely_brackets(guess, cands)
    if likely:  # the scan needs the candidates up to the one after the last likely bracket
        if cands[-1] in likely:
            cands.append(2.0 * cands[-1] + 1.0)
        del cands[cands.index(max(likely)) + 2:]
    grids = {x: _linspace(t0, x, grid) for x in likely}
    # closed-form CGFs: a few tilts around the guess as well (they refine the grid cell that
    # holds the root, where the grid is coarse against 1/s, at the cost of a few points)
    near = ([guess * (1.0 + 0.1 * k) for k in range(-2, 3)]
            if closed_form(comp) and math.isfinite(guess) and guess > t0 else [])
    pts = yield "point", [t0, *cands, *(y for ts in grids.values() for y in ts[1:-1]), *near]
    p0 = pts[t0].checked()
    # eps = 0 when delta(0) is at or below the target -- and no larger root exists: the scan
    # below still runs, since delta(0) comes from the eps = 0 tilt, where |t_0| s can be large
    # and the series broken (probe 2026-12-03: SG(3.03, 0.438) x 982357, t_0 = -0.497,
    # s = 144: order 0 gave delta(0) = 1.9e-15 for a true ~1, so eps = 0 was returned for P||Q
    # although its delta crosses 4e-5 at t = 0.027, eps = 11018.7). A non-positive factor at
    # eps = 0 -- deep negative tilt, delta near 1 -- is not a root either.
    zero = p0.factor > 0.0 and p0.log_delta <= log_target

    def g(p: Point) -> float:
        return p.checked().log_delta - log_target

    # Bracket: the first candidate t_hi with the surrogate below the target there and at
    # 2 t_hi + 1 (candidates are evaluated in batches; only those the scan reaches are used).
    for k in range(60):
        if k + 1 >= len(cands):
            more = [cands[-1]]
            for _ in range(_BRACKET_MORE):
                more.append(2.0 * more[-1] + 1.0)
            more = more[1:]
            pts.update((yield "point", more))
            cands.extend(more)
        if g(pts[cands[k]]) < 0.0 and g(pts[cands[k + 1]]) < 0.0:
            t_hi = cands[k]
            break
    else:
        raise NotApplicable(
            "the saddlepoint search did not bracket the target delta (the tilted expansion "
            "stays above it up to the largest tilt tried); the saddlepoint method does not "
            "apply to this query")
    ts = grids.get(t_hi) or _linspace(t0, t_hi, grid)
    missing = [x for x in ts if x not in pts]
    if missing:
        pts.update((yield "point", missing))
    above = [g(pts[x]) > 0.0 for x in ts]
    if zero and not any(above):
        return 0.0, p0, 0, notes
    if not any(above):
        # the surrogate never exceeds the target, but it is not positive at eps = 0: eps = 0
        # would be right only if delta(0) <= delta, which the broken-down expansion cannot tell
        # (fuzz: a rate-2.1e-5 subsampled Gaussian step at delta 4.4e-15 reported 0 for a
        # certified 10.68; 10 rate-0.001 steps reported the other order's 0.0067 for 0.0615)
        raise NotApplicable(
            f"{direction}: the tilted expansion is not positive at eps = 0 (factor "
            f"{p0.factor:.3g}) and stays below the target delta on the scan: it has broken "
            "down here and cannot tell whether eps = 0; the saddlepoint method does not apply "
            "to this query (use a certified method)")
    downs = sum(a and not b for a, b in itertools.pairwise(above))
    i = max(j for j, a in enumerate(above) if a)
    ends = [ts[i], *sorted(x for x in near if ts[i] < x < ts[i + 1]), ts[i + 1]]
    if len(ends) > 2:  # the guess tilts inside the cell narrow it (its last sign change)
        up = [g(pts[x]) > 0.0 for x in ends]
        j = max(k for k in range(len(ends) - 1) if up[k] and not up[k + 1])
        ends = ends[j: j + 2]

    def other() -> float:  # the other pair order's final eps (-inf while there is none)
        return max((e for d, e in found.items() if d != direction), default=-math.inf)

    stopped: list[float] = []
    p = yield from refine_root(log_target, pts[ends[0]], pts[ends[1]], other, stopped)
    if stopped:
        notes.append(
            f"{direction}: the root is refined only to eps in [{stopped[0]:.6g}, "
            f"{stopped[1]:.6g}]: its diagnostics fire and that interval lies below the other "
            f"pair order's eps ({other():.6g}, which is reported), so more precision would not "
            "change the result"
        )
    elif not abs(p.log_delta - log_target) <= 1e-6:
        notes.append(
            f"{direction}: the saddlepoint delta jumps across the target near t={p.t:.6g} "
            "(no root; the tilted expansion breaks down there); the jump point is reported"
        )
    if downs > 1:
        notes.append(
            f"{direction}: the saddlepoint delta crosses the target {downs} times in t "
            "(more than one root); the largest is reported"
        )
    return p.eps, p, downs, notes
