r"""Certified lattice steps for the mechanisms derive compiles (:mod:`certify.lattice`).

Importing this module registers, for :class:`derive.compile.CompiledMechanism` (so for every class
made by :func:`derive.compile.mechanism_class`), a factory of :class:`DerivedLatticeStep`: Arb
enclosures of the single-step privacy-loss law that the lattice method of
:mod:`certify.lattice` (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, *Connect the Dots: Tighter
Discrete Approximations of Privacy Loss Distributions*, PETS 2022) composes. :mod:`derive.compile`
imports it when python-flint is installed (the ``certify`` extra); without python-flint derive
works as before and the lattice method reports "does not apply".

**The law of L.** For the pair (P, Q) with PLLR :math:`L = \log(q/p)` (order "P||Q"; order
"Q||P" swaps P and Q and negates L), derive's segmentation (:mod:`derive.mechanism`) splits the
support into pieces of two kinds:

* *atoms*: an outcome of a :class:`~derive.mechanism.DiscreteMechanism`, or a segment of a
  :class:`~derive.mechanism.DensityMechanism` on which L is constant (Laplace's outer
  segments). An atom has a value :math:`\ell` and masses :math:`(Q_j, P_j)` with :math:`Q_j =
  e^\ell P_j`; for a segment the masses are sympy's definite integrals of q and p over it.
  An outcome with exactly one vanishing probability at the given parameters is an atom at
  :math:`\pm\infty` and goes into ``end_masses`` (derive refuses such specs at their sample
  points, so this is defensive);
* *monotone pieces*: a segment (a, b) on which L is strictly monotone. With antiderivatives
  :math:`G_Q, G_P` of q and p on the segment, the mass of :math:`[x, b)` is :math:`G(b^-) -
  G(x)` and that of :math:`(a, x]` is :math:`G(x) - G(a^+)`. Since L is strictly monotone,
  :math:`\{L \ge t\}` is :math:`[x_t, b)` (increasing) or :math:`(a, x_t]` (decreasing) with
  :math:`L(x_t) = t` when t lies strictly inside the range :math:`(L(a^+), L(b^-))`, the whole
  segment when t is at or below the range and empty at or above it (monotone likelihood ratio
  ordering; Karlin and Rubin, *The theory of decision procedures for distributions with
  monotone likelihood ratio*, Ann. Math. Statist. 27, 1956).

Then :math:`T_Q(s) = Q(L \ge s)` and :math:`T_P(s)` are sums of atom masses with
:math:`\ell \ge s` and piece masses, and

.. math::

    \delta(\varepsilon) = Q(L = +\infty) + \sum_j (Q_j - e^\varepsilon P_j)_+
        + \sum_{\text{pieces}} \bigl(Q(R_\varepsilon) - e^\varepsilon P(R_\varepsilon)\bigr),
    \qquad R_\varepsilon = \{L > \varepsilon\} \cap (a, b),

using :math:`Q_j - e^\varepsilon P_j = P_j(e^\ell - e^\varepsilon)`, positive exactly when
:math:`\ell > \varepsilon` (so atoms need no comparison in delta).

**What is proven, and how.**

* *Monotonicity* of L on each non-constant segment is proven symbolically: the derivative of
  derive's PLLR, with x replaced by a variable u > 0 mapped onto the segment, is shown to have a
  constant sign by sympy's assumptions plus a small sound sign calculus (:func:`_sign`: products,
  powers, exp > 0, :math:`\operatorname{sign}(A - B) = \operatorname{sign}(\log A - \log B)` for
  A, B > 0). Failing that, a spec may *declare* it (``DensityMechanism(...,
  pllr_monotone="increasing")``); the step then records the declaration as an assumption in
  :meth:`~DerivedLatticeStep.describe`. Either way the sign of dL/dx is also checked in Arb at
  sample points of every segment (a wrong declaration raises ``ValueError``). Otherwise: "does
  not apply".
* *Closed forms*: the PLLR form derive chose is used only if :math:`p e^L - q` simplifies to 0;
  otherwise :math:`\log q - \log p` is used. Antiderivatives come from ``sympy.integrate``,
  first after the substitution :math:`v = \alpha x + \beta > 0` when the density has a
  non-integer power of a linear form (so :math:`\int e^{-v^{3/2}} dv` becomes an incomplete
  gamma function), and are accepted only if their derivative minus the density simplifies to 0;
  the end values are sympy limits. At the parameter point the total masses are checked to
  enclose 1 (to :math:`2^{-60}`), which also catches an antiderivative with a jump inside its
  segment (symbolically its derivative would still match), and L at sample points is checked to
  lie inside the range given by the limits. Closed forms are evaluated by
  :func:`arb_function`, a strict sympy-to-Arb compiler (arithmetic, powers, exp, log, sqrt,
  erf, erfc, gamma and incomplete gamma, elementary functions; anything else raises
  ``TypeError`` and the step does not apply).
  It accepts more than :class:`derive.codegen.KernelPrinter` (erf, sqrt, pi and incomplete
  gamma are needed for these CDFs). Per parameter point the x-dependent forms are recompiled
  with the parameters substituted as exact rationals (their binary values), so constant
  subexpressions are evaluated once per precision.
* *The crossing point* :math:`x_t` is found by Newton's method (bisection fallback) in
  midpoint arithmetic and then **certified**: exact points :math:`x_l < x_r` inside the segment
  with Arb balls :math:`L(x_l) < t < L(x_r)` (increasing case) prove :math:`x_t \in [x_l,
  x_r]`. The masses are evaluated at the exact points :math:`x_l` and :math:`x_r` and the
  union of the two balls is taken: by monotonicity of a tail mass in its end point it contains
  the mass at :math:`x_t` (evaluating at a wide ball instead lets Arb overestimate the
  derivative of special functions). If cancellation in L prevents certification the
  evaluation precision is doubled (capped). Loops are capped; failure raises
  ``ArithmeticError``.
* *Comparisons* of an exact dyadic s with an atom value or a range end: exactly when the value
  is rational at the (exact binary) parameter values, else by Arb balls at rising precision, with
  sympy proving equality when the ball keeps containing s; never guessed (``ArithmeticError``).

Scope: finite pmfs; densities whose PLLR is constant or strictly monotone on each segment and
whose segment masses have closed forms sympy finds and Arb evaluates (Laplace, Gaussian,
logistic, generalized Gaussian :math:`e^{-|x|^{3/2}}` through incomplete gamma functions, the
Poisson-subsampled Gaussian with declared monotonicity). Refused with "does not apply": a PLLR
not proven (nor declared) monotone, e.g. a Gaussian-mixture Q; densities without closed-form
antiderivatives; closed forms with functions the Arb compiler does not map. The sympy work is
done once per spec (cached); the Arb work per parameter point.
"""

from __future__ import annotations

import math
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import sympy as sp
from flint import arb, ctx
from sympy.codegen.cfunctions import expm1, log1p

from certify.engine import workprec as _prec
from certify.lattice_steps import LatticeStep, exact_value, register_lattice_step
from numeric.mechanisms.base import DIRECTION_PQ, DIRECTION_QP

from .compile import CompiledMechanism
from .mechanism import (
    MechanismSpec,
    _analysis,
    _time_limit,
    _TimeoutError,
)

__all__ = [
    "DerivedLatticeStep",
    "LatticePlan",
    "arb_function",
    "derived_lattice_step",
    "lattice_plan",
]

_SYMPY_SECONDS = 10.0  # per sympy operation (integrate, limit, simplify)
_PROOF_SECONDS = 20.0  # per monotonicity proof
_SIGN_DEPTH = 12
_GUARD = 32  # extra bits for internal evaluations
_MAX_PREC = 1 << 13  # precision cap of comparisons
_NEWTON_CAP = 200
_CERTIFY_TRIES = 12
_CACHE_CAP = 1 << 18  # cached crossing points per step
_STEP_CACHE_CAP = 512
_TOTAL_TOL = 2.0**-60
_SAMPLE_POINTS = (-64.0, -16.0, -4.0, -1.5, -0.5, -0.125, 0.0, 0.125, 0.5, 1.5, 4.0, 16.0, 64.0)


def _does_not_apply(spec: MechanismSpec, why: str) -> ValueError:
    return ValueError(f"lattice: does not apply to {spec.name!r}: {why}")


# ---------------------------------------------------------------------------------------------
# sympy -> Arb


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


# ---------------------------------------------------------------------------------------------
# sympy helpers (time-limited; None when sympy fails)


def _attempt(fn: Callable[[], Any], seconds: float = _SYMPY_SECONDS) -> Any:
    """``fn()`` under a time limit; None on timeout or any sympy error.

    Nested calls run under the enclosing limit (derive's ``_time_limit`` does not stack
    timers), and a timeout that belongs to an enclosing call is re-raised, not swallowed.
    """
    nested = hasattr(signal, "getitimer") and signal.getitimer(signal.ITIMER_REAL)[0] > 0
    try:
        with _time_limit(seconds):
            return fn()
    except _TimeoutError:
        if nested:
            raise
        return None
    except Exception:  # sympy raises assorted error types on hard input
        return None


def _is_zero(expr: sp.Expr) -> bool:
    """True only when sympy proves ``expr == 0`` (cancel, then simplify; time-limited)."""
    if expr == 0:
        return True
    for fn in (lambda: sp.cancel(sp.together(expr)), lambda: sp.simplify(expr)):
        r = _attempt(fn)
        if r is not None and r == 0:
            return True
    return False


_BAD = (sp.Integral, sp.Limit, sp.Sum, sp.Product, sp.Derivative, sp.Piecewise, sp.meijerg,
        sp.hyper, sp.AccumBounds)


def _closed(expr: Any) -> bool:
    return (isinstance(expr, sp.Expr) and not expr.has(*_BAD) and not expr.has(sp.nan, sp.zoo)
            and not expr.has(sp.I))


def _sign(e: sp.Expr, depth: int = 0) -> int | None:
    r"""The sign (+1, -1, 0) of a real expression for all values its symbols' assumptions allow,
    or None if not proven.

    Sound rules only: sympy's assumptions; exp(real) > 0; signs of products and integer powers;
    a positive base to a real power is positive; :math:`\log y` has the sign of y - 1 for y > 0;
    a sum whose terms have known signs is compared as :math:`A - B` with A, B > 0 through
    :math:`\operatorname{sign}(\log A - \log B)`, the logs expanded only where sympy knows the
    factors are positive; otherwise ``factor(together(e))`` once more.
    """
    if depth > _SIGN_DEPTH:
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
            sf = _sign(f, depth + 1)
            if sf is None:
                return None
            out *= sf
        return out
    if e.is_Pow:
        base, ex = e.args
        sb = _sign(base, depth + 1)
        if sb == 1 and ex.is_extended_real:
            return 1
        if ex.is_Integer and sb is not None:
            if sb == 0:
                return 0 if ex > 0 else None
            return sb ** abs(int(ex))
        return None
    if isinstance(e, sp.log):
        y = e.args[0]
        if _sign(y, depth + 1) != 1:
            return None
        num, den = sp.fraction(sp.together(y))
        if den != 1 and _sign(num, depth + 1) == 1 and _sign(den, depth + 1) == 1:
            return _compare_positive(num, den, depth + 1)  # log(n/d) > 0 <=> n > d
        return _sign(y - 1, depth + 1)
    if e.is_Add:
        signs = [_sign(t, depth + 1) for t in e.args]
        if None not in signs:
            if all(s >= 0 for s in signs) and any(s > 0 for s in signs):
                return 1
            if all(s <= 0 for s in signs) and any(s < 0 for s in signs):
                return -1
            if all(s == 0 for s in signs):
                return 0
        alt = _attempt(lambda: sp.factor(sp.together(e)), 5.0)
        if alt is not None and alt != e and not alt.is_Add:  # a product: signs of factors
            r = _sign(alt, depth + 1)
            if r is not None:
                return r
        if None not in signs:
            pos = sp.Add(*[t for t, s in zip(e.args, signs, strict=True) if s > 0])
            neg = sp.Add(*[-t for t, s in zip(e.args, signs, strict=True) if s < 0])
            return _compare_positive(pos, neg, depth + 1)
        return None
    alt = _attempt(lambda: sp.factor(sp.together(e)), 5.0)
    if alt is not None and alt != e:
        return _sign(alt, depth + 1)
    return None


def _log_of(a: sp.Expr) -> sp.Expr:
    """log(a) for a > 0, expanded where every step is valid (products of positive factors,
    positive bases of real powers, exp of reals)."""
    if isinstance(a, sp.exp) and a.args[0].is_extended_real:
        return a.args[0]
    if a.is_Mul and all(_sign(f, _SIGN_DEPTH - 2) == 1 for f in a.args):
        return sp.Add(*[_log_of(f) for f in a.args])
    if a.is_Pow and a.exp.is_extended_real and _sign(a.base, _SIGN_DEPTH - 2) == 1:
        return a.exp * _log_of(a.base)
    return sp.log(a)


def _compare_positive(a: sp.Expr, b: sp.Expr, depth: int) -> int | None:
    """sign(a - b) for a, b > 0: equal powers compare their bases, otherwise through logs (log
    is increasing on (0, oo))."""
    if depth > _SIGN_DEPTH:
        return None
    ca, ra = a.as_coeff_Mul()
    cb, rb = b.as_coeff_Mul()
    if ca == cb and ca.is_positive:
        a, b = ra, rb
    if (a.is_Pow and b.is_Pow and a.exp == b.exp and a.exp.is_extended_real
            and a.exp.is_zero is False and _sign(a.base, depth + 1) == 1
            and _sign(b.base, depth + 1) == 1):  # t -> t^k is monotone on (0, oo)
        r = _sign(a.base - b.base, depth + 1)
        if r is not None:
            return r if a.exp.is_positive else -r
    la, lb = _log_of(a), _log_of(b)
    if (isinstance(la, sp.log) and la.args[0] == a and isinstance(lb, sp.log)
            and lb.args[0] == b):  # no log expanded: compare the ratio with 1
        ratio = _attempt(lambda: sp.cancel(a / b), 5.0)
        if ratio is None or ratio == a / b:
            return None
        d = ratio - 1
    else:
        d = sp.expand(la - lb)
    r = _sign(d, depth + 1)
    if r is None:  # log A - log B = log(A/B) where sympy knows the arguments are positive
        comb = _attempt(lambda: sp.logcombine(d), 5.0)
        if comb is not None and comb != d:
            r = _sign(comb, depth + 1)
    return r


# ---------------------------------------------------------------------------------------------
# the symbolic plan of a spec


@dataclass(frozen=True)
class _Atom:
    """An atom of L: value ``pllr`` (no x), masses ``p`` and ``q`` (expressions in the params)
    and their compiled Arb functions of the parameters."""

    label: str
    pllr: sp.Expr
    p: sp.Expr
    q: sp.Expr
    f_p: Callable
    f_q: Callable


@dataclass(frozen=True)
class _Piece:
    """A segment (a, b) on which L is strictly monotone; ``f_*`` are Arb functions of the
    parameters (the x-dependent ones are bound per step, :meth:`_State.bound`)."""

    label: str
    lower: sp.Expr
    upper: sp.Expr
    increasing: bool
    how: str  # "proven" or "declared"
    pllr: sp.Expr
    lim_lo: sp.Expr  # L(a+)
    lim_hi: sp.Expr  # L(b-)
    dpllr: sp.Expr  # dL/dx
    antiderivatives: tuple[sp.Expr, sp.Expr]  # (Q, P)
    f_lower: Callable | None  # segment ends (None if infinite)
    f_upper: Callable | None
    f_g_lo: tuple[Callable, Callable]  # antiderivatives' limits at a+ (Q, P)
    f_g_hi: tuple[Callable, Callable]  # at b-
    f_lim_lo: Callable | None
    f_lim_hi: Callable | None


@dataclass(frozen=True)
class LatticePlan:
    """What the lattice step of a spec needs, derived once (sympy) and compiled to Arb.

    Attributes:
        spec: The spec.
        params: Internal parameter symbols (argument order; x comes last in piece functions).
        x: The variable (None for discrete specs).
        atoms: Atoms of L.
        pieces: Strictly monotone segments.
        notes: How monotonicity and the closed forms were established (for certificates).
    """

    spec: MechanismSpec
    params: tuple[sp.Symbol, ...]
    x: sp.Symbol | None
    atoms: tuple[_Atom, ...]
    pieces: tuple[_Piece, ...]
    notes: tuple[str, ...]


_PLANS: dict[MechanismSpec, LatticePlan | ValueError] = {}
_PLAN_LOCK = threading.Lock()


def lattice_plan(spec: MechanismSpec) -> LatticePlan:
    """The (cached) lattice plan of a spec.

    Raises:
        ValueError: "lattice: does not apply ..." with the reason (cached too).
    """
    with _PLAN_LOCK:
        plan = _PLANS.get(spec)
    if plan is None:
        try:
            plan = _build_plan(spec)
        except ValueError as exc:
            plan = exc
        with _PLAN_LOCK:
            _PLANS[spec] = plan
    if isinstance(plan, ValueError):
        raise ValueError(str(plan))
    return plan


def _build_plan(spec: MechanismSpec) -> LatticePlan:
    an = _analysis(spec)
    params = tuple(an.param_syms)
    if spec.kind == "discrete":
        atoms = []
        for seg in an.segments:
            try:
                atoms.append(_Atom(seg.label, seg.pllr, seg.p, seg.q,
                                   arb_function(seg.p, params), arb_function(seg.q, params)))
            except TypeError as exc:
                raise _does_not_apply(spec, f"{seg.label}: {exc}") from None
        return LatticePlan(spec, params, None, tuple(atoms), (), ("finite pmfs",))
    x = an.x
    symbols = (*params, x)
    declared = _declared(spec, sum(1 for seg in an.segments if not seg.atom))
    atoms, pieces, notes = [], [], []
    k = 0
    for seg in an.segments:
        if seg.atom:
            atoms.append(_atom_segment(spec, seg, x, params))
            continue
        pieces.append(_piece(spec, seg, x, params, symbols, declared[k] if declared else None,
                             notes))
        k += 1
    return LatticePlan(spec, params, x, tuple(atoms), tuple(pieces), tuple(notes))


def _declared(spec: MechanismSpec, n: int) -> tuple[str, ...] | None:
    decl = getattr(spec, "pllr_monotone", None)
    if decl is None:
        return None
    if isinstance(decl, str):
        return (decl,) * n
    decl = tuple(decl)
    if len(decl) != n:
        raise _does_not_apply(spec, f"pllr_monotone declares {len(decl)} directions but the PLLR "
                                    f"has {n} non-constant segment(s)")
    return decl


def _atom_segment(spec: MechanismSpec, seg, x: sp.Symbol, params) -> _Atom:
    masses = []
    for what, dens in (("q", seg.q), ("p", seg.p)):
        m = _attempt(lambda dens=dens: sp.integrate(dens, (x, seg.lower, seg.upper),
                                                    conds="none"))
        if m is not None:
            m = _attempt(lambda m=m: sp.unpolarify(m)) or m
        if not _closed(m) or m.has(x) or m.has(sp.oo, -sp.oo):
            raise _does_not_apply(spec, f"no closed form for the {what}-mass of the segment "
                                        f"{seg.label} where L is constant")
        masses.append(m)
    try:
        return _Atom(seg.label, seg.pllr, masses[1], masses[0], arb_function(masses[1], params),
                     arb_function(masses[0], params))
    except TypeError as exc:
        raise _does_not_apply(spec, f"{seg.label}: {exc}") from None


def _positive_variable(seg, x: sp.Symbol) -> tuple[sp.Expr, sp.Symbol | None]:
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


def _monotone_sign(dL: sp.Expr, seg, x: sp.Symbol) -> int | None:
    sub, _ = _positive_variable(seg, x)
    expr = dL if sub is x else dL.xreplace({x: sub})
    for form in (lambda: expr, lambda: sp.factor(sp.together(expr)),
                 lambda: sp.simplify(expr)):
        e = _attempt(form, _PROOF_SECONDS / 2)
        if e is None:
            continue
        s = _attempt(lambda e=e: _sign(e), _PROOF_SECONDS)
        if s in (1, -1):
            return s
    return None


def _finite_limit(G: sp.Expr, var: sp.Symbol, end: sp.Expr, d: str) -> sp.Expr | None:
    """The one-sided limit of G at ``end`` if finite and closed: ``sympy.limit`` (also of G with
    lower incomplete gammas rewritten through upper ones), else sympy's evaluation of G at the
    end (its rules for functions at infinity; indeterminate forms give nan and are refused).
    All are re-checked at the parameter point by the total-mass test of
    :class:`DerivedLatticeStep`."""
    alt = _attempt(lambda: G.rewrite(sp.uppergamma)) if G.has(sp.lowergamma) else None
    tries = [lambda: sp.limit(G, var, end, d)]
    if alt is not None:  # lowergamma(a, z) = gamma(a) - uppergamma(a, z): limits sympy knows
        tries.append(lambda: sp.limit(alt, var, end, d))
    tries.append(lambda: G.subs(var, end))
    for fn in tries:
        v = _attempt(fn)
        if v is not None and _closed(v) and not v.has(var) and not v.has(sp.oo, -sp.oo):
            return v
    return None


def _antiderivative(dens: sp.Expr, seg, x: sp.Symbol
                    ) -> tuple[sp.Expr | None, tuple[sp.Expr, sp.Expr], str]:
    r"""(G, (G(a+), G(b-)), reason) with G' = dens on the segment proven by sympy; G = None and a
    reason on failure.

    For each linear base :math:`\alpha x + \beta` of a non-integer power in ``dens`` that is
    proven positive on the segment, with a positive symbol :math:`v = \alpha x + \beta`:
    :math:`G(x) = H(\alpha x + \beta)/\alpha` where :math:`H'(v) = \mathrm{dens}((v -
    \beta)/\alpha)` is proven for v > 0 (sympy can then use v > 0, e.g. :math:`\int e^{-v^{3/2}}
    dv = \tfrac23\gamma(\tfrac23, v^{3/2})`), the end values being limits in v. Otherwise (or if
    that fails) ``integrate(dens, x)``, its derivative proven equal to ``dens``.
    """
    lo, hi = seg.lower, seg.upper
    bases = []
    for node in sp.preorder_traversal(dens):
        if node.is_Pow and not node.exp.is_Integer:
            poly = _attempt(lambda node=node: sp.Poly(node.base, x))
            if poly is not None and poly.degree() == 1 and node.base not in bases:
                bases.append(node.base)
    sub, _ = _positive_variable(seg, x)
    v = sp.Symbol("_v", positive=True)
    for base in bases:
        alpha = sp.diff(base, x)
        beta = sp.expand(base - alpha * x)
        if not (alpha.is_number and alpha.is_nonzero and not beta.has(x)):
            continue
        if _attempt(lambda base=base: _sign(base.xreplace({x: sub})), _PROOF_SECONDS) != 1:
            continue  # base not proven positive on the segment
        dens_v = dens.xreplace({x: (v - beta) / alpha})
        H = _attempt(lambda dens_v=dens_v: sp.integrate(dens_v, v))
        if H is not None:
            H = _attempt(lambda H=H: sp.unpolarify(H)) or H
        if not _closed(H):
            continue
        dH = _attempt(lambda H=H: sp.diff(H, v))
        if dH is None or not _is_zero(dH - dens_v):
            continue
        ends = []
        for end, d in ((lo, "+"), (hi, "-")):
            if end in (sp.oo, -sp.oo):
                v_end = end if alpha.is_positive else -end
            else:
                v_end = alpha * end + beta
            v_dir = d if alpha.is_positive else ("-" if d == "+" else "+")
            ends.append(_finite_limit(H, v, v_end, v_dir))
        if None in ends:
            continue
        G = H.xreplace({v: base}) / alpha
        return G, (ends[0] / alpha, ends[1] / alpha), ""
    G = _attempt(lambda: sp.integrate(dens, x))
    if G is not None:
        G = _attempt(lambda: sp.unpolarify(G)) or G
    if not _closed(G):
        return None, (sp.S.Zero, sp.S.Zero), "sympy returned no closed form"
    dG = _attempt(lambda: sp.diff(G, x))
    if dG is None or not _is_zero(dG - dens):
        return None, (sp.S.Zero, sp.S.Zero), f"d/dx {G} - density does not simplify to 0"
    ends = (_finite_limit(G, x, lo, "+"), _finite_limit(G, x, hi, "-"))
    if None in ends:
        return None, (sp.S.Zero, sp.S.Zero), "no finite limits at the segment ends"
    return G, ends, ""


def _piece(spec, seg, x, params, symbols, declared: str | None, notes: list[str]) -> _Piece:
    where = f"segment {seg.label}"
    p, q = seg.p, seg.q
    L = seg.pllr
    if not _is_zero(p * sp.exp(L) - q):
        L = sp.log(q) - sp.log(p)
        notes.append(f"{where}: L = log q - log p (derive's PLLR form not proven equal)")
    dL = _attempt(lambda: sp.diff(L, x))
    if dL is None:
        raise _does_not_apply(spec, f"cannot differentiate the PLLR on {where}")
    s = _monotone_sign(dL, seg, x)
    if s is not None:
        increasing, how = s > 0, "proven"
        if declared is not None and (declared == "increasing") != increasing:
            raise _does_not_apply(spec, f"pllr_monotone declares {declared} on {where} but dL/dx "
                                        f"is proven {'positive' if increasing else 'negative'}")
        notes.append(f"PLLR strictly {'increasing' if increasing else 'decreasing'} on {where} "
                     "(proven: sympy shows dL/dx has constant sign)")
    elif declared is not None:
        increasing, how = declared == "increasing", "declared"
        notes.append(f"ASSUMPTION: PLLR strictly {declared} on {where} as declared by the spec "
                     "(pllr_monotone; not proven, checked in Arb at sample points only)")
    else:
        raise _does_not_apply(
            spec, f"PLLR not proven monotone on {where} (dL/dx = {dL}); if it is, declare "
                  "pllr_monotone='increasing' or 'decreasing' in the DensityMechanism")
    lo, hi = seg.lower, seg.upper
    lims = []
    for end, d in ((lo, "+"), (hi, "-")):
        v = _attempt(lambda end=end, d=d: sp.limit(L, x, end, d))
        if v is None or not (v in (sp.oo, -sp.oo) or (_closed(v) and not v.has(x))):
            raise _does_not_apply(spec, f"sympy found no limit of the PLLR at {end} on {where}")
        lims.append(v)
    if (lims[0] == sp.oo or lims[1] == -sp.oo) if increasing else (
            lims[0] == -sp.oo or lims[1] == sp.oo):
        raise _does_not_apply(spec, f"the PLLR limits {lims} on {where} contradict monotonicity")
    gs, g_lo, g_hi = [], [], []
    for what, dens in (("q", q), ("p", p)):
        G, ends, why = _antiderivative(dens, seg, x)
        if G is None:
            raise _does_not_apply(spec, f"no proven closed-form antiderivative of {what} on "
                                        f"{where} ({why})")
        gs.append(G)
        g_lo.append(ends[0])
        g_hi.append(ends[1])
    try:
        for e in (L, dL, *gs):  # compiled per parameter point later; refuse early here
            arb_function(e, symbols)
        f_lower = None if lo == -sp.oo else arb_function(lo, params)
        f_upper = None if hi == sp.oo else arb_function(hi, params)
        f_g_lo = tuple(arb_function(v, params) for v in g_lo)
        f_g_hi = tuple(arb_function(v, params) for v in g_hi)
        f_lims = [None if v in (sp.oo, -sp.oo) else arb_function(v, params) for v in lims]
    except TypeError as exc:
        raise _does_not_apply(spec, f"{where}: {exc}") from None
    return _Piece(seg.label, lo, hi, increasing, how, L, lims[0], lims[1], dL, tuple(gs),
                  f_lower, f_upper, f_g_lo, f_g_hi, f_lims[0], f_lims[1])


# ---------------------------------------------------------------------------------------------
# the step


class _State:
    """Per-step data outside the dataclass fields: plan, exact parameters and caches."""

    def __init__(self, plan: LatticePlan, values: dict[str, float]) -> None:
        self.plan = plan
        self.floats = tuple(float(values[s.name]) for s in plan.params)
        self.exact = {s: sp.Rational(v) for s, v in zip(plan.params, self.floats, strict=True)}
        self.balls: dict[tuple, Any] = {}
        self.exact_values: dict[tuple, Any] = {}
        self.cross: dict[tuple, tuple[arb, arb]] = {}
        self.warm: dict[int, arb] = {}
        self.bound_fns: dict[int, tuple] = {}
        self.lock = threading.Lock()

    def vals(self) -> list[arb]:
        return [arb(v) for v in self.floats]

    def bound(self, i: int) -> tuple[Callable, Callable, Callable, Callable]:
        """(L, dL/dx, G_Q, G_P) of piece i as functions of [x] alone: the parameters substituted
        exactly (binary values as rationals), so constant subexpressions are folded once per
        precision (several times faster than passing the parameters)."""
        fns = self.bound_fns.get(i)
        if fns is None:
            pc = self.plan.pieces[i]
            xs = [self.plan.x]
            exprs = (pc.pllr, pc.dpllr, *pc.antiderivatives)
            try:
                fns = tuple(arb_function(e.xreplace(self.exact), xs) for e in exprs)
            except TypeError as exc:  # e.g. a power turned complex at these values
                raise _does_not_apply(self.plan.spec, f"segment {pc.label} at "
                                                      f"{self.floats}: {exc}") from None
            self.bound_fns[i] = fns
        return fns


def _exact_of(e: sp.Expr) -> Fraction | None:
    """The exact rational value of a sympy number, or None."""
    if e.is_Rational:
        return Fraction(int(e.p), int(e.q))
    return None


@dataclass(frozen=True)
class DerivedLatticeStep(LatticeStep):
    r"""Lattice step of a mechanism compiled by derive (see the module docstring).

    Attributes:
        mechanism: The compiled mechanism (a frozen dataclass; equal mechanisms give equal,
            hash-equal steps).
        swapped: False for "P||Q", True for "Q||P" (P and Q swapped, L negated).
    """

    mechanism: Any
    swapped: bool = False
    _state: _State = field(default=None, compare=False, hash=False, repr=False)

    def __post_init__(self) -> None:
        if self._state is None:
            plan = lattice_plan(self.mechanism.spec)
            object.__setattr__(self, "_state", _State(plan, self.mechanism.values))
            self._validate()

    # -- evaluation at the parameters ----------------------------------------------------------

    def _const(self, key: tuple, fn: Callable, wp: int) -> arb:
        k = (*key, wp)
        v = self._state.balls.get(k)
        if v is None:
            with _prec(wp):
                v = fn(self._state.vals())
            if not v.is_finite():
                raise ArithmeticError(f"lattice: {key} is not finite at {self.mechanism!r}")
            self._state.balls[k] = v
        return v

    def _atom_masses(self, j: int, wp: int) -> tuple[arb, arb]:
        a = self._state.plan.atoms[j]
        return self._const(("q", j), a.f_q, wp), self._const(("p", j), a.f_p, wp)

    def _piece_consts(self, i: int, wp: int) -> dict[str, arb]:
        pc = self._state.plan.pieces[i]
        out = {}
        for r, name in enumerate(("q", "p")):
            out[f"{name}_lo"] = self._const(("G_lo", i, r), pc.f_g_lo[r], wp)
            out[f"{name}_hi"] = self._const(("G_hi", i, r), pc.f_g_hi[r], wp)
        return out

    def _validate(self) -> None:
        """Masses sum to 1, atoms are classified, and dL/dx has the claimed sign at samples."""
        plan = self._state.plan
        wp = 128
        with _prec(wp):
            tq, tp = arb(0), arb(0)
            for j in range(len(plan.atoms)):
                q, p = self._atom_masses(j, wp)
                tq, tp = tq + q, tp + p
            for i in range(len(plan.pieces)):
                c = self._piece_consts(i, wp)
                tq += c["q_hi"] - c["q_lo"]
                tp += c["p_hi"] - c["p_lo"]
            for what, t in (("q", tq), ("p", tp)):
                if not abs(t - 1) < _TOTAL_TOL:
                    raise _does_not_apply(plan.spec, f"the closed-form {what}-masses sum to {t} "
                                                     f"at {self.mechanism.values}, not 1")
            for i in range(len(plan.pieces)):
                self._check_samples(i)
        self._classify_atoms()

    def _check_samples(self, i: int) -> None:
        """Runtime sanity checks of piece i at the parameter point (Arb, certain violations
        only): the segment is not empty, and at sample points dL/dx has the claimed sign and L
        lies inside the range given by sympy's limits at the segment ends."""
        st = self._state
        pc = st.plan.pieces[i]
        spec = st.plan.spec
        v = st.vals()
        a = pc.f_lower(v) if pc.f_lower is not None else None
        b = pc.f_upper(v) if pc.f_upper is not None else None
        if a is not None and b is not None and not a < b:
            raise _does_not_apply(spec, f"segment {pc.label} is empty or undecided at "
                                        f"{self.mechanism.values}")
        fL, fdL = st.bound(i)[:2]
        lims = [None if lim in (sp.oo, -sp.oo) else fn(v)
                for lim, fn in ((pc.lim_lo, pc.f_lim_lo), (pc.lim_hi, pc.f_lim_hi))]
        lo_lim, hi_lim = lims if pc.increasing else lims[::-1]
        pts = []
        for t in _SAMPLE_POINTS:
            if a is None and b is None:
                pts.append(arb(t))
            elif b is None:
                pts.append(arb(a.mid()) + abs(arb(t)) + arb(2.0**-20))
            elif a is None:
                pts.append(arb(b.mid()) - abs(arb(t)) - arb(2.0**-20))
            else:
                w = (b - a) * (arb(t) / 128 + arb(0.5))
                pts.append(arb((a + w).mid()))
        direction = "increasing" if pc.increasing else "decreasing"
        for xp in pts:
            if (a is not None and not xp > a) or (b is not None and not xp < b):
                continue
            d = fdL([xp])
            if (d < 0) if pc.increasing else (d > 0):
                raise _does_not_apply(
                    spec, f"dL/dx has the wrong sign at x = {xp.mid()} on segment {pc.label} "
                          f"({pc.how} {direction})")
            lv = fL([xp])
            if (lo_lim is not None and lv < lo_lim) or (hi_lim is not None and lv > hi_lim):
                raise _does_not_apply(
                    spec, f"L({xp.mid()}) = {lv} lies outside the range given by sympy's limits "
                          f"on segment {pc.label}")

    def _classify_atoms(self) -> None:
        """Exact values of atoms (rational L, or infinite when one mass is exactly 0)."""
        st = self._state
        plan = st.plan
        kinds = []
        for j, atom in enumerate(plan.atoms):
            q, p = self._atom_masses(j, 128)
            kind = "finite"
            if q.contains(0) or p.contains(0):
                qz = _is_zero(atom.q.xreplace(st.exact))
                pz = _is_zero(atom.p.xreplace(st.exact))
                if qz and pz:
                    kind = "empty"
                elif qz:
                    kind = "-inf"
                elif pz:
                    kind = "+inf"
                elif not (q > 0 and p > 0):
                    with _prec(_MAX_PREC):
                        q2 = atom.f_q(st.vals())
                        p2 = atom.f_p(st.vals())
                    if not (q2 > 0 and p2 > 0):
                        raise ArithmeticError(f"lattice: cannot decide whether a mass of atom "
                                              f"{atom.label} vanishes")
            exact = None
            if kind == "finite":
                lv = atom.pllr.xreplace(st.exact)
                ex = _exact_of(lv) if lv.is_number else None
                if ex is not None and _is_zero(
                        atom.q.xreplace(st.exact) - sp.exp(lv) * atom.p.xreplace(st.exact)):
                    exact = ex
            kinds.append((kind, exact))
        st.exact_values["atoms"] = tuple(kinds)

    # -- comparisons -------------------------------------------------------------------------

    def _cmp_atom(self, j: int, t: Fraction, wp: int) -> int:
        """sign(L_j - t) for a finite atom."""
        _, exact = self._state.exact_values["atoms"][j]
        if exact is not None:
            return (exact > t) - (exact < t)
        atom = self._state.plan.atoms[j]
        tb = _arb_of(t)
        st = self._state

        def diff(prec: int) -> arb:
            q, p = self._atom_masses(j, prec)
            with _prec(prec):
                return q - tb.exp() * p  # sign(q - e^t p) = sign(L - t)

        def zero() -> bool:
            return _is_zero(atom.q.xreplace(st.exact) - sp.exp(_rat(t)) * atom.p.xreplace(st.exact))

        return _certified_sign(diff, zero, wp, f"the atom {atom.label} with {t}")

    def _cmp_limit(self, i: int, end: str, t: Fraction, wp: int) -> int:
        """sign(lim - t) for the PLLR limit at the lower ("lo") or upper ("hi") segment end."""
        pc = self._state.plan.pieces[i]
        lim = pc.lim_lo if end == "lo" else pc.lim_hi
        if lim == sp.oo:
            return 1
        if lim == -sp.oo:
            return -1
        key = ("lim", i, end)
        st = self._state
        if key not in st.exact_values:
            val = lim.xreplace(st.exact)
            st.exact_values[key] = (val, _exact_of(val) if val.is_number else None)
        val, ex = st.exact_values[key]
        if ex is not None:
            return (ex > t) - (ex < t)
        fn = pc.f_lim_lo if end == "lo" else pc.f_lim_hi
        tb = _arb_of(t)
        return _certified_sign(lambda prec: self._const(key, fn, prec) - tb,
                               lambda: _is_zero(val - _rat(t)), wp,
                               f"the PLLR limit {lim} with {t}")

    # -- the crossing point ------------------------------------------------------------------

    def _crossing(self, i: int, t: Fraction, wp: int) -> tuple[arb, arb]:
        """Exact points x_l < x_r of segment i with L(x_l) < t < L(x_r) (increasing L; reversed
        inequalities for decreasing L) certified, so the crossing L(x_t) = t lies between them
        (t strictly inside the range of L on the segment)."""
        key = (i, t, wp)
        st = self._state
        hit = st.cross.get(key)
        if hit is not None:
            return hit
        pc = st.plan.pieces[i]
        sgn = 1 if pc.increasing else -1
        bits = _radius_bits(wp)
        fL, fdL = st.bound(i)[:2]
        tb = _arb_of(t)

        def g(xp: arb) -> arb:  # increasing in x, zero at the crossing
            return sgn * (fL([xp]) - tb)

        def dg(xp: arb) -> arb:
            return sgn * fdL([xp])

        ep = wp
        while True:  # raise the evaluation precision if cancellation in L defeats certification
            with _prec(ep):
                v = st.vals()
                a = pc.f_lower(v) if pc.f_lower is not None else None
                b = pc.f_upper(v) if pc.f_upper is not None else None
                try:
                    x0 = st.warm.get(i)
                    xt = _newton(g, dg, x0, a, b, bits) if x0 is not None else None
                    if xt is None:
                        xt = _bracketed(g, dg, a, b, bits)
                    ball = _certify(g, xt, a, b, bits)
                    break
                except ArithmeticError:
                    if 2 * ep > _MAX_PREC:
                        raise
            ep *= 2
        with st.lock:
            if len(st.cross) > _CACHE_CAP:
                st.cross.clear()
            st.cross[key] = ball
            st.warm[i] = ball[0]
        return ball

    # -- masses of {L~ >= s} ------------------------------------------------------------------

    def _piece_masses(self, i: int, s: Fraction, wp: int) -> tuple[arb, arb]:
        r"""(Q~, P~) masses of :math:`\{\tilde L \ge s\}` on piece i (swap-aware)."""
        pc = self._state.plan.pieces[i]
        c = self._piece_consts(i, wp)
        if self.swapped:  # L~ = -L >= s  <=>  L <= -s; Q~ = P, P~ = Q
            t, want_ge, names = -s, False, ("p", "q")
        else:
            t, want_ge, names = s, True, ("q", "p")
        range_lo, range_hi = ("lo", "hi") if pc.increasing else ("hi", "lo")
        if self._cmp_limit(i, range_lo, t, wp) >= 0:  # t <= inf L: {L >= t} is everything
            region = "all" if want_ge else "none"
        elif self._cmp_limit(i, range_hi, t, wp) <= 0:  # t >= sup L
            region = "none" if want_ge else "all"
        else:
            region = "upper" if want_ge == pc.increasing else "lower"
        if region == "none":
            return arb(0), arb(0)
        out = []
        if region == "all":
            for n in names:
                out.append(c[f"{n}_hi"] - c[f"{n}_lo"])
            return out[0], out[1]
        xl, xr = self._crossing(i, t, wp)
        fGq, fGp = self._state.bound(i)[2:]
        with _prec(wp):
            for n in names:
                fG = fGq if n == "q" else fGp
                ends = []
                for xe in (xl, xr):  # exact points: the masses there bracket the mass at x_t
                    G = fG([xe])
                    ends.append(c[f"{n}_hi"] - G if region == "upper" else G - c[f"{n}_lo"])
                out.append(ends[0].union(ends[1]))
        return out[0], out[1]

    def _atom_kinds(self) -> tuple[tuple[str, Fraction | None], ...]:
        """Per atom: kind ("finite", "+inf", "-inf" or "empty", for the pair P||Q) and the
        exact rational value of L when known."""
        return self._state.exact_values["atoms"]

    # -- LatticeStep API -------------------------------------------------------------------

    def end_masses(self) -> tuple[arb, arb]:
        q_inf, p_minf = arb(0), arb(0)
        wp = ctx.prec
        for j, (kind, _) in enumerate(self._atom_kinds()):
            if kind not in ("+inf", "-inf"):
                continue
            q, p = self._atom_masses(j, wp)
            if (kind == "+inf") != self.swapped:  # +inf atom of L~ carries Q~-mass
                q_inf += p if self.swapped else q
            else:
                p_minf += q if self.swapped else p
        return q_inf, p_minf

    def tails(self, s: arb) -> tuple[arb, arb]:
        sv = exact_value(s)
        wp = ctx.prec + _GUARD
        tq, tp = arb(0), arb(0)
        with _prec(wp):
            for j, (kind, _) in enumerate(self._atom_kinds()):
                if kind in ("empty", "-inf" if not self.swapped else "+inf"):
                    continue
                q, p = self._atom_masses(j, wp)
                qt, pt = (p, q) if self.swapped else (q, p)
                if kind != "finite":  # L~ = +inf: above every s (P~-mass 0)
                    tq += qt
                    continue
                if self.swapped:
                    above = self._cmp_atom(j, -sv, wp) <= 0  # -L >= s <=> L <= -s
                else:
                    above = self._cmp_atom(j, sv, wp) >= 0
                if above:
                    tq, tp = tq + qt, tp + pt
            for i in range(len(self._state.plan.pieces)):
                mq, mp = self._piece_masses(i, sv, wp)
                tq, tp = tq + mq, tp + mp
        return _finite(tq), _finite(tp)

    def delta(self, eps: arb) -> arb:
        if not eps.is_exact():  # delta is non-increasing: enclose by the ends of the ball
            hi = self.delta(arb(eps.lower()))
            lo = self.delta(arb(eps.upper()))
            return lo.union(hi)
        ev = exact_value(eps)
        wp = ctx.prec + _GUARD
        with _prec(wp):
            t = eps.exp()
            total = self.end_masses()[0]
            for j, (kind, _) in enumerate(self._atom_kinds()):
                if kind != "finite":
                    continue
                q, p = self._atom_masses(j, wp)
                qt, pt = (p, q) if self.swapped else (q, p)
                total += (qt - t * pt).nonnegative_part()
            for i in range(len(self._state.plan.pieces)):
                mq, mp = self._piece_masses(i, ev, wp)
                total += (mq - t * mp).nonnegative_part()
        return _finite(total)

    def rough_std(self) -> float:
        cum = self.mechanism._cumulants(2)
        var = cum.x[1] if self.swapped else cum.y[1]
        return max(math.sqrt(max(float(var), 0.0)), 1e-3)

    def describe(self) -> str:
        order = DIRECTION_QP if self.swapped else DIRECTION_PQ
        notes = "; ".join(self._state.plan.notes)
        return f"{self.mechanism.describe()} {order} [derive lattice step: {notes}]"

    @property
    def assumptions(self) -> tuple[str, ...]:
        """Declared (unproven) properties this step relies on (empty when all are proven)."""
        return tuple(n for n in self._state.plan.notes if n.startswith("ASSUMPTION"))


# ---------------------------------------------------------------------------------------------
# root finding (midpoint arithmetic) and certification (Arb)


def _certified_sign(diff: Callable[[int], arb], proven_zero: Callable[[], bool], wp: int,
          what: str) -> int:
    """The certified sign of a real given as Arb balls ``diff(prec)``: precision rises (x4, up to
    the cap) until the ball excludes 0; sympy is asked once whether the value is exactly 0.

    Raises:
        ArithmeticError: naming ``what`` if neither settles it at the precision cap.
    """
    prec = wp
    tried_sympy = False
    while prec <= _MAX_PREC:
        d = diff(prec)
        if d > 0:
            return 1
        if d < 0:
            return -1
        if not tried_sympy:
            tried_sympy = True
            if proven_zero():
                return 0
        prec *= 4
    raise ArithmeticError(f"lattice: cannot compare {what}")


def _finite(x: arb) -> arb:
    """``x`` if it is a finite ball; an Arb nan (e.g. a real power of a ball reaching below 0)
    raises ``ArithmeticError`` instead of reaching the lattice."""
    if not x.is_finite():
        raise ArithmeticError(f"lattice: non-finite enclosure {x}")
    return x


def _arb_of(t: Fraction) -> arb:
    """The exact ball of a dyadic rational."""
    num, den = t.numerator, t.denominator
    k = den.bit_length() - 1
    if den != 1 << k:
        raise ArithmeticError(f"lattice: {t} is not dyadic")
    return arb(num) * arb(2) ** (-k)


def _rat(t: Fraction) -> sp.Rational:
    return sp.Rational(t.numerator, t.denominator)


def _m(x: arb) -> arb:
    return arb(x.mid())


def _inside(x: arb, a: arb | None, b: arb | None) -> bool:
    return (a is None or x > a) and (b is None or x < b)


def _radius_bits(wp: int) -> int:
    """-log2 of the relative radius R of a certified crossing ball for working precision wp (the
    caller's precision is wp - _GUARD): tails then have radii ~ 2^-(prec - 16)."""
    return wp - _GUARD - 16


def _tol(x: arb, bits: float) -> arb:
    return arb(2) ** (-int(bits)) * max(arb(1), abs(x))


def _newton(g, dg, x0: arb, a, b, bits: int) -> arb | None:
    """Plain Newton from a warm start; None if it leaves the segment or does not settle.

    Stops once a step is below 2^-(0.55 R) (R = ``bits``, :func:`_radius_bits`): the next
    iterate is then accurate to about 2^-(1.1 R), inside the certification ball (and
    certification decides).
    """
    x = x0
    stop = 0.55 * bits
    for _ in range(12):
        gx, dx = g(x), dg(x)
        if not dx.mid() > 0:
            return None
        step = _m(gx) / _m(dx)
        xn = _m(x - step)
        if not _inside(xn, a, b):
            return None
        if abs(xn - x) <= _tol(x, stop):
            return xn
        x = xn
    return None


def _bracketed(g, dg, a, b, bits: int) -> arb:
    """Safeguarded Newton (bisection fallback) from a bracket found by outward search."""
    if a is not None and b is not None:
        x = _m((a + b) / 2)
    elif a is not None:
        x = _m(a + 1)
    elif b is not None:
        x = _m(b - 1)
    else:
        x = arb(0)
    lo = hi = None
    gx = g(x).mid()
    if gx < 0:
        lo = x
    else:
        hi = x
    step = arb(1)
    for _ in range(4 * bits + 256):
        if lo is not None and hi is not None:
            break
        if lo is None:  # move left
            y = _m((hi + a) / 2) if a is not None else _m(hi - step)
        else:
            y = _m((lo + b) / 2) if b is not None else _m(lo + step)
        step = step * 2
        if g(y).mid() < 0:
            lo = y
        else:
            hi = y
    else:
        raise ArithmeticError("lattice: no bracket for the PLLR crossing point")
    x = _m((lo + hi) / 2)
    for _ in range(_NEWTON_CAP + 2 * bits):
        gx = g(x)
        gm = gx.mid()
        if gm == 0:
            return x
        if gm < 0:
            lo = x
        else:
            hi = x
        d = dg(x)
        xn = _m(x - _m(gx) / _m(d)) if d.mid() > 0 else None
        if xn is not None and lo <= xn <= hi:  # a Newton step: quadratic convergence
            if abs(xn - x) <= _tol(x, 0.55 * bits):
                return xn
        else:  # bisection
            xn = _m((lo + hi) / 2)
            if abs(hi - lo) <= _tol(x, bits):
                return xn
        x = xn
    raise ArithmeticError("lattice: the PLLR crossing point did not converge")


def _certify(g, x: arb, a, b, bits: int) -> tuple[arb, arb]:
    """Exact points x_l < x_r around x, inside (a, b), with g(x_l) < 0 < g(x_r) certified (g
    increasing), at relative distance about 2^-bits (widened 256-fold per failed try)."""
    r = _tol(x, bits)
    for _ in range(_CERTIFY_TRIES):
        xl, xr = _m(x - r), _m(x + r)
        if _inside(xl, a, b) and _inside(xr, a, b) and g(xl) < 0 and g(xr) > 0:
            return xl, xr
        r = r * 256
    raise ArithmeticError(f"lattice: could not certify the PLLR crossing point near {x.mid()}")


# ---------------------------------------------------------------------------------------------
# registration


_STEPS: dict[tuple, DerivedLatticeStep] = {}
_STEPS_LOCK = threading.Lock()


def derived_lattice_step(mechanism: CompiledMechanism, direction: str = DIRECTION_PQ
                         ) -> DerivedLatticeStep:
    """The lattice step of a compiled mechanism (cached per mechanism and direction).

    Args:
        mechanism: An instance of a class made by :func:`derive.compile.mechanism_class`.
        direction: ``"P||Q"`` or ``"Q||P"``.

    Returns:
        A :class:`DerivedLatticeStep`; repeated calls return the same object.

    Raises:
        ValueError: "lattice: does not apply ..." when the law cannot be enclosed (PLLR not
            proven monotone, no closed-form masses, ...), or on a bad direction.
    """
    if direction not in (DIRECTION_PQ, DIRECTION_QP):
        raise ValueError(f"direction must be {DIRECTION_PQ!r} or {DIRECTION_QP!r}, "
                         f"got {direction!r}")
    key = (mechanism, direction)
    with _STEPS_LOCK:
        step = _STEPS.get(key)
    if step is None:
        step = DerivedLatticeStep(mechanism, direction == DIRECTION_QP)
        with _STEPS_LOCK:
            if len(_STEPS) >= _STEP_CACHE_CAP:
                _STEPS.clear()
            step = _STEPS.setdefault(key, step)
    return step


register_lattice_step(CompiledMechanism)(derived_lattice_step)
