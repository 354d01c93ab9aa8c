r"""The Laplace mechanism.

With sensitivity Delta and scale b, mu = Delta/b and the dominating pair is P = Lap(0, 1),
Q = Lap(mu, 1). The PLLR is L(x) = |x| - |x - mu|: an atom at -mu of mass 1/2 (x <= 0), an atom
at +mu of mass e^{-mu}/2 (x >= mu), and L = 2x - mu with density e^{-x}/2 on 0 < x < mu
(MATH.md section 4; Wang et al., *Analytical Composition of DP via the Edgeworth Accountant*,
arXiv:2206.04236, Section 5). The pair is symmetric.

Cumulants are computed from the law directly: exact atoms plus a composite Gauss-Legendre rule for
the continuous part (the integrand is a polynomial times e^{-x}, so the rule converges to rounding
level), central moments first and then :func:`numeric.moments.cumulants_from_central_moments`.
This is accurate for every mu and every order; the closed forms of MATH.md (e.g.
kappa_2 = 3 - 4 mu e^{-mu} - 2e^{-mu} - e^{-2mu}) cancel catastrophically for small mu and are used
only as test oracles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import check_positive
from ..moments import cumulants_from_central_moments, gauss_legendre_panels
from .base import Mechanism, PLLRCumulants, register_mechanism, symmetric_cumulants

__all__ = ["Laplace"]


def _laplace_kl(mu: float) -> float:
    """KL(P||Q) = mu - 1 + e^{-mu} = mu + expm1(-mu), with a series where it cancels."""
    if mu < 1e-3:
        return mu * mu * (0.5 - mu * (1.0 / 6.0 - mu * (1.0 / 24.0 - mu / 120.0)))
    return mu + math.expm1(-mu)


@register_mechanism(
    "laplace", {"scale": "scale", "sensitivity": "sensitivity"}, required=("scale",)
)
@dataclass(frozen=True)
class Laplace(Mechanism):
    """Laplace mechanism Lap(0, scale) on a query of L1 sensitivity ``sensitivity``.

    Args:
        scale: Laplace scale b, finite and > 0.
        sensitivity: L1 sensitivity, finite and > 0.
    """

    scale: float
    sensitivity: float = 1.0
    lattice = True  # atoms at +-mu

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_positive("scale", self.scale))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))

    @property
    def mu(self) -> float:
        """Standardized shift mu = sensitivity / scale (the mechanism is mu-pure-DP)."""
        return self.sensitivity / self.scale

    def _cumulants(self, order: int) -> PLLRCumulants:
        mu = self.mu
        mean = -_laplace_kl(mu)
        panels = max(1, math.ceil(mu / 2.0))
        x, w = gauss_legendre_panels(0.0, mu, panels)
        dens = 0.5 * np.exp(-x) * w
        u = 2.0 * x - mu - mean
        lo, hi = -mu - mean, mu - mean
        m_hi = 0.5 * math.exp(-mu)
        central = np.array(
            [0.5 * lo**k + m_hi * hi**k + float(np.dot(dens, u**k)) for k in range(1, order + 1)]
        )
        return symmetric_cumulants(cumulants_from_central_moments(mean, central))

    def exact_family(self) -> None:
        return None
