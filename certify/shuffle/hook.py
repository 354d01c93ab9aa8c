r"""Providers for numeric's certified-shuffle hook (:mod:`numeric.shuffle.hooks`).

``tv(sigma, rounds, epochs)``, ``delta(sigma, rounds, epochs, eps, order)`` and
``epsilon(sigma, rounds, epochs, delta)`` return :class:`HookBound`: the certify
:class:`~certify.bound.Bound` with float ends rounded **outward** (the hook's agreed "Bound-like"
shape: float ``lower``/``upper``, ``method``, ``assumptions``, ``to_dict()``). One epoch is
:mod:`certify.shuffle.one_epoch`; E > 1 epochs :mod:`certify.shuffle.multi_epoch`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..bound import Bound

__all__ = ["HookBound", "delta", "epsilon", "tv"]


@dataclass(frozen=True)
class HookBound:
    """A certified enclosure with float ends rounded outward (``bound`` holds the exact ends)."""

    lower: float
    upper: float
    method: str
    assumptions: tuple[str, ...]
    bound: Bound

    @classmethod
    def of(cls, b: Bound) -> HookBound:
        method = (b.lower_method if b.lower_method == b.upper_method
                  else f"{b.lower_method} / {b.upper_method}")
        return cls(b.lower_value, b.value, method, b.assumptions, b)

    def to_dict(self) -> dict[str, Any]:
        """The Bound's dictionary (exact decimal ends) plus ``epsilon`` = the upper end for an
        eps bound (the shape of ``edgeworth epsilon --json --method certified``)."""
        out = self.bound.to_dict()
        if self.bound.quantity == "epsilon":
            out["epsilon"] = self.upper if math.isfinite(self.upper) else None
        return out


def tv(sigma: float, rounds: int, epochs: int) -> HookBound:
    """Certified total variation of ``epochs`` epochs of random allocation."""
    from .multi_epoch import tv_bound
    from .one_epoch import one_epoch_tv

    b = one_epoch_tv(sigma, rounds) if epochs == 1 else tv_bound(sigma, rounds, epochs)
    return HookBound.of(b)


def delta(sigma: float, rounds: int, epochs: int, eps: float, order: str) -> HookBound:
    """Certified delta(eps) of ``epochs`` epochs in pair order ``order``."""
    from .multi_epoch import delta_bound

    return HookBound.of(delta_bound(sigma, rounds, epochs, eps, order))


def epsilon(sigma: float, rounds: int, epochs: int, delta: float) -> HookBound:
    """Certified eps(delta) of ``epochs`` epochs (max over the orders)."""
    from .multi_epoch import epsilon_bound

    return HookBound.of(epsilon_bound(sigma, rounds, epochs, delta))
