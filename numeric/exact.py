r"""Exact accounting where a closed form exists (floats; certified versions live in certify).

Families (each mechanism reports its family through ``exact_family``):

* ``gaussian`` -- Gaussian steps compose to mu-GDP with mu^2 = sum m_i mu_i^2 (GDP Cor. 3.3), and
  delta_mu is the exact privacy profile (GDP Cor. 2.13).
* ``pure`` -- randomized response / (eps0, delta)-DP steps sharing one eps0: the pure part is the
  binomial pair of Kairouz, Oh, Viswanath (arXiv:1311.0776, Thm 3.3), evaluated by
  :mod:`numeric.pure_dp`; delta parts enter exactly by GDP Eq. 12-13 (f_{eps,delta} =
  f_{eps,0} (x) f_{0,delta}, Eq. 11, so this is exact for the worst-case (eps, delta)-DP step).

Anything else (mixed families, several eps0, subsampled Gaussian) is refused with
:class:`~numeric.errors.NotApplicable` saying why; heterogeneous pure-DP composition is #P-hard
(Murtagh, Vadhan 2016).
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import as_float_array, check_delta
from .composition import Composition, compose
from .errors import NotApplicable
from .gdp import MAX_MU, delta_mu, epsilon_mu
from .mechanisms.base import DIRECTION_PQ
from .pure_dp import pure_dp_delta, pure_dp_epsilon
from .results import DeltaResult, EpsilonResult

__all__ = ["exact_delta", "exact_epsilon", "exact_family_of"]

_MAX_PURE_STEPS = 10**15  # numeric.pure_dp bounds its work from n and eps0 itself


def exact_family_of(comp: Composition) -> tuple[str, float, int]:
    """Return ``(family, parameter, steps)`` if the composition has an exact answer.

    For ``gaussian`` the parameter is the composed mu; for ``pure`` it is the shared eps0 and
    ``steps`` the number of eps0 > 0 steps.

    Raises:
        NotApplicable: if no exact answer is available, saying why.
    """
    fams = [(m.exact_family(), c, m) for m, c in comp.terms]
    if any(f is None for f, _, _ in fams):
        names = sorted({type(m).__name__ for f, _, m in fams if f is None})
        raise NotApplicable(
            f"no exact method for {', '.join(names)}; use --method aea, gdp or clt "
            "(certified bounds come with the certify package)"
        )
    # (eps0 = 0, delta) steps only contribute a delta part.
    active = [(f, c) for f, c, _ in fams if not (f[0] == "pure" and f[1] == 0.0)]
    kinds = {f[0] for f, _ in active}
    if not active:
        return ("pure", 0.0, 0)
    if len(kinds) > 1:
        raise NotApplicable(
            "no exact method for a mix of Gaussian and pure-DP steps; use aea or gdp"
        )
    kind = kinds.pop()
    if kind == "gaussian":
        mu = math.sqrt(sum(c * f[1] for f, c in active))
        if not (mu <= MAX_MU):
            raise NotApplicable(f"exact: the composed GDP mu = {mu:.6g} exceeds {MAX_MU:g} "
                                "(eps beyond ~5e23 is not resolved in binary64)")
        return ("gaussian", mu, 0)
    eps0s = {f[1] for f, _ in active}
    if len(eps0s) > 1:
        raise NotApplicable(
            "exact composition of pure-DP steps with different eps0 is not available in floats "
            "(#P-hard in general); use aea or gdp"
        )
    steps = sum(c for _, c in active)
    if steps > _MAX_PURE_STEPS:
        raise NotApplicable(f"exact binomial composition supports up to {_MAX_PURE_STEPS:.0e} "
                            f"steps, got {steps}")
    return ("pure", eps0s.pop(), steps)


def _pure_delta(family: tuple[str, float, int], e: np.ndarray) -> np.ndarray:
    kind, param, steps = family
    if kind == "gaussian":
        return np.asarray(delta_mu(param, e))
    if steps == 0:
        return np.zeros_like(e)
    return np.asarray(pure_dp_delta(param, steps, e))


def exact_delta(composition, eps) -> DeltaResult:
    """Exact delta(eps) (floating point) for compositions with a closed form; refuses otherwise."""
    comp = compose(composition)
    family = exact_family_of(comp)
    e = as_float_array("eps", eps, nonnegative=True)
    d = comp.delta_part
    vals = d + (1.0 - d) * _pure_delta(family, e)
    scalar = np.ndim(eps) == 0
    warns: tuple[str, ...] = ()
    if family[0] == "gaussian" and family[1] > 0.0 and np.any(vals == 0.0):
        # delta_mu(eps) > 0 for every finite eps: a 0 is an underflow, not an exact zero
        warns = ("delta underflows binary64 at some eps (the exact value is positive but below "
                 "~1e-308); the certified method gives its exact enclosure",)
    return DeltaResult(
        delta=float(vals.reshape(-1)[0]) if scalar else vals,
        eps=float(e) if scalar else e,
        method="exact",
        estimate=False,
        direction=DIRECTION_PQ,
        warnings=warns,
        details={"family": family[0], "parameter": family[1], "delta_part": d},
    )


def exact_epsilon(composition, delta: float) -> EpsilonResult:
    """Exact eps(delta) (floating point) for compositions with a closed form; refuses otherwise."""
    comp = compose(composition)
    delta = check_delta("delta", delta)
    kind, param, steps = exact_family_of(comp)
    d = comp.delta_part
    warns: tuple[str, ...] = ()
    if delta < d or (delta == d and kind == "gaussian"):
        eps = math.inf
        warns = (f"delta={delta!r} is not above the delta part {d!r}: no finite epsilon",)
    elif delta == d:
        # the pure part's delta must be 0: it is from the largest privacy loss n eps0 on
        # (found by the fuzz: ApproxDP(0, 1e-300) x 1 at delta 1e-300 gave inf, certified [0, 0])
        eps = 0.0 if steps == 0 else param * steps
        warns = (f"delta={delta!r} equals the delta part: eps is the pure part's largest "
                 "privacy loss, where its delta vanishes",)
    else:
        target = (delta - d) / (1.0 - d)
        if kind == "gaussian":
            eps = epsilon_mu(param, target)
        elif steps == 0:
            eps = 0.0
        else:
            eps = pure_dp_epsilon(param, steps, target)
    return EpsilonResult(
        eps, delta, "exact", False, DIRECTION_PQ, {DIRECTION_PQ: eps}, warns,
        {"family": kind, "parameter": param, "delta_part": d},
    )
