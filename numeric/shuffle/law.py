r"""The law of S = sum of M i.i.d. lognormals by Fourier inversion (random allocation, one epoch).

Y = exp(Z), Z ~ N(m, s^2) with s = 1/sigma, m = -s^2/2 (so E Y = 1, Var Y = v = e^{s^2} - 1).
S = Y_1 + ... + Y_M is the likelihood ratio times M of the random-allocation pair
(:mod:`numeric.mechanisms.random_allocation`; van Dijk and Ertan, arXiv:2605.06259). Everything
one epoch needs is a functional of the law of S/M under P = H0:

* :math:`E|S/M - \kappa| = \frac{2}{\pi M}\int_0^\infty
  \frac{1 - \mathrm{Re}\, e^{\Lambda_\kappa(w)}}{w^2}\,dw` (the Fourier form of the mean absolute
  deviation; Ertan and van Dijk, arXiv:2610.09651, use it for TV = E|S - M|/(2M));
* the CDF :math:`P(S/M \le \kappa) = \tfrac12 - \tfrac1\pi\int_0^\infty \mathrm{Im}\,
  e^{\Lambda_\kappa(w)}/w\,dw` (Gil-Pelaez 1951) and the density
  :math:`f_{S/M}(\kappa) = \tfrac{M}{\pi}\int_0^\infty \mathrm{Re}\, e^{\Lambda_\kappa(w)}\,dw`,

with :math:`\Lambda_\kappa(w) = M \log\psi(w) - i M(\kappa - 1) w` and
:math:`\psi(w) = E e^{iw(Y - 1)}` (so :math:`e^{\Lambda_\kappa}` is the characteristic function of
S - M kappa; the branch of the log is irrelevant because M is an integer).

**psi by a rotated contour.** :math:`\psi(w) - 1 = E\,g(iw(Y - 1))` with
:math:`g(u) = e^u - 1 - u` (E(Y - 1) = 0). In z = log Y the integrand
:math:`g(iw(e^z - 1))\varphi_{m,s}(z)` is entire; on the line Im z = theta (0 < theta <= pi/2)
:math:`\mathrm{Re}\,iw(e^z - 1) = -w e^{x}\sin\theta \le 0`, so :math:`|g| \le |u|^2/2` and the
Gaussian factor makes the vertical sides vanish: the integral may be taken along Im z = theta
(Cauchy). There the oscillation :math:`e^{iwe^x\cos\theta}` is damped by
:math:`e^{-we^x\sin\theta}`, which removes the lognormal's unbounded oscillation; the price is the
factor :math:`|\varphi_{m,s}(x + i\theta)| = \varphi_{m,s}(x) e^{\theta^2/(2s^2)}`, kept <= e^2 by
theta = min(pi/2, 2s). The line integral is a composite Gauss-Legendre rule in the standardized
variable xi = (x - m)/s on [-13, 13 + 2s] (panels of width 3/4, 16 nodes; the dropped Gaussian
tails weigh < 1e-37, and the second-moment tilt e^{2s xi} of the small-w integrand peaks at
xi = 2s). g is summed by its Taylor series where |u| < 1/2 (no cancellation), so psi - 1 keeps
its relative precision as w -> 0; the derivative :math:`\psi'(w) = E[i(Y-1)(e^{iw(Y-1)} - 1)]`
(used to place the outer panels) is integrated on the same line.

**The outer integral** is a composite Gauss-Legendre rule on [0, W] whose panels are placed
where :math:`|\Lambda_\kappa'(w)|` (the local phase and decay rate) is large: each panel spans
at most ~4 radians of phase and at most 1/2 of the scale 1/sqrt(M v). W is where
:math:`|\psi(w)|^M < 10^{-18}` (three consecutive geometric checkpoints); beyond it the MAD
integrand is 1/w^2 up to that factor, so its tail is 1/W up to 1e-18/W. The stated accuracy of
each result (``error``) is the difference between this rule and one with 16 instead of 24
nodes per panel, plus the tail term, plus a floor of 1e-13 relative (the inner rule's
error: it is shared by both outer rules, so their difference cannot see it; mpmath checks in
tests/test_shuffle.py): an estimate of the quadrature error, not a bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from scipy.special import ndtri

from .._validation import as_float_array, check_count, check_positive
from ..errors import BudgetExceeded, NotApplicable, require_time

__all__ = [
    "MAX_CUMULANT_SECONDS",
    "MAX_OUTER_NODES",
    "OneEpochLaw",
    "kappa_range",
    "one_epoch_law",
    "pllr_cumulants",
    "psi_minus_one",
]

MAX_OUTER_NODES = 120_000
"""Budget: outer quadrature nodes (small M with heavy lognormal tails need the most)."""

MAX_CUMULANT_SECONDS = 15.0
"""Budget of :func:`pllr_cumulants` (seconds, by :func:`cumulant_cost` on an idle core): above
it the cumulants are refused (NotApplicable) before any node is evaluated, so no method that
needs them (``aea``, ``aea-ea``, ``gdp``, ...) runs for minutes (issue 12: 25-50 s per call at
sigma 0.7, 511 rounds)."""

# Cost model (seconds per unit, measured on the 2-core fuzz machine: idle rates ~1.1e-7 s per
# psi node x inner node and ~3e-8 s per (kappa, node) density term; rounded *down* so that
# ``require_time`` only refuses steps that could not finish, and the absolute cap above only
# refuses calls that take longer than MAX_CUMULANT_SECONDS).
_COST_PSI = 0.8e-7
_COST_DENSITY = 2.5e-8
_ELL_PANELS = 400
_ELL_NODES = 24

_XI_LO = -13.0
_XI_PANEL = 0.75
_XI_NODES = 16
_OUT_NODES = 24
_OUT_CHECK = 16
_TAIL_EPS = 1e-18
_FLOOR = 1e-13  # relative error floor of psi (inner rule, rounding x e^2 contour factor)
_CHUNK = 4096  # outer nodes per inner evaluation batch (memory: chunk x inner nodes complex)


@lru_cache(maxsize=8)
def _leg(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.polynomial.legendre.leggauss(n)


@lru_cache(maxsize=64)
def _inner_rule(s: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""(e^{z} - 1 on the rotated line, complex weights phi_{m,s}(x + i theta) dx, theta)."""
    theta = min(0.5 * math.pi, 2.0 * s)
    hi = 13.0 + 2.0 * s
    panels = math.ceil((hi - _XI_LO) / _XI_PANEL)
    t, wt = _leg(_XI_NODES)
    edges = np.linspace(_XI_LO, hi, panels + 1)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[:-1] + edges[1:])
    xi = (mid[:, None] + half[:, None] * t[None, :]).ravel()
    w = (half[:, None] * wt[None, :]).ravel()
    tau = theta / s
    m = -0.5 * s * s
    # phi_{m,s}(x + i theta) dx = exp(-(xi + i tau)^2 / 2) / sqrt(2 pi) dxi, x = m + s xi
    weights = w * np.exp(-0.5 * (xi + 1j * tau) ** 2) / math.sqrt(2.0 * math.pi)
    zeta = m + s * xi + 1j * theta
    ez1 = np.expm1(zeta)  # e^zeta - 1 (complex expm1 keeps precision near zeta = 0)
    return ez1, weights, np.array([theta])


def _g(u: np.ndarray) -> np.ndarray:
    """g(u) = e^u - 1 - u, by its Taylor series where |u| < 1/2 (no cancellation)."""
    out = np.expm1(u) - u
    small = np.abs(u) < 0.5
    if small.any():
        us = u[small]
        acc = np.zeros_like(us)
        for k in range(22, 1, -1):  # u^2 sum_{k>=2} u^(k-2)/k!, truncation < 0.5^23/23!
            acc = acc * us + 1.0 / math.factorial(k)
        out[small] = acc * us * us
    return out


def psi_minus_one(sigma: float, w: np.ndarray, derivative: bool = False):
    r"""psi(w) - 1 = E e^{iw(Y - 1)} - 1 (module docstring), and optionally psi'(w).

    Args:
        sigma: Noise multiplier (s = 1/sigma).
        w: Frequencies >= 0 (1-D array).
        derivative: Also return psi'(w).

    Returns:
        ``psi - 1`` (complex array), or ``(psi - 1, psi')``.
    """
    s = 1.0 / sigma
    ez1, weights, _ = _inner_rule(s)
    w = np.asarray(w, dtype=float)
    out = np.empty(w.size, dtype=complex)
    der = np.empty(w.size, dtype=complex) if derivative else None
    for a in range(0, w.size, _CHUNK):
        wc = w[a: a + _CHUNK]
        u = 1j * np.multiply.outer(wc, ez1)
        out[a: a + _CHUNK] = _g(u) @ weights
        if derivative:
            der[a: a + _CHUNK] = (1j * ez1[None, :] * np.expm1(u)) @ weights
    return (out, der) if derivative else out


def _log1p_complex(z: np.ndarray) -> np.ndarray:
    """log(1 + z) with full relative precision of the real part for small |z|."""
    a, b = z.real, z.imag
    small = np.abs(z) < 0.5
    with np.errstate(divide="ignore"):  # psi = 0 exactly: log|psi| = -inf, e^(M log psi) = 0
        re = np.log(np.hypot(1.0 + a, b))
    re[small] = 0.5 * np.log1p(2.0 * a[small] + a[small] ** 2 + b[small] ** 2)
    return re + 1j * np.arctan2(b, 1.0 + a)


@dataclass(frozen=True)
class OneEpochLaw:
    r"""Quadrature of the Fourier integrals of one epoch (module docstring), for kappa = S/M
    values in [1 - spread, 1 + spread].

    Attributes:
        sigma: Noise multiplier.
        rounds: M.
        spread: Largest |kappa - 1| the rule resolves (phase M spread w).
        w, wt: Outer nodes and weights (main rule); ``w2, wt2`` the check rule.
        lam, lam2: M log psi at the nodes of each rule.
        cutoff: W; ``tail_eps``: |psi(W)|^M.
    """

    sigma: float
    rounds: int
    spread: float
    w: np.ndarray = field(repr=False)
    wt: np.ndarray = field(repr=False)
    lam: np.ndarray = field(repr=False)
    w2: np.ndarray = field(repr=False)
    wt2: np.ndarray = field(repr=False)
    lam2: np.ndarray = field(repr=False)
    cutoff: float = 0.0
    tail_eps: float = 0.0

    @property
    def variance(self) -> float:
        """v = e^{1/sigma^2} - 1."""
        return math.expm1(1.0 / self.sigma**2)

    def _check(self, kappa: np.ndarray) -> np.ndarray:
        kappa = as_float_array("kappa", kappa)
        if np.any(np.abs(kappa - 1.0) > self.spread * (1.0 + 1e-12)):
            raise ValueError(f"kappa must lie within 1 +- {self.spread!r} for this rule")
        return kappa

    @staticmethod
    def _exp_lam(lam: np.ndarray, kappa: np.ndarray, m: int, w: np.ndarray):
        b = lam.imag[None, :] - m * np.multiply.outer(kappa - 1.0, w)
        return lam.real[None, :], b

    def mad(self, kappa) -> tuple[np.ndarray, np.ndarray]:
        r"""E|S/M - kappa| and its estimated quadrature error (module docstring).

        Args:
            kappa: Points (array-like) within 1 +- spread.

        Returns:
            ``(value, error)`` arrays.
        """
        kappa = self._check(np.atleast_1d(kappa))
        vals = []
        for w, wt, lam in ((self.w, self.wt, self.lam), (self.w2, self.wt2, self.lam2)):
            out = np.empty(kappa.size)
            for a in range(0, kappa.size, 256):
                re, b = self._exp_lam(lam, kappa[a: a + 256], self.rounds, w)
                # 1 - Re e^{a + ib} = -expm1(a) + 2 e^a sin^2(b/2), no cancellation
                f = -np.expm1(re) + 2.0 * np.exp(re) * np.sin(0.5 * b) ** 2
                out[a: a + 256] = (f / (w * w)[None, :]) @ wt
            vals.append((out + 1.0 / self.cutoff) * 2.0 / (math.pi * self.rounds))
        value = np.maximum(vals[0], np.abs(kappa - 1.0))
        err = (np.abs(vals[0] - vals[1]) + self.tail_eps * 2.0 / (math.pi * self.rounds
                                                                  * self.cutoff)
               + _FLOOR * value)
        return value, err

    def cdf(self, kappa) -> tuple[np.ndarray, np.ndarray]:
        r"""P(S/M <= kappa) (Gil-Pelaez) and its estimated error.

        Returns:
            ``(value, error)`` arrays, values clipped to [0, 1].
        """
        kappa = self._check(np.atleast_1d(kappa))
        vals = []
        for w, wt, lam in ((self.w, self.wt, self.lam), (self.w2, self.wt2, self.lam2)):
            out = np.empty(kappa.size)
            for a in range(0, kappa.size, 256):
                re, b = self._exp_lam(lam, kappa[a: a + 256], self.rounds, w)
                f = np.exp(re) * np.sin(b) / w[None, :]
                out[a: a + 256] = 0.5 - (f @ wt) / math.pi
            vals.append(out)
        err = np.abs(vals[0] - vals[1]) + 10.0 * self.tail_eps + 0.1 * _FLOOR
        return np.clip(vals[0], 0.0, 1.0), err

    def density(self, kappa) -> np.ndarray:
        r"""Density of S/M at ``kappa`` (Fourier inversion, main rule)."""
        kappa = self._check(np.atleast_1d(kappa))
        out = np.empty(kappa.size)
        for a in range(0, kappa.size, 256):
            re, b = self._exp_lam(self.lam, kappa[a: a + 256], self.rounds, self.w)
            out[a: a + 256] = (np.exp(re) * np.cos(b)) @ self.wt
        return np.maximum(out * self.rounds / math.pi, 0.0)


def _cutoff(sigma: float, m: int) -> tuple[float, float]:
    """W with |psi(w)|^M < 1e-18 at three consecutive checkpoints w, 1.25 w, 1.5625 w."""
    v = math.expm1(1.0 / sigma**2)
    grid = 4.0 / math.sqrt(m * v) * 1.25 ** np.arange(0, 240)
    lam = m * _log1p_complex(psi_minus_one(sigma, grid)).real
    below = lam < math.log(_TAIL_EPS)
    run = below[:-2] & below[1:-1] & below[2:]
    if not run.any():
        raise BudgetExceeded(
            f"|psi(w)|^M does not fall below {_TAIL_EPS} for sigma={sigma!r}, rounds={m}: the "
            "lognormal tail is too heavy for the Fourier method")
    k = int(np.argmax(run))
    return float(grid[k]), float(math.exp(lam[k]))


def _panels(sigma: float, m: int, spread: float, cutoff: float) -> np.ndarray:
    """Panel edges on [0, cutoff] from the local rate |Lambda'| (module docstring)."""
    v = math.expm1(1.0 / sigma**2)
    scale = 1.0 / math.sqrt(m * v)
    pilot = np.unique(np.concatenate([np.linspace(0.0, cutoff, 401),
                                      np.geomspace(scale * 1e-3, cutoff, 200)]))
    p1, dp = psi_minus_one(sigma, pilot, derivative=True)
    lam = m * _log1p_complex(p1).real
    # the phase of psi^M only matters where |psi^M| is not negligible (< 1e-20: ignored)
    rate = np.where(lam > -46.0, m * np.abs(dp / (1.0 + p1)), 0.0) + m * spread
    density = rate / 4.0 + 2.0 / np.maximum(pilot, scale)  # panels per unit w
    cum = np.concatenate([[0.0], np.cumsum(0.5 * (density[1:] + density[:-1]) * np.diff(pilot))])
    if not (cum[-1] * _OUT_NODES < MAX_OUTER_NODES):  # also catches inf / nan
        raise BudgetExceeded(
            f"the Fourier integral for sigma={sigma!r}, rounds={m} (|kappa - 1| <= {spread:.3g}) "
            f"needs more than {MAX_OUTER_NODES} nodes")
    panels = math.ceil(cum[-1]) + 1
    if panels * _OUT_NODES > MAX_OUTER_NODES:
        raise BudgetExceeded(
            f"the Fourier integral for sigma={sigma!r}, rounds={m} (|kappa - 1| <= {spread:.3g}) "
            f"needs {panels * _OUT_NODES} nodes, over the budget {MAX_OUTER_NODES}")
    return np.interp(np.linspace(0.0, cum[-1], panels + 1), cum, pilot)


def _rule(edges: np.ndarray, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    t, wt = _leg(nodes)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[:-1] + edges[1:])
    return ((mid[:, None] + half[:, None] * t[None, :]).ravel(),
            (half[:, None] * wt[None, :]).ravel())


@lru_cache(maxsize=16)
def _cached_edges(sigma: float, m: int, spread: float) -> tuple[float, float, np.ndarray]:
    """(W, |psi(W)|^M, panel edges): the cheap part of the rule (~800 psi evaluations)."""
    cutoff, tail = _cutoff(sigma, m)
    return cutoff, tail, _panels(sigma, m, spread, cutoff)


def law_nodes(sigma: float, rounds: int, spread: float) -> int:
    """Outer nodes of both rules of :func:`one_epoch_law` (cost planning; cheap, cached).

    Raises:
        BudgetExceeded: as :func:`one_epoch_law`.
    """
    sigma, rounds, spread = _checked(sigma, rounds, spread)
    edges = _cached_edges(sigma, rounds, spread)[2]
    return (len(edges) - 1) * (_OUT_NODES + _OUT_CHECK)


@lru_cache(maxsize=4)
def _cached_law(sigma: float, m: int, spread: float) -> OneEpochLaw:
    cutoff, tail, edges = _cached_edges(sigma, m, spread)
    w, wt = _rule(edges, _OUT_NODES)
    w2, wt2 = _rule(edges, _OUT_CHECK)
    lam = m * _log1p_complex(psi_minus_one(sigma, w))
    lam2 = m * _log1p_complex(psi_minus_one(sigma, w2))
    return OneEpochLaw(sigma, m, spread, w, wt, lam, w2, wt2, lam2, cutoff, tail)


def one_epoch_law(sigma: float, rounds: int, spread: float = 0.0) -> OneEpochLaw:
    r"""The Fourier quadrature of one epoch, resolving S/M within 1 +- ``spread``.

    Args:
        sigma: Noise multiplier, finite and >= 0.05.
        rounds: M, whole number >= 1.
        spread: Largest |kappa - 1| to be queried (>= 0; rounded up to a coarse grid so
            nearby requests share a cached rule).

    Returns:
        An :class:`OneEpochLaw`.

    Raises:
        ValueError: for bad input. BudgetExceeded: when the rule would exceed its node budget.
    """
    return _cached_law(*_checked(sigma, rounds, spread))


def _checked(sigma: float, rounds: int, spread: float) -> tuple[float, int, float]:
    """Validated (sigma, rounds, spread) of :func:`one_epoch_law`, spread rounded up."""
    sigma = check_positive("sigma", sigma)
    rounds = check_count("rounds", rounds, maximum=10**9)
    if not (sigma >= 0.05):
        raise ValueError(f"sigma must be >= 0.05, got {sigma!r}")
    if sigma < 0.1:  # e^{z} on the contour would overflow; TV ~ 1 there anyway
        raise BudgetExceeded(f"sigma={sigma!r} < 0.1: the lognormal tail is too heavy for the "
                             "Fourier method")
    if not (spread >= 0.0 and math.isfinite(spread)):
        raise ValueError(f"spread must be finite and >= 0, got {spread!r}")
    if spread > 0.0:  # share rules: round spread up to 2^(k/4)
        spread = 2.0 ** (math.ceil(4.0 * math.log2(spread)) / 4.0)
    return float(sigma), int(rounds), float(spread)


def kappa_range(sigma: float, rounds: int, tail: float) -> tuple[float, float]:
    r"""A range [k_lo, k_hi] of S/M with P(S/M < k_lo) and Q(S/M > k_hi) below ``tail`` (from
    the normal bulk and the size-biased lognormal tail; the callers verify with the CDF).

    Q's tail is that of one size-biased lognormal exp(N(s^2/2, s^2)) over M plus the bulk.
    """
    s = 1.0 / sigma
    v = math.expm1(s * s)
    z = float(-ndtri(tail))
    sd = math.sqrt(v / rounds)
    hi = 1.0 + max(1.5 * z * sd, math.expm1(0.5 * s * s + s * z) / rounds)
    lo = max(1.0 - 1.5 * z * sd, math.exp(-0.5 * s * s - s * z) * 0.5)
    return lo, hi


def cumulant_cost(sigma: float, rounds: int) -> float:
    r"""Estimated seconds of :func:`pllr_cumulants` for (sigma, M) on an idle core (0 when its
    density weights are cached): psi at both outer rules (nodes x inner nodes) plus the density
    at the 400 x 24 points in ell (points x main-rule nodes). Evaluates only the cheap cutoff
    and panel placement (cached).

    Raises:
        BudgetExceeded: when the Fourier rule exceeds its node budget.
    """
    if (float(sigma), int(rounds)) in _WEIGHTS:
        return 0.0
    klo, khi = kappa_range(sigma, rounds, 1e-11)
    spread = max(khi - 1.0, 1.0 - klo)
    nodes = law_nodes(sigma, rounds, spread)
    inner = _inner_rule(1.0 / float(sigma))[0].size
    main = nodes * _OUT_NODES // (_OUT_NODES + _OUT_CHECK)
    return (nodes * inner * _COST_PSI
            + _ELL_PANELS * _ELL_NODES * main * _COST_DENSITY)


_WEIGHTS: dict[tuple[float, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
_WEIGHTS_MAX = 16


def _density_weights(sigma: float, rounds: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""(ell, P weights, Q weights) of the moment rule of :func:`pllr_cumulants` (cached, so
    the cumulants of another order reuse them: the numbers are those of a fresh computation).

    Raises:
        NotApplicable: when the Fourier rule exceeds its budget or the mass is not 1.
    """
    key = (float(sigma), int(rounds))
    if key in _WEIGHTS:
        return _WEIGHTS[key]
    try:
        klo, khi = kappa_range(sigma, rounds, 1e-11)
        law = one_epoch_law(sigma, rounds, max(khi - 1.0, 1.0 - klo))
        lo, hi = math.log(klo), math.log(khi)
    except BudgetExceeded as exc:
        raise NotApplicable(f"random-allocation cumulants: {exc}") from None
    t, wt = _leg(_ELL_NODES)
    edges = np.linspace(lo, hi, _ELL_PANELS + 1)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[:-1] + edges[1:])
    ell = (mid[:, None] + half[:, None] * t[None, :]).ravel()
    w = (half[:, None] * wt[None, :]).ravel()
    fp = law.density(np.exp(ell)) * np.exp(ell) * w
    fq = fp * np.exp(ell)
    if not (abs(fp.sum() - 1.0) < 1e-8 and abs(fq.sum() - 1.0) < 1e-8):
        raise NotApplicable(
            f"random-allocation cumulants (sigma={sigma!r}, rounds={rounds}): the density "
            f"quadrature has mass {fp.sum():.12g} / {fq.sum():.12g}, not 1 within 1e-8")
    if len(_WEIGHTS) >= _WEIGHTS_MAX:
        _WEIGHTS.pop(next(iter(_WEIGHTS)))
    for arr in (ell, fp, fq):
        arr.flags.writeable = False
    _WEIGHTS[key] = (ell, fp, fq)
    return ell, fp, fq


def pllr_cumulants(sigma: float, rounds: int, order: int):
    r"""Cumulants of L = log(S/M) under P and under Q (dQ = (S/M) dP), for the mechanism.

    Moments by a composite Gauss-Legendre rule in ell = log(S/M) against the density of L,
    :math:`f_L(\ell) = e^\ell f_{S/M}(e^\ell)` (Fourier inversion above), on the range where
    P(L < ell_lo) and Q(L > ell_hi) are below ~1e-11 (found from the CDF); then
    :func:`numeric.moments.cumulants_from_weights`. Raises NotApplicable when the Fourier rule
    exceeds its budget or the density mass departs from 1 by more than 1e-8.

    Budget (issue 12): before any node is evaluated, :func:`cumulant_cost` estimates the work
    from (sigma, M); above :data:`MAX_CUMULANT_SECONDS` the cumulants are refused
    (NotApplicable naming sigma and rounds), and under ``auto``'s deadline
    (:func:`numeric.errors.require_time`) a cost above the time left is refused. A step
    estimated to fit is not interrupted (an interrupted quadrature would waste its work and,
    on a loaded machine, leave ``auto`` without its AEA fallback); its overrun is bounded by
    the estimate's error (measured 1.2-2.8x under load).
    """
    from ..mechanisms.base import PLLRCumulants
    from ..moments import cumulants_from_weights
    try:
        cost = cumulant_cost(sigma, rounds)
    except BudgetExceeded as exc:
        raise NotApplicable(f"random-allocation cumulants: {exc}") from None
    what = (f"the random-allocation cumulants (Fourier inversion at sigma={sigma!r}, "
            f"rounds={rounds})")
    if not (cost <= MAX_CUMULANT_SECONDS):
        raise BudgetExceeded(f"{what} need about {cost:.3g} s, over the budget of "
                             f"{MAX_CUMULANT_SECONDS:g} s (small sigma and few rounds make the "
                             "lognormal tail heavy)")
    require_time(cost, what)
    ell, fp, fq = _density_weights(float(sigma), int(rounds))
    kx = cumulants_from_weights(ell, (fp / fp.sum())[None, :], order)[0]
    ky = cumulants_from_weights(ell, (fq / fq.sum())[None, :], order)[0]
    return PLLRCumulants(x=tuple(float(x) for x in kx), y=tuple(float(y) for y in ky))
