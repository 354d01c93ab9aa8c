r"""The hook through which a certified layer provides shuffle (random-allocation) bounds.

numeric never imports certify. ``edgeworth shuffle tv|epsilon --method certified`` looks up the
providers registered here; certify fills them from its existing entry point
``certify.plugin:register_methods`` (group ``edgeworth.methods``), which
:func:`numeric.registry.load_plugins` runs on demand. Without a registration the command exits 1
with "certified shuffle bounds need the certify extra".

The agreed signature (both providers are plain callables; the pair is
:class:`numeric.mechanisms.random_allocation.RandomAllocation`: one epoch of ``rounds`` rounds,
P = H0 all rounds N(0, 1), Q = H1 one uniformly random round N(1/sigma, 1)):

* ``tv(sigma: float, rounds: int, epochs: int) -> Bound-like``: a proven enclosure of the total
  variation distance between the ``epochs``-fold products of H0 and H1 (for one epoch,
  E|S - M| / (2M) = delta(0));
* ``delta(sigma: float, rounds: int, epochs: int, eps: float, order: str) -> Bound-like``: a
  proven enclosure of delta(eps) of the ``epochs``-fold composition, in the pair order
  ``order``: ``"P||Q"`` (P = H0: E_H0[(LR - e^eps)_+]) or ``"Q||P"`` (P = H1: the swapped pair);
  the caller takes the max over the orders for add/remove adjacency;
* optional ``epsilon(sigma: float, rounds: int, epochs: int, delta: float) -> Bound-like``: a
  proven enclosure of eps(delta) over both orders; when absent the command line answers
  ``--method certified`` for epsilon by bisection on ``delta`` (each step a proven bracket).

"Bound-like" means certify's ``Bound`` (read through ``to_dict()``: exact decimal strings
``"lower"``/``"upper"``, null for an infinite end), or any object whose ``lower`` and ``upper``
convert with ``float()``; :func:`bound_ends` reads either. Providers raise
:class:`numeric.errors.NotApplicable` for inputs they cannot certify (e.g. a budget exceeded).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import NotApplicable
from ..registry import load_plugins

__all__ = [
    "CERTIFY_EXTRA_MESSAGE",
    "CertifiedShuffle",
    "bound_ends",
    "certified_shuffle",
    "register_certified_shuffle",
]

CERTIFY_EXTRA_MESSAGE = "certified shuffle bounds need the certify extra"


@dataclass(frozen=True)
class CertifiedShuffle:
    """The registered certified providers (module docstring for the signatures)."""

    tv: Callable[[float, int, int], Any]
    delta: Callable[[float, int, int, float, str], Any]
    epsilon: Callable[[float, int, int, float], Any] | None = None


_PROVIDERS: list[CertifiedShuffle] = []


def register_certified_shuffle(
    tv: Callable[[float, int, int], Any],
    delta: Callable[[float, int, int, float, str], Any],
    epsilon: Callable[[float, int, int, float], Any] | None = None,
) -> None:
    """Register the certified shuffle providers (the latest registration wins).

    Args:
        tv: ``tv(sigma, rounds, epochs) -> Bound-like`` (module docstring).
        delta: ``delta(sigma, rounds, epochs, eps, order) -> Bound-like``, ``order`` in
            ``{"P||Q", "Q||P"}``.
        epsilon: optional ``epsilon(sigma, rounds, epochs, delta) -> Bound-like``.

    Raises:
        ValueError: if ``tv`` or ``delta`` is not callable.
    """
    if not (callable(tv) and callable(delta)) or not (epsilon is None or callable(epsilon)):
        raise ValueError("tv and delta (and epsilon if given) must be callables")
    _PROVIDERS[:] = [CertifiedShuffle(tv, delta, epsilon)]


def certified_shuffle() -> CertifiedShuffle:
    """The registered providers, loading plug-ins first.

    Raises:
        NotApplicable: "certified shuffle bounds need the certify extra" when none is registered.
    """
    if not _PROVIDERS:
        load_plugins()
    if not _PROVIDERS:
        raise NotApplicable(CERTIFY_EXTRA_MESSAGE)
    return _PROVIDERS[0]


def bound_ends(bound: Any) -> tuple[float, float]:
    """(lower, upper) of a Bound-like as floats: its float ends if they convert (the provider
    rounds them outward), else the decimal ends of ``to_dict()`` converted and moved one ulp
    outward (an infinite end, null in the dictionary, is -inf / +inf).
    """
    import math

    try:
        return float(bound.lower), float(bound.upper)
    except (TypeError, ValueError):
        pass
    to_dict = getattr(bound, "to_dict", None)
    if callable(to_dict):  # certify's Bound (Endpoint ends): the exact decimals
        d = to_dict()
        lo, hi = d.get("lower"), d.get("upper")
        lo = -math.inf if lo is None else math.nextafter(float(lo), -math.inf)
        hi = math.inf if hi is None else math.nextafter(float(hi), math.inf)
        return lo, hi
    raise ValueError(f"not a Bound-like: {bound!r}")
