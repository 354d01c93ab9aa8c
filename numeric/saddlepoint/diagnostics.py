"""Diagnostics of the saddlepoint estimate, and the notes added to its warnings.

Always computed (warnings and ``details``): |l_3| > 0.2 or |l_4| > 0.1 at the saddlepoint,
relative disagreement above 1e-3 between orders r and r - 1, a non-positive tilted-Edgeworth
factor (:func:`point_diagnostics`), and -- by regime rather than by value -- a composition of
Poisson-subsampled mechanisms whose expected number of sampled steps sum(rate * m) is below 10
(:func:`regime_diagnostics`; the bimodal "one big step" regime, where the benchmark's certified
references are too wide to establish the estimate's accuracy). They fire where the tilted law is
far from normal. The method does *not* fall back to another method itself: the ``auto`` method
(:mod:`numeric.auto`) reads them and falls back to a certified or exact answer.
"""

from __future__ import annotations

import math

from ..composition import Composition
from .points import Point

__all__ = [
    "FEW_SAMPLED_STEPS",
    "FIRED_NOTE",
    "L3_MAX",
    "L4_MAX",
    "ORDER_DISAGREEMENT_MAX",
    "finish",
    "fired_note",
    "is_exact_gaussian",
    "lattice_note",
    "point_details",
    "point_diagnostics",
    "regime_diagnostics",
    "sampled_steps",
]

L3_MAX = 0.2
L4_MAX = 0.1
ORDER_DISAGREEMENT_MAX = 1e-3
FEW_SAMPLED_STEPS = 10.0  # sum(rate * m) below this: the "one big step" regime
FIRED_NOTE = ("diagnostics fired: the saddlepoint estimate may be inaccurate here; method "
              "'auto' falls back to a certified or exact answer")


def point_diagnostics(p: Point, direction: str) -> list[str]:
    """The diagnostics of the point ``p`` (module docstring) as warnings.

    Args:
        p: The saddlepoint point of the reported root (or eps).
        direction: Its pair order, prefixed to every warning.

    Returns:
        The warnings that fire (empty when none does).
    """
    warns = []
    l3, l4 = p.lam.get(3, 0.0), p.lam.get(4, 0.0)
    if abs(l3) > L3_MAX or abs(l4) > L4_MAX:
        warns.append(
            f"{direction}: large standardized tilted cumulants (l3={l3:.3g}, l4={l4:.3g}) at the "
            f"saddlepoint t={p.t:.4g}: the tilted law is far from normal (e.g. the 'one big "
            "step' regime); the saddlepoint estimate is unreliable here"
        )
    if p.disagreement > ORDER_DISAGREEMENT_MAX:
        warns.append(
            f"{direction}: orders r and r-1 disagree by {p.disagreement:.2e} (relative) at the "
            "saddlepoint"
        )
    if not (p.factor > 0.0):
        warns.append(f"{direction}: the tilted Edgeworth factor is not positive ({p.factor:.3g})")
    return warns


def sampled_steps(comp: Composition) -> float:
    """The expected number of sampled steps of a composition of Poisson-subsampled mechanisms.

    Args:
        comp: A composition.

    Returns:
        sum(rate * m) when every mechanism has a Poisson sampling rate < 1
        (:attr:`~numeric.mechanisms.Mechanism.poisson_rate`), else inf.
    """
    rates = [m.poisson_rate for m, _ in comp.terms]
    if any(r is None for r in rates):
        return math.inf
    return math.fsum(r * c for r, (_, c) in zip(rates, comp.terms, strict=True))


def regime_diagnostics(comp: Composition, direction: str) -> list[str]:
    """The "one big step" diagnostic: only Poisson-subsampled terms (rate < 1), and few sampled
    steps in expectation (:func:`sampled_steps`).

    Args:
        comp: A composition.
        direction: The pair order, prefixed to the warning.

    Returns:
        The warning, if it fires (else an empty list).
    """
    sampled = sampled_steps(comp)
    if sampled >= FEW_SAMPLED_STEPS:
        return []
    return [f"{direction}: few sampled steps (sum of rate * m = {sampled:.3g} < "
            f"{FEW_SAMPLED_STEPS:g}): the 'one big step' regime, where the tilted law can be "
            "bimodal and the saddlepoint estimate's accuracy is not established"]


def point_details(p: Point, roots: int | None = None) -> dict:
    """The ``details`` entry of a point: t, s, l3, l4, order disagreement, factor (and roots).

    Args:
        p: A saddlepoint point.
        roots: Down-crossings counted by the grid scan (eps(delta) only).

    Returns:
        A dict of plain floats (and the int ``roots``).
    """
    out = {
        "t": p.t,
        "s": p.s,
        "l3": p.lam.get(3, 0.0),
        "l4": p.lam.get(4, 0.0),
        "order_disagreement": p.disagreement,
        "factor": p.factor,
    }
    if roots is not None:
        out["roots"] = roots
    return out


def fired_note(warns: list[str]) -> None:
    """Append :data:`FIRED_NOTE` to a non-empty list of warnings.

    Args:
        warns: The query's warnings so far (modified in place).
    """
    if warns:
        warns.append(FIRED_NOTE)


def lattice_note(comp: Composition, warns: list[str]) -> None:
    """Append the lattice note when every mechanism's PLLR is purely atomic.

    Args:
        comp: A composition.
        warns: The query's warnings so far (modified in place).
    """
    if all(m.purely_atomic for m, _ in comp.terms):
        exact = all(m.has_exact_answer for m, _ in comp.terms)
        warns.append(
            "the PLLR is purely atomic (finitely many values per step): the tilted Edgeworth "
            "density smooths the lattice, an error of order the lattice span times the density "
            "(~1e-4 relative in eps for n ~ 1e3)"
            + ("; the 'exact' method is available for this composition" if exact else
               "; a certified method bounds it")
        )


def finish(comp: Composition, fired: list[str]) -> tuple[tuple[str, ...], list[str]]:
    r"""The query's warnings and ``details["diagnostics"]`` from one list: the single source of
    truth of the diagnostic state.

    Every warning of the query that says the estimate may be off (point diagnostics, the regime,
    the tilt resolution, saturation, clipping, the search's notes) is a *fired diagnostic*; the
    notes appended here are not. The warnings are ``fired`` (deduplicated, in order), then
    :data:`FIRED_NOTE` if and only if ``fired`` is non-empty, then the lattice note
    (:func:`lattice_note`), which alone never makes the diagnostics fire. ``auto``
    (:mod:`numeric.auto`) accepts the estimate only when the returned diagnostics are empty,
    so the note in the warnings and the diagnostics it reads cannot disagree.

    Args:
        comp: The composition.
        fired: The fired diagnostics of the query (not modified).

    Returns:
        ``(warnings, diagnostics)``: the result's warnings and its ``details["diagnostics"]``.
    """
    diagnostics = list(dict.fromkeys(fired))
    warns = list(diagnostics)
    fired_note(warns)
    lattice_note(comp, warns)
    return tuple(warns), diagnostics


def is_exact_gaussian(comp: Composition) -> bool:
    """True when every mechanism belongs to the Gaussian exact family (the tilted law is then
    Gaussian and the method exact at order 0).

    Args:
        comp: A composition.

    Returns:
        Whether the composition is Gaussian.
    """
    fams = [m.exact_family() for m, _ in comp.terms]
    return all(f is not None and f[0] == "gaussian" for f in fams)
