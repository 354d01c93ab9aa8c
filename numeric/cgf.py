r"""Cumulant generating functions of the composed PLLR: K(t) and its derivatives.

One step's privacy-loss log-ratio (PLLR) Y under Q has the cumulant generating function
:math:`K_Y(t) = \log E_Q e^{tY}`, and the composed PLLR S (docs/math.md section 1) has
:math:`K(t) = \sum_i m_i K_i(t)`; the tilted law :math:`dQ_t = e^{tS - K(t)} dQ` has cumulants
:math:`K^{(j)}(t)` (exponential tilting; Daniels, *Saddlepoint approximations in statistics*,
Ann. Math. Statist. 25, 1954; the saddle-point accountant of Alghamdi, Gomez, Asoodeh, Calmon,
Kosut, Sankar, arXiv:2208.09595, 2022). This module composes them for the saddlepoint
accountant (:mod:`numeric.saddlepoint`), batched over tilts t and in either pair order (for the
swapped pair, K_S(t) = K(-1-t), so :math:`K_S^{(j)}(t) = (-1)^j K^{(j)}(-1-t)`).

Each mechanism's CGF is its own: :meth:`numeric.mechanisms.Mechanism.cgf_batch` (the formulas
are in the mechanism modules; a mechanism without one raises
:class:`~numeric.errors.NotApplicable`, "use aea"), with ``cgf_closed_form`` saying whether new
tilts are cheap. :func:`pllr_cgf` is its one-tilt form.

Caching ("cold": the first query for a mechanism; "warm": later ones, e.g. for other m or
delta). Data that depends on neither m nor delta is kept per mechanism in a :class:`CGFCache`,
keyed by the mechanism itself (a frozen dataclass, so a change of any parameter is a new entry;
least recently used entries are dropped beyond 96, and at most 4096 CGF rows are kept per
mechanism): the CGF rows K^{(j)}(t) at every tilt evaluated (the saddlepoint accountant's
bracket candidates and, for a given t_0, its grid points are the same for every m and delta);
and, stored there by :mod:`numeric.saddlepoint`, the eps = 0 tilt t_0 with K''(t_0) of each
pair order and the points evaluated per composition. The cache holds exact values, not
interpolants, so cached and uncached results agree to rounding; ``cache=False`` bypasses it and
:func:`clear_cgf_cache` empties it (and the mechanisms' own t-independent quadrature tables,
:func:`numeric.mechanisms.base.clear_cgf_caches`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from .composition import Composition
from .mechanisms.base import Mechanism, clear_cgf_caches

__all__ = [
    "CGFCache",
    "check_supported",
    "clear_cgf_cache",
    "closed_form",
    "composed_cgf_batch",
    "pllr_cgf",
    "resolve_cache",
]

_CACHE_SIZE = 96  # entries (CGF memos, eps = 0 tilts, points) kept by the per-mechanism cache
_SIGNS = (-1.0) ** np.arange(1, 32)  # d^j/dt^j of K(-1 - t) = (-1)^j K^{(j)}(-1 - t)
_MEMO_MAX = 4096  # CGF rows kept per mechanism (the memo is emptied when it is full)


# --------------------------------------------------------------------------------------------
# The per-mechanism cache
# --------------------------------------------------------------------------------------------


class CGFCache:
    """A small LRU map for per-mechanism data that depends on neither m nor delta.

    Args:
        maxsize: Entries kept (the least recently used are dropped beyond it).
    """

    def __init__(self, maxsize: int = _CACHE_SIZE) -> None:
        self.maxsize = maxsize
        self._data: OrderedDict[Hashable, object] = OrderedDict()

    def get(self, key: Hashable, factory: Callable[[], object] | None = None) -> Any:
        """The entry for ``key``; built by ``factory`` (and stored) when missing.

        Args:
            key: The entry's key.
            factory: Builds the entry when it is missing (None: return None instead).

        Returns:
            The entry, or None when it is missing and there is no factory.
        """
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


_CACHE = CGFCache()


def clear_cgf_cache() -> None:
    """Empty the saddlepoint accountant's per-mechanism cache.

    The cache holds CGF values at the tilts evaluated, eps = 0 tilts and points (module
    docstring); the mechanisms' quadrature tables are dropped too. Queries after this behave
    like the first query for each mechanism ("cold"); results do not change (the caches hold
    exact values, not interpolants).
    """
    _CACHE.clear()
    clear_cgf_caches()


def resolve_cache(cache: bool) -> CGFCache:
    """The shared cache for ``cache=True``, a fresh empty one for ``cache=False``.

    Args:
        cache: Whether to use the shared cache.

    Returns:
        A :class:`CGFCache`.

    Raises:
        ValueError: if ``cache`` is not a bool.
    """
    if not isinstance(cache, bool):
        raise ValueError(f"cache must be True or False, got {cache!r}")
    return _CACHE if cache else CGFCache()


# --------------------------------------------------------------------------------------------
# One mechanism's CGF at one tilt; capabilities of a composition
# --------------------------------------------------------------------------------------------


def pllr_cgf(mechanism: Mechanism, t: float, n: int) -> tuple[float, np.ndarray]:
    r"""CGF K_Y(t) = log E_Q e^{tY} of one step's PLLR under Q and its derivatives 1..n.

    The one-tilt form of :meth:`~numeric.mechanisms.Mechanism.cgf_batch`.

    Args:
        mechanism: A mechanism with a CGF.
        t: Tilt, t > -1 in practice (K_Y(-1) = 0 = K_Y(0)).
        n: Highest derivative (>= 1).

    Returns:
        ``(K(t), [K'(t), ..., K^{(n)}(t)])`` for the mechanism's own (P, Q) order.

    Raises:
        NotApplicable: if the mechanism has no CGF (``Mechanism.cgf_batch`` not implemented).
    """
    k0, der = mechanism.cgf_batch(np.array([float(t)]), int(n))
    return float(k0[0]), der[0]


def closed_form(comp: Composition) -> bool:
    """True if every mechanism of ``comp`` has a closed-form CGF (new tilts cost no quadrature).

    Args:
        comp: A composition.

    Returns:
        Whether every term's ``cgf_closed_form`` is set.
    """
    return all(m.cgf_closed_form for m, _ in comp.terms)


def check_supported(comp: Composition) -> None:
    """Check that every mechanism of ``comp`` has a CGF.

    Args:
        comp: A composition.

    Raises:
        NotApplicable: for the first mechanism without one ("use aea").
    """
    for mech, _ in comp.terms:
        if not mech.has_cgf:
            mech.cgf_batch(np.zeros(1), 2)  # raises NotApplicable("... use aea")


# --------------------------------------------------------------------------------------------
# The composed CGF (memoized per mechanism, either pair order)
# --------------------------------------------------------------------------------------------


def _memo_cgf(mechanism: Mechanism, arg: np.ndarray, n: int,
              cache: CGFCache) -> tuple[np.ndarray, np.ndarray]:
    """``mechanism.cgf_batch`` through the per-mechanism memo of exact CGF rows (keyed by tilt,
    n).

    The tilts of the bracket candidates and of the grid do not depend on m or delta, so repeated
    queries on a mechanism find their CGF rows here.
    """
    memo = cache.get(("cgf", mechanism), dict)
    keys = arg.tolist()
    rows = [memo.get((x, n)) for x in keys]
    miss = [i for i, r in enumerate(rows) if r is None]
    if not miss:
        return np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
    k_new, d_new = mechanism.cgf_batch(arg[miss] if len(miss) < len(keys) else arg, n)
    if len(memo) + len(miss) > _MEMO_MAX:
        memo.clear()
    for j, i in enumerate(miss):
        rows[i] = memo[(keys[i], n)] = (float(k_new[j]), d_new[j])
    if len(miss) == len(keys):
        return k_new, d_new
    return np.array([r[0] for r in rows]), np.array([r[1] for r in rows])


def composed_cgf_batch(comp: Composition, swap: np.ndarray, t: np.ndarray, n: int,
                       cache: CGFCache) -> tuple[np.ndarray, np.ndarray]:
    r"""K_S and its derivatives 1..n at tilts ``t``, row i in the swapped order if swap[i].

    :math:`K_S(t) = \sum_i m_i K_i(t)` over the terms, and for the swapped pair
    :math:`K_S^{(j)}(t) = (-1)^j K^{(j)}(-1-t)` (module docstring).

    Args:
        comp: A composition whose mechanisms have CGFs.
        swap: Bool per row: evaluate the swapped pair order (Q, P).
        t: Tilts (1-D float array).
        n: Highest derivative (>= 1).
        cache: The per-mechanism memo (:func:`resolve_cache`).

    Returns:
        ``(K, D)`` with D[i, j - 1] = K_S^{(j)}(t_i).

    Raises:
        NotApplicable: if a mechanism has no CGF.
    """
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
