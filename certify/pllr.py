r"""Certified PLLR laws: the moment and continuous-part types, and the composed delta part.

For a dominating pair (P, Q) with PLLR ``L = log q/p`` (docs/math.md section 1; Wang, Gao, Zhang,
Shen, Su, *Analytical Composition of Differential Privacy via the Edgeworth Accountant*,
arXiv:2206.04236), X = L under P and Y = L under Q. A mechanism's certified moments
(:class:`PLLRMoments`: cumulants :math:`\kappa_1..\kappa_4` and absolute central moments
:math:`E|L - EL|`, :math:`E|L - EL|^3` of both laws) feed the uniform Edgeworth error bounds of
:mod:`certify.eeai`; the fourth central moment is :math:`\mu_4 = \kappa_4 + 3\kappa_2^2` and
the central moments convert to cumulants by :math:`\kappa_4 = \mu_4 - 3\mu_2^2` (Stuart, Ord,
*Kendall's Advanced Theory of Statistics* vol. 1, Eq. 3.38). Every number is an Arb ball that
contains the exact value.

The swapped pair (Q, P) has PLLR -L, so its laws are X' = -Y and Y' = -X
(:meth:`PLLRMoments.for_direction`); odd cumulants change sign, absolute central moments do not.

The delta parts of (eps, delta)-DP steps compose exactly, :math:`d = 1 - \prod_i (1 -
\delta_i)^{m_i}` (Dong, Roth, Su, *Gaussian Differential Privacy*, arXiv:1905.02383 = GDP,
Eq. 12), evaluated by :func:`composed_delta_part` as :math:`-\operatorname{expm1}(\sum_i m_i
\operatorname{log1p}(-\delta_i))`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from flint import arb

from numeric.mechanisms.base import DIRECTION_PQ, DIRECTION_QP

from .special import exact_ball

__all__ = [
    "ContinuousPart",
    "LawMoments",
    "PLLRMoments",
    "central_to_cumulants",
    "composed_delta_part",
    "symmetric_pair",
    "tighten",
]


@dataclass(frozen=True)
class LawMoments:
    """Certified moments of one PLLR law (X under P, or Y under Q).

    Attributes:
        kappa1: Mean.
        kappa2: Variance.
        kappa3: Third cumulant (= third central moment).
        kappa4: Fourth cumulant.
        abs1: First absolute central moment E|L - EL|.
        abs3: Third absolute central moment E|L - EL|^3.
    """

    kappa1: arb
    kappa2: arb
    kappa3: arb
    kappa4: arb
    abs1: arb
    abs3: arb

    @property
    def mu4(self) -> arb:
        """Fourth central moment kappa4 + 3 kappa2^2."""
        return self.kappa4 + 3 * self.kappa2**2

    @property
    def beta3(self) -> arb:
        """Standardized absolute third moment E|L - EL|^3 / kappa2^{3/2} (needs kappa2 > 0)."""
        return self.abs3 / self.kappa2 ** arb(1.5)

    @property
    def kurtosis(self) -> arb:
        """Standardized fourth moment mu4 / kappa2^2 (not the excess; needs kappa2 > 0)."""
        return self.mu4 / self.kappa2**2

    @property
    def degenerate(self) -> bool:
        """True when the law is a point mass (kappa2 exactly 0)."""
        return self.kappa2.is_zero()

    def negated(self) -> LawMoments:
        """Moments of -L: odd cumulants change sign, absolute central moments do not."""
        return LawMoments(-self.kappa1, self.kappa2, -self.kappa3, self.kappa4, self.abs1,
                          self.abs3)

    def as_floats(self) -> dict[str, float]:
        """Midpoints as floats (for display and tests)."""
        return {k: float(getattr(self, k).mid()) for k in
                ("kappa1", "kappa2", "kappa3", "kappa4", "abs1", "abs3")}


def _bad_direction(direction: str) -> ValueError:
    return ValueError(
        f"direction must be {DIRECTION_PQ!r} or {DIRECTION_QP!r}, got {direction!r}"
    )


@dataclass(frozen=True)
class PLLRMoments:
    """Certified moments of the PLLR of one mechanism under P (``x``) and Q (``y``).

    Attributes:
        x: Moments of X = L under P.
        y: Moments of Y = L under Q.
        provenance: How they were obtained (closed form, quadrature, ...).
        assumptions: Analytic facts the enclosure relies on (e.g. tail bounds).
        precision: Arb working precision (bits).
    """

    x: LawMoments
    y: LawMoments
    provenance: str
    assumptions: tuple[str, ...] = ()
    precision: int = 0

    def for_direction(self, direction: str) -> PLLRMoments:
        """Moments of the pair taken in ``direction``; the swap (Q, P) has X' = -Y, Y' = -X.

        Raises:
            ValueError: on a bad direction.
        """
        if direction == DIRECTION_PQ:
            return self
        if direction == DIRECTION_QP:
            return PLLRMoments(self.y.negated(), self.x.negated(), self.provenance,
                               self.assumptions, self.precision)
        raise _bad_direction(direction)


def symmetric_pair(x: LawMoments, provenance: str,
                   assumptions: tuple[str, ...] = ()) -> PLLRMoments:
    """The moments of a symmetric pair (Y =d -X) from those of X."""
    return PLLRMoments(x, x.negated(), provenance, assumptions)


def central_to_cumulants(mean: arb, m2: arb, m3: arb, m4: arb, a1: arb, a3: arb) -> LawMoments:
    """A :class:`LawMoments` from the mean, central moments mu_2..mu_4 and absolute moments
    (kappa_2 = mu_2, kappa_3 = mu_3, kappa_4 = mu_4 - 3 mu_2^2)."""
    return LawMoments(mean, m2, m3, m4 - 3 * m2 * m2, a1, a3)


def tighten(law: LawMoments, generated: tuple[arb, arb, arb, arb]) -> LawMoments:
    """Intersect kappa_1..4 with the derive-generated closed-form Arb kernels.

    Both are rigorous enclosures of the same numbers (central moments here, the docs/math.md closed
    forms printed by derive's strict Arb printer there), so their intersection is too; an empty
    intersection would mean a bug and raises.

    Raises:
        ArithmeticError: if the two enclosures are disjoint (a bug).
    """
    names = ("kappa1", "kappa2", "kappa3", "kappa4")
    tight = {}
    for name, ball in zip(names, generated, strict=True):
        try:
            tight[name] = getattr(law, name).intersection(ball)
        except ValueError:
            raise ArithmeticError(f"certified {name} enclosures disagree: a bug") from None
    return dataclasses.replace(law, **tight)


@dataclass(frozen=True)
class ContinuousPart:
    r"""Certified absolutely continuous components of the PLLR laws.

    Each candidate ``(f0, length)`` states: the law has a density >= f0 on some interval of
    length ``length`` (PLLR units), i.e. it is :math:`\alpha U + (1 - \alpha) R` with U uniform on
    that interval and :math:`\alpha = f_0 \ell`. Then :math:`|E e^{i\omega L}| \le 1 - \alpha
    (1 - |\operatorname{sinc}(\omega\ell/2)|)`, which bounds the characteristic function away
    from 1 (used by :mod:`certify.eeai` for DGG's Cramer-type condition). Both ends are exact
    lower bounds (zero-radius balls).

    Attributes:
        x: Candidates for X = L under P.
        y: Candidates for Y = L under Q.
        provenance: How they were certified.
    """

    x: tuple[tuple[arb, arb], ...]
    y: tuple[tuple[arb, arb], ...]
    provenance: str

    def for_direction(self, direction: str) -> ContinuousPart:
        """Candidates for the pair in ``direction`` (negation keeps densities and lengths).

        Raises:
            ValueError: on a bad direction.
        """
        if direction == DIRECTION_PQ:
            return self
        if direction == DIRECTION_QP:
            return ContinuousPart(self.y, self.x, self.provenance)
        raise _bad_direction(direction)


def composed_delta_part(comp) -> arb:
    """1 - prod (1 - delta_i)^{m_i} (GDP Eq. 12) in Arb, at the current precision.

    Args:
        comp: A :class:`numeric.composition.Composition` (its terms' ``delta_part``).

    Returns:
        An Arb ball (exactly 0 without delta parts).
    """
    s = arb(0)
    for mech, count in comp.terms:
        if mech.delta_part > 0:  # the exact (typed) delta0 where one was recorded
            s += arb(count) * (-exact_ball(mech.exact_delta_part())).log1p()
    return -s.expm1()
