"""The certified-mechanism registry: everything certify knows about one mechanism class.

Each built-in mechanism has one module in :mod:`certify.mechanisms` holding all of its certified
knowledge (PLLR moments, absolutely continuous parts, lattice step, Chernoff CGF, exact profile,
normality of its PLLR), ending with one :func:`register_certified` call. The generic modules
(:mod:`certify.moments`, :mod:`certify.lattice_steps`, :mod:`certify.chernoff`,
:mod:`certify.exact`, :mod:`certify.eeai`, :mod:`certify.lattice`) never test mechanism types:
they ask :func:`capability` for the function they need, which walks the class's MRO and raises
:class:`numeric.errors.NotApplicable` (naming the mechanism and the capability) when nothing is
registered, so :mod:`certify.combine` records a clean "not applicable" warning.

The built-ins register when :mod:`certify.mechanisms` is imported; every generic module imports
it, so using any of them is enough. Another package adds a mechanism with
``register_certified(MyMechanism, CertifiedMechanism("MyMechanism", lattice_step=...))`` (derive
registers its compiled mechanisms' lattice steps through
:func:`certify.lattice_steps.register_lattice_step`, which does exactly that).

This module imports nothing else from certify at run time (the types in the annotations are for
readers and type checkers only).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from numeric.errors import NotApplicable

if TYPE_CHECKING:  # annotations only: no run-time import (the registry is the bottom layer)
    from .cgf import StepCGF
    from .exact_model import ExactComposition
    from .pllr import ContinuousPart, PLLRMoments
    from .steps import LatticeStep

__all__ = [
    "CAPABILITIES",
    "CertifiedMechanism",
    "capability",
    "find_capability",
    "register_certified",
    "registered",
    "unregister_certified",
]


@dataclass(frozen=True)
class CertifiedMechanism:
    """Everything certify knows about one mechanism class; a field left None = capability absent.

    Attributes:
        name: Display name (normally the class name).
        moments: ``(mechanism) -> PLLRMoments``: certified PLLR cumulants and absolute central
            moments under P and Q (EEAI inputs, Arb balls), called at the working precision.
        continuous_parts: ``(mechanism) -> ContinuousPart | None``: certified absolutely
            continuous components of the PLLR laws (the EEAI's characteristic-function bound).
        lattice_step: ``(mechanism, direction) -> LatticeStep``: the single-step law of the
            lattice method in pair order ``direction`` (already validated).
        chernoff: ``(mechanism, direction) -> StepCGF``: the step's certified Renyi cumulant
            generating function Lambda(alpha) in pair order ``direction``.
        exact_profile: ``(mechanism, count) -> ExactComposition``: the exact model of ``count``
            copies (Gaussian mu or pure eps0 and delta parts), for :mod:`certify.exact`.
        normal_pllr: ``(mechanism) -> bool``: True when the PLLR is exactly normal under both P
            and Q (the EEAI's zero uniform error ``exact-normal``).
    """

    name: str
    moments: Callable[[Any], PLLRMoments] | None = None
    continuous_parts: Callable[[Any], ContinuousPart | None] | None = None
    lattice_step: Callable[[Any, str], LatticeStep] | None = None
    chernoff: Callable[[Any, str], StepCGF] | None = None
    exact_profile: Callable[[Any, int], ExactComposition] | None = None
    normal_pllr: Callable[[Any], bool] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name != "name" and v is not None and not callable(v):
                raise ValueError(f"{f.name} must be callable or None, got {v!r}")


CAPABILITIES: tuple[str, ...] = tuple(f.name for f in fields(CertifiedMechanism)
                                      if f.name != "name")
"""Names of the per-mechanism capabilities (the function fields of :class:`CertifiedMechanism`)."""

# (method that needs it, what it is): for NotApplicable messages
_WHAT = {
    "moments": ("eeai", "PLLR moments"),
    "continuous_parts": ("eeai", "absolutely continuous PLLR component"),
    "lattice_step": ("lattice", "lattice step (single-step privacy-loss law)"),
    "chernoff": ("chernoff", "cumulant generating function"),
    "exact_profile": ("exact", "exact privacy profile"),
    "normal_pllr": ("eeai", "normality of the PLLR"),
}

_REGISTRY: dict[type, CertifiedMechanism] = {}


def register_certified(cls: type, knowledge: CertifiedMechanism) -> None:
    """Register certify's knowledge of the mechanism class ``cls`` (and, via the MRO, its
    subclasses).

    Args:
        cls: The mechanism class.
        knowledge: Its :class:`CertifiedMechanism`.

    Raises:
        ValueError: if ``cls`` is not a class, ``knowledge`` is not a
            :class:`CertifiedMechanism`, or ``cls`` is already registered (a duplicate).
    """
    if not isinstance(cls, type):
        raise ValueError(f"cls must be a class, got {cls!r}")
    if not isinstance(knowledge, CertifiedMechanism):
        raise ValueError(f"knowledge must be a CertifiedMechanism, got {knowledge!r}")
    if cls in _REGISTRY:
        raise ValueError(
            f"cls {cls.__qualname__} already has certified knowledge registered "
            f"({_REGISTRY[cls].name!r}); register each class once, with every capability"
        )
    _REGISTRY[cls] = knowledge


def unregister_certified(cls: type) -> CertifiedMechanism:
    """Remove and return the registration of ``cls`` (for tests and reloading plug-ins).

    Raises:
        ValueError: if ``cls`` is not registered.
    """
    try:
        return _REGISTRY.pop(cls)
    except (KeyError, TypeError):
        raise ValueError(f"cls {cls!r} has no certified knowledge registered") from None


def registered() -> dict[type, CertifiedMechanism]:
    """A copy of the registry (class -> knowledge), in registration order."""
    return dict(_REGISTRY)


def _check_name(name: str) -> None:
    if name not in CAPABILITIES:
        raise ValueError(f"name must be one of {CAPABILITIES}, got {name!r}")


def find_capability(mechanism: Any, name: str) -> Callable | None:
    """The capability ``name`` of ``mechanism``, or None when no class in its MRO registered it.

    For optional capabilities (``continuous_parts``, ``normal_pllr``); see :func:`capability`.

    Raises:
        ValueError: if ``name`` is not one of :data:`CAPABILITIES`.
    """
    _check_name(name)
    for klass in type(mechanism).__mro__:
        knowledge = _REGISTRY.get(klass)
        if knowledge is not None:
            fn = getattr(knowledge, name)
            if fn is not None:
                return fn
    return None


def capability(mechanism: Any, name: str) -> Callable:
    """The capability ``name`` of ``mechanism``: the first class in ``type(mechanism).__mro__``
    whose registration has that field set.

    Args:
        mechanism: A mechanism instance.
        name: One of :data:`CAPABILITIES`.

    Returns:
        The registered function (see :class:`CertifiedMechanism` for its signature).

    Raises:
        NotApplicable: naming the mechanism and the capability when none is registered.
        ValueError: if ``name`` is not one of :data:`CAPABILITIES`.
    """
    fn = find_capability(mechanism, name)
    if fn is None:
        method, what = _WHAT[name]
        raise NotApplicable(
            f"{method}: does not apply to {type(mechanism).__name__} (no certified {what}: "
            f"capability {name!r} is not registered; see certify.registry)"
        )
    return fn
