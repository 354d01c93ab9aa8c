r"""A small sound sign calculus for sympy expressions, and time-limited zero tests.

:func:`proven_sign` returns the sign of a real expression for every value its symbols'
assumptions allow, or None when it cannot prove one: sympy's assumptions first, then exact rules
(signs of products and integer powers; exp of a real is positive; a positive base to a real power
is positive; :math:`\log y` has the sign of y - 1 for y > 0; a sum whose terms have known signs is
compared as :math:`A - B` with A, B > 0 through :math:`\operatorname{sign}(\log A - \log B)`,
since log is increasing on (0, oo)). Used to prove a PLLR monotone on a segment (the sign of
dL/dx; :mod:`derive.lattice_plan`, :mod:`derive.cgf`). Every sympy call runs under a time limit
(:func:`derive.timelimit.attempt`): a failure is "not proven", never a wrong answer.
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from .timelimit import attempt

__all__ = [
    "PROOF_SECONDS",
    "SIGN_DEPTH",
    "compare_positive",
    "is_closed",
    "log_of_positive",
    "monotone_sign",
    "positive_variable",
    "proven_sign",
    "proven_zero",
]

SIGN_DEPTH = 12
PROOF_SECONDS = 20.0  # per monotonicity proof


def proven_zero(expr: sp.Expr) -> bool:
    """True only when sympy proves ``expr == 0`` (cancel, then simplify; time-limited)."""
    if expr == 0:
        return True
    for fn in (lambda: sp.cancel(sp.together(expr)), lambda: sp.simplify(expr)):
        r = attempt(fn)
        if r is not None and r == 0:
            return True
    return False


_BAD = (sp.Integral, sp.Limit, sp.Sum, sp.Product, sp.Derivative, sp.Piecewise, sp.meijerg,
        sp.hyper, sp.AccumBounds)


def is_closed(expr: Any) -> bool:
    """Whether ``expr`` is a closed form (no unevaluated operations, nan, zoo or I)."""
    return (isinstance(expr, sp.Expr) and not expr.has(*_BAD) and not expr.has(sp.nan, sp.zoo)
            and not expr.has(sp.I))


def proven_sign(e: sp.Expr, depth: int = 0) -> int | None:
    r"""The sign (+1, -1, 0) of a real expression for all values its symbols' assumptions allow,
    or None if not proven.

    Sound rules only: sympy's assumptions; exp(real) > 0; signs of products and integer powers;
    a positive base to a real power is positive; :math:`\log y` has the sign of y - 1 for y > 0;
    a sum whose terms have known signs is compared as :math:`A - B` with A, B > 0 through
    :math:`\operatorname{sign}(\log A - \log B)`, the logs expanded only where sympy knows the
    factors are positive; otherwise ``factor(together(e))`` once more.
    """
    if depth > SIGN_DEPTH:
        return None
    if e.is_zero is True:
        return 0
    if e.is_positive is True:
        return 1
    if e.is_negative is True:
        return -1
    if e.is_Number:
        return None
    if isinstance(e, sp.exp):
        return 1 if e.args[0].is_extended_real else None
    if e.is_Mul:
        out = 1
        for f in e.args:
            sf = proven_sign(f, depth + 1)
            if sf is None:
                return None
            out *= sf
        return out
    if e.is_Pow:
        base, ex = e.args
        sb = proven_sign(base, depth + 1)
        if sb == 1 and ex.is_extended_real:
            return 1
        if ex.is_Integer and sb is not None:
            if sb == 0:
                return 0 if ex > 0 else None
            return sb ** abs(int(ex))
        return None
    if isinstance(e, sp.log):
        y = e.args[0]
        if proven_sign(y, depth + 1) != 1:
            return None
        num, den = sp.fraction(sp.together(y))
        if den != 1 and proven_sign(num, depth + 1) == 1 and proven_sign(den, depth + 1) == 1:
            return compare_positive(num, den, depth + 1)  # log(n/d) > 0 <=> n > d
        return proven_sign(y - 1, depth + 1)
    if e.is_Add:
        signs = [proven_sign(t, depth + 1) for t in e.args]
        if None not in signs:
            if all(s >= 0 for s in signs) and any(s > 0 for s in signs):
                return 1
            if all(s <= 0 for s in signs) and any(s < 0 for s in signs):
                return -1
            if all(s == 0 for s in signs):
                return 0
        alt = attempt(lambda: sp.factor(sp.together(e)), 5.0)
        if alt is not None and alt != e and not alt.is_Add:  # a product: signs of factors
            r = proven_sign(alt, depth + 1)
            if r is not None:
                return r
        if None not in signs:
            pos = sp.Add(*[t for t, s in zip(e.args, signs, strict=True) if s > 0])
            neg = sp.Add(*[-t for t, s in zip(e.args, signs, strict=True) if s < 0])
            return compare_positive(pos, neg, depth + 1)
        return None
    alt = attempt(lambda: sp.factor(sp.together(e)), 5.0)
    if alt is not None and alt != e:
        return proven_sign(alt, depth + 1)
    return None


def log_of_positive(a: sp.Expr) -> sp.Expr:
    """log(a) for a > 0, expanded where every step is valid (products of positive factors,
    positive bases of real powers, exp of reals)."""
    if isinstance(a, sp.exp) and a.args[0].is_extended_real:
        return a.args[0]
    if a.is_Mul and all(proven_sign(f, SIGN_DEPTH - 2) == 1 for f in a.args):
        return sp.Add(*[log_of_positive(f) for f in a.args])
    if a.is_Pow and a.exp.is_extended_real and proven_sign(a.base, SIGN_DEPTH - 2) == 1:
        return a.exp * log_of_positive(a.base)
    return sp.log(a)


def compare_positive(a: sp.Expr, b: sp.Expr, depth: int) -> int | None:
    """sign(a - b) for a, b > 0: equal powers compare their bases, otherwise through logs (log
    is increasing on (0, oo))."""
    if depth > SIGN_DEPTH:
        return None
    ca, ra = a.as_coeff_Mul()
    cb, rb = b.as_coeff_Mul()
    if ca == cb and ca.is_positive:
        a, b = ra, rb
    if (a.is_Pow and b.is_Pow and a.exp == b.exp and a.exp.is_extended_real
            and a.exp.is_zero is False and proven_sign(a.base, depth + 1) == 1
            and proven_sign(b.base, depth + 1) == 1):  # t -> t^k is monotone on (0, oo)
        r = proven_sign(a.base - b.base, depth + 1)
        if r is not None:
            return r if a.exp.is_positive else -r
    la, lb = log_of_positive(a), log_of_positive(b)
    if (isinstance(la, sp.log) and la.args[0] == a and isinstance(lb, sp.log)
            and lb.args[0] == b):  # no log expanded: compare the ratio with 1
        ratio = attempt(lambda: sp.cancel(a / b), 5.0)
        if ratio is None or ratio == a / b:
            return None
        d = ratio - 1
    else:
        d = sp.expand(la - lb)
    r = proven_sign(d, depth + 1)
    if r is None:  # log A - log B = log(A/B) where sympy knows the arguments are positive
        comb = attempt(lambda: sp.logcombine(d), 5.0)
        if comb is not None and comb != d:
            r = proven_sign(comb, depth + 1)
    return r


def positive_variable(seg, x: sp.Symbol) -> tuple[sp.Expr, sp.Symbol | None]:
    """x written through u > 0 ranging over the segment (or x itself on the whole line)."""
    lo, hi = seg.lower, seg.upper
    if lo == -sp.oo and hi == sp.oo:
        return x, None
    u = sp.Symbol("_u", positive=True)
    if hi == sp.oo:
        return lo + u, u
    if lo == -sp.oo:
        return hi - u, u
    return (lo + hi * u) / (1 + u), u


def monotone_sign(dL: sp.Expr, seg, x: sp.Symbol) -> int | None:
    """+1 or -1 when dL/dx = ``dL`` is proven positive or negative on the segment ``seg`` (x
    written through a positive variable ranging over it), else None (time-limited)."""
    sub, _ = positive_variable(seg, x)
    expr = dL if sub is x else dL.xreplace({x: sub})
    for form in (lambda: expr, lambda: sp.factor(sp.together(expr)),
                 lambda: sp.simplify(expr)):
        e = attempt(form, PROOF_SECONDS / 2)
        if e is None:
            continue
        s = attempt(lambda e=e: proven_sign(e), PROOF_SECONDS)
        if s in (1, -1):
            return s
    return None
