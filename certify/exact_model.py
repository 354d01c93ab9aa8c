r"""Exact reals and exact compositions: the inputs of the certified exact profiles.

:mod:`certify.exact` encloses the *exact* privacy profile of compositions that have one
(docs/math.md sections 1-2): Gaussian steps compose exactly to mu-GDP with :math:`\mu^2 = \sum_i m_i
\mu_i^2` (Dong, Roth, Su, *Gaussian Differential Privacy*, JRSS-B 2022, arXiv:1905.02383 = GDP, Cor.
3.3) and (eps0, delta)-DP steps are modelled by their worst case :math:`f_{\varepsilon_0,\delta} =
f_{\varepsilon_0,0}\otimes f_{0,\delta}` (GDP Eq. 11; Kairouz, Oh, Viswanath, ICML 2015 = KOV,
Thm 3.3). This module holds the model: an :class:`ExactComposition` of Gaussian ``mu_i``, pure
``eps0_i`` and delta parts ``delta_i``, each with its count, with every parameter an exact real.

Inputs are exact reals: a binary64 float means its exact dyadic value, ``int``/``Fraction``/decimal
``str`` are exact rationals, :class:`RationalExp` is :math:`\log t` for rational ``t`` and
:class:`ArbReal` is any real given by a function that encloses it at the current Arb precision.
:class:`ExactReal` is the normalized form used by the profiles (:mod:`certify.exact_profiles`).

A mechanism contributes its exact model through its ``exact_profile`` capability
(:mod:`certify.registry`); e.g. the Gaussian mechanism gives ``mu = sensitivity / sigma`` taken
exactly from the binary64 inputs.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from flint import arb, ctx, fmpq, fmpz

from numeric.errors import NotApplicable

from .engine import DEFAULT_PRECISION, UndecidableError, adaptive, certainly_less, workprec

__all__ = [
    "ArbReal",
    "ExactComposition",
    "ExactReal",
    "RationalExp",
    "RealLike",
    "arb_q",
    "as_ball",
    "as_real",
    "certainly_lt",
    "decide",
    "gaussian_dp",
    "is_short",
    "pure_dp",
    "to_fraction",
]

_MAX_COUNT = 10**15

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
        t = to_fraction(self.t, "RationalExp.t")
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
        f = to_fraction(q, "q")
        if f is None or f < 0:
            raise ValueError(f"ArbReal.sqrt needs a rational >= 0, got {q!r}")
        return cls(lambda: arb_q(f).sqrt(), f"sqrt({f})")

    def __str__(self) -> str:
        return self.label


RealLike = float | int | Fraction | str | RationalExp | ArbReal | arb
"""Exact-real inputs: floats are their binary64 values, ``str`` is read as an exact decimal."""


def to_fraction(x: object, name: str) -> Fraction | None:
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


def arb_q(f: Fraction) -> arb:
    """Ball of a rational at the current precision (exact when dyadic and short)."""
    if f.denominator == 1:
        return arb(fmpz(f.numerator))
    return arb(fmpq(f.numerator, f.denominator))


def is_short(f: Fraction, chars: int) -> bool:
    """True if ``str(f)`` has at most ``chars`` characters (checked without converting)."""
    bits = f.numerator.bit_length() + f.denominator.bit_length()
    return bits <= 3 * chars and len(str(f)) <= chars


_UNIQUE = itertools.count()
"""Keys of Arb-enclosed reals: each is its own term (a freed object's id() can be reused, which
once merged two different Gaussian mu of a composition into one)."""


class ExactReal:
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
            self.key = ("id", next(_UNIQUE))  # never merged: id(x) can be reused once x is freed
        elif isinstance(x, arb):
            if not x.is_finite():
                raise ValueError(f"{name} must be a finite ball, got {x}")
            self._compute = lambda: x
            self.fixed = True
            self.label = x.str(radius=True)
            self.key = ("id", next(_UNIQUE))
        else:
            f = to_fraction(x, name)
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
            return arb_q(self.rational)
        if self.exp_rational is not None:
            return arb_q(self.exp_rational).log()
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

    def square(self) -> ExactReal:
        """The real x^2 (exact for rationals)."""
        if self.rational is not None:
            return ExactReal(self.rational**2, self.label)
        return ExactReal(ArbReal(lambda: self.ball() ** 2, f"({self.label})^2"), self.label)

    def __repr__(self) -> str:
        return f"ExactReal({self.label})"


def as_real(x: object, name: str) -> ExactReal:
    return x if isinstance(x, ExactReal) else ExactReal(x, name)


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

def _merge(terms: Iterable[tuple[object, object]],
           name: str) -> tuple[tuple[ExactReal, int], ...]:
    merged: dict[tuple, tuple[ExactReal, int]] = {}
    for i, term in enumerate(terms):
        if not (isinstance(term, tuple) and len(term) == 2):
            raise ValueError(f"{name}[{i}] must be a (value, count) pair, got {term!r}")
        value = as_real(term[0], f"{name}[{i}] value")
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
    ``numeric`` composition with :func:`certify.exact.exact_composition`. Equal parameters are
    merged.

    Attributes:
        gaussian: ``(mu_i, m_i)`` pairs: m_i copies of mu_i-GDP (e.g. Gaussian noise, mu_i =
            sensitivity/sigma).
        pure: ``(eps0_i, m_i)`` pairs with eps0_i > 0: m_i copies of (eps0_i, 0)-DP.
        delta_parts: ``(delta_i, m_i)`` pairs with delta_i in [0, 1): the f_{0,delta_i} factors of
            (eps, delta)-DP steps (GDP Eq. 11).
        notes: Extra assumptions recorded by the builder (copied into every ``Bound``).

    With no terms at all the composition is the identity (delta(eps) = 0 for eps >= 0).

    Raises:
        ValueError: for invalid parameters.
        NotApplicable: for a mix of Gaussian and pure-DP steps (no exact answer).
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
                if decide(v.sign) <= 0:
                    raise ValueError(f"Gaussian mu must be > 0, got {v.label}")
            for v, _ in p:
                if decide(v.sign) <= 0:
                    raise ValueError(f"pure-DP eps0 must be > 0, got {v.label}")
            for v, _ in d:
                if v.rational is None:
                    raise ValueError(f"delta parts must be exact rationals, got {v.label}")
                if not 0 <= v.rational < 1:
                    raise ValueError(f"delta parts must lie in [0, 1), got {v.label}")
        d = tuple((v, c) for v, c in d if v.rational != 0)
        if g and p:
            raise NotApplicable(
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
    e = as_real(eps0, "eps0")
    pure = () if e.rational == 0 else ((e, count),)
    d = as_real(delta, "delta")
    parts = () if d.rational == 0 else ((d, count),)
    return ExactComposition(pure=pure, delta_parts=parts)


# ---------------------------------------------------------------------------------------------
# Precision helpers
# ---------------------------------------------------------------------------------------------


def decide(fn: Callable[[], int]) -> int:
    """Evaluate a certified integer-valued decision, raising precision while undecidable."""
    out, _ = adaptive(lambda: arb(fn()), start=ctx.prec, accept=lambda _x: True)
    return int(out.unique_fmpz())


def as_ball(x: Fraction | arb) -> arb:
    """The ball of an exact rational or a ball (unchanged)."""
    return arb_q(x) if isinstance(x, Fraction) else x


def certainly_lt(a: Fraction | arb, b: Fraction | arb) -> bool:
    """Certified a < b (exact for rationals); UndecidableError if the balls overlap."""
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a < b
    return certainly_less(as_ball(a), as_ball(b))

