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
u = a y. The difference D_k is taken *directly* where it would cancel:
:math:`D_k = \int_0^\infty e^{-a_1 y}(-\operatorname{expm1}(-sy))\varphi(y) He_k(y)\,dy`
(Gauss-Laguerre for a_1 >= 3; composite Gauss-Legendre when s is small). Negative tilts
(t in (-1, 0), eps below the mean of S) are handled by the same formulas, with the factor
e^{a_1^2/2} carried in log space. At order 0 the method is exact for Gaussian compositions (the
tilted law of a Gaussian is Gaussian).

eps(delta): t parametrizes eps = K'(t) monotonically, so eps(delta) is a 1-D root find in t
(grid scan plus a safeguarded quasi-Newton refinement; the largest root is reported and extra
roots are flagged). Both pair orders are accounted for (for the swapped pair, K'(t) = K(-1-t));
the max is reported with its direction. Delta parts of ApproxDP terms enter exactly through
GDP Eq. 13, delta = d + (1 - d) delta_pure.

CGFs per mechanism (:func:`pllr_cgf`, a :func:`functools.singledispatch` on the mechanism
class; register more with ``pllr_cgf.register``). Each returns K_Y(t) and
K_Y^{(j)}(t), j = 1..n, for the mechanism's own (P, Q) order:

* Gaussian: :math:`K(t) = \mu^2 t(t+1)/2`.
* Randomized response / ApproxDP: Y = +eps0 w.p. expit(eps0), else -eps0; the tilted law is
  two-point with log-weights :math:`\pm t\varepsilon_0 + \log\operatorname{expit}(\pm
  \varepsilon_0)`.
* Laplace (P = Lap(0,1), L = |x| - |x - mu|): with c = t + 1/2 the tilted law has atoms at -mu,
  +mu with weights proportional to e^{-c mu}, e^{c mu} and density proportional to e^{c l}/2 on
  (-mu, mu), so :math:`K(t) = -\mu/2 + \log(\cosh c\mu + \sinh(c\mu)/(2c))`.
* Poisson-subsampled Gaussian: :math:`K(t) = \log E_P e^{(t+1)L}`, L = log1p(p expm1(u)),
  u = mu x - mu^2/2, by composite Gauss-Legendre quadrature over [-13, max(t+1, 1) mu + 13]
  (panel width min(1/2, 1/mu), 16 nodes) with K = log1p(E_P[expm1((t+1)L)]) to keep relative
  precision for small rates; validated against the exact integer moments
  :math:`E_P e^{kL} = \sum_j \binom kj (1-p)^{k-j}p^j e^{j(j-1)\mu^2/2}`.

Higher derivatives are the cumulants of the tilted law, computed from its central moments.

Diagnostics (always computed; warnings and ``details``): |l_3| > 0.2 or |l_4| > 0.1 at the
saddlepoint, relative disagreement above 1e-3 between orders r and r - 1, more than one root,
a non-positive tilted-Edgeworth factor. They fire where the tilted law is far from normal, e.g.
the bimodal "one big step" regime of DP-SGD (rate * m <= 10). The method then does *not* fall
back silently to AEA; the warning says whether the ``certified`` method is available, and the
``auto`` method (:mod:`numeric.auto`) returns the certified enclosure there when it is.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from ._validation import as_float_array, check_delta, check_order
from .composition import Composition, compose
from .edgeworth import SERIES_ORDERS, cumulants_needed, hermite_e, series_coefficients
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
from .moments import cumulants_from_central_moments, gauss_legendre_panels
from .results import DeltaResult, EpsilonResult

__all__ = ["pllr_cgf", "saddlepoint_delta", "saddlepoint_epsilon"]

METHOD = "saddlepoint"
L3_MAX = 0.2
L4_MAX = 0.1
ORDER_DISAGREEMENT_MAX = 1e-3
_A_LAG = 3.0  # Gauss-Laguerre for a >= this, recursion below
_S_SMALL = 0.25  # below this (and a1 < _A_LAG) D_k is integrated directly
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_PHI0 = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_HALF = math.sqrt(0.5)
_LAG_U, _LAG_W = np.polynomial.laguerre.laggauss(80)
_GL_T, _GL_W = np.polynomial.legendre.leggauss(16)


# --------------------------------------------------------------------------------------------
# CGFs of the PLLR under Q, per mechanism
# --------------------------------------------------------------------------------------------


def _tilted_cumulants(values: np.ndarray, logw: np.ndarray, n: int) -> tuple[float, np.ndarray]:
    """log of the total weight and cumulants 1..n of the discrete law ``values`` ~ e^logw."""
    top = float(np.max(logw))
    w = np.exp(logw - top)
    total = float(np.sum(w))
    w = w / total
    mean = float(np.dot(w, values))
    dev = values - mean
    central = np.empty(n)
    power = np.ones_like(dev)
    for k in range(n):
        power = power * dev
        central[k] = float(np.dot(w, power))
    central[0] = 0.0
    return top + math.log(total), cumulants_from_central_moments(mean, central)


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


@pllr_cgf.register
def _(mechanism: Gaussian, t: float, n: int) -> tuple[float, np.ndarray]:
    mu2 = mechanism.mu**2
    d = np.zeros(n)
    d[0] = mu2 * (t + 0.5)
    if n > 1:
        d[1] = mu2
    return 0.5 * mu2 * t * (t + 1.0), d


def _two_point(eps0: float, t: float, n: int) -> tuple[float, np.ndarray]:
    if eps0 == 0.0:
        return 0.0, np.zeros(n)
    values = np.array([eps0, -eps0])
    logw = np.array([
        t * eps0 - math.log1p(math.exp(-eps0)),  # log expit(eps0)
        -t * eps0 - eps0 - math.log1p(math.exp(-eps0)),  # log expit(-eps0)
    ])
    return _tilted_cumulants(values, logw, n)


@pllr_cgf.register
def _(mechanism: RandomizedResponse, t: float, n: int) -> tuple[float, np.ndarray]:
    return _two_point(mechanism.eps, t, n)


@pllr_cgf.register
def _(mechanism: ApproxDP, t: float, n: int) -> tuple[float, np.ndarray]:
    return _two_point(mechanism.eps, t, n)


@_pllr_sup.register
def _(mechanism: RandomizedResponse) -> float:
    return mechanism.eps


@_pllr_sup.register
def _(mechanism: ApproxDP) -> float:
    return mechanism.eps


@_pllr_sup.register
def _(mechanism: Laplace) -> float:
    return mechanism.mu


@pllr_cgf.register
def _(mechanism: Laplace, t: float, n: int) -> tuple[float, np.ndarray]:
    mu = mechanism.mu
    c = t + 0.5
    a = abs(c) * mu
    g = -math.expm1(-2.0 * a) / (2.0 * abs(c)) if a > 0.0 else mu
    k0 = -0.5 * mu + a - math.log(2.0) + math.log1p(math.exp(-2.0 * a) + g)
    if a <= 40.0:
        x, gw = gauss_legendre_panels(-mu, mu, max(1, math.ceil(a)), 16)
    else:  # e^{c l} is concentrated within 40/|c| of the end it favours
        lo, hi = (mu - 40.0 / abs(c), mu) if c > 0.0 else (-mu, -mu + 40.0 / abs(c))
        x, gw = gauss_legendre_panels(lo, hi, 40, 16)
    values = np.concatenate([[-mu, mu], x])
    logw = np.concatenate([[-c * mu, c * mu], c * x + np.log(0.5 * gw)])
    _, kappas = _tilted_cumulants(values, logw, n)
    return k0, kappas


_SG_NODES = 12  # Gauss-Legendre nodes per panel (panel width min(1/2, 1/mu))


@functools.lru_cache(maxsize=64)
def _sg_rule(mu: float, rate: float, hi: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nodes' PLLR values, log(weight * phi) and weight * phi on [-13, hi] (t-independent)."""
    lo = -13.0
    width = min(0.5, 1.0 / mu)
    x, w = gauss_legendre_panels(lo, hi, math.ceil((hi - lo) / width), _SG_NODES)
    logbase = np.log(w) - 0.5 * x * x - _LOG_SQRT_2PI
    return subsampled_gaussian_pllr(x, mu, rate), logbase, np.exp(logbase)


@functools.lru_cache(maxsize=4096)
def _sg_cgf_cached(mu: float, rate: float, t: float, n: int) -> tuple[float, tuple]:
    s = t + 1.0
    hi = math.ceil(max(s, 1.0) * mu) + 13.0  # integer end: the rule cache is reused
    L, logbase, wphi = _sg_rule(mu, rate, hi)
    sl = s * L
    top, kappas = _tilted_cumulants(L, sl + logbase, n)
    if s * max(float(L[-1]), 0.0) < 40.0:  # L is increasing: keep relative precision of K
        k0 = math.log1p(float(np.dot(wphi, np.expm1(sl))))
    else:
        k0 = top
    return k0, tuple(kappas.tolist())


@pllr_cgf.register
def _(mechanism: PoissonSubsampledGaussian, t: float, n: int) -> tuple[float, np.ndarray]:
    if mechanism.rate == 1.0:
        return pllr_cgf(Gaussian(mechanism.sigma), t, n)
    k0, kappas = _sg_cgf_cached(mechanism.mu, mechanism.rate, float(t), int(n))
    return k0, np.array(kappas)


def _composed_cgf(comp: Composition, direction: str, t: float, n: int) -> tuple[float, np.ndarray]:
    """K_S(t) and derivatives 1..n for the pair order ``direction`` (swap: t -> -1 - t)."""
    swap = direction == DIRECTION_QP
    arg = -1.0 - t if swap else t
    total = 0.0
    der = np.zeros(n)
    for mech, count in comp.terms:
        k0, d = pllr_cgf(mech, arg, n)
        total += count * k0
        der += count * np.asarray(d)
    if swap:
        der = der * (-1.0) ** np.arange(1, n + 1)
    return total, der


def _check_supported(comp: Composition) -> None:
    for mech, _ in comp.terms:
        pllr_cgf(mech, 0.0, 2)  # raises ValueError("... use aea") if unsupported


# --------------------------------------------------------------------------------------------
# The integrals D_k = J_k(a1) - J_k(a1 + s)
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=16)
def _he0(kmax: int) -> tuple[float, ...]:
    """He_k(0), k = 0..kmax (cached)."""
    return tuple(float(h) for h in hermite_e(kmax, np.array(0.0)))


def _hermite_dot(kmax: int, y: np.ndarray, base: np.ndarray) -> np.ndarray:
    """sum_i base_i He_k(y_i), k = 0..kmax, as one matrix-vector product."""
    return np.array(hermite_e(kmax, y)) @ base


def _j_recursion(a: float, kmax: int, log_scale: float) -> np.ndarray:
    """e^{-log_scale} J_k(a), k = 0..kmax, by J_k = phi(0) He_{k-1}(0) - a J_{k-1}."""
    he0 = _he0(kmax)
    out = [0.0] * (kmax + 1)
    if a >= 0.0:
        out[0] = 0.5 * float(special.erfcx(a * _SQRT_HALF)) * math.exp(-log_scale)
    else:  # e^{a^2/2} Phibar(a) with the scale e^{-a^2/2} taken out
        out[0] = 0.5 * float(special.erfc(a * _SQRT_HALF)) * math.exp(0.5 * a * a - log_scale)
    c = _PHI0 * math.exp(-log_scale)
    for k in range(1, kmax + 1):
        out[k] = c * he0[k - 1] - a * out[k - 1]
    return np.array(out)


def _j_laguerre(a: float, kmax: int, factor: np.ndarray | None = None) -> np.ndarray:
    """(1/a) sum_i w_i f(u_i/a) phi(u_i/a) He_k(u_i/a) (Gauss-Laguerre, u = a y), a >= 3."""
    y = _LAG_U / a
    base = _LAG_W * np.exp(-0.5 * y * y) * _PHI0 / a
    if factor is not None:
        base = base * factor
    return _hermite_dot(kmax, y, base)


def _d_integrals(a1: float, s: float, kmax: int) -> tuple[float, np.ndarray]:
    """``(log_scale, D)`` with D_k = e^{-log_scale} int_0^inf (e^{-a1 y} - e^{-(a1+s) y})
    phi(y) He_k(y) dy, k = 0..kmax (module docstring)."""
    a2 = a1 + s
    if a1 >= _A_LAG:
        return 0.0, _j_laguerre(a1, kmax, -np.expm1(-s * _LAG_U / a1))
    log_scale = 0.5 * a1 * a1 if a1 < 0.0 else 0.0
    if s >= _S_SMALL:
        j1 = _j_recursion(a1, kmax, log_scale)
        if a2 >= _A_LAG:
            j2 = _j_laguerre(a2, kmax) * math.exp(-log_scale)
        else:
            j2 = _j_recursion(a2, kmax, log_scale)
        return log_scale, j1 - j2
    # small s: integrate e^{-a1 y - y^2/2 - log_scale} (-expm1(-s y)) He_k(y) / sqrt(2 pi)
    hi = max(0.0, -a1) + 40.0
    panels = math.ceil(hi)
    edges = np.linspace(0.0, hi, panels + 1)
    half = 0.5 * np.diff(edges)
    mid = 0.5 * (edges[:-1] + edges[1:])
    y = (mid[:, None] + half[:, None] * _GL_T[None, :]).ravel()
    w = (half[:, None] * _GL_W[None, :]).ravel()
    expo = -a1 * y - 0.5 * y * y - log_scale
    base = w * np.exp(expo) * _PHI0 * (-np.expm1(-s * y))
    return log_scale, _hermite_dot(kmax, y, base)


# --------------------------------------------------------------------------------------------
# The saddlepoint profile of one pair order
# --------------------------------------------------------------------------------------------


@dataclass
class _Point:
    """The saddlepoint approximation at tilt t (one pair order)."""

    t: float
    eps: float
    log_delta: float  # -inf where the tilted-Edgeworth factor is <= 0
    factor: float
    factor_lower: float  # the same factor at order r - 1 (nan at order 0)
    s: float
    lam: dict[int, float] = field(default_factory=dict)

    @property
    def disagreement(self) -> float:
        if not math.isfinite(self.factor_lower):
            return 0.0
        return abs(self.factor - self.factor_lower) / max(abs(self.factor), 1e-300)


class _Profile:
    def __init__(self, comp: Composition, direction: str, order: int) -> None:
        self.comp = comp
        self.direction = direction
        self.order = order
        self.need = max(2, cumulants_needed(order))
        # ess sup of S in this pair order (the swapped order's PLLR is minus the own one)
        if direction == DIRECTION_QP:
            self.sup = sum(-c * _pllr_inf(m) for m, c in comp.terms)
        else:
            self.sup = sum(c * _pllr_sup(m) for m, c in comp.terms)
        self.evals = 0
        self._points: dict[float, _Point] = {}

    def cgf(self, t: float) -> tuple[float, np.ndarray]:
        self.evals += 1
        return _composed_cgf(self.comp, self.direction, t, self.need)

    def point(self, t: float) -> _Point:
        t = float(t)
        p = self._points.get(t)
        if p is None:
            p = self._points[t] = self._point(t)
        return p

    def _point(self, t: float) -> _Point:
        k0, d = self.cgf(t)
        eps, var = float(d[0]), float(d[1])
        if not (var > 0.0):
            raise ValueError(f"the tilted variance K''(t) must be > 0, got {var!r} at t={t!r}")
        s = math.sqrt(var)
        lam = {j: float(d[j - 1]) / s**j for j in range(3, self.need + 1)}
        coeffs = series_coefficients(lam, self.order)
        kmax = max(coeffs, default=0)
        log_scale, dk = _d_integrals(t * s, s, kmax)
        factor = float(dk[0] + sum(c * dk[k] for k, c in coeffs.items()))
        lower = math.nan
        if self.order > 0:
            cl = series_coefficients(lam, self.order - 1)
            lower = float(dk[0] + sum(c * dk[k] for k, c in cl.items()))
        base = k0 - t * eps + log_scale
        log_delta = base + math.log(factor) if factor > 0.0 else -math.inf
        return _Point(t, eps, log_delta, factor, lower, s, lam)

    def tilt_for(self, eps: float) -> float:
        """The saddlepoint t with K'(t) = eps (K' is increasing; K'(-1) <= 0 <= eps)."""

        lo, hi = -1.0, math.inf
        t = 0.0
        for _ in range(200):  # Newton on K'(t) = eps, safeguarded by bisection
            d = self.cgf(t)[1]
            f = float(d[0]) - eps
            if f == 0.0:
                return t
            if f < 0.0:
                lo = t
            else:
                hi = t
            step = f / float(d[1])
            new = t - step
            if not (lo < new < hi):
                new = 0.5 * (lo + hi) if math.isfinite(hi) else 2.0 * max(t, 0.0) + 1.0
            if abs(new - t) <= 1e-15 * max(1.0, abs(t)) or (math.isfinite(hi) and hi - lo
                                                             <= 4e-16 * max(1.0, abs(hi))):
                return new
            if new > 1e8:
                break
            t = new
        raise ValueError(f"no saddlepoint found for eps={eps!r}")


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


_ESTIMATE_NOTE = "estimate: the saddlepoint accountant approximates delta(eps); it is not a bound"


def saddlepoint_delta(composition, eps: float | np.ndarray, order: int = 2) -> DeltaResult:
    r"""Saddlepoint (tilted-Edgeworth) estimate of delta(eps), vectorized over eps.

    Args:
        composition: A :class:`~numeric.composition.Composition` or anything
            :func:`~numeric.composition.compose` accepts; every mechanism needs a registered
            CGF (:func:`pllr_cgf`).
        eps: eps value(s), finite and >= 0.
        order: Edgeworth order r of the tilted expansion (0..6; 0 is exact for Gaussian).

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
    _check_supported(comp)
    warns: list[str] = []
    per_dir: dict[str, np.ndarray] = {}
    det: dict[str, list] = {}
    flat = e.reshape(-1)
    for direction in comp.directions:
        prof = _Profile(comp, direction, order)
        vals = np.zeros(flat.size)
        det[direction] = []
        for i, x in enumerate(flat):
            if x >= prof.sup:
                det[direction].append({"t": math.inf})
                continue
            p = prof.point(prof.tilt_for(float(x)))
            vals[i] = math.exp(p.log_delta) if math.isfinite(p.log_delta) else 0.0
            det[direction].append(_point_details(p))
            for w in _diagnostics(p, direction):
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


def _solve_direction(
    prof: _Profile, log_target: float, grid: int = 10
) -> tuple[float, _Point | None, int, list[str]]:
    """Largest eps with log delta_r(eps) = log_target for one pair order."""
    notes: list[str] = []
    t0 = prof.tilt_for(0.0)
    p0 = prof.point(t0)
    if p0.factor > 0.0 and p0.log_delta <= log_target:
        return 0.0, p0, 0, notes
    # (a non-positive factor at eps = 0 -- deep negative tilt, delta near 1 -- is not a root)

    def g(t: float) -> float:
        return prof.point(t).log_delta - log_target

    # Bracket: extend t_hi until the surrogate is below the target there and further out.
    t_hi = max(t0, 0.0) + 1.0
    for _ in range(60):
        if g(t_hi) < 0.0 and g(2.0 * t_hi + 1.0) < 0.0:
            break
        t_hi = 2.0 * t_hi + 1.0
    else:
        raise ValueError("the saddlepoint search did not bracket the target delta")
    ts = np.linspace(t0, t_hi, grid)
    vals = np.array([g(float(t)) for t in ts])
    above = vals > 0.0
    if not above.any():  # the surrogate never exceeds the target: only eps = 0 remains
        notes.append(
            f"{prof.direction}: the tilted expansion is not positive at eps = 0 and stays below "
            "the target delta; eps = 0 is reported, but the expansion has broken down here "
            "(use a certified method)"
        )
        return 0.0, p0, 0, notes
    downs = int(np.count_nonzero(above[:-1] & ~above[1:]))
    i = int(np.flatnonzero(above)[-1])
    p = _refine_root(prof, log_target, float(ts[i]), float(ts[i + 1]), float(vals[i]),
                     float(vals[i + 1]))
    if not abs(p.log_delta - log_target) <= 1e-6:
        notes.append(
            f"{prof.direction}: the saddlepoint delta jumps across the target near t={p.t:.6g} "
            "(no root; the tilted expansion breaks down there); the jump point is reported"
        )
    if downs > 1:
        notes.append(
            f"{prof.direction}: the saddlepoint delta crosses the target {downs} times in t "
            "(more than one root); the largest is reported"
        )
    return p.eps, p, downs, notes


def _refine_root(prof: _Profile, log_target: float, lo: float, hi: float, g_lo: float,
                 g_hi: float) -> _Point:
    """The root of g(t) = log delta_r(t) - log_target in [lo, hi] (g_lo > 0 >= g_hi).

    Safeguarded quasi-Newton: g'(t) = -t K''(t) + (log factor)'(t), the first term exact
    (d/dt [K - tK'] = -tK''), the second by a secant over the last two iterates; a step that
    leaves the bracket, or a bracket not halved in three steps, is replaced by bisection. Stops at
    |g| <= 1e-13, a Newton step below 1e-11 relative in t (log delta carries rounding noise of
    ~1e-11 when the tilted factor is small) or a bracket of relative width 4e-16: the accuracy
    of the Brent search it replaces (eps agrees to ~1e-12), in a third of the evaluations.
    """
    if not (g_hi < 0.0):  # the grid end is exactly at the target
        return prof.point(hi)
    t = lo if g_lo < -g_hi else hi
    prev: tuple[float, float] | None = None
    widths: list[float] = []
    best = prof.point(t)
    for _ in range(100):
        p = prof.point(t)
        gt = p.log_delta - log_target
        if not math.isfinite(gt):  # factor <= 0: treat as below the target
            hi, g_hi = t, -math.inf
            if hi - lo <= 4e-16 * max(1.0, abs(hi)):
                return prof.point(lo)  # a jump, not a root: flagged by the caller
            t = 0.5 * (lo + hi)
            continue
        best = p
        if abs(gt) <= 1e-13:
            return p
        if gt > 0.0:
            lo, g_lo = t, gt
        else:
            hi, g_hi = t, gt
        if hi - lo <= 4e-16 * max(1.0, abs(hi)):
            return p
        slope = -t * p.s * p.s
        if prev is not None and prev[0] != t and p.factor > 0.0 and prev[1] > 0.0:
            slope += (math.log(p.factor) - math.log(prev[1])) / (t - prev[0])
        prev = (t, p.factor)
        new = t - gt / slope if slope < 0.0 else math.nan
        if abs(new - t) <= 1e-11 * max(1.0, abs(t)):  # at the rounding noise of log delta
            return p
        widths.append(hi - lo)
        slow = len(widths) > 3 and widths[-1] > 0.5 * widths[-4]  # not halving: bisect
        if slow or not (lo < new < hi):
            new = 0.5 * (lo + hi)
        if new == t:
            return p
        t = new
    return best


def saddlepoint_epsilon(composition, delta: float, order: int = 2) -> EpsilonResult:
    r"""Saddlepoint (tilted-Edgeworth) estimate of eps(delta): the largest root, max over orders.

    eps is parametrized by the tilt t (eps = K'(t)); the root of
    log delta_r(t) = log delta is bracketed on a grid in t and refined by a safeguarded
    quasi-Newton iteration (:func:`_refine_root`).

    Args:
        composition: A composition or anything :func:`~numeric.composition.compose` accepts.
        delta: Target delta in (0, 1).
        order: Edgeworth order r of the tilted expansion (0..6).

    Returns:
        An :class:`EpsilonResult` (method ``"saddlepoint"``, ``estimate=True`` except for
        all-Gaussian compositions), with per-direction eps, diagnostics as warnings, and
        ``details["saddlepoint"][direction]`` = t, s, l3, l4, order disagreement, roots.
        ``epsilon`` is ``inf`` when delta is at or below the composed delta part.

    Raises:
        ValueError: on invalid arguments or a mechanism without a CGF ("use aea").
    """
    comp = compose(composition)
    delta = check_delta("delta", delta)
    order = check_order("order", order, maximum=max(SERIES_ORDERS))
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
    per_dir: dict[str, float] = {}
    for direction in comp.directions:
        prof = _Profile(comp, direction, order)
        eps, p, roots, notes = _solve_direction(prof, log_target)
        per_dir[direction] = eps
        warns.extend(notes)
        if p is not None:
            details["saddlepoint"][direction] = {**_point_details(p, roots), "evals": prof.evals}
            warns.extend(_diagnostics(p, direction))
    details["diagnostics"] = list(warns)
    _lattice_note(comp, warns)
    _certified_note(warns)
    direction = max(per_dir, key=per_dir.get)
    return EpsilonResult(per_dir[direction], delta, METHOD, estimate, direction, per_dir,
                         tuple(warns), details)
