r"""The Arb engine of certify: precision control, exact endpoint export, certified comparisons.

Every enclosure in certify is computed with python-flint's ``arb`` balls (Arb: Johansson, *Arb:
efficient arbitrary-precision midpoint-radius interval arithmetic*, IEEE Trans. Computers 2017),
whose operations return balls guaranteed to contain the exact result. This module turns balls into
what certify exposes: exact endpoints as mpmath numbers (built at a precision that holds every
bit, so nothing is rounded to 53 bits), ``mpmath.iv`` intervals and exact decimal strings.

mpmath's own ``iv`` context is *not* used for computing enclosures (it lacks a rigorous erfc and
quadrature, and its exp can round inward, mpmath issue #1181); it only carries results.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass

import mpmath
from flint import arb, ctx

from .budget import check_deadline

__all__ = [
    "DEFAULT_PRECISION",
    "MAX_PRECISION",
    "PrecisionExhaustedError",
    "UndecidableError",
    "adaptive",
    "arb_from_float",
    "ceil_upper",
    "certainly_less",
    "endpoint_decimal",
    "endpoints",
    "exact_decimal",
    "floor_lower",
    "iv_workprec",
    "to_arb",
    "to_iv",
    "workprec",
]

DEFAULT_PRECISION = 128
MAX_PRECISION = 1 << 14


class UndecidableError(ArithmeticError):
    """A comparison of balls could not be settled at the precision cap (never guessed)."""


class PrecisionExhaustedError(ArithmeticError):
    """The requested accuracy was not reached at the precision cap."""


@contextmanager
def workprec(bits: int):
    """Set Arb's working precision (bits) inside a ``with`` block and restore it after."""
    old = ctx.prec
    ctx.prec = int(bits)
    try:
        yield
    finally:
        ctx.prec = old


@contextmanager
def iv_workprec(bits: int):
    """Set ``mpmath.iv.prec`` inside a ``with`` block (mpmath's iv context has no workprec)."""
    old = mpmath.iv.prec
    mpmath.iv.prec = int(bits)
    try:
        yield
    finally:
        mpmath.iv.prec = old


def to_arb(name: str, value: object) -> arb:
    """An exact or tight ball of a user-supplied real: arb as is, decimal strings at high
    precision, floats as their exact binary value.

    Raises:
        ValueError: naming ``name`` if the value is not a finite real number.
    """
    if isinstance(value, arb):
        x = value
    elif isinstance(value, str):
        with workprec(max(ctx.prec, 2 * DEFAULT_PRECISION)):
            try:
                x = arb(value)
            except ValueError:
                raise ValueError(f"{name} must be a real number, got {value!r}") from None
    else:
        if isinstance(value, bool):
            raise ValueError(f"{name} must be a real number, got {value!r}")
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a real number, got {value!r}") from None
        if not math.isfinite(v):
            raise ValueError(f"{name} must be finite, got {value!r}")
        x = arb(v)
    if not x.is_finite():
        raise ValueError(f"{name} must be finite, got {value!r}")
    return x


def arb_from_float(x: float) -> arb:
    """The exact ball of a binary64 number (every float is a dyadic rational)."""
    return arb(float(x))


@dataclass(frozen=True)
class Endpoint:
    """An exact dyadic endpoint ``man * 2**exp``, or an infinity (``inf`` = +1 or -1)."""

    man: int = 0  # Python int (exact)
    exp: int = 0
    inf: int = 0

    @property
    def is_finite(self) -> bool:
        return self.inf == 0

    def to_mpf(self) -> mpmath.mpf:
        """The endpoint as an mpmath number, exactly (precision raised to hold every bit)."""
        if self.inf:
            return mpmath.inf if self.inf > 0 else -mpmath.inf
        bits = max(53, abs(self.man).bit_length() + 2)
        with mpmath.workprec(bits):
            return mpmath.mpf((self.man, self.exp)) * 1  # exact at this precision

    def decimal(self, rounding: str | None = None) -> str | None:
        """Exact decimal string, or None for an infinity.

        An endpoint whose exact expansion would exceed :data:`MAX_EXACT_DIGITS` digits (a
        dyadic far from 1, e.g. 2^-20000) is written with :data:`ROUNDED_DIGITS` significant
        digits, rounded outward: ``rounding="floor"`` for a lower end, ``"ceiling"`` for an
        upper end (so the written interval still contains the exact one); nearest without one.
        """
        if self.inf:
            return None
        if _decimal_digits(self.man, self.exp) <= MAX_EXACT_DIGITS:
            return exact_decimal(self.man, self.exp)
        return rounded_decimal(self.man, self.exp, rounding)


def endpoints(x: arb) -> tuple[Endpoint, Endpoint]:
    """Exact lower and upper endpoints of a ball (infinite ends for non-finite balls).

    Raises:
        ArithmeticError: if the ball is NaN.
    """
    if x.is_nan():
        raise ArithmeticError("the enclosure is NaN (an operation left its domain)")
    if not x.is_finite():
        with workprec(max(ctx.prec, 4096)):
            lo, hi = x.lower(), x.upper()
            lo_e = _exact(lo) if lo.is_finite() else Endpoint(inf=-1)
            hi_e = _exact(hi) if hi.is_finite() else Endpoint(inf=1)
        return lo_e, hi_e
    # mid +- rad exactly, in Python integers: independent of the current working precision
    # (arb's lower()/upper() would round the endpoints to ctx.prec).
    mid, rad, e = _ends_scaled(x)
    return _normal(mid - rad, e), _normal(mid + rad, e)


def _ends_scaled(x: arb) -> tuple[int, int, int]:
    """(mid, rad, e) with the ball exactly ``[mid - rad, mid + rad] * 2**e`` in Python integers;
    ArithmeticError for a NaN or non-finite ball."""
    if not x.is_finite():
        if x.is_nan():
            raise ArithmeticError("the enclosure is NaN (an operation left its domain)")
        raise ArithmeticError("the enclosure is not finite: no integer bound of its end")
    m_man, m_exp = x.mid().man_exp()
    r_man, r_exp = x.rad().man_exp()
    m_man, m_exp, r_man, r_exp = int(m_man), int(m_exp), int(r_man), int(r_exp)
    # an exact ball (or a zero midpoint) keeps its own exponent: aligning with the other part's
    # exponent 0 would shift by the exponent itself (2^(10^12) is a ball Chernoff meets)
    if r_man == 0:
        return m_man, 0, m_exp
    if m_man == 0:
        return 0, r_man, r_exp
    e = min(m_exp, r_exp)
    return m_man << (m_exp - e), r_man << (r_exp - e), e


def ceil_upper(x: arb) -> int:
    r""":math:`\lceil \sup x \rceil` exactly: the least integer at or above every point of the
    ball (the value of ``ceil_dyadic(endpoints(x)[1])`` from the same exact ends, without the
    two normalized ``Endpoint`` objects, ~4x faster; the lattices round each single-step mass up
    with it).

    Raises:
        ArithmeticError: if the ball is NaN or not finite (an infinite end has no integer bound:
            ``ceil_dyadic`` of an infinite endpoint read its zero mantissa).
    """
    mid, rad, e = _ends_scaled(x)
    v = mid + rad
    return v << e if e >= 0 else -((-v) >> (-e))


def floor_lower(x: arb) -> int:
    r""":math:`\lfloor \inf x \rfloor` exactly: the greatest integer at or below every point of
    the ball (see :func:`ceil_upper`).

    Raises:
        ArithmeticError: if the ball is NaN or not finite.
    """
    mid, rad, e = _ends_scaled(x)
    v = mid - rad
    return v << e if e >= 0 else v >> (-e)


def _normal(man: int, exp: int) -> Endpoint:
    if man == 0:
        return Endpoint(0, 0)
    tz = (man & -man).bit_length() - 1  # strip trailing zero bits
    return Endpoint(man >> tz, exp + tz)


def _exact(x: arb) -> Endpoint:
    man, exp = x.man_exp()
    return Endpoint(int(man), int(exp))


MAX_EXACT_DIGITS = 1000
"""Longest exact decimal expansion written; longer ones are rounded outward."""
ROUNDED_DIGITS = 60


def _decimal_digits(man: int, exp: int) -> int:
    """An upper estimate of the digits of the exact decimal of ``man * 2**exp``."""
    bits = abs(man).bit_length()
    return int((bits + abs(exp)) * 0.7) + 2


def rounded_decimal(man: int, exp: int, rounding: str | None) -> str:
    """``man * 2**exp`` with :data:`ROUNDED_DIGITS` significant digits, rounded toward
    ``rounding`` ("floor", "ceiling"; None: nearest), in decimal arithmetic, with one extra ulp
    outward so that the two roundings of the computation cannot cross the exact value."""
    from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal, localcontext

    if man == 0:
        return "0"
    negative = man < 0
    up = {"floor": negative, "ceiling": not negative, None: None}[rounding]  # magnitude up?
    mode = ROUND_HALF_EVEN if up is None else (ROUND_CEILING if up else ROUND_FLOOR)
    with localcontext() as ctx:
        ctx.Emax, ctx.Emin = 10**9, -(10**9)
        ctx.prec = ROUNDED_DIGITS + 30  # the power's own error stays far below the final ulp
        mag = Decimal(abs(man)) * (Decimal(2) ** exp)
        ctx.prec = ROUNDED_DIGITS
        ctx.rounding = mode
        mag = +mag  # round to ROUNDED_DIGITS in the magnitude's direction
        if up is True:
            mag = mag.next_plus()
        elif up is False:
            mag = mag.next_minus()
        text = str(-mag if negative else mag)  # (negation is exact at this precision)
    return text


def exact_decimal(man: int, exp: int) -> str:
    """Exact decimal expansion of ``man * 2**exp`` (finite, since 2^-k = 5^k / 10^k)."""
    if man == 0:
        return "0"
    sign = "-" if man < 0 else ""
    m = abs(man)
    if exp >= 0:
        return sign + str(m << exp)
    k = -exp
    digits = str(m * 5**k)
    if len(digits) <= k:
        digits = "0" * (k - len(digits) + 1) + digits
    whole, frac = digits[:-k], digits[-k:].rstrip("0")
    return sign + whole + ("." + frac if frac else "")


def endpoint_decimal(x: arb) -> tuple[str | None, str | None]:
    """Exact decimal strings of a ball's endpoints (None for infinite ends)."""
    lo, hi = endpoints(x)
    return lo.decimal(), hi.decimal()


def to_iv(x: arb) -> mpmath.ctx_iv.ivmpf:
    """The ball as an ``mpmath.iv.mpf`` interval with exact endpoints.

    The interval is built under an iv precision large enough to hold both endpoints exactly.
    """
    lo, hi = endpoints(x)
    bits = max(53, *(abs(e.man).bit_length() + 2 for e in (lo, hi) if e.is_finite))
    with iv_workprec(bits):
        return mpmath.iv.mpf([lo.to_mpf(), hi.to_mpf()])


def certainly_less(a: arb, b: arb) -> bool:
    """True if a < b certainly, False if a >= b certainly; else :class:`UndecidableError`."""
    if a < b:
        return True
    if a >= b:
        return False
    raise UndecidableError(f"cannot decide {a} < {b} at {ctx.prec} bits")


def adaptive(
    compute: Callable[[], arb],
    *,
    rel_bits: int = 60,
    start: int = DEFAULT_PRECISION,
    cap: int = MAX_PRECISION,
    accept: Callable[[arb], bool] | None = None,
) -> tuple[arb, int]:
    """Evaluate ``compute()`` at doubling precision until its ball is accurate enough.

    Args:
        compute: Builds the ball at the current ``ctx.prec`` (it must read precision from ctx).
        rel_bits: Target relative accuracy in bits (ignored when ``accept`` is given).
        start: First precision (bits).
        cap: Largest precision tried; beyond it :class:`PrecisionExhaustedError` is raised.
        accept: Optional predicate deciding whether the ball is good enough (e.g. a comparison
            was settled); an :class:`UndecidableError` raised inside ``compute`` also triggers
            a retry at higher precision.

    Returns:
        ``(ball, precision)`` of the first acceptable evaluation.

    Raises:
        UndecidableError: if ``compute`` stays undecided up to the cap.
        PrecisionExhaustedError: if the accuracy is not reached at the cap.
        BudgetExceeded: inside a :func:`certify.budget.time_budget` block, once its deadline has
            passed (checked before each precision).
    """
    prec = min(int(start), int(cap))  # a caller's high ctx.prec still gets one attempt
    last: Exception | None = None
    while prec <= cap:
        check_deadline(f"in a precision loop, at {prec} bits")
        with workprec(prec):
            try:
                x = compute()
            except UndecidableError as exc:
                last = exc
            else:
                ok = accept(x) if accept is not None else (
                    x.is_finite() and (x.is_zero() or x.rel_accuracy_bits() >= rel_bits)
                )
                if ok:
                    return x, prec
        prec *= 2
    if last is not None:
        raise UndecidableError(f"{last} (precision cap {cap} bits reached)")
    raise PrecisionExhaustedError(f"accuracy not reached at the precision cap of {cap} bits")
