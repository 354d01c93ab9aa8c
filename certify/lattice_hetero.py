r"""Many mechanisms: a heterogeneous composition multiplied as one multi-exponentiation.

A composition :math:`\prod_i \mu_i^{*c_i}` of n distinct single-step laws (n noise levels of
DP-SGD, each run :math:`c_i` times) was computed as n binary powerings followed by a balanced
tree of the n powers: about :math:`n(\log_2 c + \mathrm{popcount}(c))` products of composed
laws. Convolution is commutative and associative, so with the binary digits
:math:`c_i = \sum_b \beta_{ib} 2^b`

.. math::

    \prod_i \mu_i^{*c_i} = \prod_b \Bigl(\prod_{i:\,\beta_{ib} = 1} \mu_i\Bigr)^{*2^b}
    = \Bigl(\cdots\bigl(P_{b_{\max}}^{*2} * P_{b_{\max}-1}\bigr)^{*2} \cdots\Bigr)^{*2} * P_0,
    \qquad P_b = \prod_{i:\,\beta_{ib} = 1} \mu_i

(Straus' simultaneous exponentiation, in Horner form). Each :math:`P_b` is a balanced tree of
*single-step* laws (cheap: short polynomials), and only :math:`\lceil\log_2 \max c_i\rceil`
squarings and as many products act on long ones: for 100 levels x 100 steps, about 7 + 3 long
products per law instead of about 800 + 99.

**Soundness (upper end).** Write :math:`\mu \succeq \nu` when :math:`H_\mu \ge H_\nu` everywhere
(the hockey-stick curves of :mod:`certify.lattice`, Lemma 1). Each operation used here maps
dominating factors to a dominating result: the product with every mass rounded up and the safe
truncation (Lemma 3 and Lemma 1, which is a statement about any finite non-negative factors:
:math:`\mu_1 \succeq \nu_1, \mu_2 \succeq \nu_2 \Rightarrow \mu_1 * \mu_2 \succeq \nu_1 * \nu_2`),
and the connect-the-dots re-discretization (section C of :mod:`certify.lattice_adaptive`:
:math:`\mu' \succeq \mu`). By induction over the expression above, whose exact value is the
composition of the single-step connect-the-dots measures (each dominating its step, Lemma 2),
the computed measure dominates the composed pair; the order of the products plays no part.

**Soundness (lower end).** The binned test of :mod:`certify.lattice_lower` is valid for any
statistic that is a deterministic function of the outputs. Here the statistic is built by the
same expression: a product adds the statistics of two independent blocks of steps, a squaring
adds those of two independent copies (disjoint blocks of steps with the same laws), and a
re-discretization replaces a partial sum S by :math:`\lfloor S/r \rfloor` (section D): all
post-processings. The tilted identity :math:`P(S = j) = e^{-jh - \Gamma} r_j` multiplies over
independent blocks (the tilts :math:`(\gamma_i, m_i)` are concatenated, the counts of equal
gammas merged), and each product rounds Q down and the tilted P up as in the uniform case, so
the invariants of :mod:`certify.lattice_lower` hold whatever the order of the products.

Grids: after every product the result is re-discretized to ``per_sigma`` points per rough
standard deviation of its own law (the square root of the sum of its steps' single-step
variances), never finer than its factors' unit (:func:`certify.lattice_adaptive.settle`); the
factors of a product are first brought to the coarser unit. Terms are sorted by their rough
standard deviation so that tree neighbours have similar units.
"""

from __future__ import annotations

import math
from typing import Any

from .budget import check_deadline
from .lattice_adaptive import common_unit, settle

__all__ = ["FLOOR_SHARE", "multi_power"]

FLOOR_SHARE = 4.0
"""Share of the squarings' re-discretization error allowed to the trees (sets the floor unit)."""


def _tree(parts: list[tuple[Any, float]], per_sigma: int, ops: Any, floor: float
          ) -> tuple[Any, float]:
    """Balanced binary tree of products of ``(block, variance)`` parts; (block, variance).
    Every block is re-discretized to the unit of ``max(its rough std, floor) / per_sigma``."""
    level = [(settle(b, max(math.sqrt(v), floor), per_sigma, ops), v) for b, v in parts]
    while len(level) > 1:
        check_deadline("in the lattice composition of the terms")
        nxt = []
        for i in range(0, len(level) - 1, 2):
            (a, va), (b, vb) = level[i], level[i + 1]
            x, y = common_unit(a, b, ops)
            nxt.append((settle(ops.mul(x, y), max(math.sqrt(va + vb), floor), per_sigma, ops),
                        va + vb))
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


def multi_power(parts: list[tuple[Any, int, float]], per_sigma: int, ops: Any) -> Any:
    r"""The composition :math:`\prod_i \mu_i^{*c_i}` of single-step blocks (module docstring).

    Args:
        parts: ``(block, count, variance)`` per term: a single-step block (a
            :class:`certify.lattice_measure.LatticePLD` or
            :class:`certify.lattice_lower.LowerLattice` of one step), its count c >= 1 and its
            single-step rough variance (places the grids only).
        per_sigma: Points per rough standard deviation of each composed law.
        ops: :data:`certify.lattice_adaptive.UPPER_OPS` or ``LOWER_OPS``.

    Returns:
        The composed block (upper: dominating measure; lower: binned test laws).

    Raises:
        ValueError: on an empty list or a count below 1.
        BudgetExceeded: past the deadline of an active time budget.
    """
    if not parts:
        raise ValueError("parts must not be empty")
    for _, c, _ in parts:
        if isinstance(c, bool) or not isinstance(c, int) or c < 1:
            raise ValueError(f"count must be an integer >= 1, got {c!r}")
    order = sorted(parts, key=lambda p: p[2])
    top = max(c for _, c, _ in parts).bit_length()
    keys = {tuple(i for i, (_, c, _) in enumerate(order) if (c >> b) & 1) for b in range(top)}
    floor = math.sqrt(sum(c * v for _, c, v in parts) / (2.0 * FLOOR_SHARE *
                                                         sum(2 * len(k) for k in keys if k)))
    result, var = None, 0.0
    trees: dict[tuple[int, ...], tuple[Any, float]] = {}  # equal digit sets: one tree
    for bit in range(top - 1, -1, -1):
        check_deadline("in the lattice squarings")
        if result is not None:
            result = settle(ops.mul(result, result), math.sqrt(2.0 * var), per_sigma, ops)
            var *= 2.0
        key = tuple(i for i, (_, c, _) in enumerate(order) if (c >> bit) & 1)
        if not key:
            continue
        if key not in trees:
            trees[key] = _tree([(order[i][0], order[i][2]) for i in key], per_sigma, ops,
                               floor)
        blk, v = trees[key]
        if result is None:
            result, var = blk, v
        else:
            x, y = common_unit(result, blk, ops)
            var += v
            result = settle(ops.mul(x, y), math.sqrt(var), per_sigma, ops)
    return result
