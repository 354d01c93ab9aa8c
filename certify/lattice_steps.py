r"""Single-step privacy-loss laws in Arb for the lattice method (:mod:`certify.lattice`).

:func:`lattice_step` returns a mechanism's :class:`~certify.steps.LatticeStep` in one pair order
(the interface and its contract are in :mod:`certify.steps`): enclosures of the hockey-stick
curve :math:`\delta_1(\varepsilon) = Q(L > \varepsilon) - e^\varepsilon P(L > \varepsilon)`
(docs/math.md section 1), of the tails :math:`Q(L \ge s)`, :math:`P(L \ge s)` and of the masses at
:math:`\pm\infty`. It dispatches through :mod:`certify.registry` (capability ``lattice_step``):
a new mechanism registers one factory ``(mechanism, direction) -> LatticeStep``, e.g. with
``register_lattice_step(MechanismClass)(factory)`` next to its own code (derive registers its
compiled mechanisms this way; certify never imports derive).

The built-in steps and their closed forms (with sources) live with their mechanisms in
:mod:`certify.mechanisms`: :class:`GaussianStep` (GDP Cor. 2.13),
:class:`SubsampledGaussianStep` (both pair orders), :class:`LaplaceStep` and
:class:`ApproxDPStep` (randomized response is delta0 = 0); they are re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from numeric.mechanisms.base import DIRECTION_PQ

from .mechanisms.gaussian import GaussianStep
from .mechanisms.laplace import LaplaceStep
from .mechanisms.randomized_response import ApproxDPStep
from .mechanisms.subsampled_gaussian import SubsampledGaussianStep
from .registry import CertifiedMechanism, capability, register_certified
from .special import normal_cdf, normal_sf
from .steps import LatticeStep, check_direction, exact_value

__all__ = [
    "ApproxDPStep",
    "GaussianStep",
    "LaplaceStep",
    "LatticeStep",
    "SubsampledGaussianStep",
    "exact_value",
    "lattice_step",
    "normal_cdf",
    "normal_sf",
    "register_lattice_step",
    "step_assumptions",
]


def lattice_step(mechanism: Any, direction: str = DIRECTION_PQ) -> LatticeStep:
    """The lattice step of ``mechanism`` in pair order ``direction``.

    Args:
        mechanism: A mechanism whose class (or a base class) registered a lattice step.
        direction: ``"P||Q"`` or ``"Q||P"``.

    Returns:
        A :class:`LatticeStep`.

    Raises:
        NotApplicable: if no step is registered for the mechanism's class (or its factory
            refuses this instance).
        ValueError: on a bad direction.
    """
    check_direction(direction)
    return capability(mechanism, "lattice_step")(mechanism, direction)


def register_lattice_step(cls: type) -> Callable[[Callable], Callable]:
    """Decorator registering a factory ``(mechanism, direction) -> LatticeStep`` for ``cls``.

    ``register_lattice_step(C)(factory)`` is ``register_certified(C,
    CertifiedMechanism(C.__name__, lattice_step=factory))`` (:mod:`certify.registry`): the class
    then has the lattice capability only. The factory receives a validated direction.

    Raises:
        ValueError: if ``cls`` is not a class or is already registered.
    """
    if not isinstance(cls, type):
        raise ValueError(f"cls must be a class, got {cls!r}")

    def register(factory: Callable) -> Callable:
        register_certified(cls, CertifiedMechanism(cls.__name__, lattice_step=factory))
        return factory

    return register


def step_assumptions(comp) -> tuple[str, ...]:
    """The assumptions a lattice bound of ``comp`` rests on, once each: the pair-order note for
    an asymmetric composition, then every single-step enclosure's own assumptions.

    Args:
        comp: A :class:`numeric.composition.Composition`.

    Returns:
        The assumptions, in order of first appearance.
    """
    out: list[str] = []
    if not comp.symmetric:
        out.append("asymmetric pair: both orders bounded, the larger bound reported")
    for mech, _ in comp.terms:
        for d in comp.directions:
            for a in lattice_step(mech, d).assumptions:
                if a not in out:
                    out.append(a)
    return tuple(out)
