r"""The lattice plan of a spec: the law of its PLLR as atoms and monotone pieces, in sympy.

What the certified lattice step (:mod:`derive.lattice`) needs, derived once per spec and compiled
to Arb (:func:`derive.arb_compile.arb_function`):

* *atoms*: an outcome of a discrete spec, or a segment of a density spec on which L is constant,
  with its masses (sympy's definite integrals of q and p over the segment);
* *monotone pieces*: segments on which L is strictly monotone -- proven by the sign calculus of
  :mod:`derive.sign_calculus` on dL/dx (x written through a positive variable ranging over the
  segment), or declared by the spec (``pllr_monotone``, then recorded as an assumption) -- with
  the limits of L at the ends and antiderivatives of q and p whose derivatives sympy proves equal
  to the densities, with their limits at the ends.

Monotone likelihood ratio: on such a piece :math:`\{L \ge t\}` is an interval ending at the
segment's end (Karlin and Rubin, *The theory of decision procedures for distributions with
monotone likelihood ratio*, Ann. Math. Statist. 27, 1956), so its masses are differences of the
antiderivatives. Anything not proven makes the lattice method not apply
(:class:`numeric.errors.NotApplicable`, with the reason).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp

from numeric.errors import NotApplicable

from .arb_compile import arb_function
from .mechanism import MechanismSpec
from .segmentation import analysis
from .sign_calculus import (
    PROOF_SECONDS,
    is_closed,
    monotone_sign,
    positive_variable,
    proven_sign,
    proven_zero,
)
from .timelimit import attempt

__all__ = ["LatticePlan", "does_not_apply", "lattice_plan"]


def does_not_apply(spec: MechanismSpec, why: str) -> NotApplicable:
    """The error saying the lattice method does not apply to ``spec``, and why."""
    return NotApplicable(f"lattice: does not apply to {spec.name!r}: {why}")


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
        NotApplicable: "lattice: does not apply ..." with the reason (cached too; a
            ``ValueError``).
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
        raise (NotApplicable if isinstance(plan, NotApplicable) else ValueError)(str(plan))
    return plan


def _build_plan(spec: MechanismSpec) -> LatticePlan:
    an = analysis(spec)
    params = tuple(an.param_syms)
    if spec.kind == "discrete":
        atoms = []
        for seg in an.segments:
            try:
                atoms.append(_Atom(seg.label, seg.pllr, seg.p, seg.q,
                                   arb_function(seg.p, params), arb_function(seg.q, params)))
            except TypeError as exc:
                raise does_not_apply(spec, f"{seg.label}: {exc}") from None
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
        raise does_not_apply(spec, f"pllr_monotone declares {len(decl)} directions but the PLLR "
                                    f"has {n} non-constant segment(s)")
    return decl


def _atom_segment(spec: MechanismSpec, seg, x: sp.Symbol, params) -> _Atom:
    masses = []
    for what, dens in (("q", seg.q), ("p", seg.p)):
        m = attempt(lambda dens=dens: sp.integrate(dens, (x, seg.lower, seg.upper),
                                                    conds="none"))
        if m is not None:
            m = attempt(lambda m=m: sp.unpolarify(m)) or m
        if not is_closed(m) or m.has(x) or m.has(sp.oo, -sp.oo):
            raise does_not_apply(spec, f"no closed form for the {what}-mass of the segment "
                                        f"{seg.label} where L is constant")
        masses.append(m)
    try:
        return _Atom(seg.label, seg.pllr, masses[1], masses[0], arb_function(masses[1], params),
                     arb_function(masses[0], params))
    except TypeError as exc:
        raise does_not_apply(spec, f"{seg.label}: {exc}") from None


def _finite_limit(G: sp.Expr, var: sp.Symbol, end: sp.Expr, d: str) -> sp.Expr | None:
    """The one-sided limit of G at ``end`` if finite and closed: ``sympy.limit`` (also of G with
    lower incomplete gammas rewritten through upper ones), else sympy's evaluation of G at the
    end (its rules for functions at infinity; indeterminate forms give nan and are refused).
    All are re-checked at the parameter point by the total-mass test of
    :class:`DerivedLatticeStep`."""
    alt = attempt(lambda: G.rewrite(sp.uppergamma)) if G.has(sp.lowergamma) else None
    tries = [lambda: sp.limit(G, var, end, d)]
    if alt is not None:  # lowergamma(a, z) = gamma(a) - uppergamma(a, z): limits sympy knows
        tries.append(lambda: sp.limit(alt, var, end, d))
    tries.append(lambda: G.subs(var, end))
    for fn in tries:
        v = attempt(fn)
        if v is not None and is_closed(v) and not v.has(var) and not v.has(sp.oo, -sp.oo):
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
            poly = attempt(lambda node=node: sp.Poly(node.base, x))
            if poly is not None and poly.degree() == 1 and node.base not in bases:
                bases.append(node.base)
    sub, _ = positive_variable(seg, x)
    v = sp.Symbol("_v", positive=True)
    for base in bases:
        alpha = sp.diff(base, x)
        beta = sp.expand(base - alpha * x)
        if not (alpha.is_number and alpha.is_nonzero and not beta.has(x)):
            continue
        if attempt(lambda base=base: proven_sign(base.xreplace({x: sub})), PROOF_SECONDS) != 1:
            continue  # base not proven positive on the segment
        dens_v = dens.xreplace({x: (v - beta) / alpha})
        H = attempt(lambda dens_v=dens_v: sp.integrate(dens_v, v))
        if H is not None:
            H = attempt(lambda H=H: sp.unpolarify(H)) or H
        if not is_closed(H):
            continue
        dH = attempt(lambda H=H: sp.diff(H, v))
        if dH is None or not proven_zero(dH - dens_v):
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
    G = attempt(lambda: sp.integrate(dens, x))
    if G is not None:
        G = attempt(lambda: sp.unpolarify(G)) or G
    if not is_closed(G):
        return None, (sp.S.Zero, sp.S.Zero), "sympy returned no closed form"
    dG = attempt(lambda: sp.diff(G, x))
    if dG is None or not proven_zero(dG - dens):
        return None, (sp.S.Zero, sp.S.Zero), f"d/dx {G} - density does not simplify to 0"
    ends = (_finite_limit(G, x, lo, "+"), _finite_limit(G, x, hi, "-"))
    if None in ends:
        return None, (sp.S.Zero, sp.S.Zero), "no finite limits at the segment ends"
    return G, ends, ""


def _piece(spec, seg, x, params, symbols, declared: str | None, notes: list[str]) -> _Piece:
    where = f"segment {seg.label}"
    p, q = seg.p, seg.q
    L = seg.pllr
    if not proven_zero(p * sp.exp(L) - q):
        L = sp.log(q) - sp.log(p)
        notes.append(f"{where}: L = log q - log p (derive's PLLR form not proven equal)")
    dL = attempt(lambda: sp.diff(L, x))
    if dL is None:
        raise does_not_apply(spec, f"cannot differentiate the PLLR on {where}")
    s = monotone_sign(dL, seg, x)
    if s is not None:
        increasing, how = s > 0, "proven"
        if declared is not None and (declared == "increasing") != increasing:
            raise does_not_apply(spec, f"pllr_monotone declares {declared} on {where} but dL/dx "
                                        f"is proven {'positive' if increasing else 'negative'}")
        notes.append(f"PLLR strictly {'increasing' if increasing else 'decreasing'} on {where} "
                     "(proven: sympy shows dL/dx has constant sign)")
    elif declared is not None:
        increasing, how = declared == "increasing", "declared"
        notes.append(f"ASSUMPTION: PLLR strictly {declared} on {where} as declared by the spec "
                     "(pllr_monotone; not proven, checked in Arb at sample points only)")
    else:
        raise does_not_apply(
            spec, f"PLLR not proven monotone on {where} (dL/dx = {dL}); if it is, declare "
                  "pllr_monotone='increasing' or 'decreasing' in the DensityMechanism")
    lo, hi = seg.lower, seg.upper
    lims = []
    for end, d in ((lo, "+"), (hi, "-")):
        v = attempt(lambda end=end, d=d: sp.limit(L, x, end, d))
        if v is None or not (v in (sp.oo, -sp.oo) or (is_closed(v) and not v.has(x))):
            raise does_not_apply(spec, f"sympy found no limit of the PLLR at {end} on {where}")
        lims.append(v)
    if (lims[0] == sp.oo or lims[1] == -sp.oo) if increasing else (
            lims[0] == -sp.oo or lims[1] == sp.oo):
        raise does_not_apply(spec, f"the PLLR limits {lims} on {where} contradict monotonicity")
    gs, g_lo, g_hi = [], [], []
    for what, dens in (("q", q), ("p", p)):
        G, ends, why = _antiderivative(dens, seg, x)
        if G is None:
            raise does_not_apply(spec, f"no proven closed-form antiderivative of {what} on "
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
        raise does_not_apply(spec, f"{where}: {exc}") from None
    return _Piece(seg.label, lo, hi, increasing, how, L, lims[0], lims[1], dL, tuple(gs),
                  f_lower, f_upper, f_g_lo, f_g_hi, f_lims[0], f_lims[1])
