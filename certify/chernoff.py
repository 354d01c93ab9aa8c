r"""Certified Renyi / moment (Chernoff) upper bounds on delta(eps) and eps(delta).

**The bound.** Fix a pair order (P, Q) of the composed mechanism, with composed PLLR
:math:`S = \log(q/p)` (docs/math.md section 1). Then :math:`\delta(\varepsilon) = E_Q[(1 -
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

**Per-step Lambda_i** for the pair order (P, Q) come from each mechanism's ``chernoff``
capability (:mod:`certify.registry`; :class:`certify.cgf.StepCGF`), with their formulas and
sources in :mod:`certify.mechanisms` (Gaussian and two-point closed forms in
:mod:`certify.cgf`, Laplace, and the subsampled Gaussian by an exact finite sum at integer
orders or certified quadrature, :func:`sg_power_moment`). For the swapped order (Q, P) one needs
:math:`\log E_Q[(p/q)^\alpha] = \Lambda_i(1 - \alpha)`, which equals :math:`\Lambda_i(\alpha)`
for symmetric pairs (Y =d -X).

Both pair orders are bounded for asymmetric compositions and the larger bound is reported
(``direction`` says which). ApproxDP delta parts :math:`d = 1 - \prod_i(1-\delta_i)^{m_i}` (GDP
Eq. 12) enter as :math:`d + (1 - d)\delta(\varepsilon)` (GDP Eq. 13), increasing in both, and
for epsilon the target becomes :math:`\tau = (\delta - d)/(1 - d)`. Mechanisms without a
certified Lambda (e.g. ones compiled by ``derive``) make the method inapplicable
(:class:`numeric.errors.NotApplicable`), so :mod:`certify.combine` skips it. Inside a
:func:`certify.budget.time_budget` block the order search and the certified evaluation check the
deadline between steps.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flint import arb

from numeric.composition import Composition, compose
from numeric.mechanisms.base import DIRECTION_PQ, DIRECTION_QP

from . import mechanisms as _builtin_mechanisms  # noqa: F401  (registers the built-ins)
from .bound import Bound
from .budget import PRECISION_DOUBLING_FACTOR, check_deadline, require
from .cgf import INT_ORDER_MAX, StepCGF
from .engine import DEFAULT_PRECISION, Endpoint, endpoints, to_arb, workprec
from .mechanisms.subsampled_gaussian import sg_power_moment
from .pllr import composed_delta_part
from .registry import capability

__all__ = [
    "LAMBDA_MAX",
    "chernoff_delta_bound",
    "chernoff_epsilon_bound",
    "log_mgf",
    "sg_power_moment",
]

LAMBDA_MAX = 1e5
"""Largest order minus one (alpha - 1) searched; any alpha gives a valid bound."""

_LAMBDA_MIN = 1e-8
_GOLDEN_STEPS = 40
"""Golden-section steps of the order search: the bracket in log(alpha - 1) shrinks from 30.4 to
30.4 * 0.618^40 = 1.3e-7, far below the 2^-12 granularity (1.2e-4 .. 2.4e-4 in the log) to
which the order is then rounded (:data:`_SIG_BITS`). 80 steps (to 1e-15) bought nothing and cost
half the search: 1000 distinct noise levels evaluate 1000 float rules per step (measured
2026-12-03; the orders chosen on the comparison set were unchanged)."""
_PREC_CAP = 1 << 11
_SIG_BITS = 12  # alpha - 1 is rounded to this many significant bits (exact, short)

_A_CONVERSION = (
    "Chernoff/Renyi conversion: delta(eps) <= exp(Lambda(alpha) - (alpha-1) eps) / alpha * "
    "(1 - 1/alpha)^(alpha-1) for every alpha > 1, Lambda(alpha) = log E_P[(q/p)^alpha] summed "
    "over independent steps (Canonne, Kamath, Steinke 2020, Prop. 12; proof in the docstring)"
)
_A_DELTA = "ApproxDP delta parts compose exactly and enter as d + (1 - d) delta (GDP Eq. 12-13)"


def _step_cgf(mech: Any, direction: str) -> StepCGF:
    """Lambda_i for one mechanism and pair order (its ``chernoff`` capability).

    Raises:
        NotApplicable: when no certified form is registered ("no certified cumulant generating
            function").
    """
    return capability(mech, "chernoff")(mech, direction)


# ---------------------------------------------------------------------------------------------
# the composed objective and the choice of alpha


@dataclass(frozen=True)
class _Direction:
    direction: str
    steps: tuple[tuple[StepCGF, int], ...]

    @property
    def integer_only(self) -> bool:
        return any(s.integer_only for s, _ in self.steps)

    def lam_float(self, alpha: float) -> float:
        return sum(c * s.floating(alpha) for s, c in self.steps)

    def cost(self, alpha: float, prec: int) -> float:
        """Low estimate of the seconds of one ``lam_arb`` at ``prec`` bits (StepCGF.cost)."""
        per = sum(s.cost(alpha) for s, _ in self.steps if s.cost is not None)
        return per * max(1.0, prec / 53.0)

    def lam_arb(self, alpha: arb) -> arb:
        total = arb(0)
        for s, c in self.steps:
            check_deadline("in the Chernoff certified evaluation")
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
    fc = f(c)  # the first evaluation may build caches; the second one is timed
    start = time.perf_counter()
    fd = f(d)
    require(_GOLDEN_STEPS * (time.perf_counter() - start),
            f"the Chernoff order search ({_GOLDEN_STEPS} evaluations of the floating-point "
            f"objective)")
    for _ in range(_GOLDEN_STEPS):
        check_deadline("in the Chernoff order search")
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
    lo, hi = 1, min(int(LAMBDA_MAX), INT_ORDER_MAX - 1)
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
        NotApplicable: for a mechanism without a certified form.
        ValueError: on a bad order or direction.
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


def _require_first(dirs: list[_Direction], lams: dict[str, float]) -> None:
    """Refuse under a budget when the first certified evaluation (an Arb quadrature for the
    subsampled Gaussian, which cannot check the deadline while it runs) is estimated, from the
    steps' ``cost`` (a low estimate), to exceed the time left."""
    est = sum(d.cost(lams[d.direction] + 1.0, DEFAULT_PRECISION) for d in dirs)
    if est > 0.0:
        alphas = ", ".join(_alpha_text(lams[d.direction]) for d in dirs)
        require(est, f"the Chernoff certified evaluation at alpha = {alphas}")


def _run(per_direction: Callable[[], dict[str, arb]]) -> tuple[dict[str, arb], int]:
    """Evaluate every direction's ball at doubling precision until each has 40 relative bits.

    Any enclosure is valid; precision only tightens it. At the cap the last result is used.
    Under a time budget a doubling is refused up front (:func:`certify.budget.require`) when
    :data:`~certify.budget.PRECISION_DOUBLING_FACTOR` times the last evaluation's time exceeds
    the time left: the evaluation (an Arb quadrature for the subsampled Gaussian) grows 3-8x
    with each doubling, and part of it (Arb's quadrature nodes) cannot check the deadline.
    """
    prec = DEFAULT_PRECISION
    spent = 0.0
    while True:
        check_deadline("in the Chernoff certified evaluation")
        if prec > DEFAULT_PRECISION:
            require(PRECISION_DOUBLING_FACTOR * spent,
                    f"the Chernoff certified evaluation at {prec} bits")
        start = time.perf_counter()
        with workprec(prec):
            per = per_direction()
        spent = time.perf_counter() - start
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
        NotApplicable: for a mechanism without a certified CGF.
        ValueError: on a negative or non-finite eps.
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
        dp = composed_delta_part(comp)
        out = {}
        for d in dirs:
            lam = arb(lams[d.direction])
            b = (d.lam_arb(lam + 1) - lam * e + _log_c_arb(lam)).exp()
            out[d.direction] = b if dp.is_zero() else dp + (1 - dp) * b
        return out

    _require_first(dirs, lams)
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
        NotApplicable: for a mechanism without a certified CGF.
        ValueError: on a delta outside (0, 1).
    """
    comp = compose(composition)
    target = to_arb("delta", delta)
    if not (target > 0 and target < 1):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    dirs = _directions(comp)
    with workprec(DEFAULT_PRECISION):
        dp = composed_delta_part(comp)
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
        dpa = composed_delta_part(comp)
        t = (target - dpa) / (1 - dpa)
        out = {}
        for d in dirs:
            lam = arb(lams[d.direction])
            out[d.direction] = (d.lam_arb(lam + 1) + _log_c_arb(lam) - t.log()) / lam
        return out

    _require_first(dirs, lams)
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
