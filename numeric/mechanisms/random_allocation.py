r"""Random allocation ("shuffling"): one epoch of M rounds in which each example is used once.

The worst-case pair of van Dijk and Ertan, *Trade-off Functions for DP-SGD with Subsampling
based on Random Shuffling* (arXiv:2605.06259, Sec. 3; v3: "... based on Random Allocation"),
under add/remove adjacency: one epoch of M = ``rounds`` Gaussian rounds with noise multiplier
sigma, the differing example allocated to exactly one uniformly random round,

* P = H0: all M rounds N(0, 1) (the example absent);
* Q = H1: one uniformly random round N(1/sigma, 1), the others N(0, 1).

The likelihood ratio is q/p = S/M with S = sum_j Y_j, Y_j = exp(X_j/sigma - 1/(2 sigma^2))
i.i.d. lognormal under P (E Y = 1, Var Y = e^{1/sigma^2} - 1), so the PLLR is
L = log(S/M). Under Q the law of S is the size-biased one: E_Q g(S) = E_P[(S/M) g(S)].

Moments. E_P[(S/M)^t] is finite for every real t: for t >= 1, (S/M)^t <= M^{-1} sum Y_j^t
(convexity) and lognormals have all moments; for 0 <= t <= 1 it is <= 1 (Jensen); for t < 0,
S >= Y_1 and E Y_1^t = e^{t(t-1)/(2 sigma^2)} < inf. So the CGF K_X(t) = log E_P (S/M)^t is
finite on the whole real line, K_Y(t) = K_X(t + 1), and all cumulants of L exist under P and Q.

At M = 1 the pair is the Gaussian mechanism with mu = 1/sigma (closed-form cumulants). For
M >= 2 the cumulants are computed from the law of L by the Fourier inversion of
:mod:`numeric.shuffle.law` (quadrature; the accuracy is stated there); where that cannot be done
within its budget, :class:`~numeric.errors.NotApplicable` is raised. L is unbounded in both
directions (S ranges over (0, inf)): ``pllr_sup`` = +inf, ``pllr_inf`` = -inf.

The pair is *not* symmetric: both orders (H0, H1) and (H1, H0) are accounted for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._validation import check_count, check_positive
from ..errors import NotApplicable
from .base import Mechanism, PLLRCumulants, register_mechanism

__all__ = ["MAX_ROUNDS", "RandomAllocation"]

MAX_ROUNDS = 10**9
"""Largest number of rounds accepted (the Fourier inversion of numeric.shuffle budgets beyond)."""

_MIN_SIGMA = 0.05  # below it e^{1/sigma^2} overflows (1/0.05^2 = 400 < 709)


@register_mechanism(
    "random-allocation", {"sigma": "sigma", "rounds": "rounds"}, required=("sigma", "rounds"),
    help={"sigma": "noise multiplier (noise std / clipping norm, >= 0.05)",
          "rounds": "rounds per epoch M (each example in exactly one uniformly random round)"},
    examples=({"sigma": 1.0, "rounds": 1}, {"sigma": 2.5, "rounds": 1},
              {"sigma": 2.0, "rounds": 1000}),
)
@dataclass(frozen=True)
class RandomAllocation(Mechanism):
    r"""One epoch of random allocation (module docstring): P = H0, Q = H1, L = log(S/M).

    Args:
        sigma: Noise multiplier, finite and >= 0.05.
        rounds: Rounds per epoch M, a whole number in [1, 10^9].
    """

    sigma: float
    rounds: int
    symmetric: ClassVar[bool] = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_positive("sigma", self.sigma))
        object.__setattr__(self, "rounds", check_count("rounds", self.rounds,
                                                       maximum=MAX_ROUNDS))
        if not (self.sigma >= _MIN_SIGMA):
            raise ValueError(f"sigma must be >= {_MIN_SIGMA} (e^(1/sigma^2) overflows below), "
                             f"got {self.sigma!r}")

    @property
    def mu(self) -> float:
        """mu = 1/sigma, the shift of the one round that holds the example."""
        return 1.0 / self.sigma

    @property
    def variance(self) -> float:
        r"""v = Var Y = e^{1/sigma^2} - 1 (the chi-square divergence of one round)."""
        return math.expm1(self.mu**2)

    def _cumulants(self, order: int) -> PLLRCumulants:
        if self.rounds == 1:  # the Gaussian mechanism with mu = 1/sigma (GDP Thm 2.7)
            x = np.zeros(order)
            x[0] = -0.5 * self.mu**2
            if order >= 2:
                x[1] = self.mu**2
            sign = (-1.0) ** np.arange(1, order + 1)
            return PLLRCumulants(x=tuple(x.tolist()), y=tuple((sign * x).tolist()))
        try:
            from ..shuffle.law import pllr_cumulants
        except ImportError:  # pragma: no cover - the law module ships with numeric
            raise NotApplicable("random-allocation cumulants need numeric.shuffle.law") from None
        return pllr_cumulants(self.sigma, self.rounds, order)

    def pllr_inf(self) -> float:
        """-inf: S/M -> 0 as every round's noise -> -inf."""
        return -math.inf

    def exact_family(self) -> tuple[str, float] | None:
        """The Gaussian family (mu^2 = 1/sigma^2) at one round; else None."""
        return ("gaussian", self.mu**2) if self.rounds == 1 else None

    def clt_mu_squared(self) -> float:
        r"""(e^{1/sigma^2} - 1)/M: the GDP limit of Ertan and van Dijk (arXiv:2610.09651),
        mu^2 = E (e^{1/sigma^2} - 1)/M over E epochs."""
        return self.variance / self.rounds

    def describe(self) -> str:
        return f"random allocation (sigma={self.sigma:g}, rounds={self.rounds})"
