r"""Generator of ``numeric/_generated/edgeworth_series.py``: Edgeworth density coefficients.

:func:`render_edgeworth_series` prints the coefficients
:math:`c_k(\lambda_3, \dots, \lambda_{r+2})` of orders 1..:data:`SERIES_MAX_ORDER`
(:func:`derive.series.edgeworth_density_coefficients`; Petrov 1975, Ch. VI; Hall 1992,
Section 2.2; Wang et al., arXiv:2206.04236, Eq. (3.3)-(3.4)), each coefficient in multivariate
Horner form with common subexpressions eliminated across the coefficients of one order, through
the strict printer :func:`strict_pycode` (plain arithmetic only).
"""

from __future__ import annotations

import sympy as sp

from .codegen_text import INDENT, LINE_LENGTH, assign_lines, header
from .series import edgeworth_density_coefficients, lambda_symbol

__all__ = ["SERIES_MAX_ORDER", "render_edgeworth_series", "strict_pycode"]

SERIES_MAX_ORDER = 6


def strict_pycode(expr: sp.Expr) -> str:
    """Print a polynomial expression as Python source, refusing anything but plain arithmetic.

    Allowed nodes: ``Add``, ``Mul``, ``Pow`` with a positive integer exponent, ``Symbol`` and
    ``Rational`` (integers included). Rationals print as ``p/q`` (float division, correctly
    rounded); powers as ``x**n``.

    Raises:
        TypeError: on any other node (e.g. ``Integral``, ``Float``, functions, negative powers).
    """
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.Pow):
            exp = node.exp
            if not (exp.is_Integer and exp > 0):
                raise TypeError(f"strict printer: non-positive-integer power in {node}")
        elif not isinstance(node, sp.Add | sp.Mul | sp.Symbol | sp.Rational):
            raise TypeError(f"strict printer: refusing {type(node).__name__} node {node}")
    return sp.sstr(expr)


def _render_order(order: int) -> list[str]:
    coeffs = edgeworth_density_coefficients(order)
    names = {lambda_symbol(j): sp.Symbol(f"l{j}") for j in range(3, order + 3)}
    gens = list(names.values())
    horner = []
    for c in coeffs.values():
        poly = sp.Poly(c.xreplace(names), *gens)
        horner.append(sp.horner(poly) if len(poly.terms()) > 1 else poly.as_expr())
    subs, reduced = sp.cse(horner, symbols=sp.numbered_symbols("t"), order="none")
    need = order + 2
    lines = [
        f"def coefficients_order_{order}(lam: Mapping[int, float]) -> dict[int, float]:",
        f'    """Edgeworth order {order}: ``{{j: lambda_j}}`` (j = 3..{need}) to density '
        'coefficients ``{k: c_k}``."""',
    ]
    lines += [f"{INDENT}l{j} = lam[{j}]" for j in range(3, need + 1)]
    for sym, sub in subs:
        lines += assign_lines(str(sym), strict_pycode(sub), INDENT)
    for k, expr in zip(coeffs, reduced, strict=True):
        lines += assign_lines(f"c{k}", strict_pycode(expr), INDENT)
    items = ", ".join(f"{k}: c{k}" for k in coeffs)
    ret = f"{INDENT}return {{{items}}}"
    if len(ret) > LINE_LENGTH:
        rows = [f"{2 * INDENT}{k}: c{k}," for k in coeffs]
        lines += [f"{INDENT}return {{", *rows, f"{INDENT}}}"]
    else:
        lines.append(ret)
    return lines


def render_edgeworth_series(max_order: int = SERIES_MAX_ORDER) -> str:
    r"""The exact text of ``numeric/_generated/edgeworth_series.py``.

    For each order r = 1..``max_order`` a function ``coefficients_order_r(lam)`` maps the
    standardized cumulants ``{j: lambda_j}`` (j = 3..r+2) to the cumulative density coefficients
    ``{k: c_k}`` of :func:`derive.series.edgeworth_density_coefficients`, so that
    :math:`g(z) = \varphi(z)[1 + \sum_k c_k He_k(z)]` and
    :math:`G(z) = \Phi(z) - \varphi(z)\sum_k c_k He_{k-1}(z)`. The module also defines
    ``ORDERS = {r: (r + 2, coefficients_order_r)}``, ``MAX_ORDER`` and ``SYMPY_VERSION``.

    Args:
        max_order: Highest order generated (>= 1).
    """
    if isinstance(max_order, bool) or not isinstance(max_order, int) or max_order < 1:
        raise ValueError(f"max_order must be a whole number >= 1, got {max_order!r}")
    doc = f'''"""Edgeworth density coefficients of orders 1..{max_order} (generated, sympy-free).

The Edgeworth expansion of order r of a standardized sum with standardized cumulants
lambda_j = K_j / K_2^(j/2) is g(z) = phi(z) [1 + sum_k c_k He_k(z)] with probabilists' Hermite
polynomials He_k, and G(z) = Phi(z) - phi(z) sum_k c_k He_(k-1)(z). The c_k collect Petrov's
terms P_1..P_r (Petrov 1975, Ch. VI; Hall 1992, Section 2.2; Wang et al., arXiv:2206.04236,
Eq. (3.3)-(3.4)), derived symbolically by derive.series.edgeworth_density_coefficients and
printed in Horner form with common subexpressions shared within each order.

ORDERS maps r to (cumulants_needed, fn) as numeric.edgeworth.register_series_order expects.
"""'''
    parts = [
        header("render_edgeworth_series") + doc,
        "",
        "from __future__ import annotations",
        "",
        "from collections.abc import Callable, Mapping",
        "",
        '__all__ = ["MAX_ORDER", "ORDERS", "SYMPY_VERSION"'
        + "".join(f', "coefficients_order_{r}"' for r in range(1, max_order + 1))
        + "]",
        "",
        f'SYMPY_VERSION = "{sp.__version__}"',
        f"MAX_ORDER = {max_order}",
    ]
    if len(parts[6]) > LINE_LENGTH:
        names = ["MAX_ORDER", "ORDERS", "SYMPY_VERSION"] + [
            f"coefficients_order_{r}" for r in range(1, max_order + 1)
        ]
        parts[6] = "__all__ = [\n" + "".join(f'{INDENT}"{n}",\n' for n in names) + "]"
    for r in range(1, max_order + 1):
        parts += ["", "", *_render_order(r)]
    parts += [
        "",
        "",
        "ORDERS: dict[int, tuple[int, Callable[[Mapping[int, float]], dict[int, float]]]] = {",
        *(f"{INDENT}{r}: ({r + 2}, coefficients_order_{r})," for r in range(1, max_order + 1)),
        "}",
    ]
    return "\n".join(parts) + "\n"
