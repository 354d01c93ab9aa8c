r"""Certified knowledge of randomized response and of ApproxDP(eps0, delta0).

An (eps0, 0)-DP step is dominated by randomized response (Kairouz, Oh, Viswanath, *The
Composition Theorem for Differential Privacy*, ICML 2015 = KOV, Thm 3.3), and an (eps0,
delta0)-DP step by :math:`f_{\varepsilon_0,\delta_0} = f_{\varepsilon_0,0}\otimes
f_{0,\delta_0}` (Dong, Roth, Su, *Gaussian Differential Privacy*, arXiv:1905.02383 = GDP,
Eq. 11), whose delta part composes exactly (GDP Eq. 12-13) and is handled by each method
(:func:`certify.pllr.composed_delta_part`). Randomized response is delta0 = 0. The pure part's
PLLR is the two-point law X = +eps0 with probability :math:`a = 1/(1 + e^{\varepsilon_0})`, else
-eps0; the pair is symmetric (Y =d -X). Everything below is an Arb enclosure:

* **Moments** (:mod:`certify.moments`): the central values are :math:`2\varepsilon_0(1 - a)` and
  :math:`-2\varepsilon_0 a`, so :math:`E|X - m|^k = a(2\varepsilon_0(1-a))^k +
  (1-a)(2\varepsilon_0 a)^k` exactly, with mean :math:`-\varepsilon_0\tanh(\varepsilon_0/2)`.
  ApproxDP with eps0 = 0 has the degenerate PLLR 0 (only its delta part matters). For
  randomized response kappa_1..4 are intersected with the derive-generated closed forms.
* No absolutely continuous part (a lattice law).
* **Lattice step** (:mod:`certify.lattice`): under Q, L = +inf with mass delta0, +eps0 with
  :math:`(1 - \delta_0) e^{\varepsilon_0}/(1 + e^{\varepsilon_0})`, -eps0 with
  :math:`(1 - \delta_0)/(1 + e^{\varepsilon_0})`; under P the finite atoms have the masses
  swapped and L = -inf has mass delta0 (GDP Eq. 11).
* **Chernoff** (:mod:`certify.chernoff`): the two-point Lambda of
  :func:`certify.cgf.two_point_cgf` (KOV Thm 3.3 makes it the worst case); ApproxDP(0, delta)
  has Lambda = 0.
* **Exact profile** (:mod:`certify.exact`): pure (eps0, 0) steps (the binomial / enumeration
  families of :mod:`certify.exact_profiles`) plus delta parts.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from flint import arb

from numeric.mechanisms.randomized_response import ApproxDP, RandomizedResponse

from .._generated.builtin_cumulants_arb import randomized_response_cumulants_x
from ..cgf import StepCGF, two_point_cgf, zero_cgf
from ..exact_model import ExactComposition, pure_dp
from ..pllr import LawMoments, PLLRMoments, central_to_cumulants, symmetric_pair, tighten
from ..registry import CertifiedMechanism, register_certified
from ..special import exact_ball, exact_param, ipow, show
from ..steps import LatticeStep, exact_value

__all__ = ["ApproxDPStep", "two_point_law"]


def two_point_law(eps0: arb) -> LawMoments:
    """Moments of the two-point PLLR +-eps0 under P (all zero for eps0 = 0)."""
    if eps0.is_zero():
        zero = arb(0)
        return LawMoments(zero, zero, zero, zero, zero, zero)
    a = 1 / (1 + eps0.exp())  # P(X = +eps0)
    b = 1 / (1 + (-eps0).exp())  # 1 - a
    mean = -eps0 * (eps0 / 2).tanh()
    up, down = 2 * eps0 * b, 2 * eps0 * a  # X - m in {+up (prob a), -down (prob b)}

    def central(k: int) -> arb:
        return a * ipow(up, k) + b * ipow(-down, k)

    def absolute(k: int) -> arb:
        return a * ipow(up, k) + b * ipow(down, k)

    return central_to_cumulants(mean, central(2), central(3), central(4), absolute(1),
                                absolute(3))


_TWO_POINT = ("exact two-point law: X = +eps0 w.p. 1/(1+e^eps0), else -eps0; Y =d -X")


def _moments_rr(mech: RandomizedResponse) -> PLLRMoments:
    eps0 = exact_ball(exact_param(mech, "eps"))
    return symmetric_pair(tighten(two_point_law(eps0), randomized_response_cumulants_x(eps0)),
                          _TWO_POINT)


def _moments_approx(mech: ApproxDP) -> PLLRMoments:
    return symmetric_pair(
        two_point_law(exact_ball(exact_param(mech, "eps"))),
        _TWO_POINT + " (pure part only; the delta part composes by GDP Eq. 12-13)")


@dataclass(frozen=True)
class ApproxDPStep(LatticeStep):
    """ApproxDP(eps0, delta0) as its dominating pair; randomized response is delta0 = 0."""

    eps0: float | Fraction
    delta0: float | Fraction = 0.0

    def _atoms(self) -> tuple[arb, arb]:
        """(Q-mass at +eps0, Q-mass at -eps0) = (1 - delta0) (expit(eps0), expit(-eps0))."""
        e = exact_ball(self.eps0).exp()
        keep = 1 - exact_ball(self.delta0)
        return keep * e / (1 + e), keep / (1 + e)

    def _above(self, s: arb, strict: bool) -> tuple[arb, arb]:
        """(Q, P) masses of the finite atoms with L > s (strict) or L >= s."""
        v = exact_value(s)
        hi, lo = self._atoms()
        q, p = arb(0), arb(0)
        for atom, qm, pm in ((Fraction(self.eps0), hi, lo), (-Fraction(self.eps0), lo, hi)):
            if (atom > v) if strict else (atom >= v):
                q, p = q + qm, p + pm
        return q, p

    def end_masses(self) -> tuple[arb, arb]:
        d = exact_ball(self.delta0)
        return d, d

    def delta(self, eps: arb) -> arb:
        q, p = self._above(eps, strict=True)
        return exact_ball(self.delta0) + q - eps.exp() * p

    def tails(self, s: arb) -> tuple[arb, arb]:
        q, p = self._above(s, strict=False)
        return exact_ball(self.delta0) + q, p

    def rough_std(self) -> float:
        return max(float(self.eps0), 1e-3)

    def describe(self) -> str:
        if self.delta0 == 0.0:
            return f"RandomizedResponse(eps0={show(self.eps0)})"
        return f"ApproxDP(eps0={show(self.eps0)}, delta0={show(self.delta0)})"


def _chernoff(mech: RandomizedResponse | ApproxDP, direction: str) -> StepCGF:
    if mech.eps == 0.0:
        return zero_cgf("ApproxDP(0, delta): no pure part (Lambda = 0)")
    return two_point_cgf(exact_param(mech, "eps"), "(eps0, 0)-DP step modelled by randomized "
                         "response (KOV Thm 3.3): two-point Lambda")


def _exact_profile(mech: RandomizedResponse | ApproxDP, count: int) -> ExactComposition:
    # pure (eps0, 0) part (none for eps0 = 0) and the delta part (none for delta0 = 0)
    return pure_dp(exact_param(mech, "eps"), count, mech.exact_delta_part())


register_certified(RandomizedResponse, CertifiedMechanism(
    "RandomizedResponse",
    moments=_moments_rr,
    lattice_step=lambda mech, direction: ApproxDPStep(exact_param(mech, "eps"), 0.0),
    chernoff=_chernoff,
    exact_profile=_exact_profile,
))
register_certified(ApproxDP, CertifiedMechanism(
    "ApproxDP",
    moments=_moments_approx,
    lattice_step=lambda mech, direction: ApproxDPStep(exact_param(mech, "eps"),
                                                      exact_param(mech, "delta")),
    chernoff=_chernoff,
    exact_profile=_exact_profile,
))
