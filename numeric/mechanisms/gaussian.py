r"""The Gaussian mechanism.

With sensitivity Delta and noise sigma, mu = Delta/sigma and the dominating pair is
P = N(0, 1), Q = N(mu, 1); the PLLR is L(x) = mu x - mu^2/2, so
X ~ N(-mu^2/2, mu^2), Y ~ N(mu^2/2, mu^2) and all cumulants of order >= 3 vanish (GDP, Dong, Roth,
Su 2022, Thm 2.7). Composition is exact: G_mu1 (x) G_mu2 = G_sqrt(mu1^2 + mu2^2) (GDP Cor. 3.3).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_positive
from .base import Mechanism, PLLRCumulants, register_mechanism, symmetric_cumulants

__all__ = ["Gaussian"]


@register_mechanism(
    "gaussian", {"sigma": "sigma", "sensitivity": "sensitivity"}, required=("sigma",)
)
@dataclass(frozen=True)
class Gaussian(Mechanism):
    """Gaussian mechanism N(0, sigma^2) on a query of L2 sensitivity ``sensitivity``.

    Args:
        sigma: Noise standard deviation, finite and > 0.
        sensitivity: L2 sensitivity, finite and > 0.
    """

    sigma: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive("sigma", self.sigma))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))

    @property
    def mu(self) -> float:
        """GDP parameter mu = sensitivity / sigma."""
        return self.sensitivity / self.sigma

    def _cumulants(self, order: int) -> PLLRCumulants:
        x = np.zeros(order)
        x[0] = -0.5 * self.mu**2
        if order >= 2:
            x[1] = self.mu**2
        return symmetric_cumulants(x)

    def exact_family(self) -> tuple[str, float]:
        return ("gaussian", self.mu**2)

    def clt_mu_squared(self) -> float:
        return self.mu**2
