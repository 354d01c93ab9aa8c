r"""Segmentation of a mechanism spec: the pieces of the support, the PLLR on each, refusals.

The support is split at the declared breakpoints and at the points where an ``Abs``, ``sign``,
``Heaviside``, ``Max``/``Min`` argument or a ``Piecewise`` condition changes sign (found with
``sympy.solve``). On each segment these are resolved to smooth branches, so sympy never integrates
``Abs``. A segment where exactly one density vanishes would give L = +-infinity there; such pairs
are **refused** with a ``ValueError`` (atoms at +-infinity are not implemented). Segments where
both vanish are dropped. On each segment the PLLR L = log(q/p) (docs/math.md section 1; Wang, Gao,
Zhang, Shen, Su, arXiv:2206.04236) is the cheapest candidate form that reproduces q = p e^L at
probe points to 25 digits.

The checks run at parameter samples: the reference point and the low and high corners of the
typical ranges (:meth:`derive.parameters.Parameter.samples`). :func:`analysis` caches the result
per spec; :func:`clear_analyses` forgets it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp

from .parameters import Parameter
from .results import Segment, SpecLike
from .timelimit import SIMPLIFY_TIMEOUT, TimeLimitExceeded, simplify_within, time_limit

__all__ = ["SpecAnalysis", "analysis", "clear_analyses", "format_values", "has_float"]

_KINKS = (sp.Abs, sp.sign, sp.Heaviside, sp.Max, sp.Min, sp.Piecewise)


@dataclass
class SpecAnalysis:
    """The segmentation of a spec, in internal symbols (with sympy assumptions).

    Attributes:
        x: The variable (None for a discrete spec).
        param_syms: Internal parameter symbols, in declaration order.
        segments: The pieces of the support (or the outcomes kept).
        samples: Parameter samples as ``{internal symbol: sympy Float}``.
        p_orig: The density p in internal symbols, unsplit (None for a discrete spec).
        q_orig: Likewise for q.
        gaussian: Whether X is exactly normal (L affine, log p quadratic on the whole line).
        lattice: Whether the PLLR law has atoms.
    """

    x: sp.Symbol | None
    param_syms: tuple[sp.Symbol, ...]
    segments: tuple[Segment, ...]
    samples: tuple[dict, ...]  # parameter samples as {internal symbol: sympy Float}
    p_orig: sp.Expr | None
    q_orig: sp.Expr | None
    gaussian: bool
    lattice: bool


_ANALYSES: dict[SpecLike, SpecAnalysis] = {}


def clear_analyses() -> None:
    """Forget every cached analysis."""
    _ANALYSES.clear()


def analysis(spec: SpecLike) -> SpecAnalysis:
    """The (cached) segmentation of ``spec``.

    Raises:
        ValueError: on bad densities (negative, not real, an infinite PLLR, breakpoints whose order
            depends on the parameters, ...), naming what failed.
    """
    an = _ANALYSES.get(spec)
    if an is None:
        an = _analyze_continuous(spec) if spec.kind == "continuous" else _analyze_discrete(spec)
        _ANALYSES[spec] = an
    return an


def format_values(vals: dict) -> str:
    """Parameter values by name as ``"mu=1.5, w=0.1"`` (for messages)."""
    return ", ".join(f"{k}={v:.6g}" for k, v in vals.items()) or "(no parameters)"


def _samples(params: tuple[Parameter, ...], syms: tuple[sp.Symbol, ...]) -> tuple[dict, ...]:
    """Reference point, then all-low and all-high typical corners (distinct points)."""
    pts = [{s: prm.reference for prm, s in zip(params, syms, strict=True)}]
    for j in (0, 1):
        pt = {}
        for prm, s in zip(params, syms, strict=True):
            pt[s] = prm.typical[j] if prm.typical else prm.reference
        if pt not in pts:
            pts.append(pt)
    return tuple({s: sp.Float(v, 40) for s, v in pt.items()} for pt in pts)


def _num(expr: sp.Expr, subs: dict) -> sp.Expr:
    return sp.N(expr.xreplace(subs), 40)


def _real_value(expr: sp.Expr, subs: dict, what: str) -> float:
    v = _num(expr, subs)
    if v in (sp.oo, -sp.oo):
        return float(v)
    if v.is_real is False or not v.is_number:
        raise ValueError(f"{what} is not a real number at {_fmt(subs)}: {v}")
    try:
        return float(v)
    except TypeError:
        raise ValueError(f"{what} is not a real number at {_fmt(subs)}: {v}") from None


def _fmt(subs: dict) -> str:
    return ", ".join(f"{k}={float(v):.6g}" for k, v in subs.items()) or "(no parameters)"


def has_float(spec: SpecLike) -> bool:
    """Whether the densities contain floating-point constants (for messages)."""
    exprs = [spec.p, spec.q] if spec.kind == "continuous" else [*spec.p, *spec.q]
    return any(e.has(sp.Float) for e in exprs)


def _exact(expr: sp.Expr) -> sp.Expr:
    """Replace floating-point constants by the rationals they print as (1.5 -> 3/2), so that
    high-precision evaluation sees exact numbers rather than 53-bit approximations."""
    if not expr.has(sp.Float):
        return expr
    return expr.xreplace({f: sp.Rational(str(f)) for f in expr.atoms(sp.Float)})


def _kink_arguments(expr: sp.Expr) -> list[sp.Expr]:
    out = []
    for node in sp.preorder_traversal(expr):
        if isinstance(node, (sp.Abs, sp.sign, sp.Heaviside)):
            out.append(node.args[0])
        elif isinstance(node, (sp.Max, sp.Min)):
            a = node.args
            out.extend(a[i] - a[j] for i in range(len(a)) for j in range(i + 1, len(a)))
        elif isinstance(node, sp.Piecewise):
            for _, cond in node.args:
                for rel in sp.preorder_traversal(cond):
                    if isinstance(rel, sp.core.relational.Relational):
                        out.append(rel.lhs - rel.rhs)
    return out


def _probes(lo: float, hi: float) -> list[float]:
    if math.isinf(lo) and math.isinf(hi):
        return [-7.3, -1.3, 0.29, 2.1, 8.7]
    if math.isinf(lo):
        return [hi - d for d in (0.37, 1.7, 9.3)]
    if math.isinf(hi):
        return [lo + d for d in (0.37, 1.7, 9.3)]
    return [lo + f * (hi - lo) for f in (0.13, 0.5, 0.87)]


def _resolve(expr: sp.Expr, x: sp.Symbol, probes: list[dict], where: str) -> sp.Expr:
    """Replace kinks (Abs, sign, Heaviside, Max, Min, Piecewise) by the branch valid on a segment.

    ``probes`` are substitution dicts (x and parameters) at points inside the segment for several
    parameter samples; each kink must resolve the same way at all of them.
    """

    def sign_of(arg: sp.Expr) -> int:
        signs = {int(sp.sign(_num(arg, pr))) for pr in probes}
        if len(signs) != 1:
            raise ValueError(
                f"{arg} changes sign inside {where}; declare the point where it vanishes in "
                "breakpoints=(...)"
            )
        return signs.pop()

    def fix(node: sp.Expr) -> sp.Expr:
        if isinstance(node, sp.Abs):
            return node.args[0] if sign_of(node.args[0]) >= 0 else -node.args[0]
        if isinstance(node, sp.sign):
            return sp.Integer(sign_of(node.args[0]))
        if isinstance(node, sp.Heaviside):
            s = sign_of(node.args[0])
            if s == 0:
                raise ValueError(f"Heaviside argument {node.args[0]} vanishes on {where}")
            return sp.Integer(1 if s > 0 else 0)
        if isinstance(node, (sp.Max, sp.Min)):
            args = list(node.args)
            best = args[0]
            for a in args[1:]:
                s = sign_of(a - best)
                if (s > 0) == isinstance(node, sp.Max) and s != 0:
                    best = a
            return best
        if isinstance(node, sp.Piecewise):
            for val, cond in node.args:
                truth = set()
                for pr in probes:
                    c = cond.xreplace(pr)
                    if c not in (sp.true, sp.false):
                        c = c.simplify()
                    if c not in (sp.true, sp.false):
                        raise ValueError(f"cannot decide the Piecewise condition {cond} on {where}")
                    truth.add(c == sp.true)
                if len(truth) != 1:
                    raise ValueError(
                        f"the Piecewise condition {cond} changes truth value inside {where}; "
                        "declare its boundary in breakpoints=(...)"
                    )
                if truth.pop():
                    return val
            raise ValueError(f"no Piecewise branch applies on {where}")
        return node

    prev = None
    cur = expr
    while prev != cur and cur.has(*_KINKS):
        prev = cur
        cur = cur.replace(lambda e: isinstance(e, _KINKS), fix)
    return cur


def _pllr_candidates(p: sp.Expr, q: sp.Expr):
    """Candidate forms of log(q/p), cheapest to compute first."""
    raw = sp.log(q) - sp.log(p)
    try:
        with time_limit(SIMPLIFY_TIMEOUT):
            forced = sp.expand_log(raw, force=True)
            expanded = sp.expand(forced)
        yield [forced, expanded]
    except TimeLimitExceeded:
        pass
    except Exception:  # expand_log can fail on unusual expressions; try the next forms
        pass
    yield [raw]
    yield [simplify_within(sp.log(simplify_within(q / p)))]


def _pllr_ok(L: sp.Expr, p: sp.Expr, q: sp.Expr, probes: list[dict]) -> bool:
    for pr in probes:
        Lv = _num(L, pr)
        if not (Lv.is_number and Lv.is_real):
            return False
        lhs = _num(p * sp.exp(L), pr)
        rhs = _num(q, pr)
        if abs(lhs - rhs) > sp.Float("1e-25", 40) * (abs(rhs) + sp.Float("1e-300", 40)):
            return False
    return True


def _choose_pllr(p: sp.Expr, q: sp.Expr, probes: list[dict], where: str) -> sp.Expr:
    for group in _pllr_candidates(p, q):
        good = [L for L in group if _pllr_ok(L, p, q, probes)]
        if good:
            return min(good, key=sp.count_ops)
    raise ValueError(f"could not form a real PLLR log(q/p) on {where}")


def _classify(expr: sp.Expr, probes: list[dict], what: str, where: str) -> str:
    """'zero' if the density vanishes on the segment, 'positive' if positive, else raise."""
    if expr == 0:
        return "zero"
    vals = [_num(expr, pr) for pr in probes]
    for v, pr in zip(vals, probes, strict=True):
        if not (v.is_number and v.is_real):
            raise ValueError(f"{what} is not real at {_fmt(pr)} ({where}): {v}")
        if v < 0:
            raise ValueError(f"{what} is negative at {_fmt(pr)} ({where}): {float(v):.6g}")
    zeros = [v == 0 for v in vals]
    if all(zeros):
        return "zero"
    if any(zeros):
        pr = probes[zeros.index(True)]
        raise ValueError(
            f"{what} vanishes at {_fmt(pr)} inside {where} but not elsewhere there; declare "
            "the end of its support in breakpoints=(...)"
        )
    return "positive"


def _infinite_pllr(spec, who: str, other: str, where: str) -> ValueError:
    sign = "-inf" if who == "q" else "+inf"
    return ValueError(
        f"{spec.name}: {who} vanishes on {where} where {other} > 0, so the PLLR log(q/p) is "
        f"{sign} there (an atom of the privacy loss at {sign}); pairs with infinite privacy "
        "loss are not supported by derive (no atoms at +-infinity). Give both densities the "
        "same support, or account for the mass at infinity separately as an ApproxDP delta."
    )


def _analyze_continuous(spec: SpecLike) -> SpecAnalysis:
    x = sp.Symbol(spec.x.name, real=True)
    syms = tuple(prm.internal_symbol() for prm in spec.params)
    rep = {spec.x: x, **{prm.symbol: s for prm, s in zip(spec.params, syms, strict=True)}}
    p = _exact(spec.p.xreplace(rep))
    q = _exact(spec.q.xreplace(rep))
    lo, hi = (_exact(d.xreplace(rep)) for d in spec.domain)
    samples = _samples(spec.params, syms)

    # Candidate breakpoints: declared ones plus the zeros of kink arguments.
    cands = [_exact(b.xreplace(rep)) for b in spec.breakpoints]
    for arg in _kink_arguments(p) + _kink_arguments(q):
        if not arg.has(x):
            continue
        try:
            with time_limit(SIMPLIFY_TIMEOUT):
                sols = sp.solve(arg, x)
        except (TimeLimitExceeded, NotImplementedError, Exception):
            continue  # missed kinks are caught by the per-segment sign checks
        for s in sols:
            if not s.has(x) and s.is_real is not False:
                cands.append(s)
    # Keep the distinct ones strictly inside the domain at every sample, ordered consistently.
    vals_lo = [_real_value(lo, s, "domain lower end") for s in samples]
    vals_hi = [_real_value(hi, s, "domain upper end") for s in samples]
    if any(not a < b for a, b in zip(vals_lo, vals_hi, strict=True)):
        raise ValueError(f"{spec.name}: domain {spec.domain} is empty at some parameter sample")
    kept: list[tuple[sp.Expr, list[float]]] = []
    for c in cands:
        try:
            v = [_real_value(c, s, f"breakpoint {c}") for s in samples]
        except ValueError:
            continue  # complex root of a kink argument: not a breakpoint
        inside = [a < w < b for a, w, b in zip(vals_lo, v, vals_hi, strict=True)]
        if not any(inside):
            continue
        if not all(inside):
            raise ValueError(
                f"{spec.name}: breakpoint {c} lies inside the domain for some parameter samples "
                "and outside for others; narrow the typical ranges or split the mechanism"
            )
        if any(all(abs(a - b) <= 1e-12 * (1 + abs(a)) for a, b in zip(v, w, strict=True))
               for _, w in kept):
            continue
        kept.append((c, v))
    kept.sort(key=lambda t: t[1][0])
    for j in range(1, len(samples)):
        order_j = sorted(range(len(kept)), key=lambda i, j=j: kept[i][1][j])
        if order_j != list(range(len(kept))):
            raise ValueError(
                f"{spec.name}: the order of the breakpoints {[str(c) for c, _ in kept]} depends "
                "on the parameters; restrict the typical ranges so that it is fixed"
            )
    ends = [(lo, vals_lo), *kept, (hi, vals_hi)]

    segments = []
    for i in range(len(ends) - 1):
        (a, av), (b, bv) = ends[i], ends[i + 1]
        where = f"({a}, {b})"
        probes = []
        for s, va, vb in zip(samples, av, bv, strict=True):
            for t in _probes(va, vb):
                probes.append({**s, x: sp.Float(t, 40)})
        pi = _resolve(p, x, probes, where)
        qi = _resolve(q, x, probes, where)
        L = _piece_pllr(spec, pi, qi, probes, where)
        if L is not None:
            segments.append(Segment(a, b, pi, qi, L, not L.has(x), where))
    if not segments:
        raise ValueError(f"{spec.name}: p and q vanish on the whole domain")
    gaussian = _is_gaussian_pair(segments, x)
    lattice = any(seg.atom for seg in segments)
    return SpecAnalysis(x, syms, tuple(segments), samples, p, q, gaussian, lattice)


def _piece_pllr(spec: SpecLike, pi, qi, probes: list, where: str):
    """The PLLR log(q/p) on one piece, or None where p and q both vanish there.

    Raises:
        ValueError: where exactly one of p, q vanishes (the PLLR is infinite on a set of positive
            mass: not a pair this toolkit accounts for).
    """
    cp = _classify(pi, probes, "p", where)
    cq = _classify(qi, probes, "q", where)
    if cp == "zero" and cq == "zero":
        return None
    if cp == "zero":
        raise _infinite_pllr(spec, "p", "q", where)
    if cq == "zero":
        raise _infinite_pllr(spec, "q", "p", where)
    return _choose_pllr(pi, qi, probes, where)


def _is_gaussian_pair(segments: list[Segment], x: sp.Symbol) -> bool:
    """True when L is affine in x and log p quadratic on the whole line: then X is normal."""
    if len(segments) != 1:
        return False
    seg = segments[0]
    if not (seg.lower == -sp.oo and seg.upper == sp.oo):
        return False
    try:
        L = sp.Poly(sp.expand(seg.pllr), x)
        logp = sp.Poly(sp.expand(sp.expand_log(sp.log(seg.p), force=True)), x)
    except sp.PolynomialError:
        return False
    return L.degree() == 1 and logp.degree() == 2


def _analyze_discrete(spec: SpecLike) -> SpecAnalysis:
    syms = tuple(prm.internal_symbol() for prm in spec.params)
    rep = {prm.symbol: s for prm, s in zip(spec.params, syms, strict=True)}
    samples = _samples(spec.params, syms)
    segments = []
    for o, pv, qv in zip(spec.outcomes, spec.p, spec.q, strict=True):
        pi, qi = _exact(pv.xreplace(rep)), _exact(qv.xreplace(rep))
        where = f"outcome {o!r}"
        L = _piece_pllr(spec, pi, qi, list(samples), where)
        if L is not None:
            segments.append(Segment(None, None, pi, qi, L, True, where))
    if not segments:
        raise ValueError(f"{spec.name}: every outcome has probability 0")
    for what, seq in (("p", [s.p for s in segments]), ("q", [s.q for s in segments])):
        total = sp.Add(*seq)
        for s in samples:
            v = float(_num(total, s))
            if abs(v - 1.0) > 1e-12:
                raise ValueError(
                    f"{spec.name}: {what} is not normalized: sum = {v:.15g} at {_fmt(s)}"
                )
    return SpecAnalysis(None, syms, tuple(segments), samples, None, None, False, True)
