"""Small helpers shared by the paper checks: ball -> exact decimal interval, certified roots."""

from __future__ import annotations

from collections.abc import Callable
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal

from flint import arb

__all__ = ["bound_ball", "certify_root", "dec_interval", "hi", "inside", "lo"]


def _dec(x: arb, digits: int, rounding: str) -> Decimal:
    # arb.mid() / rad() are exact dyadics; str(...) of a zero-radius ball at high digits is exact
    # enough only after outward rounding, so round the exact rational value outward.
    from fractions import Fraction

    m, e = x.man_exp()
    f = Fraction(int(m)) * (Fraction(2) ** int(e)) if e >= 0 else Fraction(int(m), 2 ** int(-e))
    ctx = Context(prec=digits, rounding=rounding)
    return ctx.divide(Decimal(f.numerator), Decimal(f.denominator))


def lo(x: arb, digits: int = 25) -> Decimal:
    """The lower end of a ball rounded down to ``digits`` significant decimals (exact Decimal)."""
    return _dec(arb(x.lower()), digits, ROUND_FLOOR)


def hi(x: arb, digits: int = 25) -> Decimal:
    """The upper end of a ball rounded up to ``digits`` significant decimals (exact Decimal)."""
    return _dec(arb(x.upper()), digits, ROUND_CEILING)


def dec_interval(x: arb, digits: int = 25) -> list[Decimal]:
    """``[lower, upper]`` of a ball as outward-rounded exact decimals."""
    if not x.is_finite():
        raise ValueError("a non-finite ball has no decimal interval")
    return [lo(x, digits), hi(x, digits)]


def inside(x: arb, value: float | Decimal | str, tol: float = 0.0) -> bool:
    """True when ``value`` lies in the ball widened by ``tol`` (a rounded paper value)."""
    v = arb(str(value))
    return bool(arb(x.lower()) - tol <= v) and bool(v <= arb(x.upper()) + tol)


def certify_root(g: Callable[[arb], arb], target: arb, x0: float, decreasing: bool = True,
                 rel: float = 1e-13) -> arb:
    r"""A ball containing the root of g(x) = target, g monotone, from a float guess x0.

    Proof: with g decreasing, g(a) > target and g(b) < target (decided in Arb) put the root in
    (a, b) by the intermediate value theorem; the returned ball is [a, b].

    Raises:
        ArithmeticError: when no bracket around x0 can be verified.
    """
    for h in (rel, rel * 1e3, rel * 1e6, 1e-4, 1e-2):
        w = h * (1 + abs(x0))
        a, b = arb(x0 - w), arb(x0 + w)
        ga, gb = g(a), g(b)
        if not decreasing:
            ga, gb = -ga, -gb
            t = -target
        else:
            t = target
        if ga > t and gb < t:
            return a.union(b)
    raise ArithmeticError(f"could not verify a root bracket around {x0!r}")


def bound_ball(bound) -> arb:
    """The exact interval [lower, upper] of a finite certify ``Bound`` as an Arb ball.

    The ends are exact dyadics (``man * 2**exp``); the ball is rounded outward at the current
    precision, so it contains the bound's interval.
    """
    from fractions import Fraction

    from flint import fmpq

    out = []
    for e in (bound.lower, bound.upper):
        if e.inf:
            raise ValueError("the bound has an infinite end")
        f = Fraction(int(e.man)) * Fraction(2) ** int(e.exp)
        out.append(arb(fmpq(f.numerator, f.denominator)))
    return out[0].union(out[1])
