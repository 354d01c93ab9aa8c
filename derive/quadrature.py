r"""Numeric evaluation of derived PLLR moments and cumulants (closed forms and mpmath quadrature).

:class:`MomentEvaluator` turns a derivation (:class:`~derive.results.Derivation`) into numbers at
a parameter point (:class:`~derive.results.CumulantResult`):

* closed-form pieces E_P[L^k] on a segment are evaluated with mpmath (lambdified sympy);
* pieces without one are integrated by mpmath tanh-sinh quadrature (Takahasi and Mori, *Double
  exponential formulas for numerical integration*, Publ. RIMS 9, 1974) at the working precision
  dps + :data:`GUARD_DIGITS`, with extra split points at distances 1, 4, 16 from finite ends
  when the first error estimate is too large (features at scale O(1) far out in a tail);
* cumulants come from central moments by the recursion
  :math:`\kappa_n = \mu_n - \sum_{k=2}^{n-2}\binom{n-1}{k-1}\kappa_k \mu_{n-k}` (Stuart & Ord,
  *Kendall's Advanced Theory of Statistics* vol. 1, Eq. 3.38), the mean being kappa_1; closed
  forms are re-evaluated at rising precision until two precisions agree (closed forms such as the
  Laplace ones cancel catastrophically for small parameters);
* the identities of docs/math.md section 1 not proven symbolically are checked by quadrature at
  dps/2 + guard digits, the KL ones against an *independent* quadrature of p log(p/q) over the
  original (unsplit) densities.
"""

from __future__ import annotations

from typing import Any

import mpmath
import sympy as sp

from .results import CumulantResult, Derivation, IdentityCheck, SpecLike, truncate_result
from .segmentation import SpecAnalysis, format_values, has_float

__all__ = ["GUARD_DIGITS", "MomentEvaluator", "mp_lambdify"]

GUARD_DIGITS = 20


def mp_lambdify(args: list, expr: sp.Expr):
    """``expr`` as a Python function of ``args`` evaluated with mpmath."""
    return sp.lambdify(args, expr, modules="mpmath")


class MomentEvaluator:
    """Numeric moments and cumulants of one spec's derivation, cached per parameter point.

    Args:
        spec: The spec.
        an: Its segmentation.
        pieces: The derivation's closed-form pieces ``{(m, i, k): expr or None}`` (E_m[L^k] on
            segment i, m = "P" or "Q"); shared with, and extended by, the derivation engine.
    """

    def __init__(self, spec: SpecLike, an: SpecAnalysis,
                 pieces: dict[tuple[str, int, int], sp.Expr | None]) -> None:
        self.spec = spec
        self.an = an
        self.pieces = pieces
        self._lam: dict[tuple, Any] = {}
        self._nodes: dict[tuple, dict] = {}
        self._numeric: dict[tuple, CumulantResult] = {}

    def _args(self) -> list:
        return [self.an.x, *self.an.param_syms] if self.an.x is not None else list(
            self.an.param_syms)

    def _fn(self, key: tuple, expr_fn) -> Any:
        fn = self._lam.get(key)
        if fn is None:
            fn = self._lam[key] = mp_lambdify(self._args(), expr_fn())
        return fn

    def closed_value(self, key: tuple[str, int, int], vals: dict, prec_dps: int):
        """The closed-form piece ``key`` = (m, i, k) at ``vals``, at ``prec_dps`` digits."""
        fn = self._fn(("piece", *key), lambda: self.pieces[key])
        args = [vals[s.name] for s in self.an.param_syms]
        with mpmath.workdps(prec_dps):
            pv = [mpmath.mpf(v) for v in args]
            if self.an.x is not None:
                return mpmath.mpf(fn(mpmath.mpf(0), *pv))
            return mpmath.mpf(fn(*pv))

    def _bounds(self, i: int, vals: dict, prec_dps: int):
        seg = self.an.segments[i]
        pv = [vals[s.name] for s in self.an.param_syms]
        fa = self._fn(("lo", i), lambda: seg.lower)
        fb = self._fn(("hi", i), lambda: seg.upper)
        with mpmath.workdps(prec_dps):
            return mpmath.mpf(fa(0, *pv)), mpmath.mpf(fb(0, *pv))

    def _node_values(self, i: int, vals: dict, prec_dps: int, original: bool = False):
        """Memoized (p, q, L) at quadrature nodes, shared by all moments of one segment."""
        seg = self.an.segments[i]
        key = (i, tuple(sorted(vals.items())), prec_dps, original)
        memo = self._nodes.get(key)
        if memo is None:
            memo = self._nodes[key] = {}
        pv = [mpmath.mpf(vals[s.name]) for s in self.an.param_syms]
        if original:  # the unsplit expressions, for the independent KL check
            fp = self._fn(("p0",), lambda: self.an.p_orig)
            fq = self._fn(("q0",), lambda: self.an.q_orig)

            def get(t):
                r = memo.get(t)
                if r is None:
                    r = memo[t] = (fp(t, *pv), fq(t, *pv), None)
                return r

            return get
        fp = self._fn(("p", i), lambda: seg.p)
        fq = self._fn(("q", i), lambda: seg.q)
        fL = self._fn(("L", i), lambda: seg.pllr)

        def get(t):
            r = memo.get(t)
            if r is None:
                r = memo[t] = (fp(t, *pv), fq(t, *pv), fL(t, *pv))
            return r

        return get

    def _quad(self, i: int, vals: dict, prec_dps: int, integrand, original: bool = False):
        """Tanh-sinh quadrature of integrand(p, q, L) over segment i; returns (value, error).

        A plain rule on the segment first; if mpmath's error estimate exceeds the target
        10^-(prec_dps - GUARD_DIGITS), again with split points at distances 1, 4, 16 from the
        finite ends (features at scale O(1) far out in a tail), keeping the better estimate.
        """
        get = self._node_values(i, vals, prec_dps, original)
        with mpmath.workdps(prec_dps):
            a, b = self._bounds(i, vals, prec_dps)

            def f(t):
                return integrand(*get(t))

            v, err = mpmath.quad(f, _coarse_points(a, b), error=True)
            target = mpmath.mpf(10) ** (-(prec_dps - GUARD_DIGITS)) * max(1, abs(v))
            if err > target:
                v2, err2 = mpmath.quad(f, _split_points(a, b), error=True)
                if err2 < err:
                    v, err = v2, err2
            return mpmath.mpf(mpmath.re(v)), mpmath.mpf(err)

    def quad_raw(self, m: str, i: int, k: int, vals: dict, prec_dps: int):
        """E_m[L^k] on segment i (m = "P" or "Q") by quadrature: (value, error estimate)."""
        seg = self.an.segments[i]
        if seg.is_point:
            return self.closed_value((m, i, k), vals, prec_dps), mpmath.mpf(0)
        if m == "P":
            return self._quad(i, vals, prec_dps, lambda p, q, L: p * L**k)
        return self._quad(i, vals, prec_dps, lambda p, q, L: q * L**k)

    def evaluate(self, deriv: Derivation, vals: dict, dps: int) -> CumulantResult:
        """The cumulants of ``deriv`` at the parameter values ``vals`` to ``dps`` digits.

        Args:
            deriv: A derivation of this spec (its order, closed forms, notes and symbolic
                identities).
            vals: Validated parameter values by name.
            dps: Decimal digits wanted.

        Returns:
            A :class:`~derive.results.CumulantResult` (cached per parameter point and dps).

        Raises:
            ValueError: if p or q is not normalized at ``vals``.
        """
        order = deriv.order
        key = (tuple(sorted(vals.items())), dps)
        cached = self._numeric.get(key)
        if cached is not None and cached.order >= order:
            return truncate_result(cached, order)
        if len(self._nodes) > 256:
            self._nodes.clear()
        wp = dps + GUARD_DIGITS
        warn = []
        nseg = len(self.an.segments)
        quad_err = mpmath.mpf(0)
        moments = {}
        provenance = {}
        for m in ("P", "Q"):
            total, mean, central, prec_used, err = self._central_moments(m, vals, order, wp, dps)
            moments[m] = (total, mean, central)
            quad_err = max(quad_err, err)
            if prec_used > wp + 60:
                warn.append(f"{m}: closed forms needed {prec_used} digits to converge "
                            "(cancellation)")
            closed_upto = 0
            for n in range(1, order + 1):
                if all(self.pieces[(m, i, k)] is not None
                       for i in range(nseg) for k in range(n + 1)):
                    closed_upto = n
                else:
                    break
            provenance[m] = tuple("closed form" if n <= closed_upto
                                  else f"mpmath quadrature, dps={dps}"
                                  for n in range(1, order + 1))
        # Normalization (bad input), then cumulants from central moments.
        norm_tol = mpmath.mpf(10) ** (-(dps // 2))
        for m, what in (("P", "p"), ("Q", "q")):
            total = moments[m][0]
            if not abs(total - 1) <= norm_tol:
                hint = ""
                if has_float(self.spec):
                    hint = ("; the spec contains floating-point constants, which carry only "
                            "~16 digits: write them exactly (sympy.Rational, sympy.gamma(...)) "
                            "or ask for fewer digits (dps)")
                raise ValueError(
                    f"{self.spec.name}: {what} is not normalized at {format_values(vals)}: its "
                    f"integral is 1 {'+' if total >= 1 else '-'} "
                    f"{mpmath.nstr(abs(total - 1), 3)} (tolerance "
                    f"{mpmath.nstr(norm_tol, 1)} at dps={dps}){hint}"
                )
        with mpmath.workdps(wp):
            kx = _cumulants_from_central(moments["P"][1], moments["P"][2])
            ky = _cumulants_from_central(moments["Q"][1], moments["Q"][2])
        # Closed-form cumulants are evaluated from their expressions (exact zeros stay zero).
        for m, ks, exprs in (("P", kx, deriv.cumulants_x), ("Q", ky, deriv.cumulants_y)):
            sigma = mpmath.sqrt(abs(moments[m][2][1])) if order >= 2 else abs(ks[0])
            for n in range(1, order + 1):
                if provenance[m][n - 1] == "closed form" and exprs[n - 1] is not None:
                    ks[n - 1] = self._eval_cumulant(m, n, exprs[n - 1], vals, dps, sigma**n)
        identities = self._numeric_identities(vals, dps, kx[0], ky[0], moments,
                                              deriv.identities)
        if quad_err > mpmath.mpf(10) ** (-dps):
            warn.append(f"a quadrature error estimate ({mpmath.nstr(quad_err, 3)}) exceeds "
                        f"1e-{dps}")
        if any(s != "closed form" for m in ("P", "Q") for s in provenance[m]):
            warn.insert(0, f"some cumulants were computed by mpmath quadrature (dps={dps}) "
                           "because sympy found no accepted closed form: "
                        + "; ".join(deriv.notes))
        with mpmath.workdps(dps):
            x = tuple(+v for v in kx)
            y = tuple(+v for v in ky)
        res = CumulantResult(
            mechanism=self.spec.name, values=dict(vals), order=order, dps=dps, x=x, y=y,
            x_exprs=deriv.cumulants_x, y_exprs=deriv.cumulants_y,
            provenance_x=provenance["P"], provenance_y=provenance["Q"],
            identities=identities, warnings=tuple(warn),
        )
        self._numeric[key] = res
        return res

    def _eval_cumulant(self, m: str, n: int, expr: sp.Expr, vals: dict, dps: int, scale):
        """Evaluate a closed-form cumulant, raising the precision until two precisions agree
        to about ``dps`` digits relative to max(|value|, ``scale``)."""
        fn = self._fn(("cumulant", m, n), lambda: expr)
        pv = [vals[s.name] for s in self.an.param_syms]
        lead = [0] if self.an.x is not None else []
        prec = dps + GUARD_DIGITS
        prev = None
        while True:
            with mpmath.workdps(prec):
                cur = mpmath.mpf(fn(*lead, *[mpmath.mpf(v) for v in pv]))
            if prev is not None:
                tol = mpmath.mpf(10) ** (-(dps + 2)) * max(abs(cur), scale)
                if abs(cur - prev) <= tol or prec > dps + 400:
                    return cur
            prev = cur
            prec += 30

    def _central_moments(self, m: str, vals: dict, order: int, wp: int, dps: int):
        """Total mass, mean, central moments mu_1..mu_order, precision used, quadrature error.

        Closed raw pieces are shifted to the mean binomially at a precision raised until two
        precisions agree; quadrature pieces are integrated as central moments directly (well
        conditioned) at the fixed working precision ``wp``.
        """
        nseg = len(self.an.segments)
        err = mpmath.mpf(0)
        quad_raw = {}
        for i in range(nseg):
            for k in (0, 1):
                if self.pieces[(m, i, k)] is None:
                    quad_raw[(i, k)], e = self.quad_raw(m, i, k, vals, wp)
                    err = max(err, e)
        quad_central: dict[tuple[int, int], Any] = {}
        prev = None
        prec = wp
        while True:
            with mpmath.workdps(prec):
                raw = {}
                for i in range(nseg):
                    for k in range(order + 1):
                        if self.pieces[(m, i, k)] is not None:
                            raw[(i, k)] = self.closed_value((m, i, k), vals, prec)
                total = mpmath.fsum(raw.get((i, 0), quad_raw.get((i, 0))) for i in range(nseg))
                mean = mpmath.fsum(raw.get((i, 1), quad_raw.get((i, 1)))
                                   for i in range(nseg)) / total
                central = [mpmath.mpf(0)] * (order + 1)
                for i in range(nseg):
                    for k in range(2, order + 1):
                        if all((i, j) in raw for j in range(k + 1)):
                            central[k] += mpmath.fsum(
                                mpmath.binomial(k, j) * raw[(i, j)] * (-mean) ** (k - j)
                                for j in range(k + 1))
                            continue
                        if (i, k) not in quad_central:
                            quad_central[(i, k)] = self._quad_central(m, i, k, +mean, vals, wp)
                            err = max(err, quad_central[(i, k)][1])
                        central[k] += quad_central[(i, k)][0]
                central = [c / total for c in central[1:]]
                cur = (total, mean, central)
            if (prev is not None and _agree(prev, cur, dps)) or prec > wp + 400:
                return total, mean, central, prec, err
            prev = cur
            prec += 30

    def _quad_central(self, m: str, i: int, k: int, mean, vals: dict, wp: int):
        if m == "P":
            return self._quad(i, vals, wp, lambda p, q, L: p * (L - mean) ** k)
        return self._quad(i, vals, wp, lambda p, q, L: q * (L - mean) ** k)

    def _numeric_identities(self, vals: dict, dps: int, k1x, k1y, moments: dict,
                            symbolic: tuple[IdentityCheck, ...]) -> tuple[IdentityCheck, ...]:
        """Identity checks at ``vals``: symbolic ones from the derivation, the rest by
        quadrature; the KL integrals use the original, unsplit densities."""
        wp = dps // 2 + GUARD_DIGITS  # the tolerance is 10^-(dps/2): no need for full dps
        tol = mpmath.mpf(10) ** (-(dps // 2))
        method = f"numeric (mpmath quadrature, dps={dps // 2 + GUARD_DIGITS // 2})"
        out = list(symbolic)
        done = {c.name for c in out}
        nseg = len(self.an.segments)

        def record(name, residual, scale=1):
            ok = bool(residual <= tol * scale)
            out.append(IdentityCheck(name, float(residual), float(tol * scale), method, ok))

        with mpmath.workdps(wp):
            for m in ("P", "Q"):
                if f"{m} normalized" not in done:
                    record(f"{m} normalized", abs(moments[m][0] - 1))
            for name, integrand in (
                ("K_X(1) = 0", lambda p, q, L: p * mpmath.exp(L)),
                ("K_Y(-1) = 0", lambda p, q, L: q * mpmath.exp(-L)),
            ):
                if name not in done:
                    total = mpmath.fsum(self._point_or_quad(i, vals, wp, integrand)
                                        for i in range(nseg))
                    record(name, abs(mpmath.log(total)))
            kl_pq = mpmath.fsum(
                self._point_or_quad(i, vals, wp, lambda p, q, L: p * (mpmath.log(p / q)),
                                    original=True) for i in range(nseg))
            kl_qp = mpmath.fsum(
                self._point_or_quad(i, vals, wp, lambda p, q, L: q * (mpmath.log(q / p)),
                                    original=True) for i in range(nseg))
            record("kappa_1(X) = -KL(P||Q)", abs(k1x + kl_pq), max(1, abs(kl_pq)))
            record("kappa_1(Y) = KL(Q||P)", abs(k1y - kl_qp), max(1, abs(kl_qp)))
            ok = bool(k1x <= 0 <= k1y)
            out.append(IdentityCheck("kappa_1(X) <= 0 <= kappa_1(Y)", 0.0 if ok else 1.0, 0.0,
                                     "numeric", ok))
        return tuple(out)

    def _point_or_quad(self, i: int, vals: dict, wp: int, integrand, original: bool = False):
        seg = self.an.segments[i]
        if seg.is_point:
            fp = self._fn(("p", i), lambda: seg.p)
            fq = self._fn(("q", i), lambda: seg.q)
            fL = self._fn(("L", i), lambda: seg.pllr)
            pv = [mpmath.mpf(vals[s.name]) for s in self.an.param_syms]
            return integrand(fp(*pv), fq(*pv), fL(*pv))
        return self._quad(i, vals, wp, integrand, original=original)[0]


def _coarse_points(a, b) -> list:
    if mpmath.isinf(a) and mpmath.isinf(b):
        return [a, 0, b]
    return [a, b]


def _split_points(a, b) -> list:
    """Interval ends plus interior split points that help tanh-sinh on long/infinite pieces."""
    if mpmath.isinf(a) and mpmath.isinf(b):
        return [a, -16, -4, -1, 0, 1, 4, 16, b]
    if mpmath.isinf(b):
        return [a, a + 1, a + 4, a + 16, b]
    if mpmath.isinf(a):
        return [a, b - 16, b - 4, b - 1, b]
    return [a, b]


def _agree(r1, r2, dps: int) -> bool:
    """Whether two (total, mean, central moments) evaluations agree to about ``dps`` digits,
    each central moment relative to its natural scale sigma^k."""
    (t1, m1, c1), (t2, m2, c2) = r1, r2
    tol = mpmath.mpf(10) ** (-(dps + 2))
    sigma = mpmath.sqrt(abs(c2[1])) if len(c2) > 1 else mpmath.mpf(0)
    if abs(t1 - t2) > tol or abs(m1 - m2) > tol * max(abs(m2), sigma):
        return False
    for k, (a, b) in enumerate(zip(c1, c2, strict=True), start=1):
        if abs(a - b) > tol * max(abs(b), sigma**k):
            return False
    return True


def _cumulants_from_central(mean, central: list) -> list:
    """kappa_1..kappa_r from the mean and central moments mu_1..mu_r (Stuart & Ord Eq. 3.38)."""
    mu = [mpmath.mpf(1), *central]
    r = len(central)
    kappa = [mpmath.mpf(0)] * (r + 1)
    for n in range(2, r + 1):
        acc = mu[n]
        for k in range(2, n - 1):
            acc -= mpmath.binomial(n - 1, k - 1) * kappa[k] * mu[n - k]
        kappa[n] = acc
    kappa[1] = mean
    return kappa[1:]
