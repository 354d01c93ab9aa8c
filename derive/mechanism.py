r"""Mechanisms defined by their densities: the PLLR, its moments and cumulants, and identity checks.

A mechanism is a dominating pair (P, Q) with densities p, q on one space (docs/math.md section 1;
Dong, Roth, Su, *Gaussian Differential Privacy*, JRSS-B 2022, arXiv:1905.02383). Its
privacy-loss log-likelihood ratio (PLLR) is

.. math::

    L(x) = \log \frac{q(x)}{p(x)}, \qquad X = L(\xi),\ \xi \sim P,
    \qquad Y = L(\zeta),\ \zeta \sim Q,

following Wang, Gao, Zhang, Shen, Su, *Analytical Composition of Differential Privacy via the
Edgeworth Accountant* (arXiv:2206.04236). This module turns a user's densities (sympy expressions
in one variable, or finite pmfs) into the cumulants kappa_1..kappa_r of X and Y:

1. **Segmentation.** The support is split at the declared breakpoints and at the points where an
   ``Abs``, ``sign``, ``Heaviside``, ``Max``/``Min`` argument or a ``Piecewise`` condition
   changes sign (found with ``sympy.solve``). On each segment these are resolved to smooth
   branches, so sympy never integrates ``Abs``. A segment where exactly one density vanishes
   would give L = +-infinity there; such pairs are **refused** with a ``ValueError`` (atoms at
   +-infinity are not implemented). Segments where both vanish are dropped.
2. **Moments.** The raw moments of each piece, int_seg p L^k and int_seg q L^k, are integrated
   symbolically with a per-integral time limit. A result that is an unevaluated ``Integral``,
   involves ``meijerg``/``hyper``, is not finite, or disagrees with quadrature at the reference
   parameters is *not* accepted as a closed form. Those pieces fall back to mpmath tanh-sinh
   quadrature at the requested precision, and the fallback is announced: a
   :class:`QuadratureFallbackWarning`, a note in the derivation, and per-cumulant provenance
   ``"mpmath quadrature, dps=..."`` in the result. Never silently.
3. **Cumulants.** Symbolically by the moment recursion
   :math:`\kappa_n = m_n - \sum_{k=1}^{n-1}\binom{n-1}{k-1}\kappa_k m_{n-k}` (Stuart & Ord,
   *Kendall's Advanced Theory of Statistics* vol. 1, Eq. 3.38); numerically from central moments
   at working precision dps + guard digits, re-evaluating closed forms at higher precision until
   two precisions agree (closed forms such as the Laplace ones cancel catastrophically for small
   parameters).
4. **Identities** (docs/math.md section 1): :math:`K_X(1) = \log E_P[q/p] = 0`,
   :math:`K_Y(-1) = \log E_Q[p/q] = 0`, :math:`\kappa_1(X) = -\mathrm{KL}(P\|Q)` and
   :math:`\kappa_1(Y) = \mathrm{KL}(Q\|P)`. The first two are proven symbolically when
   ``p e^L - q`` simplifies to 0 on every segment and int q = 1 simplifies to 1; otherwise they
   are checked by quadrature. The KL identities are always checked numerically against an
   *independent* quadrature of p log(p/q) over the original (unsplit) expressions.

   Numeric checks use tolerance 10^-(dps/2) and are computed at dps/2 + guard digits.

Bad input (undeclared symbols, densities negative or not normalized, parameters outside their
declared domain, breakpoints whose order depends on the parameters) raises ``ValueError`` naming
what failed. Floating-point constants in the densities are read as the decimals they print as
(``1.5`` becomes 3/2); a float-evaluated normalizing constant carries only ~16 digits and fails
the normalization check at high ``dps`` with a message saying so.

Costs and limits. Symbolic work is cached per (spec, strategy, timeout) and extended
incrementally in the order; numeric results per parameter point and ``dps``. When sympy fails on
E[L^k] for a piece, higher k on that piece are not attempted. Quadrature assumes features on a
scale O(1) (standardize the parameters; the normalization check catches lost mass). Time limits
use ``SIGALRM`` (:mod:`derive.timelimit`): enforced only in the main thread of a POSIX process
and only if no other timer is running; elsewhere sympy runs unbounded and the derivation notes
say so. A limit shorter than the work simply sends that work to quadrature. The caches are not
thread-safe.

Layout: this module defines the specs; :mod:`derive.parameters` the parameters,
:mod:`derive.segmentation` step 1, :mod:`derive.engine` steps 2-3 (symbolic),
:mod:`derive.quadrature` the numeric evaluation and step 4, :mod:`derive.results` the result
types. Their public names are re-exported here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import sympy as sp

from .engine import STRATEGIES, clear_engines, engine
from .parameters import Parameter
from .quadrature import GUARD_DIGITS
from .results import (
    CumulantResult,
    Derivation,
    IdentityCheck,
    IdentityCheckError,
    QuadratureFallbackWarning,
    Segment,
    SymbolicIntegrationError,
)
from .segmentation import analysis, clear_analyses
from .timelimit import TimeLimitExceeded, time_limit

__all__ = [
    "DEFAULT_SYMBOLIC_TIMEOUT",
    "GUARD_DIGITS",
    "MAX_ORDER",
    "STRATEGIES",
    "CumulantResult",
    "DensityMechanism",
    "Derivation",
    "DiscreteMechanism",
    "IdentityCheck",
    "IdentityCheckError",
    "MechanismSpec",
    "Parameter",
    "QuadratureFallbackWarning",
    "Segment",
    "SymbolicIntegrationError",
    "clear_cache",
]

DEFAULT_SYMBOLIC_TIMEOUT = 10.0
"""Seconds allowed per sympy integral unless the caller says otherwise."""
MAX_ORDER = 16
"""Highest cumulant order derive derives."""

# Former private names of the time limit, kept for existing callers (tests); the public ones
# live in derive.timelimit.
_time_limit = time_limit
_TimeoutError = TimeLimitExceeded


def clear_cache() -> None:
    """Forget all cached analyses, derivations and numeric evaluations."""
    clear_analyses()
    clear_engines()


def _sympify(name: str, value: object) -> sp.Expr:
    try:
        return sp.sympify(value, strict=True)
    except (sp.SympifyError, TypeError):
        try:
            return sp.sympify(value)
        except (sp.SympifyError, TypeError) as exc:
            raise ValueError(f"{name} must be a sympy expression, got {value!r}: {exc}") from None


def _check_params(params: object) -> tuple[Parameter, ...]:
    if isinstance(params, Parameter):
        params = (params,)
    params = tuple(params)
    for prm in params:
        if not isinstance(prm, Parameter):
            raise ValueError(f"params must be Parameter objects, got {prm!r}")
    names = [prm.name for prm in params]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate parameter names in {names}")
    return params


class MechanismSpec:
    """Common interface of :class:`DensityMechanism` and :class:`DiscreteMechanism`."""

    name: str
    params: tuple[Parameter, ...]
    kind: ClassVar[str] = "abstract"

    # -- parameters -----------------------------------------------------------------------

    @property
    def parameter_names(self) -> tuple[str, ...]:
        """Names of the declared parameters, in order."""
        return tuple(prm.name for prm in self.params)

    @property
    def symbols(self) -> dict[str, sp.Symbol]:
        """Internal symbols (with assumptions) keyed by name, as used in derived expressions."""
        an = analysis(self)
        out = {prm.name: s for prm, s in zip(self.params, an.param_syms, strict=True)}
        if an.x is not None:
            out[an.x.name] = an.x
        return out

    def parameter_values(self, values: Mapping[str, float] | None = None,
                         **kwargs: float) -> dict[str, float]:
        """Validated parameter values, defaults filled in.

        Args:
            values: Mapping from parameter name to value.
            **kwargs: More values by name.

        Returns:
            A dict name -> float, in declaration order.

        Raises:
            ValueError: on unknown names, missing values without default, or values outside the
                declared domain.
        """
        given = dict(values or {})
        given.update(kwargs)
        unknown = set(given) - set(self.parameter_names)
        if unknown:
            raise ValueError(
                f"{self.name}: unknown parameter(s) {sorted(unknown)}; "
                f"declared: {list(self.parameter_names)}"
            )
        out = {}
        for prm in self.params:
            if given.get(prm.name) is not None:
                out[prm.name] = prm.check(given[prm.name])
            elif prm.default is not None:
                out[prm.name] = prm.default
            else:
                raise ValueError(f"{self.name}: parameter {prm.name} has no default; give a value")
        return out

    # -- derivation -----------------------------------------------------------------------

    @property
    def has_atoms(self) -> bool:
        """True when the PLLR law has atoms (discrete pmfs, or L constant on a segment)."""
        return analysis(self).lattice

    @property
    def gaussian_pllr(self) -> bool:
        """True when X is exactly normal: one segment (the whole line), L affine in x and
        log p quadratic. Then all cumulants of order >= 3 vanish and K_X(1) = 0 forces
        X ~ N(-s^2/2, s^2) (GDP Thm 2.7)."""
        return analysis(self).gaussian

    def segments(self) -> tuple[Segment, ...]:
        """The pieces of the support (or the outcomes) with p, q and the PLLR on each."""
        return analysis(self).segments

    def derive(self, order: int = 4, *, strategy: str = "auto",
               symbolic_timeout: float | None = DEFAULT_SYMBOLIC_TIMEOUT) -> Derivation:
        """Derive the PLLR moments and cumulants of X and Y to ``order`` symbolically.

        Results are cached per (spec, strategy, symbolic_timeout); asking for a higher order
        extends the cached derivation.

        Args:
            order: Highest cumulant order (1..16).
            strategy: ``"auto"`` (closed forms where sympy finds them, quadrature elsewhere, with
                a warning), ``"symbolic"`` (raise if some piece has no closed form) or
                ``"quadrature"`` (skip symbolic integration).
            symbolic_timeout: Seconds allowed per sympy integral (None: unlimited).

        Returns:
            A :class:`Derivation`.

        Raises:
            ValueError: on invalid arguments or bad densities (not normalized where that is
                decidable symbolically).
            SymbolicIntegrationError: with ``strategy="symbolic"`` when a piece is not closed.
        """
        order = _check_order(order)
        deriv = engine(self, strategy, symbolic_timeout).derivation(order)
        if strategy != deriv.strategy:
            deriv = dataclasses.replace(deriv, strategy=strategy)
        if strategy == "symbolic" and not deriv.closed_form:
            deriv.require_closed_form()
        return deriv

    def cumulants(self, order: int = 4, values: Mapping[str, float] | None = None, *,
                  dps: int = 40, strategy: str = "auto",
                  symbolic_timeout: float | None = DEFAULT_SYMBOLIC_TIMEOUT, check: bool = True,
                  **param_values: float) -> CumulantResult:
        r"""Cumulants kappa_1..kappa_order of X and Y at given parameter values.

        Closed forms are evaluated with mpmath; pieces without one are integrated by mpmath
        tanh-sinh quadrature at ``dps`` digits plus guard digits, and the result says so.

        Args:
            order: Highest cumulant order (1..16).
            values: Parameter values by name (defaults fill the rest).
            dps: Decimal digits wanted.
            strategy: See :meth:`derive`.
            symbolic_timeout: Seconds allowed per sympy integral.
            check: Raise :class:`IdentityCheckError` if an identity fails.
            **param_values: Parameter values by name.

        Returns:
            A :class:`CumulantResult`.

        Raises:
            ValueError: on bad parameters, densities that are not normalized at these values.
            IdentityCheckError: if ``check`` and an identity fails.
        """
        vals = self.parameter_values(values, **param_values)
        if isinstance(dps, bool) or not isinstance(dps, int) or not 15 <= dps <= 1000:
            raise ValueError(f"dps must be an integer in [15, 1000], got {dps!r}")
        deriv = self.derive(order, strategy=strategy, symbolic_timeout=symbolic_timeout)
        res = engine(self, strategy, symbolic_timeout).evaluate(deriv, vals, dps)
        if check:
            failed = [c for c in res.identities if not c.passed]
            if failed:
                raise IdentityCheckError(
                    f"{self.name} at {vals}: identity check(s) failed: "
                    + "; ".join(f"{c.name} (residual {c.residual:.3g} > {c.tolerance:.3g}, "
                                f"{c.method})" for c in failed)
                )
        return res

    def check_identities(self, values: Mapping[str, float] | None = None, *, dps: int = 40,
                         **param_values: float) -> tuple[IdentityCheck, ...]:
        """The identity checks at the given values (see :meth:`cumulants`); never raises on
        failure, returns the checks."""
        return self.cumulants(1, values, dps=dps, check=False, **param_values).identities

    def pllr(self):
        """The PLLR L = log(q/p): a ``Piecewise`` in x (continuous) or a tuple per outcome."""
        raise NotImplementedError


def _check_order(order: object) -> int:
    if isinstance(order, bool) or not isinstance(order, int) or not 1 <= order <= MAX_ORDER:
        raise ValueError(f"order must be an integer in [1, {MAX_ORDER}], got {order!r}")
    return order


@dataclass(frozen=True)
class DensityMechanism(MechanismSpec):
    r"""A continuous mechanism (P, Q) given by densities p(x), q(x) as sympy expressions.

    Example (Laplace, docs/math.md section 4)::

        x, mu = sympy.symbols("x mu", real=True)
        spec = DensityMechanism(
            "laplace", x, sympy.exp(-abs(x)) / 2, sympy.exp(-abs(x - mu)) / 2,
            params=(Parameter(mu, default=1.0, typical=(0.01, 10.0)),), breakpoints=(0, mu))

    Args:
        name: Short name (used in messages and as default class name when compiled).
        x: The variable (a sympy Symbol or its name).
        p: Density of P, a sympy expression in x and the parameters.
        q: Density of Q.
        params: Declared :class:`Parameter` objects; every other free symbol is an error.
        domain: (lo, hi) of the common support; sympy expressions, may involve parameters.
        breakpoints: Points (expressions in the parameters) where the PLLR is not smooth.
            Kinks of ``Abs``/``sign``/``Heaviside``/``Max``/``Min``/``Piecewise`` are also found
            automatically.
        description: Free text.
        pllr_monotone: Optional declaration that the PLLR is strictly ``"increasing"`` or
            ``"decreasing"`` in x on every segment where it is not constant (or a tuple with one
            direction per such segment, in order). Used only by the certified lattice method
            (:mod:`derive.lattice`) when sympy cannot prove monotonicity itself; the lattice step
            then records it as an assumption (``describe()``, ``assumptions``).

    Raises:
        ValueError: on undeclared symbols, bad domain, negative densities, a pair with an
            infinite PLLR (one density vanishing where the other does not), or a bad
            ``pllr_monotone``.
    """

    name: str
    x: Any
    p: Any
    q: Any
    params: tuple[Parameter, ...] = ()
    domain: tuple[Any, Any] = (-sp.oo, sp.oo)
    breakpoints: tuple[Any, ...] = ()
    description: str = ""
    pllr_monotone: str | tuple[str, ...] | None = None
    kind: ClassVar[str] = "continuous"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        x = sp.Symbol(self.x) if isinstance(self.x, str) else self.x
        if not isinstance(x, sp.Symbol):
            raise ValueError(f"x must be a sympy Symbol, got {self.x!r}")
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "params", _check_params(self.params))
        object.__setattr__(self, "p", _sympify("p", self.p))
        object.__setattr__(self, "q", _sympify("q", self.q))
        if len(tuple(self.domain)) != 2:
            raise ValueError(f"domain must be (lo, hi), got {self.domain!r}")
        object.__setattr__(self, "domain", tuple(_sympify("domain", d) for d in self.domain))
        bps = self.breakpoints
        if not isinstance(bps, Sequence) or isinstance(bps, str):
            bps = (bps,)
        object.__setattr__(self, "breakpoints", tuple(_sympify("breakpoint", b) for b in bps))
        mono = self.pllr_monotone
        if mono is not None:
            dirs = (mono,) if isinstance(mono, str) else tuple(mono)
            if not dirs or any(d not in ("increasing", "decreasing") for d in dirs):
                raise ValueError(f"pllr_monotone must be 'increasing', 'decreasing' or a tuple of "
                                 f"those, got {mono!r}")
            object.__setattr__(self, "pllr_monotone", mono if isinstance(mono, str) else dirs)
        declared = {prm.symbol for prm in self.params}
        names = {prm.name for prm in self.params}
        if x.name in names:
            raise ValueError(f"the variable {x.name!r} is also declared as a parameter")
        for what, expr in (("p", self.p), ("q", self.q)):
            extra = expr.free_symbols - declared - {x}
            if extra:
                raise ValueError(
                    f"{self.name}: {what} involves undeclared symbol(s) "
                    f"{sorted(map(str, extra))}; declare them with Parameter(...)"
                )
        for what, exprs in (("domain", self.domain), ("breakpoints", self.breakpoints)):
            for e in exprs:
                extra = e.free_symbols - declared
                if extra:
                    raise ValueError(
                        f"{self.name}: {what} may involve declared parameters only, "
                        f"found {sorted(map(str, extra))}"
                    )
        analysis(self)  # segmentation, positivity and infinite-PLLR refusal happen here

    def pllr(self) -> sp.Expr:
        """L(x) = log(q/p) as a ``Piecewise`` over the segments (nan outside the support); the
        plain expression when one segment covers the whole line."""
        an = analysis(self)
        branches = []
        for seg in an.segments:
            cond = sp.And(an.x > seg.lower, an.x < seg.upper)
            branches.append((seg.pllr, cond))
        branches.append((sp.nan, True))
        return sp.Piecewise(*branches)


@dataclass(frozen=True)
class DiscreteMechanism(MechanismSpec):
    r"""A discrete mechanism (P, Q) given by finite pmfs.

    Example (randomized response, docs/math.md section 4)::

        e = sympy.Symbol("eps0", positive=True)
        spec = DiscreteMechanism("rr", p=(sympy.exp(e), 1), q=(1, sympy.exp(e)), ...)

    with each entry divided by (1 + e^eps0).

    Args:
        name: Short name.
        p: Probabilities of P: a sequence (outcomes 0..n-1) or a mapping outcome -> probability.
        q: Probabilities of Q, same outcomes (missing mapping keys mean 0).
        params: Declared parameters.
        outcomes: Outcome labels for sequences (default 0..n-1).
        description: Free text.

    Raises:
        ValueError: on mismatched lengths, undeclared symbols, negative probabilities, or an
            outcome with probability 0 under exactly one of P, Q (infinite PLLR).
    """

    name: str
    p: Any
    q: Any
    params: tuple[Parameter, ...] = ()
    outcomes: tuple[Any, ...] | None = None
    description: str = ""
    kind: ClassVar[str] = "discrete"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        object.__setattr__(self, "params", _check_params(self.params))
        p, q, outcomes = self.p, self.q, self.outcomes
        if isinstance(p, Mapping) or isinstance(q, Mapping):
            if not (isinstance(p, Mapping) and isinstance(q, Mapping)):
                raise ValueError("p and q must both be sequences or both mappings")
            outcomes = tuple(dict.fromkeys([*p, *q]))
            p = tuple(p.get(o, 0) for o in outcomes)
            q = tuple(q.get(o, 0) for o in outcomes)
        p, q = tuple(p), tuple(q)
        if len(p) != len(q) or not p:
            raise ValueError(f"p and q must be non-empty and of equal length ({len(p)}, {len(q)})")
        if outcomes is None:
            outcomes = tuple(range(len(p)))
        outcomes = tuple(outcomes)
        if len(outcomes) != len(p):
            raise ValueError("outcomes must have one label per probability")
        object.__setattr__(self, "p", tuple(_sympify("p", v) for v in p))
        object.__setattr__(self, "q", tuple(_sympify("q", v) for v in q))
        object.__setattr__(self, "outcomes", outcomes)
        declared = {prm.symbol for prm in self.params}
        for what, seq in (("p", self.p), ("q", self.q)):
            for v in seq:
                extra = v.free_symbols - declared
                if extra:
                    raise ValueError(
                        f"{self.name}: {what} involves undeclared symbol(s) "
                        f"{sorted(map(str, extra))}; declare them with Parameter(...)"
                    )
        analysis(self)

    def pllr(self) -> tuple[sp.Expr, ...]:
        """L = log(q_i/p_i) per kept outcome (outcomes with p_i = q_i = 0 are dropped)."""
        return tuple(seg.pllr for seg in analysis(self).segments)
