"""The lockstep driver of the saddlepoint searches.

Every search of :mod:`numeric.saddlepoint` (one per pair order, and per eps value in
:func:`~numeric.saddlepoint.saddlepoint_delta`) is a generator that yields a :data:`Request` --
``("cgf", tilts)`` for rows [K', K'', K] of the composed CGF, or ``("point", tilts)`` for
:class:`~numeric.saddlepoint.points.Point` s -- and is sent the values. :func:`drive` runs them
in lockstep, so one vectorized batch per round serves every search that is still running.
"""

from __future__ import annotations

from collections.abc import Generator

import numpy as np

from ..cgf import CGFCache, composed_cgf_batch
from ..composition import Composition
from ..errors import NotApplicable
from .points import points_batch

__all__ = ["Request", "drive"]

_POINT_MEMO_MAX = 2048  # points kept per composition and order (emptied when full)
_MAX_ROUNDS = 2000  # batches per query; every search below is bounded far below this

Request = tuple[str, list[float]]  # ("cgf" | "point", tilts)


def drive(comp: Composition, order: int, tasks: list[tuple[bool, Generator]],
          cache: CGFCache) -> tuple[list, list[int]]:
    """Run the searches ``tasks`` = [(swap, generator)] in lockstep.

    Each generator yields ``(kind, tilts)`` and is sent a dict tilt -> value: for "cgf" the row
    [K', K'', K] of the composed CGF, for "point" a :class:`Point`. All requests of a round are
    evaluated as one batch per kind (shared tilts once). Points are kept in ``cache`` per
    composition (with its counts) and order, so a later query on the same composition (another
    delta) finds the grid and bracket points it shares.

    Args:
        comp: The composition.
        order: Edgeworth order r of the tilted expansion.
        tasks: ``(swap, generator)`` per search (swap: the pair order (Q, P)).
        cache: The per-mechanism cache.

    Returns:
        The generators' return values and the number of tilts each one caused to be evaluated
        (not found in the cache).

    Raises:
        NotApplicable: if a mechanism has no CGF, a search needs a point where the tilted law
            degenerates (:meth:`Point.checked`), or the searches do not finish.
    """
    points = cache.get(("points", comp.terms, order), dict)  # exact points of earlier queries
    if len(points) > _POINT_MEMO_MAX:
        points.clear()
    memo: dict[str, dict[tuple[bool, float], object]] = {"cgf": {}, "point": points}
    results: list = [None] * len(tasks)
    evals = [0] * len(tasks)
    requests: dict[int, Request] = {}
    for i, (_, gen) in enumerate(tasks):
        try:
            requests[i] = next(gen)
        except StopIteration as stop:
            results[i] = stop.value
    for _ in range(_MAX_ROUNDS):
        if not requests:
            return results, evals
        for kind in ("cgf", "point"):
            rows: dict[tuple[bool, float], int] = {}
            for i, (k, ts) in requests.items():
                if k != kind:
                    continue
                for x in ts:
                    key = (tasks[i][0], x)
                    if key not in memo[kind] and key not in rows:
                        rows[key] = i
                        evals[i] += 1
            if not rows:
                continue
            swap = np.array([key[0] for key in rows], dtype=bool)
            t = np.array([key[1] for key in rows], dtype=float)
            if kind == "cgf":
                k0, der = composed_cgf_batch(comp, swap, t, 2, cache)
                vals = list(np.column_stack([der, k0]))  # [K', K'', K]
            else:
                vals = points_batch(comp, order, swap, t, cache)
            memo[kind].update(zip(rows, vals, strict=True))
        for i in list(requests):
            kind, ts = requests[i]
            reply = {x: memo[kind][(tasks[i][0], x)] for x in ts}
            try:
                requests[i] = tasks[i][1].send(reply)
            except StopIteration as stop:
                results[i] = stop.value
                del requests[i]
    raise NotApplicable("the saddlepoint search did not converge")  # pragma: no cover

