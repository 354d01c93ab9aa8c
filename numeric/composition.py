r"""Composition of mechanisms: PLLR cumulants add over independent steps.

For a composition of m_i copies of mechanism i, S = sum of independent PLLRs, so
K_j(S) = sum_i m_i kappa_j(L_i) (cumulants of independent sums add; docs/math.md section 1). The
cost is independent of the counts, which may be as large as 10^15. The delta parts of ApproxDP terms
compose exactly, 1 - prod_i (1 - delta_i)^{m_i} (GDP Eq. 12), evaluated as -expm1(sum m_i
log1p(-delta_i)).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ._validation import check_count
from .mechanisms.base import DIRECTION_PQ, DIRECTION_QP, Mechanism

__all__ = ["Composition", "compose"]


@dataclass(frozen=True)
class Composition:
    """A (possibly heterogeneous) composition: ``terms`` are ``(mechanism, count)`` pairs."""

    terms: tuple[tuple[Mechanism, int], ...]

    def __post_init__(self) -> None:
        if not self.terms:
            raise ValueError("a composition needs at least one (mechanism, count) term")
        for i, term in enumerate(self.terms):
            if not (isinstance(term, tuple) and len(term) == 2):
                raise ValueError(f"terms[{i}] must be a (mechanism, count) pair, got {term!r}")
            mech, count = term
            if not isinstance(mech, Mechanism):
                raise ValueError(f"terms[{i}] mechanism must be a Mechanism, got {mech!r}")
            check_count(f"count of terms[{i}]", count)

    @property
    def symmetric(self) -> bool:
        """True when every term is a symmetric pair (one direction suffices)."""
        return all(m.symmetric for m, _ in self.terms)

    @property
    def lattice(self) -> bool:
        """True when some term has an atomic (lattice) PLLR."""
        return any(m.lattice for m, _ in self.terms)

    @property
    def directions(self) -> tuple[str, ...]:
        """The pair orders to account for: one if symmetric, else both."""
        return (DIRECTION_PQ,) if self.symmetric else (DIRECTION_PQ, DIRECTION_QP)

    @property
    def total_count(self) -> int:
        """Total number of composed steps."""
        return sum(c for _, c in self.terms)

    @property
    def delta_part(self) -> float:
        """Composed delta part 1 - prod(1 - delta_i)^{m_i} (GDP Eq. 12)."""
        s = sum(c * math.log1p(-m.delta_part) for m, c in self.terms if m.delta_part > 0.0)
        return 0.0 - math.expm1(s)  # 0.0 (not -0.0) when there is no delta part

    def pllr_sup(self, direction: str = DIRECTION_PQ) -> float:
        """Essential supremum of the composed privacy loss in ``direction`` (+inf if unbounded).

        delta(eps) equals the composed delta part for every eps at or beyond it, so no method's
        eps(delta) for a delta above that part can exceed it (the swapped order's PLLR is minus
        the own one, so its supremum is minus the sum of the infima).
        """
        if direction == DIRECTION_QP:
            return sum(-c * m.pllr_inf() for m, c in self.terms)
        return sum(c * m.pllr_sup() for m, c in self.terms)

    def cumulants(self, order: int, direction: str = DIRECTION_PQ) -> tuple[np.ndarray, np.ndarray]:
        """Summed cumulants ``(K(X), K(Y))`` of orders 1..order for the pair in ``direction``.

        Args:
            order: Highest cumulant order (>= 1).
            direction: ``"P||Q"`` or ``"Q||P"``.

        Returns:
            Two float arrays of length ``order``.
        """
        kx = np.zeros(order)
        ky = np.zeros(order)
        for mech, count in self.terms:
            c = mech.pllr_cumulants(order).for_direction(direction)
            kx += count * np.asarray(c.x)
            ky += count * np.asarray(c.y)
        return kx, ky

    def describe(self) -> str:
        """Human-readable summary, e.g. ``10000 x PoissonSubsampledGaussian(sigma=1.0, ...)``."""
        return " + ".join(f"{c} x {m!r}" for m, c in self.terms)


def compose(items: Mechanism | Composition | Iterable) -> Composition:
    """Build a :class:`Composition` from mechanisms and ``(mechanism, count)`` pairs.

    Equal mechanisms are merged (their counts add). Nested compositions are flattened.

    Args:
        items: A mechanism, a composition, or an iterable of mechanisms, compositions and
            ``(mechanism, count)`` pairs.

    Returns:
        The composition.

    Raises:
        ValueError: on an empty list, a non-mechanism, or an invalid count.
    """
    if isinstance(items, Composition):
        return items
    if isinstance(items, Mechanism):
        items = [(items, 1)]
    if isinstance(items, str | bytes) or not isinstance(items, Iterable):
        raise ValueError(
            f"items must be a mechanism, a composition or a list of (mechanism, count) pairs, "
            f"got {items!r}"
        )
    merged: dict[Mechanism, int] = {}
    for i, item in enumerate(items):
        if isinstance(item, Composition):
            pairs = list(item.terms)
        elif isinstance(item, Mechanism):
            pairs = [(item, 1)]
        elif isinstance(item, tuple) and len(item) == 2:
            mech, count = item
            if not isinstance(mech, Mechanism):
                raise ValueError(f"items[{i}] mechanism must be a Mechanism, got {mech!r}")
            pairs = [(mech, check_count(f"count of items[{i}]", count))]
        else:
            raise ValueError(f"items[{i}] must be a mechanism or (mechanism, count), got {item!r}")
        for mech, count in pairs:
            merged[mech] = merged.get(mech, 0) + count
    return Composition(tuple(merged.items()))
