"""Root bracketing for privacy profiles that need not be monotone.

Approximate profiles (Edgeworth surrogates) can cross a target delta more than once; eps(delta)
is the *largest* crossing (the smallest eps beyond which the surrogate stays below delta). We scan a
grid, take the last grid point above the target, and refine with Brent's method. No unbounded
loops: the grid and the iteration counts are fixed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import optimize

__all__ = ["Crossing", "largest_crossing"]


@dataclass(frozen=True)
class Crossing:
    """Outcome of :func:`largest_crossing`."""

    root: float
    crossings: int  # number of downward crossings seen on the grid


def largest_crossing(
    f: Callable[[np.ndarray], np.ndarray], lo: float, hi: float, target: float, points: int
) -> Crossing:
    """Largest x in [lo, hi] where f crosses ``target`` downwards (``lo`` if it never does).

    Args:
        f: Vectorized function.
        lo: Left end of the search interval.
        hi: Right end; the caller guarantees f < target beyond it.
        target: Level to cross.
        points: Grid size (>= 3).

    Returns:
        A :class:`Crossing`.
    """
    grid = np.linspace(lo, hi, int(points))
    vals = np.asarray(f(grid), dtype=float)
    above = vals > target
    if not above.any():
        return Crossing(lo, 0)
    downs = int(np.count_nonzero(above[:-1] & ~above[1:]))
    i = int(np.flatnonzero(above)[-1])
    if i == len(grid) - 1:
        raise ValueError("the profile is still above the target at the end of the search range")

    def g(x: float) -> float:
        return float(np.asarray(f(np.array([x])))[0]) - target

    root = optimize.brentq(g, grid[i], grid[i + 1], xtol=1e-14, rtol=8.9e-16, maxiter=200)
    return Crossing(float(root), downs)
