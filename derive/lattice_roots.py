r"""Certified root finding for the lattice step: Newton in midpoint arithmetic, proof in Arb.

The crossing point :math:`x_t` with :math:`L(x_t) = t` of a strictly monotone PLLR is found by
Newton's method from a warm start (:func:`newton_from`) or by safeguarded Newton with a bisection
fallback from a bracket found by outward search (:func:`bracketed_root`), both in midpoint
arithmetic, and then **certified** (:func:`certify_crossing`): exact points :math:`x_l < x_r` with
Arb balls :math:`g(x_l) < 0 < g(x_r)` for the increasing function g = ±(L - t) prove
:math:`x_t \in [x_l, x_r]` (intermediate value theorem). Signs of reals given as balls are
certified by raising the precision (:func:`certified_sign`). Loops are capped; failure raises
``ArithmeticError``, never a guess.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

import sympy as sp
from flint import arb

__all__ = [
    "CERTIFY_TRIES",
    "GUARD_BITS",
    "MAX_PREC",
    "NEWTON_CAP",
    "bracketed_root",
    "certified_sign",
    "certify_crossing",
    "dyadic_ball",
    "finite_ball",
    "newton_from",
    "radius_bits",
    "sympy_rational",
]

GUARD_BITS = 32  # extra bits for internal evaluations
MAX_PREC = 1 << 13  # precision cap of comparisons
NEWTON_CAP = 200
CERTIFY_TRIES = 12


def certified_sign(diff: Callable[[int], arb], proven_zero: Callable[[], bool], wp: int,
                   what: str) -> int:
    """The certified sign of a real given as Arb balls ``diff(prec)``: precision rises (x4, up to
    the cap) until the ball excludes 0; sympy is asked once whether the value is exactly 0.

    Raises:
        ArithmeticError: naming ``what`` if neither settles it at the precision cap.
    """
    prec = wp
    tried_sympy = False
    while prec <= MAX_PREC:
        d = diff(prec)
        if d > 0:
            return 1
        if d < 0:
            return -1
        if not tried_sympy:
            tried_sympy = True
            if proven_zero():
                return 0
        prec *= 4
    raise ArithmeticError(f"lattice: cannot compare {what}")


def finite_ball(x: arb) -> arb:
    """``x`` if it is a finite ball; an Arb nan (e.g. a real power of a ball reaching below 0)
    raises ``ArithmeticError`` instead of reaching the lattice."""
    if not x.is_finite():
        raise ArithmeticError(f"lattice: non-finite enclosure {x}")
    return x


def dyadic_ball(t: Fraction) -> arb:
    """The exact ball of a dyadic rational."""
    num, den = t.numerator, t.denominator
    k = den.bit_length() - 1
    if den != 1 << k:
        raise ArithmeticError(f"lattice: {t} is not dyadic")
    return arb(num) * arb(2) ** (-k)


def sympy_rational(t: Fraction) -> sp.Rational:
    """``t`` as a sympy Rational."""
    return sp.Rational(t.numerator, t.denominator)


def _m(x: arb) -> arb:
    return arb(x.mid())


def _inside(x: arb, a: arb | None, b: arb | None) -> bool:
    return (a is None or x > a) and (b is None or x < b)


def radius_bits(wp: int) -> int:
    """-log2 of the relative radius R of a certified crossing ball for working precision wp (the
    caller's precision is wp - GUARD_BITS): tails then have radii ~ 2^-(prec - 16)."""
    return wp - GUARD_BITS - 16


def _tol(x: arb, bits: float) -> arb:
    return arb(2) ** (-int(bits)) * max(arb(1), abs(x))


def newton_from(g, dg, x0: arb, a, b, bits: int) -> arb | None:
    """Plain Newton from a warm start; None if it leaves the segment or does not settle.

    Stops once a step is below 2^-(0.55 R) (R = ``bits``, :func:`_radius_bits`): the next
    iterate is then accurate to about 2^-(1.1 R), inside the certification ball (and
    certification decides).
    """
    x = x0
    stop = 0.55 * bits
    for _ in range(12):
        gx, dx = g(x), dg(x)
        if not dx.mid() > 0:
            return None
        step = _m(gx) / _m(dx)
        xn = _m(x - step)
        if not _inside(xn, a, b):
            return None
        if abs(xn - x) <= _tol(x, stop):
            return xn
        x = xn
    return None


def bracketed_root(g, dg, a, b, bits: int) -> arb:
    """Safeguarded Newton (bisection fallback) from a bracket found by outward search."""
    if a is not None and b is not None:
        x = _m((a + b) / 2)
    elif a is not None:
        x = _m(a + 1)
    elif b is not None:
        x = _m(b - 1)
    else:
        x = arb(0)
    lo = hi = None
    gx = g(x).mid()
    if gx < 0:
        lo = x
    else:
        hi = x
    step = arb(1)
    for _ in range(4 * bits + 256):
        if lo is not None and hi is not None:
            break
        if lo is None:  # move left
            y = _m((hi + a) / 2) if a is not None else _m(hi - step)
        else:
            y = _m((lo + b) / 2) if b is not None else _m(lo + step)
        step = step * 2
        if g(y).mid() < 0:
            lo = y
        else:
            hi = y
    else:
        raise ArithmeticError("lattice: no bracket for the PLLR crossing point")
    x = _m((lo + hi) / 2)
    for _ in range(NEWTON_CAP + 2 * bits):
        gx = g(x)
        gm = gx.mid()
        if gm == 0:
            return x
        if gm < 0:
            lo = x
        else:
            hi = x
        d = dg(x)
        xn = _m(x - _m(gx) / _m(d)) if d.mid() > 0 else None
        if xn is not None and lo <= xn <= hi:  # a Newton step: quadratic convergence
            if abs(xn - x) <= _tol(x, 0.55 * bits):
                return xn
        else:  # bisection
            xn = _m((lo + hi) / 2)
            if abs(hi - lo) <= _tol(x, bits):
                return xn
        x = xn
    raise ArithmeticError("lattice: the PLLR crossing point did not converge")


def certify_crossing(g, x: arb, a, b, bits: int) -> tuple[arb, arb]:
    """Exact points x_l < x_r around x, inside (a, b), with g(x_l) < 0 < g(x_r) certified (g
    increasing), at relative distance about 2^-bits (widened 256-fold per failed try)."""
    r = _tol(x, bits)
    for _ in range(CERTIFY_TRIES):
        xl, xr = _m(x - r), _m(x + r)
        if _inside(xl, a, b) and _inside(xr, a, b) and g(xl) < 0 and g(xr) > 0:
            return xl, xr
        r = r * 256
    raise ArithmeticError(f"lattice: could not certify the PLLR crossing point near {x.mid()}")
