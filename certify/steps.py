r"""The lattice-step interface: one mechanism's privacy-loss law in one pair order, in Arb.

A *lattice step* encloses, for one mechanism in one pair order (P, Q) with PLLR
:math:`L = \log(dQ/dP)` (values in :math:`[-\infty, +\infty]`):

* the hockey-stick curve :math:`\delta_1(\varepsilon) = Q(L > \varepsilon) - e^\varepsilon
  P(L > \varepsilon)` for every real eps (docs/math.md section 1), used by the upper bound of
  :mod:`certify.lattice`;
* the tails :math:`T_Q(s) = Q(L \ge s)` and :math:`T_P(s) = P(L \ge s)` at grid points s, used by
  the lower bound (cell masses of the binned test);
* the masses at the ends, :math:`Q(L = +\infty)` and :math:`P(L = -\infty)`, which make the grid
  range tests of Lemma 2 exact for pairs that are not mutually absolutely continuous (ApproxDP).

Every method returns Arb balls that contain the exact value. Grid points and the points of the
range search are exact dyadic numbers; a step may compare them with its breakpoints in exact
rational arithmetic (:func:`exact_value`), and raises ``ArithmeticError`` for a non-exact
argument where that comparison would be needed (never guessed).

Steps are hashable frozen dataclasses (they key the lattice caches). The built-in steps live
with their mechanisms in :mod:`certify.mechanisms`; :func:`certify.lattice_steps.lattice_step`
finds a mechanism's step through :mod:`certify.registry`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from fractions import Fraction

from flint import arb

from numeric.mechanisms.base import DIRECTION_PQ, DIRECTION_QP

from .engine import endpoints

__all__ = ["LatticeStep", "check_direction", "exact_value"]


def exact_value(x: arb) -> Fraction:
    """The exact rational value of a zero-radius ball.

    Raises:
        ArithmeticError: if the ball has a positive radius (the value is not known exactly).
    """
    lo, hi = endpoints(x)
    if lo != hi:
        raise ArithmeticError("lattice step: a breakpoint comparison needs an exact argument")
    return Fraction(lo.man) * Fraction(2) ** lo.exp


def check_direction(direction: str) -> None:
    """Raise ``ValueError`` unless ``direction`` is ``"P||Q"`` or ``"Q||P"``."""
    if direction not in (DIRECTION_PQ, DIRECTION_QP):
        raise ValueError(f"direction must be {DIRECTION_PQ!r} or {DIRECTION_QP!r}, "
                         f"got {direction!r}")


class LatticeStep(ABC):
    """Enclosures of one mechanism's privacy-loss law in one pair order (see module docstring).

    Subclasses are frozen (hashable) dataclasses.
    """

    @abstractmethod
    def delta(self, eps: arb) -> arb:
        r"""The hockey-stick curve :math:`Q(L > \varepsilon) - e^\varepsilon P(L > \varepsilon)`."""

    @abstractmethod
    def tails(self, s: arb) -> tuple[arb, arb]:
        r""":math:`(Q(L \ge s), P(L \ge s))` at a (normally exact) point s."""

    shared_tails: bool = False
    """True when :meth:`delta_tails` costs about one evaluation (not delta + tails)."""

    def delta_tails(self, s: arb) -> tuple[arb, arb, arb]:
        r"""``(delta(s), *tails(s))`` in one call; steps whose two formulas share their costly
        parts (e.g. the same erfc values) override it, returning the same balls, and set
        :attr:`shared_tails`."""
        return (self.delta(s), *self.tails(s))

    def end_masses(self) -> tuple[arb, arb]:
        r""":math:`(Q(L = +\infty), P(L = -\infty))`; zero for mutually continuous pairs."""
        return arb(0), arb(0)

    def gap(self, eps: arb) -> arb:
        r"""Lemma 2's error bound below the grid: :math:`\delta_1(\varepsilon) - (1 -
        e^\varepsilon (1 - P(L = -\infty)))`, which is >= 0 (take the event
        :math:`\{L > -\infty\}`) and non-decreasing in eps."""
        p_minus = self.end_masses()[1]
        return self.delta(eps) - (1 - eps.exp() * (1 - p_minus))

    def excess(self, eps: arb) -> arb:
        r"""Lemma 2's error bound above the grid: :math:`\delta_1(\varepsilon) - Q(L = +\infty)`."""
        return self.delta(eps) - self.end_masses()[0]

    @abstractmethod
    def rough_std(self) -> float:
        """A rough standard deviation of L under Q (only sizes the default grid)."""

    @abstractmethod
    def describe(self) -> str:
        """Short description for certificates."""

    @property
    def assumptions(self) -> tuple[str, ...]:
        """Assumptions the enclosure rests on beyond its proof (e.g. a declared monotone PLLR);
        certificates list them."""
        return ()
