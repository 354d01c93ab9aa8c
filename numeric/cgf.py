r"""Cumulant generating functions of the PLLR: K(t) and its derivatives for a composition.

One step's privacy-loss log-ratio (PLLR) Y under Q has the cumulant generating function
:math:`K_Y(t) = \log E_Q e^{tY}`, and the composed PLLR S (MATH.md section 1) has
:math:`K(t) = \sum_i m_i K_i(t)`; the tilted law :math:`dQ_t = e^{tS - K(t)} dQ` has cumulants
:math:`K^{(j)}(t)` (exponential tilting; Daniels, *Saddlepoint approximations in statistics*,
Ann. Math. Statist. 25, 1954; the saddle-point accountant of Alghamdi, Gomez, Asoodeh, Calmon,
Kosut, Sankar, arXiv:2208.09595, 2022). This module evaluates them for the saddlepoint
accountant (:mod:`numeric.saddlepoint`), batched over tilts t and in either pair order (for the
swapped pair, K_S(t) = K(-1-t), so :math:`K_S^{(j)}(t) = (-1)^j K^{(j)}(-1-t)`).

CGFs per mechanism (:func:`pllr_cgf`, a :func:`functools.singledispatch` on the mechanism
class; register more with ``pllr_cgf.register``; mechanisms without a vectorized rule are
evaluated one tilt at a time). Each returns K_Y(t) and K_Y^{(j)}(t), j = 1..n, for the
mechanism's own (P, Q) order:

* Gaussian: :math:`K(t) = \mu^2 t(t+1)/2`.
* Randomized response / ApproxDP: Y = +eps0 w.p. expit(eps0), else -eps0; the tilted law is
  two-point with log-weights :math:`\pm t\varepsilon_0 + \log\operatorname{expit}(\pm
  \varepsilon_0)`.
* Laplace (P = Lap(0,1), L = |x| - |x - mu|): with c = t + 1/2 the tilted law has atoms at -mu,
  +mu with weights proportional to e^{-c mu}, e^{c mu} and density proportional to e^{c l}/2 on
  (-mu, mu), so :math:`K(t) = -\mu/2 + \log(\cosh c\mu + \sinh(c\mu)/(2c))`.
* Poisson-subsampled Gaussian (MATH.md section 4; Mironov, Talwar, Zhang 2019):
  :math:`K(t) = \log E_P e^{(t+1)L}`, L = log1p(p expm1(u)), u = mu x - mu^2/2, by composite
  Gauss-Legendre quadrature over [-13, X] with X >= max(t+1, 1) mu + 13 (panels of fixed width
  min(1/2, 1/mu) from -13, 12 nodes each, so a longer rule extends a shorter one) with
  K = log1p(E_P[expm1((t+1)L)]) to keep relative precision for small rates; validated against
  the exact integer moments
  :math:`E_P e^{kL} = \sum_j \binom kj (1-p)^{k-j}p^j e^{j(j-1)\mu^2/2}`.

Higher derivatives are the cumulants of the tilted law, computed from its central moments
(:math:`\kappa_k = \mu_k - \sum_j \binom{k-1}{j-1}\kappa_j\mu_{k-j}`; Stuart & Ord, *Kendall's
Advanced Theory of Statistics* vol. 1, Eq. 3.38). The essential supremum and infimum of the PLLR
(:func:`_pllr_sup`, :func:`_pllr_inf`) bound the eps range where delta > 0.

Caching ("cold": the first query for a mechanism; "warm": later ones, e.g. for other m or
delta). Data that depends on neither m nor delta is kept per mechanism, keyed by the mechanism
itself (a frozen dataclass, so a change of any parameter is a new entry; least recently used
entries are dropped beyond 96, and at most 4096 CGF rows are kept per mechanism): the nodes,
PLLR values and Gaussian weights of the subsampled Gaussian quadrature rule; the CGF rows
K^{(j)}(t) at every tilt evaluated (the saddlepoint accountant's bracket candidates and, for a
given t_0, its grid points are the same for every m and delta); and, stored there by
:mod:`numeric.saddlepoint`, the eps = 0 tilt t_0 with K''(t_0) of each pair order (keyed by the
mechanisms and their count *proportions*, since K_S/m does not depend on m). The cache holds
exact values, not interpolants, so cached and uncached results agree to rounding;
``cache=False`` bypasses it and :func:`clear_cgf_cache` empties it.
"""

from __future__ import annotations

import functools
import math
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from .composition import Composition
from .mechanisms import (
    ApproxDP,
    Gaussian,
    Laplace,
    Mechanism,
    PoissonSubsampledGaussian,
    RandomizedResponse,
)
from .mechanisms.subsampled_gaussian import subsampled_gaussian_pllr
from .moments import gauss_legendre_panels

__all__ = ["clear_cgf_cache", "pllr_cgf"]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_CACHE_SIZE = 96  # entries (rules, CGF memos, eps = 0 tilts) kept by the per-mechanism cache
_SIGNS = (-1.0) ** np.arange(1, 32)  # d^j/dt^j of K(-1 - t) = (-1)^j K^{(j)}(-1 - t)
_COMB = [[float(math.comb(k, j)) for j in range(k + 1)] for k in range(32)]
_LOG_TINY = -700.0  # quadrature weights below e^-700 relative count as e^-700 (no slow subnormals)


# --------------------------------------------------------------------------------------------
# The per-mechanism cache
# --------------------------------------------------------------------------------------------


class _Cache:
    """A small LRU map for per-mechanism data that depends on neither m nor delta."""

    def __init__(self, maxsize: int = _CACHE_SIZE) -> None:
        self.maxsize = maxsize
        self._data: OrderedDict[Hashable, object] = OrderedDict()

    def get(self, key: Hashable, factory: Callable[[], object] | None = None) -> Any:
        """The entry for ``key``; built by ``factory`` (and stored) when missing."""
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
            return value
        if factory is None:
            return None
        value = factory()
        self.put(key, value)
        return value

    def put(self, key: Hashable, value: object) -> None:
        """Store ``value`` under ``key``, evicting the least recently used entry if full."""
        self._data[key] = value
        self._data.move_to_end(key)
        while len(self._data) > self.maxsize:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        """Drop every entry."""
        self._data.clear()


_CACHE = _Cache()


def clear_cgf_cache() -> None:
    """Empty the saddlepoint accountant's per-mechanism cache.

    The cache holds quadrature rules, CGF values at the tilts evaluated and eps = 0 tilts (module
    docstring). Queries after this behave like the first query for each mechanism ("cold");
    results do not change (the cache holds exact values, not interpolants).
    """
    _CACHE.clear()


def _resolve_cache(cache: bool) -> _Cache:
    """The shared cache for ``cache=True``, a fresh empty one for ``cache=False``.

    Raises:
        ValueError: if ``cache`` is not a bool.
    """
    if not isinstance(cache, bool):
        raise ValueError(f"cache must be True or False, got {cache!r}")
    return _CACHE if cache else _Cache()


# --------------------------------------------------------------------------------------------
# CGFs of the PLLR under Q, per mechanism (scalar API and batches over t)
# --------------------------------------------------------------------------------------------


def _cumulants_from_weights(values: np.ndarray, w: np.ndarray, n: int) -> np.ndarray:
    """Cumulants 1..n (columns) of the laws ``values`` ~ ``w[i]`` (rows of normalized weights;
    ``values`` shared by the rows or one row each).

    Central moments by one weighted sum over the stacked powers of the deviations, then
    kappa_k = mu_k - sum_j C(k-1, j-1) kappa_j mu_{k-j}.
    """
    mean = w @ values if values.ndim == 1 else np.einsum("rn,rn->r", w, values)
    if n == 1:
        return mean[:, None]
    dev = values - mean[:, None]
    power = np.empty((dev.shape[0], n - 1, dev.shape[1]))
    np.multiply(dev, dev, out=power[:, 0])
    for k in range(1, n - 1):
        np.multiply(power[:, k - 1], dev, out=power[:, k])
    mu = (power @ w[:, :, None])[:, :, 0]  # central moments mu_2 .. mu_n (columns)
    out = np.empty((dev.shape[0], n))
    out[:, 0] = mean
    out[:, 1:4] = mu[:, :3]  # kappa_2, kappa_3 = mu_2, mu_3 (and mu_4 corrected below)
    for k in range(4, n + 1):
        acc = mu[:, k - 2].copy()
        for j in range(2, k - 1):
            acc -= _COMB[k - 1][j - 1] * out[:, j - 1] * mu[:, k - j - 2]
        out[:, k - 1] = acc
    return out


def _tilted_cumulants(values: np.ndarray, logw: np.ndarray, n: int) -> tuple[np.ndarray,
                                                                                np.ndarray]:
    """log of the total weight and cumulants 1..n of the discrete laws ``values`` ~ e^logw[i]
    (``values`` shared by the rows or one row each)."""
    top = logw.max(axis=1)
    w = np.exp(logw - top[:, None])
    total = w.sum(axis=1)
    w /= total[:, None]
    return top + np.log(total), _cumulants_from_weights(values, w, n)


@functools.singledispatch
def pllr_cgf(mechanism: Mechanism, t: float, n: int) -> tuple[float, np.ndarray]:
    r"""CGF K_Y(t) = log E_Q e^{tY} of one step's PLLR under Q and its derivatives 1..n.

    Args:
        mechanism: A mechanism with a registered CGF.
        t: Tilt, t > -1 in practice (K_Y(-1) = 0 = K_Y(0)).
        n: Highest derivative (>= 2).

    Returns:
        ``(K(t), [K'(t), ..., K^{(n)}(t)])`` for the mechanism's own (P, Q) order.

    Raises:
        ValueError: if the mechanism has no CGF (e.g. derive-compiled ones): use ``aea``.
    """
    raise ValueError(
        f"the saddlepoint method has no CGF for {type(mechanism).__name__}; use aea "
        "(method 'aea') for this mechanism"
    )


@functools.singledispatch
def _cgf_batch(mechanism: Mechanism, t: np.ndarray, n: int,
               cache: _Cache) -> tuple[np.ndarray, np.ndarray]:
    """K_Y and K_Y^{(1..n)} at every tilt of ``t``: ``(K, D)`` with D[i, j-1] = K^{(j)}(t_i).

    The default evaluates :func:`pllr_cgf` one tilt at a time; mechanisms with a vectorized rule
    register their own.
    """
    k0 = np.empty(t.size)
    der = np.empty((t.size, n))
    for i, x in enumerate(t):
        k, d = pllr_cgf(mechanism, float(x), n)
        k0[i] = k
        der[i] = np.asarray(d, dtype=float)[:n]
    return k0, der


def _scalar(batch: tuple[np.ndarray, np.ndarray]) -> tuple[float, np.ndarray]:
    """The first row of a ``(K, D)`` batch as ``(K(t), D(t))`` (the :func:`pllr_cgf` form)."""
    return float(batch[0][0]), batch[1][0]


_CLOSED_FORM: set[type] = set()  # mechanism classes whose CGF is a closed form (cheap anywhere)


def _closed_form(comp: Composition) -> bool:
    """True if every mechanism of ``comp`` has a closed-form CGF (new tilts cost no quadrature)."""
    return all(type(m) in _CLOSED_FORM for m, _ in comp.terms)


def _register_closed_form(cls: type, batch: Callable[[Any, np.ndarray, int],
                                                     tuple[np.ndarray, np.ndarray]]) -> None:
    """Register a vectorized closed-form CGF ``batch(mechanism, t, n)`` for ``cls`` as both its
    :func:`pllr_cgf` (one tilt) and its batched rule (no cache needed)."""
    _CLOSED_FORM.add(cls)
    pllr_cgf.register(cls)(lambda m, t, n: _scalar(batch(m, np.array([float(t)]), n)))
    _cgf_batch.register(cls)(lambda m, t, n, cache: batch(m, t, n))


@functools.singledispatch
def _pllr_sup(mechanism: Mechanism) -> float:
    """Essential supremum of the PLLR (delta = 0 for eps beyond m times it)."""
    return math.inf


@functools.singledispatch
def _pllr_inf(mechanism: Mechanism) -> float:
    """Essential infimum of the PLLR (its negative bounds the swapped pair order's PLLR)."""
    return -_pllr_sup(mechanism)  # the bounded PLLRs registered below are symmetric


@_pllr_inf.register
def _(mechanism: PoissonSubsampledGaussian) -> float:
    # L = log1p(p expm1(u)) > log(1 - p): the swapped order's PLLR is bounded by -log(1 - p)
    return math.log1p(-mechanism.rate) if mechanism.rate < 1.0 else -math.inf


def _gaussian_batch(mu: float, t: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """K = mu^2 t (t + 1)/2 and K^{(1..n)} at every tilt of ``t`` (module docstring)."""
    mu2 = mu * mu
    der = np.zeros((t.size, n))
    der[:, 0] = mu2 * (t + 0.5)
    if n > 1:
        der[:, 1] = mu2
    return 0.5 * mu2 * t * (t + 1.0), der


_register_closed_form(Gaussian, lambda m, t, n: _gaussian_batch(m.mu, t, n))


def _two_point_batch(eps0: float, t: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """K and K^{(1..n)} of the two-point PLLR +-eps0 (randomized response, ApproxDP) at every
    tilt of ``t`` (module docstring)."""
    if eps0 == 0.0:
        return np.zeros(t.size), np.zeros((t.size, n))
    log_expit = -math.log1p(math.exp(-eps0))  # log expit(eps0); log expit(-eps0) = it - eps0
    logw = np.stack([t * eps0 + log_expit, -t * eps0 - eps0 + log_expit], axis=1)
    return _tilted_cumulants(np.array([eps0, -eps0]), logw, n)


_register_closed_form(RandomizedResponse, lambda m, t, n: _two_point_batch(m.eps, t, n))
_register_closed_form(ApproxDP, lambda m, t, n: _two_point_batch(m.eps, t, n))


@_pllr_sup.register
def _(mechanism: RandomizedResponse) -> float:
    return mechanism.eps


@_pllr_sup.register
def _(mechanism: ApproxDP) -> float:
    return mechanism.eps


@_pllr_sup.register
def _(mechanism: Laplace) -> float:
    return mechanism.mu


@functools.lru_cache(maxsize=64)
def _unit_rule(panels: int) -> tuple[np.ndarray, np.ndarray]:
    """Composite 16-point Gauss-Legendre rule on [0, 1] with ``panels`` equal panels."""
    x, w = gauss_legendre_panels(0.0, 1.0, panels, 16)
    x.setflags(write=False)
    w.setflags(write=False)
    return x, w


def _laplace_batch(mu: float, t: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """K and K^{(1..n)} of the Laplace PLLR at every tilt of ``t`` (module docstring).

    The continuous part e^{c l}/2 on (-mu, mu), c = t + 1/2, by composite Gauss-Legendre with
    ceil(|c| mu) panels (at least one; the largest over the batch), or, for |c| mu > 40, 40
    panels on the 40/|c| next to the end it favours; the atoms at -mu, mu exactly.
    """
    c = t + 0.5
    a = np.abs(c) * mu
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(a > 0.0, -np.expm1(-2.0 * a) / (2.0 * np.abs(c)), mu)
    k0 = -0.5 * mu + a - math.log(2.0) + np.log1p(np.exp(-2.0 * a) + g)
    far = a > 40.0
    panels = 40 if far.any() else max(1, math.ceil(float(a.max())))
    width = np.where(far, 40.0 / np.maximum(np.abs(c), 1e-300), 2.0 * mu)
    lo = np.where(far & (c > 0.0), mu - width, -mu)
    x_ref, w_ref = _unit_rule(panels)
    x = lo[:, None] + width[:, None] * x_ref
    values = np.empty((t.size, x_ref.size + 2))
    values[:, 0], values[:, 1], values[:, 2:] = -mu, mu, x
    logw = np.empty_like(values)
    logw[:, 0], logw[:, 1] = -c * mu, c * mu
    logw[:, 2:] = c[:, None] * x + np.log(0.5 * width)[:, None] + np.log(w_ref)
    return k0, _tilted_cumulants(values, logw, n)[1]


_register_closed_form(Laplace, lambda m, t, n: _laplace_batch(m.mu, t, n))


_SG_NODES = 12  # Gauss-Legendre nodes per panel (panel width min(1/2, 1/mu))
# Rules longer than this many nodes keep only the panels whose midpoint carries a tilted
# weight within e^-100 of some row's largest, or a Gaussian weight above e^-100 (so small K
# keep their relative precision), and the neighbours of those: the log weight s L(x) - x^2/2
# has curvature >= -1 (L is convex), so it falls at least like a unit Gaussian away from a
# maximum, and where it changes steeply between panels it is monotone (a convex stretch); the
# panels dropped contribute below e^-80 relative.
_SG_TRIM = 3000
_SG_LO = -13.0  # left end of the rule (P-mass below it < 1e-38)
_SG_T, _SG_W = np.polynomial.legendre.leggauss(_SG_NODES)


class _SGRule:
    r"""Composite Gauss-Legendre rule of one subsampled Gaussian, extended on demand.

    Panels of fixed width w = min(1/2, 1/mu) start at -13 and panel k has midpoint
    -13 + (k + 1/2) w, so every node is independent of how far the rule has been extended: the
    rule for [-13, X] is a prefix of any longer one. Per node: the PLLR L, log(weight * phi) and
    weight * phi (t-independent; cached per mechanism). The node arrays are replaced, never
    modified, so a rule can be shared.
    """

    def __init__(self, mu: float, rate: float) -> None:
        self.mu = mu
        self.rate = rate
        self.width = min(0.5, 1.0 / mu)
        empty = np.empty(0)
        self.nodes: tuple[int, np.ndarray, np.ndarray, np.ndarray] = (0, empty, empty, empty)

    def panels_for(self, s: list[float]) -> list[int]:
        """Panels covering [-13, ceil(max(s, 1) mu) + 13] for each tilt exponent s = t + 1."""
        mu, width = self.mu, self.width
        return [math.ceil((math.ceil(max(x, 1.0) * mu) + 13.0 - _SG_LO) / width) for x in s]

    def extend(self, panels: int) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        """``(panels, L, log(weight * phi), weight * phi)``, at least ``panels`` panels long
        (grown geometrically)."""
        have, L, logbase, wphi = nodes = self.nodes
        if panels <= have:
            return nodes
        panels = max(panels, have + have // 2, 64)
        k = np.arange(have, panels, dtype=float)
        half = 0.5 * self.width
        x = ((_SG_LO + (k + 0.5) * self.width)[:, None] + half * _SG_T[None, :]).ravel()
        w = np.tile(half * _SG_W, k.size)
        more = np.log(w) - 0.5 * x * x - _LOG_SQRT_2PI
        self.nodes = nodes = (panels,
                              np.concatenate([L, subsampled_gaussian_pllr(x, self.mu, self.rate)]),
                              np.concatenate([logbase, more]),
                              np.concatenate([wphi, np.exp(more)]))
        return nodes

    def cgf(self, t: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """K and K^{(1..n)} at every tilt of ``t`` (rows grouped by the rule length they need)."""
        s = t + 1.0
        panels = self.panels_for(s.tolist())
        longest = max(panels)
        nodes = self.extend(longest)
        if longest <= 1.5 * min(panels):  # one group (the usual case)
            return _sg_group(nodes, s, longest, n)
        k0 = np.empty(t.size)
        der = np.empty((t.size, n))
        order = sorted(range(t.size), key=panels.__getitem__)
        start = 0
        while start < len(order):  # groups: rule lengths within a factor 1.5 share one prefix
            first = panels[order[start]]
            stop = start + 1
            while stop < len(order) and panels[order[stop]] <= 1.5 * first:
                stop += 1
            rows = order[start:stop]
            k0[rows], der[rows] = _sg_group(nodes, s[rows], panels[order[stop - 1]], n)
            start = stop
        return k0, der


def _sg_one(L: np.ndarray, logbase: np.ndarray, wphi: np.ndarray, s: float, small: bool,
            n: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_sg_group` for one tilt exponent ``s`` (1-D arrays: fewer numpy calls)."""
    sl = s * L
    if small:
        e = np.expm1(sl)
        k0 = math.log1p(float(e @ wphi))
        e += 1.0
        e *= wphi
        w = e
    else:
        sl += logbase
        top = float(sl.max())
        sl -= top
        w = np.exp(np.maximum(sl, _LOG_TINY, out=sl))
        k0 = top + math.log(float(w.sum()))
    w /= w.sum()
    mean = float(w @ L)
    out = np.empty((1, n))
    out[0, 0] = mean
    if n > 1:
        dev = L - mean
        wd = w * dev
        mu = [0.0, 0.0]  # mu[k] = central moment k (k >= 2)
        for _ in range(2, n + 1):
            wd *= dev
            mu.append(float(wd.sum()))
        kap = [0.0, mean, *mu[2:4]]  # kappa_1..3 = mean, mu_2, mu_3
        for k in range(4, n + 1):
            acc = mu[k]
            for j in range(2, k - 1):
                acc -= _COMB[k - 1][j - 1] * kap[j] * mu[k - j]
            kap.append(acc)
        out[0, 1:] = kap[2: n + 1]
    return np.array([k0]), out


def _sg_group(nodes: tuple, s: np.ndarray, panels: int, n: int) -> tuple[np.ndarray,
                                                                         np.ndarray]:
    """K and K^{(1..n)} for tilt exponents ``s`` on the first ``panels`` panels of a rule."""
    size = panels * _SG_NODES
    L, logbase, wphi = nodes[1][:size], nodes[2][:size], nodes[3][:size]
    first, last = float(L[0]), float(L[-1])  # L is increasing
    small = [max(x * first, x * last) < 40.0 for x in s.tolist()]  # no overflow in expm1
    if size > _SG_TRIM:  # long rules (large tilts): drop the panels that cannot contribute
        mid = slice(_SG_NODES // 2, size, _SG_NODES)  # one node per panel
        lw = np.multiply.outer(s, L[mid]) + logbase[mid]
        keep = (lw > (lw.max(axis=1) - 100.0)[:, None]).any(axis=0) | (logbase[mid] > -100.0)
        keep[1:] |= keep[:-1]  # and their neighbours
        keep[:-1] |= keep[1:]
        if not keep.all():
            idx = (np.flatnonzero(keep)[:, None] * _SG_NODES + np.arange(_SG_NODES)).ravel()
            L, logbase, wphi = L[idx], logbase[idx], wphi[idx]
    if s.size == 1:
        return _sg_one(L, logbase, wphi, float(s[0]), small[0], n)
    sl = np.multiply.outer(s, L)
    if all(small):  # keep the relative precision of small K: log1p(E[expm1(sL)])
        e = np.expm1(sl)
        k0 = np.log1p(e @ wphi)
        w = (e + 1.0) * wphi
    else:  # log-domain weights for every row, log1p(E[expm1(sL)]) for the small ones
        idx = [i for i, x in enumerate(small) if x]
        e = np.expm1(sl[idx]) if idx else None
        sl += logbase
        top = sl.max(axis=1)
        sl -= top[:, None]
        w = np.exp(np.maximum(sl, _LOG_TINY, out=sl))
        k0 = top + np.log(w.sum(axis=1))
        if idx:
            k0[idx] = np.log1p(e @ wphi)
    w /= w.sum(axis=1)[:, None]
    return k0, _cumulants_from_weights(L, w, n)


def _sg_rule(mechanism: PoissonSubsampledGaussian, cache: _Cache) -> _SGRule:
    """The mechanism's quadrature rule from ``cache`` (built on first use)."""
    return cache.get(("sg-rule", mechanism), lambda: _SGRule(mechanism.mu, mechanism.rate))


@_cgf_batch.register
def _(mechanism: PoissonSubsampledGaussian, t: np.ndarray, n: int,
      cache: _Cache) -> tuple[np.ndarray, np.ndarray]:
    if mechanism.rate == 1.0:
        return _gaussian_batch(mechanism.mu, t, n)
    return _sg_rule(mechanism, cache).cgf(t, n)


@pllr_cgf.register
def _(mechanism: PoissonSubsampledGaussian, t: float, n: int) -> tuple[float, np.ndarray]:
    return _scalar(_cgf_batch(mechanism, np.array([float(t)]), int(n), _CACHE))


_MEMO_MAX = 4096  # CGF rows kept per mechanism (the memo is emptied when it is full)


def _memo_cgf(mechanism: Mechanism, arg: np.ndarray, n: int,
              cache: _Cache) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_cgf_batch` through the per-mechanism memo of exact CGF rows (keyed by tilt, n).

    The tilts of the bracket candidates and of the grid do not depend on m or delta, so repeated
    queries on a mechanism find their CGF rows here.
    """
    memo = cache.get(("cgf", mechanism), dict)
    keys = arg.tolist()
    rows = [memo.get((x, n)) for x in keys]
    miss = [i for i, r in enumerate(rows) if r is None]
    if not miss:
        return np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
    k_new, d_new = _cgf_batch(mechanism, arg[miss] if len(miss) < len(keys) else arg, n, cache)
    if len(memo) + len(miss) > _MEMO_MAX:
        memo.clear()
    for j, i in enumerate(miss):
        rows[i] = memo[(keys[i], n)] = (float(k_new[j]), d_new[j])
    if len(miss) == len(keys):
        return k_new, d_new
    return np.array([r[0] for r in rows]), np.array([r[1] for r in rows])


def _composed_batch(comp: Composition, swap: np.ndarray, t: np.ndarray, n: int,
                    cache: _Cache) -> tuple[np.ndarray, np.ndarray]:
    """K_S and its derivatives 1..n at tilts ``t``, row i in the swapped order if swap[i]."""
    flip = bool(swap.any())
    arg = np.where(swap, -1.0 - t, t) if flip else t
    total = der = None
    for mech, count in comp.terms:
        k0, d = _memo_cgf(mech, arg, n, cache)
        if total is None:
            total, der = count * k0, count * d
        else:
            total = total + count * k0
            der = der + count * d
    if flip:
        der[swap] *= _SIGNS[:n]
    return total, der


def _check_supported(comp: Composition) -> None:
    """Check that every mechanism of ``comp`` has a registered CGF.

    Raises:
        ValueError: for the first mechanism without one ("use aea").
    """
    default = pllr_cgf.registry[object]
    for mech, _ in comp.terms:
        if pllr_cgf.dispatch(type(mech)) is default:
            pllr_cgf(mech, 0.0, 2)  # raises ValueError("... use aea")
