r"""The exact Edgeworth accountant interval (EEAI): certified delta(eps) and eps(delta) enclosures.

**Centre.** For one pair order, let S_Y be the composed PLLR under Q with summed cumulants
K_1, K_2, K_3, sigma = sqrt(K_2), lambda_3 = K_3 / K_2^{3/2}, z_0 = (eps - K_1)/sigma and
a = z_0 + sigma. The first-order Edgeworth expansion of its CDF is
:math:`G_1(s) = \Phi(z) - \varphi(z)\,\tfrac{\lambda_3}{6} He_2(z)` (Hall 1992, Section 2.2;
Wang, Gao, Zhang, Shen, Su, *Analytical Composition of Differential Privacy via the Edgeworth
Accountant*, arXiv:2206.04236). Its **Q-only** delta (docs/math.md section 3),
:math:`\delta_{G_1}(\varepsilon) = \int_\varepsilon^\infty e^{\varepsilon - s}(1 - G_1(s))\,ds`,
has the closed form of :mod:`numeric.edgeworth` with c_3 = lambda_3/6, where the k = 3 term
simplifies (Appell identity for He_3(w - sigma), then a^2 = z_0^2 + 2 sigma z_0 + sigma^2) to

.. math::

    \delta_{G_1} = \bar\Phi(z_0) - W
        + \frac{\lambda_3}{6}\,\sigma\Bigl[\varphi(z_0)(z_0 - \sigma) + \sigma^2 W\Bigr],
    \qquad W = e^{\sigma z_0 + \sigma^2/2}\,\bar\Phi(a),

evaluated in Arb with :math:`\bar\Phi(x) = \operatorname{erfc}(x/\sqrt2)/2` (no overflow: Arb
exponents are unbounded).

**Radius.** The true delta is :math:`E_Q[(1 - e^{\varepsilon - S_Y})_+] = \int_\varepsilon^\infty
e^{\varepsilon - s}(1 - F_Y(s))\,ds` (change of measure dP = e^{-S} dQ), so
:math:`\sup_s |F_Y(s) - G_1(s)| \le D` gives :math:`|\delta - \delta_{G_1}| \le
D\int_\varepsilon^\infty e^{\varepsilon - s}\,ds = D` -- the Y-side bound alone, without EA's
:math:`D_Y + e^\varepsilon D_X`. D is the smallest *certified* candidate among
``exact-normal`` (D = 0 when every term has a normal PLLR), ``berry-esseen`` (Shevtsova's
constants plus the first-order correction), ``dgg`` and ``dgg-cf`` (Derumigny, Girard,
Guyonvarch, arXiv:2101.05780), all built from the certified moments of :mod:`certify.moments`;
the candidates, their constants and sources are in :mod:`certify.eeai_bounds` (the DGG formulas
in :mod:`certify.dgg`).

**Interval.** delta in [max(0, delta_G1 - D), min(1, delta_G1 + D)] for each pair order; an
asymmetric pair takes the max over both orders (the interval of a max is [max of lowers, max of
uppers]); ApproxDP delta parts d compose exactly, 1 - prod(1 - delta_i)^{m_i} (GDP Eq. 12), and
enter as d + (1 - d) delta_pure (GDP Eq. 13), increasing in both, so the ends map to ends.

**Inversion.** eps(delta) = inf{eps >= 0 : delta(eps) <= delta}. Neither delta_G1 + D nor
delta_G1 - D need be monotone, but the true delta(eps) is non-increasing, so

* any eps_u with certified upper(eps_u) <= delta has delta(eps_u) <= delta, hence
  eps(delta) <= eps_u; we bisect for a small such point (the smallest if upper is monotone);
* any eps_l with certified lower(eps_l) > delta has delta(eps') >= delta(eps_l) > delta for every
  eps' <= eps_l, hence eps(delta) >= eps_l; we bisect for a large such point.

Both ends are exact dyadic numbers at which the comparison was decided in outward-rounded
arithmetic, so [eps_l, eps_u] is valid whatever the shape of the envelopes. If no finite eps_u
exists (e.g. D is not below delta, as for DP-SGD at delta = 1e-5), the upper end is +inf and the
result is ``vacuous`` with an explicit warning.

The end points are found by the shared certified search of :mod:`certify.search`. Inside a
:func:`certify.budget.time_budget` block the per-step moments and the search check the deadline.
A mechanism without certified moments makes the method inapplicable
(:class:`numeric.errors.NotApplicable`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from flint import arb, ctx

from numeric.composition import Composition, compose

from .bound import Bound
from .budget import PRECISION_DOUBLING_FACTOR, require
from .dgg import dgg_continuity_bound_iid, dgg_moment_bound
from .eeai_bounds import (
    METHODS,
    SummedMoments,
    UniformBound,
    berry_esseen_bound,
    characteristic_kappa,
    summed_moments,
    uniform_bound,
)
from .engine import (
    DEFAULT_PRECISION,
    MAX_PRECISION,
    Endpoint,
    UndecidableError,
    adaptive,
    certainly_less,
    endpoints,
    to_arb,
    workprec,
)
from .pllr import composed_delta_part
from .search import bisect, expand

__all__ = [
    "METHODS",
    "SummedMoments",
    "UniformBound",
    "berry_esseen_bound",
    "characteristic_kappa",
    "delta_interval",
    "dgg_continuity_bound_iid",
    "dgg_moment_bound",
    "epsilon_interval",
    "first_order_q_delta",
    "summed_moments",
    "uniform_bound",
]

_EPS_CAP = 2.0**20
_LARGE_D = 0.05
_INVERSION = (
    "eps(delta) = inf{eps >= 0: delta(eps) <= delta}; delta(eps) is non-increasing, so a "
    "certified lower delta(eps_l) > delta gives eps >= eps_l and a certified upper "
    "delta(eps_u) <= delta gives eps <= eps_u"
)



# ------------------------------------------------------------------------------------------------
# the first-order Q-only Edgeworth delta


def _erfc(x: arb) -> arb:
    """erfc on a ball via its exact endpoints (erfc is decreasing).

    Arb's erfc of an inexact ball far in the tail loses all relative accuracy (e.g. near
    x = 2e7 it returns a ball around 0); evaluating at the exact ends and taking the hull is
    rigorous by monotonicity and keeps full relative accuracy.
    """
    if x.is_exact() or not x.is_finite():
        return x.erfc()
    return arb(x.upper()).erfc().union(arb(x.lower()).erfc())


def first_order_q_delta(k1: arb, k2: arb, k3: arb, eps: arb) -> arb:
    r"""Enclosure of the Q-only delta of the first-order Edgeworth expansion (module docstring).

    Args:
        k1, k2, k3: Summed cumulants of S_Y (k2 > 0).
        eps: The eps at which delta is evaluated.

    Returns:
        :math:`\bar\Phi(z_0) - W + (\lambda_3/6)\sigma[\varphi(z_0)(z_0 - \sigma) + \sigma^2 W]`.
    """
    sigma = k2.sqrt()
    z0 = (eps - k1) / sigma
    a = z0 + sigma
    r2 = arb(2).sqrt()
    sf = _erfc(z0 / r2) / 2
    phi = (-z0 * z0 / 2).exp() / (2 * arb.pi()).sqrt()
    w = (sigma * z0 + sigma * sigma / 2).exp() * _erfc(a / r2) / 2
    lam = k3 / (k2 * sigma)
    return sf - w + lam / 6 * sigma * (phi * (z0 - sigma) + sigma * sigma * w)


# ------------------------------------------------------------------------------------------------
# per-direction profile


@dataclass(frozen=True)
class _Profile:
    direction: str
    sums: SummedMoments
    bound: UniformBound

    def centre(self, eps: arb) -> arb:
        s = self.sums
        return first_order_q_delta(s.k1, s.k2, s.k3, eps)

    def pure(self, eps: arb) -> tuple[arb, arb]:
        """Exact ends [lo, hi] of the pure-part enclosure, clipped to [0, 1]."""
        if self.sums.trivial:
            return arb(0), arb(0)
        c = self.centre(eps)
        d = self.bound.value
        lo = (c - d).lower() if c.is_finite() else arb(0)
        hi = (c + d).upper() if c.is_finite() else arb(1)
        lo = lo if lo > 0 else arb(0)
        hi = hi if hi < 1 else arb(1)
        if not lo <= hi:  # cannot happen for a valid enclosure of a number in [0, 1]
            raise ArithmeticError(f"empty delta enclosure [{lo}, {hi}]")
        return lo, hi


def _total(d: arb, lo: arb, hi: arb) -> tuple[arb, arb]:
    """Ends of d + (1 - d) [lo, hi] (GDP Eq. 13), increasing in d and in the pure delta."""
    if d.is_zero():
        return lo, hi
    lo_t = (d + (1 - d) * lo).lower()
    hi_t = (d + (1 - d) * hi).upper()
    return (lo_t if lo_t > 0 else arb(0)), (hi_t if hi_t < 1 else arb(1))


def _profiles(comp: Composition, methods: tuple[str, ...]) -> list[_Profile]:
    out = []
    for direction in comp.directions:
        s = summed_moments(comp, direction)
        if s.trivial:
            b = UniformBound(arb(0), "exact-normal", ("the PLLR sum is the point mass 0",), {})
        else:
            b = uniform_bound(s, methods)
        out.append(_Profile(direction, s, b))
    return out


def _accurate(profiles: list[_Profile]) -> bool:
    """The moment balls are tight enough that rounding is negligible next to D."""
    for p in profiles:
        s = p.sums
        if s.trivial:
            continue
        for x in (s.k1, s.k2, s.k3, s.abs3, s.mu4):
            if not x.is_finite():
                return False
        if not s.k2 > 0:
            return False
        if s.k2.rel_accuracy_bits() < 40 or s.k1.rad() > s.k2.sqrt().mid() * arb(2) ** -40:
            return False
    return True


def _setup(comp: Composition, methods: tuple[str, ...], prec: int | None):
    """Profiles and delta part at the first precision where the moments are accurate.

    Under a time budget a precision doubling is refused up front (:func:`certify.budget.require`)
    when :data:`~certify.budget.PRECISION_DOUBLING_FACTOR` times the last pass's time exceeds
    the time left: the per-step moments are Arb quadratures whose cost grows 3-8x with each
    doubling (no number changes).
    """
    holder: dict[str, object] = {}
    spent: list[float] = []

    def compute() -> arb:
        if spent:
            require(PRECISION_DOUBLING_FACTOR * spent[-1],
                    f"the EEAI per-step moments at {ctx.prec} bits")
        start = time.perf_counter()
        profiles = _profiles(comp, methods)
        holder["profiles"] = profiles
        holder["ok"] = _accurate(profiles)
        out = composed_delta_part(comp)
        spent.append(time.perf_counter() - start)
        return out

    d, bits = adaptive(compute, start=prec or DEFAULT_PRECISION, cap=MAX_PRECISION,
                       accept=lambda x: bool(holder.get("ok")) and x.is_finite())
    return holder["profiles"], d, bits


def _methods(methods) -> tuple[str, ...]:
    if methods is None:
        return METHODS
    out = tuple(methods)
    unknown = set(out) - set(METHODS)
    if unknown:
        raise ValueError(f"unknown uniform-bound method(s) {sorted(unknown)}; use {METHODS}")
    return out


def _common_assumptions(profiles: list[_Profile]) -> tuple[str, ...]:
    out: dict[str, None] = {
        "EEAI: delta = E_Q[(1 - e^(eps - S_Y))_+] = int_eps^inf e^(eps-s)(1 - F_Y(s)) ds "
        "(change of measure), so sup|F_Y - G_1| <= D gives |delta - delta_G1| <= D around the "
        "Q-only first-order Edgeworth delta (docs/math.md section 3)": None,
    }
    for p in profiles:
        for a in p.bound.assumptions:
            out[f"{p.direction}: {a}" if len(profiles) > 1 else a] = None
        for a in p.sums.provenance + p.sums.assumptions:
            out[f"moments: {a}"] = None
    return tuple(out)


def _warnings(comp: Composition, profiles: list[_Profile]) -> list[str]:
    w = []
    for p in profiles:
        d = float(p.bound.value.mid()) if p.bound.value.is_finite() else math.inf
        if d >= _LARGE_D:
            w.append(
                f"{p.direction}: the certified uniform error D = {d:.3g} ({p.bound.method}) is "
                "large; the Berry-Esseen/DGG rate is m^-1/2, so the interval is wide or vacuous"
            )
    if comp.lattice:
        w.append("the PLLR has atoms (lattice law): the Edgeworth centre is crude, but the "
                 "moment-only bounds stay valid")
    return w


def _pick_direction(per: dict[str, tuple[arb, arb]]) -> str:
    best = None
    for k, (_, hi) in per.items():
        if best is None or hi > per[best][1]:
            best = k
    return best


# ------------------------------------------------------------------------------------------------
# public API


def delta_interval(composition, eps, *, methods=None, prec: int | None = None) -> Bound:
    """Certified EEAI enclosure of delta(eps) for a composition (max over pair orders).

    Args:
        composition: A :class:`~numeric.composition.Composition` or anything ``compose`` takes.
        eps: eps >= 0 (float, int, decimal string or Arb ball).
        methods: Uniform-bound methods to consider (default: all of :data:`METHODS`).
        prec: Starting Arb precision in bits (raised automatically).

    Returns:
        A :class:`~certify.bound.Bound` with quantity ``"delta"``; ``vacuous`` when its upper end
        is 1. ``assumptions`` record the bound, its constants and the i.i.d. assumption.

    Raises:
        NotApplicable: if a mechanism has no certified moments.
        ValueError: on a negative eps or unknown methods.
    """
    comp = compose(composition)
    methods = _methods(methods)
    e = to_arb("eps", eps)
    if e < 0:
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    profiles, d, bits = _setup(comp, methods, prec)
    with workprec(bits):
        per = {p.direction: _total(d, *p.pure(e)) for p in profiles}
    lo, hi = next(iter(per.values()))
    for v in per.values():  # exact comparisons of exact endpoints
        lo = v[0] if v[0] > lo else lo
        hi = v[1] if v[1] > hi else hi
    direction = _pick_direction(per)
    prof = {p.direction: p for p in profiles}[direction]
    warns = _warnings(comp, profiles)
    if hi >= 1:
        warns.append("vacuous: the certified upper end of delta is 1")
    elif lo.is_zero() and not hi.is_zero():
        warns.append("the lower end is 0: the uniform error D exceeds the Edgeworth delta here")
    with workprec(bits):  # Arb rounds endpoints to the working precision: keep every bit
        (lo_e, _), (_, hi_e) = endpoints(lo), endpoints(hi)
        eps_text = endpoints(e)[0].decimal() if e.is_exact() else str(e)
    method = f"eeai[{prof.bound.method}]"
    return Bound(
        "delta", lo_e, hi_e, method, method, bits, _common_assumptions(profiles), direction,
        tuple(warns),
        {
            "eps": eps_text,
            "uniform_error": {p.direction: float(p.bound.value.mid()) for p in profiles},
            "uniform_error_candidates": {p.direction: p.bound.candidates for p in profiles},
            "delta_part": float(d.mid()),
            "per_direction": {k: [float(a.mid()), float(b.mid())] for k, (a, b) in per.items()},
        },
    )


def _certified(fn) -> bool:
    try:
        return fn()
    except UndecidableError:
        return False


def _eps_ends(p: _Profile, d: arb, target: arb, rel_tol: float,
              abs_tol: float) -> tuple[float, float]:
    """(eps_lower, eps_upper) for one pair order (floats; eps_upper may be inf)."""

    def upper_ok(x: float) -> bool:  # certified: upper delta(x) <= target
        hi = _total(d, *p.pure(arb(x)))[1]
        return _certified(lambda: not certainly_less(target, hi))

    def lower_ok(x: float) -> bool:  # certified: lower delta(x) > target
        lo = _total(d, *p.pure(arb(x)))[0]
        return _certified(lambda: certainly_less(target, lo))

    s = p.sums
    scale = 1.0 if s.trivial else max(
        1.0, abs(float(s.k1.mid())) + 10.0 * math.sqrt(float(s.k2.mid())))
    cap = _EPS_CAP * scale  # far beyond K1 + 40 sigma, where delta_G1 is below 1e-300
    # upper end: a small certified eps_u (expand to a bracket, then bisect from 0)
    if upper_ok(0.0):
        eps_u = 0.0
    else:
        _, hi = expand(upper_ok, 0.0, scale, limit=cap)
        eps_u = math.inf if hi is None else bisect(
            upper_ok, 0.0, hi, rel_tol=rel_tol, abs_tol=abs_tol)[1]
    # lower end: a large certified eps_l below the first point where lower_ok fails

    def lower_fails(x: float) -> bool:
        return not lower_ok(x)

    if not lower_ok(0.0):
        eps_l = 0.0
    else:
        last, hi = (None, eps_u) if math.isfinite(eps_u) else expand(
            lower_fails, 0.0, scale, limit=cap)
        eps_l = last if hi is None else bisect(
            lower_fails, 0.0, hi, rel_tol=rel_tol, abs_tol=abs_tol)[0]
    return eps_l, eps_u


def epsilon_interval(
    composition,
    delta,
    *,
    methods=None,
    prec: int | None = None,
    rel_tol: float = 1e-10,
    abs_tol: float = 1e-12,
) -> Bound:
    """Certified EEAI enclosure of eps(delta) = inf{eps >= 0 : delta(eps) <= delta}.

    Certified bisection on the delta envelopes (module docstring): the upper end is a point where
    the certified upper delta is <= ``delta``; the lower end a point where the certified lower
    delta exceeds ``delta`` (valid because the true delta(eps) is non-increasing).

    Args:
        composition: A composition or anything ``compose`` accepts.
        delta: Target delta in (0, 1) (float or decimal string).
        methods: Uniform-bound methods to consider (default: all).
        prec: Starting Arb precision in bits.
        rel_tol: Relative bisection tolerance on each end (a looser end is still valid).
        abs_tol: Absolute bisection tolerance.

    Returns:
        A :class:`~certify.bound.Bound` with quantity ``"epsilon"``; the upper end is +inf (and
        ``vacuous`` True) when no finite eps can be certified.

    Raises:
        NotApplicable: if a mechanism has no certified moments.
        ValueError: on a delta outside (0, 1) or unknown methods.
    """
    comp = compose(composition)
    methods = _methods(methods)
    target = to_arb("delta", delta)
    if not (target > 0 and target < 1):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    profiles, d, bits = _setup(comp, methods, prec)
    warns = _warnings(comp, profiles)
    per: dict[str, tuple[float, float]] = {}
    with workprec(bits):
        if target < d:
            warns.append(f"delta = {delta} is below the composed delta part {float(d.mid()):.6g}:"
                         " no finite epsilon exists")
            per = {p.direction: (math.inf, math.inf) for p in profiles}
        else:
            for p in profiles:
                per[p.direction] = _eps_ends(p, d, target, rel_tol, abs_tol)
    lo = max(v[0] for v in per.values())
    hi = max(v[1] for v in per.values())
    direction = max(per, key=lambda k: (per[k][1], per[k][0]))
    prof = {p.direction: p for p in profiles}[direction]
    if math.isinf(hi) and not math.isinf(lo):
        dd = float(prof.bound.value.mid())
        warns.append(
            f"vacuous: the EEAI cannot certify any finite epsilon at delta = {delta} "
            f"(uniform error D = {dd:.3g} from {prof.bound.method}, plus the delta part, does "
            "not fall below delta); this is expected for small delta"
        )

    elif math.isfinite(hi):
        total_d = float((d + (1 - d) * prof.bound.value).mid())
        if total_d >= 0.5 * float(target.mid()):
            warns.append(
                f"the uniform error D = {float(prof.bound.value.mid()):.3g} "
                f"({prof.bound.method}) is comparable to delta = {delta}: the interval is wide"
            )

    def end(x: float) -> Endpoint:
        if math.isinf(x):
            return Endpoint(inf=1)
        with workprec(bits):
            return endpoints(arb(x))[0]

    method = f"eeai[{prof.bound.method}]"
    return Bound(
        "epsilon", end(lo), end(hi), method, method, bits,
        (*_common_assumptions(profiles), _INVERSION),
        direction, tuple(warns),
        {
            "delta": str(delta),
            "uniform_error": {p.direction: float(p.bound.value.mid()) for p in profiles},
            "uniform_error_candidates": {p.direction: p.bound.candidates for p in profiles},
            "delta_part": float(d.mid()),
            "per_direction": {k: [v[0], v[1]] for k, v in per.items()},
        },
    )
