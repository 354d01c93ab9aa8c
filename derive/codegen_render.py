r"""Renderers of the generated cumulant kernels (numeric floats and certify Arb balls).

:func:`render_builtin_cumulants` writes ``numeric/_generated/builtin_cumulants.py`` (the
branches of :mod:`derive.codegen_kernels` as float code: Horner series, root series, closed
forms); :func:`render_builtin_cumulants_arb` writes ``certify/_generated/builtin_cumulants_arb.py``
(closed forms only, evaluated in two forms and intersected, so every ball is rigorous).
"""

from __future__ import annotations

import textwrap

import mpmath as mp
import sympy as sp
from sympy.codegen.cfunctions import expm1

from .codegen_kernels import (
    E_EXPM1,
    KERNEL_ORDER,
    P_UNDERFLOW,
    ROOT,
    SERIES,
    T_EXP,
    TAIL_TOL,
    Kernel,
    KernelPiece,
    KernelPrinter,
    builtin_kernels,
)
from .codegen_text import INDENT, LINE_LENGTH, all_list, assign_lines, header

__all__ = ["render_builtin_cumulants", "render_builtin_cumulants_arb"]


def _ident(name: str) -> str:
    return name.replace("-", "_")


def _float(x) -> str:
    return repr(float(x))


def _tuple_lines(name: str, items: list[str], comment: str) -> list[str]:
    notes = textwrap.wrap(comment, width=LINE_LENGTH - 2, break_on_hyphens=False)
    return [*(f"# {n}" for n in notes), f"{name} = (", *(f"{INDENT}{s}," for s in items), ")"]


def _fmt_threshold(x: float) -> str:
    return f"{x:g}"


def _describe(piece: KernelPiece, p: str) -> str:
    if piece.kind == SERIES:
        n = len(piece.coeffs)
        what = (f"{p}**{piece.shift} * (Taylor series at 0, {n} terms)" if piece.shift
                else f"Taylor series at 0, {n} terms")
    elif piece.kind == ROOT:
        what = (f"Taylor series at the zero {p} = {mp.nstr(piece.root[0], 17)}, "
                f"{len(piece.coeffs)} terms")
    elif piece.expr.has(T_EXP, *E_EXPM1):
        what = ("closed form in expm1(-j*{p})" if piece.form == "expm1"
                else "closed form in t = exp(-{p})").format(p=p)
    else:
        return "closed form"
    if piece.lower == 0:
        return f"{p} < {_fmt_threshold(piece.upper or P_UNDERFLOW)}: {what}"
    upper = _fmt_threshold(piece.upper or P_UNDERFLOW)
    return f"{_fmt_threshold(piece.lower)} <= {p} < {upper}: {what}"


def _render_numeric_kernel(kern: Kernel) -> tuple[list[str], list[str]]:
    """(module-level constants, function lines) of ``_<mechanism>_kappa_<k>(p)``."""
    p = str(kern.param)
    base = f"_{_ident(kern.mechanism).upper()}_KAPPA_{kern.order}"
    printer = KernelPrinter("math")
    consts: list[str] = []
    body: list[str] = []
    doc = [_describe(pc, p) for pc in kern.pieces]
    ind = 2 * INDENT
    for piece in kern.pieces:
        upper = piece.upper if piece.upper is not None else P_UNDERFLOW
        cond = f"{INDENT}if {p} < {_float(upper)}:"
        if piece.kind == SERIES:
            name = f"{base}_SERIES"
            coeffs = [printer.doprint(sp.Rational(c.numerator, c.denominator))
                      for c in piece.coeffs]
            lead = f"{p}**{piece.shift} * " if piece.shift else ""
            note = (f"{p} < {_fmt_threshold(piece.upper)}: kappa = {lead}sum_k c_k {p}**k, "
                    f"k = 0..{len(coeffs) - 1} (exact rationals)")
            consts += [*_tuple_lines(name, coeffs, note), ""]
            body += [cond, f"{ind}return {lead}_horner({name}, {p})"]
        elif piece.kind == ROOT:
            name = f"{base}_ROOT"
            _, hi, lo = piece.root
            note = (f"{_fmt_threshold(piece.lower)} <= {p} < {_fmt_threshold(piece.upper)}: "
                    f"kappa = d * sum_k c_k d**k, k = 0..{len(piece.coeffs) - 1}, "
                    f"d = {p} - {mp.nstr(piece.root[0], 25)}")
            consts += [*_tuple_lines(name, [_float(c) for c in piece.coeffs], note), ""]
            sign = "-" if lo >= 0 else "+"
            body += [cond, f"{ind}d = ({p} - {_float(hi)}) {sign} {_float(abs(lo))}",
                     f"{ind}return d * _horner({name}, d)"]
        else:
            expr = piece.expr
            uses = sorted((s for s in expr.free_symbols if s != kern.param), key=str)
            guarded = piece.upper is not None or bool(uses)
            here = ind if guarded else INDENT
            lines = []
            for s in uses:
                j = 1 if s == T_EXP else E_EXPM1.index(s)
                fexp = sp.exp(-j * kern.param) if s == T_EXP else expm1(-j * kern.param)
                lines += assign_lines(str(s), printer.doprint(fexp), here)
            src = _float(expr) if expr.is_Number else printer.doprint(expr)
            lines += [f"{here}return {src}"] if len(f"{here}return {src}") <= LINE_LENGTH else [
                *assign_lines("kappa", src, here), f"{here}return kappa"]
            body += [cond, *lines] if guarded else lines
            if piece.upper is None and uses:
                lim = kern.limit
                src = _float(lim) if lim.is_Number else printer.doprint(lim)
                body.append(f"{INDENT}return {src}  # exp(-{p}) == 0.0 in floats")
                doc.append(f"{p} >= {_fmt_threshold(P_UNDERFLOW)}: the closed form's limit at "
                           f"exp(-{p}) = 0")
    if kern.pieces[-1].upper is not None:
        raise ValueError(f"{kern.mechanism} kappa_{kern.order}: the last branch must be open")
    fn = [f"def _{_ident(kern.mechanism)}_kappa_{kern.order}({p}: float) -> float:"]
    if len(doc) == 1:
        fn.append(f'{INDENT}"""kappa_{kern.order}(X) for the {kern.mechanism} built-in: '
                  f'{doc[0]}."""')
    else:
        fn += [f'{INDENT}"""kappa_{kern.order}(X) for the {kern.mechanism} built-in, by branch:',
               "", *(f"{INDENT}* {d}" for d in doc), f'{INDENT}"""']
    return consts, fn + body


def _horner_source() -> list[str]:
    return [
        "def _horner(coeffs: tuple[float, ...], x: float) -> float:",
        f'{INDENT}"""sum_k coeffs[k] x**k in Horner form."""',
        f"{INDENT}acc = 0.0",
        f"{INDENT}for c in reversed(coeffs):",
        f"{2 * INDENT}acc = acc * x + c",
        f"{INDENT}return acc",
    ]


def _public_name(mechanism: str) -> str:
    return f"{_ident(mechanism)}_cumulants_x"


def render_builtin_cumulants() -> str:
    r"""The exact text of ``numeric/_generated/builtin_cumulants.py``.

    For each built-in (Gaussian, Laplace, randomized response) a function
    ``<name>_cumulants_x(p)`` returns kappa_1..kappa_4 of X (the PLLR under P) as floats, from
    derive's closed forms (:meth:`derive.mechanism.MechanismSpec.derive`) rewritten for floats:
    Taylor series at 0 where the closed form cancels, Taylor series at a zero of the cumulant
    around it, and elsewhere the closed form in t = exp(-p) or in expm1(-j p) (see
    ``_KERNEL_BRANCHES``). The module also defines ``KERNELS = {name: (parameter, fn)}``.
    """
    kernels = builtin_kernels()
    names = ["KERNELS", "MAX_ORDER", "SYMPY_VERSION"] + [_public_name(m) for m in kernels]
    doc = f'''"""Cumulants kappa_1..kappa_4 of the built-ins' PLLR (generated, sympy-free).

Each ``<name>_cumulants_x(p)`` returns kappa_1..kappa_4 of X = L under P as floats for the
built-in's parameter p > 0 (not validated here; the numeric mechanisms validate): mu for the
Gaussian and Laplace mechanisms (sensitivity / noise scale), eps0 for randomized response. The
pairs are symmetric, so kappa_k(Y) = (-1)^k kappa_k(X). derive derives the closed forms from the
densities (docs/math.md section 4); the generator writes each as a rational function N(p, t)/D(p, t)
of p and t = exp(-p) and evaluates it by branches, listed in each kernel's docstring:

* a Taylor series at 0 (exact rational coefficients, Horner form) where the closed form cancels,
  e.g. Laplace kappa_2 = 3 - 4 mu e^-mu - 2 e^-mu - e^-2mu = mu^2 - mu^3/3 - mu^4/12 + ...;
* a Taylor series at a zero of the cumulant (where it changes sign, e.g. Laplace kappa_4 at
  mu = 1.673...), in d = p - zero with the zero split into two doubles, so kappa keeps full
  relative precision as it crosses 0;
* the closed form in t (factored, Horner form) or with each t^j = 1 + expm1(-j p) and the
  constants cancelled symbolically ("expm1"); for p >= 746 exp(-p) underflows to 0 and the closed
  form's t = 0 limit is returned (no 0 * inf).

Thresholds: chosen by measuring each form in floats against mpmath (100 working digits) on a
6001-point log grid of [1e-8, 50]. Series lengths: the fewest terms whose dropped tail is below
{TAIL_TOL:g} of |kappa| at the branch ends (80-digit arithmetic). Accuracy target: relative error
<= 1e-14 for every p in [1e-8, 50] against the docs/math.md closed forms evaluated to 50 digits
(tests/test_codegen_cumulants.py).
"""'''
    parts = [
        header("render_builtin_cumulants") + doc,
        "",
        "from __future__ import annotations",
        "",
        "import math",
        "from collections.abc import Callable",
        "",
        all_list(names),
        "",
        f'SYMPY_VERSION = "{sp.__version__}"',
        f"MAX_ORDER = {KERNEL_ORDER}",
        "",
        "",
        *_horner_source(),
    ]
    for mech, kerns in kernels.items():
        p = str(kerns[0].param)
        consts: list[str] = []
        fns: list[str] = []
        for kern in kerns:
            c, f = _render_numeric_kernel(kern)
            consts += c
            fns += ["", "", *f]
        if consts:
            parts += ["", "", *consts[:-1]]
        parts += fns
        ret = ", ".join(f"_{_ident(mech)}_kappa_{k.order}({p})" for k in kerns)
        parts += [
            "",
            "",
            f"def {_public_name(mech)}({p}: float) -> tuple[float, float, float, float]:",
            f'{INDENT}"""kappa_1..kappa_4 of X for the {mech} built-in at {p} > 0."""',
            f"{INDENT}return (",
            *(f"{2 * INDENT}{s.strip()}," for s in ret.split(",")),
            f"{INDENT})",
        ]
    parts += [
        "",
        "",
        "KERNELS: dict[str, tuple[str, Callable[[float], tuple[float, float, float, float]]]] = {",
        *(f'{INDENT}"{m}": ("{ks[0].param}", {_public_name(m)}),' for m, ks in kernels.items()),
        "}",
    ]
    return "\n".join(parts) + "\n"


def _arb_value(expr: sp.Expr, printer: KernelPrinter) -> str:
    if expr.is_Number:
        return f"arb({expr.p})" if expr.q == 1 else f"(arb({expr.p})/{expr.q})"
    return printer.doprint(expr)


def render_builtin_cumulants_arb() -> str:
    r"""The exact text of ``certify/_generated/builtin_cumulants_arb.py``.

    The same closed forms as :func:`render_builtin_cumulants` for python-flint ``arb`` balls,
    through :class:`KernelPrinter` (``target="arb"``): closed forms only, no truncated series.
    Each cumulant is evaluated in its t = exp(-p) form and in its expm1 form and the two
    enclosures are intersected (each contains the exact value; the first is narrow for large p,
    the second for small p).
    """
    kernels = builtin_kernels()
    printer = KernelPrinter("arb")
    names = ["KERNELS", "MAX_ORDER", "SYMPY_VERSION"] + [_public_name(m) for m in kernels]
    doc = '''"""Arb balls for kappa_1..kappa_4 of the built-ins' PLLR (generated, sympy-free).

Each ``<name>_cumulants_x(p)`` returns python-flint ``arb`` balls containing kappa_1..kappa_4 of
X = L under P for the built-in's parameter p (anything ``arb()`` accepts; a float is taken
exactly, a ball is propagated): mu for the Gaussian and Laplace mechanisms, eps0 for randomized
response. The pairs are symmetric: kappa_k(Y) = (-1)^k kappa_k(X). The working precision is
python-flint's ``ctx.prec``.

Only closed forms are evaluated (no truncated series, so every ball is rigorous): derive's closed
form (docs/math.md section 4) as a rational function of p and t = exp(-p), and the same with each
t^j = 1 + expm1(-j p) and the constants cancelled symbolically; the two balls are intersected
(the first is the narrow one for large p, the second for small p). Cancellation still widens the
balls for small p (Laplace kappa_4 ~ -2 mu^4 loses about 3 log2(1/mu) bits): raise ``ctx.prec``
when a narrower ball is needed.
"""'''
    parts = [
        header("render_builtin_cumulants_arb") + doc,
        "",
        "from __future__ import annotations",
        "",
        "from collections.abc import Callable",
        "",
        "from flint import arb",
        "",
        all_list(names),
        "",
        f'SYMPY_VERSION = "{sp.__version__}"',
        f"MAX_ORDER = {KERNEL_ORDER}",
    ]
    for mech, kerns in kernels.items():
        param = kerns[0].param
        p = str(param)
        forms = []
        for kern in kerns:
            a, b = kern.exp_form, kern.expm1_form
            forms.append((a,) if a == b else (a, b))
        uses = set().union(*(f.free_symbols for fs in forms for f in fs)) - {param}
        lines = [
            "",
            "",
            f"def {_public_name(mech)}({p}: object) -> tuple[arb, arb, arb, arb]:",
            f'{INDENT}"""Balls containing kappa_1..kappa_4 of X, {mech} built-in, at {p}."""',
            f"{INDENT}{p} = arb({p})",
        ]
        for s in sorted(uses, key=str):
            j = 1 if s == T_EXP else E_EXPM1.index(s)
            fexp = sp.exp(-j * param) if s == T_EXP else expm1(-j * param)
            lines += assign_lines(str(s), printer.doprint(fexp), INDENT)
        for kern, fs in zip(kerns, forms, strict=True):
            name = f"kappa_{kern.order}"
            if len(fs) == 1:
                lines += assign_lines(name, _arb_value(fs[0], printer), INDENT)
            else:
                lines += assign_lines(f"{name}_exp", _arb_value(fs[0], printer), INDENT)
                lines += assign_lines(f"{name}_expm1", _arb_value(fs[1], printer), INDENT)
                lines.append(f"{INDENT}{name} = {name}_exp.intersection({name}_expm1)")
        lines.append(f"{INDENT}return (" + ", ".join(
            f"kappa_{k.order}" for k in kerns) + ")")
        parts += lines
    parts += [
        "",
        "",
        "KERNELS: dict[str, tuple[str, Callable[[object], tuple[arb, arb, arb, arb]]]] = {",
        *(f'{INDENT}"{m}": ("{ks[0].param}", {_public_name(m)}),' for m, ks in kernels.items()),
        "}",
    ]
    return "\n".join(parts) + "\n"
