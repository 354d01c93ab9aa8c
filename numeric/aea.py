r"""The approximate Edgeworth accountant (AEA) -- an *estimate*, never a bound.

Definition (this project's AEA, docs/math.md section 3): with G_Y the order-r Edgeworth expansion
of the CDF of S_Y (summed cumulants of the PLLR under Q),

.. math::

    \delta_{\mathrm{AEA}}(\varepsilon) = \int_\varepsilon^\infty e^{\varepsilon - s}
        \bigl(1 - G_Y(s)\bigr)\,ds,

the Q-only form of delta(eps) = E_Q[(1 - e^{eps - S})_+] (change of measure dP = e^{-S} dQ),
evaluated in closed form by :func:`numeric.edgeworth.q_only_delta`. It uses only the Y
cumulants and is more accurate than the two-sided plug-in of Wang, Gao, Zhang, Shen, Su,
*Analytical Composition of Differential Privacy via the Edgeworth Accountant* (arXiv:2206.04236,
Eq. (3.6)), which is kept as the variant ``"aea-ea"`` for paper checks.

Both are approximations: they can under-report eps (notably for few steps, small m * rate, and
lattice PLLRs such as randomized response). Results carry ``estimate=True`` and diagnostics.
eps(delta) is the largest root of the (possibly non-monotone) surrogate, found by a grid scan and
Brent refinement over a range beyond which the surrogate is provably below the target (for
z >= 2 sqrt(k_max), int_z^inf |g| = Phibar(z) + sum_k |c_k| phi(z) He_{k-1}(z) bounds it).
Asymmetric pairs are accounted in both orders; the larger privacy loss is reported with its
direction. Delta parts of ApproxDP terms enter exactly through GDP Eq. 13:
delta = d + (1 - d) delta_pure.

**Reliability diagnostic.** Every AEA answer is checked against the saddlepoint (tilted
Edgeworth) estimate (:mod:`numeric.saddlepoint`; relative eps error below 1e-5 wherever its own
diagnostics pass): a warning is issued when AEA is predicted to be more than
:data:`AEA_TOLERANCE` (1%) off, or when the saddlepoint's diagnostics fire (the regime -- few
sampled steps, a root deep in the tail, heavy cumulants -- where both expansions break down),
or when the saddlepoint does not apply to the query (the answer is then unchecked). For
eps(delta) the check costs one saddlepoint *delta* evaluation at AEA's eps, turned into an eps
error by Newton's step with the slope of AEA's own surrogate (:func:`_checked_root`; where
that delta's diagnostics fire, a saddlepoint eps and its eps-level diagnostics instead); for
delta(eps) the two deltas are compared at up to 16 of the eps. Facts true of every answer for a
mechanism (e.g. a lattice PLLR) are notes in ``details["notes"]``, not warnings, so that
``warnings`` means "check this answer".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from ._validation import as_float_array, check_delta, check_order
from .composition import Composition, compose
from .edgeworth import (
    SERIES_ORDERS,
    QOnlyScalar,
    cumulants_needed,
    hermite_e,
    q_only_delta,
    series_coefficients,
    standardize,
    two_sided_delta,
)
from .errors import NotApplicable
from .results import DeltaResult, EpsilonResult
from .solvers import largest_crossing
from .special import SQRT_2PI

__all__ = ["AEA_TOLERANCE", "ESTIMATE_NOTE", "VARIANTS", "aea_delta", "aea_epsilon"]

ESTIMATE_NOTE = (
    "estimate: the Edgeworth accountant approximates delta(eps); it is not a bound and can "
    "under-report epsilon"
)
VARIANTS = ("q-only", "aea-ea")
_CANCEL_WARN = 1e6
AEA_TOLERANCE = 0.01
"""Relative disagreement with the saddlepoint estimate above which an AEA answer warns."""
_POINT_MASS_RATIO = 1e-12  # sigma below this times max(|K1|, 1): the law of S is a point mass


@dataclass(frozen=True)
class _Profile:
    """The surrogate pure-part profile of one pair order."""

    direction: str
    k1: float
    sigma: float
    coeffs: dict[int, float]
    x_std: tuple | None
    lam: dict[int, float]
    trivial: bool
    scalar: QOnlyScalar | None = None  # the q-only surrogate at one eps (root refinement)

    def value_and_slope(self, eps: float) -> tuple[float, float]:
        """The q-only surrogate and its derivative in eps, delta_G - (1 - G) (QOnlyScalar)."""
        val, sf, _ = self.scalar((eps - self.k1) / self.sigma)
        return val, val - sf

    def evaluate(
        self, eps: np.ndarray, variant: str, cancellation: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        eps = np.asarray(eps, dtype=float)
        if self.trivial:  # S = K1 almost surely: delta(eps) = E_Q(1 - e^{eps - S})_+ exactly
            with np.errstate(over="ignore"):
                vals = np.maximum(-np.expm1(np.minimum(eps - self.k1, 0.0)), 0.0)
            return vals, np.ones_like(eps)
        if variant == "q-only":
            vals, cancel = q_only_delta((eps - self.k1) / self.sigma, self.sigma, self.coeffs,
                                        cancellation=cancellation)
            return vals, (cancel if cancel is not None else np.ones_like(vals))
        vals = two_sided_delta(eps, self.x_std, (self.k1, self.sigma, self.coeffs))
        return vals, np.ones_like(vals)

    def envelope(self, eps: np.ndarray, variant: str) -> np.ndarray:
        """Upper bound on |surrogate| valid where the Hermite factors are past their roots."""
        k = max(self.coeffs, default=1)
        zy = (eps - self.k1) / self.sigma
        env = _tail_envelope(zy, self.coeffs)
        env = np.where(zy >= 2.0 * math.sqrt(k) + 1.0, env, np.inf)
        if variant == "aea-ea":
            k1x, sx, cx = self.x_std
            zx = (eps - k1x) / sx
            kx = max(cx, default=1)
            with np.errstate(divide="ignore", over="ignore"):
                ex = np.exp(eps + _log_tail_envelope(zx, cx))
            env = env + np.where(zx >= 2.0 * math.sqrt(kx) + 1.0, ex, np.inf)
        return env


def _tail_envelope(z: np.ndarray, coeffs: dict[int, float]) -> np.ndarray:
    return np.exp(_log_tail_envelope(z, coeffs))


def _log_tail_envelope(z: np.ndarray, coeffs: dict[int, float]) -> np.ndarray:
    """log of Phibar(z) + phi(z) sum_k |c_k| |He_{k-1}(z)|, without overflow or underflow."""
    z = np.asarray(z, dtype=float)
    out = special.log_ndtr(-z)
    if coeffs:
        he = hermite_e(max(coeffs), z)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            poly = sum(abs(c) * np.abs(he[k - 1]) for k, c in coeffs.items())
            logpoly = np.where(np.isfinite(poly), np.log(poly), np.log(np.abs(z)) * max(coeffs))
            out = np.logaddexp(out, -0.5 * z * z - math.log(SQRT_2PI) + logpoly)
    return out


def _profiles(comp: Composition, order: int) -> list[_Profile]:
    need = max(2, cumulants_needed(order))
    out = []
    for direction in comp.directions:
        kx, ky = comp.cumulants(need, direction)
        if not (ky[1] > (_POINT_MASS_RATIO * max(abs(ky[0]), 1.0)) ** 2):
            # a (numerically) degenerate law, e.g. randomized response with eps0 >~ 40, whose
            # minority outcome has probability below 1e-17: S_Y is the point mass K1
            out.append(_Profile(direction, float(ky[0]), 0.0, {}, None, {}, True))
            continue
        k1, sigma, lam = standardize(ky)
        coeffs = series_coefficients(lam, order)
        k1x, sx, lamx = standardize(kx)
        x_std = (k1x, sx, series_coefficients(lamx, order))
        out.append(_Profile(direction, k1, sigma, coeffs, x_std, lam, False,
                            QOnlyScalar(sigma, coeffs)))
    return out


def _lattice_note(comp: Composition) -> list[str]:
    if comp.lattice:
        return ["the PLLR has atoms (lattice/atomic law); the Edgeworth approximation smooths "
                "them and can be off in either direction"]
    return []


def _saddlepoint_delta(comp: Composition, eps: np.ndarray):
    from .saddlepoint import saddlepoint_delta  # on first use: a plain AEA import stays light

    return saddlepoint_delta(comp, eps, order=2)


def _saddlepoint_epsilon(comp: Composition, delta: float):
    from .saddlepoint import saddlepoint_epsilon

    return saddlepoint_epsilon(comp, delta, order=2)


def _unchecked(what: str, exc: Exception) -> str:
    """The warning of an answer the reliability check could not vouch for (no saddlepoint)."""
    first = str(exc).split(";")[0]
    return (f"the reliability check (the saddlepoint) does not apply to this {what} ({first}); "
            "this AEA answer is unchecked and may be far off: use method 'auto' or 'certified'")


def _checked_against_saddlepoint(aea_value, sp_call, what: str) -> list[str]:
    """The reliability diagnostic (module docstring): warnings, empty when AEA agrees."""
    try:
        sp = sp_call()
    except NotApplicable as exc:
        return [_unchecked(what, exc)]
    fired = sp.details.get("diagnostics", [])
    if fired:
        return [f"the saddlepoint diagnostics fire for this {what} ({len(fired)}: e.g. "
                f"{fired[0]}); the Edgeworth expansion is unreliable here too: use method "
                "'auto' or 'certified'"]
    ref = np.asarray(sp.value, dtype=float)
    got = np.asarray(aea_value, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300)
    worst = float(np.max(np.where(np.isfinite(rel), rel, np.inf)))
    if worst > AEA_TOLERANCE:
        return [f"AEA differs from the saddlepoint estimate by {100 * worst:.3g}% (relative) "
                f"for this {what}; the saddlepoint is accurate to ~1e-5 where its diagnostics "
                "pass (method 'auto' uses it)"]
    return []


def _checked_root(comp: Composition, p: _Profile, eps: float, delta: float,
                  variant: str) -> list[str]:
    r"""The reliability diagnostic of an eps answer at the cost of one saddlepoint delta.

    With r = log(delta_SP(eps_A) / delta) (the saddlepoint's delta at AEA's eps against the
    target) and s = d log delta_A / d eps < 0 (the slope of AEA's surrogate at its root, by a
    central difference), the saddlepoint's root lies at eps_A + r / |s| to first order, so AEA's
    relative eps error is predicted as |r| / (|s| eps_A) (Newton's step; the second-order term
    is about (r / s)^2 times the relative curvature of log delta, e.g. 1% of the step when the
    log-profile is quadratic on the scale eps). Where AEA is wrong its slope can be too (a steep
    surrogate would understate the error), so the flatter of s and the saddlepoint's own slope,
    -t at its tilt t (d/d eps of the exponent K(t) - t K'(t) at eps = K'(t)), is used. A warning
    is issued when the prediction exceeds :data:`AEA_TOLERANCE`. Where the saddlepoint delta's
    diagnostics fire (they estimate delta's error), or the slope is not usable (a point-mass
    profile, eps = 0, a flat or non-finite surrogate), the full saddlepoint eps is compared
    instead, and its eps-level diagnostics (delta errors converted to eps) decide.
    """
    h = 1e-3 * p.sigma
    d = comp.delta_part
    if p.trivial or not (eps > h) or not math.isfinite(eps):
        return _checked_against_saddlepoint(eps, lambda: _saddlepoint_epsilon(comp, delta),
                                            "query")
    try:
        sp = _saddlepoint_delta(comp, eps)
    except NotApplicable as exc:
        return [_unchecked("query", exc)]
    if sp.details.get("diagnostics"):
        # they estimate delta's error; an eps answer is checked by the eps-level diagnostics,
        # which convert it to eps (e.g. a lattice phase error of 0.7% in delta is 3e-4 in eps
        # for randomized response(0.1) x 1000 at delta 1e-5), at the cost of a saddlepoint eps
        return _checked_against_saddlepoint(eps, lambda: _saddlepoint_epsilon(comp, delta),
                                            "query")
    if variant == "q-only":  # the scalar form (QOnlyScalar: the same closed form, no numpy)
        side = np.array([p.value_and_slope(eps - h)[0], p.value_and_slope(eps + h)[0]])
    else:
        side = p.evaluate(np.array([eps - h, eps + h]), variant, cancellation=False)[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        lo, hi = np.log(d + (1.0 - d) * np.clip(side, 0.0, 1.0))
        slope = (hi - lo) / (2.0 * h)
        r = math.log(sp.delta / delta) if sp.delta > 0.0 else -math.inf
    if not (slope < 0.0 and math.isfinite(slope)):
        return _checked_against_saddlepoint(eps, lambda: _saddlepoint_epsilon(comp, delta),
                                            "query")
    # the surrogate's slope is itself wrong where AEA is (e.g. a steep two-sided plug-in): take
    # the flatter of it and the saddlepoint's, -t at its tilt (d/deps of K(t) - t K'(t) at
    # eps = K'(t)), so the predicted error is not understated
    tilt = sp.details.get("saddlepoint", {}).get(sp.direction, {}).get("t", math.nan)
    if 0.0 < tilt < -slope:
        slope = -tilt
    rel = abs(r) / (-slope * eps)
    if rel > AEA_TOLERANCE:
        where = "below" if r > 0 else "above"  # r > 0: the saddlepoint's root lies higher
        return [f"AEA's epsilon is about {100 * rel:.3g}% {where} the saddlepoint's (relative; "
                f"the saddlepoint's delta at AEA's epsilon is {sp.delta:.4g}, not {delta:g}); the "
                "saddlepoint is accurate to ~1e-5 where its diagnostics pass (method 'auto' uses "
                "it)"]
    return []


def _diagnostics(comp: Composition, profiles: list[_Profile]) -> list[str]:
    warns = []
    for p in profiles:
        if p.trivial and p.k1 != 0.0:
            warns.append(
                f"{p.direction}: the privacy-loss variance is negligible against its mean "
                f"(K1 = {p.k1:.6g}): the composed loss is treated as the point mass K1, exact up "
                "to the neglected minority outcomes (use the exact or certified method to check)"
            )
    for p in profiles:
        big = {j: v for j, v in p.lam.items() if abs(v) > (0.5 if j == 3 else 1.0)}
        if big:
            desc = ", ".join(f"lambda{j}={v:.3g}" for j, v in sorted(big.items()))
            warns.append(
                f"{p.direction}: large standardized cumulants ({desc}); the expansion is "
                "unreliable here (few steps or a heavy-tailed PLLR)"
            )
    return warns


def _check_variant(variant: str) -> str:
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    return variant


def _is_exact_gaussian(comp: Composition) -> bool:
    fams = [m.exact_family() for m, _ in comp.terms]
    return all(f is not None and f[0] == "gaussian" for f in fams)


def aea_delta(
    composition, eps: float | np.ndarray, order: int = 2, variant: str = "q-only"
) -> DeltaResult:
    """AEA estimate of delta(eps), vectorized over eps (an approximation, not a bound).

    Args:
        composition: A :class:`~numeric.composition.Composition` or anything :func:`compose`
            accepts.
        eps: eps value(s), finite and >= 0.
        order: Edgeworth order (0 = normal approximation, 1, 2, or any registered order).
        variant: ``"q-only"`` (default, docs/math.md section 3) or ``"aea-ea"`` (EA paper plug-in).

    Returns:
        A :class:`DeltaResult` with the max over pair orders, the winning direction per eps, and
        ``estimate=True`` (False only for Gaussian compositions, where every order is exact).

    Raises:
        ValueError: on invalid arguments.
    """
    comp = compose(composition)
    e = as_float_array("eps", eps, nonnegative=True)
    order = check_order("order", order, maximum=max(SERIES_ORDERS))
    variant = _check_variant(variant)
    profiles = _profiles(comp, order)
    warns = _diagnostics(comp, profiles)
    per_dir = {}
    worst_cancel = 1.0
    for p in profiles:
        vals, cancel = p.evaluate(e, variant)
        beyond = e >= comp.pllr_sup(p.direction)  # delta is exactly the delta part there
        if np.any(beyond & (vals > 0.0)):
            warns.append(f"{p.direction}: the surrogate delta is positive at eps at or beyond the "
                         "largest privacy loss, where delta is exactly the delta part; set to it")
            vals = np.where(beyond, 0.0, vals)
        per_dir[p.direction] = vals
        worst_cancel = max(worst_cancel, float(np.max(cancel)))
    stacked = np.stack([per_dir[p.direction] for p in profiles])
    win = np.argmax(stacked, axis=0)
    pure = stacked[win, np.arange(stacked.shape[1])] if stacked.ndim == 2 else stacked[win]
    if np.any(pure < 0.0):
        warns.append("the surrogate delta is negative at some eps; clipped to 0")
    if np.any(pure > 1.0):
        warns.append("the surrogate delta exceeds 1 at some eps; clipped to 1")
    if worst_cancel > _CANCEL_WARN:
        warns.append(
            f"cancellation in the closed form loses about {math.log10(worst_cancel):.0f} digits"
        )
    pure = np.clip(pure, 0.0, 1.0)
    d = comp.delta_part
    total = d + (1.0 - d) * pure
    dirs = np.array([p.direction for p in profiles])[np.atleast_1d(win)]  # no per-eps Python
    scalar = np.ndim(eps) == 0
    estimate = not _is_exact_gaussian(comp)
    if estimate:  # the reliability check, on at most 16 of the eps (a vector can be long)
        flat_e, flat_d = e.reshape(-1), total.reshape(-1)
        pick = np.unique(np.linspace(0, flat_e.size - 1, min(flat_e.size, 16)).astype(int))
        warns += _checked_against_saddlepoint(
            flat_d[pick], lambda: _saddlepoint_delta(comp, flat_e[pick]), "query")
    return DeltaResult(
        delta=float(total.reshape(-1)[0]) if scalar else total,
        eps=float(e) if scalar else e,
        method="aea" if variant == "q-only" else "aea-ea",
        estimate=estimate,
        direction=str(dirs[0]) if scalar else dirs,
        per_direction={k: (float(v.reshape(-1)[0]) if scalar else v) for k, v in per_dir.items()},
        warnings=tuple(warns),
        details={"order": order, "variant": variant, "delta_part": d,
                 "notes": _lattice_note(comp)},
    )


def _search_hi(p: _Profile, target: float, variant: str) -> float:
    """eps beyond which the surrogate is provably below ``target`` (envelope of ``envelope``)."""
    eps_max, step = max(p.k1 + 80.0 * p.sigma, 0.0), 0.25 * p.sigma
    if variant == "aea-ea":  # e^eps (1 - G_X(eps)) peaks near K1x + sx^2
        k1x, sx, _ = p.x_std
        eps_max, step = max(eps_max, k1x + sx * sx + 80.0 * sx), min(step, 0.25 * sx)
    # Python's min/max on the scalar (np.clip's dispatch costs ~10 us; same integer)
    eps = np.linspace(0.0, eps_max, int(min(max(eps_max / step, 256.0), 16001.0)) + 1)
    env = p.envelope(eps, variant)
    bad = np.flatnonzero(~(env < 0.5 * target))
    if bad.size and bad[-1] == len(eps) - 1:
        raise NotApplicable(f"target delta {target!r} is too small for the Edgeworth search range")
    idx = 0 if bad.size == 0 else bad[-1] + 1
    return float(max(eps[idx], 1e-12))


def aea_epsilon(
    composition, delta: float, order: int = 2, variant: str = "q-only"
) -> EpsilonResult:
    """AEA estimate of eps(delta): the largest root of the surrogate (an estimate, not a bound).

    Args:
        composition: A composition or anything :func:`compose` accepts.
        delta: Target delta in (0, 1).
        order: Edgeworth order (0, 1, 2, or any registered order).
        variant: ``"q-only"`` (default) or ``"aea-ea"``.

    Returns:
        An :class:`EpsilonResult` (max over pair orders, winning direction, diagnostics).
        ``epsilon`` is ``inf`` when delta is at or below the composed delta part.

    Raises:
        ValueError: on invalid arguments.
    """
    comp = compose(composition)
    delta = check_delta("delta", delta)
    order = check_order("order", order, maximum=max(SERIES_ORDERS))
    variant = _check_variant(variant)
    method = "aea" if variant == "q-only" else "aea-ea"
    profiles = _profiles(comp, order)
    warns = _diagnostics(comp, profiles)
    d = comp.delta_part
    details = {"order": order, "variant": variant, "delta_part": d,
               "notes": _lattice_note(comp)}
    estimate = not _is_exact_gaussian(comp)
    if delta <= d:
        warns.append(
            f"delta={delta!r} is not above the composed delta part {d!r}: no finite epsilon"
        )
        per = {p.direction: math.inf for p in profiles}
        return EpsilonResult(
            math.inf, delta, method, estimate, profiles[0].direction, per, tuple(warns), details
        )
    target = (delta - d) / (1.0 - d)
    per_dir: dict[str, float] = {}
    for p in profiles:
        if p.trivial:  # point mass at K1: delta(eps) = 1 - e^{eps - K1} for eps < K1
            per_dir[p.direction] = max(0.0, p.k1 + math.log1p(-target))
            continue
        hi = _search_hi(p, target, variant)
        points = min(max(math.ceil(hi / (0.02 * p.sigma)), 512), 20001)
        cross = largest_crossing(
            lambda x, p=p: p.evaluate(x, variant, cancellation=False)[0], 0.0, hi, target, points,
            p.value_and_slope if variant == "q-only" else None,
        )
        if cross.crossings > 1:
            warns.append(
                f"{p.direction}: the surrogate crosses delta={delta!r} {cross.crossings} times "
                "(non-monotone); the largest root is reported"
            )
        if variant == "q-only":
            cancel = p.scalar((cross.root - p.k1) / p.sigma)[2]
        else:
            cancel = 1.0  # the two-sided plug-in has no cancellation bound
        if cancel > _CANCEL_WARN:
            warns.append(
                f"{p.direction}: cancellation loses about {math.log10(cancel):.0f} digits"
            )
        per_dir[p.direction] = cross.root
        sup = comp.pllr_sup(p.direction)
        if cross.root > sup:  # delta(eps) = the delta part beyond ess sup L: eps <= sup
            warns.append(
                f"{p.direction}: AEA's root {cross.root:.6g} lies above the largest privacy loss "
                f"{sup:.6g}, beyond which delta is exactly the delta part; capped there (the "
                "smooth approximation misplaces this law's tail: use method 'auto' or "
                "'certified')"
            )
            per_dir[p.direction] = sup
    direction = max(per_dir, key=per_dir.get)
    if estimate:
        prof = next(p for p in profiles if p.direction == direction)
        warns += _checked_root(comp, prof, per_dir[direction], delta, variant)
    return EpsilonResult(
        per_dir[direction], delta, method, estimate, direction, per_dir, tuple(warns), details
    )
