r"""Certified knowledge of the Gaussian mechanism, :math:`\mu = \Delta/\sigma`.

The dominating pair is P = N(0, 1), Q = N(mu, 1) with PLLR :math:`L = \mu x - \mu^2/2` (Dong,
Roth, Su, *Gaussian Differential Privacy*, arXiv:1905.02383 = GDP, Sec. 2). Everything below
is an Arb enclosure (mu = sensitivity/sigma exactly from the binary64 inputs):

* **Moments** (:mod:`certify.moments`): X ~ N(-mu^2/2, mu^2), Y ~ N(mu^2/2, mu^2), so
  :math:`\kappa_{\ge3} = 0`, and the absolute normal moments :math:`E|Z| = s\sqrt{2/\pi}`,
  :math:`E|Z|^3 = 2s^3\sqrt{2/\pi}` for Z ~ N(0, s^2) (Winkelbauer, *Moments and absolute
  moments of the normal distribution*, arXiv:1209.4340).
* **Continuous part** (:mod:`certify.eeai`): N(m, mu^2) has density >= phi(1)/mu on
  [m - mu, m + mu].
* **Lattice step** (:mod:`certify.lattice`): :math:`L \ge s \iff x \ge x_s = s/\mu + \mu/2`;
  :math:`\delta_1(\varepsilon) = \bar\Phi(\varepsilon/\mu - \mu/2) - e^\varepsilon
  \bar\Phi(\varepsilon/\mu + \mu/2)` (GDP Cor. 2.13), :math:`T_P = \bar\Phi(x_s)`,
  :math:`T_Q = \bar\Phi(x_s - \mu)`.
* **Chernoff** (:mod:`certify.chernoff`): :math:`\Lambda(\alpha) = \alpha(\alpha-1)\mu^2/2`
  (:func:`certify.cgf.gaussian_cgf`); the pair is symmetric.
* **Exact profile** (:mod:`certify.exact`): mu-GDP with mu = sensitivity/sigma as an exact
  rational (GDP Cor. 3.3 composes them).
* **Normal PLLR**: yes, so the EEAI's uniform error is 0 (``exact-normal``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from flint import arb

from numeric.mechanisms.gaussian import Gaussian

from ..cgf import StepCGF, gaussian_cgf
from ..exact_model import ExactComposition
from ..pllr import ContinuousPart, LawMoments, PLLRMoments, symmetric_pair
from ..registry import CertifiedMechanism, register_certified
from ..special import exact_ball, exact_param, ipow, lower_end, normal_pdf, normal_sf, show
from ..steps import LatticeStep

__all__ = ["GaussianStep", "gaussian_law", "normal_continuous_part"]


def gaussian_law(mu: arb) -> LawMoments:
    """X ~ N(-mu^2/2, mu^2): kappa_{>=3} = 0, E|Z| = mu sqrt(2/pi), E|Z|^3 = 2 mu^3 sqrt(2/pi)."""
    s2p = (2 / arb.pi()).sqrt()
    return LawMoments(-mu * mu / 2, mu * mu, arb(0), arb(0), mu * s2p, 2 * ipow(mu, 3) * s2p)


def _mu(mech: Gaussian) -> arb:
    """mu = sensitivity / sigma from the exact parameters (typed decimals where recorded)."""
    return exact_ball(exact_param(mech, "sensitivity")) / exact_ball(exact_param(mech, "sigma"))


def _moments(mech: Gaussian) -> PLLRMoments:
    mu = _mu(mech)
    return symmetric_pair(
        gaussian_law(mu),
        "closed form: X ~ N(-mu^2/2, mu^2), Y ~ N(mu^2/2, mu^2), mu = sensitivity/sigma; "
        "absolute normal moments E|Z| = s sqrt(2/pi), E|Z|^3 = 2 s^3 sqrt(2/pi)",
    )


def normal_continuous_part(mu: arb, provenance: str) -> ContinuousPart:
    """N(m, mu^2) has density >= phi(1)/mu on [m - mu, m + mu] (both laws of a normal PLLR)."""
    cand = ((lower_end(normal_pdf(arb(1)) / mu), lower_end(2 * mu)),)
    return ContinuousPart(cand, cand, provenance)


def _continuous(mech: Gaussian) -> ContinuousPart:
    mu = _mu(mech)
    return normal_continuous_part(mu, "normal PLLR: density >= phi(1)/mu on [m - mu, m + mu]")


@dataclass(frozen=True)
class GaussianStep(LatticeStep):
    """Gaussian pair with mu = sensitivity / sigma."""

    sigma: float | Fraction
    sensitivity: float | Fraction = 1.0

    def mu(self) -> arb:
        """mu = sensitivity / sigma (Arb, exact inputs)."""
        return exact_ball(self.sensitivity) / exact_ball(self.sigma)

    def delta(self, eps: arb) -> arb:
        mu = self.mu()
        return normal_sf(eps / mu - mu / 2) - eps.exp() * normal_sf(eps / mu + mu / 2)

    def tails(self, s: arb) -> tuple[arb, arb]:
        mu = self.mu()
        x = s / mu + mu / 2
        return normal_sf(x - mu), normal_sf(x)

    def rough_std(self) -> float:
        return float(self.sensitivity) / float(self.sigma)

    def describe(self) -> str:
        return f"Gaussian(mu = {show(self.sensitivity)}/{show(self.sigma)})"


def _lattice_step(mech: Gaussian, direction: str) -> LatticeStep:
    return GaussianStep(exact_param(mech, "sigma"), exact_param(mech, "sensitivity"))


def _chernoff(mech: Gaussian, direction: str) -> StepCGF:
    return gaussian_cgf(lambda: _mu(mech) ** 2, mech.mu ** 2,
                        "Gaussian: Lambda(alpha) = alpha(alpha-1)mu^2/2, mu = "
                        "sensitivity/sigma exactly")


def _exact_profile(mech: Gaussian, count: int) -> ExactComposition:
    return ExactComposition(
        gaussian=((mech.exact_value("sensitivity") / mech.exact_value("sigma"), count),),
        notes=("Gaussian mu_i = sensitivity_i / sigma_i exactly (the typed decimals, else the "
               "binary64 inputs)",),
    )


register_certified(Gaussian, CertifiedMechanism(
    "Gaussian",
    moments=_moments,
    continuous_parts=_continuous,
    lattice_step=_lattice_step,
    chernoff=_chernoff,
    exact_profile=_exact_profile,
    normal_pllr=lambda mech: True,
))
