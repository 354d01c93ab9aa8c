r"""Declared parameters of a mechanism spec (:class:`Parameter`).

A spec's densities may involve only the variable and declared parameters. Each parameter has an
open domain (checked on every value), a default and/or a typical range; derive samples the typical
range to fix the order of breakpoints and to check symmetry (:mod:`derive.segmentation`), and the
parameter's name becomes a field of the compiled mechanism class (:mod:`derive.compile`), so
names that clash with that class's attributes are reserved.
"""

from __future__ import annotations

import keyword
import math
from dataclasses import dataclass
from typing import Any

import sympy as sp

__all__ = ["RESERVED_NAMES", "Parameter"]

RESERVED_NAMES = frozenset({
    "order", "dps", "strategy", "symbolic_timeout", "values", "check", "symmetric", "lattice",
    "max_order", "spec", "options", "delta_part", "registry_name", "describe", "name",
    "class_name", "derived", "pllr_cumulants", "exact_family", "clt_mu_squared", "gaussian",
    "compiled_order", "derive_options", "cgf_batch", "pllr_sup", "pllr_inf", "cgf_closed_form",
    "purely_atomic", "poisson_rate", "has_cgf", "has_exact_answer",
})
"""Names a parameter may not take (attributes of compiled mechanism classes)."""


@dataclass(frozen=True)
class Parameter:
    r"""A declared mechanism parameter.

    Args:
        symbol: The sympy symbol (or its name) used in the densities.
        default: Default value (also the reference point for checks), or None.
        domain: Open interval (lo, hi) of admissible values; ``lo >= 0`` makes the symbol positive
            for sympy.
        typical: Closed sub-range [lo, hi] of typical values, used to check that breakpoints keep
            their order and that symmetry holds; optional when ``default`` is given.
        description: Free text.

    Raises:
        ValueError: on a bad name (not an identifier, reserved), an empty domain, or a default or
            typical range outside the domain.
    """

    symbol: Any
    default: float | None = None
    domain: tuple[float, float] = (0.0, math.inf)
    typical: tuple[float, float] | None = None
    description: str = ""

    def __post_init__(self) -> None:
        sym = sp.Symbol(self.symbol) if isinstance(self.symbol, str) else self.symbol
        if not isinstance(sym, sp.Symbol):
            raise ValueError(f"Parameter symbol must be a sympy Symbol or a name, got {sym!r}")
        name = sym.name
        if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
            raise ValueError(f"parameter name {name!r} must be a public Python identifier")
        if name in RESERVED_NAMES:
            raise ValueError(f"parameter name {name!r} is reserved; rename it")
        try:
            lo, hi = (float(v) for v in self.domain)
        except (TypeError, ValueError):
            raise ValueError(
                f"parameter {name}: domain must be (lo, hi), got {self.domain!r}"
            ) from None
        if not lo < hi:
            raise ValueError(f"parameter {name}: empty domain ({lo}, {hi})")
        object.__setattr__(self, "symbol", sym)
        object.__setattr__(self, "domain", (lo, hi))
        if self.default is not None:
            object.__setattr__(self, "default", self.check(self.default, "default of "))
        if self.typical is not None:
            tlo, thi = (self.check(v, "typical range of ") for v in self.typical)
            if not tlo <= thi:
                raise ValueError(f"parameter {name}: typical range {self.typical!r} is reversed")
            object.__setattr__(self, "typical", (tlo, thi))
        if self.default is None and self.typical is None:
            raise ValueError(f"parameter {name} needs a default or a typical range")

    @property
    def name(self) -> str:
        """The parameter's name (its symbol's name)."""
        return self.symbol.name

    def check(self, value: object, what: str = "") -> float:
        """Return ``value`` as a float if it lies in the open domain, else raise ``ValueError``."""
        lo, hi = self.domain
        if isinstance(value, bool):
            raise ValueError(f"{what}parameter {self.name} must be a real number, got {value!r}")
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ValueError(
                f"{what}parameter {self.name} must be a real number, got {value!r}"
            ) from None
        if not (math.isfinite(v) and lo < v < hi):
            raise ValueError(
                f"{what}parameter {self.name} must be finite and lie in ({lo:g}, {hi:g}), "
                f"got {value!r}"
            )
        return v

    @property
    def reference(self) -> float:
        """The reference value: the default, else the (geometric) middle of the typical range."""
        if self.default is not None:
            return self.default
        tlo, thi = self.typical
        return math.sqrt(tlo * thi) if tlo > 0 else 0.5 * (tlo + thi)

    def samples(self) -> tuple[float, ...]:
        """Reference value first, then the ends of the typical range (distinct values)."""
        out = [self.reference]
        for v in self.typical or ():
            if v not in out:
                out.append(v)
        return tuple(out)

    def internal_symbol(self) -> sp.Symbol:
        """The symbol with sympy assumptions derived from the domain."""
        lo, hi = self.domain
        if lo >= 0:
            return sp.Symbol(self.name, positive=True)
        if hi <= 0:
            return sp.Symbol(self.name, negative=True)
        return sp.Symbol(self.name, real=True)
