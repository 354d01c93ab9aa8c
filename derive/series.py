r"""Edgeworth series of arbitrary order, derived symbolically (Petrov's form, He_k polynomials).

Setting (docs/math.md section 3). Let S be a sum of independent PLLR terms with summed cumulants
K_1, K_2, ..., standardized as Z = (S - K_1)/\sqrt{K_2}, with standardized cumulants
\lambda_j = K_j / K_2^{j/2} (j >= 3). The characteristic function of Z is

.. math::

    \chi(t) = \exp\Bigl(-\tfrac{t^2}{2} + \sum_{j\ge 3} \lambda_j \frac{(it)^j}{j!}\Bigr).

Attach a bookkeeping variable :math:`\tau` to every cumulant, :math:`\lambda_j \mapsto
\tau^{j-2}\lambda_j` (for i.i.d. terms :math:`\lambda_j = O(m^{-(j-2)/2})`, so :math:`\tau` plays
the role of :math:`m^{-1/2}`), and expand formally in :math:`\tau` with :math:`x = it`:

.. math::

    \exp\Bigl(\sum_{j\ge 3} \lambda_j \tau^{j-2} \frac{x^j}{j!}\Bigr)
      = 1 + \sum_{\nu \ge 1} \tau^\nu P_\nu(x),
    \qquad
    P_\nu(x) = \sum_{k_1 + 2k_2 + \dots + \nu k_\nu = \nu}
      \prod_{m=1}^{\nu} \frac{1}{k_m!}\Bigl(\frac{\lambda_{m+2}}{(m+2)!}\Bigr)^{k_m}
      x^{\nu + 2s},\quad s = k_1 + \dots + k_\nu .

Because :math:`\int e^{itz}\varphi(z) He_k(z)\,dz = (it)^k e^{-t^2/2}` (probabilists' Hermite
polynomials, :math:`\varphi(z) He_k(z) = (-1)^k \varphi^{(k)}(z)`), replacing :math:`x^k` by
:math:`He_k(z)` inverts the transform term by term. The Edgeworth expansion of order r keeps
:math:`\nu = 1, \dots, r`:

.. math::

    g_r(z) = \varphi(z)\Bigl[1 + \sum_k c_k He_k(z)\Bigr],\qquad
    G_r(z) = \Phi(z) - \varphi(z) \sum_k c_k He_{k-1}(z),

with :math:`c_k` the coefficient of :math:`x^k` in :math:`\sum_{\nu \le r} P_\nu(x)`, a
polynomial in :math:`\lambda_3, \dots, \lambda_{r+2}` (the CDF uses
:math:`\int_{-\infty}^z \varphi He_k = -\varphi(z) He_{k-1}(z)`). Order 1 gives
:math:`c_3 = \lambda_3/6`; order 2 adds :math:`c_4 = \lambda_4/24` and :math:`c_6 = \lambda_3^2/72`
(docs/math.md section 3). Since every term of :math:`P_\nu` has x-degree at least :math:`\nu + 2`,
the truncated density reproduces the cumulants :math:`(0, 1, \lambda_3, \dots, \lambda_{r+2})`
exactly.

The :math:`P_\nu` are computed with the exponential recurrence for power series
(:math:`B = e^A`, :math:`n b_n = \sum_{k=1}^n k a_k b_{n-k}`), which equals Petrov's partition
sum above (complete Bell polynomials); :func:`petrov_term` evaluates the partition sum directly as
an independent check.

References:
    V. V. Petrov, *Sums of Independent Random Variables*, Springer 1975, Ch. VI (Section 1).
    P. Hall, *The Bootstrap and Edgeworth Expansion*, Springer 1992, Section 2.2.
    H. Wang, S. Gao, H. Zhang, M. Shen, W. J. Su, *Analytical Composition of Differential
    Privacy via the Edgeworth Accountant*, arXiv:2206.04236, Eq. (3.3)-(3.4).
"""

from __future__ import annotations

from functools import cache
from math import factorial

import sympy as sp
from sympy.utilities.iterables import partitions

__all__ = [
    "Z",
    "edgeworth_cdf_expr",
    "edgeworth_density_coefficients",
    "edgeworth_density_expr",
    "edgeworth_term",
    "lambda_symbol",
    "lambda_symbols",
    "petrov_term",
    "q_only_delta_expr",
]

Z = sp.Symbol("z", real=True)
"""The standardized variable z = (s - K_1)/sqrt(K_2)."""

_SIGMA = sp.Symbol("sigma", positive=True)
_Z0 = sp.Symbol("z0", real=True)


def lambda_symbol(j: int) -> sp.Symbol:
    r"""The standardized cumulant :math:`\lambda_j = K_j / K_2^{j/2}` as a real sympy symbol.

    Args:
        j: Cumulant order, ``j >= 3``.

    Raises:
        ValueError: if ``j < 3``.
    """
    if isinstance(j, bool) or not isinstance(j, int) or j < 3:
        raise ValueError(f"standardized cumulants start at order 3, got {j!r}")
    return sp.Symbol(f"lambda_{j}", real=True)


def lambda_symbols(order: int) -> tuple[sp.Symbol, ...]:
    r"""The symbols :math:`\lambda_3, \dots, \lambda_{r+2}` used by Edgeworth order r."""
    _check_order(order)
    return tuple(lambda_symbol(j) for j in range(3, order + 3))


def _check_order(order: int) -> int:
    if isinstance(order, bool) or not isinstance(order, int) or order < 0:
        raise ValueError(f"the Edgeworth order must be a whole number >= 0, got {order!r}")
    return order


def _mul(a: dict[int, sp.Expr], b: dict[int, sp.Expr]) -> dict[int, sp.Expr]:
    """Product of two polynomials in x stored as ``{power: coefficient}``."""
    out: dict[int, sp.Expr] = {}
    for i, ca in a.items():
        for j, cb in b.items():
            out[i + j] = out.get(i + j, sp.Integer(0)) + ca * cb
    return out


@cache
def _formal_terms(order: int) -> tuple[dict[int, sp.Expr], ...]:
    r"""``(b_0, ..., b_order)``: the :math:`\tau`-coefficients of exp(sum_n a_n tau^n).

    Here :math:`a_n = \lambda_{n+2} x^{n+2}/(n+2)!`, and :math:`b_n = P_n` as x-polynomials.
    """
    a = [{}] + [{n + 2: lambda_symbol(n + 2) / factorial(n + 2)} for n in range(1, order + 1)]
    b: list[dict[int, sp.Expr]] = [{0: sp.Integer(1)}]
    for n in range(1, order + 1):
        acc: dict[int, sp.Expr] = {}
        for k in range(1, n + 1):
            for p, c in _mul(a[k], b[n - k]).items():
                acc[p] = acc.get(p, sp.Integer(0)) + k * c
        b.append({p: sp.expand(c / n) for p, c in sorted(acc.items()) if sp.expand(c) != 0})
    return tuple(b)


def edgeworth_term(nu: int) -> dict[int, sp.Expr]:
    r"""Coefficients ``{k: c}`` of Petrov's term :math:`P_\nu` (exactly order ``nu``).

    :math:`P_\nu(x) = \sum_k c_k x^k` is the coefficient of :math:`\tau^\nu` in
    :math:`\exp(\sum_{j\ge3}\lambda_j\tau^{j-2}x^j/j!)`; its density contribution is
    :math:`\varphi(z)\sum_k c_k He_k(z)`. Powers k run over :math:`\nu+2, \nu+4, \dots, 3\nu`.

    Args:
        nu: Term order, ``nu >= 1`` (``nu = 0`` gives ``{0: 1}``).

    Returns:
        A dict from Hermite index k to an expanded polynomial in the :math:`\lambda_j`.
    """
    _check_order(nu)
    return dict(_formal_terms(nu)[nu])


def petrov_term(nu: int) -> dict[int, sp.Expr]:
    r"""Petrov's explicit partition sum for :math:`P_\nu` (independent of :func:`edgeworth_term`).

    .. math::

        P_\nu(x) = \sum_{k_1 + 2k_2 + \dots + \nu k_\nu = \nu} x^{\nu + 2s}
          \prod_{m} \frac{1}{k_m!}\Bigl(\frac{\lambda_{m+2}}{(m+2)!}\Bigr)^{k_m},
        \quad s = \sum_m k_m

    (Petrov 1975, Ch. VI, Section 1). Used as a cross-check of the recurrence.
    """
    _check_order(nu)
    if nu == 0:
        return {0: sp.Integer(1)}
    out: dict[int, sp.Expr] = {}
    for part in partitions(nu):
        s = sum(part.values())
        term = sp.Integer(1)
        for m, k_m in part.items():
            term *= (lambda_symbol(m + 2) / factorial(m + 2)) ** k_m / factorial(k_m)
        out[nu + 2 * s] = out.get(nu + 2 * s, sp.Integer(0)) + term
    return {k: sp.expand(v) for k, v in sorted(out.items())}


def edgeworth_density_coefficients(order: int) -> dict[int, sp.Expr]:
    r"""Density coefficients ``{k: c_k}`` of the Edgeworth expansion of order ``order``.

    Cumulative: all terms :math:`P_1, \dots, P_r` are included, so
    :math:`g_r(z) = \varphi(z)[1 + \sum_k c_k He_k(z)]` and
    :math:`G_r(z) = \Phi(z) - \varphi(z)\sum_k c_k He_{k-1}(z)` -- the convention of
    :func:`numeric.edgeworth.register_series_order`. Order 0 (the normal law) is ``{}``.

    Example: order 2 gives ``{3: lambda_3/6, 4: lambda_4/24, 6: lambda_3**2/72}``.

    Args:
        order: Expansion order r >= 0; the result uses :math:`\lambda_3, \dots, \lambda_{r+2}`.

    Returns:
        A dict sorted by k of expanded polynomials in the :math:`\lambda_j` (no zero entries).
    """
    _check_order(order)
    out: dict[int, sp.Expr] = {}
    for term in _formal_terms(order)[1:]:
        for k, c in term.items():
            out[k] = out.get(k, sp.Integer(0)) + c
    return {k: sp.expand(c) for k, c in sorted(out.items()) if sp.expand(c) != 0}


def _phi(x: sp.Expr) -> sp.Expr:
    return sp.exp(-x**2 / 2) / sp.sqrt(2 * sp.pi)


def _Phi(x: sp.Expr) -> sp.Expr:
    return (1 + sp.erf(x / sp.sqrt(2))) / 2


def _Phibar(x: sp.Expr) -> sp.Expr:
    return sp.erfc(x / sp.sqrt(2)) / 2


def edgeworth_density_expr(order: int, z: sp.Symbol = Z) -> sp.Expr:
    r"""The Edgeworth density :math:`g_r(z) = \varphi(z)[1 + \sum_k c_k He_k(z)]` in ``z``.

    Args:
        order: Expansion order r >= 0.
        z: The standardized variable (default :data:`Z`).
    """
    coeffs = edgeworth_density_coefficients(order)
    poly = 1 + sum((c * sp.hermite_prob(k, z) for k, c in coeffs.items()), sp.Integer(0))
    return _phi(z) * poly


def edgeworth_cdf_expr(order: int, z: sp.Symbol = Z) -> sp.Expr:
    r"""The Edgeworth CDF :math:`G_r(z) = \Phi(z) - \varphi(z)\sum_k c_k He_{k-1}(z)` in ``z``.

    :math:`\Phi(z) = (1 + \operatorname{erf}(z/\sqrt2))/2`. Order 2 is docs/math.md's
    :math:`\Phi - \varphi[\lambda_3 He_2/6 + \lambda_4 He_3/24 + \lambda_3^2 He_5/72]`.

    Args:
        order: Expansion order r >= 0.
        z: The standardized variable (default :data:`Z`).
    """
    coeffs = edgeworth_density_coefficients(order)
    poly = sum((c * sp.hermite_prob(k - 1, z) for k, c in coeffs.items()), sp.Integer(0))
    return _Phi(z) - _phi(z) * poly


def q_only_delta_expr(
    order: int, z0: sp.Symbol = _Z0, sigma: sp.Symbol = _SIGMA
) -> sp.Expr:
    r"""Closed-form Q-only Edgeworth delta at the threshold ``z0`` (docs/math.md section 3).

    With :math:`\varepsilon = K_1 + \sigma z_0`, :math:`\sigma = \sqrt{K_2}` and
    :math:`a = z_0 + \sigma`,

    .. math::

        \delta_{G_r}(\varepsilon) = \int_{z_0}^\infty \bigl(1 - e^{-\sigma(z - z_0)}\bigr)
            g_r(z)\,dz = \bar\Phi(z_0) - W + \sum_k c_k T_k,\qquad
        W = e^{\sigma z_0 + \sigma^2/2}\,\bar\Phi(a),

        T_k = \varphi(z_0)\Bigl[He_{k-1}(z_0)
              - \sum_{j=1}^{k}\binom{k}{j}(-\sigma)^{k-j} He_{j-1}(a)\Bigr] - (-\sigma)^k W,

    from :math:`e^{-\sigma z}\varphi(z) = e^{\sigma^2/2}\varphi(z+\sigma)`, the Appell identity
    :math:`He_k(w-\sigma) = \sum_j \binom{k}{j} He_j(w)(-\sigma)^{k-j}` and
    :math:`\int_a^\infty \varphi He_j = \varphi(a) He_{j-1}(a)` (j >= 1), together with
    :math:`e^{\sigma z_0 + \sigma^2/2}\varphi(a) = \varphi(z_0)`. This is the expression
    :func:`numeric.edgeworth.q_only_delta` evaluates (overflow-free there via the Mills ratio).
    It approximates delta; it is not a bound.

    Args:
        order: Expansion order r >= 0.
        z0: Standardized threshold symbol (default ``z0``).
        sigma: sqrt(K2) symbol (default positive ``sigma``).
    """
    coeffs = edgeworth_density_coefficients(order)
    a = z0 + sigma
    w = sp.exp(sigma * z0 + sigma**2 / 2) * _Phibar(a)
    total = _Phibar(z0) - w
    for k, c in coeffs.items():
        inner = sp.hermite_prob(k - 1, z0) - sum(
            sp.binomial(k, j) * (-sigma) ** (k - j) * sp.hermite_prob(j - 1, a)
            for j in range(1, k + 1)
        )
        total += c * (_phi(z0) * inner - (-sigma) ** k * w)
    return total
