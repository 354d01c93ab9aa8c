r"""Certified Renyi / moment (Chernoff) upper bounds on delta(eps) and eps(delta).

**The bound.** Fix a pair order (P, Q) of the composed mechanism, with composed PLLR
:math:`S = \log(q/p)` (MATH.md section 1). Then :math:`\delta(\varepsilon) = E_Q[(1 -
e^{\varepsilon - S})_+]`. For :math:`\lambda > 0` let

.. math::

    c(\lambda) = \sup_{t \in \mathbb R} (1 - e^{-t})_+\, e^{-\lambda t}.

The supremum is over t > 0 (the function is 0 for t <= 0); the derivative of
:math:`(1 - e^{-t})e^{-\lambda t}` vanishes where :math:`e^{-t} = \lambda(1 - e^{-t})`, i.e.
:math:`e^{-t} = \lambda/(1+\lambda)`, so with :math:`\alpha = \lambda + 1`

.. math::

    c(\lambda) = \frac{1}{1+\lambda}\Bigl(\frac{\lambda}{1+\lambda}\Bigr)^{\lambda}
        = \frac1\alpha\Bigl(1 - \frac1\alpha\Bigr)^{\alpha - 1}.

With :math:`t = s - \varepsilon` this gives the pointwise inequality :math:`(1 -
e^{\varepsilon - s})_+ \le c(\lambda)\, e^{\lambda(s - \varepsilon)}` for every real s. Taking
:math:`E_Q` and changing measure (:math:`dQ = e^{S} dP`; all built-in pairs are mutually
absolutely continuous), :math:`E_Q[e^{\lambda S}] = E_P[e^{\alpha S}] = e^{\Lambda(\alpha)}` with
:math:`\Lambda(\alpha) = \log E_P[(q/p)^\alpha] = (\alpha - 1) D_\alpha(Q\|P)`, which is additive
over independent steps, :math:`\Lambda = \sum_i m_i \Lambda_i`. Hence, for **every** alpha > 1,

.. math::

    \delta(\varepsilon) \le \exp\bigl(\Lambda(\alpha) - (\alpha - 1)\varepsilon\bigr)\,
        \frac1\alpha\Bigl(1 - \frac1\alpha\Bigr)^{\alpha - 1},

the conversion of Canonne, Kamath, Steinke, *The Discrete Gaussian for Differential Privacy*,
NeurIPS 2020 (arXiv:2004.00010), Prop. 12 (also Asoodeh, Liao, Calmon, Kosut, Sankar, *A
Better Bound Gives a Hundred Rounds*, ISIT 2020; Balle, Barthe, Gaboardi, Hsu, Sato, AISTATS
2020, Thm 21). Setting the right-hand side equal to tau and solving for eps: for every alpha > 1,

.. math::

    \varepsilon(\tau) \le \max\Bigl(0,\ \frac{\Lambda(\alpha) + \log c(\alpha - 1)
        + \log(1/\tau)}{\alpha - 1}\Bigr)
    = \max\Bigl(0,\ D_\alpha + \log\Bigl(1 - \frac1\alpha\Bigr)
        + \frac{\log(1/\tau) - \log\alpha}{\alpha - 1}\Bigr),

because at that eps the bound equals tau and the true delta is non-increasing (at eps < 0 the
bound still holds, and delta(0) <= delta(eps) then).

**Certification.** Every alpha > 1 gives a valid bound, so the minimisation over alpha is done in
floating point (golden section on log(alpha - 1) over [1e-8, 1e5]; the objectives are convex in
alpha, as Lambda is a cumulant generating function and log c is convex, hence unimodal; a step
with integer-only orders would switch to bisection on the sign of the forward difference) and
only the final evaluation is certified: alpha is rounded to a short dyadic number, taken exactly
into Arb, and the upper end of the Arb ball of the bound is reported (clipped at 1). The lower
end is the trivial 0.

**Per-step Lambda_i** for the pair order (P, Q); for the swapped order (Q, P) one needs
:math:`\log E_Q[(p/q)^\alpha] = \Lambda_i(1 - \alpha)`, which equals :math:`\Lambda_i(\alpha)`
for symmetric pairs (Y =d -X).

* Gaussian, :math:`\mu = \Delta/\sigma` exactly from the binary64 inputs:
  :math:`\Lambda(\alpha) = \alpha(\alpha-1)\mu^2/2`; real alpha.
* Randomized response / the pure part of ApproxDP, :math:`\varepsilon_0`: the two-point law,
  :math:`\Lambda(\alpha) = \log\bigl((e^{\alpha\varepsilon_0} + e^{(1-\alpha)\varepsilon_0})
  /(1 + e^{\varepsilon_0})\bigr)`; real alpha. ``ApproxDP(0, delta)`` has Lambda = 0.
* Laplace, :math:`\mu = \Delta/b`: integrating :math:`e^{\alpha L}` against the law of
  MATH.md section 4 (atoms and the piece L = 2x - mu on (0, mu) with density e^{-x}/2),
  :math:`E_P[e^{\alpha L}] = \tfrac{\alpha}{2\alpha-1}e^{(\alpha-1)\mu}
  + \tfrac{\alpha-1}{2\alpha-1}e^{-\alpha\mu}` (both terms positive for alpha > 1); real alpha.
* Poisson-subsampled Gaussian (rate p < 1, :math:`\mu = 1/\sigma`), :math:`w = q/p = 1 - p + p
  e^{\mu x - \mu^2/2}` under P = N(0, 1). Order (P, Q): :math:`E_P[w^\alpha]`; at integer
  alpha = k >= 2 the binomial expansion and :math:`E e^{j(\mu x - \mu^2/2)} = e^{j(j-1)\mu^2/2}`
  give the exact finite sum :math:`\sum_j \binom kj (1-p)^{k-j} p^j e^{j(j-1)\mu^2/2}` (Mironov,
  Talwar, Zhang, *Renyi Differential Privacy of the Sampled Gaussian Mechanism*,
  arXiv:1908.10530, Sec. 3.3), evaluated in Arb; at other real alpha, certified quadrature.
  Order (Q, P): :math:`E_Q[(p/q)^\alpha] = E_P[w^{1-\alpha}]`, which has no finite closed form,
  by certified quadrature. The quadrature (:func:`sg_power_moment`) is
  :func:`flint.acb.integral` (analyticity of log w verified on complex balls) on a finite
  interval plus rigorous tails from :math:`1 - p \le w \le \max(1, e^{\mu x - \mu^2/2})`
  (w is a convex combination of 1 and :math:`e^{\mu x - \mu^2/2}`). Rate 1 is the Gaussian
  mechanism.

Both pair orders are bounded for asymmetric compositions and the larger bound is reported
(``direction`` says which). ApproxDP delta parts :math:`d = 1 - \prod_i(1-\delta_i)^{m_i}` (GDP
Eq. 12) enter as :math:`d + (1 - d)\delta(\varepsilon)` (GDP Eq. 13), increasing in both, and
for epsilon the target becomes :math:`\tau = (\delta - d)/(1 - d)`. Mechanisms without a
certified Lambda (e.g. ones compiled by ``derive``) make the method inapplicable
(``ValueError``), so :mod:`certify.combine` skips it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from flint import acb, arb, ctx, fmpz

from numeric.composition import Composition, compose
from numeric.mechanisms.base import DIRECTION_PQ, DIRECTION_QP, Mechanism
from numeric.mechanisms.gaussian import Gaussian
from numeric.mechanisms.laplace import Laplace
from numeric.mechanisms.randomized_response import ApproxDP, RandomizedResponse
from numeric.mechanisms.subsampled_gaussian import (
    PoissonSubsampledGaussian,
    subsampled_gaussian_pllr,
)
from numeric.moments import gauss_legendre_panels

from .bound import Bound
from .engine import DEFAULT_PRECISION, Endpoint, endpoints, to_arb, workprec

__all__ = [
    "LAMBDA_MAX",
    "chernoff_delta_bound",
    "chernoff_epsilon_bound",
    "log_mgf",
]

LAMBDA_MAX = 1e5
"""Largest order minus one (alpha - 1) searched; any alpha gives a valid bound."""

_LAMBDA_MIN = 1e-8
_INT_ORDER_MAX = 20000  # subsampled Gaussian (P, Q): exact sums of k + 1 terms up to here
_PREC_CAP = 1 << 11
_SIG_BITS = 12  # alpha - 1 is rounded to this many significant bits (exact, short)

_A_CONVERSION = (
    "Chernoff/Renyi conversion: delta(eps) <= exp(Lambda(alpha) - (alpha-1) eps) / alpha * "
    "(1 - 1/alpha)^(alpha-1) for every alpha > 1, Lambda(alpha) = log E_P[(q/p)^alpha] summed "
    "over independent steps (Canonne, Kamath, Steinke 2020, Prop. 12; proof in the docstring)"
)
_A_DELTA = "ApproxDP delta parts compose exactly and enter as d + (1 - d) delta (GDP Eq. 12-13)"


@dataclass(frozen=True)
class _StepCGF:
    """Lambda_i(alpha) = log E[(dQ'/dP')^alpha] of one step in one pair order."""

    floating: Callable[[float], float]  # float estimate, for choosing alpha
    certified: Callable[[arb], arb]  # Arb enclosure at an exact alpha
    integer_only: bool
    note: str


def _logaddexp(a: float, b: float) -> float:
    return float(np.logaddexp(a, b))


def _gaussian_cgf(mu2: Callable[[], arb], mu2f: float, note: str) -> _StepCGF:
    return _StepCGF(
        lambda a: a * (a - 1.0) * mu2f / 2.0,
        lambda a: a * (a - 1) * mu2() / 2,
        False,
        note,
    )


def _two_point_cgf(eps0: float, note: str) -> _StepCGF:
    def fl(a: float) -> float:
        return _logaddexp(a * eps0, (1.0 - a) * eps0) - _logaddexp(0.0, eps0)

    def cert(a: arb) -> arb:
        e = arb(eps0)
        return ((a * e).exp() + ((1 - a) * e).exp()).log() - (1 + e.exp()).log()

    return _StepCGF(fl, cert, False, note)


def _laplace_cgf(sensitivity: float, scale: float) -> _StepCGF:
    muf = sensitivity / scale

    def fl(a: float) -> float:
        return _logaddexp(math.log(a / (2 * a - 1)) + (a - 1) * muf,
                          math.log((a - 1) / (2 * a - 1)) - a * muf)

    def cert(a: arb) -> arb:
        mu = arb(sensitivity) / arb(scale)
        d = 2 * a - 1
        return (a / d * ((a - 1) * mu).exp() + (a - 1) / d * (-a * mu).exp()).log()

    return _StepCGF(fl, cert, False,
                    "Laplace: E_P[(q/p)^alpha] = alpha/(2alpha-1) e^((alpha-1)mu) + "
                    "(alpha-1)/(2alpha-1) e^(-alpha mu), mu = sensitivity/scale exactly")


def _sg_exact_sum(sigma: float, rate: float, k: int) -> arb:
    """E_P[(q/p)^k] = sum_j C(k,j)(1-p)^(k-j) p^j e^(j(j-1)mu^2/2), exactly in Arb."""
    mu = 1 / arb(sigma)
    half = mu * mu / 2
    p = arb(rate)
    q = 1 - p
    total = arb(0)
    binom = 1
    for j in range(k + 1):
        total += arb(fmpz(binom)) * q ** (k - j) * p ** j * (j * (j - 1) * half).exp()
        binom = binom * (k - j) // (j + 1)
    return total


@lru_cache(maxsize=64)
def _sg_grid(mu: float, rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Float rule for E_P[w^s]: log weights (Gauss-Legendre x phi) and log w at the nodes."""
    width = min(0.5, 1.0 / mu)
    a, b = -40.0, mu + 40.0
    x, w = gauss_legendre_panels(a, b, math.ceil((b - a) / width), 24)
    logw = np.log(w) - 0.5 * x * x - 0.5 * math.log(2 * math.pi)
    return logw, subsampled_gaussian_pllr(x, mu, rate)


def _sf(x: arb) -> arb:
    return (x / arb(2).sqrt()).erfc() / 2


def sg_power_moment(sigma: float, rate: float, s: arb) -> arb:
    r"""Enclosure of :math:`E_P[w^s]`, w = q/p, for the Poisson-subsampled Gaussian, s real.

    :math:`w(x) = 1 - p + p e^{\mu x - \mu^2/2}`, P = N(0, 1), mu = 1/sigma, rate p < 1, at the
    current Arb precision: ``acb.integral`` (analyticity of log w checked on complex balls) on
    [-T, B] plus a tail enclosure :math:`[0, t]`. Since w is a convex combination of 1 and
    :math:`e^u`, :math:`u = \mu x - \mu^2/2`, we have :math:`1 - p \le w` and
    :math:`w \le \max(1, e^u)`. For s < 0 this gives :math:`w^s \le (1-p)^s` everywhere, so
    :math:`t = (1-p)^s(\bar\Phi(T) + \bar\Phi(B))`. For s > 0: left of -T <= mu/2 (u <= 0),
    :math:`w^s \le 1`; right of B >= mu/2, :math:`w^s \le e^{su}` and
    :math:`\int_B^\infty \varphi(x) e^{su}\,dx = e^{s(s-1)\mu^2/2}\bar\Phi(B - s\mu)`.
    E_Q[(p/q)^alpha] is the case s = 1 - alpha.

    Raises:
        ArithmeticError: if the quadrature does not return a finite real enclosure.
    """
    mu = 1 / arb(sigma)
    half = mu * mu / 2
    p = arb(rate)
    c = 1 / (2 * arb.pi()).sqrt()
    shift = -(-p).log1p()  # -log(1 - p) >= 0
    sf_, muf = float(s.mid()), 1.0 / sigma
    grow = max(0.0, -sf_ * float(shift.upper()), sf_ * (sf_ - 1.0) * muf * muf / 2.0)
    t = math.ceil(math.sqrt(2.0 * (ctx.prec * math.log(2.0) + grow + 20.0)))
    lo, hi = arb(-t), arb(math.ceil(max(1.0, sf_) * muf) + t)

    def f(z: acb, analytic: bool) -> acb:
        w = 1 - p + p * (mu * z - half).exp()
        return (-z * z / 2).exp() * c * (s * w.log(analytic=analytic)).exp()

    val = acb.integral(f, lo, hi)
    if not val.is_finite() or not val.imag.contains(0):
        raise ArithmeticError("acb.integral did not return a finite real enclosure")
    if s < 0:
        tail = (-s * shift).exp() * (_sf(-lo) + _sf(hi))
    elif s >= 0:
        tail = _sf(-lo) + (s * (s - 1) * half).exp() * _sf(hi - s * mu)
    else:
        raise ArithmeticError("the sign of the exponent s is undecided")
    return val.real + arb(0).union(arb(tail.upper()))


def _sg_cgf(sigma: float, rate: float, direction: str) -> _StepCGF:
    """log E_P[w^alpha] (P||Q) or log E_Q[(p/q)^alpha] = log E_P[w^(1-alpha)] (Q||P)."""
    forward = direction == DIRECTION_PQ

    def expo(a):
        return a if forward else 1 - a

    def fl(a: float) -> float:
        logw, L = _sg_grid(1.0 / sigma, rate)
        t = logw + expo(a) * L
        m = float(t.max())
        return m + math.log(float(np.exp(t - m).sum()))

    def cert(a: arb) -> arb:
        k = round(float(a.mid()))
        if forward and a == k and 2 <= k <= _INT_ORDER_MAX:
            return _sg_exact_sum(sigma, rate, k).log()
        return sg_power_moment(sigma, rate, expo(a)).log()

    if forward:
        note = ("subsampled Gaussian (P||Q): E_P[(q/p)^k] = sum_j C(k,j)(1-p)^(k-j) p^j "
                "e^(j(j-1)mu^2/2) at integer k (Mironov, Talwar, Zhang 2019), else certified "
                "quadrature of E_P[w^alpha]; mu = 1/sigma exactly")
    else:
        note = ("subsampled Gaussian (Q||P): E_Q[(p/q)^alpha] = E_P[w^(1-alpha)] by certified "
                "quadrature; mu = 1/sigma exactly")
    return _StepCGF(fl, cert, False, note + _QUAD_NOTE)


_QUAD_NOTE = (
    " (quadrature: flint.acb.integral on [-T, B], analyticity verified; tails bounded with "
    "1 - p <= w <= max(1, e^(mu x - mu^2/2)))"
)


def _step_cgf(mech: Mechanism, direction: str) -> _StepCGF:
    """Lambda_i for one mechanism and pair order; ValueError when no certified form exists."""
    if isinstance(mech, Gaussian):
        sens, sig = mech.sensitivity, mech.sigma
        return _gaussian_cgf(lambda: (arb(sens) / arb(sig)) ** 2, mech.mu ** 2,
                             "Gaussian: Lambda(alpha) = alpha(alpha-1)mu^2/2, mu = "
                             "sensitivity/sigma exactly")
    if isinstance(mech, RandomizedResponse | ApproxDP):
        if mech.eps == 0.0:
            return _StepCGF(lambda a: 0.0, lambda a: arb(0), False,
                            "ApproxDP(0, delta): no pure part (Lambda = 0)")
        return _two_point_cgf(mech.eps, "(eps0, 0)-DP step modelled by randomized response "
                              "(KOV Thm 3.3): two-point Lambda")
    if isinstance(mech, Laplace):
        return _laplace_cgf(mech.sensitivity, mech.scale)
    if isinstance(mech, PoissonSubsampledGaussian):
        if mech.rate == 1.0:
            sig = mech.sigma
            return _gaussian_cgf(lambda: 1 / arb(sig) ** 2, mech.mu ** 2,
                                 "subsampled Gaussian at rate 1 is the Gaussian mechanism")
        return _sg_cgf(mech.sigma, mech.rate, direction)
    raise ValueError(
        f"chernoff: no certified cumulant generating function for {type(mech).__name__} "
        "(built-in Gaussian, Laplace, randomized response, ApproxDP and subsampled Gaussian only)"
    )


# ---------------------------------------------------------------------------------------------
# the composed objective and the choice of alpha


@dataclass(frozen=True)
class _Direction:
    direction: str
    steps: tuple[tuple[_StepCGF, int], ...]

    @property
    def integer_only(self) -> bool:
        return any(s.integer_only for s, _ in self.steps)

    def lam_float(self, alpha: float) -> float:
        return sum(c * s.floating(alpha) for s, c in self.steps)

    def lam_arb(self, alpha: arb) -> arb:
        total = arb(0)
        for s, c in self.steps:
            total += arb(c) * s.certified(alpha)
        return total


def _log_c(lam: float) -> float:
    """log c(lambda) = lambda log(lambda/(1+lambda)) - log(1+lambda)."""
    return -lam * math.log1p(1.0 / lam) - math.log1p(lam)


def _log_c_arb(lam: arb) -> arb:
    return -lam * (1 / lam).log1p() - lam.log1p()


def _safe(fn: Callable[[float], float]) -> Callable[[float], float]:
    def g(x: float) -> float:
        try:
            v = fn(x)
        except (OverflowError, ValueError, ZeroDivisionError):
            return math.inf
        return v if math.isfinite(v) else math.inf

    return g


def _short_dyadic(x: float) -> float:
    """x rounded to _SIG_BITS significant bits (an exact, short binary number)."""
    m, e = math.frexp(x)
    return math.ldexp(round(m * (1 << _SIG_BITS)), e - _SIG_BITS)


def _argmin_real(obj: Callable[[float], float]) -> float:
    """Golden section on t = log(lambda) over [log LAMBDA_MIN, log LAMBDA_MAX] (unimodal)."""
    f = _safe(lambda t: obj(math.exp(t)))
    a, b = math.log(_LAMBDA_MIN), math.log(LAMBDA_MAX)
    g = (math.sqrt(5.0) - 1.0) / 2.0
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(80):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    lam = _short_dyadic(math.exp((a + b) / 2.0))
    return min(max(lam, _LAMBDA_MIN), LAMBDA_MAX)


def _argmin_int(obj: Callable[[float], float]) -> float:
    """Smallest integer lambda >= 1 with obj(lambda + 1) >= obj(lambda) (convex sequence)."""
    f = _safe(obj)
    lo, hi = 1, min(int(LAMBDA_MAX), _INT_ORDER_MAX - 1)
    while lo < hi:
        mid = (lo + hi) // 2
        if not f(mid + 1) < f(mid):
            hi = mid
        else:
            lo = mid + 1
    return float(lo)


def _choose(d: _Direction, objective: Callable[[float], float]) -> float:
    """A (near-)optimal lambda = alpha - 1 for ``objective(lambda)`` (float, not certified)."""
    return _argmin_int(objective) if d.integer_only else _argmin_real(objective)


def _directions(comp: Composition) -> list[_Direction]:
    return [_Direction(dr, tuple((_step_cgf(m, dr), c) for m, c in comp.terms))
            for dr in comp.directions]


def log_mgf(composition: Any, alpha: float, direction: str = DIRECTION_PQ) -> arb:
    r"""Certified :math:`\Lambda(\alpha) = \log E_P[(q/p)^\alpha]` of a composition.

    For ``direction="Q||P"`` this is :math:`\log E_Q[(p/q)^\alpha]` (the swapped pair).

    Args:
        composition: Anything :func:`numeric.composition.compose` accepts.
        alpha: Order > 1 (float, taken exactly). Subsampled Gaussian steps in the (P, Q) order use
            the exact binomial sum at integer orders up to 20000, certified quadrature otherwise.
        direction: ``"P||Q"`` or ``"Q||P"``.

    Returns:
        An Arb ball at the current precision.

    Raises:
        ValueError: on a bad order or direction, or a mechanism without a certified form.
    """
    comp = compose(composition)
    if direction not in (DIRECTION_PQ, DIRECTION_QP):
        raise ValueError(f"direction must be {DIRECTION_PQ!r} or {DIRECTION_QP!r}")
    a = float(alpha)
    if not (math.isfinite(a) and a > 1.0):
        raise ValueError(f"alpha must be a finite number > 1, got {alpha!r}")
    d = _Direction(direction, tuple((_step_cgf(m, direction), c) for m, c in comp.terms))
    return d.lam_arb(arb(a))


# ---------------------------------------------------------------------------------------------
# public API


def _delta_part(comp: Composition) -> arb:
    """1 - prod (1 - delta_i)^{m_i} (GDP Eq. 12) in Arb."""
    s = arb(0)
    for mech, count in comp.terms:
        if mech.delta_part > 0:
            s += arb(count) * (-arb(mech.delta_part)).log1p()
    return -s.expm1()


def _alpha_text(lam: float) -> str:
    a = lam + 1.0
    return str(int(a)) if a == int(a) else repr(a)


def _assumptions(dirs: list[_Direction], comp: Composition) -> tuple[str, ...]:
    out = [_A_CONVERSION]
    out += [s.note for d in dirs for s, _ in d.steps]
    if comp.delta_part > 0:
        out.append(_A_DELTA)
    if not comp.symmetric:
        out.append("asymmetric pair: both orders bounded, the larger bound reported")
    return tuple(dict.fromkeys(out))


def _run(per_direction: Callable[[], dict[str, arb]]) -> tuple[dict[str, arb], int]:
    """Evaluate every direction's ball at doubling precision until each has 40 relative bits.

    Any enclosure is valid; precision only tightens it. At the cap the last result is used.
    """
    prec = DEFAULT_PRECISION
    while True:
        with workprec(prec):
            per = per_direction()
        ok = all(v.is_finite() and (v.is_zero() or v.rel_accuracy_bits() >= 40)
                 for v in per.values())
        if ok or prec >= _PREC_CAP:
            if not all(v.is_finite() for v in per.values()):
                raise ArithmeticError("the Chernoff bound has no finite enclosure")
            return per, prec
        prec *= 2


def chernoff_delta_bound(composition: Any, eps: Any) -> Bound:
    r"""Certified Chernoff (Renyi) upper bound on delta(eps), max over pair orders.

    :math:`\delta(\varepsilon) \le \min_{\alpha>1} e^{\Lambda(\alpha) - (\alpha-1)\varepsilon}
    \alpha^{-1}(1 - 1/\alpha)^{\alpha-1}` (module docstring), with alpha chosen in floating point
    and the bound evaluated in Arb at that exact alpha; delta parts by GDP Eq. 13.

    Args:
        composition: A :class:`~numeric.composition.Composition` or anything ``compose`` takes.
        eps: eps >= 0 (float taken exactly, int, decimal string or Arb ball).

    Returns:
        A ``Bound`` with ``lower = 0`` (method ``"trivial"``), ``upper`` the bound clipped at 1
        (method ``"chernoff[alpha=...]"``) and ``direction`` the pair order that gave it.

    Raises:
        ValueError: on a negative or non-finite eps, or a mechanism without a certified CGF.
    """
    comp = compose(composition)
    e = to_arb("eps", eps)
    if e < 0:
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    ef = float(e.mid())
    dirs = _directions(comp)
    lams = {}
    for d in dirs:
        def obj(lam: float, d: _Direction = d) -> float:
            return d.lam_float(lam + 1.0) - lam * ef + _log_c(lam)

        lams[d.direction] = _choose(d, obj)

    def per_direction() -> dict[str, arb]:
        dp = _delta_part(comp)
        out = {}
        for d in dirs:
            lam = arb(lams[d.direction])
            b = (d.lam_arb(lam + 1) - lam * e + _log_c_arb(lam)).exp()
            out[d.direction] = b if dp.is_zero() else dp + (1 - dp) * b
        return out

    per, prec = _run(per_direction)
    with workprec(prec):  # endpoints at the working precision: keep every bit
        win = max(per, key=lambda k: per[k].upper())
        _, hi = endpoints(arb(per[win].upper()))
    if hi.to_mpf() > 1:
        hi = Endpoint(1, 0)
    method = f"chernoff[alpha={_alpha_text(lams[win])}]"
    warns = ("vacuous: the Chernoff bound is >= 1",) if hi.to_mpf() >= 1 else ()
    return Bound(
        "delta", Endpoint(0, 0), hi, "trivial", method, prec, _assumptions(dirs, comp), win,
        warns,
        {
            "eps": str(eps),
            "alpha": {k: lams[k] + 1.0 for k in lams},
            "per_direction": {k: float(v.mid()) for k, v in per.items()},
            "delta_part": comp.delta_part,
        },
    )


def chernoff_epsilon_bound(composition: Any, delta: Any) -> Bound:
    r"""Certified Chernoff (Renyi) upper bound on eps(delta), max over pair orders.

    :math:`\varepsilon(\delta) \le \max(0, \min_{\alpha>1} [\Lambda(\alpha) + \log c(\alpha-1)
    + \log(1/\tau)]/(\alpha-1))`, :math:`\log c(\lambda) = \lambda\log(\lambda/(1+\lambda)) -
    \log(1+\lambda)`, :math:`\tau = (\delta - d)/(1-d)` (module docstring). The lower end is the
    trivial 0: a Chernoff bound only bounds eps from above.

    Args:
        composition: A composition or anything ``compose`` accepts.
        delta: Target delta in (0, 1) (float taken exactly, decimal string or Arb ball).

    Returns:
        A ``Bound`` with ``quantity="epsilon"``, ``lower = 0`` (``"trivial"``) and ``upper`` from
        ``"chernoff[alpha=...]"``; +inf (``vacuous``) when delta does not exceed the composed
        delta part d.

    Raises:
        ValueError: on a delta outside (0, 1), or a mechanism without a certified CGF.
    """
    comp = compose(composition)
    target = to_arb("delta", delta)
    if not (target > 0 and target < 1):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    dirs = _directions(comp)
    with workprec(DEFAULT_PRECISION):
        dp = _delta_part(comp)
        tau = (target - dp) / (1 - dp)
        feasible = bool(tau > 0)
    inputs: dict[str, Any] = {"delta": str(delta), "delta_part": comp.delta_part}
    if not feasible:
        inf = Endpoint(inf=1)
        return Bound(
            "epsilon", Endpoint(0, 0), inf, "trivial", "chernoff", DEFAULT_PRECISION,
            _assumptions(dirs, comp), dirs[0].direction,
            (f"vacuous: delta = {delta} is not certified above the composed delta part "
             f"{comp.delta_part:.6g}; no finite epsilon",),
            inputs,
        )
    log_inv_tau = -math.log(float(tau.mid()))
    lams = {}
    for d in dirs:
        def obj(lam: float, d: _Direction = d) -> float:
            return (d.lam_float(lam + 1.0) + _log_c(lam) + log_inv_tau) / lam

        lams[d.direction] = _choose(d, obj)

    def per_direction() -> dict[str, arb]:
        dpa = _delta_part(comp)
        t = (target - dpa) / (1 - dpa)
        out = {}
        for d in dirs:
            lam = arb(lams[d.direction])
            out[d.direction] = (d.lam_arb(lam + 1) + _log_c_arb(lam) - t.log()) / lam
        return out

    per, prec = _run(per_direction)
    with workprec(prec):
        win = max(per, key=lambda k: per[k].upper())
        up = arb(per[win].upper())
        _, hi = endpoints(up)
    if hi.to_mpf() < 0:
        hi = Endpoint(0, 0)
    inputs.update({
        "alpha": {k: lams[k] + 1.0 for k in lams},
        "per_direction": {k: float(v.mid()) for k, v in per.items()},
    })
    method = f"chernoff[alpha={_alpha_text(lams[win])}]"
    return Bound("epsilon", Endpoint(0, 0), hi, "trivial", method, prec,
                 _assumptions(dirs, comp), win, (), inputs)
