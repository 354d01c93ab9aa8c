"""Result objects with provenance: every number says what it is and how it was obtained.

``estimate=True`` marks approximations (AEA, GDP-CLT, the saddlepoint) that can under-report the
privacy loss; they are never bounds. ``estimate=False`` is reserved for numbers that are exact for
the mechanism (e.g. GDP for a Gaussian composition, the binomial formula for randomized response),
computed in floating point, and for certified answers.

One surface for every method (the result type family): :class:`EpsilonResult`,
:class:`DeltaResult` and certify's ``Bound`` all carry the value or the interval (``lower`` /
``upper``: exact ``decimal.Decimal`` ends that convert with ``float()`` and keep their exact
decimals), ``estimate``, ``method``, ``direction``, ``warnings``, ``inputs`` and ``to_dict()``.
A certified answer returned by ``auto`` is an :class:`EpsilonResult` (or :class:`DeltaResult`)
with ``certified=True``, its value the upper end rounded up to a float, and ``lower``/``upper``
the exact ends of the certified enclosure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np

__all__ = [
    "DeltaResult",
    "EpsilonResult",
    "Estimate",
    "float_up",
    "json_number",
    "json_safe",
]


def json_number(x: float) -> float | None:
    """A JSON-safe float: ``None`` for inf/NaN (callers add an explicit flag)."""
    x = float(x)
    return x if math.isfinite(x) else None


def float_up(value: Decimal) -> float:
    """The smallest binary64 number >= ``value`` (an exact decimal); inf stays inf.

    Used to report the upper end of a certified interval as a float without rounding it down.
    """
    x = float(value)
    if math.isfinite(x) and Decimal(x) < value:
        x = math.nextafter(x, math.inf)
    return x


def _interval_dict(lower: Decimal | None, upper: Decimal | None, certified: bool) -> dict:
    out: dict[str, Any] = {"certified": certified}
    if lower is not None or upper is not None:
        out["lower"] = None if lower is None or not lower.is_finite() else str(lower)
        out["upper"] = None if upper is None or not upper.is_finite() else str(upper)
    return out


def _check_interval(lower: Decimal | None, upper: Decimal | None, certified: bool) -> None:
    for name, end in (("lower", lower), ("upper", upper)):
        if end is not None and not isinstance(end, Decimal):
            raise ValueError(f"{name} must be a decimal.Decimal or None, got {end!r}")
    if lower is not None and upper is not None and not (lower <= upper):
        raise ValueError(f"empty interval: lower {lower} > upper {upper}")
    if certified and (lower is None or upper is None):
        raise ValueError("a certified result needs both interval ends")


@dataclass(frozen=True)
class EpsilonResult:
    """eps(delta) for a composition, with provenance.

    Attributes:
        epsilon: The reported eps (``math.inf`` if delta is infeasible, e.g. below the delta part).
        delta: The target delta.
        method: Method name (``aea``, ``aea-ea``, ``gdp``, ``clt``, ``exact``, ...).
        estimate: True for approximations that can under-report eps.
        direction: The pair order that gave the reported (largest) eps.
        per_direction: eps for each pair order considered.
        warnings: Diagnostics a user should read ("check this answer").
        details: Method-specific extras (order, mu, delta part, ...).
        inputs: What was asked (composition, delta, requested method, options).
        lower: Exact lower end of a certified enclosure (``Decimal``), else None.
        upper: Exact upper end of a certified enclosure (``Decimal``; may be infinite), else None.
        certified: True when ``[lower, upper]`` is a proven enclosure (then ``epsilon`` is the
            upper end rounded up to a float).
    """

    epsilon: float
    delta: float
    method: str
    estimate: bool
    direction: str
    per_direction: dict[str, float] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, Any] = field(default_factory=dict)
    lower: Decimal | None = None
    upper: Decimal | None = None
    certified: bool = False

    def __post_init__(self) -> None:
        if not (self.epsilon >= 0.0):
            raise ValueError(f"epsilon must be >= 0 (or inf), got {self.epsilon!r}")
        _check_interval(self.lower, self.upper, self.certified)

    @property
    def value(self) -> float:
        """The reported number (eps; the upper end when certified)."""
        return self.epsilon

    def __float__(self) -> float:
        return float(self.epsilon)

    @property
    def infinite(self) -> bool:
        """True when no finite eps achieves the target delta."""
        return math.isinf(self.epsilon)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary (no NaN/Infinity: an infinite eps is null with ``infinite``)."""
        return {
            "epsilon": json_number(self.epsilon),
            "infinite": self.infinite,
            "delta": self.delta,
            "method": self.method,
            "estimate": self.estimate,
            "direction": self.direction,
            "per_direction": {k: json_number(v) for k, v in self.per_direction.items()},
            "warnings": list(self.warnings),
            "details": json_safe(self.details),
            "inputs": json_safe(self.inputs),
            **_interval_dict(self.lower, self.upper, self.certified),
        }


@dataclass(frozen=True)
class DeltaResult:
    """delta(eps) for a composition (scalar or vectorized over eps), with provenance.

    The fields are those of :class:`EpsilonResult` with ``delta`` the value and ``eps`` the
    query; ``lower``/``upper``/``certified`` describe a certified enclosure (scalar queries).
    """

    delta: float | np.ndarray
    eps: float | np.ndarray
    method: str
    estimate: bool
    direction: str | np.ndarray
    per_direction: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    inputs: dict[str, Any] = field(default_factory=dict)
    lower: Decimal | None = None
    upper: Decimal | None = None
    certified: bool = False

    def __post_init__(self) -> None:
        d = np.asarray(self.delta, dtype=float)
        if not np.all((d >= 0.0) & (d <= 1.0)):
            raise ValueError(f"delta values must lie in [0, 1], got {self.delta!r}")
        _check_interval(self.lower, self.upper, self.certified)

    @property
    def value(self) -> float | np.ndarray:
        """The reported number (delta; the upper end when certified)."""
        return self.delta

    def __float__(self) -> float:
        return float(self.delta)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary."""
        return {
            "delta": json_safe(self.delta),
            "eps": json_safe(self.eps),
            "method": self.method,
            "estimate": self.estimate,
            "direction": json_safe(self.direction),
            "per_direction": json_safe(self.per_direction),
            "warnings": list(self.warnings),
            "details": json_safe(self.details),
            "inputs": json_safe(self.inputs),
            **_interval_dict(self.lower, self.upper, self.certified),
        }


def json_safe(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [json_safe(v) for v in obj.tolist()]
    if isinstance(obj, bool | np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        return json_number(obj)
    if obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, Decimal):
        return str(obj) if obj.is_finite() else None
    return repr(obj)


class Estimate(float):
    """A float that remembers it is an estimate (returned by ``EdgeworthAccountant``).

    Behaves as a plain float in arithmetic; ``.result`` holds the full provenance and
    ``is_estimate`` is True. Its repr says "estimate" so it is never mistaken for a bound.
    """

    result: EpsilonResult | DeltaResult

    def __new__(cls, result: EpsilonResult | DeltaResult) -> Estimate:
        obj = super().__new__(cls, float(result))
        obj.result = result
        return obj

    @property
    def is_estimate(self) -> bool:
        """Always True for approximate methods; False only for exact numbers."""
        return self.result.estimate

    @property
    def warnings(self) -> tuple[str, ...]:
        """Diagnostics attached to the result."""
        return self.result.warnings

    def __repr__(self) -> str:
        kind = ("estimate" if self.result.estimate
                else "certified upper end" if self.result.certified else "exact")
        return f"Estimate({float(self)!r}, method={self.result.method!r}, {kind})"
