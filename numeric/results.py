"""Result objects with provenance: every number says what it is and how it was obtained.

``estimate=True`` marks approximations (AEA, GDP-CLT) that can under-report the privacy loss; they
are never bounds. ``estimate=False`` is reserved for numbers that are exact for the mechanism
(e.g. GDP for a Gaussian composition, the binomial formula for randomized response), computed in
floating point. Certified enclosures live in ``certify`` as ``Bound`` objects.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["DeltaResult", "EpsilonResult", "Estimate", "json_number", "json_safe"]


def json_number(x: float) -> float | None:
    """A JSON-safe float: ``None`` for inf/NaN (callers add an explicit flag)."""
    x = float(x)
    return x if math.isfinite(x) else None


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
        warnings: Diagnostics a user should read.
        details: Method-specific extras (order, mu, delta part, ...).
    """

    epsilon: float
    delta: float
    method: str
    estimate: bool
    direction: str
    per_direction: dict[str, float] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not (self.epsilon >= 0.0):
            raise ValueError(f"epsilon must be >= 0 (or inf), got {self.epsilon!r}")

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
        }


@dataclass(frozen=True)
class DeltaResult:
    """delta(eps) for a composition (scalar or vectorized over eps), with provenance."""

    delta: float | np.ndarray
    eps: float | np.ndarray
    method: str
    estimate: bool
    direction: str | np.ndarray
    per_direction: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        d = np.asarray(self.delta, dtype=float)
        if not np.all((d >= 0.0) & (d <= 1.0)):
            raise ValueError(f"delta values must lie in [0, 1], got {self.delta!r}")

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
        kind = "estimate" if self.result.estimate else "exact"
        return f"Estimate({float(self)!r}, method={self.result.method!r}, {kind})"
