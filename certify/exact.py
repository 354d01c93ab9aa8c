r"""Certified exact privacy profiles: Gaussian (GDP) and pure-DP (binomial / enumeration) families.

Every number here is an Arb ball (outward rounded, python-flint) or an exact rational; results
are :class:`~certify.bound.Bound` enclosures of the *exact* answer, never of a float
approximation of it.

Families (MATH.md sections 1-2):

* **Gaussian** (``exact-gdp``). Gaussian steps compose exactly,
  :math:`G_{\mu_1}\otimes G_{\mu_2} = G_{\sqrt{\mu_1^2+\mu_2^2}}`, so m_i copies of
  :math:`\mu_i`-GDP give :math:`\mu^2 = \sum_i m_i \mu_i^2` (Dong, Roth, Su, *Gaussian
  Differential Privacy*, JRSS-B 2022, arXiv:1905.02383 = GDP, Cor. 3.3), and the privacy profile of
  :math:`G_\mu` is (GDP Cor. 2.13)

  .. math::

      \delta_\mu(\varepsilon) = \Phi\Bigl(-\frac{\varepsilon}{\mu} + \frac{\mu}{2}\Bigr)
          - e^{\varepsilon}\,\Phi\Bigl(-\frac{\varepsilon}{\mu} - \frac{\mu}{2}\Bigr),
      \qquad \Phi(x) = \tfrac12 \operatorname{erfc}(-x/\sqrt2),

  evaluated with Arb's rigorous ``erfc``. The difference cancels for large eps, but only by
  :math:`\log_2((a+\mu)/\mu)` bits (:math:`a = \varepsilon/\mu - \mu/2`); in Arb cancellation
  widens the ball, never falsifies it, and the precision is raised until the requested relative
  width is met.

* **Homogeneous pure DP** (``exact-binomial``). n steps that are (eps0, 0)-DP are dominated by
  randomized response, whose composed PLLR is :math:`S = (2j - n)\varepsilon_0` with
  :math:`j \sim \mathrm{Bin}(n, q)` under Q, :math:`q = t/(1+t)`, :math:`t = e^{\varepsilon_0}`
  (Kairouz, Oh, Viswanath, *The Composition Theorem for Differential Privacy*, ICML 2015,
  arXiv:1311.0776 = KOV, Thm 3.3):

  .. math::

      \delta(\varepsilon) = \sum_{j:\,(2j-n)\varepsilon_0 > \varepsilon}
          \binom{n}{j}\frac{t^j}{(1+t)^n}\bigl(1 - e^{\varepsilon - (2j-n)\varepsilon_0}\bigr).

  When :math:`t` is rational (``eps0 = RationalExp(t)``) the masses are exact rationals and so
  is :math:`\delta` at any eps with rational :math:`e^\varepsilon` (KOV's integer polynomial
  :math:`(1+t)^n\delta(k\varepsilon_0) = \sum_{2j-n>k}\binom{n}{j}(t^j - t^{n-j+k})`); otherwise
  the masses are Arb balls (n up to :data:`MAX_BINOMIAL_STEPS`).

* **Heterogeneous pure DP** (``exact-enumeration``). Exact composition of distinct eps_i is
  #P-hard in general (Murtagh, Vadhan, *The Complexity of Computing the Optimal Composition of
  Differential Privacy*, TCC 2016), but small cases are exact by enumerating the outcome classes
  :math:`(j_1, \dots, j_r)` (j_i '+' outcomes among the m_i steps with parameter eps_i), i.e. the
  convolution of the r binomial lattices: :math:`S = \sum_i (2j_i - m_i)\varepsilon_i`,
  :math:`Q = \prod_i \mathrm{Bin}(j_i; m_i, q_i)`, at most :data:`MAX_OUTCOME_CLASSES` classes.

* **Delta parts** of (eps, delta)-DP steps, modelled by their worst case
  :math:`f_{\varepsilon,\delta} = f_{\varepsilon,0}\otimes f_{0,\delta}` (GDP Eq. 11), compose
  exactly: :math:`d = 1 - \prod_i (1-\delta_i)^{m_i}` (Eq. 12) and
  :math:`\delta'(\varepsilon) = d + (1-d)\,\delta(\varepsilon)` (Eq. 13); ``d`` is an exact
  rational when the inputs are rational and small, else an Arb ball
  :math:`-\operatorname{expm1}(\sum_i m_i \log1p(-\delta_i))`.

Pure profiles are evaluated in the Q-only form on the sorted support :math:`s_0 < s_1 < \dots` of
S: with ``k`` the first index with :math:`s_k > \varepsilon` (decided by a certified comparison;
an undecidable comparison raises :class:`~certify.engine.UndecidableError`, which makes
:func:`~certify.engine.adaptive` retry at a higher precision and is re-raised at the cap),

.. math::

    \delta(\varepsilon) = Q_k\,\bigl(-\operatorname{expm1}(\varepsilon - s_k)\bigr)
        + A_{k+1} - e^{\varepsilon} B_{k+1},
    \qquad A_i = \sum_{c \ge i} Q_c, \quad B_i = \sum_{c \ge i} Q_c e^{-s_c} = P(S \ge s_i).

Inversion :math:`\varepsilon(\delta) = \inf\{\varepsilon \ge 0 : \delta(\varepsilon) \le
\delta\}`: on the segment :math:`(s_{k-1}, s_k]` found by a certified search over the support,
:math:`\delta(\varepsilon) = A_k - e^\varepsilon B_k` exactly, so
:math:`\varepsilon = \log((A_k - \delta)/B_k)` is enclosed in one Arb evaluation. For the
Gaussian family a certified bracket :math:`[a, b]` with :math:`\delta(a) > \delta \ge \delta(b)`
(each end proven by a ball comparison) is shrunk by bisection accelerated by log-space Newton
proposals. Since :math:`\delta(\varepsilon)` is non-increasing (strictly where positive), every
returned ``lo`` has :math:`\delta(lo) > \delta` and every ``hi`` has :math:`\delta(hi) \le \delta`.

Inputs are exact reals: a binary64 float means its exact dyadic value, ``int``/``Fraction``/decimal
``str`` are exact rationals, :class:`RationalExp` is :math:`\log t` for rational ``t`` and
:class:`ArbReal` is any real given by a function that encloses it at the current Arb precision.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from flint import arb, ctx, fmpq, fmpz

from .bound import Bound
from .engine import (
    DEFAULT_PRECISION,
    MAX_PRECISION,
    Endpoint,
    UndecidableError,
    adaptive,
    certainly_less,
    endpoints,
    workprec,
)

__all__ = [
    "MAX_BINOMIAL_STEPS",
    "MAX_OUTCOME_CLASSES",
    "ArbReal",
    "ExactComposition",
    "RationalExp",
    "RealLike",
    "exact_composition",
    "exact_delta_bound",
    "exact_delta_rational",
    "exact_epsilon_bound",
    "gaussian_dp",
    "pure_dp",
]

MAX_BINOMIAL_STEPS = 10**5
"""Largest n for the homogeneous (binomial) pure-DP family (O(n) Arb operations)."""

MAX_OUTCOME_CLASSES = 1 << 18
"""Largest number of outcome classes prod_i (m_i + 1) enumerated for heterogeneous pure DP."""

_EXACT_BIT_BUDGET = 1 << 27  # classes x bits per exact integer mass (~16 MB per array)
_DELTA_PART_BIT_BUDGET = 1 << 16  # bits of the exact rational 1 - prod (1 - delta_i)^m_i
_MAX_COUNT = 10**15
_MAX_EXACT_CHARS = 2000  # longer exact rationals: use exact_delta_rational
_DEFAULT_REL_WIDTH = 1e-30

_A_GAUSS = (
    "Gaussian steps compose exactly to mu-GDP with mu^2 = sum m_i mu_i^2 (GDP Cor. 3.3); "
    "delta_mu is the exact privacy profile of G_mu (GDP Cor. 2.13)"
)
_A_PURE = (
    "(eps0, 0)-DP steps modelled by randomized response, their worst case f_{eps0,0} "
    "(KOV Thm 3.3; GDP Prop. 2.5)"
)
_A_DELTA = (
    "ApproxDP steps modelled by their worst case f_{eps,delta} = f_{eps,0} (x) f_{0,delta}; "
    "delta parts composed exactly (GDP Eq. 11-13)"
)
_A_ENUM = (
    "heterogeneous pure-DP composition by exact enumeration of the outcome classes "
    "(exact composition is #P-hard in general, Murtagh-Vadhan 2016)"
)
_A_INPUTS = "inputs taken as exact reals (binary64 floats as their exact dyadic values)"
_A_SYMMETRIC = "symmetric pairs: the P||Q profile is the profile of the composition"


# ---------------------------------------------------------------------------------------------
# Exact reals
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RationalExp:
    r"""The real number :math:`\log t` for a rational ``t > 0``: a value whose exponential is exact.

    ``RationalExp(2)`` is :math:`\ln 2`; as a per-step eps0 it makes the binomial masses
    :math:`\binom{n}{j} t^j/(1+t)^n` exact rationals (KOV's integer polynomial), and as an eps it
    makes :math:`e^\varepsilon` exact, so delta is returned as an exact rational.

    Args:
        t: A positive rational (``int``, ``Fraction``, decimal/ratio ``str`` or float).
    """

    t: Fraction

    def __post_init__(self) -> None:
        t = _to_fraction(self.t, "RationalExp.t")
        if t is None or not t > 0:
            raise ValueError(f"RationalExp needs a rational t > 0, got {self.t!r}")
        object.__setattr__(self, "t", t)

    def __str__(self) -> str:
        return f"log({self.t})"


@dataclass(frozen=True, eq=False)
class ArbReal:
    r"""A real number given by a function that encloses it at the current Arb precision.

    ``compute()`` is called inside a precision context (``flint.ctx.prec``) and must return an
    ``arb`` ball containing the number, tighter as the precision grows (e.g.
    ``lambda: arb(fmpq(1, 10)).sqrt()``). Two ``ArbReal`` objects are the same number only if
    they are the same object.

    Args:
        compute: Zero-argument function returning the enclosing ball.
        label: Human-readable name used in ``Bound.inputs``.
    """

    compute: Callable[[], arb]
    label: str = "ArbReal"

    @classmethod
    def sqrt(cls, q: int | Fraction | str) -> ArbReal:
        """The square root of a non-negative rational, e.g. ``ArbReal.sqrt(Fraction(1, 10))``."""
        f = _to_fraction(q, "q")
        if f is None or f < 0:
            raise ValueError(f"ArbReal.sqrt needs a rational >= 0, got {q!r}")
        return cls(lambda: _arb_q(f).sqrt(), f"sqrt({f})")

    def __str__(self) -> str:
        return self.label


RealLike = float | int | Fraction | str | RationalExp | ArbReal | arb
"""Exact-real inputs: floats are their binary64 values, ``str`` is read as an exact decimal."""


def _to_fraction(x: object, name: str) -> Fraction | None:
    """Exact rational value of ``x`` (None if it is not an exact rational input)."""
    if isinstance(x, bool):
        raise ValueError(f"{name} must be a real number, got {x!r}")
    if isinstance(x, Fraction):
        return x
    if isinstance(x, fmpq):
        return Fraction(int(x.p), int(x.q))
    if isinstance(x, fmpz):
        return Fraction(int(x))
    if isinstance(x, numbers.Integral):
        return Fraction(int(x))
    if isinstance(x, numbers.Real) and not isinstance(x, arb):
        f = float(x)
        if not math.isfinite(f):
            raise ValueError(f"{name} must be finite, got {x!r}")
        return Fraction(f)
    if isinstance(x, str):
        try:
            return Fraction(x.strip())
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"{name}: cannot read {x!r} as an exact rational") from None
    return None


def _arb_q(f: Fraction) -> arb:
    """Ball of a rational at the current precision (exact when dyadic and short)."""
    if f.denominator == 1:
        return arb(fmpz(f.numerator))
    return arb(fmpq(f.numerator, f.denominator))


def _short(f: Fraction, chars: int) -> bool:
    """True if ``str(f)`` has at most ``chars`` characters (checked without converting)."""
    bits = f.numerator.bit_length() + f.denominator.bit_length()
    return bits <= 3 * chars and len(str(f)) <= chars


def _arb_ratio(num: int, den: int) -> arb:
    return arb(fmpz(num)) / arb(fmpz(den))


class _Real:
    """A normalized exact real: rational, log of a rational, or an Arb-enclosed real."""

    __slots__ = ("_compute", "exp_rational", "fixed", "key", "label", "rational")

    def __init__(self, x: object, name: str) -> None:
        self.rational: Fraction | None = None
        self.exp_rational: Fraction | None = None
        self._compute: Callable[[], arb] | None = None
        self.fixed = False
        if isinstance(x, tuple) and len(x) == 2 and x[0] == "log":
            x = RationalExp(x[1])
        if isinstance(x, RationalExp):
            self.exp_rational = x.t
            if x.t == 1:
                self.rational = Fraction(0)
            self.label = str(x)
            self.key: tuple = ("e", x.t) if x.t != 1 else ("q", Fraction(0))
        elif isinstance(x, ArbReal):
            self._compute = x.compute
            self.label = x.label
            self.key = ("id", id(x))
        elif isinstance(x, arb):
            if not x.is_finite():
                raise ValueError(f"{name} must be a finite ball, got {x}")
            self._compute = lambda: x
            self.fixed = True
            self.label = x.str(radius=True)
            self.key = ("id", id(x))
        else:
            f = _to_fraction(x, name)
            if f is None:
                raise ValueError(
                    f"{name} must be a real (float, int, Fraction, str, RationalExp, ArbReal or "
                    f"arb), got {x!r}"
                )
            self.rational = f
            self.label = repr(x) if isinstance(x, float) else str(f)
            self.key = ("q", f)
        if self.rational == 0:
            self.exp_rational = Fraction(1)

    def ball(self) -> arb:
        """Enclosure at the current Arb precision."""
        if self.rational is not None:
            return _arb_q(self.rational)
        if self.exp_rational is not None:
            return _arb_q(self.exp_rational).log()
        ball = self._compute()  # type: ignore[misc]
        if not isinstance(ball, arb):
            raise ValueError(f"ArbReal {self.label!r} returned {type(ball).__name__}, not arb")
        return ball

    def sign(self) -> int:
        """Certified sign (-1, 0, +1); raises UndecidableError for a ball straddling 0."""
        if self.rational is not None:
            return (self.rational > 0) - (self.rational < 0)
        if self.exp_rational is not None:
            return (self.exp_rational > 1) - (self.exp_rational < 1)
        b = self.ball()
        if b > 0:
            return 1
        if b < 0:
            return -1
        if b.is_zero():
            return 0
        raise UndecidableError(f"cannot decide the sign of {self.label} ({b})")

    def square(self) -> _Real:
        """The real x^2 (exact for rationals)."""
        if self.rational is not None:
            return _Real(self.rational**2, self.label)
        return _Real(ArbReal(lambda: self.ball() ** 2, f"({self.label})^2"), self.label)

    def __repr__(self) -> str:
        return f"_Real({self.label})"


def _as_real(x: object, name: str) -> _Real:
    return x if isinstance(x, _Real) else _Real(x, name)


def _check_count(name: str, count: object) -> int:
    if isinstance(count, bool) or not isinstance(count, numbers.Integral):
        raise ValueError(f"{name} must be a whole number, got {count!r}")
    c = int(count)
    if not 1 <= c <= _MAX_COUNT:
        raise ValueError(f"{name} must lie in [1, {_MAX_COUNT}], got {c}")
    return c


# ---------------------------------------------------------------------------------------------
# Compositions with an exact answer
# ---------------------------------------------------------------------------------------------


def _merge(terms: Iterable[tuple[object, object]], name: str) -> tuple[tuple[_Real, int], ...]:
    merged: dict[tuple, tuple[_Real, int]] = {}
    for i, term in enumerate(terms):
        if not (isinstance(term, tuple) and len(term) == 2):
            raise ValueError(f"{name}[{i}] must be a (value, count) pair, got {term!r}")
        value = _as_real(term[0], f"{name}[{i}] value")
        count = _check_count(f"{name}[{i}] count", term[1])
        if value.key in merged:
            merged[value.key] = (merged[value.key][0], merged[value.key][1] + count)
        else:
            merged[value.key] = (value, count)
    return tuple(merged.values())


@dataclass(frozen=True, eq=False)
class ExactComposition:
    r"""A composition with an exact privacy profile, its parameters held as exact reals.

    Build it with :func:`gaussian_dp` / :func:`pure_dp` (combined with ``+``), directly, or from a
    ``numeric`` composition with :func:`exact_composition`. Equal parameters are merged.

    Attributes:
        gaussian: ``(mu_i, m_i)`` pairs: m_i copies of mu_i-GDP (e.g. Gaussian noise, mu_i =
            sensitivity/sigma).
        pure: ``(eps0_i, m_i)`` pairs with eps0_i > 0: m_i copies of (eps0_i, 0)-DP.
        delta_parts: ``(delta_i, m_i)`` pairs with delta_i in [0, 1): the f_{0,delta_i} factors of
            (eps, delta)-DP steps (GDP Eq. 11).
        notes: Extra assumptions recorded by the builder (copied into every ``Bound``).

    With no terms at all the composition is the identity (delta(eps) = 0 for eps >= 0).

    Raises:
        ValueError: for invalid parameters or a mix of Gaussian and pure-DP steps (no exact
            answer).
    """

    gaussian: tuple[tuple[Any, int], ...] = ()
    pure: tuple[tuple[Any, int], ...] = ()
    delta_parts: tuple[tuple[Any, int], ...] = ()
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        g = _merge(self.gaussian, "gaussian")
        p = _merge(self.pure, "pure")
        d = _merge(self.delta_parts, "delta_parts")
        with workprec(DEFAULT_PRECISION):
            for v, _ in g:
                if _decide(v.sign) <= 0:
                    raise ValueError(f"Gaussian mu must be > 0, got {v.label}")
            for v, _ in p:
                if _decide(v.sign) <= 0:
                    raise ValueError(f"pure-DP eps0 must be > 0, got {v.label}")
            for v, _ in d:
                if v.rational is None:
                    raise ValueError(f"delta parts must be exact rationals, got {v.label}")
                if not 0 <= v.rational < 1:
                    raise ValueError(f"delta parts must lie in [0, 1), got {v.label}")
        d = tuple((v, c) for v, c in d if v.rational != 0)
        if g and p:
            raise ValueError(
                "no exact answer for a mix of Gaussian and pure-DP steps (the composed PLLR is "
                "neither Gaussian nor a lattice); use the other certified "
                "methods (lattice, EEAI, Chernoff) instead"
            )
        object.__setattr__(self, "gaussian", g)
        object.__setattr__(self, "pure", p)
        object.__setattr__(self, "delta_parts", d)
        object.__setattr__(self, "notes", tuple(self.notes))

    def __add__(self, other: ExactComposition) -> ExactComposition:
        if not isinstance(other, ExactComposition):
            return NotImplemented
        return ExactComposition(
            self.gaussian + other.gaussian,
            self.pure + other.pure,
            self.delta_parts + other.delta_parts,
            tuple(dict.fromkeys(self.notes + other.notes)),
        )

    @property
    def family(self) -> str:
        """``"gaussian"``, ``"binomial"`` (one eps0 or none) or ``"enumeration"``."""
        if self.gaussian:
            return "gaussian"
        return "binomial" if len(self.pure) <= 1 else "enumeration"

    @property
    def method(self) -> str:
        """Method name reported in a ``Bound``."""
        return {"gaussian": "exact-gdp", "binomial": "exact-binomial"}.get(
            self.family, "exact-enumeration"
        )

    def describe(self) -> str:
        """Human-readable summary, e.g. ``10 x pure(eps0=sqrt(1/10))``."""
        parts = [f"{c} x gdp(mu={v.label})" for v, c in self.gaussian]
        parts += [f"{c} x pure(eps0={v.label})" for v, c in self.pure]
        parts += [f"{c} x delta_part({v.label})" for v, c in self.delta_parts]
        return " + ".join(parts)

    def assumptions(self) -> tuple[str, ...]:
        """Every assumption a bound for this composition relies on."""
        out = [_A_INPUTS, _A_SYMMETRIC]
        if self.gaussian:
            out.append(_A_GAUSS)
        if self.pure:
            out.append(_A_PURE)
        if len(self.pure) > 1:
            out.append(_A_ENUM)
        if self.delta_parts:
            out.append(_A_DELTA)
        return tuple(dict.fromkeys([*out, *self.notes]))


def gaussian_dp(mu: RealLike, count: int = 1) -> ExactComposition:
    """``count`` copies of mu-GDP (Gaussian mechanism with mu = sensitivity / sigma)."""
    return ExactComposition(gaussian=((mu, count),))


def pure_dp(eps0: RealLike, count: int = 1, delta: RealLike = 0) -> ExactComposition:
    """``count`` copies of (eps0, delta)-DP, modelled by f_{eps0,delta} (GDP Eq. 11).

    ``eps0 = 0`` gives delta parts only. ``delta`` must be an exact rational (float, int,
    Fraction or decimal string).
    """
    e = _as_real(eps0, "eps0")
    pure = () if e.rational == 0 else ((e, count),)
    d = _as_real(delta, "delta")
    parts = () if d.rational == 0 else ((d, count),)
    return ExactComposition(pure=pure, delta_parts=parts)


def exact_composition(composition: object) -> ExactComposition:
    """The exact model of a composition, refusing compositions without an exact answer.

    Accepts an :class:`ExactComposition` (returned as is) or anything
    :func:`numeric.composition.compose` accepts. Gaussian steps give mu = sensitivity / sigma
    taken exactly from the binary64 inputs (not the rounded float quotient); randomized response
    and ``ApproxDP(eps, delta)`` give pure (eps, 0) steps and delta parts (GDP Eq. 11).

    Raises:
        ValueError: naming the mechanism or mix that has no exact answer (e.g. the Poisson-
            subsampled Gaussian, Laplace, Gaussian mixed with pure DP).
    """
    if isinstance(composition, ExactComposition):
        return composition
    from numeric.composition import compose
    from numeric.mechanisms.gaussian import Gaussian

    comp = compose(composition)
    gauss: list[tuple[object, int]] = []
    pure: list[tuple[object, int]] = []
    deltas: list[tuple[object, int]] = []
    notes: list[str] = []
    for mech, count in comp.terms:
        fam = mech.exact_family()
        if fam is None:
            raise ValueError(
                f"no exact answer for {type(mech).__name__}: exact certified profiles exist for "
                "Gaussian and pure/approximate-DP (randomized response) compositions only; the "
                "other certified methods (lattice, EEAI, Chernoff) still apply"
            )
        kind, param = fam
        if kind == "gaussian":
            if isinstance(mech, Gaussian):
                gauss.append((Fraction(mech.sensitivity) / Fraction(mech.sigma), count))
                notes.append("Gaussian mu_i = sensitivity_i / sigma_i exactly (binary64 inputs)")
            else:
                gauss.append((ArbReal(_sqrt_of(Fraction(param)), f"sqrt({param!r})"), count))
        elif kind == "pure":
            if param > 0:
                pure.append((float(param), count))
            if mech.delta_part > 0:
                deltas.append((float(mech.delta_part), count))
        else:
            raise ValueError(f"unknown exact family {kind!r} of {type(mech).__name__}")
    return ExactComposition(tuple(gauss), tuple(pure), tuple(deltas), tuple(notes))


def _sqrt_of(f: Fraction) -> Callable[[], arb]:
    return lambda: _arb_q(f).sqrt()


# ---------------------------------------------------------------------------------------------
# Precision helpers
# ---------------------------------------------------------------------------------------------


def _decide(fn: Callable[[], int]) -> int:
    """Evaluate a certified integer-valued decision, raising precision while undecidable."""
    out, _ = adaptive(lambda: arb(fn()), start=ctx.prec, accept=lambda _x: True)
    return int(out.unique_fmpz())


def _ball(x: Fraction | arb) -> arb:
    return _arb_q(x) if isinstance(x, Fraction) else x


def _lt(a: Fraction | arb, b: Fraction | arb) -> bool:
    """Certified a < b (exact for rationals); UndecidableError if the balls overlap."""
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a < b
    return certainly_less(_ball(a), _ball(b))


def _rel_bits(rel_width: float) -> int:
    if not (isinstance(rel_width, numbers.Real) and 0 < float(rel_width) < 1):
        raise ValueError(f"rel_width must lie in (0, 1), got {rel_width!r}")
    return max(8, math.ceil(-math.log2(float(rel_width))) + 1)


# ---------------------------------------------------------------------------------------------
# Delta parts (GDP Eq. 12-13)
# ---------------------------------------------------------------------------------------------


class _DeltaPart:
    r"""d = 1 - prod_i (1 - delta_i)^{m_i}: exact rational when small, else an Arb ball."""

    def __init__(self, terms: tuple[tuple[_Real, int], ...]) -> None:
        self.terms = terms
        self.zero = not terms
        self.exact: Fraction | None = Fraction(0) if not terms else None
        bits = sum(
            c * (v.rational.numerator.bit_length() + v.rational.denominator.bit_length())
            for v, c in terms
        )
        if terms and bits <= _DELTA_PART_BIT_BUDGET:
            prod = Fraction(1)
            for v, c in terms:
                prod *= (1 - v.rational) ** c
            self.exact = 1 - prod

    def value(self) -> Fraction | arb:
        if self.exact is not None:
            return self.exact
        s = arb(0)
        for v, c in self.terms:
            s += arb(fmpz(c)) * (-_arb_q(v.rational)).log1p()
        return -s.expm1()

    def label(self) -> str:
        """Short description: the exact rational if short, else ~25 significant digits."""
        if self.exact is not None and _short(self.exact, 60):
            return str(self.exact)
        with workprec(DEFAULT_PRECISION):
            return _ball(self.value()).str(25, radius=False)


def _combine(d: Fraction | arb, v: Fraction | arb) -> Fraction | arb:
    """delta' = d + (1 - d) delta (GDP Eq. 13)."""
    if isinstance(d, Fraction) and isinstance(v, Fraction):
        return d + (1 - d) * v
    if isinstance(d, Fraction) and d == 0:
        return v
    db = _ball(d)
    return db + (1 - db) * _ball(v)


# ---------------------------------------------------------------------------------------------
# Gaussian profile (GDP Cor. 2.13, Cor. 3.3)
# ---------------------------------------------------------------------------------------------


class _GaussianProfile:
    method = "exact-gdp"

    def __init__(self, terms: tuple[tuple[_Real, int], ...]) -> None:
        self.terms = terms
        sq = [(v.square(), c) for v, c in terms]
        if all(s.rational is not None for s, _ in sq):
            total = sum((s.rational * c for s, c in sq), Fraction(0))
            self.mu2: _Real = _Real(total, "mu^2")
        else:
            self.mu2 = _Real(
                ArbReal(lambda: sum((s.ball() * c for s, c in sq), arb(0)), "mu^2"), "mu^2"
            )

    def mu(self) -> arb:
        return self.mu2.ball().sqrt()

    def delta(self, eps: arb) -> arb:
        r"""delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
        mu = self.mu()
        r2 = arb(2).sqrt()
        a = eps / mu
        h = mu / 2
        # Phi(x) = erfc(-x / sqrt 2) / 2
        return ((a - h) / r2).erfc() / 2 - eps.exp() * ((a + h) / r2).erfc() / 2

    def slope(self, eps: arb) -> arb:
        r"""d delta_mu / d eps = -e^eps Phi(-eps/mu - mu/2)."""
        mu = self.mu()
        return -eps.exp() * ((eps / mu + mu / 2) / arb(2).sqrt()).erfc() / 2

    def delta_at(self, eps: _Real) -> Fraction | arb:
        return self.delta(eps.ball())

    def smax(self) -> None:
        return None  # delta_mu(eps) > 0 for every eps

    def invert(self, tau: Fraction | arb, rel_width: float) -> arb:
        """Certified bracket [a, b] of eps* with delta(a) > tau >= delta(b), as a ball."""
        tb = _ball(tau)

        def classify(x: arb) -> int:
            v = self.delta(x)
            if v > tb:
                return 1
            if v <= tb:
                return -1
            return 0

        a = arb(0)  # delta(0) > tau was established by the caller
        b = arb(1)
        for _ in range(4 * MAX_PRECISION):
            c = classify(b)
            if c < 0:
                break
            if c == 0:
                raise UndecidableError(f"cannot place eps = {b} against delta = {tb}")
            a, b = b, b * 2
        else:  # pragma: no cover - delta_mu decays, the loop always ends
            raise UndecidableError("no upper bracket for eps found")

        x = ((a + b) / 2).mid()
        log_tau = tb.log()
        widths: list[arb] = []
        for _ in range(2000):
            target = arb(rel_width) * (a if a > 0 else x)
            if b - a <= target:
                break
            h = (target / 4).mid()
            v = self.delta(x)
            c = 1 if v > tb else -1 if v <= tb else 0
            if c > 0:
                a = x
            elif c < 0:
                b = x
            # log-space Newton proposal: g = log delta - log tau, g' = delta'/delta
            xn = None
            if v > 0:
                step = -(v.log() - log_tau) * v / self.slope(x)
                if step.is_finite():
                    xn = (x + step).mid()
            if c == 0 or (xn is not None and abs(xn - x) <= h):
                centre = x if c == 0 or xn is None else xn
                lo, hi = (centre - h).mid(), (centre + h).mid()
                done = True
                for p in (lo, hi):
                    if a < p < b:
                        cp = classify(p)
                        if cp > 0:
                            a = p
                        elif cp < 0:
                            b = p
                        else:
                            done = False
                if not done:
                    return a.union(b)  # precision too low to separate: caller raises it
                if b - a <= target:
                    break
            widths.append(b - a)
            stalled = len(widths) >= 3 and not widths[-1] < widths[-3] / 2
            if xn is None or not (a < xn < b) or stalled:
                xn = ((a + b) / 2).mid()
                widths.clear()
            x = xn
        return a.union(b)


# ---------------------------------------------------------------------------------------------
# Pure-DP lattice (KOV Thm 3.3; enumeration after Murtagh-Vadhan)
# ---------------------------------------------------------------------------------------------


class _PureProfile:
    r"""Sorted support s_0 < ... < s_{N-1} of the composed PLLR with Q and P masses.

    Outcome classes are the count vectors (j_1, ..., j_r), enumerated in mixed-radix order
    (``raw`` index) by iterated convolution of the per-step-type binomials; classes with exactly
    equal support value are merged into one support point (a *group*).
    """

    def __init__(self, terms: tuple[tuple[_Real, int], ...]) -> None:
        self.terms = terms
        self.eps = [v for v, _ in terms]
        self.m = [c for _, c in terms]
        self.r = len(terms)
        self.method = "exact-binomial" if self.r <= 1 else "exact-enumeration"
        if self.r == 1 and self.m[0] > MAX_BINOMIAL_STEPS:
            raise ValueError(
                f"exact binomial composition supports up to {MAX_BINOMIAL_STEPS} steps in "
                f"certify, got {self.m[0]}"
            )
        n_classes = math.prod(c + 1 for c in self.m)
        if self.r > 1 and n_classes > MAX_OUTCOME_CLASSES:
            raise ValueError(
                f"exact heterogeneous pure-DP composition enumerates prod(m_i + 1) = {n_classes} "
                f"outcome classes, above the limit {MAX_OUTCOME_CLASSES} (the problem is #P-hard "
                "in general, Murtagh-Vadhan 2016); use the other certified "
                "methods (lattice, EEAI, Chernoff) instead"
            )
        if all(v.exp_rational is not None for v in self.eps):
            self.order = "exp"  # keys e^{s_c}: exact rationals
        elif all(v.rational is not None for v in self.eps):
            self.order = "rat"  # keys s_c: exact rationals
        else:
            self.order = "ball"  # support ordered by certified ball comparisons
        self._exact_masses: tuple | None = None
        self._cache: dict[int, dict[str, Any]] = {}
        self.groups: list[list[int]] | None = None  # r <= 1: implicit, class c <-> j = c
        self.keys: list[Fraction] | None = None
        self.N = self.m[0] + 1 if self.r == 1 else 1
        if self.r > 1:
            self.N = n_classes  # ball mode: reset per precision after merging exact ties
            if self.order != "ball":
                self._group_exact()
        self.exact_ok = self.order == "exp" and self._exact_budget_ok()

    # -- classes -------------------------------------------------------------------------------
    def _kvec(self, jvec: Sequence[int]) -> tuple[int, ...]:
        return tuple(2 * j - m for j, m in zip(jvec, self.m, strict=True))

    def _decode(self, raw: int) -> tuple[int, ...]:
        """Count vector of a raw (mixed-radix, first type outermost) class index."""
        out = []
        for m in reversed(self.m):
            raw, j = divmod(raw, m + 1)
            out.append(j)
        return tuple(reversed(out))

    def _enum(self, per_type: list[list[Any]], combine: Callable[[Any, Any], Any], init: Any):
        """Values of every class in raw order: combine over types of per_type[i][j_i]."""
        cur = [init]
        for vals in per_type:
            cur = [combine(c, v) for c in cur for v in vals]
        return cur

    def _exp_key_parts(self) -> list[list[tuple[int, int]]]:
        parts = []
        for v, m in zip(self.eps, self.m, strict=True):
            p, q = v.exp_rational.numerator, v.exp_rational.denominator
            row = []
            for j in range(m + 1):
                k = 2 * j - m
                row.append((p**k, q**k) if k >= 0 else (q ** (-k), p ** (-k)))
            parts.append(row)
        return parts

    def _group_exact(self) -> None:
        """Exact support keys (s_c, or e^{s_c}), sorted, with exactly equal keys merged."""
        if self.order == "rat":
            scale = math.lcm(*(v.rational.denominator for v in self.eps))
            per = [
                [(2 * j - m) * (v.rational.numerator * (scale // v.rational.denominator))
                 for j in range(m + 1)]
                for v, m in zip(self.eps, self.m, strict=True)
            ]
            ikeys = self._enum(per, lambda a, b: a + b, 0)
            order = sorted(range(len(ikeys)), key=ikeys.__getitem__)
            keys = [Fraction(ikeys[i], scale) for i in order]
        else:
            pairs = self._enum(
                self._exp_key_parts(), lambda a, b: (a[0] * b[0], a[1] * b[1]), (1, 1)
            )
            approx = [math.log(n) - math.log(d) for n, d in pairs]
            order = sorted(range(len(pairs)), key=approx.__getitem__)
            keys = [Fraction(*pairs[i]) for i in order]
            if any(k1 > k2 for k1, k2 in itertools.pairwise(keys)):  # float order was off
                order = sorted(range(len(pairs)), key=lambda i: Fraction(*pairs[i]))
                keys = [Fraction(*pairs[i]) for i in order]
        self.groups, self.keys = [[order[0]]], [keys[0]]
        for i in range(1, len(order)):
            if keys[i] == self.keys[-1]:
                self.groups[-1].append(order[i])
            else:
                self.groups.append([order[i]])
                self.keys.append(keys[i])
        self.N = len(self.keys)

    def _group_ball(self, st: dict[str, Any]) -> list[list[int]]:
        """Sort classes by their support balls; adjacent order must be certain (else raise)."""
        per = [
            [arb(2 * j - m) * e for j in range(m + 1)]
            for e, m in zip(st["eps"], self.m, strict=True)
        ]
        balls = self._enum(per, lambda a, b: a + b, arb(0))
        order = sorted(range(len(balls)), key=lambda i: float(balls[i].mid()))
        groups = [[order[0]]]
        for i0, i1 in itertools.pairwise(order):
            s0, s1 = balls[i0], balls[i1]
            if s0.is_exact() and s1.is_exact() and s0 == s1:
                groups[-1].append(i1)  # an exactly known tie: one support point
            elif s0 < s1:
                groups.append([i1])
            else:
                raise UndecidableError(
                    f"cannot order the support points of classes {self._decode(i0)} and "
                    f"{self._decode(i1)} ({s0.str(10)}, {s1.str(10)}); equal eps_i given as "
                    "separate ArbReal values are not detected as equal (pass one object, or "
                    "RationalExp)"
                )
        return groups

    def _exact_budget_ok(self) -> bool:
        den_bits = sum(
            m * (v.exp_rational.numerator + v.exp_rational.denominator).bit_length()
            for v, m in zip(self.eps, self.m, strict=True)
        )
        return self.N * max(den_bits, 1) <= _EXACT_BIT_BUDGET

    def _groups(self, st: dict[str, Any]) -> list[list[int]] | None:
        return self.groups if self.groups is not None else st.get("groups")

    def _jvec(self, c: int, st: dict[str, Any]) -> tuple[int, ...]:
        if self.r <= 1:
            return (c,) if self.r == 1 else ()
        return self._decode(self._groups(st)[c][0])

    # -- per-precision state ------------------------------------------------------------------
    def _state(self) -> dict[str, Any]:
        prec = ctx.prec
        st = self._cache.get(prec)
        if st is None:
            st = {"eps": [v.ball() for v in self.eps]}
            if self.order == "ball" and self.r > 1:
                st["groups"] = self._group_ball(st)
                self.N = len(st["groups"])  # exactly known ties merged (same at every precision)
            self._cache = {prec: st}
        return st

    def _masses_exact(self) -> tuple[int, list[int], list[int], list[int]]:
        """Integer masses over the common denominator prod (p_i + q_i)^{m_i} (t_i = p_i/q_i)."""
        if self._exact_masses is None:
            per = []
            den = 1
            for v, m in zip(self.eps, self.m, strict=True):
                p, q = v.exp_rational.numerator, v.exp_rational.denominator
                qn = [q**m]  # C(m, j) p^j q^(m-j), exact integer recurrence
                for j in range(m):
                    qn.append(qn[-1] * (m - j) * p // ((j + 1) * q))
                per.append(qn)
                den *= (p + q) ** m
            qs, ps = self._group_masses(per, lambda a, b: a * b, 0, 1, self.groups)
            self._exact_masses = (den, qs, *self._suffix(qs, ps, 0))
        return self._exact_masses

    def _masses_ball(self, st: dict[str, Any]) -> tuple[list[arb], list[arb], list[arb]]:
        if "masses" not in st:
            per = []
            for e, m in zip(st["eps"], self.m, strict=True):
                t = e.exp()
                pmf = [(1 / (1 + t)) ** m]  # Bin(j; m, t/(1+t)) by the ratio recurrence
                for j in range(m):
                    pmf.append(pmf[-1] * t * (m - j) / (j + 1))
                per.append(pmf)
            qs, ps = self._group_masses(per, lambda a, b: a * b, arb(0), arb(1), self._groups(st))
            st["masses"] = (qs, *self._suffix(qs, ps, arb(0)))
        return st["masses"]

    def _group_masses(self, per, mul, zero, one, groups):
        """Per support point: Q mass sum prod_i Q_i(j_i) and P mass sum prod_i Q_i(m_i - j_i).

        Under P the '+' probability of a step is 1 - q_i, so P_i(j) = Q_i(m_i - j).
        """
        if self.r == 0:
            return [one], [one]
        if self.r == 1:
            return list(per[0]), list(reversed(per[0]))
        q_raw = self._enum(per, mul, one)
        p_raw = self._enum([list(reversed(v)) for v in per], mul, one)
        qs, ps = [], []
        for grp in groups:
            qsum, psum = zero, zero
            for i in grp:
                qsum, psum = qsum + q_raw[i], psum + p_raw[i]
            qs.append(qsum)
            ps.append(psum)
        return qs, ps

    @staticmethod
    def _suffix(qs: list, ps: list, zero: Any) -> tuple[list, list]:
        n = len(qs)
        sa, sb = [zero] * (n + 1), [zero] * (n + 1)
        for c in range(n - 1, -1, -1):
            sa[c] = sa[c + 1] + qs[c]
            sb[c] = sb[c + 1] + ps[c]
        return sa, sb

    def _tails(self, c: int, st: dict[str, Any]) -> tuple[Fraction | arb, Fraction | arb]:
        """A_c = Q(S >= s_c), B_c = P(S >= s_c) (exact rationals when available)."""
        if self.exact_ok:
            den, _, sa, sb = self._masses_exact()
            return Fraction(sa[c], den), Fraction(sb[c], den)
        _, sa, sb = self._masses_ball(st)
        return sa[c], sb[c]

    def _qmass(self, c: int, st: dict[str, Any]) -> arb:
        if self.exact_ok:
            den, qs, _, _ = self._masses_exact()
            return _arb_ratio(qs[c], den)
        return self._masses_ball(st)[0][c]

    # -- support values and comparisons ---------------------------------------------------------
    def s_ball(self, c: int, st: dict[str, Any]) -> arb:
        kvec = self._kvec(self._jvec(c, st))
        return sum((k * e for k, e in zip(kvec, st["eps"], strict=True)), arb(0))

    def s_key(self, c: int) -> Fraction | None:
        """Exact support key of point c: s_c ("rat") or e^{s_c} ("exp"); None in ball mode."""
        if self.keys is not None:
            return self.keys[c]
        if self.order == "ball":
            return None
        if self.r == 0:
            return Fraction(0) if self.order == "rat" else Fraction(1)
        k = 2 * c - self.m[0]
        v = self.eps[0]
        return k * v.rational if self.order == "rat" else v.exp_rational**k

    def _cmp(self, c: int, eps: _Real, st: dict[str, Any]) -> int:
        """+1 if s_c > eps certainly, -1 if s_c <= eps certainly, 0 if undecided (balls overlap).

        Exact where both sides are exact of the same kind (rationals, or rational exponentials).
        """
        key = self.s_key(c)
        if key is not None:
            if self.order == "rat" and eps.rational is not None:
                return 1 if key > eps.rational else -1
            if self.order == "exp" and eps.exp_rational is not None:
                return 1 if key > eps.exp_rational else -1
        s, e = self.s_ball(c, st), st["eps_ball"]
        if e < s:
            return 1
        if e >= s:
            return -1
        return 0

    def split(self, eps: _Real, st: dict[str, Any]) -> tuple[int, int]:
        """``(k1, k2)``: s_c <= eps certainly for c < k1, undecided for k1 <= c < k2, s_c > eps
        certainly for c >= k2 (binary searches; the three groups are contiguous because the
        support is certainly sorted)."""
        st["eps_ball"] = eps.ball()
        lo, hi = 0, self.N
        while lo < hi:
            mid = (lo + hi) // 2
            if self._cmp(mid, eps, st) < 0:
                lo = mid + 1
            else:
                hi = mid
        k1, hi = lo, self.N
        while lo < hi:
            mid = (lo + hi) // 2
            if self._cmp(mid, eps, st) > 0:
                hi = mid
            else:
                lo = mid + 1
        return k1, lo

    def first_above(self, eps: _Real, st: dict[str, Any]) -> int:
        """Smallest class index c with s_c > eps (N if none); UndecidableError if undecided."""
        k1, k2 = self.split(eps, st)
        if k1 != k2:
            raise UndecidableError(
                f"cannot decide whether the support point {self.s_ball(k1, st).str(10)} exceeds "
                f"{eps.label} at {ctx.prec} bits"
            )
        return k2

    # -- profile -----------------------------------------------------------------------------
    def smax(self) -> arb | Fraction:
        """Largest support value sum_i m_i eps_i (delta = 0 from there on)."""
        st = self._state()
        if self.order == "rat":
            return sum((m * v.rational for v, m in zip(self.eps, self.m, strict=True)), Fraction(0))
        return self.s_ball(self.N - 1, st)

    def delta_at(self, eps: _Real) -> Fraction | arb:
        r"""delta(eps) = Q_k (-expm1(eps - s_k)) + A_{k+1} - e^eps B_{k+1} (exact when possible).

        ``k`` is the first support point certainly above eps. A support point that cannot be
        placed against eps at this precision (a tie such as eps = 20 * sqrt(1/100)) contributes
        its term Q_c (1 - e^{eps - s_c})_+ with the positive part taken on the ball: valid on
        either side of the tie, so no side is guessed, and the ball shrinks as precision rises.
        """
        st = self._state()
        k1, k = self.split(eps, st)
        if k1 == self.N:
            return Fraction(0)
        if self.exact_ok and eps.exp_rational is not None and k1 == k:
            a, b = self._tails(k, st)
            return a - eps.exp_rational * b
        e = st["eps_ball"]
        total = arb(0)
        for c in range(k1, k):  # undecided support points (usually none)
            total += self._qmass(c, st) * (-(e - self.s_ball(c, st)).expm1()).nonnegative_part()
        if k < self.N:
            a1, b1 = self._tails(k + 1, st)
            head = self._qmass(k, st) * (-(e - self.s_ball(k, st)).expm1())
            total += head + _ball(a1) - e.exp() * _ball(b1)
        return total

    def delta_at_support(self, c: int, st: dict[str, Any]) -> Fraction | arb:
        """delta(s_c) = A_{c+1} - e^{s_c} B_{c+1}."""
        a1, b1 = self._tails(c + 1, st)
        if self.exact_ok:
            return a1 - self.s_key(c) * b1
        return _ball(a1) - self.s_ball(c, st).exp() * _ball(b1)

    def invert(self, tau: Fraction | arb, rel_width: float) -> arb:
        r"""eps* = log((A_c - tau)/B_c) on the certified segment (s_{c-1}, s_c]."""
        st = self._state()
        c0 = self.first_above(_Real(0, "0"), st)
        # smallest c in [c0, N-1] with delta(s_c) <= tau; delta(s_{N-1}) = 0 < tau
        lo, hi = c0, self.N - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if not _lt(tau, self.delta_at_support(mid, st)):  # delta(s_mid) <= tau
                hi = mid
            else:
                lo = mid + 1
        c = lo
        a, b = self._tails(c, st)
        if isinstance(a, Fraction) and isinstance(b, Fraction) and isinstance(tau, Fraction):
            ball = _arb_q((a - tau) / b).log()
        else:
            ball = ((_ball(a) - _ball(tau)) / _ball(b)).log()
        seg_lo = arb(0) if c == c0 else self.s_ball(c - 1, st)
        seg = seg_lo.union(self.s_ball(c, st))
        return ball.intersection(seg) if ball.overlaps(seg) else ball


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------


def _profile(comp: ExactComposition) -> _GaussianProfile | _PureProfile:
    if comp.gaussian:
        return _GaussianProfile(comp.gaussian)
    return _PureProfile(comp.pure)


def _rational_result(
    prof: _GaussianProfile | _PureProfile, dpart: _DeltaPart, eps: _Real
) -> Fraction | None:
    if not isinstance(prof, _PureProfile) or dpart.exact is None:
        return None
    if not (prof.exact_ok and eps.exp_rational is not None):
        return None
    with workprec(DEFAULT_PRECISION):
        v = prof.delta_at(eps)
    return _combine(dpart.exact, v) if isinstance(v, Fraction) else None


def _check_eps(e: _Real) -> None:
    with workprec(DEFAULT_PRECISION):
        try:
            s = e.sign()
        except UndecidableError:
            s = 0  # a ball around 0: the profile formula is valid for any real eps
    if s < 0:
        raise ValueError(f"eps must be >= 0, got {e.label}")


def exact_delta_rational(composition: object, eps: RealLike) -> Fraction:
    r"""delta(eps) as an exact rational, for pure-DP compositions with rational e^{eps0}.

    Available when every eps0_i is a :class:`RationalExp` (``t_i`` rational), ``e^eps`` is
    rational (``eps`` a :class:`RationalExp` or 0) and the delta parts are rational: then
    :math:`\delta(\varepsilon) = \sum_{c:\,e^{s_c} > e^\varepsilon} Q_c (1 - e^\varepsilon /
    e^{s_c})` is a finite sum of rationals (KOV Thm 3.3; GDP Eq. 13).

    Raises:
        ValueError: if the answer is not an exact rational of this kind (or too large).
    """
    comp = exact_composition(composition)
    e = _as_real(eps, "eps")
    _check_eps(e)
    prof = _profile(comp)
    val = _rational_result(prof, _DeltaPart(comp.delta_parts), e)
    if val is None:
        raise ValueError(
            "delta is an exact rational only for pure-DP steps with eps0 = RationalExp(t) "
            "(within the size budget), eps = RationalExp(s) or 0, and rational delta parts"
        )
    return val


def exact_delta_bound(
    composition: object, eps: RealLike, *, rel_width: float = _DEFAULT_REL_WIDTH
) -> Bound:
    r"""Certified enclosure of the exact delta(eps) of a Gaussian or pure/ApproxDP composition.

    Gaussian steps: :math:`\delta_\mu(\varepsilon)` with :math:`\mu^2 = \sum m_i\mu_i^2`
    (GDP Cor. 2.13, Cor. 3.3). Pure-DP steps: the KOV binomial sum (Thm 3.3) for one eps0, exact
    enumeration for several (Murtagh-Vadhan 2016). Delta parts enter by GDP Eq. 13,
    :math:`d + (1-d)\delta(\varepsilon)`.

    Args:
        composition: An :class:`ExactComposition` or anything ``numeric.compose`` accepts.
        eps: eps >= 0 as an exact real (float = its exact binary value, int, Fraction, decimal
            ``str``, :class:`RationalExp`, :class:`ArbReal` or an ``arb`` ball).
        rel_width: Target relative width of the enclosure (the precision is raised until met;
            exact rational answers are returned to this width, with the exact value in
            ``inputs["exact_value"]`` when it has at most 2000 characters).

    Returns:
        A ``Bound`` with ``quantity="delta"`` and method ``exact-gdp``, ``exact-binomial`` or
        ``exact-enumeration``; ``vacuous`` if the upper end is >= 1.

    Raises:
        ValueError: for compositions without an exact answer or invalid inputs.
        UndecidableError: if the support of a heterogeneous pure-DP composition cannot be
            ordered at the precision cap (equal eps_i given as distinct ``ArbReal`` objects). An
            eps that cannot be placed against a support point (e.g. exactly on an irrational
            one) is not an error: that term enters as Q_c (1 - e^{eps - s_c})_+ on the ball.
    """
    comp = exact_composition(composition)
    e = _as_real(eps, "eps")
    _check_eps(e)
    bits = _rel_bits(rel_width)
    prof = _profile(comp)
    dpart = _DeltaPart(comp.delta_parts)
    inputs: dict[str, Any] = {
        "eps": e.label,
        "composition": comp.describe(),
        "family": comp.family,
        "delta_part": dpart.label(),
    }
    start = max(DEFAULT_PRECISION, bits + 32)
    exact = _rational_result(prof, dpart, e)
    warnings: list[str] = []
    if exact is not None:
        if _short(exact, _MAX_EXACT_CHARS):
            inputs["exact_value"] = str(exact)
        ball, prec = adaptive(lambda: _arb_q(exact), rel_bits=bits, start=start)
    else:
        fixed = e.fixed or any(v.fixed for v, _ in comp.gaussian + comp.pure)
        state: dict[str, Any] = {"last": None}

        def compute() -> arb:
            return _ball(_combine(dpart.value(), prof.delta_at(e)))

        def accept(x: arb) -> bool:
            if x.is_finite() and (x.is_zero() or x.rel_accuracy_bits() >= bits):
                return True
            acc = x.rel_accuracy_bits() if x.is_finite() else -(10**9)
            if fixed and state["last"] is not None and acc <= state["last"] + 4:
                warnings.append("accuracy limited by a fixed arb input ball")
                return True
            state["last"] = acc
            return False

        ball, prec = adaptive(compute, rel_bits=bits, start=start, accept=accept)
    with workprec(prec):  # endpoints() rounds lower()/upper() at the current precision
        lo, hi = endpoints(ball)
    # delta is a probability difference in [0, 1]: clip the exact ends
    if lo.to_mpf() < 0:
        lo = Endpoint(0, 0)
    if hi.to_mpf() > 1:
        hi = Endpoint(1, 0)
    return Bound(
        "delta", lo, hi, comp.method, comp.method, prec,
        assumptions=comp.assumptions(), warnings=tuple(warnings), inputs=inputs,
    )


def exact_epsilon_bound(
    composition: object, delta: RealLike, *, rel_width: float = _DEFAULT_REL_WIDTH
) -> Bound:
    r"""Certified enclosure of eps(delta) = inf{eps >= 0 : delta(eps) <= delta}, exact families.

    The returned ``[lo, hi]`` satisfies :math:`\delta(lo) > \delta` and
    :math:`\delta(hi) \le \delta` (non-increasing profile), with ``hi - lo <= rel_width * lo``.
    Pure DP: the active lattice segment is found by certified comparisons and inverted in closed
    form; Gaussian: certified bisection (Newton-accelerated). With delta parts the target is
    :math:`(\delta - d)/(1 - d)` (GDP Eq. 13); if :math:`\delta < d`, or :math:`\delta = d` for
    the Gaussian family, no finite eps exists and both ends are ``+inf`` (``vacuous``); for pure
    DP :math:`\delta = d` gives :math:`\varepsilon = \sum_i m_i\varepsilon_i`.

    Args:
        composition: An :class:`ExactComposition` or anything ``numeric.compose`` accepts.
        delta: Target delta in (0, 1) as an exact real (``"1e-3"`` or ``Fraction(1, 1000)`` is
            exactly 1/1000; the float ``1e-3`` is its binary value).
        rel_width: Target relative width ``(hi - lo) / lo``.

    Returns:
        A ``Bound`` with ``quantity="epsilon"``.

    Raises:
        ValueError: for compositions without an exact answer or a delta outside (0, 1).
        UndecidableError: if a comparison cannot be settled at the precision cap (e.g. delta
            exactly at a kink of an irrational lattice).
    """
    comp = exact_composition(composition)
    dl = _as_real(delta, "delta")
    with workprec(DEFAULT_PRECISION):
        b = dl.ball()
        if not (b > 0 and b < 1):
            raise ValueError(f"delta must lie in (0, 1), got {dl.label}")
    bits = _rel_bits(rel_width)
    prof = _profile(comp)
    dpart = _DeltaPart(comp.delta_parts)
    inputs: dict[str, Any] = {
        "delta": dl.label,
        "composition": comp.describe(),
        "family": comp.family,
        "delta_part": dpart.label(),
    }
    state: dict[str, Any] = {"kind": "finite"}

    def compute() -> arb:
        d = dpart.value()
        dv: Fraction | arb = dl.rational if dl.rational is not None else dl.ball()
        if isinstance(d, Fraction) and isinstance(dv, Fraction):
            tau: Fraction | arb = (dv - d) / (1 - d)
        else:
            tau = (_ball(dv) - _ball(d)) / (1 - _ball(d))
        tau_zero = (isinstance(tau, Fraction) and tau == 0) or (
            isinstance(tau, arb) and tau.is_zero()
        )
        if tau_zero:
            smax = prof.smax()
            if smax is None:
                state["kind"] = "infinite"
                return arb(0)
            state["kind"] = "smax"
            return _ball(smax)
        if not _lt(Fraction(0), tau):  # tau <= 0: infeasible
            state["kind"] = "infinite"
            return arb(0)
        if not _lt(tau, prof.delta_at(_Real(0, "0"))):  # delta(0) <= tau
            state["kind"] = "zero"
            return arb(0)
        state["kind"] = "finite"
        return prof.invert(tau, rel_width)

    def accept(x: arb) -> bool:
        if state["kind"] != "finite":
            return True
        return x.is_finite() and x.rel_accuracy_bits() >= bits

    start = max(DEFAULT_PRECISION, bits + 40)
    ball, prec = adaptive(compute, rel_bits=bits, start=start, accept=accept)
    kw = {"assumptions": comp.assumptions(), "inputs": inputs}
    if state["kind"] == "infinite":
        inf = Endpoint(inf=1)
        return Bound(
            "epsilon", inf, inf, comp.method, comp.method, prec,
            warnings=(
                f"delta = {dl.label} is not above what the delta part d = {dpart.label()} "
                "allows: no finite epsilon",
            ),
            **kw,
        )
    if state["kind"] == "zero":
        ball = arb(0)
    with workprec(prec):  # endpoints() rounds at the current precision: stay at ``prec``
        lo, hi = endpoints(ball)
    if lo.to_mpf() < 0:  # eps(delta) >= 0 by definition
        lo = Endpoint(0, 0)
    return Bound("epsilon", lo, hi, comp.method, comp.method, prec, **kw)
