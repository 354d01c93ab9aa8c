"""Certified accounting: every applicable certified method, intersected.

``certified_delta(composition, eps)`` and ``certified_epsilon(composition, delta)`` run each
method registered in :data:`CERTIFIED_METHODS` that applies to the composition (a method signals
"does not apply" with ``ValueError``), and intersect their enclosures. Every method's enclosure is
proven, so the intersection is too; disjoint enclosures would mean a bug and raise. The result
names the method that gave each end (``lower_method``, ``upper_method``).

Registered now: ``exact`` (Gaussian, pure DP; :mod:`certify.exact`) and ``eeai`` (the Edgeworth
interval, :mod:`certify.eeai`, for every built-in mechanism), ``chernoff`` (:mod:`certify.chernoff`)
and ``lattice`` (both ends for homogeneous Gaussian / subsampled-Gaussian compositions:
dominating lattice PLD above, exactly evaluated binned threshold test below;
:mod:`certify.lattice`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .bound import Bound

__all__ = ["CERTIFIED_METHODS", "CertifiedMethod", "certified_delta", "certified_epsilon"]


@dataclass(frozen=True)
class CertifiedMethod:
    """A certified method: ``delta_fn(comp, eps)`` and ``epsilon_fn(comp, delta)`` give Bounds."""

    name: str
    delta_fn: Callable[..., Bound]
    epsilon_fn: Callable[..., Bound]


def _lazy(target: str) -> Callable[..., Bound]:
    """``"module:function"`` in certify, imported on first call (keeps python-flint users lazy)."""
    module, name = target.split(":")

    def call(comp, x):
        from importlib import import_module

        return getattr(import_module(f".{module}", __package__), name)(comp, x)

    call.__name__ = name
    return call


CERTIFIED_METHODS: list[CertifiedMethod] = [
    CertifiedMethod("exact", _lazy("exact:exact_delta_bound"), _lazy("exact:exact_epsilon_bound")),
    CertifiedMethod("eeai", _lazy("eeai:delta_interval"), _lazy("eeai:epsilon_interval")),
    CertifiedMethod("chernoff", _lazy("chernoff:chernoff_delta_bound"),
                    _lazy("chernoff:chernoff_epsilon_bound")),
    CertifiedMethod("lattice", _lazy("lattice:lattice_delta_interval"),
                    _lazy("lattice:lattice_epsilon_interval")),
]


def _combine(results: list[Bound], refusals: list[str], what: str) -> Bound:
    if not results:
        raise ValueError(f"no certified method applies to {what}: " + "; ".join(refusals))
    out = results[0]
    for b in results[1:]:
        out = out.intersect(b)
    notes = tuple(f"not applicable: {r}" for r in refusals)
    return Bound(
        out.quantity, out.lower, out.upper, out.lower_method, out.upper_method, out.precision,
        out.assumptions, out.direction, out.warnings + notes, out.inputs,
    )


def _run(kind: str, composition, x) -> Bound:
    from numeric.composition import compose

    comp = compose(composition)
    results, refusals = [], []
    for m in CERTIFIED_METHODS:
        fn = m.delta_fn if kind == "delta" else m.epsilon_fn
        try:
            results.append(fn(comp, x))
        except ValueError as exc:
            if "must" in str(exc) and ("delta" in str(exc) or "eps" in str(exc)):
                raise  # bad input, not "does not apply"
            refusals.append(f"{m.name} ({exc})")
    return _combine(results, refusals, comp.describe())


def certified_delta(composition, eps) -> Bound:
    """Certified enclosure of delta(eps): the intersection of every applicable method.

    Raises:
        ValueError: on bad input, or if no certified method applies.
    """
    return _run("delta", composition, eps)


def certified_epsilon(composition, delta) -> Bound:
    """Certified enclosure of eps(delta): the intersection of every applicable method.

    Raises:
        ValueError: on bad input, or if no certified method applies.
    """
    return _run("epsilon", composition, delta)
