r"""Certified one-epoch privacy profile of random allocation: delta(eps) in both orders, TV.

Pair (van Dijk and Ertan, arXiv:2605.06259, Sec. 3): P = H0, Q = H1, likelihood ratio
:math:`e^L = S/M` (:mod:`certify.shuffle.law`). With :math:`F(c) = E_P(c - S/M)_+`:

* order ``P||Q`` (P = H0): :math:`\delta(\varepsilon) = E_{H0}(S/M - e^\varepsilon)_+ =
  1 - e^\varepsilon + F(e^\varepsilon)` (E S = M), non-decreasing in S, so only the part of
  the law of S below :math:`M e^\varepsilon` is ever needed (the heavy right tail is never
  convolved);
* order ``Q||P`` (P = H1): :math:`\delta(\varepsilon) = E_{H1}(M/S - e^\varepsilon)_+ =
  E_{H0}(1 - e^\varepsilon S/M)_+ = e^\varepsilon F(e^{-\varepsilon})` (change of measure
  dH1/dH0 = S/M), non-increasing in S;
* total variation :math:`= \delta(0) = F(1)` in either order (never :math:`E|S' - M|/(2M)` of an
  approximating law, which is not monotone in the approximation).

**Enclosure.** :class:`OneEpoch` holds the upper and lower laws of :mod:`certify.shuffle.law`,
so for :math:`0 < c \le c_{\max}`: :math:`F_-(c) \le F(c) \le F_+(c)` with
:math:`F_\pm(c) = 2^{-B}(c W_\pm(c) - X_\pm(c)/M) (+\, c\,2^{-B}\Delta_U)`, W and X the
exact prefix mass and first moment of the law's atoms below Mc (exact rationals, converted to
Arb outward). F is non-decreasing in c, so a ball c is evaluated at its upper end for
:math:`F_+` and its lower end for :math:`F_-`. Beyond the law's range (:math:`c > c_{\max}`):
``P||Q`` delta is non-increasing in eps, so it is at most its upper bound at :math:`c_{\max}`,
and at least 0; ``Q||P`` at :math:`\varepsilon < -\log c_{\max}` is :math:`1 - e^\varepsilon +
e^\varepsilon\,\delta_{P\|Q}(-\varepsilon)` exactly (:math:`F(c) = c - 1 + E(S/M - c)_+`).

**Closed-form side bound** (convexity of :math:`x\mapsto(x - c)_+` with :math:`S/M` the
mean of the :math:`Y_j`, Jensen):
:math:`E(S/M - c)_+ \le E(Y - c)_+ = \bar\Phi(z - 1/\sigma) - c\bar\Phi(z)`,
:math:`z = \sigma\log c + 1/(2\sigma)` (used beyond :math:`c_{\max}`); and the trivial
:math:`\max(0, 1 - e^\varepsilon) \le \delta \le 1`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from flint import arb

from ..bound import Bound
from ..engine import Endpoint, endpoints, to_arb, workprec
from ..special import normal_sf
from .law import BITS, LatticeLaw, level_zero, sum_laws

__all__ = ["DIRECTIONS", "OneEpoch", "call_lower_law", "one_epoch", "one_epoch_delta",
           "one_epoch_tv", "put_lower_law"]

DIRECTIONS = ("P||Q", "Q||P")
PREC = BITS + 96
"""Arb working precision (bits)."""

METHOD = "shuffle-lattice"
ASSUMPTIONS = (
    "random allocation, one epoch: P = H0 (all M rounds N(0,1)), Q = H1 (one uniformly random "
    "round N(1/sigma,1)); likelihood ratio S/M, S a sum of M i.i.d. lognormals "
    "(van Dijk and Ertan, arXiv:2605.06259, Sec. 3)",
    "law of S enclosed in convex order (spread / Jensen merge / safe moves), fixed-point FLINT "
    "convolution; proof in certify.shuffle.law",
)

_GAMMA = 1.0 / 32.0  # level-0 grid / sd(Y)
_CAP_UNITS = 1 << 16  # at most this many level-0 grid points
_TAIL_Z = 10.5  # cap C where E(Y - C)_+ ~ Phi-bar(10.5) ~ 4e-26 (when affordable)


def _frac(e: Endpoint) -> Fraction:
    return Fraction(e.man) * Fraction(2) ** e.exp


def _ball(q: Fraction) -> arb:
    return arb(q.numerator) / q.denominator


@dataclass(frozen=True)
class _Prefix:
    """Exact prefix sums of a lattice law: mass and first moment (grid units) below each index."""

    law: LatticeLaw
    mass: tuple[int, ...] = field(repr=False)
    moment: tuple[int, ...] = field(repr=False)

    @classmethod
    def of(cls, law: LatticeLaw) -> _Prefix:
        w, x = [0], [0]
        for i, m in enumerate(law.masses):
            w.append(w[-1] + m)
            x.append(x[-1] + m * (law.offset + i))
        return cls(law, tuple(w), tuple(x))

    def put(self, c: Fraction, rounds: int) -> Fraction:
        r""":math:`2^{-B}(\sum_{x_i < Mc} w_i (c - x_i/M) + c\Delta)`, exactly."""
        law = self.law
        step = Fraction(2) ** law.e
        k = math.ceil(rounds * c / step) - law.offset  # atoms with index < offset + k are < Mc
        k = min(max(k, 0), len(law.masses))
        val = c * self.mass[k] - step * self.moment[k] / rounds + c * law.dropped
        return val / (1 << BITS)


@dataclass(frozen=True)
class OneEpoch:
    r"""Certified one-epoch profile for (sigma, M) (module docstring).

    Attributes:
        sigma: Noise multiplier (binary64 or exact rational).
        rounds: M.
        c_max: Largest c at which the put bracket holds (exact rational).
        upper: Prefix sums of the upper law.
        lower: Prefix sums of the lower law.
        e0: Level-0 grid exponent.
    """

    sigma: float | Fraction
    rounds: int
    c_max: Fraction
    upper: _Prefix = field(repr=False)
    lower: _Prefix = field(repr=False)
    e0: int = 0

    def _sigma(self) -> arb:
        s = self.sigma
        return _ball(s) if isinstance(s, Fraction) else arb(s)

    def put_bounds(self, c: arb) -> tuple[arb, arb]:
        r"""(lower, upper) exact balls with :math:`F_-(c_{lo}) \le F(c) \le F_+(c_{hi})`.

        Raises:
            ValueError: if c is not positive or exceeds c_max.
        """
        lo, hi = endpoints(c)
        c_lo, c_hi = _frac(lo), _frac(hi)
        if not (c_lo > 0 and c_hi <= self.c_max):
            raise ValueError(f"c must lie in (0, c_max = {float(self.c_max)}], got {c}")
        f_lo = max(Fraction(0), self.lower.put(c_lo, self.rounds))
        f_hi = self.upper.put(c_hi, self.rounds)
        return _ball(f_lo), _ball(f_hi)

    def _z(self, c: arb) -> arb:
        s = self._sigma()
        return s * c.log() + 1 / (2 * s)

    def _jensen_call(self, c: arb) -> arb:
        """E(Y - c)_+ = Phi-bar(z - 1/sigma) - c Phi-bar(z), an upper bound on E(S/M - c)_+."""
        z = self._z(c)
        return normal_sf(z - 1 / self._sigma()) - c * normal_sf(z)

    def _call_upper(self, c: arb) -> arb:
        r"""Upper end of :math:`E(S/M - c)_+` (the ``P||Q`` delta at eps = log c), any c > 0."""
        c_hi = _frac(endpoints(c)[1])
        if c_hi <= self.c_max:
            f_up = self.put_bounds(c)[1]
            return arb(min((1 - arb(c.lower()) + f_up).upper(), arb(1).upper()))
        # The call price is non-increasing in the strike, so any exact c' <= c_max below c
        # bounds it too.  c_max is dyadic, but at M c_max ~ 1e53 it needs more bits than PREC:
        # its ball's upper end then exceeds c_max (fuzz seed 9090), so use the ball's lower end.
        cm = arb(_ball(self.c_max).lower())
        up = 1 - cm + self.put_bounds(cm)[1]
        jc = self._jensen_call(arb(c.lower()))
        return arb(min(up.upper(), jc.upper(), arb(1).upper()))

    def delta(self, eps: arb, direction: str) -> arb:
        r"""Enclosure of the one-epoch delta(eps) in ``direction`` (module docstring)."""
        with workprec(PREC):
            t = eps.exp()
            if direction == "P||Q":
                up = self._call_upper(t)
                c_lo = _frac(endpoints(t)[0])
                if _frac(endpoints(t)[1]) <= self.c_max:
                    lo = 1 - arb(t.upper()) + self.put_bounds(t)[0]
                else:
                    lo = arb(0)
                _ = c_lo
            elif direction == "Q||P":
                y = (-eps).exp()
                if _frac(endpoints(y)[1]) <= self.c_max:
                    f_lo, f_hi = self.put_bounds(y)
                    up = arb((t * f_hi).upper())
                    lo = arb((t * f_lo).lower())
                else:
                    up = arb((1 - t + t * self._call_upper(y)).upper())
                    lo = arb((1 - t).lower())
            else:
                raise ValueError(f"direction must be 'P||Q' or 'Q||P', got {direction!r}")
            floor = 1 - t
            if floor.lower() > lo.lower():
                lo = arb(floor.lower())
            if lo.lower() < 0:
                lo = arb(0)
            if up.upper() > 1:
                up = arb(1)
            if up.upper() < lo.lower():  # impossible unless a bug
                raise ArithmeticError("shuffle: empty delta enclosure")
            return arb(lo.lower()).union(arb(up.upper()))

    def tv(self) -> arb:
        """Enclosure of the total variation distance F(1) = E|S - M|/(2M)."""
        with workprec(PREC):
            lo, hi = self.put_bounds(arb(1))
            return lo.union(hi)


def _params(sigma: float, rounds: int) -> tuple[int, int, int, Fraction]:
    """(e0, n1, cap, limit): level-0 grid exponent, fine-knot range, cap (units of g0), M c_max.

    Floating-point choices: they affect only tightness and cost, never validity.
    """
    v = math.expm1(1.0 / sigma**2)
    sd = math.sqrt(v)
    e0 = round(math.log2(_GAMMA * sd))
    g0 = 2.0**e0
    log_y1 = (4.0 - 0.5 / sigma) / sigma  # P(Y > Y1) = Phi-bar(4) ~ 3e-5
    n1 = max(16, math.ceil(math.exp(min(log_y1, 700.0)) / g0))
    log_c = (_TAIL_Z + 0.5 / sigma) / sigma
    body = rounds + 40.0 * math.sqrt(rounds * v)
    want = min(math.exp(min(log_c, 700.0)), body + math.exp(min(log_c, 700.0)))
    cap = max(n1, min(_CAP_UNITS, math.ceil(want / g0)))
    n1 = min(n1, cap)
    limit_f = body + cap * g0
    limit = Fraction(math.ceil(limit_f * 64), 64)
    return e0, n1, cap, limit


def _check(sigma, rounds) -> None:
    if not (float(sigma) > 0 and math.isfinite(float(sigma))):
        raise ValueError(f"sigma must be a finite number > 0, got {sigma!r}")
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be an integer >= 1, got {rounds!r}")


@lru_cache(maxsize=4)
def level_zero_laws(sigma: float | Fraction, rounds: int):
    """(e0, M c_max, (put-upper, put-lower, call-lower level-0 laws)) for (sigma, M) (cached)."""
    e0, n1, cap, limit = _params(float(sigma), rounds)
    s = _ball(sigma) if isinstance(sigma, Fraction) else arb(sigma)
    return e0, limit, level_zero(s, e0, n1, cap, PREC)


@lru_cache(maxsize=4)
def call_lower_law(sigma: float | Fraction, rounds: int) -> tuple[LatticeLaw, Fraction]:
    r"""The call-lower law of S (:mod:`certify.shuffle.law`) and its range limit
    :math:`M c_{\max}`: :math:`\int g\,dD' \le E\,g(S)` for convex non-decreasing g >= 0.

    Raises:
        ValueError: on bad sigma or rounds.
    """
    _check(sigma, rounds)
    e0, limit, laws = level_zero_laws(sigma, rounds)
    return sum_laws(laws[2], rounds, limit, e0), limit


@lru_cache(maxsize=4)
def put_lower_law(sigma: float | Fraction, rounds: int) -> LatticeLaw:
    """The put-lower law of S (:mod:`certify.shuffle.law`).

    Raises:
        ValueError: on bad sigma or rounds.
    """
    return one_epoch(sigma, rounds).lower.law


@lru_cache(maxsize=4)
def one_epoch(sigma: float | Fraction, rounds: int) -> OneEpoch:
    """The certified one-epoch profile of random allocation (cached).

    Args:
        sigma: Noise multiplier > 0 (a binary64 number, or an exact rational).
        rounds: M >= 1.

    Returns:
        An :class:`OneEpoch`.

    Raises:
        ValueError: on bad sigma or rounds.
    """
    _check(sigma, rounds)
    e0, limit, (up0, lo0, _) = level_zero_laws(sigma, rounds)
    up = sum_laws(up0, rounds, limit, e0)
    lo = sum_laws(lo0, rounds, limit, e0)
    c_max = Fraction(math.floor(limit / rounds * (1 << 40)), 1 << 40)  # dyadic, <= limit / M
    return OneEpoch(sigma, rounds, c_max, _Prefix.of(up), _Prefix.of(lo), e0)


def _bound(ball: arb, quantity_inputs: dict, direction: str, extra: tuple[str, ...] = ()) -> Bound:
    lo, hi = endpoints(ball)
    return Bound("delta", lo, hi, METHOD, METHOD, PREC, ASSUMPTIONS + extra, direction, (),
                 quantity_inputs)


def one_epoch_delta(sigma: float, rounds: int, eps, direction: str = "P||Q") -> Bound:
    """Certified one-epoch delta(eps) of random allocation in pair order ``direction``.

    Args:
        sigma: Noise multiplier > 0.
        rounds: Rounds per epoch M >= 1.
        eps: eps (any real: float taken exactly, int, decimal string or Arb ball).
        direction: ``"P||Q"`` (P = H0) or ``"Q||P"`` (P = H1).

    Returns:
        A :class:`~certify.bound.Bound` (quantity ``"delta"``).

    Raises:
        ValueError: on bad input.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    e = to_arb("eps", eps)
    ball = one_epoch(sigma, rounds).delta(e, direction)
    return _bound(ball, {"sigma": float(sigma), "rounds": rounds, "eps": str(eps)}, direction)


def one_epoch_tv(sigma: float, rounds: int) -> Bound:
    """Certified one-epoch total variation distance E|S - M|/(2M) = delta(0).

    Raises:
        ValueError: on bad input.
    """
    ball = one_epoch(sigma, rounds).tv()
    return _bound(ball, {"sigma": float(sigma), "rounds": rounds, "eps": "0"}, "P||Q",
                  ("total variation = delta(0) in either order",))
