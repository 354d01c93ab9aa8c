"""Certified accounting: every applicable certified method, intersected.

``certified_delta(composition, eps)`` and ``certified_epsilon(composition, delta)`` run each
method registered in :data:`CERTIFIED_METHODS` that applies to the composition and intersect
their enclosures. Every method's enclosure is proven, so the intersection is too; disjoint
enclosures would mean a bug and raise. The result names the method that gave each end
(``lower_method``, ``upper_method``).

A method signals "does not apply" with :class:`numeric.errors.NotApplicable` and only that; each
refusal is recorded in the result's ``warnings`` as ``"not applicable: <method> (<reason>)"``.
Bad input (a negative eps, a delta outside (0, 1), a bad ``time_budget``) raises ``ValueError``;
if no method applies, :class:`~numeric.errors.NotApplicable` is raised with every reason.

**Without a time budget** the lattice runs right after the closed forms; for compositions of
many distinct terms (:data:`EEAI_SKIP_TERMS`), whose EEAI moments and Chernoff objective cost
more per term than the lattice, those two then run only where the lattice gave no interval or
one wider than :data:`EEAI_AFTER_LATTICE`; the skip is recorded like a refusal (``"not
applicable: eeai (not run: the lattice interval is already ...)"``).

**Time budget.** With ``time_budget`` (seconds) the cheap methods run first (exact, Chernoff,
EEAI) and the lattice last, so that a lattice stopped by the deadline leaves their enclosures;
every method checks the deadline cooperatively
(:mod:`certify.budget`) and the lattice also refuses up front when its estimated cost exceeds the
time left. A method stopped by the budget raises :class:`~numeric.errors.BudgetExceeded` (a
``NotApplicable``), recorded like any refusal, e.g. ``"not applicable: lattice (time budget of
3 s exceeded ...)"``; the result is the intersection of the methods that finished. The budget
never changes a number: a finished method returns exactly what it returns without one
(without one, the EEAI may not run at all: above).

A method's own ``"vacuous: ..."`` warning is kept as is only when the combined result is
vacuous too; otherwise it is reworded ``"<method> alone was vacuous (...)"``, so a warning
starting with ``"vacuous:"`` always describes the reported result.

**Progress.** The run is a :func:`numeric.progress.progress` block of one step per method
(described by the method running), shown only when a front end enabled the display (the command
line on a terminal); it changes nothing else.

Registered now: ``exact`` (Gaussian, pure DP; :mod:`certify.exact`), ``eeai`` (the Edgeworth
interval, :mod:`certify.eeai`), ``chernoff`` (:mod:`certify.chernoff`) and ``lattice`` (both ends:
dominating lattice PLD above, exactly evaluated binned threshold test below;
:mod:`certify.lattice`, on adaptive grids refined until the interval is ``rel_width`` wide:
:mod:`certify.lattice_target`) and ``reveal`` (one term of a subsampled Gaussian at sigma < 0.05:
:mod:`certify.mechanisms.subsampled_gaussian_reveal`); each applies to the mechanisms whose
capabilities it needs are registered (:mod:`certify.registry`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from numeric.errors import NotApplicable
from numeric.progress import progress

from .bound import Bound
from .budget import check_budget_seconds, check_deadline, current_deadline
from .budget import time_budget as budget_block
from .engine import to_arb

__all__ = ["CERTIFIED_METHODS", "EEAI_AFTER_LATTICE", "EEAI_SKIP_TERMS", "RUN_ORDER",
           "UNTIMED_ORDER", "CertifiedMethod", "certified_delta", "certified_epsilon",
           "skip_reason"]


@dataclass(frozen=True)
class CertifiedMethod:
    """A certified method: ``delta_fn(comp, eps)`` and ``epsilon_fn(comp, delta)`` give Bounds.

    ``applies(comp) -> bool`` (optional): a method specific to one mechanism family is skipped
    silently (no "not applicable" warning) for compositions it is not about.
    ``costly_per_term``: its work grows with the distinct terms faster than the lattice's, so
    without a time budget it is not run after a narrow lattice interval of a composition of many
    terms (:data:`EEAI_SKIP_TERMS`, :data:`EEAI_AFTER_LATTICE`).
    """

    name: str
    delta_fn: Callable[..., Bound]
    epsilon_fn: Callable[..., Bound]
    applies: Callable[..., bool] | None = None
    options: tuple[str, ...] = ()  # keyword options it takes (e.g. "rel_width")
    costly_per_term: bool = False


def _lazy(target: str) -> Callable[..., Bound]:
    """``"module:function"`` in certify, imported on first call (keeps python-flint users lazy)."""
    module, name = target.split(":")

    def call(comp, *x, **kw):
        from importlib import import_module

        return getattr(import_module(f".{module}", __package__), name)(comp, *x, **kw)

    call.__name__ = name
    return call


CERTIFIED_METHODS: list[CertifiedMethod] = [
    CertifiedMethod("exact", _lazy("exact:exact_delta_bound"), _lazy("exact:exact_epsilon_bound")),
    CertifiedMethod("one-step", _lazy("one_step:one_step_delta_bound"),
                    _lazy("one_step:one_step_epsilon_bound")),
    CertifiedMethod("reveal", _lazy("mechanisms.subsampled_gaussian_reveal:reveal_delta_bound"),
                    _lazy("mechanisms.subsampled_gaussian_reveal:reveal_epsilon_bound"),
                    _lazy("mechanisms.subsampled_gaussian_reveal:applies")),
    CertifiedMethod("eeai", _lazy("eeai:delta_interval"), _lazy("eeai:epsilon_interval"),
                    costly_per_term=True),
    CertifiedMethod("chernoff", _lazy("chernoff:chernoff_delta_bound"),
                    _lazy("chernoff:chernoff_epsilon_bound"), costly_per_term=True),
    CertifiedMethod("lattice", _lazy("lattice_target:target_delta_interval"),
                    _lazy("lattice_target:target_epsilon_interval"), options=("rel_width",)),
    CertifiedMethod("shuffle", _lazy("mechanisms.random_allocation:certified_delta"),
                    _lazy("mechanisms.random_allocation:certified_epsilon"),
                    _lazy("mechanisms.random_allocation:applies")),
]
"""The certified methods, in the order their results are intersected."""

RUN_ORDER = ("exact", "one-step", "shuffle", "reveal", "chernoff", "eeai", "lattice")
"""The order the methods run in under a time budget: the cheap ones first, the lattice last
(methods not listed run after these, in registry order)."""

UNTIMED_ORDER = ("exact", "one-step", "shuffle", "reveal", "lattice", "chernoff", "eeai")
"""The order without a time budget: the lattice before the EEAI, which then runs only where the
lattice left a wide or no interval (:data:`EEAI_AFTER_LATTICE`)."""

EEAI_AFTER_LATTICE = 1e-3
EEAI_SKIP_TERMS = 20
"""Without a time budget, a composition of at least ``EEAI_SKIP_TERMS`` distinct terms does not
run the methods marked ``costly_per_term`` (the EEAI) once the lattice has given an interval at
most ``EEAI_AFTER_LATTICE`` wide (relative). A work choice only: every enclosure that runs is
proven, and skipping one can only leave the intersection wider. The EEAI's moments are the
cost, one Arb quadrature per distinct mechanism: 81 s of CPU for 1000 noise levels (cProfile),
more than the lattice's 74 s. Fewer terms keep it: one mechanism's moments are cheap, and at
10^9 DP-SGD steps the EEAI is tighter than the lattice ([85578.2, 85578.4] inside the
lattice's [85576.1, 85580.9]). Chernoff is skipped by the same rule (since 2026-12-03): at 1000
noise levels it took ~10 s after a lattice interval already within 1e-4. It wins pure-DP upper
ends near the largest loss, but in the measured cases (``benchmarks/check_eeai_skip.py``) only for
compositions of at most 5 terms, which the rule never skips (docs/lattice-speed.md)."""


TIGHT_ENOUGH = 1e-12
"""Relative width at which a closed-form enclosure (exact, one-step) ends the run: the other
methods are discretizations that cannot tighten it."""
_CLOSED_FORMS = ("exact", "one-step")


def _relative_width(b: Bound) -> float:
    if not (b.lower.is_finite and b.upper.is_finite):
        return math.inf
    hi = abs(b.upper_mpf)
    return 0.0 if hi == 0 else float((b.upper_mpf - b.lower_mpf) / hi)


def _run_order(timed: bool = True) -> list[CertifiedMethod]:
    rank = {name: i for i, name in enumerate(RUN_ORDER if timed else UNTIMED_ORDER)}
    return sorted(CERTIFIED_METHODS, key=lambda m: rank.get(m.name, len(rank)))


def skip_reason(method: CertifiedMethod, results: dict[str, Bound], timed: bool,
                n_terms: int) -> str | None:
    """Why the registered ``method`` is not run given the enclosures so far, for a
    composition of ``n_terms`` distinct terms (None: run it)."""
    tight = next((b for n, b in results.items() if n in _CLOSED_FORMS
                  and _relative_width(b) <= TIGHT_ENOUGH), None)
    if tight is not None:  # a closed-form enclosure no discretized method can tighten
        return (f"not run: the {tight.lower_method} enclosure is already {TIGHT_ENOUGH:g}"
                "-relative tight")
    costly = method.costly_per_term
    width = _relative_width(results["lattice"]) if "lattice" in results else math.inf
    if not timed and costly and n_terms >= EEAI_SKIP_TERMS and width <= EEAI_AFTER_LATTICE:
        return (f"not run: the lattice interval is already {width:.2g} wide (relative), within "
                f"{EEAI_AFTER_LATTICE:g}, for {n_terms} distinct terms")
    return None


def _warnings(parts: list[tuple[str, Bound]], vacuous: bool, refusals: list[str]) -> tuple:
    out: dict[str, None] = {}
    for name, b in parts:
        for w in b.warnings:
            if w.startswith("vacuous:") and not vacuous:
                w = f"{name} alone was vacuous ({w[len('vacuous:'):].strip()})"
            out[w] = None
    out.update(dict.fromkeys(f"not applicable: {r}" for r in refusals))
    return tuple(out)


def _combine(parts: list[tuple[str, Bound]], refusals: list[str], what: str) -> Bound:
    if not parts:
        raise NotApplicable(f"no certified method applies to {what}: " + "; ".join(refusals))
    out = parts[0][1]
    for _, b in parts[1:]:
        out = out.intersect(b)
    return replace(out, warnings=_warnings(parts, out.vacuous, refusals))


def _check(kind: str, x) -> None:
    """Bad input raises ValueError here, before any method runs (methods check it again)."""
    if kind == "delta":
        e = to_arb("eps", x)
        if e < 0:
            raise ValueError(f"eps must be >= 0, got {x!r}")
    else:
        t = to_arb("delta", x)
        if not (t > 0 and t < 1):
            raise ValueError(f"delta must lie in (0, 1), got {x!r}")


def _run(kind: str, composition, x, budget: float | None, rel_width=None) -> Bound:
    from numeric.composition import compose

    from .lattice_target import check_rel_width

    comp = compose(composition)
    _check(kind, x)
    budget = check_budget_seconds(budget)
    opts = {"rel_width": check_rel_width(rel_width)}
    results: dict[str, Bound] = {}
    refusals: list[str] = []
    order = _run_order(budget is not None)
    with budget_block(budget), progress(len(order), "certified") as bar:
        for m in order:
            bar.describe(f"certified: {m.name}")
            if m.applies is not None and not m.applies(comp):
                bar.report()
                continue
            why = skip_reason(m, results, budget is not None, len(comp.terms))
            if why is not None:
                refusals.append(f"{m.name} ({why})")
                bar.report()
                continue
            fn = m.delta_fn if kind == "delta" else m.epsilon_fn
            try:
                if current_deadline() is not None:  # nothing starts after the deadline
                    check_deadline(f"before {m.name} started")
                results[m.name] = fn(comp, x, **{k: opts[k] for k in m.options})
            except NotApplicable as exc:
                refusals.append(f"{m.name} ({exc})")
            except (ArithmeticError, MemoryError) as exc:
                # the method could not enclose its quantity here (e.g. a quadrature that returns
                # no finite ball, an undecidable comparison, memory): it proves nothing, so it
                # contributes no end; the other methods' enclosures stand on their own
                refusals.append(f"{m.name} (could not enclose: {type(exc).__name__}: {exc})")
            finally:
                bar.report()
    parts = [(m.name, results[m.name]) for m in CERTIFIED_METHODS if m.name in results]
    what = comp.describe()
    if len(what) > 240:
        what = f"a composition of {len(comp.terms)} terms ({comp.total_count} steps)"
    out = _combine(parts, refusals, what)  # verify recomputes with the same target:
    return replace(out, inputs={**out.inputs, "rel_width": opts["rel_width"]})


def certified_delta(composition, eps, *, time_budget: float | None = None,
                    rel_width: float | None = None) -> Bound:
    """Certified enclosure of delta(eps): the intersection of the applicable methods (without a
    time budget and many terms, the EEAI only where the lattice is wide: module docstring).

    Args:
        composition: Anything :func:`numeric.composition.compose` accepts.
        eps: eps >= 0 (float taken exactly, int, decimal string or Arb ball).
        time_budget: Seconds (finite, > 0) for all methods together; None (default) = no limit.
        rel_width: Requested relative width of the discretized methods (the lattice refines
            its grid until it is reached or its work budget is spent; default 1e-4;
            :mod:`certify.lattice_target`). Exact methods keep their full precision.

    Returns:
        A :class:`~certify.bound.Bound`; refused methods are listed in its ``warnings``.

    Raises:
        ValueError: on bad input.
        NotApplicable: if no certified method applies (or finishes within the budget).
    """
    return _run("delta", composition, eps, time_budget, rel_width)


def certified_epsilon(composition, delta, *, time_budget: float | None = None,
                      rel_width: float | None = None) -> Bound:
    """Certified enclosure of eps(delta): the intersection of the applicable methods (without a
    time budget and many terms, the EEAI only where the lattice is wide: module docstring).

    Args:
        composition: Anything :func:`numeric.composition.compose` accepts.
        delta: Target delta in (0, 1) (float taken exactly, decimal string or Arb ball).
        time_budget: Seconds (finite, > 0) for all methods together; None (default) = no limit.
        rel_width: Requested relative width of the discretized methods (the lattice refines
            its grid until it is reached or its work budget is spent; default 1e-4;
            :mod:`certify.lattice_target`). Exact methods keep their full precision.

    Returns:
        A :class:`~certify.bound.Bound`; refused methods are listed in its ``warnings``.

    Raises:
        ValueError: on bad input.
        NotApplicable: if no certified method applies (or finishes within the budget).
    """
    return _run("epsilon", composition, delta, time_budget, rel_width)
