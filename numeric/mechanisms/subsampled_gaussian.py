r"""The Poisson-subsampled Gaussian mechanism (one DP-SGD step).

With noise multiplier sigma and rate p, mu = 1/sigma, the dominating pair is P = N(0, 1),
Q = (1 - p) N(0, 1) + p N(mu, 1), with PLLR (docs/math.md section 4; Mironov, Talwar, Zhang 2019;
Zhu, Dong, Wang 2022)

.. math::

    L(x) = \log\bigl(1 - p + p\, e^{\mu x - \mu^2/2}\bigr) = \operatorname{log1p}\bigl(p\,
    \operatorname{expm1}(\mu x - \mu^2/2)\bigr).

The pair is *not* symmetric: both orders (P, Q) and (Q, P) are accounted for and the larger
privacy loss is reported. No closed form exists for the cumulants. We integrate central moments
with a composite Gauss-Legendre rule on [-20, mu + 20] (panel width <= min(1/2, 1/mu), which
resolves the transition of L near x = mu/2 + log((1-p)/p)/mu, whose complex singularities lie at
distance pi/mu from the real axis) and check the rule against a second, coarser one.

Tail control: outside [-20, mu + 20] (:data:`_RULE_TAIL`; 40 before issue 13) P and both
components of Q have mass below 2 Phi(-20) < 5.6e-89 each, and |L(x)| <= c + mu |x| with
c = -log(1 - p) + log(1 + p) (linear growth). With c' = c + |mean| and y = x - mu >= 20 on the
right (x <= -20 on the left is smaller), for k <= 16 the integrand (c' + mu (y + mu))^k phi(y)
decreases with log-slope below k/y - y <= -(20 - k/20) <= -19.2, so the neglected part of a k-th
(central) moment is below 2 (c' + mu (20 + mu))^k phi(20) / 19.2 -- relative to the moment
(whose mass the weight (c + mu |y|)^k moves out only to |y| ~ sqrt(k) <= 4) of order
(20/4)^16 phi(20) / phi(4) < 1e-70, far below rounding (outside [-40, mu + 40] the Gaussian
weights underflow to zero in floating point anyway). Identity checks (tested): E_P[e^L] = 1
(K_X(1) = 0) and the exact integer moments
E_P[e^{kL}] = sum_j C(k,j) (1-p)^{k-j} p^j e^{j(j-1) mu^2/2}.

CGF of Y = L under Q (the saddlepoint accountant; docs/math.md section 4; Mironov, Talwar, Zhang
2019): :math:`K_Y(t) = \log E_Q e^{tL} = \log E_P e^{(t+1)L}`, by composite Gauss-Legendre
quadrature over [-13, X] with X >= max(t+1, 1) mu + 13 (panels of fixed width min(1/2, 1/mu)
from -13, 12 nodes each, so a longer rule extends a shorter one; the P-mass below -13 is
< 1e-38) with K = log1p(E_P[expm1((t+1)L)]) to keep relative precision for small rates; its
derivatives are the cumulants of the tilted law (weights e^{(t+1)L} phi on the nodes). At rate 1
the pair is Gaussian and the closed form of :mod:`numeric.mechanisms.gaussian` is used. The rule
(nodes, PLLR values and Gaussian weights; independent of t) is kept per (mu, rate) in a small
least-recently-used cache (:func:`numeric.cgf.clear_cgf_cache` empties it); it holds exact
values, identical however far the rule has been extended, so sharing it never moves a result.
L = log1p(p expm1(u)) > log(1 - p): ess inf L = log(1 - p), ess sup L = +inf.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .._validation import check_positive, check_rate
from ..errors import BudgetExceeded, NotApplicable, check_time, require_time
from ..moments import (
    cumulants_from_central_moments,
    cumulants_from_weights,
    gauss_legendre_panels,
)
from .base import Mechanism, PLLRCumulants, register_cgf_cache, register_mechanism
from .gaussian import gaussian_cgf_batch

__all__ = ["PoissonSubsampledGaussian", "check_quadrature_budget", "subsampled_gaussian_pllr"]

_TAIL = 40.0
_MAX_ORDER = 16
_SHIFT_MU = 10.0  # above it (sigma < 0.1) central moments use the cancellation-free shift g


_PLLR_LOG1P_MAX_U = 700.0  # p expm1(u) finite below it (e^709.78 overflows)


def _pllr_log1p_points(u: np.ndarray, rate: float) -> np.ndarray:
    r"""Where :math:`L = \log(1 + y)`, :math:`y = p\,\mathrm{expm1}(u)`, is computed by
    ``log1p``: :math:`y \ge -1/2` (so that 1 + y is not near 0) and u below
    :data:`_PLLR_LOG1P_MAX_U` (no overflow); elsewhere by log-add-exp (L is then at least
    log 2 in modulus or u is huge, and the sum does not cancel)."""
    if rate <= 0.5:
        return u < _PLLR_LOG1P_MAX_U
    with np.errstate(over="ignore"):
        return (u < _PLLR_LOG1P_MAX_U) & (rate * np.expm1(np.minimum(u, 0.0)) >= -0.5)


def subsampled_gaussian_pllr(x: np.ndarray, mu: float, rate: float) -> np.ndarray:
    r"""L(x) = log(1 - p + p exp(mu x - mu^2/2)), stable for all x: no overflow, and to full
    relative precision given the float u (which itself cancels near x = mu/2 for large mu).

    With :math:`u = \mu x - \mu^2/2` and :math:`y = p\,\mathrm{expm1}(u)`,
    :math:`L = \log(1 + y)` by ``log1p`` wherever :math:`y \ge -1/2` and u < 700; elsewhere
    (:math:`p > 1/2` far left, or u huge) :math:`\log(e^{\log(1-p)} + e^{\log p + u})`.
    Log-add-exp at small positive u cancels: at rate 1e-4 it left L an absolute ~1e-20 where L
    is ~p u, and the CGF of a step with sigma = 3000, rate 1e-4 was off by 3e-4 relative (mpmath
    at 60 digits, two independent ways: quadrature and the binomial series of
    :math:`E_P[(1 + y)^{t+1}]`).

    Args:
        x: Points (standardized noise scale).
        mu: 1/sigma.
        rate: Sampling rate p in (0, 1].

    Returns:
        The PLLR at ``x``.
    """
    u = mu * np.asarray(x, dtype=float) - 0.5 * mu * mu
    log1m = math.log1p(-rate) if rate < 1.0 else -math.inf
    return _pllr_of_u(u, rate, lambda v: np.logaddexp(log1m, math.log(rate) + v))


def _pllr_of_u(u: np.ndarray, rate: float, far: Callable[[np.ndarray], np.ndarray]
               ) -> np.ndarray:
    """L from u: ``log1p(p expm1(u))`` on :func:`_pllr_log1p_points`, ``far(u)`` (a
    log-add-exp) elsewhere."""
    near = _pllr_log1p_points(u, rate)
    out = np.empty_like(u)
    out[near] = np.log1p(rate * np.expm1(u[near]))
    rest = ~near
    if rest.any():
        out[rest] = far(u[rest])
    return out


def _logaddexp_const(a: float, b: np.ndarray) -> np.ndarray:
    r"""log(e^a + e^b) for a finite float ``a``: max(a, b) + log1p(e^{-|a - b|}), the formula of
    numpy's ``logaddexp`` (exact rearrangement: e^a + e^b = e^m (1 + e^{-|a - b|}), m = max)
    with numpy's vectorized exp/log1p (about 4x faster on a few thousand points; each output
    within a few ulps of ``np.logaddexp``: the log1p term is at most log 2 and is added once).
    """
    d = b - a
    top = np.maximum(b, a)
    np.negative(np.abs(d, out=d), out=d)
    return top + np.log1p(np.exp(d, out=d), out=d)


def _pllr_fast(x: np.ndarray, mu: float, rate: float) -> np.ndarray:
    """:func:`subsampled_gaussian_pllr` for ``rate`` <= 1/2 with :func:`_logaddexp_const` where
    it takes log-add-exp (u >= 700; outputs within a few ulps of it). The numeric quadratures
    use it; the certified layer's float guide keeps :func:`subsampled_gaussian_pllr`."""
    if not (rate <= 0.5):
        return subsampled_gaussian_pllr(x, mu, rate)
    u = mu * x - 0.5 * mu * mu
    return _pllr_of_u(u, rate, lambda v: _logaddexp_const(math.log1p(-rate), math.log(rate) + v))


def _log1p_minus_x_both(w: np.ndarray, lp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(log1p(w) - w, (1 + w) log1p(w) - w)`` without cancellation (``lp`` = log1p(w)): the
    series sum_{k>=2} (-1)^{k+1} w^k / k and sum_{k>=2} (-1)^k w^k / (k (k - 1)) by Horner for
    |w| < 1e-2 (truncation < |w|^10 / 10, below 1e-16 relative), one pass over the shared
    small-|w| subset (issue 13: the same operations in the same order as the former two helper
    functions, so the same bits, with half the masking)."""
    gx = lp - w
    gy = (1.0 + w) * lp - w
    s = np.abs(w) < 1e-2
    ws = w[s]
    ax = np.zeros_like(ws)
    ay = np.zeros_like(ws)
    for k in range(9, 1, -1):
        ax += (-1.0) ** (k + 1) / k
        ax *= ws
        ay += (-1.0) ** k / (k * (k - 1))
        ay *= ws
    gx[s] = ws * ax
    gy[s] = ws * ay
    return gx, gy


_MAX_CUMULANT_NODES = 4_000_000
"""Memory budget of the cumulant quadrature: nodes of the finer rule (about a dozen arrays of
this many doubles live at once, ~120 bytes per node: ~0.5 GB). The rule has
(mu + 80) / min(1/2, 1/mu) panels of 24 nodes, ~24 mu^2: sigma >= ~0.0027 fits."""


def _panels(mu: float) -> int:
    return math.ceil((mu + 2.0 * _TAIL) / min(0.5, 1.0 / mu))


def check_quadrature_budget(mu: float, rate: float,
                            methods: str = "the cumulant-based methods (aea, aea-ea, gdp)") -> None:
    """Refuse up front, naming sigma, when the 24-node float quadrature on [-40, mu + 40]
    (panels of width min(1/2, 1/mu); the cumulants here, the certified Chernoff's float guide
    in certify) would exceed its memory budget.

    Args:
        mu: 1/sigma.
        rate: The sampling rate (for the message).
        methods: What does not apply (for the message).

    Raises:
        BudgetExceeded: (a NotApplicable) if 24 nodes per panel exceed
            :data:`_MAX_CUMULANT_NODES`.
    """
    nodes = 24 * _panels(mu)
    if nodes > _MAX_CUMULANT_NODES:
        raise BudgetExceeded(
            f"sigma = {1.0 / mu!r} is too small for the subsampled-Gaussian quadrature "
            f"(rate={rate!r}): it needs {nodes} nodes (panels of width sigma over "
            f"[-40, 1/sigma + 40]), over its memory budget of {_MAX_CUMULANT_NODES} (sigma >= "
            f"~0.0027 fits); {methods} do not apply")


_RULE_TAIL = 20.0
r"""Half-margin T of the cumulant rule on [-T, mu + T] (issue 13: 20, not :data:`_TAIL` = 40,
halves the nodes of a cold query; the module docstring's tail bound with T = 20)."""


def _rule(mu: float, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    r"""The composite Gauss-Legendre cumulant rule on [-T, mu + T], T = :data:`_RULE_TAIL`,
    panels of width <= min(1/2, 1/mu) (the same width bound as the budget's :func:`_panels`)."""
    a, b = -_RULE_TAIL, mu + _RULE_TAIL
    return gauss_legendre_panels(a, b, math.ceil((b - a) / min(0.5, 1.0 / mu)), nodes)


def _central_cumulants(
    values: np.ndarray, weights: np.ndarray, order: int, mean: float | None = None,
    shifted: np.ndarray | None = None,
) -> np.ndarray:
    """Cumulants from the weighted nodes; central moments from ``shifted`` (= values - const,
    computed without cancellation) where given: central moments do not depend on the shift."""
    if mean is None:
        mean = float(np.dot(weights, values))
    if shifted is None:
        dev = values - mean
    else:
        dev = shifted - float(np.dot(weights, shifted) / weights.sum())
    central = np.empty(order)
    power = np.ones_like(dev)
    for k in range(order):
        power = power * dev
        central[k] = float(np.dot(weights, power))
    return cumulants_from_central_moments(mean, central)


def _quadrature_cumulants(mu: float, rate: float, order: int, nodes: int):
    x, w = _rule(mu, nodes)
    phi = np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    e_mu = np.exp(-0.5 * (x - mu) ** 2)
    phi_mu = e_mu / math.sqrt(2.0 * math.pi)
    wp = w * phi
    wq = w * ((1.0 - rate) * phi + rate * e_mu / math.sqrt(2.0 * math.pi))
    L = _pllr_fast(x, mu, rate)
    # Small sigma (mu > _SHIFT_MU): under P the loss is log(1-p) + g, g = log1p(p e^u/(1-p)) >= 0
    # tiny (u = mu x - mu^2/2 << 0 where P has mass), so L - mean cancels to rounding (a variance
    # of ~1e-35 from noise at sigma 0.01 against a true ~1e-500); deviations of g keep full
    # relative precision (checked against mpmath at 40 digits in tests/test_extremes.py).
    g = None
    if mu > _SHIFT_MU and rate < 1.0:
        g = _logaddexp_const(0.0, math.log(rate) - math.log1p(-rate) + mu * x - 0.5 * mu * mu)
    if rate >= 0.1:  # the means are O(p^2) against terms O(p): no significant cancellation
        return (_central_cumulants(L, wp, order, shifted=g),
                _central_cumulants(L, wq, order, shifted=g))
    mean_x, mean_y = _means(x, w, mu, rate, L, phi, phi_mu)
    return (_central_cumulants(L, wp, order, mean_x, shifted=g),
            _central_cumulants(L, wq, order, mean_y, shifted=g))


def _means(x: np.ndarray, w: np.ndarray, mu: float, rate: float, L: np.ndarray,
           phi: np.ndarray, phi_mu: np.ndarray):
    r"""E_P[L] = -KL(P||Q) and E_Q[L] = KL(Q||P) without the cancellation of small rates.

    With v = p expm1(u), u = mu x - mu^2/2, E_P[v] = 0 exactly, so
    E_P[L] = E_P[log1p(v) - v] and E_Q[L] = E_P[(1 + v) L] = E_P[(1 + v) log1p(v) - v]; the
    integrands are O(v^2) pointwise and keep full relative precision when p is tiny (a direct
    integral of L ~ v would lose a factor 1/p). Where u > 50 (v huge, no cancellation) the terms
    are integrated directly with v phi(x) = p (phi(x - mu) - phi(x)), which cannot overflow.
    """
    u = mu * x - 0.5 * mu * mu
    near = u <= 50.0
    v = rate * np.expm1(np.minimum(u, 50.0))
    lp = np.log1p(v)
    gx, gy = _log1p_minus_x_both(v, lp)
    wphi = w * phi
    if near.all():  # no far nodes (u <= 50 everywhere: mu <~ 10): their sums are 0.0
        return float(np.dot(wphi, gx) + 0.0), float(np.dot(wphi, gy) + 0.0)
    gx = np.where(near, gx, 0.0)
    gy = np.where(near, gy, 0.0)
    far = ~near
    vphi = rate * (phi_mu[far] - phi[far])
    mean_x = float(np.dot(wphi, gx) + np.dot(w[far], L[far] * phi[far] - vphi))
    qphi = (1.0 - rate) * phi[far] + rate * phi_mu[far]
    mean_y = float(np.dot(wphi, gy) + np.dot(w[far], L[far] * qphi - vphi))
    return mean_x, mean_y


@lru_cache(maxsize=256)
def _cached_cumulants(mu: float, rate: float, order: int) -> tuple[tuple, tuple]:
    check_quadrature_budget(mu, rate)
    require_time(40 * _panels(mu) * _SECONDS_PER_CUMULANT_NODE,
                 f"the subsampled-Gaussian cumulant quadrature ({40 * _panels(mu)} nodes: "
                 f"sigma = {1.0 / mu:.4g} is small)")
    kx, ky = _quadrature_cumulants(mu, rate, order, 24)
    cx, cy = _quadrature_cumulants(mu, rate, order, 16)
    # Tolerance per order: 1e-9 relative, or 1e-12 in standardized units (kappa_k / kappa_2^{k/2})
    # for cumulants that vanish (rate = 1 gives kappa_{>=3} = 0).
    k = np.arange(1, order + 1)
    unit = np.maximum(kx[1] if order > 1 else abs(kx[0]), 1e-300) ** (k / 2.0)
    scale = np.maximum(np.abs(kx), np.abs(ky))
    err = np.maximum(np.abs(kx - cx), np.abs(ky - cy))
    if not np.all(err <= 1e-9 * scale + 1e-12 * unit):
        worst = float(np.max(err / np.maximum(scale, 1e-300)))
        raise NotApplicable(  # valid input that this quadrature cannot resolve: not bad input
            f"quadrature for the subsampled Gaussian (sigma={1 / mu!r}, rate={rate!r}) did not "
            f"converge: relative disagreement {worst:.2e} between rules at order {order}"
        )
    return tuple(kx.tolist()), tuple(ky.tolist())


# --------------------------------------------------------------------------------------------
# The CGF of Y = L under Q by quadrature (module docstring)
# --------------------------------------------------------------------------------------------

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_TINY = -700.0  # quadrature weights below e^-700 relative count as e^-700 (no slow subnormals)
_COMB = [[float(math.comb(k, j)) for j in range(k + 1)] for k in range(32)]
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
_RULES = 32  # quadrature rules kept (least recently used dropped)
_MAX_RULE_NODES = 1 << 23  # memory budget of one rule: 3 arrays of 8.4M doubles (~0.5 GB peak)
_MAX_GROUP_CELLS = 1 << 24  # and of one batch: tilts x nodes (128 MB per work array)


_SECONDS_PER_NEW_PANEL = 12 * 20e-9
"""Low cost of extending a CGF rule by one panel (12 nodes; measured 33-35 ns per node)."""
_SECONDS_PER_TILT_PANEL = 5e-9
"""Low cost of one tilt on one panel of a CGF batch (measured 45-240 ns; a long rule's trim alone
computes a few flops per tilt and panel, an untrimmed one 12 nodes of exp and cumulants)."""
_SECONDS_PER_CUMULANT_NODE = 40e-9
"""Low cost of one node of the cumulant quadrature, per node of the estimate ``40 * panels``
(measured 190 ns at 2.2 M nodes in a fresh process, more on smaller rules; 58 ns at sigma
0.0123 in a process whose memory was already paged in by earlier work, where the CI suite
found 60 ns not low enough)."""


def _cgf_seconds(new_panels: int, tilts: int, panels: int) -> float:
    r"""A low estimate of the seconds a CGF batch takes (for :func:`numeric.errors.require_time`).

    The batch extends the rule by at least ``new_panels`` panels (each node costs a PLLR, a log
    and an exp) and touches at least one node per panel for each of ``tilts`` tilts on a rule of
    ``panels`` panels (the trim of long rules, or every node of short ones). The constants are
    below every measurement (``docs/budgets.md``), so a refused batch could not have finished
    in the time left; a batch that runs returns exactly what it returns without a budget.
    """
    return new_panels * _SECONDS_PER_NEW_PANEL + tilts * panels * _SECONDS_PER_TILT_PANEL


class _SGRule:
    r"""Composite Gauss-Legendre rule of one subsampled Gaussian, extended on demand.

    Panels of fixed width w = min(1/2, 1/mu) start at -13 and panel k has midpoint
    -13 + (k + 1/2) w, so every node is independent of how far the rule has been extended: the
    rule for [-13, X] is a prefix of any longer one. Per node: the PLLR L, log(weight * phi) and
    weight * phi (t-independent; cached per (mu, rate)). The node arrays are replaced, never
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
        if longest * _SG_NODES > _MAX_RULE_NODES or t.size * min(
                longest * _SG_NODES, _SG_TRIM * 4) > _MAX_GROUP_CELLS:
            raise BudgetExceeded(
                f"the subsampled-Gaussian CGF at tilt t = {float(t.max()):.4g} needs "
                f"{longest * _SG_NODES} quadrature nodes (mu = 1/sigma = {self.mu:.4g}: the "
                f"tilted law lies far in the tail), over the memory budget of "
                f"{_MAX_RULE_NODES}; the saddlepoint does not apply here (sigma too small for "
                "this delta)"
            )
        check_time("in the subsampled-Gaussian CGF quadrature")
        require_time(_cgf_seconds(max(longest - self.nodes[0], 0), t.size, longest),
                     f"the subsampled-Gaussian CGF quadrature at {t.size} tilt(s) up to t = "
                     f"{float(t.max()):.4g} ({longest * _SG_NODES} nodes: sigma = "
                     f"{1.0 / self.mu:.4g} is small)")
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


@register_cgf_cache
@lru_cache(maxsize=_RULES)
def _cgf_rule(mu: float, rate: float) -> _SGRule:
    """The quadrature rule of the subsampled Gaussian (mu, rate), shared (built on first use)."""
    return _SGRule(mu, rate)


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
    return k0, cumulants_from_weights(L, w, n)


@register_mechanism(
    "subsampled-gaussian", {"sigma": "sigma", "rate": "rate"}, required=("sigma", "rate"),
    help={"sigma": "noise multiplier (noise std / clipping norm, > 0)",
          "rate": "Poisson sampling rate in (0, 1]"},
    examples=({"sigma": 0.8, "rate": 0.01}, {"sigma": 2.0, "rate": 0.001},
              {"sigma": 0.5, "rate": 0.3}, {"sigma": 1.0, "rate": 0.999},
              {"sigma": 1.5, "rate": 1.0}),
)
@dataclass(frozen=True)
class PoissonSubsampledGaussian(Mechanism):
    """One DP-SGD step: Gaussian noise multiplier ``sigma``, Poisson sampling ``rate``.

    Args:
        sigma: Noise multiplier (noise std / clipping norm), finite and > 0.
        rate: Poisson sampling rate in (0, 1].
    """

    sigma: float
    rate: float
    symmetric = False
    max_order = _MAX_ORDER

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive("sigma", self.sigma))
        object.__setattr__(self, "rate", check_rate("rate", self.rate))

    @property
    def mu(self) -> float:
        """mu = 1/sigma."""
        return 1.0 / self.sigma

    def _cumulants(self, order: int) -> PLLRCumulants:
        # one quadrature serves every order up to 6 (the cache is keyed by the order computed)
        kx, ky = _cached_cumulants(self.mu, self.rate, max(order, 6))
        return PLLRCumulants(x=kx[:order], y=ky[:order])

    def cgf_batch(self, t: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """CGF of L under Q and its derivatives by quadrature (module docstring; the Gaussian
        closed form at rate 1)."""
        if self.rate == 1.0:
            return gaussian_cgf_batch(self.mu, t, n)
        return _cgf_rule(self.mu, self.rate).cgf(t, n)

    def pllr_inf(self) -> float:
        """log(1 - p): L = log1p(p expm1(u)) > log(1 - p) (-inf at rate 1, the Gaussian)."""
        return math.log1p(-self.rate) if self.rate < 1.0 else -math.inf

    @property
    def poisson_rate(self) -> float | None:
        """The sampling rate p when p < 1 (at p = 1 the mechanism is the Gaussian): None."""
        return self.rate if self.rate < 1.0 else None

    def exact_family(self) -> tuple[str, float] | None:
        return ("gaussian", self.mu**2) if self.rate == 1.0 else None

    def clt_mu_squared(self) -> float:
        """p^2 (e^{mu^2} - 1) (Bu, Dong, Long, Su 2020, Thm 5); inf beyond the float range
        (small sigma: the CLT method then refuses), computed in log space past e^700."""
        mu2 = self.mu**2
        if mu2 <= 700.0:
            return self.rate**2 * math.expm1(mu2)
        log_v = 2.0 * math.log(self.rate) + mu2 + math.log1p(-math.exp(-mu2))
        return math.exp(log_v) if log_v < 709.0 else math.inf
