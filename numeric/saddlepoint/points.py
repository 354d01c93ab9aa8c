r"""Saddlepoint points: the tilted-Edgeworth estimate of log delta at a batch of tilts.

For a tilt t (one pair order) with the composed CGF K (:mod:`numeric.cgf`), s^2 = K''(t) and
standardized tilted cumulants :math:`l_j = K^{(j)}(t)/s^j`, a :class:`Point` holds
eps = K'(t) and

.. math::

    \log\delta_r = K(t) - t\varepsilon + \log\Bigl[D_0 + \sum_k c_k D_k\Bigr],\qquad
    D_k = J_k(ts) - J_k((t+1)s)

(the integrals from :func:`numeric.tilted_integrals.d_batch`; the coefficients c_k from the
Edgeworth series map :data:`numeric.edgeworth.SERIES_ORDERS` with l_j in place of lambda_j;
Hall, *The Bootstrap and Edgeworth Expansion*, 1992, Section 2.2; Alghamdi et al.,
arXiv:2208.09595, 2022), the same factor at order r - 1 (a diagnostic) and the analytic slope
d log delta_r / dt of :mod:`numeric.saddlepoint` (package docstring). Batches of a few tilts do
the per-tilt arithmetic in Python floats, larger ones in numpy; both evaluate the same
expressions.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..cgf import CGFCache, composed_cgf_batch
from ..composition import Composition
from ..edgeworth import SERIES_ORDERS, cumulants_needed
from ..errors import NotApplicable
from ..tilted_integrals import d_batch

__all__ = ["CHECK_ORDER", "LOG_ROUNDING_ULPS", "Point", "comparison_order", "point_derivatives",
           "points_batch"]

CHECK_ORDER = 2  # orders below this are compared with this order, the others with r + 1

_SLOPE_STEP = 1e-6  # central-difference step (in t) of the series coefficients c_k(l(t))
LOG_ROUNDING_ULPS = 4.0
"""Units of the last place of the largest term of log delta's sum counted as its float
rounding (:attr:`Point.log_rounding`): each of the three terms and the composed K(t), a sum over
the terms of the composition, carries a few."""
_KRANGE = np.arange(64.0)


@dataclass(slots=True)
class Point:
    """The saddlepoint approximation at tilt t (one pair order)."""

    t: float
    eps: float
    log_delta: float  # -inf where the tilted-Edgeworth factor is <= 0
    factor: float
    factor_lower: float  # the same factor at order r - 1 (nan at order 0)
    s: float
    lams: tuple[float, ...] = ()  # l_3, l_4, ... (standardized tilted cumulants)
    slope: float = math.nan  # d log_delta / dt (nan where the factor is <= 0)
    var: float = math.nan  # K''(t) (the point is unusable unless > 0)
    log_base: float = math.nan  # log_delta - log(factor) (factor scaled as in d_batch)
    dfactor: float = math.nan  # d factor / dt, same scale
    log_terms: float = math.nan  # |K(t)| + |t K'(t)| + the scale: the terms log_base sums

    @property
    def log_rounding(self) -> float:
        r"""Float rounding in log delta: :data:`LOG_ROUNDING_ULPS` units of the last place of
        the largest term of ``log_base`` (K(t) - t K'(t) + (t s)^2/2 at t < 0). Where those
        terms are huge and cancel, their rounding alone moves log delta: a Gaussian at a
        composed mu = 1.29e8 has K(-1/2) = -mu^2/8 = -2.08e15, whose float spacing is 0.25,
        and delta(0) came out e^-0.25 = 0.7788 instead of 1 (fuzz seed 1303). nan where the
        point has no log_base."""
        return self.log_terms * LOG_ROUNDING_ULPS * 2.0**-52

    @property
    def lam(self) -> dict[int, float]:
        """{j: l_j}, j >= 3."""
        return dict(enumerate(self.lams, start=3))

    @property
    def disagreement(self) -> float:
        """Relative disagreement of the factors of orders r and r - 1 (0 at order 0)."""
        if not math.isfinite(self.factor_lower):
            return 0.0
        return abs(self.factor - self.factor_lower) / max(abs(self.factor), 1e-300)

    def checked(self) -> Point:
        """The point itself, where the tilted variance K''(t) is positive.

        Raises:
            NotApplicable: where it is not (underflowed to 0, or not finite): the tilted law is
                numerically a point mass, as far out in the tail of an atomic PLLR (a few
                two-point steps), so the saddlepoint method cannot answer this query.
        """
        if not (self.var > 0.0):
            raise NotApplicable(
                f"the tilted variance K''(t) is {self.var!r} at t={self.t!r} (not > 0): the "
                "tilted law is numerically a point mass there (e.g. far in the tail of an "
                "atomic PLLR, or a root at the edge of the support of S); the saddlepoint method "
                "does not apply to this query (use the 'exact' or a certified method)")
        return self


@functools.lru_cache(maxsize=32)
def _series_width(order: int) -> int:
    """1 + the highest Hermite index of the coefficients of orders ``order`` and ``order - 1``."""
    top = 0
    for r in (order, order - 1):
        if r in SERIES_ORDERS:
            need, fn = SERIES_ORDERS[r]
            top = max(top, max(fn({j: 1.0 for j in range(3, need + 1)}), default=0))
    return top + 1


def _coefficients(fn: Callable, lam: dict[int, np.ndarray], size: int,
                  width: int) -> np.ndarray:
    """Matrix C[i, k] = c_k (C[:, 0] = 1, k < width) of the series coefficient map ``fn`` over
    rows of standardized cumulants; maps written for floats only are applied row by row."""
    out = np.zeros((size, width))
    out[:, 0] = 1.0
    try:
        coeffs = fn(lam)
    except (TypeError, ValueError):
        for i in range(size):
            for k, c in fn({j: float(v[i]) for j, v in lam.items()}).items():
                out[i, k] = c
        return out
    for k, c in coeffs.items():
        out[:, k] = c
    return out


def comparison_order(order: int) -> int | None:
    """The order whose factor checks an order-``order`` answer at its tilt
    (:func:`~numeric.saddlepoint.diagnostics.accuracy_diagnostics`).

    Args:
        order: The Edgeworth order r of the answer.

    Returns:
        :data:`CHECK_ORDER` below it, else r + 1; None where that order is not registered
        (the highest order is checked against r - 1 only).
    """
    other = max(order + 1, CHECK_ORDER)
    return other if other in SERIES_ORDERS else None


def point_derivatives(order: int) -> int:
    """The CGF derivatives evaluated per tilt for an order-``order`` answer: its own cumulants
    and those of its comparison order (:func:`comparison_order`), so that the check at the
    answer's tilt finds its CGF rows in the cache; l_3 and l_4 (the diagnostics' inputs) at
    every order; one more for the slope.

    Args:
        order: The Edgeworth order r of the answer.

    Returns:
        The number n of derivatives K^(1..n) (:func:`~numeric.cgf.composed_cgf_batch`).
    """
    other = comparison_order(order)
    need = max(4, cumulants_needed(order), 0 if other is None else cumulants_needed(other))
    return need + 1


def points_batch(comp: Composition, order: int, swap: np.ndarray, t: np.ndarray,
                  cache: CGFCache, derivatives: int | None = None) -> list[Point]:
    """Saddlepoint points at the tilts ``t`` (row i in the swapped order if swap[i]).

    Args:
        comp: The composition.
        order: Edgeworth order r of the tilted expansion.
        swap: Bool per row: the swapped pair order.
        t: Tilts (1-D float array).
        cache: The per-mechanism cache (CGF rows).
        derivatives: The CGF derivatives to evaluate (:func:`point_derivatives` of ``order``
            by default; at least ``cumulants_needed(order) + 1``): the checks of an answer pass
            the answer's, so that they reuse its cached rows.

    Returns:
        One :class:`Point` per tilt; where K''(t) is not positive, a point with only t, eps and
        var set (log_delta = -inf; :meth:`Point.checked` refuses it).
    """
    # l_3 and l_4 are the diagnostics' inputs at every order (at orders 0 and 1 the series
    # itself needs fewer: without them a far-from-normal tilted law passed unflagged)
    n = point_derivatives(order) if derivatives is None else derivatives
    need = n - 1
    if need < max(4, cumulants_needed(order)):
        raise ValueError(f"derivatives must be at least {max(4, cumulants_needed(order)) + 1} "
                         f"at order {order}, got {derivatives!r}")
    k0, d = composed_cgf_batch(comp, swap, t, n, cache)
    ok = d[:, 1] > 0.0
    if ok.all():
        return _points_of_rows(order, need, t, k0, d)
    rows = np.flatnonzero(ok)
    out = [Point(ti, ei, -math.inf, math.nan, math.nan, math.nan, (), math.nan, vi)
           for ti, ei, vi in zip(t.tolist(), d[:, 0].tolist(), d[:, 1].tolist(), strict=True)]
    if rows.size:
        good = _points_of_rows(order, need, t[rows], k0[rows], d[rows])
        for i, p in zip(rows.tolist(), good, strict=True):
            out[i] = p
    return out


def _points_of_rows(order: int, need: int, t: np.ndarray, k0: np.ndarray,
                    d: np.ndarray) -> list[Point]:
    """:func:`points_batch` for rows that all have K'' > 0."""
    cols = _point_columns(order, need, t, k0, d)
    return list(map(Point, t.tolist(), d[:, 0].tolist(), *cols[:6], d[:, 1].tolist(),
                    *cols[6:]))


_SMALL_BATCH = 4  # up to this many rows the point arithmetic is done in Python floats


def _point_columns(order: int, need: int, t: np.ndarray, k0: np.ndarray,
                   d: np.ndarray) -> tuple[list, ...]:
    """Columns ``(log_delta, factor, factor_lower, s, lams, slope, log_base, dfactor,
    log_terms)`` (one list entry per row) for rows with K'' > 0 (module docstring; the D
    integrals by :func:`d_batch`).

    The arithmetic after the integrals is a few dozen operations per row: numpy for larger
    batches, Python floats for small ones (where numpy's per-call overhead would dominate);
    both evaluate the same expressions.
    """
    with np.errstate(all="ignore"):  # degenerate tilts give inf/nan, handled as such
        s = np.sqrt(d[:, 1])
        width = _series_width(order)
        ls, D, Ds = d_batch(t * s, s, width - 1)
        if t.size <= _SMALL_BATCH:
            try:
                return _point_rows(order, need, t, k0, d, s, ls, D, Ds)
            except (OverflowError, ZeroDivisionError):  # Python floats: numpy's inf/nan instead
                pass
        return _point_arrays(order, need, t, k0, d, s, ls, D, Ds)


def _point_rows(order: int, need: int, t: np.ndarray, k0: np.ndarray, d: np.ndarray,
                s: np.ndarray, ls: np.ndarray, D: np.ndarray,
                Ds: np.ndarray) -> tuple[list, ...]:
    """:func:`_point_columns` in Python floats, one row at a time."""
    fn = SERIES_ORDERS[order][1]
    fn_lower = SERIES_ORDERS[order - 1][1] if order > 0 else None
    h = _SLOPE_STEP
    out = []
    for ti, k0i, di, si, lsi, dd, dsd in zip(t.tolist(), k0.tolist(), d.tolist(), s.tolist(),
                                             ls.tolist(), D.tolist(), Ds.tolist(),
                                             strict=True):
        inv = 1.0 / si
        ds = di[2] * (0.5 * inv)  # s' = K'''/(2 s)
        lam, dlam = {}, {}
        scale = inv * inv
        for j in range(3, need + 1):  # l_j and l_j'
            scale *= inv
            lam[j] = di[j - 1] * scale
            dlam[j] = di[j] * scale - lam[j] * (j * ds * inv)
        coeffs = fn(lam)
        factor = dd[0] + sum(c * dd[k] for k, c in coeffs.items())
        lower = (dd[0] + sum(c * dd[k] for k, c in fn_lower(lam).items())
                 if fn_lower is not None else math.nan)
        base = k0i - ti * di[0] + lsi
        terms = abs(k0i) + abs(ti * di[0]) + lsi
        da1 = si + ti * ds  # a1' = s + t s'
        dfac = dsd[0] * ds - dd[1] * da1
        if coeffs:
            up = fn({j: lam[j] + h * dlam[j] for j in lam})
            down = fn({j: lam[j] - h * dlam[j] for j in lam})
            for k, c in coeffs.items():
                dfac += ((up[k] - down[k]) * (0.5 / h) * dd[k]
                         + c * (dsd[k] * ds - (dd[k + 1] + k * dd[k - 1]) * da1))
        lams = tuple(lam.values())
        if factor > 0.0:
            out.append((base + math.log(factor), factor, lower, si, lams,
                        dfac / factor - ti * di[1], base, dfac, terms))
        else:
            out.append((-math.inf, factor, lower, si, lams, math.nan, base, dfac, terms))
    return tuple(map(list, zip(*out, strict=True)))


def _point_arrays(order: int, need: int, t: np.ndarray, k0: np.ndarray, d: np.ndarray,
                  s: np.ndarray, ls: np.ndarray, D: np.ndarray,
                  Ds: np.ndarray) -> tuple[list, ...]:
    """:func:`_point_columns` in numpy (rows with K'' > 0)."""
    size = t.size
    inv = 1.0 / s
    ds = d[:, 2] * (0.5 * inv)  # s' = K'''/(2 s)
    lam, dlam = {}, {}
    scale = inv * inv
    for j in range(3, need + 1):  # l_j = K^(j)/s^j and l_j' = K^(j+1)/s^j - j l_j s'/s
        scale = scale * inv
        lam[j] = d[:, j - 1] * scale
        dlam[j] = d[:, j] * scale - lam[j] * (j * ds * inv)
    fn = SERIES_ORDERS[order][1]
    width = _series_width(order)
    h = _SLOPE_STEP
    if width > 1:  # c_k(l), c_k(l + h l'), c_k(l - h l') in one call
        stacked = {j: np.concatenate([lam[j], lam[j] + h * dlam[j], lam[j] - h * dlam[j]])
                   for j in lam}
        coef = _coefficients(fn, stacked, 3 * size, width).reshape(3, size, width)
    else:
        coef = np.ones((1, size, 1))
    dk = D[:, :width]
    sums = np.einsum("crk,rk->cr", coef, dk)
    factor = sums[0]
    if order > 0:
        lower = np.einsum("rk,rk->r", _coefficients(SERIES_ORDERS[order - 1][1], lam, size,
                                                    width), dk)
    else:
        lower = np.full(size, math.nan)
    log_base = k0 - t * d[:, 0] + ls
    terms = np.abs(k0) + np.abs(t * d[:, 0]) + ls
    log_delta = log_base + np.log(factor)
    # the slope d log_delta / dt (module docstring)
    shift = D[:, 1:].copy()  # D_{k+1} + k D_{k-1}
    shift[:, 1:] += _KRANGE[1:width] * D[:, : width - 1]
    shift *= (s + t * ds)[:, None]  # a1' = s + t s'
    dsd = Ds * ds[:, None]
    dsd -= shift
    dfac = np.einsum("rk,rk->r", coef[0], dsd)
    if width > 1:
        dfac += (sums[1] - sums[2]) * (0.5 / h)
    slope = dfac / factor - t * d[:, 1]
    positive = factor > 0.0
    if not positive.all():
        log_delta = np.where(positive, log_delta, -math.inf)
        slope = np.where(positive, slope, math.nan)
    lams = (list(zip(*(v.tolist() for v in lam.values()), strict=True)) if lam
            else [()] * size)
    return (log_delta.tolist(), factor.tolist(), lower.tolist(), s.tolist(), lams,
            slope.tolist(), log_base.tolist(), dfac.tolist(), terms.tolist())

