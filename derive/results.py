r"""What derive returns: segments, derivations, numeric cumulants, identity checks, and errors.

:class:`Derivation` holds the symbolic outcome of deriving a mechanism's PLLR moments and
cumulants (closed forms or None where quadrature is needed); :class:`CumulantResult` the numeric
cumulants at a parameter point with per-cumulant provenance and the identity checks of docs/math.md
section 1 (K_X(1) = 0, K_Y(-1) = 0, kappa_1(X) = -KL(P||Q), kappa_1(Y) = KL(Q||P)).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sympy as sp

__all__ = [
    "CumulantResult",
    "Derivation",
    "IdentityCheck",
    "IdentityCheckError",
    "QuadratureFallbackWarning",
    "Segment",
    "SpecLike",
    "SymbolicIntegrationError",
    "truncate_result",
]


SpecLike = Any
"""Annotation of a :class:`derive.mechanism.MechanismSpec` in the modules that derive.mechanism
imports (importing it back, even only for annotations, would make an import cycle)."""


class QuadratureFallbackWarning(UserWarning):
    """Sympy could not integrate some piece; its value comes from mpmath quadrature."""


class IdentityCheckError(ValueError):
    """A PLLR identity (K_X(1) = 0, K_Y(-1) = 0, kappa_1 = -KL) failed."""


class SymbolicIntegrationError(ValueError):
    """``strategy="symbolic"`` was requested but some piece has no accepted closed form."""


@dataclass(frozen=True)
class Segment:
    """A piece of the support on which p, q and the PLLR are smooth (or one discrete outcome).

    ``lower``/``upper`` are sympy expressions in the parameters (None for a discrete outcome);
    ``pllr`` is L = log(q/p) on the piece; ``atom`` is True when L is constant there (the PLLR
    law has an atom).
    """

    lower: sp.Expr | None
    upper: sp.Expr | None
    p: sp.Expr
    q: sp.Expr
    pllr: sp.Expr
    atom: bool
    label: str

    @property
    def is_point(self) -> bool:
        """True for an outcome of a discrete mechanism."""
        return self.lower is None


@dataclass(frozen=True)
class IdentityCheck:
    """Outcome of one identity check.

    Attributes:
        name: Short identifier, e.g. ``"K_X(1) = 0"``.
        residual: |left - right| (0.0 when proven symbolically).
        tolerance: Accepted residual.
        method: ``"symbolic"`` or ``"numeric (mpmath quadrature, dps=...)"``.
        passed: Whether the residual is within tolerance.
    """

    name: str
    residual: float
    tolerance: float
    method: str
    passed: bool


@dataclass(frozen=True)
class Derivation:
    r"""Symbolic outcome of deriving a mechanism's PLLR moments and cumulants to ``order``.

    Attributes:
        spec: The mechanism spec.
        order: Highest cumulant order.
        strategy: ``"auto"``, ``"symbolic"`` or ``"quadrature"``.
        segments: The pieces of the support (or outcomes).
        moments_x: Raw moments E_P[L^k], k = 0..order, as closed forms, or None where some
            piece needs quadrature.
        moments_y: Raw moments E_Q[L^k], likewise.
        cumulants_x: kappa_1..kappa_order of X (closed forms or None).
        cumulants_y: kappa_1..kappa_order of Y (closed forms or None).
        notes: Why sympy failed on the pieces that use quadrature (and other remarks).
        identities: Identities proven symbolically (for all parameter values).
        seconds: Wall time spent deriving (cumulative over orders).
    """

    spec: SpecLike
    order: int
    strategy: str
    segments: tuple[Segment, ...]
    moments_x: tuple[sp.Expr | None, ...]
    moments_y: tuple[sp.Expr | None, ...]
    cumulants_x: tuple[sp.Expr | None, ...]
    cumulants_y: tuple[sp.Expr | None, ...]
    notes: tuple[str, ...]
    identities: tuple[IdentityCheck, ...]
    seconds: float

    @property
    def closed_form(self) -> bool:
        """True when every cumulant of X and Y has a closed form."""
        return all(c is not None for c in self.cumulants_x + self.cumulants_y)

    def require_closed_form(self) -> tuple[tuple[sp.Expr, ...], tuple[sp.Expr, ...]]:
        """The closed-form cumulants of X and Y, for code generation.

        Returns:
            ``(cumulants_x, cumulants_y)``, tuples of sympy expressions free of ``Integral``.

        Raises:
            SymbolicIntegrationError: if some cumulant has no closed form (with sympy's reasons).
        """
        if not self.closed_form:
            raise SymbolicIntegrationError(
                f"{self.spec.name}: no closed form for every cumulant to order {self.order}: "
                + "; ".join(self.notes)
            )
        return self.cumulants_x, self.cumulants_y


@dataclass(frozen=True)
class CumulantResult:
    r"""Cumulants of the PLLR at given parameter values, with provenance and checks.

    Attributes:
        mechanism: The spec's name.
        values: Parameter values used.
        order: Highest cumulant order.
        dps: Decimal digits the values are computed to (working precision dps + guard digits).
        x: kappa_1..kappa_order of X as mpmath numbers.
        y: kappa_1..kappa_order of Y as mpmath numbers.
        x_exprs: Closed forms of the X cumulants (None where quadrature was used).
        y_exprs: Closed forms of the Y cumulants.
        provenance_x: Per cumulant ``"closed form"`` or ``"mpmath quadrature, dps=..."``.
        provenance_y: Likewise for Y.
        identities: Identity checks (symbolic or numeric at these values).
        warnings: Human-readable warnings (quadrature fallback, large error estimates).
    """

    mechanism: str
    values: dict[str, float]
    order: int
    dps: int
    x: tuple[Any, ...]
    y: tuple[Any, ...]
    x_exprs: tuple[sp.Expr | None, ...]
    y_exprs: tuple[sp.Expr | None, ...]
    provenance_x: tuple[str, ...]
    provenance_y: tuple[str, ...]
    identities: tuple[IdentityCheck, ...]
    warnings: tuple[str, ...]

    @property
    def used_quadrature(self) -> bool:
        """True when some cumulant relies on numeric quadrature."""
        return any(s != "closed form" for s in self.provenance_x + self.provenance_y)

    @property
    def closed_form(self) -> bool:
        """True when every cumulant is a closed form."""
        return not self.used_quadrature

    def floats(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """The cumulants of X and Y as Python floats."""
        return tuple(float(v) for v in self.x), tuple(float(v) for v in self.y)

    def to_pllr_cumulants(self):
        """The cumulants as a :class:`numeric.mechanisms.base.PLLRCumulants`."""
        from numeric.mechanisms.base import PLLRCumulants

        x, y = self.floats()
        return PLLRCumulants(x=x, y=y)


def truncate_result(res: CumulantResult, order: int) -> CumulantResult:
    """``res`` restricted to the cumulants of orders 1..``order``."""
    if res.order == order:
        return res
    return CumulantResult(
        mechanism=res.mechanism, values=res.values, order=order, dps=res.dps,
        x=res.x[:order], y=res.y[:order], x_exprs=res.x_exprs[:order],
        y_exprs=res.y_exprs[:order], provenance_x=res.provenance_x[:order],
        provenance_y=res.provenance_y[:order], identities=res.identities,
        warnings=res.warnings,
    )

