r"""Certified moments of the privacy-loss log-likelihood ratio (PLLR), in Arb ball arithmetic.

For a dominating pair (P, Q) with PLLR ``L = log q/p`` (docs/math.md section 1; Wang, Gao, Zhang,
Shen, Su, *Analytical Composition of Differential Privacy via the Edgeworth Accountant*,
arXiv:2206.04236), X = L under P and Y = L under Q. :func:`pllr_moments` encloses, per mechanism
and for both laws, the cumulants :math:`\kappa_1, \dots, \kappa_4` and the absolute central
moments :math:`E|L - EL|` and :math:`E|L - EL|^3` (types in :mod:`certify.pllr`), from which the
uniform Edgeworth error bounds of :mod:`certify.eeai` are built. Every number is an Arb ball
that contains the exact value (python-flint; Johansson, IEEE Trans. Computers 2017).

:func:`continuous_parts` gives certified absolutely continuous components (f0, l) -- the PLLR law
has a density >= f0 on an interval of length l -- for the characteristic-function condition of
DGG's Theorem 3.1 used by :mod:`certify.eeai`; lattice laws (randomized response, ApproxDP) have
none.

Both dispatch through :mod:`certify.registry` (capabilities ``moments`` and
``continuous_parts``); the formulas of the built-ins, with their sources, are in their modules
in :mod:`certify.mechanisms` (Gaussian and Laplace closed forms, the two-point law of randomized
response / ApproxDP, rigorous quadrature with analytic tails for the Poisson-subsampled
Gaussian). Results are cached per (mechanism, precision).
"""

from __future__ import annotations

import functools

from numeric.mechanisms import Mechanism

from . import mechanisms as _builtin_mechanisms  # noqa: F401  (registers the built-ins)
from .engine import DEFAULT_PRECISION, workprec
from .pllr import ContinuousPart, LawMoments, PLLRMoments
from .registry import capability, find_capability

__all__ = [
    "ContinuousPart",
    "LawMoments",
    "PLLRMoments",
    "continuous_parts",
    "pllr_moments",
]


def pllr_moments(mechanism: Mechanism, *, prec: int | None = None) -> PLLRMoments:
    """Certified PLLR moments of ``mechanism`` under P and Q.

    Args:
        mechanism: A mechanism whose class (or a base class) registered the ``moments``
            capability (:mod:`certify.registry`; built-ins: Gaussian, Laplace,
            RandomizedResponse, ApproxDP, PoissonSubsampledGaussian).
        prec: Arb working precision in bits (default ``engine.DEFAULT_PRECISION``).

    Returns:
        A :class:`PLLRMoments` of Arb balls.

    Raises:
        NotApplicable: if no certified moments are registered for the mechanism's class.
    """
    bits = int(DEFAULT_PRECISION if prec is None else prec)
    return _cached(mechanism, bits)


@functools.lru_cache(maxsize=1024)
def _cached(mechanism: Mechanism, bits: int) -> PLLRMoments:
    fn = capability(mechanism, "moments")
    with workprec(bits):
        out = fn(mechanism)
    return PLLRMoments(out.x, out.y, out.provenance, out.assumptions, bits)


def continuous_parts(mechanism: Mechanism, *, prec: int | None = None) -> ContinuousPart | None:
    """Certified absolutely continuous components of the PLLR laws, or None if unavailable.

    Args:
        mechanism: A :mod:`numeric` mechanism.
        prec: Arb precision in bits (default ``engine.DEFAULT_PRECISION``).

    Returns:
        A :class:`ContinuousPart` or None (no ``continuous_parts`` capability registered, e.g.
        lattice laws, which have no continuous component).
    """
    bits = int(DEFAULT_PRECISION if prec is None else prec)
    return _cached_continuous(mechanism, bits)


@functools.lru_cache(maxsize=256)
def _cached_continuous(mechanism: Mechanism, bits: int) -> ContinuousPart | None:
    fn = find_capability(mechanism, "continuous_parts")
    if fn is None:
        return None
    with workprec(bits):
        return fn(mechanism)
