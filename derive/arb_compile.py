r"""A strict sympy-to-Arb compiler: closed forms evaluated as python-flint balls.

:func:`arb_function` turns a real sympy expression into a function of Arb balls in which every
operation is an Arb operation with outward rounding (Johansson, *Arb: efficient arbitrary-precision
midpoint-radius interval arithmetic*, IEEE Trans. Computers 66, 2017), so the ball it returns
contains the exact value of the expression at every point of the argument balls. It accepts more
than :class:`derive.codegen.KernelPrinter` (erf, sqrt, pi and incomplete gamma are needed for the
CDFs of :mod:`derive.lattice`) and refuses everything it cannot evaluate rigorously.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sympy as sp
from flint import arb, ctx
from sympy.codegen.cfunctions import expm1, log1p

__all__ = ["arb_function"]


_UNARY: dict[type, Callable[[arb], arb]] = {
    sp.exp: lambda a: a.exp(),
    sp.log: lambda a: a.log(),
    sp.Abs: abs,
    sp.erf: lambda a: a.erf(),
    sp.erfc: lambda a: a.erfc(),
    sp.erfi: lambda a: a.erfi(),
    sp.gamma: lambda a: a.gamma(),
    sp.loggamma: lambda a: a.lgamma(),
    sp.sin: lambda a: a.sin(),
    sp.cos: lambda a: a.cos(),
    sp.tan: lambda a: a.tan(),
    sp.asin: lambda a: a.asin(),
    sp.acos: lambda a: a.acos(),
    sp.atan: lambda a: a.atan(),
    sp.sinh: lambda a: a.sinh(),
    sp.cosh: lambda a: a.cosh(),
    sp.tanh: lambda a: a.tanh(),
    sp.asinh: lambda a: a.asinh(),
    sp.acosh: lambda a: a.acosh(),
    sp.atanh: lambda a: a.atanh(),
    expm1: lambda a: a.expm1(),
    log1p: lambda a: a.log1p(),
}
_CONSTANTS: dict[Any, Callable[[], arb]] = {
    sp.pi: arb.pi,
    sp.E: arb.const_e,
    sp.EulerGamma: arb.const_euler,
    sp.Catalan: arb.const_catalan,
}


def arb_function(expr: sp.Expr, symbols: Sequence[sp.Symbol]) -> Callable[[Sequence[arb]], arb]:
    r"""Compile a real sympy expression into a function of Arb balls (outward rounding throughout).

    The result ``f(values)`` evaluates ``expr`` with ``symbols[i] = values[i]`` at python-flint's
    current precision; every operation is an Arb operation, so the ball contains the exact value
    of the expression at every point of the argument balls (where it is real and defined).
    Rationals enter as ``arb(p)/q`` (never a binary float), pi/e/Euler/Catalan as Arb constants.

    Allowed nodes: numbers (integers, rationals), the constants above, the given symbols, sums,
    products, powers (integer exponents of any base; other exponents need a positive base, e.g.
    ``sqrt``), and ``exp, log, Abs, erf, erfc, erfi, gamma, loggamma, uppergamma, lowergamma``,
    trigonometric and hyperbolic functions and their inverses, ``expm1``, ``log1p``, ``Max``,
    ``Min``.

    Args:
        expr: The expression.
        symbols: Its free symbols, in argument order.

    Returns:
        The compiled function (a closure tree; no ``eval``).

    Raises:
        TypeError: on anything else (``Float``, ``Piecewise``, unevaluated ``Integral``,
            complex numbers, unknown functions, symbols not listed).
    """
    index = {s: i for i, s in enumerate(symbols)}
    return _compile(sp.sympify(expr), index)


def _compile(e: sp.Expr, index: dict) -> Callable[[Sequence[arb]], arb]:
    if not e.free_symbols and not e.is_Atom:  # a constant: evaluate once per precision
        inner = _compile_node(e, index)
        cache: dict[int, arb] = {}

        def const(v):
            prec = ctx.prec
            r = cache.get(prec)
            if r is None:
                r = cache[prec] = inner(v)
            return r

        return const
    return _compile_node(e, index)


def _compile_node(e: sp.Expr, index: dict) -> Callable[[Sequence[arb]], arb]:
    if e.is_Symbol:
        if e not in index:
            raise TypeError(f"arb compiler: unknown symbol {e}")
        i = index[e]
        return lambda v: v[i]
    if e.is_Integer:
        n = int(e)
        return lambda v: arb(n)
    if e.is_Rational:
        num, den = int(e.p), int(e.q)
        return lambda v: arb(num) / den
    if e in _CONSTANTS:
        const = _CONSTANTS[e]
        return lambda v: const()
    if e.is_Number or e.is_NumberSymbol or e.has(sp.I):
        raise TypeError(f"arb compiler: refusing the number {e} ({type(e).__name__})")
    if e.is_Add:
        parts = [_compile(a, index) for a in e.args]

        def add(v):
            acc = parts[0](v)
            for g in parts[1:]:
                acc = acc + g(v)
            return acc

        return add
    if e.is_Mul:
        num_f, den_f = [], []
        for a in e.args:
            if a.is_Pow and a.exp.is_Integer and a.exp < 0:
                den_f.append(_compile(a.base**-a.exp, index))
            else:
                num_f.append(_compile(a, index))
        if not num_f:
            num_f = [lambda v: arb(1)]

        def mul(v):
            acc = num_f[0](v)
            for g in num_f[1:]:
                acc = acc * g(v)
            if den_f:
                d = den_f[0](v)
                for g in den_f[1:]:
                    d = d * g(v)
                acc = acc / d
            return acc

        return mul
    if e.is_Pow:
        base, ex = e.args
        fb = _compile(base, index)
        if ex.is_Integer:
            n = int(ex)
            if n < 0:
                return lambda v: 1 / fb(v) ** (-n)
            return lambda v: fb(v) ** n
        if ex == sp.S.Half:
            return lambda v: fb(v).sqrt()
        if ex == -sp.S.Half:
            return lambda v: fb(v).rsqrt()
        fe = _compile(ex, index)
        return lambda v: fb(v) ** fe(v)  # Arb: needs a positive base (nan otherwise)
    if isinstance(e, sp.uppergamma | sp.lowergamma):
        fs, fz = (_compile(a, index) for a in e.args)
        if isinstance(e, sp.uppergamma):
            return lambda v: fz(v).gamma_upper(fs(v))
        return lambda v: fz(v).gamma_lower(fs(v))
    if isinstance(e, sp.Max | sp.Min):
        parts = [_compile(a, index) for a in e.args]
        big = isinstance(e, sp.Max)

        def extremum(v):
            acc = parts[0](v)
            for g in parts[1:]:
                acc = acc.max(g(v)) if big else acc.min(g(v))
            return acc

        return extremum
    fn = _UNARY.get(type(e))
    if fn is not None and len(e.args) == 1:
        fa = _compile(e.args[0], index)
        return lambda v: fn(fa(v))
    raise TypeError(f"arb compiler: no Arb evaluation for {type(e).__name__} in {e}")
