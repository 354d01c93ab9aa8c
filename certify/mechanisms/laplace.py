r"""Certified knowledge of the Laplace mechanism, :math:`\mu = \Delta/b`.

The dominating pair is P = Lap(0, 1), Q = Lap(mu, 1) with PLLR :math:`L = |x| - |x - \mu|`
(Wang, Gao, Zhang, Shen, Su, *Analytical Composition of Differential Privacy via the Edgeworth
Accountant*, arXiv:2206.04236, Section 5; docs/math.md section 4): under P, L has an atom -mu of
mass 1/2, an atom +mu of mass e^{-mu}/2 and L = 2x - mu with density e^{-x}/2 on (0, mu); the pair
is symmetric, Y =d -X. Everything below is an Arb enclosure (mu = sensitivity/scale exactly):

* **Moments** (:mod:`certify.moments`): with m = EX = 1 - mu - e^{-mu} and c = mu + m =
  1 - e^{-mu}, the continuous part of every central moment is :math:`\tfrac12 I_k(0, \mu)` with

  .. math::

      I_k(\alpha, \beta) = \int_\alpha^\beta (2x - c)^k e^{-x}\,dx
        = (2\alpha - c)^k e^{-\alpha} - (2\beta - c)^k e^{-\beta} + 2k\, I_{k-1}(\alpha, \beta),
      \qquad I_0 = e^{-\alpha} - e^{-\beta}

  (integration by parts, exact). The absolute moments split at x = c/2, where 2x - c changes
  sign: :math:`E|L - m|^k = \tfrac12|{-\mu} - m|^k + \tfrac{e^{-\mu}}{2}(\mu - m)^k
  + \tfrac12[(-1)^k I_k(0, c/2) + I_k(c/2, \mu)]`. kappa_1..4 are intersected with the
  derive-generated closed forms (:func:`certify.pllr.tighten`).
* **Continuous part** (:mod:`certify.eeai`): the PLLR density is e^{-x}/4 >= e^{-mu}/4 on
  (-mu, mu).
* **Lattice step** (:mod:`certify.lattice`): L has atoms at :math:`-\mu` (Q-mass
  :math:`e^{-\mu}/2`, P-mass 1/2) and :math:`+\mu` (Q-mass 1/2, P-mass :math:`e^{-\mu}/2`) and
  equals :math:`2x - \mu` on :math:`0 < x < \mu`. For :math:`-\mu < s \le \mu`:
  :math:`T_Q(s) = 1 - \tfrac12 e^{(s - \mu)/2}`, :math:`T_P(s) = \tfrac12 e^{-(s + \mu)/2}`; both
  are 1 for :math:`s \le -\mu` and 0 for :math:`s > \mu`. Hence
  :math:`\delta_1(\varepsilon) = 1 - e^{(\varepsilon - \mu)/2}` on :math:`[-\mu, \mu]`, 0 above
  and :math:`1 - e^\varepsilon` below. Breakpoints are located exactly:
  :math:`s \le -\mu \iff s b \le -\Delta`.
* **Chernoff** (:mod:`certify.chernoff`): integrating :math:`e^{\alpha L}` against this law,
  :math:`E_P[e^{\alpha L}] = \tfrac{\alpha}{2\alpha-1}e^{(\alpha-1)\mu}
  + \tfrac{\alpha-1}{2\alpha-1}e^{-\alpha\mu}` (both terms positive for alpha > 1; the Laplace
  row of Mironov, *Renyi Differential Privacy*, CSF 2017); real alpha, symmetric pair.
* No exact profile (certify's exact families are Gaussian and pure DP) and a non-normal PLLR.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from flint import arb

from numeric.mechanisms.laplace import Laplace

from .._generated.builtin_cumulants_arb import laplace_cumulants_x
from ..cgf import StepCGF, logaddexp
from ..pllr import (
    ContinuousPart,
    LawMoments,
    PLLRMoments,
    central_to_cumulants,
    symmetric_pair,
    tighten,
)
from ..registry import CertifiedMechanism, register_certified
from ..special import exact_ball, exact_param, ipow, lower_end, show
from ..steps import LatticeStep, exact_value

__all__ = ["LaplaceStep", "laplace_cgf", "laplace_law", "laplace_pieces"]


def laplace_pieces(c: arb, alpha: arb, beta: arb, kmax: int) -> list[arb]:
    """[I_0, ..., I_kmax] with I_k = int_alpha^beta (2x - c)^k e^{-x} dx (exact recursion)."""
    ea, eb = (-alpha).exp(), (-beta).exp()
    ua, ub = 2 * alpha - c, 2 * beta - c
    out = [ea - eb]
    for k in range(1, kmax + 1):
        out.append(ipow(ua, k) * ea - ipow(ub, k) * eb + 2 * k * out[-1])
    return out


def laplace_law(mu: arb) -> LawMoments:
    """Moments of X = L under P for the Laplace pair with parameter mu (module docstring)."""
    emu = (-mu).exp()
    c = -(-mu).expm1()  # 1 - e^{-mu} = mu + m
    mean = c - mu  # 1 - mu - e^{-mu}
    lo, hi = -mu - mean, mu - mean  # atoms after centring: lo < 0 < hi
    w_lo, w_hi = arb(0.5), emu / 2
    full = laplace_pieces(c, arb(0), mu, 4)
    left = laplace_pieces(c, arb(0), c / 2, 3)
    right = laplace_pieces(c, c / 2, mu, 3)
    central = [w_lo * ipow(lo, k) + w_hi * ipow(hi, k) + full[k] / 2 for k in range(5)]
    absk = {k: w_lo * ipow(abs(lo), k) + w_hi * ipow(abs(hi), k)
            + ((-1) ** k * left[k] + right[k]) / 2
            for k in (1, 3)}
    return central_to_cumulants(mean, central[2], central[3], central[4], absk[1], absk[3])


def _mu(mech: Laplace) -> arb:
    """mu = sensitivity / scale from the exact parameters (typed decimals where recorded)."""
    return exact_ball(exact_param(mech, "sensitivity")) / exact_ball(exact_param(mech, "scale"))


def _moments(mech: Laplace) -> PLLRMoments:
    mu = _mu(mech)
    return symmetric_pair(
        tighten(laplace_law(mu), laplace_cumulants_x(mu)),
        "closed form: atoms -mu (1/2), +mu (e^-mu/2) and L = 2x - mu on (0, mu) with density "
        "e^-x/2; polynomial-times-exponential integrals by exact integration by parts, the "
        "absolute moments split at x = (1 - e^-mu)/2 where L = EL",
    )


def _continuous(mech: Laplace) -> ContinuousPart:
    # L = 2x - mu on (0, mu) with density e^{-x}/2: the PLLR density is e^{-x}/4 >= e^{-mu}/4
    # on (-mu, mu); Y =d -X.
    mu = _mu(mech)
    cand = ((lower_end((-mu).exp() / 4), lower_end(2 * mu)),)
    return ContinuousPart(cand, cand, "Laplace PLLR: density >= e^-mu/4 on (-mu, mu)")


@dataclass(frozen=True)
class LaplaceStep(LatticeStep):
    """Laplace pair with mu = sensitivity / scale (symmetric)."""

    scale: float | Fraction
    sensitivity: float | Fraction = 1.0

    def _mu(self) -> arb:
        return exact_ball(self.sensitivity) / exact_ball(self.scale)

    def _piece(self, s: arb) -> int:
        """-1 if s <= -mu, +1 if s > mu, else 0 (exact comparison of s*b with +-Delta)."""
        sb = exact_value(s) * Fraction(self.scale)
        d = Fraction(self.sensitivity)
        if sb <= -d:
            return -1
        return 1 if sb > d else 0

    def delta(self, eps: arb) -> arb:
        # delta(eps) = Q(L > eps) - e^eps P(L > eps); L > eps <=> L >= eps except at the atoms,
        # and the formulas below are continuous there, so the piece of eps decides.
        piece = self._piece(eps)
        if piece < 0:
            return 1 - eps.exp()
        if piece > 0 or exact_value(eps) * Fraction(self.scale) == Fraction(self.sensitivity):
            return arb(0)
        return 1 - ((eps - self._mu()) / 2).exp()

    def tails(self, s: arb) -> tuple[arb, arb]:
        piece = self._piece(s)
        if piece < 0:
            return arb(1), arb(1)
        if piece > 0:
            return arb(0), arb(0)
        mu = self._mu()
        return 1 - ((s - mu) / 2).exp() / 2, (-(s + mu) / 2).exp() / 2

    def rough_std(self) -> float:
        return min(float(self.sensitivity) / float(self.scale), 1.0)

    def describe(self) -> str:
        return f"Laplace(mu = {show(self.sensitivity)}/{show(self.scale)})"


def _lattice_step(mech: Laplace, direction: str) -> LatticeStep:
    return LaplaceStep(exact_param(mech, "scale"), exact_param(mech, "sensitivity"))


def laplace_cgf(sensitivity: float | Fraction, scale: float | Fraction) -> StepCGF:
    """Lambda(alpha) = log(alpha/(2alpha-1) e^((alpha-1)mu) + (alpha-1)/(2alpha-1) e^(-alpha
    mu)) for the Laplace pair (module docstring)."""
    muf = float(sensitivity) / float(scale)

    def fl(a: float) -> float:
        return logaddexp(math.log(a / (2 * a - 1)) + (a - 1) * muf,
                         math.log((a - 1) / (2 * a - 1)) - a * muf)

    def cert(a: arb) -> arb:
        mu = exact_ball(sensitivity) / exact_ball(scale)
        d = 2 * a - 1
        return (a / d * ((a - 1) * mu).exp() + (a - 1) / d * (-a * mu).exp()).log()

    return StepCGF(fl, cert, False,
                   "Laplace: E_P[(q/p)^alpha] = alpha/(2alpha-1) e^((alpha-1)mu) + "
                   "(alpha-1)/(2alpha-1) e^(-alpha mu), mu = sensitivity/scale exactly")


def _chernoff(mech: Laplace, direction: str) -> StepCGF:
    return laplace_cgf(exact_param(mech, "sensitivity"), exact_param(mech, "scale"))


register_certified(Laplace, CertifiedMechanism(
    "Laplace",
    moments=_moments,
    continuous_parts=_continuous,
    lattice_step=_lattice_step,
    chernoff=_chernoff,
))
