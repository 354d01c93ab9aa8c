r"""The public entry points of the saddlepoint accountant: delta(eps) and eps(delta).

Both pair orders are accounted for (for the swapped pair, K_S(t) = K(-1-t)) and the max is
reported with its direction; the searches run in lockstep (:func:`~.driver.drive`). Delta parts
of ApproxDP terms enter exactly through GDP Eq. 13, delta = d + (1 - d) delta_pure (Dong, Roth,
Su, *Gaussian Differential Privacy*, JRSS-B 2022).
"""

from __future__ import annotations

import math
from collections.abc import Generator

import numpy as np

from .._validation import as_float_array, check_delta, check_order
from ..cgf import check_supported, resolve_cache
from ..composition import compose
from ..edgeworth import SERIES_ORDERS
from ..errors import NotApplicable
from ..mechanisms.base import DIRECTION_QP
from ..results import DeltaResult, EpsilonResult
from .diagnostics import (
    accuracy_diagnostics,
    check_points,
    comparison_order,
    finish,
    is_exact_gaussian,
    point_details,
    point_diagnostics,
    regime_diagnostics,
)
from .driver import Request, drive
from .points import Point
from .search import SaturatedError, solve_direction, tilt_search

__all__ = ["METHOD", "saddlepoint_delta", "saddlepoint_epsilon"]

METHOD = "saddlepoint"


def _exp(x: float) -> float:
    """e^x, inf beyond the float range (a degenerate expansion's delta_r far above 1; the
    reported delta is clipped to 1 with a warning), 0 at -inf."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


_ESTIMATE_NOTE = "estimate: the saddlepoint accountant approximates delta(eps); it is not a bound"


RESOLUTION_MAX = 1e-6
"""Largest tolerated (1 + |t|) |K'(t) - eps| at the reported tilt (see :func:`_resolution`)."""


def _resolution(p: Point, eps: float, direction: str) -> list[str]:
    r"""The tilt's resolution of eps: a warning when K'(t) at the reported tilt t misses eps.

    delta(eps) is evaluated at the tilt t with K'(t) = eps; t is a float, so where K''(t) is
    huge (K'' times the spacing of floats near t above the eps of interest, e.g. Gaussian steps
    at a composed mu ~ 4e9: K'' = mu^2 ~ 1.8e19) the tilt found answers for eps' = K'(t) != eps.
    Since :math:`\partial_\varepsilon [K(t) - t\varepsilon] = -t` and the Edgeworth factor
    varies slowly, :math:`(1 + |t|)\,|\varepsilon' - \varepsilon|` estimates the error in
    log delta: above :data:`RESOLUTION_MAX` a diagnostic fires; above 1 (delta off by a factor
    e or more) the method refuses.

    Raises:
        NotApplicable: where the miss is above 1.
    """
    miss = (1.0 + abs(p.t)) * abs(p.eps - eps)
    if not (miss > RESOLUTION_MAX):
        return []
    msg = (f"{direction}: the tilt t={p.t!r} resolves eps={eps!r} only as K'(t)={p.eps!r} "
           f"(K''(t)={p.var:.3g}: the float spacing of t is too coarse)")
    if miss > 1.0:
        raise NotApplicable(f"{msg}; the saddlepoint method cannot answer delta at this eps "
                            "(use 'exact' where it applies, or a certified method)")
    return [f"{msg}; delta is off by a relative ~{miss:.2g}"]


def _rounding(p: Point, direction: str, eps: float | None = None) -> list[str]:
    r"""A warning where float rounding in log delta (:attr:`Point.log_rounding`, the terms of
    K(t) - t K'(t) + (t s)^2/2 cancelling) moves the answer by more than
    :data:`RESOLUTION_MAX` relative: delta by about that error itself, an eps (``eps`` given)
    by that error over |t| (:math:`\partial_\varepsilon \log\delta = -t`), relative to
    max(eps, 1) (absolute below 1).

    Raises:
        NotApplicable: for a delta (``eps`` None) whose log is uncertain by more than 1.
    """
    err = p.log_rounding
    if not (err > 0.0):  # 0 or nan: nothing to say
        return []
    rel = err if eps is None else err / max(abs(p.t), 1e-300) / max(abs(eps), 1.0)
    if not (rel > RESOLUTION_MAX):
        return []
    msg = (f"{direction}: float rounding: log delta at the tilt t={p.t!r} sums terms of size "
           f"{p.log_terms:.3g}, which cancel; their rounding leaves ~{err:.2g} in log delta")
    if eps is None and err > 1.0:
        raise NotApplicable(f"{msg}; the saddlepoint method cannot answer delta here (use "
                            "'exact' where it applies, or a certified method)")
    return [f"{msg} (the {'delta' if eps is None else 'eps'} is off by a relative ~{rel:.2g})"]


def _delta_search(eps: float) -> Generator[Request, dict, Point | SaturatedError]:
    """The saddlepoint point at eps (a search for :func:`drive`), or the saturation found."""
    try:
        t, _ = yield from tilt_search(eps, 0.0)
    except SaturatedError as sat:
        return sat
    return (yield "point", [t])[t].checked()


def _check_points(comp, order: int, found: dict, store) -> dict:
    """The comparison-order points (:func:`~.diagnostics.comparison_order`) at the usable
    points in ``found`` (keyed by (pair order, index)), both pair orders in one batch
    (:func:`~.diagnostics.accuracy_diagnostics`), under the same keys."""
    if comparison_order(order) is None:
        return {}
    usable = {k: p for k, p in found.items()
              if isinstance(p, Point) and p.factor > 0.0 and p.var > 0.0}
    if not usable:
        return {}
    pts = check_points(comp, [k[0] == DIRECTION_QP for k in usable],
                       [p.t for p in usable.values()], store, order)
    return dict(zip(usable, pts, strict=True))


def saddlepoint_delta(composition, eps: float | np.ndarray, order: int = 2, *,
                      cache: bool = True) -> DeltaResult:
    r"""Saddlepoint (tilted-Edgeworth) estimate of delta(eps), vectorized over eps.

    Args:
        composition: A :class:`~numeric.composition.Composition` or anything
            :func:`~numeric.composition.compose` accepts; every mechanism needs a CGF
            (:meth:`~numeric.mechanisms.Mechanism.cgf_batch`).
        eps: eps value(s), finite and >= 0.
        order: Edgeworth order r of the tilted expansion (0..6; 0 is exact for Gaussian).
        cache: Reuse (and fill) the per-mechanism cache (module docstring); False evaluates
            everything afresh. The results agree to rounding either way.

    Returns:
        A :class:`DeltaResult` with the max over pair orders, the winning direction,
        ``estimate=True`` (False only for all-Gaussian compositions), diagnostics in
        ``warnings`` and per-direction, per-eps saddlepoint details (t, s, l3, l4, order
        disagreement) in ``details``.

    Raises:
        ValueError: on invalid arguments.
        NotApplicable: for a mechanism without a CGF ("use aea"), or where the method cannot
            answer (a tilted law that degenerates to a point mass, as for one or a few
            two-point steps far in their tail). Where the tilted Edgeworth factor is not
            positive the expansion gives no delta: delta = 0 is reported with a fired
            diagnostic (not NotApplicable: the AEA honesty check in :mod:`numeric.aea` asks
            for a scalar eps and warns from these diagnostics, and curves keep their other
            points).
    """
    comp = compose(composition)
    e = as_float_array("eps", eps, nonnegative=True)
    order = check_order("order", order, maximum=max(SERIES_ORDERS))
    store = resolve_cache(cache)
    check_supported(comp)
    warns: list[str] = []
    per_dir: dict[str, np.ndarray] = {}
    det: dict[str, list] = {}
    flat = e.reshape(-1)
    inexact = False  # a float-resolution or float-rounding warning: even a Gaussian's is off
    tasks: list[tuple[bool, Generator]] = []
    where: list[tuple[str, int]] = []
    for direction in comp.directions:
        sup = comp.pllr_sup(direction)
        for i, x in enumerate(flat):
            if x < sup:
                tasks.append((direction == DIRECTION_QP, _delta_search(float(x))))
                where.append((direction, i))
    points, _ = drive(comp, order, tasks, store)
    found = dict(zip(where, points, strict=True))
    check = _check_points(comp, order, found, store)
    for direction in comp.directions:
        vals = np.zeros(flat.size)
        det[direction] = []
        for i in range(flat.size):
            p = found.get((direction, i))
            if p is None:
                det[direction].append({"t": math.inf})
                continue
            if isinstance(p, SaturatedError):
                vals[i] = math.exp(min(p.log_bound, 0.0))
                det[direction].append({"t": p.t, "chernoff_log_bound": p.log_bound})
                w = (f"{direction}: K'(t) saturates below eps={float(flat[i])!r} (eps is near the "
                     f"essential supremum of S): no saddlepoint; Chernoff's bound "
                     f"exp({p.log_bound:.6g}) at t={p.t:.3g} is reported instead")
                if w not in warns:
                    warns.append(w)
                continue
            vals[i] = _exp(p.log_delta) if not math.isnan(p.log_delta) else 0.0
            det[direction].append(point_details(p))
            off = [*_resolution(p, float(flat[i]), direction), *_rounding(p, direction)]
            inexact = inexact or bool(off)
            for w in [*point_diagnostics(p, direction), *regime_diagnostics(comp, direction),
                      *accuracy_diagnostics(comp, p, direction, order,
                                            direction == DIRECTION_QP, store,
                                            check=check.get((direction, i))), *off]:
                if w not in warns:
                    warns.append(w)
        per_dir[direction] = vals.reshape(e.shape)
    stacked = np.stack([per_dir[d].reshape(-1) for d in comp.directions])
    win = np.argmax(stacked, axis=0)
    pure = stacked[win, np.arange(stacked.shape[1])]
    if np.any(pure > 1.0):
        warns.append("the saddlepoint delta exceeds 1 at some eps; clipped to 1")
    warnings, fired = finish(comp, warns)  # the one source of details["diagnostics"]
    pure = np.clip(pure, 0.0, 1.0)
    d = comp.delta_part
    total = (d + (1.0 - d) * pure).reshape(e.shape)
    dirs = np.array([comp.directions[i] for i in win]).reshape(e.shape)
    scalar = np.ndim(eps) == 0
    details = {"order": order, "delta_part": d, "note": _ESTIMATE_NOTE, "diagnostics": fired,
               "saddlepoint": {k: (v[0] if scalar else v) for k, v in det.items()}}
    return DeltaResult(
        delta=float(total.reshape(-1)[0]) if scalar else total,
        eps=float(e) if scalar else e,
        method=METHOD,
        estimate=inexact or not is_exact_gaussian(comp),
        direction=str(dirs.reshape(-1)[0]) if scalar else dirs,
        per_direction={k: (float(v.reshape(-1)[0]) if scalar else v) for k, v in per_dir.items()},
        warnings=warnings,
        details=details,
    )


def saddlepoint_epsilon(composition, delta: float, order: int = 2, *,
                        cache: bool = True) -> EpsilonResult:
    r"""Saddlepoint (tilted-Edgeworth) estimate of eps(delta): the largest root, max over orders.

    eps is parametrized by the tilt t (eps = K'(t)); the root of
    log delta_r(t) = log delta is bracketed on a grid in t and refined by a safeguarded
    Newton iteration with the analytic slope (:func:`refine_root`); both pair orders are
    searched in lockstep, one vectorized batch of tilts per step (module docstring).

    Args:
        composition: A composition or anything :func:`~numeric.composition.compose` accepts.
        delta: Target delta in (0, 1).
        order: Edgeworth order r of the tilted expansion (0..6).
        cache: Reuse (and fill) the per-mechanism cache (module docstring); False evaluates
            everything afresh. The results agree to rounding either way.

    Returns:
        An :class:`EpsilonResult` (method ``"saddlepoint"``, ``estimate=True`` except for
        all-Gaussian compositions), with per-direction eps, diagnostics as warnings, and
        ``details["saddlepoint"][direction]`` = t, s, l3, l4, order disagreement, roots and
        evals (the tilts evaluated for that pair order).
        ``epsilon`` is ``inf`` when delta is at or below the composed delta part.

    Raises:
        ValueError: on invalid arguments.
        NotApplicable: for a mechanism without a CGF ("use aea"), or where the method cannot
            answer (a tilted law that degenerates to a point mass, as for one or a few
            two-point steps far in their tail, or no bracket of the target).
    """
    comp = compose(composition)
    delta = check_delta("delta", delta)
    order = check_order("order", order, maximum=max(SERIES_ORDERS))
    store = resolve_cache(cache)
    check_supported(comp)
    d = comp.delta_part
    estimate = not is_exact_gaussian(comp)
    details: dict = {"order": order, "delta_part": d, "note": _ESTIMATE_NOTE, "diagnostics": [],
                     "saddlepoint": {}}
    warns: list[str] = []
    if delta <= d:
        warns.append(
            f"delta={delta!r} is not above the composed delta part {d!r}: no finite epsilon"
        )
        per = {k: math.inf for k in comp.directions}
        return EpsilonResult(math.inf, delta, METHOD, estimate, comp.directions[0], per,
                             tuple(warns), details)
    log_target = math.log((delta - d) / (1.0 - d))
    found: dict[str, float] = {}  # final eps per pair order (shared by the lockstep searches)
    tasks = [(direction == DIRECTION_QP,
              solve_direction(comp, direction, log_target, store, found))
             for direction in comp.directions]
    solved, evals = drive(comp, order, tasks, store)
    check = _check_points(comp, order, {(direction, 0): p for direction, (_, p, _, _)
                                        in zip(comp.directions, solved, strict=True)}, store)
    per_dir: dict[str, float] = {}
    for direction, (eps, p, roots, notes), n_eval in zip(comp.directions, solved, evals,
                                                         strict=True):
        per_dir[direction] = eps
        warns.extend(notes)
        if p is not None:
            details["saddlepoint"][direction] = {**point_details(p, roots), "evals": n_eval}
            warns.extend(point_diagnostics(p, direction))
            off = _rounding(p, direction, eps)
            estimate = estimate or bool(off)
            warns.extend(off)
            warns.extend(accuracy_diagnostics(comp, p, direction, order,
                                              direction == DIRECTION_QP, store, log_target,
                                              check.get((direction, 0))))
        warns.extend(regime_diagnostics(comp, direction))
    warnings, details["diagnostics"] = finish(comp, warns)  # the one source of the state
    direction = max(per_dir, key=per_dir.get)
    return EpsilonResult(per_dir[direction], delta, METHOD, estimate, direction, per_dir,
                         warnings, details)
