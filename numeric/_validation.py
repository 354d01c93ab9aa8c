"""Input validation shared by the numeric layer.

Every public function checks its arguments with these helpers so that bad input fails with a
``ValueError`` naming the parameter and the offending value. All checks are positive predicates
(``not (x > 0)`` is true for NaN), so NaN never slips through a comparison.
"""

from __future__ import annotations

import math
import numbers
from decimal import Decimal, InvalidOperation

import numpy as np

__all__ = [
    "as_float_array",
    "check_count",
    "check_delta",
    "check_finite",
    "check_nonnegative",
    "check_order",
    "check_positive",
    "check_probability_open",
    "check_rate",
    "parse_decimal",
]

MAX_DIGITS = 200
"""Most significant digits a typed number may have (no huge integers or endless decimals)."""
MAX_EXPONENT = 10_000
"""Largest decimal exponent (in modulus) a typed number may have."""


def _as_real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    return float(value)


def check_finite(name: str, value: object) -> float:
    """Return ``value`` as a float if it is a finite real number, else raise ``ValueError``."""
    x = _as_real(name, value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {x!r}")
    return x


def check_positive(name: str, value: object) -> float:
    """Return ``value`` as a float if it is finite and > 0, else raise ``ValueError``."""
    x = _as_real(name, value)
    if not (x > 0.0 and math.isfinite(x)):
        raise ValueError(f"{name} must be finite and > 0, got {x!r}")
    return x


def check_nonnegative(name: str, value: object) -> float:
    """Return ``value`` as a float if it is finite and >= 0, else raise ``ValueError``."""
    x = _as_real(name, value)
    if not (x >= 0.0 and math.isfinite(x)):
        raise ValueError(f"{name} must be finite and >= 0, got {x!r}")
    return x


def check_rate(name: str, value: object) -> float:
    """Return a sampling rate in (0, 1], else raise ``ValueError``."""
    x = _as_real(name, value)
    if not (0.0 < x <= 1.0):
        raise ValueError(f"{name} must lie in (0, 1], got {x!r}")
    return x


def check_probability_open(name: str, value: object) -> float:
    """Return a probability in the open interval (0, 1), else raise ``ValueError``."""
    x = _as_real(name, value)
    if not (0.0 < x < 1.0):
        raise ValueError(f"{name} must lie in (0, 1), got {x!r}")
    return x


def check_delta(name: str, value: object) -> float:
    """Return a target delta in (0, 1), else raise ``ValueError``."""
    return check_probability_open(name, value)


def check_count(name: str, value: object, *, minimum: int = 1, maximum: int = 10**15) -> int:
    """Return a whole-number count in ``[minimum, maximum]``, else raise ``ValueError``.

    Integral floats such as ``1e4`` are accepted (they are common on command lines and in
    configs); booleans, fractions and non-finite values are refused.
    """
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if isinstance(value, numbers.Integral):
        n = int(value)
    elif isinstance(value, numbers.Real):
        x = float(value)
        if not (math.isfinite(x) and x == math.floor(x)):
            raise ValueError(f"{name} must be a whole number, got {value!r}")
        n = int(x)
    else:
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if not (minimum <= n <= maximum):
        shown = (repr(n) if abs(n) < 10**30 else  # no 4300-digit decimal (Python refuses it)
                 f"{'a negative' if n < 0 else 'an'} integer of about "
                 f"{int(abs(n).bit_length() * 0.30103) + 1} digits")
        raise ValueError(f"{name} must lie in [{minimum}, {maximum}], got {shown}")
    return n


def check_order(name: str, value: object, *, maximum: int) -> int:
    """Return an expansion order in ``[0, maximum]``, else raise ``ValueError``."""
    return check_count(name, value, minimum=0, maximum=maximum)


def as_float_array(name: str, value: object, *, nonnegative: bool = False) -> np.ndarray:
    """Return ``value`` as a float array of finite numbers (>= 0 if asked), else raise."""
    raw = np.asarray(value)
    if raw.dtype.kind not in "iuf":  # refuses bool, strings, objects
        raise ValueError(f"{name} must be real numbers, got {value!r}")
    arr = raw.astype(float)
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty")
    bad = ~np.isfinite(arr)
    if nonnegative:
        bad |= ~(arr >= 0.0)
    if bad.any():
        first = arr[bad].flat[0]
        cond = "finite and >= 0" if nonnegative else "finite"
        raise ValueError(f"{name} must be {cond}, got {first!r}")
    return arr


def parse_decimal(name: str, text: str, *, max_digits: int = MAX_DIGITS,
                  max_exponent: int = MAX_EXPONENT) -> Decimal:
    """A finite decimal number typed by a user, exactly, within digit and exponent budgets
    (checked before any arithmetic, so "1e-999999999" costs nothing).

    Raises:
        ValueError: naming ``name`` if ``text`` is not a finite decimal within the budgets.
    """
    if not isinstance(text, str) or len(text) > max_digits + 20:
        raise ValueError(f"{name} must be a decimal number, got {str(text)[:40]!r}")
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise ValueError(f"{name} must be a number, got {text!r}") from None
    if not value.is_finite():
        raise ValueError(f"{name} must be finite, got {text!r}")
    _, digits, exponent = value.as_tuple()
    if len(digits) > max_digits or abs(int(exponent)) > max_exponent:
        raise ValueError(f"{name} has too many digits or too large an exponent: {text[:40]!r}")
    return value
