r"""One epoch of random allocation as a lattice step (:class:`certify.steps.LatticeStep`).

The lattice method (:mod:`certify.lattice`) composes E epochs from the single-step
hockey-stick curve delta(eps) at exact grid points (its **upper** end, Lemmas 1-3 there):
:meth:`RandomAllocationStep.delta` is the certified one-epoch enclosure of
:mod:`certify.shuffle.one_epoch` (true enclosures, so the one-step method may use both ends).

**Grid range.** ``gap`` and ``excess`` only choose where the lattice grid ends; Lemma 2 of
:mod:`certify.lattice` holds for any ends (the chord from (0, 1) to (t_0, H_0) lies above the
convex H on [0, t_0], and beyond t_n the constant H_n lies above the non-increasing H). They
are the defaults, except that the grid may stop where the one-epoch bracket ends
(:math:`e^{\pm\varepsilon} \ge c_{\max}`: beyond it the enclosure is a constant plateau that
never reaches the default tolerance, and the lattice puts that plateau at +inf).

**Tails** (the binned threshold test of :mod:`certify.lattice_lower`) are not enclosed here
(the put bracket gives them only to first order): ``tails`` raises ``NotApplicable``; the
E-epoch lower end is :mod:`certify.shuffle.multi_epoch`'s dominated lattice measure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from flint import arb

from numeric.errors import NotApplicable

from ..special import show
from ..steps import LatticeStep, check_direction
from .one_epoch import ASSUMPTIONS, OneEpoch, one_epoch

__all__ = ["RandomAllocationStep"]

@dataclass(frozen=True)
class RandomAllocationStep(LatticeStep):
    """One epoch of random allocation (sigma, M) in pair order ``direction``."""

    sigma: float | Fraction
    rounds: int
    direction: str = "P||Q"

    def __post_init__(self) -> None:
        check_direction(self.direction)

    def _epoch(self) -> OneEpoch:
        return one_epoch(self.sigma, self.rounds)

    def delta(self, eps: arb) -> arb:
        return self._epoch().delta(eps, self.direction)

    def _beyond(self, eps: arb) -> bool:
        """True when e^{+-eps} (the order's c) is certainly >= c_max."""
        c = eps.exp() if self.direction == "P||Q" else (-eps).exp()
        return bool(c.lower() >= float(self._epoch().c_max))

    def gap(self, eps: arb) -> arb:
        if self.direction == "Q||P" and self._beyond(eps):
            return arb(0)
        return super().gap(eps)

    def excess(self, eps: arb) -> arb:
        if self.direction == "P||Q" and self._beyond(eps):
            return arb(0)
        return super().excess(eps)

    def tails(self, s: arb) -> tuple[arb, arb]:
        raise NotApplicable(
            "lattice lower end: the tails of a random-allocation epoch are not enclosed; the "
            "certified lower end comes from certify.shuffle.multi_epoch (method 'shuffle')")

    def rough_std(self) -> float:
        return math.sqrt(math.expm1(1.0 / float(self.sigma) ** 2) / self.rounds)

    def describe(self) -> str:
        return f"RandomAllocation(sigma={show(self.sigma)}, rounds={self.rounds}) {self.direction}"

    @property
    def assumptions(self) -> tuple[str, ...]:
        return ASSUMPTIONS

