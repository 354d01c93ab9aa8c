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

Since :math:`\varphi He_k = -(\varphi He_{k-1})'`, integration by parts gives the recursion
:math:`J_k(a) = \varphi(0) He_{k-1}(0) - a J_{k-1}(a)` with
:math:`J_0(a) = e^{a^2/2}\bar\Phi(a) = \tfrac12\operatorname{erfcx}(a/\sqrt2)`. It is stable for
small a (errors grow like a^k); for a >= 3 the integrals are evaluated by Gauss-Laguerre in
u = a y (80 nodes; for k <= 7 through the moments sum_i w_i (u_i/a)^j and He_k's monomial
coefficients, one matrix product). The difference D_k is taken *directly* where it would cancel:
:math:`D_k = \int_0^\infty e^{-a_1 y}(-\operatorname{expm1}(-sy))\varphi(y) He_k(y)\,dy`
(Gauss-Laguerre for a_1 >= 3 and s <= 4 a_1; composite Gauss-Legendre on the +-14 window of the
Gaussian factor when s < 1/4); for s > 4 a_1 (t < 1/4) the factor varies faster than the
Laguerre nodes resolve, but J(a_2) < J(a_1)/5 and D = J(a_1) - J(a_2) is taken with each term
by Gauss-Laguerre. Negative tilts (t in (-1, 0), eps below the mean of S) are handled by the
same formulas, with the factor e^{a_1^2/2} carried in log space. At order 0 the method is exact
for Gaussian compositions (the tilted law of a Gaussian is Gaussian).

eps(delta): t parametrizes eps = K'(t) monotonically, so eps(delta) is a 1-D root find in t of
:math:`g(t) = \log\delta_r(t) - \log\delta`. Per pair order: the tilt t_0 of eps = 0
(K'(t_0) = 0, in [-1, 0]); a bracket t_hi from the sequence 1, 3, 7, ..., 2 t_hi + 1 (the first
t_hi with g(t_hi) < 0 and g(2 t_hi + 1) < 0); a 10-point grid scan on [t_0, t_hi] that counts
the down-crossings (more than one root is flagged; the largest is reported); and a safeguarded
Newton refinement on the last sign change, started from the cubic Hermite interpolant of the
two grid ends and using the analytic slope

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
(|g| <= 1e-13, or a Newton step below 1e-11 relative). Both pair orders are accounted for (for
the swapped pair, K_S(t) = K(-1-t)); the max is reported with its direction. Delta parts of
ApproxDP terms enter exactly through GDP Eq. 13, delta = d + (1 - d) delta_pure.

Evaluation: every stage evaluates a *batch* of tilts at once, vectorized over t (the CGF
quadrature, the integrals D_k and the series coefficients; batches of a few tilts do the
per-tilt arithmetic in Python floats, where numpy's per-call overhead would dominate), and the
two pair orders (and, in :func:`saddlepoint_delta`, all eps values) are solved in lockstep, so
one batch serves every search that is still running. The first batch also evaluates the grids
of the one or two bracket ends t_hi that a normal approximation makes likely (the root of
:math:`-v t^2/2 - \log(\sqrt{2\pi v}\,t(t+1)) = \log\delta`, v = K''(t_0)); when the bracket
scan confirms one of them the grid batch is saved. A well-behaved query then takes three
batches (bracket and grid, two Newton steps), whatever m is; the bracket and grid are exactly
those described above, whether or not they were guessed.

Caching ("cold": the first query for a mechanism; "warm": later ones, e.g. for other m or
delta). Data that depends on neither m nor delta is kept per mechanism, keyed by the mechanism
itself (a frozen dataclass, so a change of any parameter is a new entry; least recently used
entries are dropped beyond 96, and at most 4096 CGF rows are kept per mechanism): the nodes,
PLLR values and Gaussian weights of the subsampled Gaussian quadrature rule; the CGF rows
K^{(j)}(t) at every tilt evaluated (the bracket candidates and, for a given t_0, the grid
points are the same for every m and delta); and the
eps = 0 tilt t_0 with K''(t_0) of each pair order (keyed by the mechanisms and their count
*proportions*, since K_S/m does not depend on m). The cache holds exact values, not
interpolants, so cached and uncached results agree to rounding; ``cache=False`` bypasses it and
:func:`clear_cgf_cache` empties it.

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
* Poisson-subsampled Gaussian: :math:`K(t) = \log E_P e^{(t+1)L}`, L = log1p(p expm1(u)),
  u = mu x - mu^2/2, by composite Gauss-Legendre quadrature over [-13, X] with
  X >= max(t+1, 1) mu + 13 (panels of fixed width min(1/2, 1/mu) from -13, 12 nodes each, so
  a longer rule extends a shorter one) with K = log1p(E_P[expm1((t+1)L)]) to keep relative
  precision for small rates; validated against the exact integer moments
  :math:`E_P e^{kL} = \sum_j \binom kj (1-p)^{k-j}p^j e^{j(j-1)\mu^2/2}`.

Higher derivatives are the cumulants of the tilted law, computed from its central moments.

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
from collections import OrderedDict
from collections.abc import Callable, Generator, Hashable
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from ._validation import as_float_array, check_delta, check_order
from .composition import Composition, compose
from .edgeworth import SERIES_ORDERS, cumulants_needed
from .mechanisms import (
    ApproxDP,
    Gaussian,
    Laplace,
    Mechanism,
    PoissonSubsampledGaussian,
    RandomizedResponse,
)
from .mechanisms.base import DIRECTION_QP
from .mechanisms.subsampled_gaussian import subsampled_gaussian_pllr
from .moments import gauss_legendre_panels
from .results import DeltaResult, EpsilonResult

__all__ = ["clear_cgf_cache", "pllr_cgf", "saddlepoint_delta", "saddlepoint_epsilon"]

METHOD = "saddlepoint"
L3_MAX = 0.2
L4_MAX = 0.1
ORDER_DISAGREEMENT_MAX = 1e-3
FEW_SAMPLED_STEPS = 10.0  # sum(rate * m) below this: the "one big step" regime
_A_LAG = 3.0  # Gauss-Laguerre for a >= this, recursion below
_S_SMALL = 0.25  # below this (and a1 < _A_LAG) D_k is integrated directly
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_PHI0 = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_HALF = math.sqrt(0.5)
_LAG_U, _LAG_W = np.polynomial.laguerre.laggauss(80)
_SLOPE_STEP = 1e-6  # central-difference step (in t) of the series coefficients c_k(l(t))
_CACHE_SIZE = 96  # entries (rules, CGF memos, eps = 0 tilts) kept by the per-mechanism cache
_MAX_ROUNDS = 2000  # batches per query; every search below is bounded far below this
_SIGNS = (-1.0) ** np.arange(1, 32)  # d^j/dt^j of K(-1 - t) = (-1)^j K^{(j)}(-1 - t)
_KRANGE = np.arange(64.0)
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

    def get(self, key: Hashable, factory: Callable[[], object] | None = None):
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
    top = np.max(logw, axis=1)
    w = np.exp(logw - top[:, None])
    total = np.sum(w, axis=1)
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
    return float(batch[0][0]), batch[1][0]


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
    mu2 = mu * mu
    der = np.zeros((t.size, n))
    der[:, 0] = mu2 * (t + 0.5)
    if n > 1:
        der[:, 1] = mu2
    return 0.5 * mu2 * t * (t + 1.0), der


@pllr_cgf.register
def _(mechanism: Gaussian, t: float, n: int) -> tuple[float, np.ndarray]:
    return _scalar(_gaussian_batch(mechanism.mu, np.array([float(t)]), n))


@_cgf_batch.register
def _(mechanism: Gaussian, t: np.ndarray, n: int, cache: _Cache):
    return _gaussian_batch(mechanism.mu, t, n)


def _two_point_batch(eps0: float, t: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    if eps0 == 0.0:
        return np.zeros(t.size), np.zeros((t.size, n))
    log_expit = -math.log1p(math.exp(-eps0))  # log expit(eps0); log expit(-eps0) = it - eps0
    logw = np.stack([t * eps0 + log_expit, -t * eps0 - eps0 + log_expit], axis=1)
    return _tilted_cumulants(np.array([eps0, -eps0]), logw, n)


@pllr_cgf.register
def _(mechanism: RandomizedResponse, t: float, n: int) -> tuple[float, np.ndarray]:
    return _scalar(_two_point_batch(mechanism.eps, np.array([float(t)]), n))


@pllr_cgf.register
def _(mechanism: ApproxDP, t: float, n: int) -> tuple[float, np.ndarray]:
    return _scalar(_two_point_batch(mechanism.eps, np.array([float(t)]), n))


@_cgf_batch.register
def _(mechanism: RandomizedResponse, t: np.ndarray, n: int, cache: _Cache):
    return _two_point_batch(mechanism.eps, t, n)


@_cgf_batch.register
def _(mechanism: ApproxDP, t: np.ndarray, n: int, cache: _Cache):
    return _two_point_batch(mechanism.eps, t, n)


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
    panels = 40 if far.any() else max(1, math.ceil(float(np.max(a))))
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


@pllr_cgf.register
def _(mechanism: Laplace, t: float, n: int) -> tuple[float, np.ndarray]:
    return _scalar(_laplace_batch(mechanism.mu, np.array([float(t)]), n))


@_cgf_batch.register
def _(mechanism: Laplace, t: np.ndarray, n: int, cache: _Cache):
    return _laplace_batch(mechanism.mu, t, n)


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
        keep = (lw > (np.max(lw, axis=1) - 100.0)[:, None]).any(axis=0) | (logbase[mid] > -100.0)
        keep[1:] |= keep[:-1]  # and their neighbours
        keep[:-1] |= keep[1:]
        if not keep.all():
            idx = (np.flatnonzero(keep)[:, None] * _SG_NODES + np.arange(_SG_NODES)).ravel()
            L, logbase, wphi = L[idx], logbase[idx], wphi[idx]
    sl = np.multiply.outer(s, L)
    if all(small):  # keep the relative precision of small K: log1p(E[expm1(sL)])
        e = np.expm1(sl)
        k0 = np.log1p(e @ wphi)
        w = (e + 1.0) * wphi
    else:  # log-domain weights for every row, log1p(E[expm1(sL)]) for the small ones
        idx = [i for i, x in enumerate(small) if x]
        e = np.expm1(sl[idx]) if idx else None
        sl += logbase
        top = np.max(sl, axis=1)
        sl -= top[:, None]
        w = np.exp(np.maximum(sl, _LOG_TINY, out=sl))
        k0 = top + np.log(np.sum(w, axis=1))
        if idx:
            k0[idx] = np.log1p(e @ wphi)
    w /= np.sum(w, axis=1)[:, None]
    return k0, _cumulants_from_weights(L, w, n)


def _sg_rule(mechanism: PoissonSubsampledGaussian, cache: _Cache) -> _SGRule:
    return cache.get(("sg-rule", mechanism), lambda: _SGRule(mechanism.mu, mechanism.rate))


@_cgf_batch.register
def _(mechanism: PoissonSubsampledGaussian, t: np.ndarray, n: int, cache: _Cache):
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
    default = pllr_cgf.registry[object]
    for mech, _ in comp.terms:
        if pllr_cgf.dispatch(type(mech)) is default:
            pllr_cgf(mech, 0.0, 2)  # raises ValueError("... use aea")


# --------------------------------------------------------------------------------------------
# The integrals D_k = J_k(a1) - J_k(a1 + s), batched over (a1, s)
# --------------------------------------------------------------------------------------------


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
    y, w = _direct_rule(max(0, math.floor(float(np.min(peak)) - 14.0)),
                        math.ceil(float(np.max(peak)) + 14.0))
    expo = np.multiply.outer(-a1, y) - 0.5 * y * y - ls[:, None]
    base = w * np.exp(expo) * _PHI0
    em = np.expm1(np.multiply.outer(-s, y))
    h = _hermite_stack(kmax + 1, y)
    return (-em * base) @ h.T, ((1.0 + em) * y * base) @ h[: kmax + 1].T


def _d_batch(a1: np.ndarray, s: np.ndarray, kmax: int) -> tuple[np.ndarray, np.ndarray,
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
    """
    top = kmax + 1
    ls = np.minimum(a1, 0.0)
    ls *= ls
    ls *= 0.5
    lag = a1 >= _A_LAG
    split = lag & (s > 4.0 * a1)
    if lag.all() and not split.any():  # the usual case: one Gauss-Laguerre pass
        return (ls, *_d_laguerre(a1, s, kmax))
    rows = a1.size
    D = np.empty((rows, top + 1))
    Ds = np.empty((rows, top))
    rec = ~lag & (s >= _S_SMALL)
    a2 = a1 + s
    far = rec & (a2 >= _A_LAG)
    inside, i_split = np.flatnonzero(lag & ~split), np.flatnonzero(split)
    i_far, i_near = np.flatnonzero(split | far), np.flatnonzero(rec & ~far)
    i_rec, i_diff = np.flatnonzero(rec), np.flatnonzero(split | rec)
    n_in, n_sp = inside.size, i_split.size
    j1 = np.empty((rows, top + 1))  # J(a1), J(a2) of the rows taken as a difference
    j2 = np.empty((rows, top + 1))
    if n_in + n_sp + i_far.size:  # Gauss-Laguerre: D at (a1, s); J at (a1, inf), (a2, inf)
        dl, dsl = _d_laguerre(np.concatenate([a1[inside], a1[i_split], a2[i_far]]),
                              np.concatenate([s[inside], np.full(n_sp + i_far.size,
                                                                 math.inf)]), kmax)
        D[inside], Ds[inside] = dl[:n_in], dsl[:n_in]
        j1[i_split] = dl[n_in: n_in + n_sp]
        j2[i_far] = dl[n_in + n_sp:] * np.exp(-ls[i_far])[:, None]
    if i_rec.size:  # the recursion: J(a1) of the recursion rows, J(a2) of the near ones
        jr = _j_recursion(np.concatenate([a1[i_rec], a2[i_near]]), top,
                          np.concatenate([ls[i_rec], ls[i_near]]))
        j1[i_rec] = jr[: i_rec.size]
        j2[i_near] = jr[i_rec.size:]
    if i_diff.size:
        b = j2[i_diff]
        D[i_diff] = j1[i_diff] - b
        ds = b[:, 1:]  # J_{k+1} + k J_{k-1}, k = 0..kmax
        ds[:, 1:] += _KRANGE[1:top] * b[:, : top - 1]
        Ds[i_diff] = ds
    direct = np.flatnonzero(~lag & ~rec)
    if direct.size:
        D[direct], Ds[direct] = _d_direct(a1[direct], s[direct], ls[direct], kmax)
    return ls, D, Ds


def _d_integrals(a1: float, s: float, kmax: int) -> tuple[float, np.ndarray]:
    """``(log_scale, D)`` with D_k = e^{-log_scale} int_0^inf (e^{-a1 y} - e^{-(a1+s) y})
    phi(y) He_k(y) dy, k = 0..kmax (module docstring)."""
    ls, D, _ = _d_batch(np.array([float(a1)]), np.array([float(s)]), kmax)
    return float(ls[0]), D[0, : kmax + 1]


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
    lam: dict[int, float] = field(default_factory=dict)
    slope: float = math.nan  # d log_delta / dt (nan where the factor is <= 0)
    var: float = math.nan  # K''(t) (the point is unusable unless > 0)
    log_base: float = math.nan  # log_delta - log(factor) (factor scaled as in _d_batch)
    dfactor: float = math.nan  # d factor / dt, same scale

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
    rows = np.arange(t.size) if ok.all() else np.flatnonzero(ok)
    values = iter(_point_values(order, need, t[rows], k0[rows], d[rows]) if rows.size else ())
    valid = set(rows.tolist())
    out = []
    for i, (ti, ei, vi) in enumerate(zip(t.tolist(), d[:, 0].tolist(), d[:, 1].tolist(),
                                         strict=True)):
        if i in valid:
            ld, fac, low, s, slope, lam, base, dfac = next(values)
            out.append(_Point(ti, ei, ld, fac, low, s, lam, slope, vi, base, dfac))
        else:
            out.append(_Point(ti, ei, -math.inf, math.nan, math.nan, math.nan, {}, math.nan,
                              vi))
    return out


_SMALL_BATCH = 4  # up to this many rows the point arithmetic is done in Python floats


def _point_values(order: int, need: int, t: np.ndarray, k0: np.ndarray,
                  d: np.ndarray) -> list[tuple]:
    """Per row ``(log_delta, factor, factor_lower, s, slope, lam, log_base, dfactor)`` for rows
    with K'' > 0 (module docstring; the D integrals by :func:`_d_batch`).

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
        return list(zip(*_point_arrays(order, need, t, k0, d, s, ls, D, Ds), strict=True))


def _point_rows(order: int, need: int, t: np.ndarray, k0: np.ndarray, d: np.ndarray,
                s: np.ndarray, ls: np.ndarray, D: np.ndarray, Ds: np.ndarray) -> list[tuple]:
    """:func:`_point_values` in Python floats, one row at a time."""
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
        if factor > 0.0:
            out.append((base + math.log(factor), factor, lower, si, dfac / factor - ti * di[1],
                        lam, base, dfac))
        else:
            out.append((-math.inf, factor, lower, si, math.nan, lam, base, dfac))
    return out


def _point_arrays(order: int, need: int, t: np.ndarray, k0: np.ndarray, d: np.ndarray,
                  s: np.ndarray, ls: np.ndarray, D: np.ndarray, Ds: np.ndarray) -> tuple:
    """:func:`_point_values` in numpy: per-row lists in the same order (rows with K'' > 0)."""
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
    lam_rows = [dict(zip(lam, vals, strict=True)) for vals in zip(*(v.tolist() for v in
                                                                    lam.values()),
                                                                  strict=True)]
    if not lam:
        lam_rows = [{} for _ in range(size)]
    return (log_delta.tolist(), factor.tolist(), lower.tolist(), s.tolist(), slope.tolist(),
            lam_rows, log_base.tolist(), dfac.tolist())


_Request = tuple[str, list[float]]  # ("cgf" | "point", tilts)


def _drive(comp: Composition, order: int, tasks: list[tuple[bool, Generator]],
           cache: _Cache) -> tuple[list, list[int]]:
    """Run the searches ``tasks`` = [(swap, generator)] in lockstep.

    Each generator yields ``(kind, tilts)`` and is sent a dict tilt -> value: for "cgf" the row
    [K', K''] of the composed CGF, for "point" a :class:`_Point`. All requests of a round are
    evaluated as one batch per kind (shared tilts once). Returns the generators' return values
    and the number of tilts each one caused to be evaluated.
    """
    memo: dict[str, dict[tuple[bool, float], object]] = {"cgf": {}, "point": {}}
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
                vals = list(_composed_batch(comp, swap, t, 2, cache)[1])
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
            break
        t = new
    raise ValueError(f"no saddlepoint found for eps={eps!r}")


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
    above the :func:`_normal_root` guess, and its neighbour when the guess is within 25% of
    the boundary between them.
    """
    k = next((i for i, c in enumerate(cands) if c > guess), None)
    if k is None:
        return []
    out = [cands[k]]
    if k > 0 and guess < 1.25 * cands[k - 1]:
        out.append(cands[k - 1])
    if k + 1 < len(cands) and guess > 0.8 * cands[k]:
        out.append(cands[k + 1])
    return out


def _linspace(a: float, b: float, num: int) -> list[float]:
    """``numpy.linspace(a, b, num)`` as floats (the same values: a + i (b - a)/(num - 1), b)."""
    step = (b - a) / (num - 1)
    return [*(i * step + a for i in range(num - 1)), b]


_BRACKET_FIRST = 5  # bracket candidates 1, 3, ..., 31 in the first batch
_BRACKET_MORE = 3


def _solve_direction(comp: Composition, direction: str, log_target: float, cache: _Cache,
                     grid: int = 10) -> Generator[_Request, dict, tuple]:
    """Largest eps with log delta_r(eps) = log_target for one pair order (module docstring).

    Returns ``(eps, point, roots, notes)``.
    """
    notes: list[str] = []
    t0, var0 = yield from _tilt_zero(comp, direction, cache)
    cands = [max(t0, 0.0) + 1.0]
    for _ in range(_BRACKET_FIRST - 1):
        cands.append(2.0 * cands[-1] + 1.0)
    grids = {x: _linspace(t0, x, grid)
             for x in _likely_brackets(_normal_root(var0, log_target), cands)}
    pts = yield "point", [t0, *cands, *(y for ts in grids.values() for y in ts[1:-1])]
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
    p = yield from _refine_root(log_target, pts[ts[i]], pts[ts[i + 1]])
    if not abs(p.log_delta - log_target) <= 1e-6:
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


def _refine_root(log_target: float, p_lo: _Point,
                 p_hi: _Point) -> Generator[_Request, dict, _Point]:
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
    4e-16 (a jump, if g is not finite at its upper end).
    """
    lo, hi = p_lo.t, p_hi.t
    if not (p_hi.log_delta - log_target < 0.0):  # the grid end is exactly at the target
        return p_hi
    g_lo = p_lo.log_delta - log_target
    t = math.nan
    if p_lo.slope < 0.0 and 0.1 <= p_hi.slope / p_lo.slope <= 10.0:
        t = _hermite_start(lo, hi, g_lo, p_hi.log_delta - log_target, p_lo.slope, p_hi.slope)
    if not (lo < t < hi):
        t = lo + _delta_step(p_lo, log_target)
    if not (lo < t < hi):
        t = 0.5 * (lo + hi)
    known = {lo: p_lo, hi: p_hi}
    cands = [t]
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
        cands = []
        for step in steps:
            x = p.t + step
            if lo < x < hi and not any(abs(x - c) <= 1e-14 * max(1.0, abs(x)) for c in cands):
                cands.append(x)
        if not cands or (len(widths) > 2 and widths[-1] > 0.5 * widths[-3]):
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


def _regime(comp: Composition, direction: str) -> list[str]:
    """The "one big step" diagnostic: only Poisson-subsampled Gaussian terms (rate < 1), and
    few sampled steps in expectation."""
    if not all(isinstance(m, PoissonSubsampledGaussian) and m.rate < 1.0 for m, _ in comp.terms):
        return []
    sampled = math.fsum(m.rate * c for m, c in comp.terms)
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


def _delta_search(eps: float) -> Generator[_Request, dict, _Point]:
    t, _ = yield from _tilt_search(eps, 0.0)
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
    tasks = [(direction == DIRECTION_QP, _solve_direction(comp, direction, log_target, store))
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
