r"""The Gaussian mechanism.

With sensitivity Delta and noise sigma, mu = Delta/sigma and the dominating pair is
P = N(0, 1), Q = N(mu, 1); the PLLR is L(x) = mu x - mu^2/2, so
X ~ N(-mu^2/2, mu^2), Y ~ N(mu^2/2, mu^2) and all cumulants of order >= 3 vanish (GDP, Dong, Roth,
Su 2022, Thm 2.7). Composition is exact: G_mu1 (x) G_mu2 = G_sqrt(mu1^2 + mu2^2) (GDP Cor. 3.3).

CGF of Y = L under Q (the saddlepoint accountant; Y ~ N(mu^2/2, mu^2)):
:math:`K_Y(t) = \mu^2 t(t+1)/2`, so :math:`K_Y' = \mu^2(t + 1/2)`, :math:`K_Y'' = \mu^2` and the
higher derivatives vanish (the tilted law of a Gaussian is Gaussian).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._validation import check_positive
from .base import Mechanism, PLLRCumulants, register_mechanism, symmetric_cumulants

_MAX_MU = 1e6  # the documented domain: mu-GDP with mu <= 1e6

__all__ = ["Gaussian", "gaussian_cgf_batch"]


def gaussian_cgf_batch(mu: float, t: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    r"""K_Y = :math:`\mu^2 t(t+1)/2` and :math:`K_Y^{(1..n)}` at every tilt of ``t`` (module
    docstring; shared with the subsampled Gaussian at rate 1).

    Args:
        mu: The GDP parameter mu.
        t: Tilts (1-D float array).
        n: Highest derivative (>= 1).

    Returns:
        ``(K, D)`` with D[i, j - 1] = K^{(j)}(t_i).
    """
    mu2 = mu * mu
    der = np.zeros((t.size, n))
    der[:, 0] = mu2 * (t + 0.5)
    if n > 1:
        der[:, 1] = mu2
    return 0.5 * mu2 * t * (t + 1.0), der


@register_mechanism(
    "gaussian", {"sigma": "sigma", "sensitivity": "sensitivity"}, required=("sigma",),
    help={"sigma": "Gaussian noise standard deviation (> 0)",
          "sensitivity": "L2 sensitivity of the query (> 0; default 1)"},
    examples=({"sigma": 1.0}, {"sigma": 3.0, "sensitivity": 2.0}, {"sigma": 40.0}),
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
    cgf_closed_form: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive("sigma", self.sigma))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        mu = self.sensitivity / self.sigma
        if not (mu <= _MAX_MU):  # eps ~ mu^2/2 > 5e11 beyond it; mu^2 overflows near 1e154
            raise ValueError(
                f"sigma must be >= sensitivity / {_MAX_MU:g} (mu = sensitivity/sigma <= "
                f"{_MAX_MU:g}), got sigma={self.sigma!r}, sensitivity={self.sensitivity!r}"
            )

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

    def cgf_batch(self, t: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """K_Y(t) = mu^2 t (t + 1)/2 and its derivatives (:func:`gaussian_cgf_batch`)."""
        return gaussian_cgf_batch(self.mu, t, n)

    def exact_family(self) -> tuple[str, float]:
        return ("gaussian", self.mu**2)

    def clt_mu_squared(self) -> float:
        return self.mu**2
