r"""Single-step privacy-loss laws in Arb for the lattice method (:mod:`certify.lattice`).

A *lattice step* encloses, for one mechanism in one pair order (P, Q) with PLLR
:math:`L = \log(dQ/dP)` (values in :math:`[-\infty, +\infty]`):

* the hockey-stick curve :math:`\delta_1(\varepsilon) = Q(L > \varepsilon) - e^\varepsilon
  P(L > \varepsilon)` for every real eps (MATH.md section 1), used by the upper bound;
* the tails :math:`T_Q(s) = Q(L \ge s)` and :math:`T_P(s) = P(L \ge s)` at grid points s, used by
  the lower bound (cell masses of the binned test);
* the masses at the ends, :math:`Q(L = +\infty)` and :math:`P(L = -\infty)`, which make the grid
  range tests of Lemma 2 exact for pairs that are not mutually absolutely continuous (ApproxDP).

Every method returns Arb balls that contain the exact value. Grid points and the points of the
range search are exact dyadic numbers; a step may compare them with its breakpoints in exact
rational arithmetic (:func:`exact_value`), and raises ``ArithmeticError`` for a non-exact
argument where that comparison would be needed (never guessed).

Steps are hashable frozen dataclasses (they key the lattice caches). :func:`lattice_step` is a
:func:`functools.singledispatch` on the mechanism class: a new mechanism registers one factory
``register_lattice_step(MechanismClass)(lambda mechanism, direction: ...)`` next to its own code
(derive registers its compiled mechanisms this way; certify never imports derive).

Built-in steps (:math:`\bar\Phi(x) = \tfrac12\operatorname{erfc}(x/\sqrt2)`, :math:`\Phi = 1 -
\bar\Phi`):

* Gaussian, :math:`\mu = \Delta/\sigma`, P = N(0, 1), Q = N(mu, 1): :math:`L \ge s \iff x \ge x_s
  = s/\mu + \mu/2`; :math:`\delta_1(\varepsilon) = \bar\Phi(\varepsilon/\mu - \mu/2) -
  e^\varepsilon \bar\Phi(\varepsilon/\mu + \mu/2)` (GDP Cor. 2.13), :math:`T_P =
  \bar\Phi(x_s)`, :math:`T_Q = \bar\Phi(x_s - \mu)`.
* Poisson-subsampled Gaussian, order (P, Q), P = N(0,1), Q = (1-p)N(0,1) + pN(mu,1): L(x) =
  log(1 - p + p e^{mu x - mu^2/2}) is increasing with range :math:`(\log(1-p), \infty)`. For
  :math:`e^\varepsilon \le 1 - p`, :math:`\delta = 1 - e^\varepsilon`; otherwise with
  :math:`x_\varepsilon = (\log((e^\varepsilon - 1 + p)/p) + \mu^2/2)/\mu`,
  :math:`\delta = (1 - p - e^\varepsilon)\bar\Phi(x_\varepsilon) + p \bar\Phi(x_\varepsilon -
  \mu)`; :math:`T_P = \bar\Phi(x_s)`, :math:`T_Q = (1-p)\bar\Phi(x_s) + p\bar\Phi(x_s - \mu)`.
  Order (Q, P): :math:`\delta' = 0` for :math:`e^{-\varepsilon} \le 1 - p`, else with
  :math:`x = x_{-\varepsilon}`, :math:`\delta' = (1 - e^\varepsilon(1-p))\Phi(x) -
  e^\varepsilon p\,\Phi(x - \mu)`; :math:`L' = -L \ge s \iff x \le x_{-s}`. Rate 1 is the
  Gaussian with :math:`\mu = 1/\sigma`.
* Laplace, :math:`\mu = \Delta/b`, P = Lap(0, 1), Q = Lap(mu, 1): :math:`L = |x| - |x - \mu|`
  has atoms at :math:`-\mu` (Q-mass :math:`e^{-\mu}/2`, P-mass 1/2) and :math:`+\mu` (Q-mass
  1/2, P-mass :math:`e^{-\mu}/2`) and equals :math:`2x - \mu` on :math:`0 < x < \mu`. For
  :math:`-\mu < s \le \mu`: :math:`T_Q(s) = 1 - \tfrac12 e^{(s - \mu)/2}`, :math:`T_P(s) =
  \tfrac12 e^{-(s + \mu)/2}`; both are 1 for :math:`s \le -\mu` and 0 for :math:`s > \mu`. Hence
  :math:`\delta_1(\varepsilon) = 1 - e^{(\varepsilon - \mu)/2}` on :math:`[-\mu, \mu]`, 0 above
  and :math:`1 - e^\varepsilon` below (Wang et al., arXiv:2206.04236, Section 5; the pair is
  symmetric). Breakpoints are located exactly: :math:`s \le -\mu \iff s b \le -\Delta`.
* Randomized response / ApproxDP(eps0, delta0) (GDP Eq. 11, f_{eps,delta} = f_{eps,0} (x)
  f_{0,delta}): under Q, L = +inf with mass delta0, +eps0 with :math:`(1 - \delta_0)
  e^{\varepsilon_0}/(1 + e^{\varepsilon_0})`, -eps0 with :math:`(1 - \delta_0)/(1 +
  e^{\varepsilon_0})`; under P the finite atoms have the masses swapped and L = -inf has mass
  delta0. Randomized response is delta0 = 0. Symmetric.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from fractions import Fraction
from functools import singledispatch
from typing import Any

from flint import arb

from numeric.mechanisms.base import DIRECTION_PQ, DIRECTION_QP
from numeric.mechanisms.gaussian import Gaussian
from numeric.mechanisms.laplace import Laplace
from numeric.mechanisms.randomized_response import ApproxDP, RandomizedResponse
from numeric.mechanisms.subsampled_gaussian import PoissonSubsampledGaussian

from .engine import endpoints

__all__ = [
    "ApproxDPStep",
    "GaussianStep",
    "LaplaceStep",
    "LatticeStep",
    "SubsampledGaussianStep",
    "exact_value",
    "lattice_step",
    "normal_cdf",
    "normal_sf",
    "register_lattice_step",
]


def normal_sf(x: arb) -> arb:
    """Upper tail of N(0, 1): erfc(x / sqrt 2) / 2 (Arb ball)."""
    return (x / arb(2).sqrt()).erfc() / 2


def normal_cdf(x: arb) -> arb:
    """Lower tail of N(0, 1): erfc(-x / sqrt 2) / 2 (Arb ball)."""
    return (-x / arb(2).sqrt()).erfc() / 2


def exact_value(x: arb) -> Fraction:
    """The exact rational value of a zero-radius ball.

    Raises:
        ArithmeticError: if the ball has a positive radius (the value is not known exactly).
    """
    lo, hi = endpoints(x)
    if lo != hi:
        raise ArithmeticError("lattice step: a breakpoint comparison needs an exact argument")
    return Fraction(lo.man) * Fraction(2) ** lo.exp


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


@dataclass(frozen=True)
class GaussianStep(LatticeStep):
    """Gaussian pair with mu = sensitivity / sigma."""

    sigma: float
    sensitivity: float = 1.0

    def mu(self) -> arb:
        return arb(self.sensitivity) / arb(self.sigma)

    def delta(self, eps: arb) -> arb:
        mu = self.mu()
        return normal_sf(eps / mu - mu / 2) - eps.exp() * normal_sf(eps / mu + mu / 2)

    def tails(self, s: arb) -> tuple[arb, arb]:
        mu = self.mu()
        x = s / mu + mu / 2
        return normal_sf(x - mu), normal_sf(x)

    def rough_std(self) -> float:
        return self.sensitivity / self.sigma

    def describe(self) -> str:
        return f"Gaussian(mu = {self.sensitivity!r}/{self.sigma!r})"


@dataclass(frozen=True)
class SubsampledGaussianStep(LatticeStep):
    """Poisson-subsampled Gaussian (mu = 1/sigma, rate p < 1) in order P||Q or Q||P."""

    sigma: float
    rate: float
    swapped: bool = False

    def _x(self, v: arb) -> arb:
        """x with L(x) = log v: (log((v - 1 + p)/p) + mu^2/2)/mu (needs v > 1 - p)."""
        mu = arb(1) / arb(self.sigma)
        p = arb(self.rate)
        return (((v - (1 - p)) / p).log() + mu * mu / 2) / mu

    def delta(self, eps: arb) -> arb:
        p = arb(self.rate)
        keep = 1 - p
        mu = arb(1) / arb(self.sigma)
        if not self.swapped:
            t = eps.exp()
            if t <= keep:
                return 1 - t
            if not t > keep:
                raise ArithmeticError("cannot place e^eps against 1 - p")
            x = self._x(t)
            return (keep - t) * normal_sf(x) + p * normal_sf(x - mu)
        u = (-eps).exp()
        if u <= keep:
            return arb(0)
        if not u > keep:
            raise ArithmeticError("cannot place e^-eps against 1 - p")
        t = eps.exp()
        x = self._x(u)
        return (1 - t * keep) * normal_cdf(x) - t * p * normal_cdf(x - mu)

    def tails(self, s: arb) -> tuple[arb, arb]:
        p = arb(self.rate)
        keep = 1 - p
        mu = arb(1) / arb(self.sigma)
        if not self.swapped:
            t = s.exp()
            if t <= keep:
                return arb(1), arb(1)
            if not t > keep:
                raise ArithmeticError("cannot place e^s against 1 - p")
            x = self._x(t)
            return keep * normal_sf(x) + p * normal_sf(x - mu), normal_sf(x)
        u = (-s).exp()
        if u <= keep:
            return arb(0), arb(0)
        if not u > keep:
            raise ArithmeticError("cannot place e^-s against 1 - p")
        x = self._x(u)
        return normal_cdf(x), keep * normal_cdf(x) + p * normal_cdf(x - arb(1) / arb(self.sigma))

    def rough_std(self) -> float:
        mu = 1.0 / self.sigma
        return math.sqrt(max(self.rate**2 * math.expm1(min(mu * mu, 700.0)), 1e-300))

    def describe(self) -> str:
        order = "Q||P" if self.swapped else "P||Q"
        return f"PoissonSubsampledGaussian(sigma={self.sigma!r}, rate={self.rate!r}) {order}"


@dataclass(frozen=True)
class LaplaceStep(LatticeStep):
    """Laplace pair with mu = sensitivity / scale (symmetric)."""

    scale: float
    sensitivity: float = 1.0

    def _mu(self) -> arb:
        return arb(self.sensitivity) / arb(self.scale)

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
        return min(self.sensitivity / self.scale, 1.0)

    def describe(self) -> str:
        return f"Laplace(mu = {self.sensitivity!r}/{self.scale!r})"


@dataclass(frozen=True)
class ApproxDPStep(LatticeStep):
    """ApproxDP(eps0, delta0) as its dominating pair; randomized response is delta0 = 0."""

    eps0: float
    delta0: float = 0.0

    def _atoms(self) -> tuple[arb, arb]:
        """(Q-mass at +eps0, Q-mass at -eps0) = (1 - delta0) (expit(eps0), expit(-eps0))."""
        e = arb(self.eps0).exp()
        keep = 1 - arb(self.delta0)
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
        d = arb(self.delta0)
        return d, d

    def delta(self, eps: arb) -> arb:
        q, p = self._above(eps, strict=True)
        return arb(self.delta0) + q - eps.exp() * p

    def tails(self, s: arb) -> tuple[arb, arb]:
        q, p = self._above(s, strict=False)
        return arb(self.delta0) + q, p

    def rough_std(self) -> float:
        return max(self.eps0, 1e-3)

    def describe(self) -> str:
        if self.delta0 == 0.0:
            return f"RandomizedResponse(eps0={self.eps0!r})"
        return f"ApproxDP(eps0={self.eps0!r}, delta0={self.delta0!r})"


def _check_direction(direction: str) -> None:
    if direction not in (DIRECTION_PQ, DIRECTION_QP):
        raise ValueError(f"direction must be {DIRECTION_PQ!r} or {DIRECTION_QP!r}, "
                         f"got {direction!r}")


@singledispatch
def lattice_step(mechanism: Any, direction: str = DIRECTION_PQ) -> LatticeStep:
    """The lattice step of ``mechanism`` in pair order ``direction``.

    Args:
        mechanism: A registered mechanism instance.
        direction: ``"P||Q"`` or ``"Q||P"``.

    Returns:
        A :class:`LatticeStep`.

    Raises:
        ValueError: if no step is registered for the mechanism's class, or on a bad direction.
    """
    _check_direction(direction)
    raise ValueError(
        f"lattice: does not apply to {type(mechanism).__name__} (no single-step enclosure "
        "registered; see certify.lattice_steps.register_lattice_step)"
    )


register_lattice_step = lattice_step.register
"""Register a factory ``(mechanism, direction) -> LatticeStep`` for a mechanism class."""


@register_lattice_step(Gaussian)
def _gaussian(mechanism: Gaussian, direction: str = DIRECTION_PQ) -> LatticeStep:
    _check_direction(direction)
    return GaussianStep(mechanism.sigma, mechanism.sensitivity)


@register_lattice_step(PoissonSubsampledGaussian)
def _subsampled(mechanism: PoissonSubsampledGaussian, direction: str = DIRECTION_PQ
                ) -> LatticeStep:
    _check_direction(direction)
    if mechanism.rate == 1.0:
        return GaussianStep(mechanism.sigma)
    return SubsampledGaussianStep(mechanism.sigma, mechanism.rate, direction == DIRECTION_QP)


@register_lattice_step(Laplace)
def _laplace(mechanism: Laplace, direction: str = DIRECTION_PQ) -> LatticeStep:
    _check_direction(direction)
    return LaplaceStep(mechanism.scale, mechanism.sensitivity)


@register_lattice_step(RandomizedResponse)
def _randomized_response(mechanism: RandomizedResponse, direction: str = DIRECTION_PQ
                         ) -> LatticeStep:
    _check_direction(direction)
    return ApproxDPStep(mechanism.eps, 0.0)


@register_lattice_step(ApproxDP)
def _approx_dp(mechanism: ApproxDP, direction: str = DIRECTION_PQ) -> LatticeStep:
    _check_direction(direction)
    return ApproxDPStep(mechanism.eps, mechanism.delta)
