r"""Numeric CGF of a compiled mechanism's PLLR, and the essential range of the PLLR.

For the pair (P, Q) with PLLR :math:`L = \log(q/p)` and Y = L under Q (docs/math.md section 1), the
cumulant generating function is

.. math::

    K_Y(t) = \log E_Q e^{tY} = \log \int q\, e^{tL}, \qquad K_Y(0) = K_Y(-1) = 0,

and its derivatives :math:`K_Y^{(j)}(t)` are the cumulants of the tilted law :math:`dQ_t \propto
e^{tL} dQ` (exponential tilting; Daniels, *Saddlepoint approximations in statistics*, Ann. Math.
Statist. 25, 1954). :func:`cgf_batch` evaluates them for a compiled mechanism with numeric code
only (numpy, no sympy at evaluation time), in log-space throughout so that large tilts do not
overflow:

* **Finite pmfs**: exact sums. The tilted law puts log-weight :math:`\log q_i + t L_i` on L_i;
  K is their log-sum-exp and the cumulants come from the normalized weights.
* **Densities**: per segment of derive's segmentation (:mod:`derive.segmentation`) the functions
  :math:`\log q(x)` and :math:`L(x)` are lambdified once for numpy (with ``log(a + b + ...)``
  rewritten as a log-sum-exp of the logs of the terms where that reproduces the expression, so
  that e.g. :math:`\log(1 + e^{-x})` does not overflow) and integrated by composite 16-point
  Gauss-Legendre rules: from a centre point, panels of width h out to distance R, then the rest
  of the half-line through :math:`x = c \pm R/u`, :math:`u \in (0, 1]` (Jacobian
  :math:`R/u^2`; polynomial tails become smooth in u). The rule of level l has
  :math:`R = 16 \cdot 2^l` and :math:`h = 2^{-l-1}` (features of scale O(1), as derive's
  quadrature assumes). Segments on which L is constant (Laplace's outer segments) are atoms with
  their integrated mass. The answer at a tilt is accepted when two consecutive levels agree to
  :data:`TOLERANCE` (K relative to max(1, |K|), the j-th derivative relative to
  max(|K^{(j)}|, sigma^j), sigma^2 = K''), else the next level is tried, up to
  :data:`MAX_LEVEL`.
* Cumulants from the central moments of the tilted law by
  :math:`\kappa_n = \mu_n - \sum_{k=2}^{n-2}\binom{n-1}{k-1}\kappa_k\mu_{n-k}` (Stuart & Ord,
  *Kendall's Advanced Theory of Statistics* vol. 1, Eq. 3.38).

**Not applicable** (:class:`numeric.errors.NotApplicable`) for a tilt where the integrals cannot
be done reliably: the tilted weight grows towards an infinite end (E_Q e^{tY} diverges, e.g. a
Gaussian P against a heavier-tailed Q for t > 0), or no two levels agree. Nodes where a
lambdified function is not finite are dropped; before the first use the rules must reproduce
K_Y(0) = K_Y(-1) = 0 to 1e-9 (else the CGF does not apply to the mechanism at all), which
catches mass lost that way.

**Range of L** (:func:`pllr_range`): ess sup and ess inf of L, from the segmentation: exact on an
atom; on a segment where L is proven strictly monotone (:func:`derive.sign_calculus.monotone_sign`)
the sympy limits at the segment's ends; +-inf wherever either is not known (always safe: it only
widens the range where delta > 0). The sympy work is done once per spec, at first use.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
import sympy as sp

from numeric.errors import NotApplicable

from .quadrature import mp_lambdify
from .results import SpecLike
from .segmentation import analysis
from .sign_calculus import is_closed, monotone_sign, proven_zero
from .timelimit import attempt

__all__ = ["MAX_LEVEL", "TOLERANCE", "cgf_batch", "pllr_range"]

TOLERANCE = 1e-10
MAX_LEVEL = 4
_GL_T, _GL_W = np.polynomial.legendre.leggauss(16)
_R0 = 16.0  # core half-width of level 0
_H0 = 0.5  # panel width of level 0
_TAIL_PANELS = 8  # panels of the u-map at level 0
_CHUNK = 1 << 21  # tilts x nodes per vectorized block
_NORM_TOL = 1e-9
_CACHE_SIZE = 32
_LogSumExp = sp.Function("LogSumExp")


def _logsumexp(*args: Any) -> np.ndarray:
    arrs = np.broadcast_arrays(*(np.asarray(a, dtype=float) for a in args))
    top = np.max(arrs, axis=0)
    top = np.where(np.isfinite(top), top, 0.0)
    return top + np.log(sum(np.exp(a - top) for a in arrs))


_MODULES = [{"LogSumExp": _logsumexp}, "scipy", "numpy"]


# --------------------------------------------------------------------------------------------
# The symbolic preparation (once per spec)
# --------------------------------------------------------------------------------------------


def _stable(expr: sp.Expr) -> sp.Expr:
    """``log(a + b + ...)`` -> LogSumExp(log a, log b, ...) (logs expanded; valid where every
    term is positive, which the caller checks numerically)."""
    def fix(node):
        return _LogSumExp(*(sp.expand_log(sp.log(a), force=True) for a in node.args[0].args))

    return expr.replace(lambda e: isinstance(e, sp.log) and isinstance(e.args[0], sp.Add), fix)


def _mp_value(fn: Callable, args: list) -> Any:
    with mpmath.workdps(30):
        return fn(*[mpmath.mpf(a) for a in args])


def _agrees(candidate: sp.Expr, reference: sp.Expr, syms: list, points: list[list]) -> bool:
    """Whether the numpy lambdification of ``candidate`` matches ``reference`` (mpmath, 30 digits)
    to 1e-10 at every point."""
    try:
        fc = sp.lambdify(syms, candidate, modules=_MODULES)
        fr = mp_lambdify(syms, reference)
        with np.errstate(all="ignore"):
            for pt in points:
                want = _mp_value(fr, pt)
                if not (mpmath.isfinite(want) and mpmath.im(want) == 0):
                    continue  # the reference underflows or is undefined here: no evidence
                want = float(mpmath.re(want))
                got = float(fc(*pt))
                if not abs(got - want) <= 1e-10 * max(1.0, abs(want)):
                    return False
        return True
    except Exception:  # lambdify or evaluation failed: not this form
        return False


def _choose(candidates: list[sp.Expr], reference: sp.Expr, syms: list, points: list[list]
            ) -> Callable:
    for cand in candidates:
        if _agrees(cand, reference, syms, points):
            return sp.lambdify(syms, cand, modules=_MODULES)
    return sp.lambdify(syms, reference, modules=_MODULES)


def _probe_points(an, seg, syms: list) -> list[list]:
    """(x, *params) points inside ``seg`` for every parameter sample of the analysis."""
    out = []
    for sample in an.samples:
        pv = [float(sample[s]) for s in an.param_syms]
        a, b = (float(sp.N(e.xreplace(sample), 30)) for e in (seg.lower, seg.upper))
        if math.isinf(a) and math.isinf(b):
            xs = [-7.3, -1.3, 0.29, 2.1, 8.7, 31.0, -31.0]
        elif math.isinf(b):
            xs = [a + d for d in (0.37, 1.7, 9.3, 40.0)]
        elif math.isinf(a):
            xs = [b - d for d in (0.37, 1.7, 9.3, 40.0)]
        else:
            xs = [a + f * (b - a) for f in (0.13, 0.5, 0.87)]
        out += [[x, *pv] for x in xs]
    return out


@dataclass(frozen=True)
class _SegmentFns:
    """Numeric functions of one segment: bounds (of the parameters), log q and L (of x and the
    parameters); ``atom`` when L does not depend on x (then ``L`` ignores x)."""

    lower: Callable
    upper: Callable
    logq: Callable
    L: Callable
    atom: bool


@dataclass(frozen=True)
class _Prepared:
    discrete: bool
    segments: tuple[_SegmentFns, ...]
    mp_logq: tuple[Callable, ...] = ()  # discrete: log q_i and L_i of the parameters (mpmath)
    mp_pllr: tuple[Callable, ...] = ()


_PREPARED: dict[SpecLike, _Prepared] = {}
_RANGES: dict[SpecLike, tuple[tuple[Any, Any], ...]] = {}
_LOCK = threading.Lock()


def _prepare(spec: SpecLike) -> _Prepared:
    with _LOCK:
        prep = _PREPARED.get(spec)
    if prep is not None:
        return prep
    an = analysis(spec)
    params = list(an.param_syms)
    if an.x is None:
        prep = _Prepared(True, (), tuple(mp_lambdify(params, sp.log(s.q)) for s in an.segments),
                         tuple(mp_lambdify(params, s.pllr) for s in an.segments))
    else:
        syms = [an.x, *params]
        segs = []
        for seg in an.segments:
            pts = _probe_points(an, seg, syms)
            ref = sp.log(seg.q)
            logq = sp.expand_log(ref, force=True)
            segs.append(_SegmentFns(
                lower=mp_lambdify(params, seg.lower), upper=mp_lambdify(params, seg.upper),
                logq=_choose([_stable(logq), logq], ref, syms, pts),
                L=_choose([_stable(seg.pllr)], seg.pllr, syms, pts), atom=seg.atom))
        prep = _Prepared(False, tuple(segs))
    with _LOCK:
        _PREPARED[spec] = prep
    return prep


# --------------------------------------------------------------------------------------------
# Quadrature rules and the numeric law at a parameter point
# --------------------------------------------------------------------------------------------


def _panels(lo: float, hi: float, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of ``count`` equal Gauss-Legendre panels on [lo, hi]."""
    edges = np.linspace(lo, hi, count + 1)
    half = 0.5 * (edges[1:] - edges[:-1])
    mid = 0.5 * (edges[1:] + edges[:-1])
    return (mid[:, None] + half[:, None] * _GL_T).ravel(), (half[:, None] * _GL_W).ravel()


def _half_rule(c: float, s: float, dist: float, level: int
               ) -> tuple[np.ndarray, np.ndarray, int]:
    """Nodes, log-weights and the number of outermost nodes (of an infinite tail, else 0) for
    the half-segment x = c + s d, 0 < d < dist (dist may be inf)."""
    R = _R0 * 2.0**level
    h = _H0 / 2.0**level
    core = min(R, dist)
    d, w = _panels(0.0, core, max(1, math.ceil(core / h)))
    xs, lws, outer = [c + s * d], [np.log(w)], 0
    if dist > R:
        u, wu = _panels(R / dist, 1.0, _TAIL_PANELS * 2**level)
        xs.insert(0, c + s * (R / u))
        lws.insert(0, np.log(wu) + math.log(R) - 2.0 * np.log(u))
        outer = _GL_T.size if math.isinf(dist) else 0  # the first panel of u reaches u -> 0
    return np.concatenate(xs), np.concatenate(lws), outer


def _segment_rule(a: float, b: float, level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nodes, log-weights and a mask of the outermost tail nodes for the segment (a, b)."""
    if math.isinf(a) and math.isinf(b):
        c = 0.0
    elif math.isinf(b):
        c = a
    elif math.isinf(a):
        c = b
    else:
        c = 0.5 * (a + b)
    parts = [_half_rule(c, 1.0, b - c, level)] if b > c else []
    if a < c:
        parts.append(_half_rule(c, -1.0, c - a, level))
    x = np.concatenate([p[0] for p in parts])
    lw = np.concatenate([p[1] for p in parts])
    outer = np.zeros(x.size, dtype=bool)
    k = 0
    for p in parts:
        outer[k:k + p[2]] = True
        k += p[0].size
    return x, lw, outer


@dataclass
class _Law:
    """The numeric law of L at one parameter point: per level the support values, the base
    log-weights (log q + log of the rule's weight; tilt t adds t L) and the outermost nodes."""

    mechanism: Any
    prepared: _Prepared
    params: list[float]
    levels: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]
    checked: NotApplicable | bool = False

    def level(self, level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        got = self.levels.get(level)
        if got is None:
            got = self.levels[level] = self._build(level)
        return got

    def _build(self, level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pv = self.params
        vals, base, outer = [], [], []
        for seg in self.prepared.segments:
            a, b = (float(_mp_value(f, pv)) for f in (seg.lower, seg.upper))
            x, lw, out = _segment_rule(a, b, level)
            with np.errstate(all="ignore"):
                lq = np.broadcast_to(np.asarray(seg.logq(x, *pv), dtype=float), x.shape)
                L = np.broadcast_to(np.asarray(seg.L(x, *pv), dtype=float), x.shape)
            ok = np.isfinite(lq) & np.isfinite(L)
            lw = np.where(ok, lq + lw, -np.inf)
            L = np.where(ok, L, 0.0)
            if seg.atom:  # L constant: one support point carrying the segment's mass
                ell = L[ok][0] if ok.any() else 0.0
                vals.append(np.array([ell]))
                base.append(np.array([_lse(lw)]))
                outer.append(np.zeros(1, dtype=bool))
            else:
                vals.append(L)
                base.append(lw)
                outer.append(out)
        return np.concatenate(vals), np.concatenate(base), np.concatenate(outer)


def _lse(lw: np.ndarray) -> float:
    top = float(np.max(lw)) if lw.size else -math.inf
    if not math.isfinite(top):
        return top
    return top + math.log(float(np.sum(np.exp(lw - top))))


_LAWS: OrderedDict[Any, _Law] = OrderedDict()


def _law(mechanism: Any) -> _Law:
    with _LOCK:
        law = _LAWS.get(mechanism)
        if law is not None:
            _LAWS.move_to_end(mechanism)
            return law
    prep = _prepare(mechanism.spec)
    law = _Law(mechanism, prep, [float(v) for v in mechanism.values.values()], {})
    with _LOCK:
        law = _LAWS.setdefault(mechanism, law)
        while len(_LAWS) > _CACHE_SIZE:
            _LAWS.popitem(last=False)
    return law


# --------------------------------------------------------------------------------------------
# Tilted cumulants
# --------------------------------------------------------------------------------------------


def _tilted(values: np.ndarray, base: np.ndarray, t: np.ndarray, n: int,
            normalized: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""K(t), the cumulants 1..n of the tilted laws (rows) and the index of each row's largest
    weight, for the discrete law ``values`` with log-weights ``base + t * values``.

    ``normalized``: K(t) of the law renormalized to total weight 1 where that keeps relative
    precision (:func:`_small_k`); False: :math:`\log \sum_i e^{b_i + t v_i}` as summed, whose
    value at t = 0 is the log of the total weight (the normalization check of
    :func:`cgf_batch`)."""
    k0 = np.empty(t.size)
    der = np.empty((t.size, n))
    arg = np.empty(t.size, dtype=int)
    step = max(1, _CHUNK // max(1, values.size))
    for s in range(0, t.size, step):
        tt = t[s:s + step]
        with np.errstate(invalid="ignore", over="ignore"):
            lw = base[None, :] + tt[:, None] * values[None, :]
        lw = np.where(np.isnan(lw), -np.inf, lw)
        idx = np.argmax(lw, axis=1)
        top = lw[np.arange(tt.size), idx]
        with np.errstate(invalid="ignore", over="ignore"):
            w = np.exp(lw - top[:, None])
            total = w.sum(axis=1)
            w /= total[:, None]
            mean = w @ values
            dev = values[None, :] - mean[:, None]
        k0[s:s + step] = top + np.log(total)
        if normalized:
            _small_k(values, base, tt, k0[s:s + step])
        arg[s:s + step] = idx
        der[s:s + step] = _cumulants(w, dev, mean, n)
    return k0, der, arg


_SMALL_K_MAX_TV = 600.0  # rows whose |t v| stays below this on every node (no overflow)


def _small_k(values: np.ndarray, base: np.ndarray, t: np.ndarray, k0: np.ndarray) -> None:
    r"""Overwrite ``k0`` where the law is nearly untilted by
    :math:`\log(1 + \sum_i w_i \mathrm{expm1}(t v_i) / \sum_i w_i)`, :math:`w_i = e^{b_i}`.

    :math:`\log\sum_i e^{b_i + t v_i}` is off by about one unit in the last place of the total
    weight, ~1e-16 *absolutely*, however small K is, and a composition multiplies that by its
    number of steps (a Gaussian density with mu = 1e-6 composed 1e14 times: delta 2.3% off,
    unwarned). The form here keeps K's relative precision up to the cancellation of the terms
    :math:`t v_i` (~1e-16 E|tY| / |K|), and divides out the quadrature's total weight (at t = 0
    it is exactly 0). Rows qualify where every node of finite weight has
    :math:`|t v_i| <` :data:`_SMALL_K_MAX_TV` (no overflow in expm1) and the ratio lies in
    (-1/2, 1] (|K| <= log 2: log1p neither cancels nor loses anything against the direct
    form)."""
    finite = np.isfinite(base)
    if not finite.any():
        return
    v, b = values[finite], base[finite]
    span = float(np.max(np.abs(v)))
    rows = np.abs(t) * span < _SMALL_K_MAX_TV
    if not rows.any():
        return
    w = np.exp(b - b.max())
    ratio = (np.expm1(np.outer(t[rows], v)) @ w) / w.sum()
    ok = (ratio > -0.5) & (ratio <= 1.0)
    sel = np.flatnonzero(rows)[ok]
    k0[sel] = np.log1p(ratio[ok])


def _cumulants(w: np.ndarray, dev: np.ndarray, mean: np.ndarray, n: int) -> np.ndarray:
    """Cumulants 1..n (columns) from normalized weights and deviations from the mean (Stuart &
    Ord Eq. 3.38, on central moments)."""
    out = np.empty((mean.size, n))
    out[:, 0] = mean
    if n == 1:
        return out
    mu = [None, None]  # central moments by order
    power = dev * dev
    for k in range(2, n + 1):
        if k > 2:
            power = power * dev
        mu.append(np.einsum("rn,rn->r", w, power))
    for k in range(2, n + 1):
        acc = mu[k].copy()
        for j in range(2, k - 1):
            acc -= math.comb(k - 1, j - 1) * out[:, j - 1] * mu[k - j]
        out[:, k - 1] = acc
    return out


def _agree(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    (ka, da), (kb, db) = a, b
    ok = np.abs(ka - kb) <= TOLERANCE * np.maximum(1.0, np.abs(kb))
    sigma = np.sqrt(np.abs(db[:, 1]))  # callers ask for n >= 2
    for j in range(db.shape[1]):
        scale = np.maximum(np.abs(db[:, j]), sigma ** (j + 1))
        ok &= np.abs(da[:, j] - db[:, j]) <= TOLERANCE * scale
    return ok & np.isfinite(kb) & np.all(np.isfinite(db), axis=1)


def _continuous(law: _Law, t: np.ndarray, n: int, normalized: bool = True
                ) -> tuple[np.ndarray, np.ndarray]:
    k0 = np.full(t.size, np.nan)
    der = np.full((t.size, n), np.nan)
    todo = np.arange(t.size)
    prev = None
    grows: list[float] = []
    for level in range(MAX_LEVEL + 1):
        values, base, outer = law.level(level)
        k, d, arg = _tilted(values, base, t[todo], n, normalized)
        bad = outer[arg] | ~np.isfinite(k)  # the weight peaks at the far end of a tail
        if bad.any():
            grows += t[todo[bad]].tolist()
            keep = ~bad
            todo, k, d = todo[keep], k[keep], d[keep]
            prev = None if prev is None else (prev[0][keep], prev[1][keep])
        if prev is not None:
            done = _agree(prev, (k, d))
            k0[todo[done]] = k[done]
            der[todo[done]] = d[done]
            todo, k, d = todo[~done], k[~done], d[~done]
        if todo.size == 0:
            break
        prev = (k, d)
    if grows or todo.size:
        why = []
        if grows:
            why.append(f"E_Q e^(tY) diverges or is dominated by a tail at t = {sorted(grows)}")
        if todo.size:
            why.append(f"the quadrature did not converge at t = {t[todo].tolist()}")
        raise NotApplicable(f"{law.mechanism.describe()}: no numeric CGF: " + "; ".join(why))
    return k0, der


def _discrete(law: _Law, t: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    prep = law.prepared
    if not law.levels:
        logq = np.array([float(_mp_value(f, law.params)) for f in prep.mp_logq])
        ell = np.array([float(_mp_value(f, law.params)) for f in prep.mp_pllr])
        law.levels[0] = (ell, logq, np.zeros(ell.size, dtype=bool))
    values, base, _ = law.levels[0]
    k, d, _ = _tilted(values, base, t, n)
    return k, d


def cgf_batch(mechanism: Any, t: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    r"""K_Y(t_i) = log E_Q e^{t_i Y} and D[i, j-1] = K_Y^{(j)}(t_i), j = 1..n, for a compiled
    mechanism (see the module docstring).

    Args:
        mechanism: An instance of a class made by :func:`derive.compile.mechanism_class`.
        t: Tilts (any shape; flattened), finite.
        n: Highest derivative, whole number >= 1.

    Returns:
        ``(K, D)``: arrays of shapes (len(t),) and (len(t), n).

    Raises:
        ValueError: on a non-finite tilt or a bad ``n``.
        NotApplicable: where the integrals cannot be done reliably (a divergent or
            tail-dominated E_Q e^{tY}, no convergence), naming the tilts.
    """
    t = np.asarray(t, dtype=float).ravel()
    if not np.all(np.isfinite(t)):
        raise ValueError(f"t must be finite, got {t!r}")
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"n must be a whole number >= 1, got {n!r}")
    n = int(n)
    law = _law(mechanism)
    m = max(n, 2)  # K'' sets the scale of the convergence test of K'
    if law.prepared.discrete:
        k, d = _discrete(law, t, m)
        return k, d[:, :n]
    if law.checked is False:
        try:
            k, _ = _continuous(law, np.array([0.0, -1.0]), 2, normalized=False)
            if not np.all(np.abs(k) <= _NORM_TOL):
                raise NotApplicable(f"{mechanism.describe()}: no numeric CGF: the quadrature "
                                    f"gives K_Y(0), K_Y(-1) = {k.tolist()}, not 0")
            law.checked = True
        except NotApplicable as exc:
            law.checked = exc
    if isinstance(law.checked, NotApplicable):
        raise NotApplicable(str(law.checked))
    k, d = _continuous(law, t, m)
    return k, d[:, :n]


# --------------------------------------------------------------------------------------------
# ess sup / ess inf of L
# --------------------------------------------------------------------------------------------


def _limit(L: sp.Expr, x: sp.Symbol, end: sp.Expr, direction: str) -> Any:
    v = attempt(lambda: sp.limit(L, x, end, direction))
    if v is None:
        return None
    if v in (sp.oo, -sp.oo) or (is_closed(v) and not v.has(x)):
        return v
    return None


def _ranges(spec: SpecLike) -> tuple[tuple[Any, Any], ...]:
    """Per segment the lowest and highest value of L: a float (+-inf) or an mpmath function of
    the parameters; -inf / +inf where not known."""
    with _LOCK:
        out = _RANGES.get(spec)
    if out is not None:
        return out
    an = analysis(spec)
    params = list(an.param_syms)

    def compiled(expr: Any, up: bool) -> Any:
        if expr is None:
            return math.inf if up else -math.inf
        if expr in (sp.oo, -sp.oo):
            return math.inf if expr == sp.oo else -math.inf
        return mp_lambdify(params, expr)

    out = []
    x = an.x
    for seg in an.segments:
        if seg.atom:
            lo = hi = seg.pllr
        else:
            lo = hi = None
            L = seg.pllr
            if not proven_zero(seg.p * sp.exp(L) - seg.q):  # as derive.lattice_plan does
                L = sp.log(seg.q) - sp.log(seg.p)
            dL = attempt(lambda L=L: sp.diff(L, x))
            s = monotone_sign(dL, seg, x) if dL is not None else None
            if s is not None:
                lo, hi = _limit(L, x, seg.lower, "+"), _limit(L, x, seg.upper, "-")
                if s < 0:
                    lo, hi = hi, lo
        out.append((compiled(lo, False), compiled(hi, True)))
    out = tuple(out)
    with _LOCK:
        _RANGES[spec] = out
    return out


def _outward(value: Any, values: list[float], up: bool) -> float:
    """A range end at the parameters, rounded outward to a float (exact when it is one)."""
    if isinstance(value, float):
        return value
    with mpmath.workdps(50):
        v = mpmath.mpf(mpmath.re(value(*[mpmath.mpf(a) for a in values])))
        f = float(v)
        if up and mpmath.mpf(f) < v:
            f = math.nextafter(f, math.inf)
        elif not up and mpmath.mpf(f) > v:
            f = math.nextafter(f, -math.inf)
    return f


def pllr_range(mechanism: Any) -> tuple[float, float]:
    """(ess inf L, ess sup L) of a compiled mechanism; -inf / +inf where not known.

    Args:
        mechanism: An instance of a class made by :func:`derive.compile.mechanism_class`.

    Returns:
        The pair of floats, rounded outward.
    """
    values = [float(v) for v in mechanism.values.values()]
    lows, highs = [], []
    for lo, hi in _ranges(mechanism.spec):
        lows.append(_outward(lo, values, up=False))
        highs.append(_outward(hi, values, up=True))
    return min(lows), max(highs)
