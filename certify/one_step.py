r"""Certified accounting of a single step: the hockey-stick curve of its lattice step, directly.

For a composition of one step (one term with count 1) the privacy profile *is* the step's
hockey-stick curve, :math:`\delta(\varepsilon) = \max_{\text{orders}} \bigl(Q(L > \varepsilon) -
e^\varepsilon P(L > \varepsilon)\bigr)` (docs/math.md section 1), which every mechanism with a
lattice step encloses in Arb (:meth:`certify.steps.LatticeStep.delta`, including the mass of
:math:`L = +\infty`). No discretization or composition is needed:

* ``delta`` -- the ball of the worse pair order at the exact eps;
* ``epsilon`` -- the true delta(eps) is non-increasing, so a dyadic point eps_u whose certified
  upper end is <= delta bounds :math:`\varepsilon(\delta) \le \varepsilon_u` and a point eps_l
  whose certified lower end exceeds delta bounds :math:`\varepsilon(\delta) \ge \varepsilon_l`
  (:mod:`certify.search` finds them by bracketing and bisection on exact dyadic points).

This answers one-step queries at any parameters in milliseconds, e.g. a Poisson-subsampled
Gaussian with sigma = 0.07 at delta = 1e-14, where the composed methods need fine grids.
"""

from __future__ import annotations

import math

from flint import arb

from numeric.composition import Composition
from numeric.errors import NotApplicable

from .bound import Bound
from .engine import DEFAULT_PRECISION, Endpoint, endpoints, to_arb, workprec
from .lattice_steps import lattice_step
from .search import bisect, expand

__all__ = ["one_step_delta_bound", "one_step_epsilon_bound"]

_METHOD = "one-step"
_REL = 1e-12  # relative width of the eps bracket (the ends are certified wherever they stop)


def _steps(comp: Composition) -> list[tuple[str, object]]:
    if len(comp.terms) != 1 or comp.terms[0][1] != 1:
        raise NotApplicable("one-step: applies to a single step (one term with count 1) only")
    mech = comp.terms[0][0]
    return [(d, lattice_step(mech, d)) for d in comp.directions]


def _delta(steps, eps: arb) -> tuple[arb, str]:
    """The worse order's delta ball at ``eps`` and its direction (the max of balls is taken
    end by end: lower = max of lowers, upper = max of uppers)."""
    balls = [(step.delta(eps), d) for d, step in steps]
    lo = max(arb(b.lower()) for b, _ in balls)
    hi = max(arb(b.upper()) for b, _ in balls)
    direction = max(balls, key=lambda bd: float(bd[0].mid()))[1]
    return lo.union(hi), direction


def _assumptions(steps) -> tuple[str, ...]:
    notes = ["a single step: delta(eps) is its hockey-stick curve, enclosed in Arb"]
    for _, step in steps:
        notes += list(step.assumptions)
    return tuple(dict.fromkeys(notes))


def one_step_delta_bound(comp: Composition, eps: float) -> Bound:
    """Certified delta(eps) of a one-step composition.

    Raises:
        NotApplicable: unless the composition is one step of a mechanism with a lattice step.
    """
    steps = _steps(comp)
    with workprec(DEFAULT_PRECISION):
        ball, direction = _delta(steps, to_arb("eps", eps))
        lo = endpoints(ball)[0] if ball.lower() > 0 else endpoints(arb(0))[0]  # delta >= 0
        hi = endpoints(ball)[1] if ball.upper() < 1 else endpoints(arb(1))[1]  # delta <= 1
    return Bound("delta", lo, hi, _METHOD, _METHOD, DEFAULT_PRECISION, _assumptions(steps),
                 direction, (), {"eps": eps})


def one_step_epsilon_bound(comp: Composition, delta: float) -> Bound:
    """Certified eps(delta) of a one-step composition.

    Raises:
        NotApplicable: unless the composition is one step of a mechanism with a lattice step.
    """
    steps = _steps(comp)
    with workprec(DEFAULT_PRECISION):
        target = to_arb("delta", delta)

        def upper_ok(x: float) -> bool:  # certified: delta(x) <= target
            return bool(_delta(steps, arb(x))[0].upper() <= target.lower())

        def lower_ok(x: float) -> bool:  # certified: delta(x) > target
            return bool(_delta(steps, arb(x))[0].lower() > target.upper())

        if upper_ok(0.0):
            hi = 0.0
        else:
            bad, found = expand(upper_ok, 0.0, 1.0, tries=64)
            hi = math.inf if found is None else bisect(upper_ok, bad, found, rel_tol=_REL)[1]
        if not lower_ok(0.0):
            lo = 0.0
        else:
            top = hi if math.isfinite(hi) else expand(lambda x: not lower_ok(x), 0.0, 1.0,
                                                      tries=64)[1]
            lo = 0.0 if top is None else bisect(lambda x: not lower_ok(x), 0.0, top,
                                                rel_tol=_REL)[0]
        direction = _delta(steps, arb(hi if math.isfinite(hi) else lo))[1]
    lo_end = endpoints(arb(lo))[0]
    hi_end = endpoints(arb(hi))[1] if math.isfinite(hi) else Endpoint(inf=1)
    return Bound("epsilon", lo_end, hi_end, _METHOD, _METHOD, DEFAULT_PRECISION,
                 _assumptions(steps), direction, (), {"delta": delta})
