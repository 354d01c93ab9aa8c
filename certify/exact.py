r"""Certified exact privacy profiles: Gaussian (GDP) and pure-DP (binomial / enumeration) families.

Every number here is an Arb ball (outward rounded, python-flint) or an exact rational; results
are :class:`~certify.bound.Bound` enclosures of the *exact* answer, never of a float
approximation of it.

* **Gaussian** (``exact-gdp``): m_i copies of :math:`\mu_i`-GDP compose to :math:`\mu^2 =
  \sum_i m_i\mu_i^2` (Dong, Roth, Su, *Gaussian Differential Privacy*, arXiv:1905.02383 = GDP,
  Cor. 3.3), whose profile :math:`\delta_\mu(\varepsilon)` is GDP Cor. 2.13.
* **Homogeneous pure DP** (``exact-binomial``): n (eps0, 0)-DP steps are dominated by randomized
  response, a binomial lattice (Kairouz, Oh, Viswanath, ICML 2015 = KOV, Thm 3.3). Up to
  :data:`MAX_BINOMIAL_STEPS` steps every term is summed; above, a window of terms is summed and
  the rest bounded rigorously (:mod:`certify.exact_binomial`, n up to
  :data:`~certify.exact_binomial.MAX_WINDOWED_STEPS`).
* **Heterogeneous pure DP** (``exact-enumeration``): exact enumeration of the outcome classes
  (exact composition is #P-hard in general: Murtagh, Vadhan, TCC 2016), up to
  :data:`MAX_OUTCOME_CLASSES` classes.
* **Delta parts** of (eps, delta)-DP steps compose exactly (GDP Eq. 11-13).

The formulas, their evaluation and the certified inversion are documented and implemented in
:mod:`certify.exact_profiles`; the exact inputs (:class:`RationalExp`, :class:`ArbReal`,
:class:`ExactComposition`) in :mod:`certify.exact_model`. A ``numeric`` composition is turned
into an :class:`ExactComposition` by each mechanism's ``exact_profile`` capability
(:mod:`certify.registry`; built-ins in :mod:`certify.mechanisms`): Gaussian, randomized response,
ApproxDP and the subsampled Gaussian at rate 1. Any other mechanism, or a mix of Gaussian and
pure-DP steps, raises :class:`numeric.errors.NotApplicable`.

Inputs are exact reals: a binary64 float means its exact dyadic value, ``int``/``Fraction``/decimal
``str`` are exact rationals, :class:`RationalExp` is :math:`\log t` for rational ``t`` and
:class:`ArbReal` is any real given by a function that encloses it at the current Arb precision.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any

from flint import arb

from numeric.errors import NotApplicable

from . import mechanisms as _builtin_mechanisms  # noqa: F401  (registers the built-ins)
from .bound import Bound
from .engine import DEFAULT_PRECISION, Endpoint, UndecidableError, adaptive, endpoints, workprec
from .exact_binomial import pure_profile
from .exact_model import (
    ArbReal,
    ExactComposition,
    ExactReal,
    RationalExp,
    RealLike,
    arb_q,
    as_ball,
    as_real,
    certainly_lt,
    gaussian_dp,
    is_short,
    pure_dp,
)
from .exact_profiles import (
    MAX_BINOMIAL_STEPS,
    MAX_OUTCOME_CLASSES,
    DeltaPart,
    GaussianProfile,
    PureProfile,
    combine_delta,
)
from .registry import capability

__all__ = [
    "MAX_BINOMIAL_STEPS",
    "MAX_OUTCOME_CLASSES",
    "ArbReal",
    "ExactComposition",
    "RationalExp",
    "RealLike",
    "exact_composition",
    "exact_delta_bound",
    "exact_delta_rational",
    "exact_epsilon_bound",
    "gaussian_dp",
    "pure_dp",
]

_MAX_EXACT_CHARS = 2000  # longer exact rationals: use exact_delta_rational
_DEFAULT_REL_WIDTH = 1e-30


def exact_composition(composition: object) -> ExactComposition:
    """The exact model of a composition, refusing compositions without an exact answer.

    Accepts an :class:`ExactComposition` (returned as is) or anything
    :func:`numeric.composition.compose` accepts; each term's model comes from its mechanism's
    ``exact_profile`` capability (e.g. Gaussian steps give mu = sensitivity / sigma taken exactly
    from the binary64 inputs, not the rounded float quotient; randomized response and
    ``ApproxDP(eps, delta)`` give pure (eps, 0) steps and delta parts, GDP Eq. 11).

    Raises:
        NotApplicable: naming the mechanism or mix that has no exact answer (e.g. the Poisson-
            subsampled Gaussian, Laplace, Gaussian mixed with pure DP).
    """
    if isinstance(composition, ExactComposition):
        return composition
    from numeric.composition import compose

    comp = compose(composition)
    parts = [capability(mech, "exact_profile")(mech, count) for mech, count in comp.terms]
    return ExactComposition(
        tuple(t for p in parts for t in p.gaussian),
        tuple(t for p in parts for t in p.pure),
        tuple(t for p in parts for t in p.delta_parts),
        tuple(n for p in parts for n in p.notes),
    )


def _rel_bits(rel_width: float) -> int:
    if not (isinstance(rel_width, numbers.Real) and 0 < float(rel_width) < 1):
        raise ValueError(f"rel_width must lie in (0, 1), got {rel_width!r}")
    return max(8, math.ceil(-math.log2(float(rel_width))) + 1)


def _profile(comp: ExactComposition) -> GaussianProfile | PureProfile:
    if comp.gaussian:
        return GaussianProfile(comp.gaussian)
    return pure_profile(comp.pure)


def _rational_result(
    prof: GaussianProfile | PureProfile, dpart: DeltaPart, eps: ExactReal
) -> Fraction | None:
    if not isinstance(prof, PureProfile) or dpart.exact is None:
        return None
    if not (prof.exact_ok and eps.exp_rational is not None):
        return None
    with workprec(DEFAULT_PRECISION):
        v = prof.delta_at(eps)
    return combine_delta(dpart.exact, v) if isinstance(v, Fraction) else None


def _check_eps(e: ExactReal) -> None:
    with workprec(DEFAULT_PRECISION):
        try:
            s = e.sign()
        except UndecidableError:
            s = 0  # a ball around 0: the profile formula is valid for any real eps
    if s < 0:
        raise ValueError(f"eps must be >= 0, got {e.label}")


def exact_delta_rational(composition: object, eps: RealLike) -> Fraction:
    r"""delta(eps) as an exact rational, for pure-DP compositions with rational e^{eps0}.

    Available when every eps0_i is a :class:`RationalExp` (``t_i`` rational), ``e^eps`` is
    rational (``eps`` a :class:`RationalExp` or 0) and the delta parts are rational: then
    :math:`\delta(\varepsilon) = \sum_{c:\,e^{s_c} > e^\varepsilon} Q_c (1 - e^\varepsilon /
    e^{s_c})` is a finite sum of rationals (KOV Thm 3.3; GDP Eq. 13).

    Raises:
        NotApplicable: if the answer is not an exact rational of this kind (or too large).
        ValueError: on bad input.
    """
    comp = exact_composition(composition)
    e = as_real(eps, "eps")
    _check_eps(e)
    prof = _profile(comp)
    val = _rational_result(prof, DeltaPart(comp.delta_parts), e)
    if val is None:
        raise NotApplicable(
            "delta is an exact rational only for pure-DP steps with eps0 = RationalExp(t) "
            "(within the size budget), eps = RationalExp(s) or 0, and rational delta parts"
        )
    return val


def exact_delta_bound(
    composition: object, eps: RealLike, *, rel_width: float = _DEFAULT_REL_WIDTH
) -> Bound:
    r"""Certified enclosure of the exact delta(eps) of a Gaussian or pure/ApproxDP composition.

    Gaussian steps: :math:`\delta_\mu(\varepsilon)` with :math:`\mu^2 = \sum m_i\mu_i^2`
    (GDP Cor. 2.13, Cor. 3.3). Pure-DP steps: the KOV binomial sum (Thm 3.3) for one eps0, exact
    enumeration for several (Murtagh-Vadhan 2016). Delta parts enter by GDP Eq. 13,
    :math:`d + (1-d)\delta(\varepsilon)`.

    Args:
        composition: An :class:`ExactComposition` or anything ``numeric.compose`` accepts.
        eps: eps >= 0 as an exact real (float = its exact binary value, int, Fraction, decimal
            ``str``, :class:`RationalExp`, :class:`ArbReal` or an ``arb`` ball).
        rel_width: Target relative width of the enclosure (the precision is raised until met;
            exact rational answers are returned to this width, with the exact value in
            ``inputs["exact_value"]`` when it has at most 2000 characters).

    Returns:
        A ``Bound`` with ``quantity="delta"`` and method ``exact-gdp``, ``exact-binomial`` or
        ``exact-enumeration``; ``vacuous`` if the upper end is >= 1.

    Raises:
        NotApplicable: for compositions without an exact answer (BudgetExceeded above the size
            limits :data:`~certify.exact_binomial.MAX_WINDOWED_STEPS`,
            :data:`MAX_OUTCOME_CLASSES`).
        ValueError: for invalid inputs.
        UndecidableError: if the support of a heterogeneous pure-DP composition cannot be
            ordered at the precision cap (equal eps_i given as distinct ``ArbReal`` objects). An
            eps that cannot be placed against a support point (e.g. exactly on an irrational
            one) is not an error: that term enters as Q_c (1 - e^{eps - s_c})_+ on the ball.
    """
    comp = exact_composition(composition)
    e = as_real(eps, "eps")
    _check_eps(e)
    bits = _rel_bits(rel_width)
    prof = _profile(comp)
    dpart = DeltaPart(comp.delta_parts)
    inputs: dict[str, Any] = {
        "eps": e.label,
        "composition": comp.describe(),
        "family": comp.family,
        "delta_part": dpart.label(),
    }
    start = max(DEFAULT_PRECISION, bits + 32)
    exact = _rational_result(prof, dpart, e)
    warnings: list[str] = []
    if exact is not None:
        if is_short(exact, _MAX_EXACT_CHARS):
            inputs["exact_value"] = str(exact)
        ball, prec = adaptive(lambda: arb_q(exact), rel_bits=bits, start=start)
    else:
        fixed = e.fixed or any(v.fixed for v, _ in comp.gaussian + comp.pure)
        state: dict[str, Any] = {"last": None}

        def compute() -> arb:
            return as_ball(combine_delta(dpart.value(), prof.delta_at(e)))

        def accept(x: arb) -> bool:
            if x.is_finite() and (x.is_zero() or x.rel_accuracy_bits() >= bits):
                return True
            acc = x.rel_accuracy_bits() if x.is_finite() else -(10**9)
            if fixed and state["last"] is not None and acc <= state["last"] + 4:
                warnings.append("accuracy limited by a fixed arb input ball")
                return True
            state["last"] = acc
            return False

        ball, prec = adaptive(compute, rel_bits=bits, start=start, accept=accept)
    with workprec(prec):  # endpoints() rounds lower()/upper() at the current precision
        lo, hi = endpoints(ball)
    # delta is a probability difference in [0, 1]: clip the exact ends
    if lo.to_mpf() < 0:
        lo = Endpoint(0, 0)
    if hi.to_mpf() > 1:
        hi = Endpoint(1, 0)
    return Bound(
        "delta", lo, hi, comp.method, comp.method, prec,
        assumptions=comp.assumptions(), warnings=tuple(warnings), inputs=inputs,
    )


def exact_epsilon_bound(
    composition: object, delta: RealLike, *, rel_width: float = _DEFAULT_REL_WIDTH
) -> Bound:
    r"""Certified enclosure of eps(delta) = inf{eps >= 0 : delta(eps) <= delta}, exact families.

    The returned ``[lo, hi]`` satisfies :math:`\delta(lo) > \delta` and
    :math:`\delta(hi) \le \delta` (non-increasing profile), with ``hi - lo <= rel_width * lo``.
    Pure DP: the active lattice segment is found by certified comparisons and inverted in closed
    form; Gaussian: certified bisection (Newton-accelerated). With delta parts the target is
    :math:`(\delta - d)/(1 - d)` (GDP Eq. 13); if :math:`\delta < d`, or :math:`\delta = d` for
    the Gaussian family, no finite eps exists and both ends are ``+inf`` (``vacuous``); for pure
    DP :math:`\delta = d` gives :math:`\varepsilon = \sum_i m_i\varepsilon_i`.

    Args:
        composition: An :class:`ExactComposition` or anything ``numeric.compose`` accepts.
        delta: Target delta in (0, 1) as an exact real (``"1e-3"`` or ``Fraction(1, 1000)`` is
            exactly 1/1000; the float ``1e-3`` is its binary value).
        rel_width: Target relative width ``(hi - lo) / lo``.

    Returns:
        A ``Bound`` with ``quantity="epsilon"``.

    Raises:
        NotApplicable: for compositions without an exact answer (BudgetExceeded above the size
            limits).
        ValueError: for a delta outside (0, 1) or other invalid input.
        UndecidableError: if a comparison cannot be settled at the precision cap (e.g. delta
            exactly at a kink of an irrational lattice).
    """
    comp = exact_composition(composition)
    dl = as_real(delta, "delta")
    with workprec(DEFAULT_PRECISION):
        b = dl.ball()
        if not (b > 0 and b < 1):
            raise ValueError(f"delta must lie in (0, 1), got {dl.label}")
    bits = _rel_bits(rel_width)
    prof = _profile(comp)
    dpart = DeltaPart(comp.delta_parts)
    inputs: dict[str, Any] = {
        "delta": dl.label,
        "composition": comp.describe(),
        "family": comp.family,
        "delta_part": dpart.label(),
    }
    state: dict[str, Any] = {"kind": "finite"}

    def compute() -> arb:
        d = dpart.value()
        dv: Fraction | arb = dl.rational if dl.rational is not None else dl.ball()
        if isinstance(d, Fraction) and isinstance(dv, Fraction):
            tau: Fraction | arb = (dv - d) / (1 - d)
        else:
            tau = (as_ball(dv) - as_ball(d)) / (1 - as_ball(d))
        tau_zero = (isinstance(tau, Fraction) and tau == 0) or (
            isinstance(tau, arb) and tau.is_zero()
        )
        if tau_zero:
            smax = prof.smax()
            if smax is None:
                state["kind"] = "infinite"
                return arb(0)
            state["kind"] = "smax"
            return as_ball(smax)
        if not certainly_lt(Fraction(0), tau):  # tau <= 0: infeasible
            state["kind"] = "infinite"
            return arb(0)
        if not certainly_lt(tau, prof.delta_at(ExactReal(0, "0"))):  # delta(0) <= tau
            state["kind"] = "zero"
            return arb(0)
        state["kind"] = "finite"
        return prof.invert(tau, rel_width)

    def accept(x: arb) -> bool:
        if state["kind"] != "finite":
            return True
        return x.is_finite() and x.rel_accuracy_bits() >= bits

    start = max(DEFAULT_PRECISION, bits + 40)
    ball, prec = adaptive(compute, rel_bits=bits, start=start, accept=accept)
    kw = {"assumptions": comp.assumptions(), "inputs": inputs}
    if state["kind"] == "infinite":
        inf = Endpoint(inf=1)
        return Bound(
            "epsilon", inf, inf, comp.method, comp.method, prec,
            warnings=(
                f"delta = {dl.label} is not above what the delta part d = {dpart.label()} "
                "allows: no finite epsilon",
            ),
            **kw,
        )
    if state["kind"] == "zero":
        ball = arb(0)
    with workprec(prec):  # endpoints() rounds at the current precision: stay at ``prec``
        lo, hi = endpoints(ball)
    if lo.to_mpf() < 0:  # eps(delta) >= 0 by definition
        lo = Endpoint(0, 0)
    return Bound("epsilon", lo, hi, comp.method, comp.method, prec, **kw)
