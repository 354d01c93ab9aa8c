r"""The built-in mechanisms' cumulant kernels: closed forms rewritten for floats, by branches.

derive's closed forms of kappa_1..kappa_4 of X for the built-in Gaussian, Laplace and
randomized-response mechanisms (:mod:`derive.builtins`; docs/math.md section 4) are rewritten as
rational functions N(p, t)/D(p, t) of the parameter p and t = exp(-p) (:func:`exp_rational`) and
split into branches (:data:`_KERNEL_BRANCHES`): Taylor series at 0 with exact rational
coefficients where the closed form cancels, Taylor series at a zero of the cumulant (80-digit
expansion), and the closed form in t or in expm1(-j p). :func:`builtin_kernels` builds them once
per process; :mod:`derive.codegen_render` prints them. :class:`KernelPrinter` is the strict
printer of the closed forms (``math`` floats or python-flint balls).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath as mp
import sympy as sp
from sympy.codegen.cfunctions import expm1, log1p
from sympy.printing.str import StrPrinter

__all__ = [
    "CLOSED",
    "E_EXPM1",
    "KERNEL_ORDER",
    "P_UNDERFLOW",
    "ROOT",
    "SERIES",
    "TAIL_TOL",
    "T_EXP",
    "Kernel",
    "KernelPiece",
    "KernelPrinter",
    "builtin_kernels",
    "exp_rational",
    "strict_kernel_code",
]

T_EXP = sp.Symbol("t")  # t = exp(-p), p the mechanism's parameter
E_EXPM1 = tuple(sp.Symbol(f"e{j}") for j in range(9))  # e_j = expm1(-j p) (e_0 unused)
_FUNCTIONS = {sp.exp: "exp", expm1: "expm1", sp.log: "log", log1p: "log1p"}  # math. / arb.
TAIL_TOL = 1e-18  # a numeric series branch's truncation, relative to |kappa| at its ends
P_UNDERFLOW = 746.0  # math.exp(-p) == 0.0 for p > 745.14, so past this every t-term is exactly 0
_SERIES_DPS = 80  # digits of the series coefficients' arithmetic (root expansions)
_SERIES_LEN = 160  # coefficients computed before choosing how many to keep
KERNEL_ORDER = 4


class KernelPrinter(StrPrinter):
    r"""Strict printer of closed forms for generated kernels, targeting ``math`` or python-flint.

    Allowed nodes: ``Add``, ``Mul``, ``Pow`` with a nonzero integer exponent, ``Symbol``,
    ``Rational`` (integers included) and the one-argument functions ``exp``, ``log`` (sympy) and
    ``expm1``, ``log1p`` (:mod:`sympy.codegen.cfunctions`). Target ``"math"`` prints them as
    ``math.exp(...)`` etc. and rationals as ``p/q`` (correctly rounded float division); target
    ``"arb"`` prints ``(...).exp()`` etc. on python-flint ``arb`` values and non-integer rationals
    as ``(arb(p)/q)``, so no binary float ever enters a ball (Python evaluates ``1/3`` to a float).
    Anything else -- ``Float``, ``pi``, ``E``, ``sqrt``, ``Abs``, ``Piecewise``, an unevaluated
    ``Integral``, ``besselj`` or any other function -- raises ``TypeError``.
    """

    def __init__(self, target: str = "math") -> None:
        if target not in ("math", "arb"):
            raise ValueError(f"target must be 'math' or 'arb', got {target!r}")
        super().__init__()
        self.target = target

    def doprint(self, expr: sp.Expr) -> str:
        expr = sp.sympify(expr)
        for node in sp.preorder_traversal(expr):
            if isinstance(node, sp.Pow):
                if not (node.exp.is_Integer and node.exp != 0):
                    raise TypeError(f"strict printer: non-integer power in {node}")
            elif isinstance(node, sp.Function):
                if type(node) not in _FUNCTIONS or len(node.args) != 1:
                    raise TypeError(f"strict printer: no {self.target} mapping for "
                                    f"{type(node).__name__} in {node}")
            elif not isinstance(node, sp.Add | sp.Mul | sp.Symbol | sp.Rational):
                raise TypeError(f"strict printer: refusing {type(node).__name__} node {node}")
        return super().doprint(expr)

    def _print_Function(self, expr: sp.Function) -> str:
        name = _FUNCTIONS[type(expr)]
        arg = self._print(expr.args[0])
        return f"math.{name}({arg})" if self.target == "math" else f"({arg}).{name}()"

    _print_exp = _print_log = _print_expm1 = _print_log1p = _print_Function

    def _print_Rational(self, expr: sp.Rational) -> str:
        if expr.q == 1 or self.target == "math":
            return super()._print_Rational(expr)
        return f"(arb({expr.p})/{expr.q})"


def strict_kernel_code(expr: sp.Expr, target: str = "math") -> str:
    """``expr`` as Python source for a generated kernel (:class:`KernelPrinter`).

    Args:
        expr: A closed form built from arithmetic, exp, log, expm1 and log1p.
        target: ``"math"`` (floats) or ``"arb"`` (python-flint balls).

    Raises:
        TypeError: on any node the target cannot evaluate as written (see :class:`KernelPrinter`).
    """
    return KernelPrinter(target).doprint(expr)


@dataclass(frozen=True)
class _Branch:
    """One piece of a numeric kernel, used for ``lower <= p < upper`` (``None``: to 746).

    ``kind`` is ``"series"`` (Taylor series at 0 with exact rational coefficients), ``"root"``
    (Taylor series at the zero of the cumulant inside the branch, coefficients from an 80-digit
    expansion rounded to doubles, the zero split into two doubles so that p - zero is computed to
    full relative precision) or ``"closed"`` (the closed form as a rational function of
    t = exp(-p), ``form="exp"``, or with every t^j replaced by 1 + expm1(-j p) and the constants
    cancelled symbolically, ``form="expm1"``).
    """

    kind: str
    upper: float | None
    form: str = "exp"


# Branch tables (kappa_1..kappa_4 of X per built-in). Thresholds chosen by evaluating every form in
# floats against mpmath (100 working digits, docs/math.md closed forms) on a 6001-point log grid of
# [1e-8, 50] and using each where it is at rounding level. Measured there, per form: Laplace's
# closed forms in t are off by O(1) (kappa_1, kappa_2) to 1e17 (kappa_3, kappa_4) relative for
# mu < 1e-4 and reach rounding level (<= 7e-16) only from mu ~ 1 (kappa_2), 2 (kappa_3) and 3.3
# (kappa_4, which changes sign at mu = 1.673); the expm1 forms fix kappa_1 (<= 3e-16 from
# mu = 0.5) but lose accuracy like mu^3 for large mu; the Taylor series at 0 stays <= 1.3e-15 up
# to mu = 1 (kappa_4) and 2 (kappa_3). Randomized response: the expm1 forms are at rounding level
# for every eps0 except kappa_4 near its zero eps0 = acosh(2), where the root series takes over.
# Resulting kernels (x86-64, glibc libm): max relative error 1.3e-15 (Laplace) and 8.1e-16
# (randomized response) on that grid. The generator picks the number of series terms (dropped
# tail below TAIL_TOL of |kappa| at the branch ends).
SERIES, ROOT, CLOSED = "series", "root", "closed"
_KERNEL_BRANCHES: dict[str, tuple[tuple[_Branch, ...], ...]] = {
    "gaussian": ((_Branch(CLOSED, None),),) * KERNEL_ORDER,
    "laplace": (
        (_Branch(SERIES, 0.5), _Branch(CLOSED, None, "expm1")),
        (_Branch(SERIES, 1.0), _Branch(CLOSED, None)),
        (_Branch(SERIES, 2.0), _Branch(CLOSED, None)),
        (_Branch(SERIES, 1.0), _Branch(ROOT, 3.3), _Branch(CLOSED, None)),
    ),
    "randomized-response": (
        (_Branch(CLOSED, None, "expm1"),),
        (_Branch(CLOSED, None),),
        (_Branch(CLOSED, None, "expm1"),),
        (_Branch(CLOSED, 0.9, "expm1"), _Branch(ROOT, 2.0), _Branch(CLOSED, None)),
    ),
}


def exp_rational(expr: sp.Expr, p: sp.Symbol) -> tuple[sp.Poly, sp.Poly]:
    """Write ``expr`` as N(p, t)/D(p, t) with t = exp(-p) and N, D polynomials over Q.

    Raises:
        ValueError: if ``expr`` has an exponential other than exp(k p) with integer k, another
            function or symbol, or if the rewrite fails to reproduce ``expr`` at 50 digits.
    """

    def to_t(node: sp.Expr) -> sp.Expr:
        k = sp.cancel(node.args[0] / p)
        if not k.is_Integer:
            raise ValueError(f"cannot write {node} as a power of exp(-{p})")
        return T_EXP ** (-k)

    e = sp.expand(expr).replace(lambda n: isinstance(n, sp.exp), to_t)
    if e.free_symbols - {p, T_EXP} or not e.is_rational_function(p, T_EXP):
        raise ValueError(f"not a rational function of {p} and exp(-{p}): {expr}")
    num, den = sp.fraction(sp.cancel(sp.together(e)))
    N, D = sp.Poly(num, p, T_EXP, domain="QQ"), sp.Poly(den, p, T_EXP, domain="QQ")
    if D.LC() < 0:
        N, D = -N, -D
    back = N.as_expr() / D.as_expr()
    for v in ("3/10", "17/10", "21/5"):
        pv = sp.Rational(v)
        want = sp.N(expr.subs(p, pv), 50)
        got = sp.N(back.subs({p: pv, T_EXP: sp.exp(-pv)}), 50)
        if abs(got - want) > sp.Float("1e-40", 50) * (1 + abs(want)):
            raise ValueError(f"rewrite of {expr} in t = exp(-{p}) fails at {p} = {v}")
    return N, D


def _form(poly: sp.Poly, p: sp.Symbol, form: str) -> sp.Expr:
    """``poly`` in (p, t) as a product of its irreducible factors over Q, each printed for floats.

    Monomial factors (powers of p and t) are kept. Form ``"exp"``: every other factor in Horner
    form in t (coefficients in Horner form in p). Form ``"expm1"``: every t^j in the other
    factors replaced by 1 + e_j, e_j = expm1(-j p), and the constants cancelled (expanded).
    """
    if form not in ("exp", "expm1"):
        raise ValueError(f"unknown closed form {form!r}")
    coeff, factors = sp.factor_list(poly.as_expr(), p, T_EXP)
    out = [sp.Rational(coeff)] if coeff != 1 else []
    for fac, mult in factors:
        fp = sp.Poly(fac, p, T_EXP)
        if len(fp.terms()) == 1:
            printed = fac
        elif form == "exp":
            printed = sp.horner(fac, T_EXP, p)
        else:
            printed = sp.Integer(0)
            for (i, j), c in fp.terms():
                printed += c * p**i * (1 + E_EXPM1[j] if j else 1)
            printed = sp.expand(printed)
        out.append(printed**mult)
    # unevaluated, so that sympy does not distribute the content over a sum
    return sp.Mul(*out, evaluate=False) if len(out) > 1 else (out[0] if out else sp.Integer(1))


def _poly_series(terms: list, center, n: int) -> list:
    """First ``n`` Taylor coefficients at ``center`` of sum c p^i exp(-j p), ``terms`` = [((i, j),
    c)]: exact (Fraction) when ``center == 0``, else mpmath at the current precision."""
    exact = center == 0
    out = [Fraction(0) if exact else mp.mpf(0)] * n
    for (i, j), c in terms:
        coef = Fraction(int(c.p), int(c.q)) if exact else mp.mpf(int(c.p)) / int(c.q)
        if exact:  # p^i
            a = {i: Fraction(1)} if i < n else {}
            b = [Fraction((-j) ** m, math.factorial(m)) for m in range(n)]
        else:  # (center + d)^i and exp(-j center) exp(-j d)
            a = {k: math.comb(i, k) * center ** (i - k) for k in range(min(i, n - 1) + 1)}
            scale = mp.exp(-j * center)
            b = [scale * mp.mpf(-j) ** m / math.factorial(m) for m in range(n)]
        for k, ak in a.items():
            for m in range(n - k):
                out[k + m] += coef * ak * b[m]
    return out


def _series(N: sp.Poly, D: sp.Poly, center, n: int) -> list:
    """First ``n`` Taylor coefficients of N/D at ``center`` (series division)."""
    a = _poly_series(N.terms(), center, n)
    b = _poly_series(D.terms(), center, n)
    if b[0] == 0:
        raise ValueError("the denominator vanishes at the expansion point")
    nz = [i for i in range(1, n) if b[i] != 0]
    q: list = []
    for k in range(n):
        q.append((a[k] - sum(b[i] * q[k - i] for i in nz if i <= k)) / b[0])
    return q


def _terms_needed(coeffs: list, ends: list) -> int:
    """Fewest leading ``coeffs`` whose dropped tail is below TAIL_TOL relative at every
    ``(radius, |value|)`` in ``ends``."""
    for n in range(1, len(coeffs) - 20):
        if all(sum(abs(c) * mp.mpf(r) ** k for k, c in enumerate(coeffs[n:], start=n))
               <= TAIL_TOL * abs(v) for r, v in ends):
            return n
    raise ValueError("a series branch needs more terms than computed; lower its threshold")


@dataclass(frozen=True)
class KernelPiece:
    """A branch ready to print: its range and what its code needs."""

    kind: str
    lower: float
    upper: float | None
    coeffs: tuple = ()  # series: kappa = p**shift * sum_k coeffs[k] p**k; root: d * sum c_k d^k
    shift: int = 0
    root: tuple = ()  # (zero as an mpf, hi, lo) with hi + lo the zero to ~1e-32
    expr: sp.Expr | None = None  # closed: in p and t, or p and e_j
    form: str = ""


@dataclass(frozen=True)
class Kernel:
    """One cumulant of one built-in: its closed form, t-rational form and numeric pieces."""

    mechanism: str
    order: int
    param: sp.Symbol
    closed: sp.Expr  # derive's closed form
    num: sp.Poly  # closed == num/den at t = exp(-p)
    den: sp.Poly
    pieces: tuple[KernelPiece, ...]

    @property
    def exp_form(self) -> sp.Expr:
        return _form(self.num, self.param, "exp") / _form(self.den, self.param, "exp")

    @property
    def expm1_form(self) -> sp.Expr:
        return _form(self.num, self.param, "expm1") / _form(self.den, self.param, "expm1")

    @property
    def limit(self) -> sp.Expr:
        """The closed form at t = 0 (its value in floats once exp(-p) underflows)."""
        num, den = self.num.as_expr().subs(T_EXP, 0), self.den.as_expr().subs(T_EXP, 0)
        return sp.factor(num) / sp.factor(den)


def _kernel(mechanism: str, order: int, p: sp.Symbol, kappa: sp.Expr,
            branches: tuple[_Branch, ...]) -> Kernel:
    N, D = exp_rational(kappa, p)
    fn = sp.lambdify((p, T_EXP), N.as_expr() / D.as_expr(), "mpmath")
    pieces = []
    lower = 0.0
    with mp.workdps(_SERIES_DPS):

        def f(x):
            x = mp.mpf(x)
            return fn(x, mp.exp(-x))

        for i, br in enumerate(branches):
            if br.kind == "series":
                if i:
                    raise ValueError(f"{mechanism} kappa_{order}: a series at 0 must come first")
                a = _series(N, D, 0, _SERIES_LEN)
                shift = next(k for k, c in enumerate(a) if c != 0)
                rest = a[shift:]
                up = mp.mpf(br.upper)
                n = _terms_needed([mp.mpf(c.numerator) / c.denominator for c in rest],
                                  [(up, f(up) / up**shift)])
                pieces.append(KernelPiece(SERIES, lower, br.upper, tuple(rest[:n]), shift))
            elif br.kind == "root":
                lo, up = mp.mpf(lower), mp.mpf(br.upper)
                r = mp.findroot(f, (lo, up), solver="anderson")
                if not (lo < r < up and 2 * lo >= r and up <= 2 * r):
                    # p - hi is exact (Sterbenz) only for p in [hi/2, 2 hi]
                    raise ValueError(f"{mechanism} kappa_{order}: root branch [{lower}, "
                                     f"{br.upper}] must lie in [r/2, 2r], r = {r}")
                c = _series(N, D, r, _SERIES_LEN)
                if abs(c[0]) > mp.mpf(10) ** (20 - _SERIES_DPS):
                    raise ValueError(f"{mechanism} kappa_{order} does not vanish at {r}")
                c = c[1:]  # kappa = d * sum_k c[k] d^k with d = p - r
                n = _terms_needed(c, [(r - lo, f(lo) / (r - lo)), (up - r, f(up) / (up - r))])
                hi = float(r)
                pieces.append(KernelPiece(ROOT, lower, br.upper, tuple(c[:n]),
                                     root=(r, hi, float(r - hi))))
            elif br.kind == "closed":
                expr = _form(N, p, br.form) / _form(D, p, br.form)
                pieces.append(KernelPiece(CLOSED, lower, br.upper, expr=expr, form=br.form))
            else:
                raise ValueError(f"unknown branch kind {br.kind!r}")
            lower = br.upper if br.upper is not None else P_UNDERFLOW
    return Kernel(mechanism, order, p, kappa, N, D, tuple(pieces))


_KERNEL_CACHE: dict[str, tuple[Kernel, ...]] = {}


def builtin_kernels() -> dict[str, tuple[Kernel, ...]]:
    """The kernels of every built-in (derived once per process)."""
    from .builtins import BUILTINS

    for name, table in _KERNEL_BRANCHES.items():
        if name not in _KERNEL_CACHE:
            spec = BUILTINS[name]
            (param,) = spec.params
            kx, _ = spec.derive(KERNEL_ORDER, strategy="symbolic").require_closed_form()
            _KERNEL_CACHE[name] = tuple(
                _kernel(name, k, param.symbol, kappa, table[k - 1])
                for k, kappa in enumerate(kx, start=1)
            )
    return {name: _KERNEL_CACHE[name] for name in _KERNEL_BRANCHES}
