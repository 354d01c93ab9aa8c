r"""The points of the figures, computed without matplotlib.

Three figures (each a :class:`FigureData`, drawn by :func:`numeric.plotting.draw.save_figure`
or written as JSON by :meth:`FigureData.to_dict`):

* :func:`tradeoff_data` -- trade-off curves f(alpha) of several compositions on one figure, with
  Gaussian curves G_mu (GDP Def. 2.6) and (eps, delta) curves f_{eps,delta} (GDP Sec. 2.2);
* :func:`delta_data` -- privacy profiles delta(eps);
* :func:`steps_data` -- eps at a fixed delta against the number of steps of a training run.

Each composition's curve is **exact** where a closed form exists (Gaussian: G_mu (x) f_{0,d},
GDP Cor. 3.3 and Eq. 13; randomized response / (eps0, delta)-DP steps sharing eps0: the lower
envelope of the exact profile at the kinks eps = (n - 2k) eps0, which is the whole piecewise
linear curve, see :func:`_pure_kinks`), else an **estimate** by the named method (default
``saddlepoint``), labelled "estimate". With ``certified=True`` each composition also gets a
band computed from certified intervals (numeric's ``certified`` method, plugged in by the
certify extra) and drawn only as far as :mod:`numeric.plotting.bands` proves it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np

from ..composition import Composition, compose
from ..errors import NotApplicable
from ..exact import exact_delta, exact_epsilon, exact_family_of
from ..methods import METHODS, load_plugins
from ..methods import delta as delta_by_method
from ..methods import epsilon as epsilon_by_method
from ..results import float_up, json_number
from ..tradeoff import eps_delta_tradeoff, gaussian_tradeoff, tradeoff_from_delta_curve
from .bands import delta_staircase, float_down, steps_staircase, tradeoff_band

__all__ = ["FigureData", "Series", "delta_data", "steps_data", "tradeoff_data"]

DEFAULT_METHOD = "saddlepoint"
"""Method of the estimate curves where no closed form exists (fast; an estimate)."""
DEFAULT_CERTIFIED_BUDGET = 45.0
"""Seconds for all certified points of one band together (split evenly over the points)."""
_MAX_KINKS = 20_000
_EST_POINTS = 200
_RANGE_DELTA = 1e-8  # the eps range of a figure ends where the estimate's delta reaches this


@dataclass(frozen=True)
class Series:
    """One drawn object: a line (``y``) or a band (``lower``/``upper``) over ``x``.

    ``kind`` is ``exact``, ``estimate``, ``reference`` (G_mu, f_{eps,delta}) or ``certified``.
    A certified band with ``upper == ()`` proves only its lower end. ``intervals`` are the raw
    certified intervals ``(x, lower, upper)`` as exact decimal strings.
    """

    label: str
    kind: str
    x: tuple[float, ...]
    y: tuple[float, ...] = ()
    lower: tuple[float, ...] = ()
    upper: tuple[float, ...] = ()
    method: str = ""
    intervals: tuple[tuple[float, str, str], ...] = ()
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (floats at full precision; inf as null)."""
        out: dict[str, Any] = {"label": self.label, "kind": self.kind, "method": self.method,
                               "x": [json_number(v) for v in self.x]}
        for name in ("y", "lower", "upper"):
            vals = getattr(self, name)
            if vals:
                out[name] = [json_number(v) for v in vals]
        if self.kind == "certified":
            out["upper_proven"] = bool(self.upper)
            out["intervals"] = [{"x": x, "lower": lo, "upper": hi} for x, lo, hi in self.intervals]
        if self.notes:
            out["notes"] = list(self.notes)
        return out


@dataclass(frozen=True)
class FigureData:
    """Everything a figure shows, and the inputs that made it."""

    kind: str
    title: str
    xlabel: str
    ylabel: str
    caption: str
    series: tuple[Series, ...]
    xscale: str = "linear"
    yscale: str = "linear"
    inputs: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict of the plotted points."""
        return {"figure": self.kind, "title": self.title, "xlabel": self.xlabel,
                "ylabel": self.ylabel, "caption": self.caption, "xscale": self.xscale,
                "yscale": self.yscale, "inputs": self.inputs,
                "series": [s.to_dict() for s in self.series]}


# ----------------------------------------------------------------------------------------------
# helpers


def _labelled(compositions, labels) -> list[tuple[str, Composition]]:
    if isinstance(compositions, Composition):
        compositions = [compositions]
    comps = [compose(c) for c in compositions]
    if not comps:
        raise ValueError("compositions must name at least one composition, got none")
    if labels is None:
        labels = [c.describe() for c in comps]
    labels = [str(s) for s in labels]
    if len(labels) != len(comps):
        raise ValueError(f"labels must have one entry per composition, got {len(labels)} for "
                         f"{len(comps)}")
    return list(zip(labels, comps, strict=True))


def _check_points(name: str, n: object, lo: int = 2, hi: int = 2000) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or not (lo <= n <= hi):
        raise ValueError(f"{name} must be a whole number in [{lo}, {hi}], got {n!r}")
    return n


def _check_method(method: str) -> str:
    if method == "certified":
        raise ValueError("method names the estimate curve's method; use certified=True for "
                         "certified bands")
    if method not in METHODS:
        load_plugins()
    if method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    return method


def _require_certified() -> None:
    load_plugins()
    if "certified" not in METHODS:
        raise NotApplicable("certified bands need the certify extra: pip install '.[certify]'")


def _has_exact(comp: Composition) -> bool:
    try:
        exact_family_of(comp)
    except NotApplicable:
        return False
    return True


def _delta_curve(comp: Composition, eps: np.ndarray, method: str) -> tuple[np.ndarray, str, str]:
    """delta(eps) on a grid: ``(values, kind, method)``, exact where a closed form exists."""
    if _has_exact(comp):
        return np.asarray(exact_delta(comp, eps).delta, dtype=float), "exact", "exact"
    vals = np.full(eps.shape, np.nan)
    estimate = _fill(comp, eps, method, vals, np.arange(eps.size))
    if np.all(np.isnan(vals)):
        delta_by_method(comp, eps, method)  # raises the method's own NotApplicable
    return np.clip(vals, 0.0, 1.0), "estimate" if estimate else "exact", method


def _fill(comp: Composition, eps: np.ndarray, method: str, out: np.ndarray,
          idx: np.ndarray, depth: int = 0) -> bool:
    """Fill ``out[idx]`` with the method's delta; a refused eps refuses the whole array, so on
    NotApplicable bisect (at most 2 len(idx) calls) and leave NaN where a single eps is refused.
    Returns whether the answers were estimates."""
    try:
        res = delta_by_method(comp, eps[idx], method)
    except NotApplicable:
        if idx.size == 1 or depth > 40:
            return True
        half = idx.size // 2
        a = _fill(comp, eps, method, out, idx[:half], depth + 1)
        b = _fill(comp, eps, method, out, idx[half:], depth + 1)
        return a or b
    out[idx] = np.asarray(res.delta, dtype=float)
    return bool(res.estimate)


def _epsilon_at(comp: Composition, delta: float, method: str) -> float:
    if _has_exact(comp):
        return float(exact_epsilon(comp, delta).epsilon)
    return float(epsilon_by_method(comp, delta, method).epsilon)


def _eps_max(comps: Sequence[Composition], method: str, eps_max: float | None) -> float:
    """The right end of the eps axis: where the estimates reach delta = 1e-8 (or the given)."""
    if eps_max is not None:
        if not (math.isfinite(eps_max) and eps_max > 0):
            raise ValueError(f"eps_max must be a finite number > 0, got {eps_max!r}")
        return float(eps_max)
    hi = 0.0
    for comp in comps:
        try:
            e = _epsilon_at(comp, _RANGE_DELTA + comp.delta_part, method)
        except (NotApplicable, ValueError):
            e = math.nan
        if math.isfinite(e):
            hi = max(hi, e)
    return hi * 1.05 if hi > 0 else 1.0


def _pure_kinks(comp: Composition) -> np.ndarray | None:
    r"""The eps at which the exact pure-DP profile's lower envelope is the whole curve.

    For n steps of eps0-DP (randomized response worst case) the privacy loss takes the values
    (n - 2k) eps0, so the trade-off curve is piecewise linear with slopes -e^{(n-2k) eps0}
    (and their reciprocals by symmetry); the supporting line f_{eps, delta(eps)} at each such
    eps contains a whole edge, so the maximum of these lines is the curve itself (a convex
    piecewise linear function is the maximum of its edges' lines). Tensoring with f_{0,d}
    scales alpha by 1/(1-d) and keeps the slopes (GDP Eq. 13). None when there are too many.
    """
    kind, eps0, n = exact_family_of(comp)
    if kind != "pure":
        return None
    if n == 0:
        return np.array([0.0])
    if n > _MAX_KINKS:
        return None
    k = np.arange(0, n // 2 + 1)
    return np.unique(np.concatenate(([0.0], (n - 2 * k) * eps0)))


def _alpha_grid(n: int) -> np.ndarray:
    """alpha on [0, 1]: equispaced plus log-spaced points near 0 (where curves are steep)."""
    return np.unique(np.concatenate((np.linspace(0.0, 1.0, n), np.logspace(-8, -1, n // 4))))


def _certified_intervals(comp: Composition, xs: Sequence, query, budget: float):
    """Certified intervals at each x within ``budget`` seconds in all: list of
    ``(x, lo_float, hi_float, lo_str, hi_str)`` and notes on points that were refused."""
    _require_certified()
    out, notes = [], []
    t_end = time.monotonic() + budget
    for i, x in enumerate(xs):
        left = t_end - time.monotonic()
        if left <= 0:
            notes.append(f"time budget of {budget:g} s used up: {len(xs) - i} points skipped")
            break
        try:
            b = query(comp, x, max(left / (len(xs) - i), 0.05))
        except NotApplicable as exc:
            notes.append(f"no certified interval at {x:g}: {exc}")
            continue
        d = b.to_dict()
        lo = Decimal(d["lower"]) if d.get("lower") is not None else Decimal("-Infinity")
        hi = Decimal(d["upper"]) if d.get("upper") is not None else Decimal("Infinity")
        out.append((x, float_down(lo), float_up(hi), str(lo), str(hi)))
    return out, notes


def _delta_query(comp, eps, budget):
    return delta_by_method(comp, float(eps), "certified", time_budget=budget)


# ----------------------------------------------------------------------------------------------
# the three figures


def tradeoff_data(compositions, *, labels: Sequence[str] | None = None,
                  mus: Sequence[float] = (), eps_deltas: Sequence[tuple[float, float]] = (),
                  method: str = DEFAULT_METHOD, certified: bool = False, points: int = 50,
                  alpha_points: int = 401, time_budget: float = DEFAULT_CERTIFIED_BUDGET,
                  ) -> FigureData:
    r"""Trade-off curves f(alpha) of several compositions, with G_mu and f_{eps,delta} curves.

    A composition's curve is exact for Gaussian (G_mu (x) f_{0,d}) and shared-eps0 pure-DP
    compositions (kink envelope, :func:`_pure_kinks`); otherwise it is the lower envelope
    max_i f_{eps_i, delta(eps_i)} of the estimated profile on 200 eps points, an **estimate**
    (GDP Prop. 2.12). With ``certified`` a band from ``points`` certified delta intervals on an
    eps grid starting at 0 is added (proof in :mod:`numeric.plotting.bands`).

    Args:
        compositions: A composition or a sequence of them (anything ``compose`` accepts).
        labels: Legend labels (default: each composition's description).
        mus: GDP parameters mu > 0 of reference curves G_mu (GDP Def. 2.6).
        eps_deltas: (eps, delta) pairs of reference curves f_{eps,delta}.
        method: Method of the estimate curves (not ``certified``).
        certified: Add certified bands (needs the certify extra).
        points: Certified points per band (2..2000).
        alpha_points: Equispaced alpha points of the curves (11..20001).
        time_budget: Seconds for each band's certified points together.

    Returns:
        The figure's :class:`FigureData`.

    Raises:
        ValueError: on bad input. NotApplicable: if a curve cannot be computed.
    """
    pairs = _labelled(compositions, labels)
    method = _check_method(method)
    points = _check_points("points", points)
    alpha = _alpha_grid(_check_points("alpha_points", alpha_points, 11, 20001))
    series: list[Series] = []
    eps_hi = _eps_max([c for _, c in pairs], method, None)
    for label, comp in pairs:
        series.append(_tradeoff_curve(label, comp, alpha, method, eps_hi))
        if certified:
            grid = np.linspace(0.0, eps_hi, points)
            rows, notes = _certified_intervals(comp, grid, _delta_query, time_budget)
            if not rows:
                raise NotApplicable(f"{label}: no certified point; " + "; ".join(notes))
            e, lo, hi = (np.array([r[i] for r in rows]) for i in range(3))
            if e[0] != 0.0:  # delta(0) in [lo_first, 1]: delta is non-increasing and <= 1
                e, lo, hi = np.r_[0.0, e], np.r_[lo[0], lo], np.r_[1.0, hi]
            lower, upper = tradeoff_band(e, lo, hi, alpha)
            series.append(Series(
                f"{label}: certified band ({len(rows)} points)", "certified",
                tuple(alpha.tolist()), lower=tuple(lower.tolist()), upper=tuple(upper.tolist()),
                method="certified", intervals=tuple((r[0], r[3], r[4]) for r in rows),
                notes=(*notes, "proven for f_prof = sup_eps f_{eps,delta(eps)} (= T(P,Q) for a "
                       "symmetric pair): lower = envelope of the upper ends; upper from the "
                       "lower ends, monotonicity and convexity of delta in e^eps "
                       "(numeric.plotting.bands)")))
    for mu in mus:
        series.append(Series(f"G_mu, mu = {mu:g}", "reference", tuple(alpha.tolist()),
                             y=tuple(np.asarray(gaussian_tradeoff(mu, alpha)).tolist()),
                             method="GDP Def. 2.6"))
    for eps, dl in eps_deltas:
        series.append(Series(f"f_(eps,delta), eps = {eps:g}, delta = {dl:g}", "reference",
                             tuple(alpha.tolist()),
                             y=tuple(np.asarray(eps_delta_tradeoff(eps, dl, alpha)).tolist()),
                             method="GDP Sec. 2.2"))
    inputs = {"compositions": [c.describe() for _, c in pairs], "labels": [s for s, _ in pairs],
              "method": method, "mus": list(mus), "eps_deltas": [list(p) for p in eps_deltas],
              "certified": certified, "points": points, "eps_max": eps_hi}
    caption = "; ".join(f"{s}: {c.describe()}" for s, c in pairs if s != c.describe()) or \
        "; ".join(c.describe() for _, c in pairs)
    caption += f" | estimates: {method}" + (f" | certified: {points} eps points on [0, "
                                            f"{eps_hi:.3g}]" if certified else "")
    return FigureData("tradeoff", "Trade-off curves f(alpha)", "type I error alpha",
                      "type II error beta = f(alpha)", caption, tuple(series), inputs=inputs)


def _tradeoff_curve(label: str, comp: Composition, alpha: np.ndarray, method: str,
                    eps_hi: float) -> Series:
    if _has_exact(comp):
        kind, param, _ = exact_family_of(comp)
        d = comp.delta_part
        if kind == "gaussian":
            y = (1.0 - d) * np.asarray(gaussian_tradeoff(param, np.minimum(alpha / (1 - d), 1)))
            y = np.where(alpha <= 1.0 - d, y, 0.0)  # G_mu (x) f_{0,d} (GDP Eq. 13)
            return Series(f"{label} (exact)", "exact", tuple(alpha.tolist()),
                          y=tuple(y.tolist()), method="exact")
        kinks = _pure_kinks(comp)
        if kinks is not None:
            dl = np.asarray(exact_delta(comp, kinks).delta, dtype=float)
            y = np.asarray(tradeoff_from_delta_curve(kinks, dl, alpha))
            return Series(f"{label} (exact)", "exact", tuple(alpha.tolist()),
                          y=tuple(y.tolist()), method="exact")
    grid = np.linspace(0.0, eps_hi, _EST_POINTS)
    dl, kind, used = _delta_curve(comp, grid, method)
    ok = ~np.isnan(dl)
    y = np.asarray(tradeoff_from_delta_curve(grid[ok], dl[ok], alpha))
    word = "estimate" if kind == "estimate" else "exact profile, envelope"
    return Series(f"{label} ({word}, {used})", kind, tuple(alpha.tolist()),
                  y=tuple(y.tolist()), method=used, notes=_gaps(grid, ok, used))


def _gaps(grid: np.ndarray, ok: np.ndarray, method: str) -> tuple[str, ...]:
    """A note naming the eps points the method refused (left out of the curve)."""
    if ok.all():
        return ()
    bad = ", ".join(f"{e:.4g}" for e in grid[~ok][:10])
    return (f"{method} refused {int((~ok).sum())} of {grid.size} eps points (left out): "
            f"eps = {bad}{' ...' if (~ok).sum() > 10 else ''}",)


def delta_data(compositions, *, labels: Sequence[str] | None = None,
               method: str = DEFAULT_METHOD, certified: bool = False, points: int = 50,
               eps_max: float | None = None, time_budget: float = DEFAULT_CERTIFIED_BUDGET,
               ) -> FigureData:
    r"""Privacy profiles delta(eps) of several compositions (log scale in delta).

    Args:
        compositions: A composition or a sequence of them.
        labels: Legend labels (default: the compositions' descriptions).
        method: Method of the curves without a closed form (an estimate).
        certified: Add certified bands: ``points`` intervals on [0, eps_max], joined by the
            monotonicity staircase (:func:`numeric.plotting.bands.delta_staircase`).
        points: Certified points per band (2..2000).
        eps_max: Right end of the eps axis (default: where the estimates reach delta 1e-8).
        time_budget: Seconds for each band's certified points together.

    Returns:
        The figure's :class:`FigureData`.
    """
    pairs = _labelled(compositions, labels)
    method = _check_method(method)
    points = _check_points("points", points)
    eps_hi = _eps_max([c for _, c in pairs], method, eps_max)
    grid = np.linspace(0.0, eps_hi, _EST_POINTS)
    series: list[Series] = []
    for label, comp in pairs:
        dl, kind, used = _delta_curve(comp, grid, method)
        word = "estimate" if kind == "estimate" else "exact"
        series.append(Series(f"{label} ({word}, {used})", kind, tuple(grid.tolist()),
                             y=tuple(dl.tolist()), method=used,
                             notes=_gaps(grid, ~np.isnan(dl), used)))
        if certified:
            cgrid = np.linspace(0.0, eps_hi, points)
            rows, notes = _certified_intervals(comp, cgrid, _delta_query, time_budget)
            if not rows:
                raise NotApplicable(f"{label}: no certified point; " + "; ".join(notes))
            x, lo, hi = delta_staircase([r[0] for r in rows], [r[1] for r in rows],
                                        [r[2] for r in rows])
            series.append(Series(
                f"{label}: certified band ({len(rows)} points)", "certified", tuple(x.tolist()),
                lower=tuple(lo.tolist()), upper=tuple(hi.tolist()), method="certified",
                intervals=tuple((r[0], r[3], r[4]) for r in rows),
                notes=(*notes, "between certified points by monotonicity of delta(eps)")))
    inputs = {"compositions": [c.describe() for _, c in pairs], "labels": [s for s, _ in pairs],
              "method": method, "certified": certified, "points": points, "eps_max": eps_hi}
    caption = "; ".join(c.describe() for _, c in pairs) + f" | estimates: {method}"
    return FigureData("delta", "Privacy profile delta(eps)", "epsilon", "delta(epsilon)",
                      caption, tuple(series), yscale="log", inputs=inputs)


def _flag_outside(line: Series, rows) -> Series:
    """The estimate line with a note naming the step counts where it leaves the proven
    interval (an estimate below a certified lower end under-reports epsilon)."""
    at = dict(zip(line.x, line.y, strict=True))
    low = [m for m, lo, _hi, _a, _b in rows if at.get(float(m), math.nan) < lo]
    high = [m for m, _lo, hi, _a, _b in rows if at.get(float(m), math.nan) > hi]
    extra = []
    if low:
        extra.append(f"estimate BELOW the certified lower end (under-reports eps) at m = "
                     f"{', '.join(str(int(m)) for m in low)}")
    if high:
        extra.append(f"estimate above the certified upper end at m = "
                     f"{', '.join(str(int(m)) for m in high)}")
    if not extra:
        return line
    label = line.label + (" -- under-reports at some m" if low else "")
    return Series(label, line.kind, line.x, y=line.y, method=line.method,
                  notes=(*line.notes, *extra))


def _steps_grid(max_steps: int, n: int) -> np.ndarray:
    return np.unique(np.round(np.logspace(0.0, math.log10(max_steps), n)).astype(np.int64))


def steps_data(composition, delta: float, *, label: str | None = None,
               method: str = DEFAULT_METHOD, certified: bool = False, points: int = 50,
               time_budget: float = DEFAULT_CERTIFIED_BUDGET) -> FigureData:
    r"""eps at ``delta`` after m steps of a training run, for m = 1..M on a log grid.

    Args:
        composition: One mechanism repeated M times (a single-term composition): M is the
            run's length.
        delta: Target delta in (0, 1).
        label: Legend label (default: the mechanism).
        method: Method of the estimate curve (exact where a closed form exists).
        certified: Add a certified band from ``points`` step counts, joined by the monotonicity
            staircase (:func:`numeric.plotting.bands.steps_staircase`).
        points: Step counts on the log grid (2..2000; fewer if M is small).
        time_budget: Seconds for the certified points together.

    Returns:
        The figure's :class:`FigureData`.
    """
    comp = compose(composition)
    if len(comp.terms) != 1:
        raise ValueError("steps needs one mechanism repeated M times (a single-term "
                         f"composition), got {comp.describe()}")
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    method = _check_method(method)
    points = _check_points("points", points)
    mech, max_steps = comp.terms[0]
    label = label or repr(mech)
    grid = _steps_grid(max_steps, points)
    ys, kinds, warned = [], set(), []
    for m in grid:
        c = compose([(mech, int(m))])
        if _has_exact(c):
            ys.append(float(exact_epsilon(c, delta).epsilon))
            kinds.add("exact")
        else:
            try:
                r = epsilon_by_method(c, delta, method)
            except NotApplicable:
                ys.append(math.nan)  # drawn as a gap; null in JSON
                continue
            ys.append(float(r.epsilon))
            kinds.add("estimate" if r.estimate else "exact")
            if r.estimate and r.warnings:
                warned.append(int(m))
    if all(math.isnan(y) for y in ys):
        raise NotApplicable(f"method {method!r} answered at no step count of {comp.describe()}")
    kind = "estimate" if "estimate" in kinds else "exact"
    used = "exact" if kinds == {"exact"} and _has_exact(comp) else method
    warn = (f"{method}'s diagnostics warn (unreliable estimate; method 'auto' or --certified "
            f"decide) at m = {', '.join(map(str, warned))}",) if warned else ()
    series = [Series(f"{label} ({kind}, {used}{'; diagnostics warn' if warned else ''})",
                     kind, tuple(float(m) for m in grid), y=tuple(ys), method=used, notes=warn)]
    if certified:
        def query(_c, m, budget):
            return epsilon_by_method(compose([(mech, int(m))]), delta, "certified",
                                     time_budget=budget)

        _require_certified()
        rows, notes = _certified_intervals(comp, [int(m) for m in grid], query, time_budget)
        if not rows:
            raise NotApplicable(f"{label}: no certified point; " + "; ".join(notes))
        x, lo, hi = steps_staircase([float(r[0]) for r in rows], [max(r[1], 0.0) for r in rows],
                                    [r[2] for r in rows])
        series.append(Series(
            f"{label}: certified band ({len(rows)} points)", "certified", tuple(x.tolist()),
            lower=tuple(lo.tolist()), upper=tuple(hi.tolist()), method="certified",
            intervals=tuple((float(r[0]), r[3], r[4]) for r in rows),
            notes=(*notes, "between certified step counts by monotonicity of eps in m")))
        if kind == "estimate":
            series[0] = _flag_outside(series[0], rows)
    inputs = {"composition": comp.describe(), "delta": delta, "max_steps": max_steps,
              "method": method, "certified": certified, "points": int(grid.size)}
    caption = f"{max_steps} x {mech!r}, delta = {delta:g} | estimates: {method}"
    return FigureData("steps", f"epsilon at delta = {delta:g} during training", "steps m",
                      "epsilon", caption, tuple(series), xscale="log", inputs=inputs)
