r"""The derivation engine: symbolic PLLR moments and cumulants, with flagged quadrature fallback.

For each segment (:mod:`derive.segmentation`) the raw moments of the piece, int_seg p L^k and
int_seg q L^k, are integrated symbolically with a per-integral time limit
(:mod:`derive.timelimit`). A result that is an unevaluated ``Integral``, involves
``meijerg``/``hyper``, is not finite, or disagrees with quadrature at the reference parameters is
*not* accepted as a closed form. Those pieces fall back to mpmath quadrature
(:mod:`derive.quadrature`), and the fallback is announced: a
:class:`~derive.results.QuadratureFallbackWarning`, a note in the derivation, and per-cumulant
provenance in the numeric result. Never silently. When sympy fails on E[L^k] for a piece, higher
k on that piece are not attempted.

Cumulants are formed symbolically from the moments by
:math:`\kappa_n = m_n - \sum_{k=1}^{n-1}\binom{n-1}{k-1}\kappa_k m_{n-k}` (Stuart & Ord,
*Kendall's Advanced Theory of Statistics* vol. 1, Eq. 3.38). The identities K_X(1) = 0 and
K_Y(-1) = 0 (docs/math.md section 1) are proven symbolically when p e^L - q simplifies to 0 on every
segment and the masses simplify to 1.

Engines are cached per (spec, strategy, timeout) (:func:`engine`); the caches are not
thread-safe.
"""

from __future__ import annotations

import time
import warnings

import mpmath
import sympy as sp

from .quadrature import GUARD_DIGITS, MomentEvaluator
from .results import (
    CumulantResult,
    Derivation,
    IdentityCheck,
    QuadratureFallbackWarning,
    Segment,
    SpecLike,
)
from .segmentation import analysis, format_values
from .timelimit import (
    TimeLimitExceeded,
    check_timeout,
    limit_enforceable,
    tidy_within,
    time_limit,
    zero_within,
)

__all__ = ["STRATEGIES", "VERIFY_DPS", "DerivationEngine", "clear_engines", "engine"]

STRATEGIES = ("auto", "symbolic", "quadrature")
VERIFY_DPS = 30
_NOT_CLOSED = (sp.Integral, sp.meijerg, sp.hyper, sp.appellf1, sp.Sum, sp.Product, sp.Limit,
               sp.exp_polar, sp.polar_lift, sp.Derivative)
_ENGINES: dict[tuple, DerivationEngine] = {}


def engine(spec: SpecLike, strategy: str, timeout: float | None) -> DerivationEngine:
    """The (cached) derivation engine of ``spec`` for a strategy and a sympy time limit.

    Args:
        spec: The mechanism spec.
        strategy: One of :data:`STRATEGIES` ("symbolic" shares the "auto" engine).
        timeout: Seconds per sympy integral (None: unlimited).

    Returns:
        The :class:`DerivationEngine`.

    Raises:
        ValueError: on an unknown strategy or a timeout that is not None or a number > 0.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    timeout = check_timeout("symbolic_timeout", timeout)
    # "symbolic" does the same work as "auto" and only raises afterwards: share the engine.
    kind = "quadrature" if strategy == "quadrature" else "auto"
    key = (spec, kind, timeout)
    eng = _ENGINES.get(key)
    if eng is None:
        eng = _ENGINES[key] = DerivationEngine(spec, kind, timeout)
    return eng


def clear_engines() -> None:
    """Forget every cached derivation and numeric evaluation."""
    _ENGINES.clear()


def _closed_problem(expr: sp.Expr) -> str | None:
    """Why ``expr`` is not accepted as a closed form (None if it is)."""
    if expr.has(sp.Integral):
        return "sympy returned an unevaluated Integral"
    bad = sorted({type(a).__name__ for a in sp.preorder_traversal(expr)
                  if isinstance(a, _NOT_CLOSED)})
    if bad:
        return f"sympy's result involves {', '.join(bad)} (not accepted as a closed form)"
    if expr.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        return "sympy's result is not finite"
    return None


class DerivationEngine:
    """Incremental derivation state for one (spec, strategy, timeout).

    Symbolic pieces E_m[L^k] per segment are integrated once and extended order by order; the
    numeric side (:class:`~derive.quadrature.MomentEvaluator`) shares them.
    """

    def __init__(self, spec: SpecLike, strategy: str, timeout: float | None) -> None:
        self.spec = spec
        self.an = analysis(spec)
        self.strategy = strategy
        self.timeout = timeout
        self.order = -1
        self.pieces: dict[tuple[str, int, int], sp.Expr | None] = {}
        self.notes: dict[tuple[str, int, int], str] = {}
        self.stopped: dict[tuple[str, int], int] = {}
        self.extra_notes: list[str] = []
        self.seconds = 0.0
        self.cum_exprs: dict[str, list[sp.Expr | None]] = {"P": [], "Q": []}
        self.identities: tuple[IdentityCheck, ...] | None = None
        self.snapshots: dict[int, Derivation] = {}
        self.numeric = MomentEvaluator(spec, self.an, self.pieces)
        if strategy != "quadrature" and not limit_enforceable() and timeout is not None:
            self.extra_notes.append(
                "the sympy time limit is not enforced outside the main thread"
            )

    # -- symbolic pieces --------------------------------------------------------------------

    def _weight(self, m: str, seg: Segment) -> sp.Expr:
        return seg.p if m == "P" else seg.q

    def _integrate_piece(self, m: str, i: int, k: int) -> tuple[sp.Expr | None, str]:
        seg = self.an.segments[i]
        integrand = self._weight(m, seg) * seg.pllr**k
        if seg.is_point:
            return integrand, "closed form"
        if self.strategy == "quadrature":
            return None, "quadrature requested (strategy='quadrature')"
        stop = self.stopped.get((m, i))
        if stop is not None and k > stop:
            return None, f"not attempted: sympy failed on the lower moment k={stop}"
        x = self.an.x
        try:
            with time_limit(self.timeout):
                if seg.atom:
                    r = seg.pllr**k * sp.integrate(self._weight(m, seg), (x, seg.lower, seg.upper),
                                                   conds="none")
                else:
                    r = sp.integrate(integrand, (x, seg.lower, seg.upper), conds="none")
        except TimeLimitExceeded:
            return None, f"sympy found no closed form within {self.timeout:g} s"
        except Exception as exc:  # sympy's integrators raise many error types
            return None, f"sympy raised {type(exc).__name__}: {exc}"
        try:
            r = sp.unpolarify(r)
        except Exception:  # unpolarify is best effort
            pass
        problem = _closed_problem(r)
        if problem:
            return None, problem
        return r, "closed form"

    def _extend(self, order: int) -> None:
        t0 = time.perf_counter()
        new_fail = []
        new_closed = []
        for k in range(self.order + 1, order + 1):
            for m in ("P", "Q"):
                for i in range(len(self.an.segments)):
                    expr, note = self._integrate_piece(m, i, k)
                    self.pieces[(m, i, k)] = expr
                    self.notes[(m, i, k)] = note
                    if expr is None:
                        self.stopped.setdefault((m, i), k)
                        new_fail.append((m, i, k))
                    elif not self.an.segments[i].is_point:
                        new_closed.append((m, i, k))
        # Cross-check accepted closed forms against quadrature at the reference parameters.
        ref = {s.name: float(v) for s, v in self.an.samples[0].items()}
        for key in new_closed:
            m, i, k = key
            quad, _ = self.numeric.quad_raw(m, i, k, ref, VERIFY_DPS + GUARD_DIGITS)
            try:
                closed = self.numeric.closed_value(key, ref, VERIFY_DPS + GUARD_DIGITS)
            except Exception as exc:  # lambdify output may lack a function (NameError, ...)
                self.pieces[key] = None
                self.notes[key] = (f"sympy's closed form cannot be evaluated numerically "
                                   f"({type(exc).__name__}: {exc}): discarded")
                new_fail.append(key)
                continue
            tol = mpmath.mpf(10) ** (-(VERIFY_DPS // 2)) * max(1, abs(quad))
            if not abs(closed - quad) <= tol:
                self.pieces[key] = None
                self.notes[key] = (
                    f"sympy's closed form disagrees with quadrature at {format_values(ref)} "
                    f"({mpmath.nstr(closed, 12)} vs {mpmath.nstr(quad, 12)}): discarded"
                )
                new_fail.append(key)
        self.order = order
        for m in ("P", "Q"):
            self._extend_cumulants(m, order)
        if self.identities is None:
            self.identities = self._symbolic_identities()
        self.seconds += time.perf_counter() - t0
        if new_fail:
            tried = [key for key in new_fail if not self.notes[key].startswith("not attempted")]
            skipped = len(new_fail) - len(tried)
            msg = (f"{self.spec.name}: sympy found no accepted closed form for "
                   + "; ".join(f"{self._piece_name(key)} ({self.notes[key]})"
                               for key in sorted(tried, key=lambda t: (t[2], t[0], t[1]))))
            if skipped:
                msg += f"; {skipped} higher moment(s) of the same pieces were not attempted"
        if new_fail and self.strategy != "quadrature":  # an explicit request is not silent
            warnings.warn(
                QuadratureFallbackWarning(msg + "; these pieces use mpmath quadrature"),
                stacklevel=4,
            )

    def _piece_name(self, key: tuple[str, int, int]) -> str:
        m, i, k = key
        seg = self.an.segments[i]
        return f"E_{m}[L^{k}] on {seg.label}"

    def _moment_expr(self, m: str, k: int) -> sp.Expr | None:
        parts = [self.pieces[(m, i, k)] for i in range(len(self.an.segments))]
        if any(p is None for p in parts):
            return None
        return sp.Add(*parts)

    def _extend_cumulants(self, m: str, order: int) -> None:
        ks = self.cum_exprs[m]
        moments = [self._moment_expr(m, k) for k in range(order + 1)]
        while len(ks) < order:
            n = len(ks) + 1
            if any(moments[j] is None for j in range(1, n + 1)):
                ks.append(None)
                continue
            expr = moments[n] - sp.Add(*[
                sp.binomial(n - 1, j - 1) * ks[j - 1] * moments[n - j] for j in range(1, n)
            ])
            ks.append(tidy_within(expr))

    def _symbolic_identities(self) -> tuple[IdentityCheck, ...]:
        out = []
        segs = self.an.segments
        for m, name in (("P", "P normalized"), ("Q", "Q normalized")):
            m0 = self._moment_expr(m, 0)
            if m0 is not None and zero_within(m0 - 1):
                out.append(IdentityCheck(name, 0.0, 0.0, "symbolic", True))
        normalized = {c.name for c in out}
        ok_x = all(zero_within(s.p * sp.exp(s.pllr) - s.q) for s in segs)
        if ok_x and "Q normalized" in normalized:
            out.append(IdentityCheck("K_X(1) = 0", 0.0, 0.0, "symbolic", True))
        ok_y = all(zero_within(s.q * sp.exp(-s.pllr) - s.p) for s in segs)
        if ok_y and "P normalized" in normalized:
            out.append(IdentityCheck("K_Y(-1) = 0", 0.0, 0.0, "symbolic", True))
        return tuple(out)

    def derivation(self, order: int) -> Derivation:
        """The derivation to ``order`` (extending the symbolic work if needed; cached)."""
        if order > self.order:
            self._extend(order)
        snap = self.snapshots.get(order)
        if snap is None:
            notes = [f"{self._piece_name(key)}: {note}"
                     for key, note in sorted(self.notes.items(), key=lambda t: (t[0][2], t[0]))
                     if key[2] <= order and self.pieces[key] is None]
            snap = Derivation(
                spec=self.spec, order=order, strategy=self.strategy, segments=self.an.segments,
                moments_x=tuple(self._moment_expr("P", k) for k in range(order + 1)),
                moments_y=tuple(self._moment_expr("Q", k) for k in range(order + 1)),
                cumulants_x=tuple(self.cum_exprs["P"][:order]),
                cumulants_y=tuple(self.cum_exprs["Q"][:order]),
                notes=tuple(self.extra_notes + notes),
                identities=self.identities or (),
                seconds=self.seconds,
            )
            self.snapshots[order] = snap
        return snap

    def evaluate(self, deriv: Derivation, vals: dict, dps: int) -> CumulantResult:
        """Numeric cumulants of ``deriv`` at ``vals`` (see :meth:`MomentEvaluator.evaluate`)."""
        return self.numeric.evaluate(deriv, vals, dps)
