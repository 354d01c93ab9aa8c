r"""Certified knowledge of random allocation (one epoch of M rounds; "shuffled" DP-SGD).

The pair (van Dijk and Ertan, *Trade-off Functions for DP-SGD with Subsampling based on Random
Shuffling*, arXiv:2605.06259, Sec. 3): P = H0, all M rounds N(0, 1); Q = H1, one uniformly
random round N(1/sigma, 1). Its PLLR is log(S/M), S a sum of M i.i.d. lognormals; the pair is
not symmetric (both orders are accounted for).

* **Lattice step** (:mod:`certify.lattice`, and the one-step method for a single epoch):
  :class:`certify.shuffle.step.RandomAllocationStep`, the certified one-epoch hockey-stick
  curve of :mod:`certify.shuffle.one_epoch` (the law of S enclosed in convex order,
  :mod:`certify.shuffle.law`) and tails from the same bracket.
* **Exact profile** (:mod:`certify.exact`) at M = 1 only: one round is the Gaussian mechanism
  with mu = 1/sigma (GDP Cor. 3.3 composes E of them into mu sqrt(E)); M > 1 is not applicable.
"""

from __future__ import annotations

from fractions import Fraction

from numeric.errors import NotApplicable
from numeric.mechanisms.random_allocation import RandomAllocation

from ..exact_model import ExactComposition
from ..registry import CertifiedMechanism, register_certified
from ..shuffle.step import RandomAllocationStep
from ..special import exact_param

__all__ = ["RandomAllocationStep"]


def _lattice_step(mech: RandomAllocation, direction: str) -> RandomAllocationStep:
    return RandomAllocationStep(exact_param(mech, "sigma"), int(mech.rounds), direction)


def _exact_profile(mech: RandomAllocation, count: int) -> ExactComposition:
    if mech.rounds != 1:
        raise NotApplicable("exact: random allocation has a closed form only at rounds = 1")
    return ExactComposition(
        gaussian=((Fraction(1) / mech.exact_value("sigma"), count),),
        notes=("random allocation with one round is the Gaussian mechanism, mu = 1/sigma",),
    )


register_certified(RandomAllocation, CertifiedMechanism(
    "RandomAllocation",
    lattice_step=_lattice_step,
    exact_profile=_exact_profile,
))
