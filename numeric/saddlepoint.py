r"""The saddlepoint (tilted-Edgeworth) accountant -- an *estimate*, never a bound.

Exact identity (exponential tilting; Daniels, *Saddlepoint approximations in statistics*, Ann.
Math. Statist. 25, 1954; the saddle-point accountant of Alghamdi, Gomez, Asoodeh, Calmon,
Kosut, Sankar, arXiv:2208.09595, 2022). Let S be the composed PLLR under Q (MATH.md section 1)
with cumulant generating function :math:`K(t) = \log E_Q e^{tS} = \sum_i m_i K_i(t)`. For any
real t where K is finite, with the tilted law :math:`dQ_t = e^{tS - K(t)} dQ` and
:math:`Z = S - \varepsilon`,

.. math::

    \delta(\varepsilon) = E_Q\bigl[(1 - e^{\varepsilon - S})_+\bigr]
        = e^{K(t) - t\varepsilon}\, E_t\bigl[w_t(Z)\bigr], \qquad
    w_t(z) = e^{-tz}\,(1 - e^{-z})_+ .

Choosing t at the saddlepoint :math:`K'(t) = \varepsilon` centres the tilted law at Z = 0. Its
variance is :math:`s^2 = K''(t)` and its standardized cumulants are
:math:`l_j = K^{(j)}(t)/s^j`. Replacing the law of Z/s by its order-r Edgeworth density
:math:`\varphi(y)[1 + \sum_k c_k He_k(y)]` (Hall, *The Bootstrap and Edgeworth Expansion*, 1992,
Section 2.2; the coefficients c_k come from :func:`numeric.edgeworth.series_coefficients` with
l_j in place of lambda_j; r = 2 gives c_3 = l_3/6, c_4 = l_4/24, c_6 = l_3^2/72) gives

.. math::

    \delta_r(\varepsilon) = e^{K(t) - t\varepsilon}
        \Bigl[D_0 + \sum_k c_k D_k\Bigr],\qquad
    D_k = J_k(a_1) - J_k(a_2),\quad a_1 = ts,\ a_2 = (t+1)s,

    J_k(a) = \int_0^\infty e^{-ay}\varphi(y) He_k(y)\,dy .

The CGF K and its derivatives, per mechanism and composed, come from :mod:`numeric.cgf`
(:func:`pllr_cgf`; the formulas per mechanism are in its docstring); the integrals J_k and D_k
from :mod:`numeric.tilted_integrals` (a recursion for small a, Gauss-Laguerre for a >= 3, the
difference D_k taken directly where it would cancel, negative tilts t in (-1, 0) -- eps below
the mean of S -- with the factor e^{a_1^2/2} carried in log space). At order 0 the method is
exact for Gaussian compositions (the tilted law of a Gaussian is Gaussian).

eps(delta): t parametrizes eps = K'(t) monotonically, so eps(delta) is a 1-D root find in t of
:math:`g(t) = \log\delta_r(t) - \log\delta`. Per pair order: the tilt t_0 of eps = 0
(K'(t_0) = 0, in [-1, 0]); a bracket t_hi from the sequence 1, 3, 7, ..., 2 t_hi + 1 (the first
t_hi with g(t_hi) < 0 and g(2 t_hi + 1) < 0); a 10-point grid scan on [t_0, t_hi] that counts
the down-crossings (more than one root is flagged; the largest is reported); and a safeguarded
Newton refinement on the last sign change (narrowed by the guess tilts of closed-form CGFs,
below, that fall inside that grid cell), started from the root of the cubic Hermite
interpolant of g on the cell (with,
where the two slopes differ by more than a factor 10, the delta Newton step from the lower end
as a second start) and using the analytic slope

.. math::

    \frac{d}{dt}\log\delta_r = -t K''(t) + \frac{F'(t)}{F(t)},\qquad
    F = D_0 + \sum_k c_k D_k,\qquad
    F' = \sum_k c_k' D_k + \sum_{k \ge 0} c_k\Bigl[-(D_{k+1} + k D_{k-1})\,a_1'
        + \bigl(J_{k+1}(a_2) + k J_{k-1}(a_2)\bigr)\,s'\Bigr],

with c_0 = 1, :math:`s' = K'''/(2s)`, :math:`a_1' = s + t s'` (from
:math:`\partial_a J_k(a) = -(J_{k+1}(a) + k J_{k-1}(a))`, since y He_k = He_{k+1} + k He_{k-1}),
:math:`l_j' = K^{(j+1)}/s^j - j l_j s'/s` and c_k' by a central difference of the coefficient
map along l'. The slope only steers the iteration: each Newton batch evaluates the step for
g and the step for :math:`\psi = \delta_r/\delta - 1` (which stays smooth where the factor
F approaches or crosses 0 and log delta_r does not), plus the bisection point when the bracket
stops halving; the bracket keeps its largest sign change. The root is where g itself vanishes
(|g| <= 1e-13, or a Newton step below 1e-11 relative), or -- without evaluating it -- one small
step (below 1e-4 relative in t) from the best point when two estimates of that step agree to
1e-10 relative in t and in eps: the two Newton steps, or an inverse quintic Hermite
interpolant t(g) through the best point and its nearest evaluated neighbours on either side
and the two inverse cubic ones through the best point and one neighbour
(:func:`_inverse_hermite_root`); eps there is the Taylor polynomial
:math:`K' + K''h + K'''h^2/2 + K''''h^3/6` (h the step) at the best point. A pair order
whose best point fails the diagnostics and whose bracket lies below the other order's final
eps (so the reported max cannot depend on it) is bisected to a 1e-2 relative eps bracket and
stops there, with a warning naming the bracket (its per-direction value carries that
precision only). Both pair orders are accounted for (for the swapped pair, K_S(t) =
K(-1-t)); the max is reported with its direction. Delta parts of ApproxDP terms enter exactly
through GDP Eq. 13, delta = d + (1 - d) delta_pure.

Evaluation: every stage evaluates a *batch* of tilts at once, vectorized over t (the CGF
quadrature, the integrals D_k and the series coefficients; batches of a few tilts do the
per-tilt arithmetic in Python floats, where numpy's per-call overhead would dominate), and the
two pair orders (and, in :func:`saddlepoint_delta`, all eps values) are solved in lockstep, so
one batch serves every search that is still running. The first batch holds the bracket
candidates up to the root guessed by a normal approximation (the root of
:math:`-v t^2/2 - \log(\sqrt{2\pi v}\,t(t+1)) = \log\delta`, v = K''(t_0); where it was
checked, outside the one-big-step regime, the guess was within -7% .. +11% of the root) and
the grids of the one or two bracket ends t_hi it makes likely; when the bracket scan confirms
one of them the grid batch is saved. No grids are guessed beyond t = 63 or in the one-big-step
regime (sum(rate * m) < 10 for subsampled Gaussians), where the guess can be off by a factor
50. For closed-form CGFs (new tilts cost no quadrature) five tilts at 0.8 .. 1.2 times the
guess join the first batch: they narrow the grid cell of the root where the grid is coarse
against 1/s (large m). A well-behaved query then takes two batches (bracket and grid, one
refinement step), whatever m is; the bracket, grid and root are exactly those described above,
whether or not they were guessed.

Caching: data that depends on neither m nor delta (quadrature rules, the CGF rows at every tilt
evaluated, and the eps = 0 tilt t_0 with K''(t_0) of each pair order, keyed by the mechanisms
and their count *proportions* since K_S/m does not depend on m) is kept in the per-mechanism
cache of :mod:`numeric.cgf`, and the points evaluated for a composition (keyed by its terms
with their counts, and the order) in the same cache, so a query for another delta on the same
composition reuses its grid and bracket points. It holds exact values, not interpolants, so
cached and uncached results agree to rounding; ``cache=False`` bypasses it and
:func:`clear_cgf_cache` empties it.

Diagnostics (always computed; warnings and ``details``): |l_3| > 0.2 or |l_4| > 0.1 at the
saddlepoint, relative disagreement above 1e-3 between orders r and r - 1, more than one root,
a non-positive tilted-Edgeworth factor, and -- by regime rather than by value -- a composition
of Poisson-subsampled Gaussians whose expected number of sampled steps sum(rate * m) is below
10 (the bimodal "one big step" regime, where the benchmark's certified references are too wide
to establish the estimate's accuracy). They fire where the tilted law is far from normal. The
method then does *not* fall back silently to AEA; the warning says whether the ``certified``
method is available, and the ``auto`` method (:mod:`numeric.auto`) returns the certified
enclosure there when it is.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass

import numpy as np

from ._validation import as_float_array, check_delta, check_order
from .cgf import (
    _Cache,
    _check_supported,
    _closed_form,
    _composed_batch,
    _pllr_inf,
    _pllr_sup,
    _resolve_cache,
    clear_cgf_cache,
    pllr_cgf,
)
from .composition import Composition, compose
from .edgeworth import SERIES_ORDERS, cumulants_needed
from .mechanisms import ApproxDP, PoissonSubsampledGaussian, RandomizedResponse
from .mechanisms.base import DIRECTION_QP
from .results import DeltaResult, EpsilonResult
from .tilted_integrals import _KRANGE, _d_batch

__all__ = ["clear_cgf_cache", "pllr_cgf", "saddlepoint_delta", "saddlepoint_epsilon"]

METHOD = "saddlepoint"
L3_MAX = 0.2
L4_MAX = 0.1
ORDER_DISAGREEMENT_MAX = 1e-3
FEW_SAMPLED_STEPS = 10.0  # sum(rate * m) below this: the "one big step" regime
_SLOPE_STEP = 1e-6  # central-difference step (in t) of the series coefficients c_k(l(t))
_POINT_MEMO_MAX = 2048  # points kept per composition and order (emptied when full)
_MAX_ROUNDS = 2000  # batches per query; every search below is bounded far below this


# --------------------------------------------------------------------------------------------
# Saddlepoint points (batched) and the lockstep driver
# --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Point:
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
    log_base: float = math.nan  # log_delta - log(factor) (factor scaled as in _d_batch)
    dfactor: float = math.nan  # d factor / dt, same scale

    @property
    def lam(self) -> dict[int, float]:
        """{j: l_j}, j >= 3."""
        return dict(enumerate(self.lams, start=3))

    @property
    def disagreement(self) -> float:
        if not math.isfinite(self.factor_lower):
            return 0.0
        return abs(self.factor - self.factor_lower) / max(abs(self.factor), 1e-300)

    def checked(self) -> _Point:
        """The point itself; raises ValueError where the tilted variance is not positive."""
        if not (self.var > 0.0):
            raise ValueError(
                f"the tilted variance K''(t) must be > 0, got {self.var!r} at t={self.t!r}")
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


def _points_batch(comp: Composition, order: int, swap: np.ndarray, t: np.ndarray,
                  cache: _Cache) -> list[_Point]:
    """Saddlepoint points at the tilts ``t`` (row i in the swapped order if swap[i])."""
    need = max(2, cumulants_needed(order))
    k0, d = _composed_batch(comp, swap, t, need + 1, cache)
    ok = d[:, 1] > 0.0
    if ok.all():
        return _points_of_rows(order, need, t, k0, d)
    rows = np.flatnonzero(ok)
    out = [_Point(ti, ei, -math.inf, math.nan, math.nan, math.nan, (), math.nan, vi)
           for ti, ei, vi in zip(t.tolist(), d[:, 0].tolist(), d[:, 1].tolist(), strict=True)]
    if rows.size:
        good = _points_of_rows(order, need, t[rows], k0[rows], d[rows])
        for i, p in zip(rows.tolist(), good, strict=True):
            out[i] = p
    return out


def _points_of_rows(order: int, need: int, t: np.ndarray, k0: np.ndarray,
                    d: np.ndarray) -> list[_Point]:
    """:func:`_points_batch` for rows that all have K'' > 0."""
    cols = _point_columns(order, need, t, k0, d)
    return list(map(_Point, t.tolist(), d[:, 0].tolist(), *cols[:6], d[:, 1].tolist(),
                    *cols[6:]))


_SMALL_BATCH = 4  # up to this many rows the point arithmetic is done in Python floats


def _point_columns(order: int, need: int, t: np.ndarray, k0: np.ndarray,
                   d: np.ndarray) -> tuple[list, ...]:
    """Columns ``(log_delta, factor, factor_lower, s, lams, slope, log_base, dfactor)`` (one
    list entry per row) for rows with K'' > 0 (module docstring; the D integrals by
    :func:`_d_batch`).

    The arithmetic after the integrals is a few dozen operations per row: numpy for larger
    batches, Python floats for small ones (where numpy's per-call overhead would dominate);
    both evaluate the same expressions.
    """
    with np.errstate(all="ignore"):  # degenerate tilts give inf/nan, handled as such
        s = np.sqrt(d[:, 1])
        width = _series_width(order)
        ls, D, Ds = _d_batch(t * s, s, width - 1)
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
                        dfac / factor - ti * di[1], base, dfac))
        else:
            out.append((-math.inf, factor, lower, si, lams, math.nan, base, dfac))
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
            slope.tolist(), log_base.tolist(), dfac.tolist())


_Request = tuple[str, list[float]]  # ("cgf" | "point", tilts)


def _drive(comp: Composition, order: int, tasks: list[tuple[bool, Generator]],
           cache: _Cache) -> tuple[list, list[int]]:
    """Run the searches ``tasks`` = [(swap, generator)] in lockstep.

    Each generator yields ``(kind, tilts)`` and is sent a dict tilt -> value: for "cgf" the row
    [K', K'', K] of the composed CGF, for "point" a :class:`_Point`. All requests of a round are
    evaluated as one batch per kind (shared tilts once). Points are kept in ``cache`` per
    composition (with its counts) and order, so a later query on the same composition (another
    delta) finds the grid and bracket points it shares. Returns the generators' return values
    and the number of tilts each one caused to be evaluated (not found in the cache).
    """
    points = cache.get(("points", comp.terms, order), dict)  # exact points of earlier queries
    if len(points) > _POINT_MEMO_MAX:
        points.clear()
    memo: dict[str, dict[tuple[bool, float], object]] = {"cgf": {}, "point": points}
    results: list = [None] * len(tasks)
    evals = [0] * len(tasks)
    requests: dict[int, _Request] = {}
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
                k0, der = _composed_batch(comp, swap, t, 2, cache)
                vals = list(np.column_stack([der, k0]))  # [K', K'', K]
            else:
                vals = _points_batch(comp, order, swap, t, cache)
            memo[kind].update(zip(rows, vals, strict=True))
        for i in list(requests):
            kind, ts = requests[i]
            reply = {x: memo[kind][(tasks[i][0], x)] for x in ts}
            try:
                requests[i] = tasks[i][1].send(reply)
            except StopIteration as stop:
                results[i] = stop.value
                del requests[i]
    raise ValueError("the saddlepoint search did not converge")  # pragma: no cover


def _tilt_search(eps: float, start: float,
                 tol: float = 1e-15) -> Generator[_Request, dict, tuple[float, float]]:
    """The saddlepoint t with K'(t) = eps (K' is increasing; K'(-1) <= 0 <= K'(0)).

    Newton from ``start``, safeguarded by bisection on [-1, inf), to a step below ``tol``
    relative. Returns t and K'' at the last tilt evaluated.
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
        if not (d[1] > 0.0):
            break
        new = t - f / float(d[1])
        if not (lo < new < hi):
            new = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * max(t, 0.0) + 1.0
        if abs(new - t) <= tol * max(1.0, abs(t)) or (math.isfinite(hi) and hi - lo
                                                         <= 4e-16 * max(1.0, abs(hi))):
            return new, float(d[1])
        if new > 1e8:
            if f < 0.0 and not math.isfinite(hi):  # K' saturates below eps
                raise _SaturatedError(eps, t, float(d[2]) - t * eps)
            break
        t = new
    raise ValueError(f"no saddlepoint found for eps={eps!r}")


class _SaturatedError(ValueError):
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
               cache: _Cache) -> Generator[_Request, dict, tuple[float, float]]:
    """The eps = 0 tilt t_0 and K''(t_0) (cached per mechanisms and count proportions)."""
    key = _shape_key(comp, direction)
    total = sum(c for _, c in comp.terms)
    hit = cache.get(key)
    if hit is None:
        # from the Gaussian's t_0 = -1/2; t_0 only places the grid, so 1e-12 is plenty (K' at
        # small rates carries rounding noise that keeps steps near 1e-13 from settling)
        t0, var = yield from _tilt_search(0.0, -0.5, 1e-12)
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


def _solve_direction(comp: Composition, direction: str, log_target: float, cache: _Cache,
                     found: dict[str, float] | None = None,
                     grid: int = 10) -> Generator[_Request, dict, tuple]:
    """Largest eps with log delta_r(eps) = log_target for one pair order (module docstring).

    ``found`` (shared by the pair orders searched in lockstep) receives this order's eps when
    it is final, and supplies the other order's to :func:`_refine_root`.

    Returns ``(eps, point, roots, notes)``.
    """
    found = {} if found is None else found
    result = yield from _solve_direction_inner(comp, direction, log_target, cache, found, grid)
    found[direction] = result[0]
    return result


def _solve_direction_inner(comp: Composition, direction: str, log_target: float,
                           cache: _Cache, found: dict[str, float],
                           grid: int) -> Generator[_Request, dict, tuple]:
    notes: list[str] = []
    t0, var0 = yield from _tilt_zero(comp, direction, cache)
    cands = [max(t0, 0.0) + 1.0]
    for _ in range(_BRACKET_FIRST - 1):
        cands.append(2.0 * cands[-1] + 1.0)
    guess = _normal_root(var0, log_target)
    while cands[-1] <= guess and len(cands) < _BRACKET_CAP:  # candidates up to the guess
        cands.append(2.0 * cands[-1] + 1.0)
    if not guess <= _GUESS_MAX or _sampled_steps(comp) < FEW_SAMPLED_STEPS:
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
            if _closed_form(comp) and math.isfinite(guess) and guess > t0 else [])
    pts = yield "point", [t0, *cands, *(y for ts in grids.values() for y in ts[1:-1]), *near]
    p0 = pts[t0].checked()
    if p0.factor > 0.0 and p0.log_delta <= log_target:
        return 0.0, p0, 0, notes
    # (a non-positive factor at eps = 0 -- deep negative tilt, delta near 1 -- is not a root)

    def g(p: _Point) -> float:
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
        raise ValueError("the saddlepoint search did not bracket the target delta")
    ts = grids.get(t_hi) or _linspace(t0, t_hi, grid)
    missing = [x for x in ts if x not in pts]
    if missing:
        pts.update((yield "point", missing))
    above = [g(pts[x]) > 0.0 for x in ts]
    if not any(above):  # the surrogate never exceeds the target: only eps = 0 remains
        notes.append(
            f"{direction}: the tilted expansion is not positive at eps = 0 and stays below "
            "the target delta; eps = 0 is reported, but the expansion has broken down here "
            "(use a certified method)"
        )
        return 0.0, p0, 0, notes
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
    p = yield from _refine_root(log_target, pts[ends[0]], pts[ends[1]], other, stopped)
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


def _delta_step(p: _Point, log_target: float) -> float:
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


def _agree_tolerance(p: _Point) -> float:
    """How closely two estimates of the last step from ``p`` must agree: 1e-10 relative in t
    (absolute below |t| = 1), and in eps, which moves by K'' per unit t (eps' = K'' can
    amplify an error in t many times where eps / K'' is small)."""
    return _AGREE * min(max(1.0, abs(p.t)), max(abs(p.eps), 1e-300) / p.var)


def _extrapolated(p: _Point, step: float, log_target: float) -> _Point:
    r"""The root one small step from ``p``, extrapolated instead of evaluated: t + step,
    :math:`\varepsilon = K'(t) + K''(t)\,h + K'''(t)\,h^2/2 + K''''(t)\,h^3/6` (h = step,
    :math:`K^{(j)} = l_j s^j`, as far as the order's cumulants go: K'' alone at order 0), log
    delta at the target. The step comes from :func:`_refine_root` only when two independent
    estimates of it agree to 1e-10 (:func:`_agree_tolerance`); the diagnostics (l3, l4,
    orders) are those of ``p``."""
    eps = p.eps + p.var * step
    term = step
    for j, lam in enumerate(p.lams[:2], start=3):
        term *= step / (j - 1)
        eps += lam * p.s ** j * term
    return _Point(p.t + step, eps, log_target, p.factor, p.factor_lower, p.s,
                  p.lams, p.slope, p.var, p.log_base, p.dfactor)


def _inverse_hermite_root(p: _Point, known: Iterable[_Point], log_target: float) -> float:
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
    quintic = _osculating_value([left, p, right], log_target)
    tol = _agree_tolerance(p)
    for q in (left, right):
        if not abs(_osculating_value([p, q], log_target) - quintic) <= tol:
            return math.nan
    return quintic


def _osculating_value(pts: list[_Point], log_target: float) -> float:
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


def _refine_root(log_target: float, p_lo: _Point, p_hi: _Point,
                 other: Callable[[], float] | None = None,
                 stopped: list[float] | None = None) -> Generator[_Request, dict, _Point]:
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
            dominated = bool(_diagnostics(q, ""))
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


def _diagnostics(p: _Point, direction: str) -> list[str]:
    warns = []
    l3, l4 = p.lam.get(3, 0.0), p.lam.get(4, 0.0)
    if abs(l3) > L3_MAX or abs(l4) > L4_MAX:
        warns.append(
            f"{direction}: large standardized tilted cumulants (l3={l3:.3g}, l4={l4:.3g}) at the "
            f"saddlepoint t={p.t:.4g}: the tilted law is far from normal (e.g. the 'one big "
            "step' regime); the saddlepoint estimate is unreliable here"
        )
    if p.disagreement > ORDER_DISAGREEMENT_MAX:
        warns.append(
            f"{direction}: orders r and r-1 disagree by {p.disagreement:.2e} (relative) at the "
            "saddlepoint"
        )
    if not (p.factor > 0.0):
        warns.append(f"{direction}: the tilted Edgeworth factor is not positive ({p.factor:.3g})")
    return warns


def _sampled_steps(comp: Composition) -> float:
    """sum(rate * m) for compositions of Poisson-subsampled Gaussians (rate < 1), else inf."""
    if not all(isinstance(m, PoissonSubsampledGaussian) and m.rate < 1.0 for m, _ in comp.terms):
        return math.inf
    return math.fsum(m.rate * c for m, c in comp.terms)


def _regime(comp: Composition, direction: str) -> list[str]:
    """The "one big step" diagnostic: only Poisson-subsampled Gaussian terms (rate < 1), and
    few sampled steps in expectation."""
    sampled = _sampled_steps(comp)
    if sampled >= FEW_SAMPLED_STEPS:
        return []
    return [f"{direction}: few sampled steps (sum of rate * m = {sampled:.3g} < "
            f"{FEW_SAMPLED_STEPS:g}): the 'one big step' regime, where the tilted law can be "
            "bimodal and the saddlepoint estimate's accuracy is not established"]


def _point_details(p: _Point, roots: int | None = None) -> dict:
    out = {
        "t": p.t,
        "s": p.s,
        "l3": p.lam.get(3, 0.0),
        "l4": p.lam.get(4, 0.0),
        "order_disagreement": p.disagreement,
        "factor": p.factor,
    }
    if roots is not None:
        out["roots"] = roots
    return out


def _certified_note(warns: list[str]) -> None:
    if not warns:
        return
    from . import methods  # lazy: methods imports this module

    try:
        methods.load_plugins()
    except Exception:  # pragma: no cover - a broken plug-in must not break the estimate
        return
    if "certified" in methods.METHODS:
        warns.append(
            "diagnostics fired: a certified answer is available with --method certified "
            "(numeric.epsilon(..., method='certified'))"
        )
    else:
        warns.append(
            "diagnostics fired: the saddlepoint estimate is reported as is (certified bounds "
            "need the certify extra)"
        )


def _lattice_note(comp: Composition, warns: list[str]) -> None:
    if all(isinstance(m, RandomizedResponse | ApproxDP) for m, _ in comp.terms):
        warns.append(
            "the PLLR is purely atomic (two-point steps): the tilted Edgeworth density smooths "
            "the lattice, an error of order the lattice span times the density (~1e-4 relative "
            "in eps for n ~ 1e3); the 'exact' method is available for this composition"
        )


def _is_exact_gaussian(comp: Composition) -> bool:
    fams = [m.exact_family() for m, _ in comp.terms]
    return all(f is not None and f[0] == "gaussian" for f in fams)


def _sup(comp: Composition, direction: str) -> float:
    """ess sup of S in this pair order (the swapped order's PLLR is minus the own one)."""
    if direction == DIRECTION_QP:
        return sum(-c * _pllr_inf(m) for m, c in comp.terms)
    return sum(c * _pllr_sup(m) for m, c in comp.terms)


_ESTIMATE_NOTE = "estimate: the saddlepoint accountant approximates delta(eps); it is not a bound"


def _delta_search(eps: float) -> Generator[_Request, dict, _Point | _SaturatedError]:
    try:
        t, _ = yield from _tilt_search(eps, 0.0)
    except _SaturatedError as sat:
        return sat
    return (yield "point", [t])[t].checked()


def saddlepoint_delta(composition, eps: float | np.ndarray, order: int = 2, *,
                      cache: bool = True) -> DeltaResult:
    r"""Saddlepoint (tilted-Edgeworth) estimate of delta(eps), vectorized over eps.

    Args:
        composition: A :class:`~numeric.composition.Composition` or anything
            :func:`~numeric.composition.compose` accepts; every mechanism needs a registered
            CGF (:func:`pllr_cgf`).
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
        ValueError: on invalid arguments or a mechanism without a CGF ("use aea").
    """
    comp = compose(composition)
    e = as_float_array("eps", eps, nonnegative=True)
    order = check_order("order", order, maximum=max(SERIES_ORDERS))
    store = _resolve_cache(cache)
    _check_supported(comp)
    warns: list[str] = []
    per_dir: dict[str, np.ndarray] = {}
    det: dict[str, list] = {}
    flat = e.reshape(-1)
    tasks: list[tuple[bool, Generator]] = []
    where: list[tuple[str, int]] = []
    for direction in comp.directions:
        sup = _sup(comp, direction)
        for i, x in enumerate(flat):
            if x < sup:
                tasks.append((direction == DIRECTION_QP, _delta_search(float(x))))
                where.append((direction, i))
    points, _ = _drive(comp, order, tasks, store)
    found = dict(zip(where, points, strict=True))
    for direction in comp.directions:
        vals = np.zeros(flat.size)
        det[direction] = []
        for i in range(flat.size):
            p = found.get((direction, i))
            if p is None:
                det[direction].append({"t": math.inf})
                continue
            if isinstance(p, _SaturatedError):
                vals[i] = math.exp(min(p.log_bound, 0.0))
                det[direction].append({"t": p.t, "chernoff_log_bound": p.log_bound})
                w = (f"{direction}: K'(t) saturates below eps={float(flat[i])!r} (eps is near the "
                     f"essential supremum of S): no saddlepoint; Chernoff's bound "
                     f"exp({p.log_bound:.6g}) at t={p.t:.3g} is reported instead")
                if w not in warns:
                    warns.append(w)
                continue
            vals[i] = math.exp(p.log_delta) if math.isfinite(p.log_delta) else 0.0
            det[direction].append(_point_details(p))
            for w in [*_diagnostics(p, direction), *_regime(comp, direction)]:
                if w not in warns:
                    warns.append(w)
        per_dir[direction] = vals.reshape(e.shape)
    stacked = np.stack([per_dir[d].reshape(-1) for d in comp.directions])
    win = np.argmax(stacked, axis=0)
    pure = stacked[win, np.arange(stacked.shape[1])]
    if np.any(pure > 1.0):
        warns.append("the saddlepoint delta exceeds 1 at some eps; clipped to 1")
    fired = list(warns)
    _lattice_note(comp, warns)
    _certified_note(warns)
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
        estimate=not _is_exact_gaussian(comp),
        direction=str(dirs.reshape(-1)[0]) if scalar else dirs,
        per_direction={k: (float(v.reshape(-1)[0]) if scalar else v) for k, v in per_dir.items()},
        warnings=tuple(warns),
        details=details,
    )


def saddlepoint_epsilon(composition, delta: float, order: int = 2, *,
                        cache: bool = True) -> EpsilonResult:
    r"""Saddlepoint (tilted-Edgeworth) estimate of eps(delta): the largest root, max over orders.

    eps is parametrized by the tilt t (eps = K'(t)); the root of
    log delta_r(t) = log delta is bracketed on a grid in t and refined by a safeguarded
    Newton iteration with the analytic slope (:func:`_refine_root`); both pair orders are
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
        ValueError: on invalid arguments or a mechanism without a CGF ("use aea").
    """
    comp = compose(composition)
    delta = check_delta("delta", delta)
    order = check_order("order", order, maximum=max(SERIES_ORDERS))
    store = _resolve_cache(cache)
    _check_supported(comp)
    d = comp.delta_part
    estimate = not _is_exact_gaussian(comp)
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
              _solve_direction(comp, direction, log_target, store, found))
             for direction in comp.directions]
    solved, evals = _drive(comp, order, tasks, store)
    per_dir: dict[str, float] = {}
    for direction, (eps, p, roots, notes), n_eval in zip(comp.directions, solved, evals,
                                                         strict=True):
        per_dir[direction] = eps
        warns.extend(notes)
        if p is not None:
            details["saddlepoint"][direction] = {**_point_details(p, roots), "evals": n_eval}
            warns.extend(_diagnostics(p, direction))
        warns.extend(_regime(comp, direction))
    details["diagnostics"] = list(warns)
    _lattice_note(comp, warns)
    _certified_note(warns)
    direction = max(per_dir, key=per_dir.get)
    return EpsilonResult(per_dir[direction], delta, METHOD, estimate, direction, per_dir,
                         tuple(warns), details)
