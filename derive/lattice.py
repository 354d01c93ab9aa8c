r"""Certified lattice steps for the mechanisms derive compiles (:mod:`certify.lattice`).

For :class:`derive.compile.CompiledMechanism` (so for every class made by
:func:`derive.compile.mechanism_class`) :func:`register_lattice_steps` registers a factory of
:class:`DerivedLatticeStep`: Arb enclosures of the single-step privacy-loss law that the lattice
method of :mod:`certify.lattice` (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi, *Connect the Dots:
Tighter Discrete Approximations of Privacy Loss Distributions*, PETS 2022) composes.
:mod:`derive.compile` imports this module and calls it when python-flint is installed (the
``certify`` extra); without python-flint derive works as before and the lattice method reports
"does not apply".

Layout: the sympy plan of the law is :mod:`derive.lattice_plan` (monotonicity proofs by
:mod:`derive.sign_calculus`), the sympy-to-Arb compiler :mod:`derive.arb_compile`, the
certified root finding :mod:`derive.lattice_roots`; this module holds the step.

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
  constant sign by sympy's assumptions plus a small sound sign calculus
  (:func:`derive.sign_calculus.proven_sign`: products,
  powers, exp > 0, :math:`\operatorname{sign}(A - B) = \operatorname{sign}(\log A - \log B)` for
  A, B > 0). Failing that, a spec may *declare* it (``DensityMechanism(...,
  pllr_monotone="increasing")``); the step then records the declaration as an assumption in
  :meth:`~DerivedLatticeStep.describe`. Either way the sign of dL/dx is also checked in Arb at
  sample points of every segment (a wrong declaration makes the method not apply). Otherwise:
  "does not apply" (:class:`numeric.errors.NotApplicable`).
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
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import sympy as sp
from flint import arb, ctx

from certify.engine import workprec as _prec
from certify.lattice_steps import LatticeStep, exact_value, register_lattice_step
from numeric.mechanisms.base import DIRECTION_PQ, DIRECTION_QP

from .arb_compile import arb_function
from .lattice_plan import LatticePlan, does_not_apply, lattice_plan
from .lattice_roots import (
    GUARD_BITS,
    MAX_PREC,
    bracketed_root,
    certified_sign,
    certify_crossing,
    dyadic_ball,
    finite_ball,
    newton_from,
    radius_bits,
    sympy_rational,
)
from .sign_calculus import proven_sign, proven_zero

__all__ = [
    "DerivedLatticeStep",
    "LatticePlan",
    "arb_function",
    "derived_lattice_step",
    "lattice_plan",
    "register_lattice_steps",
]

_CACHE_CAP = 1 << 18  # cached crossing points per step
_STEP_CACHE_CAP = 512
_TOTAL_TOL = 2.0**-60
_SAMPLE_POINTS = (-64.0, -16.0, -4.0, -1.5, -0.5, -0.125, 0.0, 0.125, 0.5, 1.5, 4.0, 16.0, 64.0)

# The former private name of the sign calculus, kept for existing callers (tests).
_sign = proven_sign


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
                raise does_not_apply(self.plan.spec, f"segment {pc.label} at "
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
                    raise does_not_apply(plan.spec, f"the closed-form {what}-masses sum to {t} "
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
            raise does_not_apply(spec, f"segment {pc.label} is empty or undecided at "
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
                raise does_not_apply(
                    spec, f"dL/dx has the wrong sign at x = {xp.mid()} on segment {pc.label} "
                          f"({pc.how} {direction})")
            lv = fL([xp])
            if (lo_lim is not None and lv < lo_lim) or (hi_lim is not None and lv > hi_lim):
                raise does_not_apply(
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
                qz = proven_zero(atom.q.xreplace(st.exact))
                pz = proven_zero(atom.p.xreplace(st.exact))
                if qz and pz:
                    kind = "empty"
                elif qz:
                    kind = "-inf"
                elif pz:
                    kind = "+inf"
                elif not (q > 0 and p > 0):
                    with _prec(MAX_PREC):
                        q2 = atom.f_q(st.vals())
                        p2 = atom.f_p(st.vals())
                    if not (q2 > 0 and p2 > 0):
                        raise ArithmeticError(f"lattice: cannot decide whether a mass of atom "
                                              f"{atom.label} vanishes")
            exact = None
            if kind == "finite":
                lv = atom.pllr.xreplace(st.exact)
                ex = _exact_of(lv) if lv.is_number else None
                if ex is not None and proven_zero(
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
        tb = dyadic_ball(t)
        st = self._state

        def diff(prec: int) -> arb:
            q, p = self._atom_masses(j, prec)
            with _prec(prec):
                return q - tb.exp() * p  # sign(q - e^t p) = sign(L - t)

        def zero() -> bool:
            return proven_zero(atom.q.xreplace(st.exact)
                               - sp.exp(sympy_rational(t)) * atom.p.xreplace(st.exact))

        return certified_sign(diff, zero, wp, f"the atom {atom.label} with {t}")

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
        tb = dyadic_ball(t)
        return certified_sign(lambda prec: self._const(key, fn, prec) - tb,
                              lambda: proven_zero(val - sympy_rational(t)), wp,
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
        bits = radius_bits(wp)
        fL, fdL = st.bound(i)[:2]
        tb = dyadic_ball(t)

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
                    xt = newton_from(g, dg, x0, a, b, bits) if x0 is not None else None
                    if xt is None:
                        xt = bracketed_root(g, dg, a, b, bits)
                    ball = certify_crossing(g, xt, a, b, bits)
                    break
                except ArithmeticError:
                    if 2 * ep > MAX_PREC:
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
        wp = ctx.prec + GUARD_BITS
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
        return finite_ball(tq), finite_ball(tp)

    def delta(self, eps: arb) -> arb:
        if not eps.is_exact():  # delta is non-increasing: enclose by the ends of the ball
            hi = self.delta(arb(eps.lower()))
            lo = self.delta(arb(eps.upper()))
            return lo.union(hi)
        ev = exact_value(eps)
        wp = ctx.prec + GUARD_BITS
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
        return finite_ball(total)

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
# the step factory


_STEPS: dict[tuple, DerivedLatticeStep] = {}
_STEPS_LOCK = threading.Lock()


def derived_lattice_step(mechanism: Any, direction: str = DIRECTION_PQ
                         ) -> DerivedLatticeStep:
    """The lattice step of a compiled mechanism (cached per mechanism and direction).

    Args:
        mechanism: An instance of a class made by :func:`derive.compile.mechanism_class`.
        direction: ``"P||Q"`` or ``"Q||P"``.

    Returns:
        A :class:`DerivedLatticeStep`; repeated calls return the same object.

    Raises:
        NotApplicable: "lattice: does not apply ..." when the law cannot be enclosed (PLLR not
            proven monotone, no closed-form masses, ...).
        ValueError: on a bad direction.
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


# ---------------------------------------------------------------------------------------------
# registration with certify (the ONE place that touches certify's lattice-step registry)


def register_lattice_steps(mechanism_class: type) -> None:
    """Register :func:`derived_lattice_step` as the lattice step of ``mechanism_class`` (and its
    subclasses) with :mod:`certify.lattice_steps`.

    :func:`derive.compile.mechanism_class` calls this once, with
    :class:`~derive.compile.CompiledMechanism`, when python-flint is installed. This is the only
    call into certify's registration API: switching to another registry is a one-line change here.

    Args:
        mechanism_class: The class whose instances (and subclasses' instances) get the step.
    """
    register_lattice_step(mechanism_class)(derived_lattice_step)
