r"""Mechanisms defined by their densities: the PLLR, its moments and cumulants, and identity checks.

A mechanism is a dominating pair (P, Q) with densities p, q on one space (MATH.md section 1;
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
4. **Identities** (MATH.md section 1): :math:`K_X(1) = \log E_P[q/p] = 0`,
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
use ``SIGALRM``: enforced only in the main thread of a POSIX process and only if no other timer
is running; elsewhere sympy runs unbounded and the derivation notes say so. The caches are not
thread-safe.
"""

from __future__ import annotations

import contextlib
import dataclasses
import keyword
import math
import signal
import threading
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import mpmath
import sympy as sp

__all__ = [
    "GUARD_DIGITS",
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

GUARD_DIGITS = 20
STRATEGIES = ("auto", "symbolic", "quadrature")
_DEFAULT_TIMEOUT = 10.0
_SIMPLIFY_TIMEOUT = 5.0
_VERIFY_DPS = 30
_MAX_ORDER = 16
_RESERVED = frozenset({
    "order", "dps", "strategy", "symbolic_timeout", "values", "check", "symmetric", "lattice",
    "max_order", "spec", "options", "delta_part", "registry_name", "describe", "name",
    "class_name", "derived", "pllr_cumulants", "exact_family", "clt_mu_squared", "gaussian",
    "compiled_order", "derive_options",
})
_NOT_CLOSED = (sp.Integral, sp.meijerg, sp.hyper, sp.appellf1, sp.Sum, sp.Product, sp.Limit,
               sp.exp_polar, sp.polar_lift, sp.Derivative)
_KINKS = (sp.Abs, sp.sign, sp.Heaviside, sp.Max, sp.Min, sp.Piecewise)


class QuadratureFallbackWarning(UserWarning):
    """Sympy could not integrate some piece; its value comes from mpmath quadrature."""


class IdentityCheckError(ValueError):
    """A PLLR identity (K_X(1) = 0, K_Y(-1) = 0, kappa_1 = -KL) failed."""


class SymbolicIntegrationError(ValueError):
    """``strategy="symbolic"`` was requested but some piece has no accepted closed form."""


class _TimeoutError(Exception):
    pass


_RETRY_SECONDS = 0.05


def _limit_enforceable() -> bool:
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def _time_limit(seconds: float | None):
    """Raise :class:`_TimeoutError` inside the block after ``seconds`` (main thread, POSIX only)."""
    if seconds is None or not _limit_enforceable() or signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        yield
        return

    # The alarm repeats every _RETRY_SECONDS after the first expiry: an exception raised by a
    # signal handler can be swallowed (e.g. when the signal lands inside a garbage-collection
    # callback, which only prints "Exception ignored"), and a one-shot alarm would then leave a
    # sympy call running forever.
    active = [True]

    def _raise(signum, frame):
        if active[0]:
            raise _TimeoutError

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, float(seconds), _RETRY_SECONDS)
    try:
        yield
    finally:
        for _ in range(100):  # a late alarm may interrupt the clean-up itself: redo it
            try:
                active[0] = False
                signal.setitimer(signal.ITIMER_REAL, 0.0)
                signal.signal(signal.SIGALRM, previous)
                break
            except _TimeoutError:
                continue


def _simplify(expr: sp.Expr, seconds: float = _SIMPLIFY_TIMEOUT) -> sp.Expr:
    """``sympy.simplify`` under a time limit; the input unchanged if it takes too long."""
    try:
        with _time_limit(seconds):
            return sp.simplify(expr)
    except _TimeoutError:
        return expr
    except Exception:  # sympy raises assorted errors on odd input; keep the original
        return expr


def _tidy(expr: sp.Expr, seconds: float = _SIMPLIFY_TIMEOUT) -> sp.Expr:
    """A compact equivalent form: ``factor(cancel(expand(expr)))``, falling back to
    ``simplify`` when that does not shrink the expression; time-limited."""
    try:
        with _time_limit(seconds):
            out = sp.factor(sp.cancel(sp.expand(expr)))
    except _TimeoutError:
        return expr
    except Exception:  # polys may refuse exotic generators; keep the expression
        out = expr
    if sp.count_ops(out) > 40:
        alt = _simplify(out, seconds)
        if sp.count_ops(alt) < sp.count_ops(out):
            out = alt
    return out


def _is_zero(expr: sp.Expr, seconds: float = _SIMPLIFY_TIMEOUT) -> bool:
    if expr == 0:
        return True
    return _simplify(expr, seconds) == 0


# --------------------------------------------------------------------------------------------
# Parameters
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Parameter:
    r"""A declared mechanism parameter.

    Args:
        symbol: The sympy symbol (or its name) used in the densities.
        default: Default value (also the reference point for checks), or None.
        domain: Open interval (lo, hi) of admissible values; ``lo >= 0`` makes the symbol positive
            for sympy.
        typical: Closed sub-range [lo, hi] of typical values, used to check that breakpoints keep
            their order and that symmetry holds; optional when ``default`` is given.
        description: Free text.

    Raises:
        ValueError: on a bad name (not an identifier, reserved), an empty domain, or a default or
            typical range outside the domain.
    """

    symbol: Any
    default: float | None = None
    domain: tuple[float, float] = (0.0, math.inf)
    typical: tuple[float, float] | None = None
    description: str = ""

    def __post_init__(self) -> None:
        sym = sp.Symbol(self.symbol) if isinstance(self.symbol, str) else self.symbol
        if not isinstance(sym, sp.Symbol):
            raise ValueError(f"Parameter symbol must be a sympy Symbol or a name, got {sym!r}")
        name = sym.name
        if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_"):
            raise ValueError(f"parameter name {name!r} must be a public Python identifier")
        if name in _RESERVED:
            raise ValueError(f"parameter name {name!r} is reserved; rename it")
        try:
            lo, hi = (float(v) for v in self.domain)
        except (TypeError, ValueError):
            raise ValueError(
                f"parameter {name}: domain must be (lo, hi), got {self.domain!r}"
            ) from None
        if not lo < hi:
            raise ValueError(f"parameter {name}: empty domain ({lo}, {hi})")
        object.__setattr__(self, "symbol", sym)
        object.__setattr__(self, "domain", (lo, hi))
        if self.default is not None:
            object.__setattr__(self, "default", self.check(self.default, "default of "))
        if self.typical is not None:
            tlo, thi = (self.check(v, "typical range of ") for v in self.typical)
            if not tlo <= thi:
                raise ValueError(f"parameter {name}: typical range {self.typical!r} is reversed")
            object.__setattr__(self, "typical", (tlo, thi))
        if self.default is None and self.typical is None:
            raise ValueError(f"parameter {name} needs a default or a typical range")

    @property
    def name(self) -> str:
        """The parameter's name (its symbol's name)."""
        return self.symbol.name

    def check(self, value: object, what: str = "") -> float:
        """Return ``value`` as a float if it lies in the open domain, else raise ``ValueError``."""
        lo, hi = self.domain
        if isinstance(value, bool):
            raise ValueError(f"{what}parameter {self.name} must be a real number, got {value!r}")
        try:
            v = float(value)
        except (TypeError, ValueError):
            raise ValueError(
                f"{what}parameter {self.name} must be a real number, got {value!r}"
            ) from None
        if not (math.isfinite(v) and lo < v < hi):
            raise ValueError(
                f"{what}parameter {self.name} must be finite and lie in ({lo:g}, {hi:g}), "
                f"got {value!r}"
            )
        return v

    @property
    def reference(self) -> float:
        """The reference value: the default, else the (geometric) middle of the typical range."""
        if self.default is not None:
            return self.default
        tlo, thi = self.typical
        return math.sqrt(tlo * thi) if tlo > 0 else 0.5 * (tlo + thi)

    def samples(self) -> tuple[float, ...]:
        """Reference value first, then the ends of the typical range (distinct values)."""
        out = [self.reference]
        for v in self.typical or ():
            if v not in out:
                out.append(v)
        return tuple(out)

    def internal_symbol(self) -> sp.Symbol:
        """The symbol with sympy assumptions derived from the domain."""
        lo, hi = self.domain
        if lo >= 0:
            return sp.Symbol(self.name, positive=True)
        if hi <= 0:
            return sp.Symbol(self.name, negative=True)
        return sp.Symbol(self.name, real=True)


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    """A piece of the support on which p, q and the PLLR are smooth (or one discrete outcome).

    ``lower``/``upper`` are sympy expressions in the parameters (None for a discrete outcome);
    ``pllr`` is L = log(q/p) on the piece; ``atom`` is True when L is constant there (the PLLR
    law has an atom).
    """

    lower: sp.Expr | None
    upper: sp.Expr | None
    p: sp.Expr
    q: sp.Expr
    pllr: sp.Expr
    atom: bool
    label: str

    @property
    def is_point(self) -> bool:
        """True for an outcome of a discrete mechanism."""
        return self.lower is None


@dataclass(frozen=True)
class IdentityCheck:
    """Outcome of one identity check.

    Attributes:
        name: Short identifier, e.g. ``"K_X(1) = 0"``.
        residual: |left - right| (0.0 when proven symbolically).
        tolerance: Accepted residual.
        method: ``"symbolic"`` or ``"numeric (mpmath quadrature, dps=...)"``.
        passed: Whether the residual is within tolerance.
    """

    name: str
    residual: float
    tolerance: float
    method: str
    passed: bool


@dataclass(frozen=True)
class Derivation:
    r"""Symbolic outcome of deriving a mechanism's PLLR moments and cumulants to ``order``.

    Attributes:
        spec: The mechanism spec.
        order: Highest cumulant order.
        strategy: ``"auto"``, ``"symbolic"`` or ``"quadrature"``.
        segments: The pieces of the support (or outcomes).
        moments_x: Raw moments E_P[L^k], k = 0..order, as closed forms, or None where some
            piece needs quadrature.
        moments_y: Raw moments E_Q[L^k], likewise.
        cumulants_x: kappa_1..kappa_order of X (closed forms or None).
        cumulants_y: kappa_1..kappa_order of Y (closed forms or None).
        notes: Why sympy failed on the pieces that use quadrature (and other remarks).
        identities: Identities proven symbolically (for all parameter values).
        seconds: Wall time spent deriving (cumulative over orders).
    """

    spec: MechanismSpec
    order: int
    strategy: str
    segments: tuple[Segment, ...]
    moments_x: tuple[sp.Expr | None, ...]
    moments_y: tuple[sp.Expr | None, ...]
    cumulants_x: tuple[sp.Expr | None, ...]
    cumulants_y: tuple[sp.Expr | None, ...]
    notes: tuple[str, ...]
    identities: tuple[IdentityCheck, ...]
    seconds: float

    @property
    def closed_form(self) -> bool:
        """True when every cumulant of X and Y has a closed form."""
        return all(c is not None for c in self.cumulants_x + self.cumulants_y)

    def require_closed_form(self) -> tuple[tuple[sp.Expr, ...], tuple[sp.Expr, ...]]:
        """The closed-form cumulants of X and Y, for code generation.

        Returns:
            ``(cumulants_x, cumulants_y)``, tuples of sympy expressions free of ``Integral``.

        Raises:
            SymbolicIntegrationError: if some cumulant has no closed form (with sympy's reasons).
        """
        if not self.closed_form:
            raise SymbolicIntegrationError(
                f"{self.spec.name}: no closed form for every cumulant to order {self.order}: "
                + "; ".join(self.notes)
            )
        return self.cumulants_x, self.cumulants_y


@dataclass(frozen=True)
class CumulantResult:
    r"""Cumulants of the PLLR at given parameter values, with provenance and checks.

    Attributes:
        mechanism: The spec's name.
        values: Parameter values used.
        order: Highest cumulant order.
        dps: Decimal digits the values are computed to (working precision dps + guard digits).
        x: kappa_1..kappa_order of X as mpmath numbers.
        y: kappa_1..kappa_order of Y as mpmath numbers.
        x_exprs: Closed forms of the X cumulants (None where quadrature was used).
        y_exprs: Closed forms of the Y cumulants.
        provenance_x: Per cumulant ``"closed form"`` or ``"mpmath quadrature, dps=..."``.
        provenance_y: Likewise for Y.
        identities: Identity checks (symbolic or numeric at these values).
        warnings: Human-readable warnings (quadrature fallback, large error estimates).
    """

    mechanism: str
    values: dict[str, float]
    order: int
    dps: int
    x: tuple[Any, ...]
    y: tuple[Any, ...]
    x_exprs: tuple[sp.Expr | None, ...]
    y_exprs: tuple[sp.Expr | None, ...]
    provenance_x: tuple[str, ...]
    provenance_y: tuple[str, ...]
    identities: tuple[IdentityCheck, ...]
    warnings: tuple[str, ...]

    @property
    def used_quadrature(self) -> bool:
        """True when some cumulant relies on numeric quadrature."""
        return any(s != "closed form" for s in self.provenance_x + self.provenance_y)

    @property
    def closed_form(self) -> bool:
        """True when every cumulant is a closed form."""
        return not self.used_quadrature

    def floats(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """The cumulants of X and Y as Python floats."""
        return tuple(float(v) for v in self.x), tuple(float(v) for v in self.y)

    def to_pllr_cumulants(self):
        """The cumulants as a :class:`numeric.mechanisms.base.PLLRCumulants`."""
        from numeric.mechanisms.base import PLLRCumulants

        x, y = self.floats()
        return PLLRCumulants(x=x, y=y)


# --------------------------------------------------------------------------------------------
# Specs
# --------------------------------------------------------------------------------------------


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
        an = _analysis(self)
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
        return _analysis(self).lattice

    @property
    def gaussian_pllr(self) -> bool:
        """True when X is exactly normal: one segment (the whole line), L affine in x and
        log p quadratic. Then all cumulants of order >= 3 vanish and K_X(1) = 0 forces
        X ~ N(-s^2/2, s^2) (GDP Thm 2.7)."""
        return _analysis(self).gaussian

    def segments(self) -> tuple[Segment, ...]:
        """The pieces of the support (or the outcomes) with p, q and the PLLR on each."""
        return _analysis(self).segments

    def derive(self, order: int = 4, *, strategy: str = "auto",
               symbolic_timeout: float | None = _DEFAULT_TIMEOUT) -> Derivation:
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
        engine = _engine(self, strategy, symbolic_timeout)
        deriv = engine.derivation(order)
        if strategy != deriv.strategy:
            deriv = dataclasses.replace(deriv, strategy=strategy)
        if strategy == "symbolic" and not deriv.closed_form:
            deriv.require_closed_form()
        return deriv

    def cumulants(self, order: int = 4, values: Mapping[str, float] | None = None, *,
                  dps: int = 40, strategy: str = "auto",
                  symbolic_timeout: float | None = _DEFAULT_TIMEOUT, check: bool = True,
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
        engine = _engine(self, strategy, symbolic_timeout)
        res = engine.evaluate(deriv, vals, dps)
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
    if isinstance(order, bool) or not isinstance(order, int) or not 1 <= order <= _MAX_ORDER:
        raise ValueError(f"order must be an integer in [1, {_MAX_ORDER}], got {order!r}")
    return order


@dataclass(frozen=True)
class DensityMechanism(MechanismSpec):
    r"""A continuous mechanism (P, Q) given by densities p(x), q(x) as sympy expressions.

    Example (Laplace, MATH.md section 4)::

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
        _analysis(self)  # segmentation, positivity and infinite-PLLR refusal happen here

    def pllr(self) -> sp.Expr:
        """L(x) = log(q/p) as a ``Piecewise`` over the segments (nan outside the support); the
        plain expression when one segment covers the whole line."""
        an = _analysis(self)
        branches = []
        for seg in an.segments:
            cond = sp.And(an.x > seg.lower, an.x < seg.upper)
            branches.append((seg.pllr, cond))
        branches.append((sp.nan, True))
        return sp.Piecewise(*branches)


@dataclass(frozen=True)
class DiscreteMechanism(MechanismSpec):
    r"""A discrete mechanism (P, Q) given by finite pmfs.

    Example (randomized response, MATH.md section 4)::

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
        _analysis(self)

    def pllr(self) -> tuple[sp.Expr, ...]:
        """L = log(q_i/p_i) per kept outcome (outcomes with p_i = q_i = 0 are dropped)."""
        return tuple(seg.pllr for seg in _analysis(self).segments)


# --------------------------------------------------------------------------------------------
# Analysis: segmentation, positivity, refusal of infinite PLLRs
# --------------------------------------------------------------------------------------------


@dataclass
class _Analysis:
    x: sp.Symbol | None
    param_syms: tuple[sp.Symbol, ...]
    segments: tuple[Segment, ...]
    samples: tuple[dict, ...]  # parameter samples as {internal symbol: sympy Float}
    p_orig: sp.Expr | None
    q_orig: sp.Expr | None
    gaussian: bool
    lattice: bool


_ANALYSES: dict[MechanismSpec, _Analysis] = {}
_ENGINES: dict[tuple, _Engine] = {}


def clear_cache() -> None:
    """Forget all cached analyses, derivations and numeric evaluations."""
    _ANALYSES.clear()
    _ENGINES.clear()


def _analysis(spec: MechanismSpec) -> _Analysis:
    an = _ANALYSES.get(spec)
    if an is None:
        an = _analyze_continuous(spec) if spec.kind == "continuous" else _analyze_discrete(spec)
        _ANALYSES[spec] = an
    return an


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


def _has_float(spec: MechanismSpec) -> bool:
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
        with _time_limit(_SIMPLIFY_TIMEOUT):
            forced = sp.expand_log(raw, force=True)
            expanded = sp.expand(forced)
        yield [forced, expanded]
    except _TimeoutError:
        pass
    except Exception:  # expand_log can fail on unusual expressions; try the next forms
        pass
    yield [raw]
    yield [_simplify(sp.log(_simplify(q / p)))]


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


def _analyze_continuous(spec: DensityMechanism) -> _Analysis:
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
            with _time_limit(_SIMPLIFY_TIMEOUT):
                sols = sp.solve(arg, x)
        except (_TimeoutError, NotImplementedError, Exception):
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
        cp = _classify(pi, probes, "p", where)
        cq = _classify(qi, probes, "q", where)
        if cp == "zero" and cq == "zero":
            continue
        if cp == "zero":
            raise _infinite_pllr(spec, "p", "q", where)
        if cq == "zero":
            raise _infinite_pllr(spec, "q", "p", where)
        L = _choose_pllr(pi, qi, probes, where)
        segments.append(Segment(a, b, pi, qi, L, not L.has(x), where))
    if not segments:
        raise ValueError(f"{spec.name}: p and q vanish on the whole domain")
    gaussian = _is_gaussian_pair(segments, x)
    lattice = any(seg.atom for seg in segments)
    return _Analysis(x, syms, tuple(segments), samples, p, q, gaussian, lattice)


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


def _analyze_discrete(spec: DiscreteMechanism) -> _Analysis:
    syms = tuple(prm.internal_symbol() for prm in spec.params)
    rep = {prm.symbol: s for prm, s in zip(spec.params, syms, strict=True)}
    samples = _samples(spec.params, syms)
    segments = []
    for o, pv, qv in zip(spec.outcomes, spec.p, spec.q, strict=True):
        pi, qi = _exact(pv.xreplace(rep)), _exact(qv.xreplace(rep))
        where = f"outcome {o!r}"
        probes = list(samples)
        cp = _classify(pi, probes, "p", where)
        cq = _classify(qi, probes, "q", where)
        if cp == "zero" and cq == "zero":
            continue
        if cp == "zero":
            raise _infinite_pllr(spec, "p", "q", where)
        if cq == "zero":
            raise _infinite_pllr(spec, "q", "p", where)
        L = _choose_pllr(pi, qi, probes, where)
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
    return _Analysis(None, syms, tuple(segments), samples, None, None, False, True)


# --------------------------------------------------------------------------------------------
# Derivation engine
# --------------------------------------------------------------------------------------------


def _engine(spec: MechanismSpec, strategy: str, timeout: float | None) -> _Engine:
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    if timeout is not None and not (isinstance(timeout, int | float) and timeout > 0):
        raise ValueError(f"symbolic_timeout must be > 0 seconds or None, got {timeout!r}")
    # "symbolic" does the same work as "auto" and only raises afterwards: share the engine.
    kind = "quadrature" if strategy == "quadrature" else "auto"
    key = (spec, kind, timeout)
    eng = _ENGINES.get(key)
    if eng is None:
        eng = _ENGINES[key] = _Engine(spec, kind, timeout)
    return eng


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


def _mp_lambdify(args: list, expr: sp.Expr):
    return sp.lambdify(args, expr, modules="mpmath")


class _Engine:
    """Incremental derivation state for one (spec, strategy, timeout)."""

    def __init__(self, spec: MechanismSpec, strategy: str, timeout: float | None) -> None:
        self.spec = spec
        self.an = _analysis(spec)
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
        self._lam: dict[tuple, Any] = {}
        self._nodes: dict[tuple, dict] = {}
        self._numeric: dict[tuple, CumulantResult] = {}
        if strategy != "quadrature" and not _limit_enforceable() and timeout is not None:
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
            with _time_limit(self.timeout):
                if seg.atom:
                    r = seg.pllr**k * sp.integrate(self._weight(m, seg), (x, seg.lower, seg.upper),
                                                   conds="none")
                else:
                    r = sp.integrate(integrand, (x, seg.lower, seg.upper), conds="none")
        except _TimeoutError:
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
            quad, _ = self._quad_raw(m, i, k, ref, _VERIFY_DPS + GUARD_DIGITS)
            try:
                closed = self._closed_value(key, ref, _VERIFY_DPS + GUARD_DIGITS)
            except Exception as exc:  # lambdify output may lack a function (NameError, ...)
                self.pieces[key] = None
                self.notes[key] = (f"sympy's closed form cannot be evaluated numerically "
                                   f"({type(exc).__name__}: {exc}): discarded")
                new_fail.append(key)
                continue
            tol = mpmath.mpf(10) ** (-(_VERIFY_DPS // 2)) * max(1, abs(quad))
            if not abs(closed - quad) <= tol:
                self.pieces[key] = None
                self.notes[key] = (
                    f"sympy's closed form disagrees with quadrature at {_fmt_vals(ref)} "
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
            ks.append(_tidy(expr))

    def _symbolic_identities(self) -> tuple[IdentityCheck, ...]:
        out = []
        segs = self.an.segments
        for m, name in (("P", "P normalized"), ("Q", "Q normalized")):
            m0 = self._moment_expr(m, 0)
            if m0 is not None and _is_zero(m0 - 1):
                out.append(IdentityCheck(name, 0.0, 0.0, "symbolic", True))
        normalized = {c.name for c in out}
        ok_x = all(_is_zero(s.p * sp.exp(s.pllr) - s.q) for s in segs)
        if ok_x and "Q normalized" in normalized:
            out.append(IdentityCheck("K_X(1) = 0", 0.0, 0.0, "symbolic", True))
        ok_y = all(_is_zero(s.q * sp.exp(-s.pllr) - s.p) for s in segs)
        if ok_y and "P normalized" in normalized:
            out.append(IdentityCheck("K_Y(-1) = 0", 0.0, 0.0, "symbolic", True))
        return tuple(out)

    def derivation(self, order: int) -> Derivation:
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

    # -- numerics ---------------------------------------------------------------------------

    def _args(self) -> list:
        return [self.an.x, *self.an.param_syms] if self.an.x is not None else list(
            self.an.param_syms)

    def _fn(self, key: tuple, expr_fn) -> Any:
        fn = self._lam.get(key)
        if fn is None:
            fn = self._lam[key] = _mp_lambdify(self._args(), expr_fn())
        return fn

    def _closed_value(self, key: tuple[str, int, int], vals: dict, prec_dps: int):
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

    def _quad_raw(self, m: str, i: int, k: int, vals: dict, prec_dps: int):
        seg = self.an.segments[i]
        if seg.is_point:
            return self._closed_value((m, i, k), vals, prec_dps), mpmath.mpf(0)
        if m == "P":
            return self._quad(i, vals, prec_dps, lambda p, q, L: p * L**k)
        return self._quad(i, vals, prec_dps, lambda p, q, L: q * L**k)

    def evaluate(self, deriv: Derivation, vals: dict, dps: int) -> CumulantResult:
        order = deriv.order
        key = (tuple(sorted(vals.items())), dps)
        cached = self._numeric.get(key)
        if cached is not None and cached.order >= order:
            return _truncate(cached, order)
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
                if _has_float(self.spec):
                    hint = ("; the spec contains floating-point constants, which carry only "
                            "~16 digits: write them exactly (sympy.Rational, sympy.gamma(...)) "
                            "or ask for fewer digits (dps)")
                raise ValueError(
                    f"{self.spec.name}: {what} is not normalized at {_fmt_vals(vals)}: its "
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
        identities = self._numeric_identities(vals, dps, kx[0], ky[0], moments)
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
                    quad_raw[(i, k)], e = self._quad_raw(m, i, k, vals, wp)
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
                            raw[(i, k)] = self._closed_value((m, i, k), vals, prec)
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

    def _numeric_identities(self, vals: dict, dps: int, k1x, k1y,
                            moments: dict) -> tuple[IdentityCheck, ...]:
        """Identity checks at ``vals``: symbolic ones from the derivation, the rest by
        quadrature; the KL integrals use the original, unsplit densities."""
        wp = dps // 2 + GUARD_DIGITS  # the tolerance is 10^-(dps/2): no need for full dps
        tol = mpmath.mpf(10) ** (-(dps // 2))
        method = f"numeric (mpmath quadrature, dps={dps // 2 + GUARD_DIGITS // 2})"
        out = list(self.identities or ())
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


def _fmt_vals(vals: dict) -> str:
    return ", ".join(f"{k}={v:.6g}" for k, v in vals.items()) or "(no parameters)"


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


def _truncate(res: CumulantResult, order: int) -> CumulantResult:
    if res.order == order:
        return res
    return CumulantResult(
        mechanism=res.mechanism, values=res.values, order=order, dps=res.dps,
        x=res.x[:order], y=res.y[:order], x_exprs=res.x_exprs[:order],
        y_exprs=res.y_exprs[:order], provenance_x=res.provenance_x[:order],
        provenance_y=res.provenance_y[:order], identities=res.identities,
        warnings=res.warnings,
    )

