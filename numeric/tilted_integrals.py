r"""The integrals J_k(a) and D_k = J_k(a_1) - J_k(a_2) of the tilted-Edgeworth series.

The saddlepoint accountant (:mod:`numeric.saddlepoint`) replaces the standardized tilted law by
its Edgeworth density :math:`\varphi(y)[1 + \sum_k c_k He_k(y)]` (probabilists' Hermite
polynomials He_k; Hall, *The Bootstrap and Edgeworth Expansion*, 1992, Section 2.2) and needs,
per tilt t with tilted standard deviation s,

.. math::

    J_k(a) = \int_0^\infty e^{-ay}\varphi(y) He_k(y)\,dy, \qquad
    D_k = J_k(a_1) - J_k(a_2),\quad a_1 = ts,\ a_2 = (t+1)s = a_1 + s,

and, for the slope of its root search, :math:`\partial D_k/\partial s = J_{k+1}(a_2) + k
J_{k-1}(a_2)` (from :math:`\partial_a J_k(a) = -(J_{k+1}(a) + k J_{k-1}(a))`, since
y He_k = He_{k+1} + k He_{k-1}). Everything is batched over rows (a_1, s).

Since :math:`\varphi He_k = -(\varphi He_{k-1})'`, integration by parts gives the recursion
:math:`J_k(a) = \varphi(0) He_{k-1}(0) - a J_{k-1}(a)` with
:math:`J_0(a) = e^{a^2/2}\bar\Phi(a) = \tfrac12\operatorname{erfcx}(a/\sqrt2)`. It is stable for
small a (errors grow like a^k); for a >= 3 the integrals are evaluated by Gauss-Laguerre in
u = a y (48 nodes: against a 120-node rule they reach the same 1e-13 floor, relative to the
largest D_k of a row, as 80 nodes; for k <= 7 through the moments sum_i w_i (u_i/a)^j and
He_k's monomial coefficients, one matrix product). The difference D_k is taken *directly*
where it would cancel:
:math:`D_k = \int_0^\infty e^{-a_1 y}(-\operatorname{expm1}(-sy))\varphi(y) He_k(y)\,dy`
(Gauss-Laguerre for a_1 >= 3 and s <= 4 a_1; composite Gauss-Legendre on the +-14 window of the
Gaussian factor when s < 1/4); for s > 4 a_1 (t < 1/4) the factor varies faster than the
Laguerre nodes resolve, but J(a_2) < J(a_1)/5 and D = J(a_1) - J(a_2) is taken with each term
by Gauss-Laguerre. Negative tilts (t in (-1, 0), eps below the mean of S) are handled by the
same formulas, with the factor e^{a_1^2/2} carried in log space: every row is returned scaled by
:math:`e^{-\mathrm{log\_scale}}`, log_scale = min(a_1, 0)^2/2.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

from .moments import gauss_legendre_panels

__all__ = ["d_batch", "d_integrals"]

_A_LAG = 3.0  # Gauss-Laguerre for a >= this, recursion below
_S_SMALL = 0.25  # below this (and a1 < _A_LAG) D_k is integrated directly
_PHI0 = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_HALF = math.sqrt(0.5)
_LAG_U, _LAG_W = np.polynomial.laguerre.laggauss(48)
_KRANGE = np.arange(64.0)


@functools.lru_cache(maxsize=16)
def _he0(kmax: int) -> tuple[float, ...]:
    """He_k(0), k = 0..kmax (cached)."""
    out = [1.0, 0.0]
    for j in range(1, kmax):
        out.append(-j * out[j - 1])
    return tuple(out[: kmax + 1])


def _hermite_stack(kmax: int, y: np.ndarray) -> np.ndarray:
    """He_k(y), k = 0..kmax, stacked along a new first axis (three-term recurrence)."""
    out = np.empty((kmax + 1, *y.shape))
    out[0] = 1.0
    if kmax >= 1:
        out[1] = y
    for j in range(1, kmax):
        np.multiply(y, out[j], out=out[j + 1])
        out[j + 1] -= j * out[j - 1]
    return out


@functools.lru_cache(maxsize=16)
def _j_toeplitz(kmax: int) -> np.ndarray:
    """T[j, k] = He_{k-1-j}(0) for j < k, else 0 (the unrolled recursion of J_k)."""
    he0 = _he0(kmax)
    out = np.zeros((kmax + 1, kmax + 1))
    for k in range(1, kmax + 1):
        for j in range(k):
            out[j, k] = he0[k - 1 - j]
    out.setflags(write=False)
    return out


def _j_recursion(a: np.ndarray, kmax: int, log_scale: np.ndarray) -> np.ndarray:
    r"""e^{-log_scale} J_k(a), k = 0..kmax (columns), from J_k = phi(0) He_{k-1}(0) - a J_{k-1}.

    The recursion unrolled, :math:`J_k = (-a)^k J_0 + \varphi(0)\sum_{j<k} (-a)^j
    He_{k-1-j}(0)`, used for a < 3 where it is stable; J_0(a) = e^{a^2/2} Phibar(a) =
    erfc(a/sqrt 2) e^{a^2/2}/2 (no overflow or cancellation for a < 3; for a < 0 the scale
    e^{-log_scale} = e^{-a_1^2/2} is taken out)."""
    x = a * _SQRT_HALF
    j0 = 0.5 * special.erfc(x) * np.exp(x * x - log_scale)
    powers = np.power.outer(-a, np.arange(kmax + 1.0))
    return j0[:, None] * powers + (_PHI0 * np.exp(-log_scale))[:, None] * (
        powers @ _j_toeplitz(kmax))


def _project(h: np.ndarray, base: np.ndarray) -> np.ndarray:
    """sum_i base[r, i] He_k(y[r, i]) for stacked He values ``h`` [k, r, i] -> [r, k]."""
    return np.einsum("kri,ri->rk", h, base)


_MONO_K = 8  # up to He_7 (orders <= 2) Gauss-Laguerre sums go through monomial moments


def _hermite_monomials(kmax: int) -> np.ndarray:
    """H[k, j]: He_k(y) = sum_j H[k, j] y^j, k, j = 0..kmax."""
    out = np.zeros((kmax + 1, kmax + 1))
    out[0, 0] = 1.0
    if kmax >= 1:
        out[1, 1] = 1.0
    for j in range(1, kmax):
        out[j + 1, 1:] = out[j, :-1]
        out[j + 1] -= j * out[j - 1]
    return out


_LAG_POW = _LAG_U[:, None] ** np.arange(_MONO_K + 1.0)  # u_i^j
_LAG_U2 = _LAG_U * _LAG_U
_HE_MONO = _hermite_monomials(_MONO_K - 1)


def _d_laguerre(a: np.ndarray, s: np.ndarray, kmax: int) -> tuple[np.ndarray, np.ndarray]:
    """D (k <= kmax + 1) and dD/ds (k <= kmax) by Gauss-Laguerre in u = a y, a >= 3.

    With s = inf the first part is J_k(a) (the second is then 0). For k <= 7 the sums
    sum_i w_i He_k(u_i/a) are taken as He's monomial coefficients times the moments
    sum_i w_i (u_i/a)^j (one matrix product; no cancellation to speak of for a >= 3: the
    moments fall like j!/a^j); higher k use the three-term recurrence at the nodes.
    """
    inv = 1.0 / a
    base = np.exp(np.multiply.outer(-0.5 * inv * inv, _LAG_U2))
    base *= _LAG_W
    em = np.expm1(np.multiply.outer(-s * inv, _LAG_U))  # e^{-s y} - 1 at y = u/a
    top = kmax + 2
    if top <= _MONO_K:
        scale = np.power.outer(inv, np.arange(1.0, top + 1.0))  # (1/a)^{j+1}
        scale *= _PHI0
        d = ((em * base) @ _LAG_POW[:, :top]) * scale
        em += 1.0
        em *= base
        ds = (em @ _LAG_POW[:, 1:top]) * scale[:, 1:]
        return d @ -_HE_MONO[:top, :top].T, ds @ _HE_MONO[: top - 1, : top - 1].T
    y = _LAG_U * inv[:, None]
    base *= (_PHI0 * inv)[:, None]
    h = _hermite_stack(kmax + 1, y)
    d = _project(h, -em * base)
    em += 1.0
    em *= y
    em *= base
    return d, _project(h[: kmax + 1], em)


@functools.lru_cache(maxsize=64)
def _direct_rule(lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """Composite 16-point Gauss-Legendre on [lo, hi] (integers), panels of width <= 2."""
    y, w = gauss_legendre_panels(float(lo), float(hi), max(1, math.ceil((hi - lo) / 2)), 16)
    y.setflags(write=False)
    w.setflags(write=False)
    return y, w


def _d_direct(a1: np.ndarray, s: np.ndarray, ls: np.ndarray,
              kmax: int) -> tuple[np.ndarray, np.ndarray]:
    """D and dD/ds for small s: composite Gauss-Legendre of e^{-a1 y - y^2/2} (-expm1(-s y)).

    The scaled integrand e^{-a1 y - y^2/2 - log_scale} is at most e^{-(y - c)^2/2} with
    c = max(0, -a1): the rule covers c - 14 .. c + 14 (the rest is below e^{-98})."""
    peak = np.maximum(0.0, -a1)
    y, half_y2, w_phi, h_t, hs_t = _direct_tables(max(0, math.floor(float(peak.min()) - 14.0)),
                                                  math.ceil(float(peak.max()) + 14.0), kmax)
    expo = np.multiply.outer(-a1, y)
    expo -= half_y2
    expo -= ls[:, None]
    base = np.exp(expo, out=expo)
    base *= w_phi
    em = np.expm1(np.multiply.outer(-s, y))
    d = (em * base) @ h_t
    em += 1.0
    em *= y
    em *= base
    return np.negative(d, out=d), em @ hs_t


@functools.lru_cache(maxsize=64)
def _direct_tables(lo: int, hi: int, kmax: int) -> tuple[np.ndarray, ...]:
    """Per :func:`_direct_rule`: nodes y, y^2/2, weights * phi(0), He_k(y) (k <= kmax + 1) and
    He_k(y) (k <= kmax), transposed (read-only; shared by the batches)."""
    y, w = _direct_rule(lo, hi)
    h = _hermite_stack(kmax + 1, y)
    out = (y, 0.5 * y * y, w * _PHI0, np.ascontiguousarray(h.T),
           np.ascontiguousarray(h[: kmax + 1].T))
    for a in out:
        a.setflags(write=False)
    return out


def d_batch(a1: np.ndarray, s: np.ndarray, kmax: int) -> tuple[np.ndarray, np.ndarray,
                                                                  np.ndarray]:
    r"""``(log_scale, D, Ds)`` per row: D[:, k] = e^{-log_scale} int_0^inf (e^{-a1 y} -
    e^{-(a1+s) y}) phi(y) He_k(y) dy for k = 0..kmax+1, and Ds[:, k] = dD_k/ds =
    e^{-log_scale} (J_{k+1}(a1+s) + k J_{k-1}(a1+s)) for k = 0..kmax (module docstring).

    a1 >= 3: Gauss-Laguerre in u = a1 y with the difference taken inside the integrand, or, if
    s > 4 a1 (where the factor 1 - e^{-s y} varies faster than the rule resolves and
    J(a1 + s) < J(a1)/5 does not cancel), J(a1) - J(a1 + s) each by Gauss-Laguerre. a1 < 3 and
    s >= 1/4: the recursion at both ends (Gauss-Laguerre for J(a1 + s) when a1 + s >= 3).
    Smaller s: composite Gauss-Legendre of the difference. All Gauss-Laguerre evaluations of a
    batch share one pass (J(a) is the difference integral with s = inf), and so do all
    recursions.

    Args:
        a1: a_1 = t s per row (1-D float array).
        s: The tilted standard deviation s > 0 per row.
        kmax: Highest Hermite index of the series (D is returned up to kmax + 1).

    Returns:
        ``(log_scale, D, Ds)``: log_scale = min(a1, 0)^2/2 per row, D of shape
        (rows, kmax + 2) and Ds of shape (rows, kmax + 1).
    """
    top = kmax + 1
    ls = np.minimum(a1, 0.0)
    ls *= ls
    ls *= 0.5
    lag = a1 >= _A_LAG
    split = lag & (s > 4.0 * a1)
    if lag.all() and not split.any():  # the usual case: one Gauss-Laguerre pass
        return (ls, *_d_laguerre(a1, s, kmax))
    if not lag.any() and not (s >= _S_SMALL).any():  # small s only: one direct pass
        return (ls, *_d_direct(a1, s, ls, kmax))
    rows = a1.size
    rec = ~lag & (s >= _S_SMALL)
    a2 = a1 + s
    far = rec & (a2 >= _A_LAG)
    # rows by kind, contiguous: 0 Laguerre difference, 1 split, 2 recursion with J(a2) by
    # Laguerre, 3 recursion at both ends, 4 direct (numpy only on slices from here on)
    kind = np.where(lag, split.astype(np.intp), np.where(rec, 3 - far, 4))
    order = np.argsort(kind, kind="stable")
    n_in, n_sp, n_far, n_near, _ = np.bincount(kind, minlength=5).tolist()
    b_sp, b_far = n_in + n_sp, n_in + n_sp + n_far
    b_near = b_far + n_near
    a1p, sp_, lsp, a2p = a1[order], s[order], ls[order], a2[order]
    D = np.empty((rows, top + 1))
    Ds = np.empty((rows, top))
    j2 = np.empty((b_near - n_in, top + 1))  # J(a2) of the difference rows (split, recursion)
    j1 = np.empty((b_near - n_in, top + 1))  # J(a1) of the same rows
    if b_far:  # Gauss-Laguerre: D at (a1, s); J at (a1, inf) and (a2, inf)
        dl, dsl = _d_laguerre(np.concatenate([a1p[:b_sp], a2p[n_in:b_far]]),
                              np.concatenate([sp_[:n_in], np.full(b_far - n_in + n_sp,
                                                                  math.inf)]), kmax)
        D[:n_in], Ds[:n_in] = dl[:n_in], dsl[:n_in]
        j1[:n_sp] = dl[n_in:b_sp]
        j2[:n_sp + n_far] = dl[b_sp:]
        if n_far:
            j2[n_sp:n_sp + n_far] *= np.exp(-lsp[b_sp:b_far])[:, None]
    if n_far + n_near:  # the recursion: J(a1) of the recursion rows, J(a2) of the near ones
        jr = _j_recursion(np.concatenate([a1p[b_sp:b_near], a2p[b_far:b_near]]), top,
                          np.concatenate([lsp[b_sp:b_near], lsp[b_far:b_near]]))
        j1[n_sp:] = jr[: n_far + n_near]
        j2[n_sp + n_far:] = jr[n_far + n_near:]
    if b_near > n_in:
        D[n_in:b_near] = j1 - j2
        ds = Ds[n_in:b_near]  # J_{k+1} + k J_{k-1} at a2, k = 0..kmax
        ds[:] = j2[:, 1:]
        ds[:, 1:] += _KRANGE[1:top] * j2[:, : top - 1]
    if b_near < rows:
        D[b_near:], Ds[b_near:] = _d_direct(a1p[b_near:], sp_[b_near:], lsp[b_near:], kmax)
    out_d, out_ds = np.empty_like(D), np.empty_like(Ds)
    out_d[order], out_ds[order] = D, Ds
    return ls, out_d, out_ds


def d_integrals(a1: float, s: float, kmax: int) -> tuple[float, np.ndarray]:
    """``(log_scale, D)`` with D_k = e^{-log_scale} int_0^inf (e^{-a1 y} - e^{-(a1+s) y})
    phi(y) He_k(y) dy, k = 0..kmax (module docstring; one row of :func:`d_batch`).

    Args:
        a1: a_1 = t s.
        s: The tilted standard deviation, > 0.
        kmax: Highest Hermite index.

    Returns:
        ``(log_scale, D)`` with D of length kmax + 1.
    """
    ls, D, _ = d_batch(np.array([float(a1)]), np.array([float(s)]), kmax)
    return float(ls[0]), D[0, : kmax + 1]
