"""Certified results: a ``Bound`` is a proven enclosure with its provenance.

``lower <= true value <= upper`` is proven by the code path that produced it (outward-rounded
Arb arithmetic end to end, every truncation in the safe direction). ``lower_method`` and
``upper_method`` name the method that gave each end (methods are intersected); ``assumptions``
lists every assumption used (e.g. "i.i.d. terms", "Berry-Esseen constant 0.4748 (Shevtsova
2011)"). ``vacuous`` flags intervals that carry no information.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import mpmath
from flint import arb

from numeric.results import json_safe

from .engine import Endpoint, endpoints, iv_workprec

__all__ = ["Bound"]


@dataclass(frozen=True)
class Bound:
    """A certified enclosure ``[lower, upper]`` of a delta or an epsilon.

    Attributes:
        quantity: ``"delta"`` or ``"epsilon"``.
        lower: Exact lower endpoint (``Endpoint``; may be -inf only for non-informative ends).
        upper: Exact upper endpoint (``Endpoint``; +inf allowed for epsilon).
        lower_method: Method that produced the lower end.
        upper_method: Method that produced the upper end.
        precision: Arb working precision (bits) of the final evaluation.
        assumptions: Every assumption the proof used.
        direction: Pair order (``"P||Q"``/``"Q||P"``) that gave the reported interval.
        warnings: Diagnostics.
        inputs: What was bounded (e.g. the eps at which delta is enclosed).
    """

    quantity: str
    lower: Endpoint
    upper: Endpoint
    lower_method: str
    upper_method: str
    precision: int
    assumptions: tuple[str, ...] = ()
    direction: str = "P||Q"
    warnings: tuple[str, ...] = ()
    inputs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.quantity not in ("delta", "epsilon"):
            raise ValueError(f"quantity must be 'delta' or 'epsilon', got {self.quantity!r}")
        lo, hi = self.lower.to_mpf(), self.upper.to_mpf()
        if not lo <= hi:
            raise ValueError(f"empty enclosure: lower {lo} > upper {hi}")
        # delta is a probability difference in [0, 1] and eps(delta) >= 0 by definition, so
        # clipping an outward-rounded end to those ranges keeps the enclosure proven (a fuzz
        # draw had a one-epoch shuffle delta of [-2^-30, 1 + 2^-30]).
        if lo < 0 and hi >= 0:
            object.__setattr__(self, "lower", Endpoint(0, 0))
        if self.quantity == "delta" and hi > 1 and lo <= 1:
            object.__setattr__(self, "upper", Endpoint(1, 0))

    @classmethod
    def from_ball(cls, quantity: str, ball: arb, method: str, precision: int, **kw) -> Bound:
        """A bound whose both ends come from one Arb ball."""
        lo, hi = endpoints(ball)
        return cls(quantity, lo, hi, method, method, precision, **kw)

    # the result surface shared with numeric's EpsilonResult / DeltaResult
    method = "certified"
    estimate = False
    certified = True

    @property
    def value(self) -> float:
        """The upper end as a float rounded up (``inf`` if unbounded): the safe single number."""
        if not self.upper.is_finite:
            return math.inf
        up = self.upper_mpf
        x = float(up)
        return math.nextafter(x, math.inf) if mpmath.mpf(x) < up else x

    @property
    def lower_value(self) -> float:
        """The lower end as a float rounded down (``-inf`` if unbounded below)."""
        if not self.lower.is_finite:
            return -math.inf
        lo = self.lower_mpf
        x = float(lo)
        return math.nextafter(x, -math.inf) if mpmath.mpf(x) > lo else x

    def __float__(self) -> float:
        return self.value

    @property
    def lower_mpf(self) -> mpmath.mpf:
        """Lower end as an exact mpmath number."""
        return self.lower.to_mpf()

    @property
    def upper_mpf(self) -> mpmath.mpf:
        """Upper end as an exact mpmath number (``mpmath.inf`` if unbounded)."""
        return self.upper.to_mpf()

    @property
    def vacuous(self) -> bool:
        """True when the interval says nothing useful.

        delta: upper end >= 1 (no privacy guarantee) -- and a lower end <= 0 together with it;
        epsilon: upper end infinite.
        """
        if self.quantity == "epsilon":
            return not self.upper.is_finite
        return self.upper_mpf >= 1

    def contains(self, value: float | mpmath.mpf | str) -> bool:
        """True if ``value`` (exact decimal string, mpf or float) lies in the closed interval."""
        with mpmath.workprec(max(256, self.precision + 64)):
            v = mpmath.mpf(value)
            return bool(self.lower_mpf <= v <= self.upper_mpf)

    def width(self) -> float:
        """upper - lower as a float (inf if unbounded)."""
        if not (self.lower.is_finite and self.upper.is_finite):
            return math.inf
        return float(self.upper_mpf - self.lower_mpf)

    def interval(self) -> mpmath.ctx_iv.ivmpf:
        """The bound as an ``mpmath.iv.mpf`` with exact endpoints."""
        ends = [e for e in (self.lower, self.upper) if e.is_finite]
        bits = max([53] + [abs(e.man).bit_length() + 2 for e in ends])
        with iv_workprec(bits):
            return mpmath.iv.mpf([self.lower_mpf, self.upper_mpf])

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary: exact decimal strings; an infinite end is null with a flag."""
        return {
            "quantity": self.quantity,
            "lower": self.lower.decimal("floor"),
            "upper": self.upper.decimal("ceiling"),
            "lower_infinite": not self.lower.is_finite,
            "upper_infinite": not self.upper.is_finite,
            "lower_method": self.lower_method,
            "upper_method": self.upper_method,
            "precision": self.precision,
            "direction": self.direction,
            "vacuous": self.vacuous,
            "assumptions": list(self.assumptions),
            "warnings": list(self.warnings),
            "method": "certified",
            "certified": True,
            "estimate": False,
            "inputs": json_safe(self.inputs),
        }

    def render_text(self) -> str:
        """Human-readable summary (endpoints rounded to 12 digits for display only)."""
        def fmt(e: Endpoint) -> str:
            if not e.is_finite:
                return "inf" if e.inf > 0 else "-inf"
            with mpmath.workprec(80):
                v = e.to_mpf()
                return mpmath.nstr(v, 12)
        lines = [
            f"{self.quantity} in [{fmt(self.lower)}, {fmt(self.upper)}]  "
            f"(CERTIFIED; lower: {self.lower_method}, upper: {self.upper_method}; "
            f"direction {self.direction})",
        ]
        if self.vacuous:
            lines.append("  vacuous: the interval carries no useful information")
        lines += [f"  warning: {w}" for w in self.warnings]
        lines.append("  (display rounded; exact endpoint decimals with --json)")
        return "\n".join(lines)

    def intersect(self, other: Bound) -> Bound:
        """Intersection of two certified enclosures of the same quantity (both are valid).

        Raises:
            ValueError: if they are disjoint -- two certified methods disagree, which is a bug.
        """
        if other.quantity != self.quantity:
            raise ValueError("cannot intersect bounds of different quantities")
        lo, lo_m = max((self.lower_mpf, self.lower, self.lower_method),
                       (other.lower_mpf, other.lower, other.lower_method),
                       key=lambda t: t[0])[1:]
        hi, hi_m = min((self.upper_mpf, self.upper, self.upper_method),
                       (other.upper_mpf, other.upper, other.upper_method),
                       key=lambda t: t[0])[1:]
        if lo.to_mpf() > hi.to_mpf():
            raise ValueError(
                f"certified methods disagree: [{self.lower.decimal()}, {self.upper.decimal()}] "
                f"({self.lower_method}/{self.upper_method}) and [{other.lower.decimal()}, "
                f"{other.upper.decimal()}] ({other.lower_method}/{other.upper_method})"
            )
        return Bound(
            self.quantity, lo, hi, lo_m, hi_m, max(self.precision, other.precision),
            tuple(dict.fromkeys(self.assumptions + other.assumptions)),
            self.direction, tuple(dict.fromkeys(self.warnings + other.warnings)),
            {**other.inputs, **self.inputs},
        )


