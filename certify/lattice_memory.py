r"""Peak memory of the certified lattice, estimated before a level runs (issue 16: under 1 GiB
everywhere on the DP-SGD grid).

:func:`certify.lattice_target.target_epsilon_interval` and ``target_delta_interval`` try a
resolution only if :func:`level_memory_mib` predicts it within :data:`MEMORY_BUDGET_MIB`, refuse a
coarsest level above it (:func:`check_memory`), and, for several terms, a single-step block above
it before it is built (:func:`check_block_memory`). The estimate is exact arithmetic on the
inputs (no evaluation of the law) and a measured cost per lattice unit (docs/lattice-speed.md,
"Peak memory"). It decides only which levels run: every interval is proven on its own.
"""

from __future__ import annotations

import math
from typing import Any

from numeric.composition import Composition
from numeric.errors import BudgetExceeded

from .lattice_adaptive import Resolution, unit_below
from .lattice_grid import grid_range, lattice_terms

__all__ = ["BYTES_PER_UNIT", "MEMORY_BUDGET_MIB", "MIB_BASE", "check_block_memory",
           "check_memory", "level_memory_mib", "level_span"]

MEMORY_BUDGET_MIB = 1024.0
"""Peak memory (MiB) one resolution may need, estimated up front by :func:`level_memory_mib`
(issue 16: the certified lattice under 1 GiB everywhere on the DP-SGD grid). A finer level
predicted above it is not tried (the refinement stops with the finished levels' interval and a
warning); a coarsest level above it raises ``BudgetExceeded`` (a ``NotApplicable``)."""

MIB_BASE = 60.0  # interpreter, numpy/scipy/flint and the coarser levels' caches (measured)
BYTES_PER_UNIT = 300.0
"""Peak bytes per lattice unit of a one-term composition's single-step block (its span): the
first squaring of the block at the level's fine unit multiplies polynomials of that length
(both sides of the lower end), and its 2B-bit product with the copies around the truncation is
the process's peak. Measured (peak RSS, rate 0.001, sigma 0.8, m = 1e5, delta 1e-10, levels
(128, 256), (256, 512), (512, 512)): spans 0.82e6, 1.64e6, 3.28e6 units, peaks 311, 559, 1022
MiB, i.e. ~60 MiB + 290 B per unit."""


def level_span(comp: Composition, res: Resolution) -> int:
    """Largest single-step block of the composition at ``res``, in lattice units: the span
    ``i1 - i0 + 1`` between the ends of the certified range at the unit of section A of
    :mod:`certify.lattice_adaptive` (exactly the length of the lower end's single-step
    sequences; no evaluation of the law)."""
    span = 0
    for d in comp.directions:
        terms, total = lattice_terms(comp, d)
        for step, _ in terms:
            lo, hi = grid_range(step, total)
            unit = unit_below(step.rough_std() / res.single)
            i0 = math.floor(lo / unit)
            span = max(span, max(math.ceil(hi / unit), i0 + 2) - i0 + 1)
    return span


def level_memory_mib(comp: Composition, res: Resolution) -> float:
    """Estimated peak memory (MiB) of one resolution (see :data:`BYTES_PER_UNIT`). Several
    terms: the single-step blocks are re-discretized before any product
    (:class:`certify.lattice_hetero.MultiPower`), so only the base is counted."""
    if len(comp.terms) > 1:
        return MIB_BASE
    return MIB_BASE + BYTES_PER_UNIT * level_span(comp, res) / 2**20


def check_block_memory(step: Any, idx: list[int], res: Resolution) -> None:
    """Several terms: refuse a single-step block whose span (grid units at this level) would
    need more than :data:`MEMORY_BUDGET_MIB` at :data:`BYTES_PER_UNIT` before it is built
    (its dense masses come before the re-discretization that :func:`level_memory_mib` counts
    on; fuzz seed 9090: a subsampled Gaussian at rate 6e-8 beside randomized response with
    eps0 152 exhausted a 2 GiB address space)."""
    span = idx[-1] - idx[0] + 1
    need = MIB_BASE + BYTES_PER_UNIT * span / 2**20
    if need > MEMORY_BUDGET_MIB:
        raise BudgetExceeded(
            f"lattice: memory budget of {MEMORY_BUDGET_MIB:.0f} MiB: the single-step block of "
            f"{step!r} spans {span} grid units at resolution {res.single} (about {need:.0f} MiB)")


def check_memory(comp: Composition, res: Resolution) -> None:
    """Refuse the coarsest level up front when even it exceeds :data:`MEMORY_BUDGET_MIB`."""
    need = level_memory_mib(comp, res)
    if need > MEMORY_BUDGET_MIB:
        raise BudgetExceeded(
            f"lattice: memory budget of {MEMORY_BUDGET_MIB:.0f} MiB: the coarsest resolution "
            f"needs about {need:.0f} MiB (one step's privacy loss spans "
            f"{level_span(comp, res)} grid units; composition {comp!r})")
