r"""The mechanism contract, PLLR cumulants, and the mechanism registry.

A mechanism is a *dominating pair* (P, Q) (docs/math.md section 1; Zhu, Dong, Wang, *Optimal
Accounting of Differential Privacy via Characteristic Function*, AISTATS 2022). Its privacy-loss
log-likelihood ratio is L = log q/p; X = L under P, Y = L under Q. Identities that every pair
satisfies and that the contract tests check: K_X(t) = K_Y(t - 1), K_X(1) = 0, K_Y(-1) = 0,
kappa_1(X) = -KL(P||Q) <= 0 <= KL(Q||P) = kappa_1(Y).

The swapped pair (Q, P) has PLLR -L, so its X is -Y and its Y is -X: kappa_k(X') = (-1)^k
kappa_k(Y) and kappa_k(Y') = (-1)^k kappa_k(X). Symmetric pairs (Y =d -X) need one direction only.

Adding a mechanism touches its own module and one :func:`register_mechanism` call. Each
mechanism's knowledge lives in its own module: its cumulants, and -- optionally -- the
capabilities of the :class:`Mechanism` contract below (its CGF for the saddlepoint accountant,
the essential range of its PLLR, its Poisson sampling rate).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import ClassVar

import numpy as np

from ..errors import NotApplicable

__all__ = [
    "DIRECTION_PQ",
    "DIRECTION_QP",
    "MECHANISMS",
    "Mechanism",
    "MechanismEntry",
    "PLLRCumulants",
    "clear_cgf_caches",
    "register_cgf_cache",
    "register_mechanism",
]

DIRECTION_PQ = "P||Q"
DIRECTION_QP = "Q||P"


@dataclass(frozen=True)
class PLLRCumulants:
    """Cumulants ``kappa_1..kappa_r`` of the PLLR under P (``x``) and under Q (``y``)."""

    x: tuple[float, ...]
    y: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.x) != len(self.y) or len(self.x) < 1:
            raise ValueError("x and y cumulants must be non-empty and of equal length")
        if not all(np.isfinite(self.x)) or not all(np.isfinite(self.y)):
            raise ValueError(f"cumulants must be finite, got x={self.x!r}, y={self.y!r}")

    @property
    def order(self) -> int:
        """Number of cumulants held."""
        return len(self.x)

    def swapped(self) -> PLLRCumulants:
        """Cumulants of the swapped pair (Q, P): X' = -Y, Y' = -X."""
        sign = [(-1.0) ** (k + 1) for k in range(self.order)]
        return PLLRCumulants(
            x=tuple(s * v for s, v in zip(sign, self.y, strict=True)),
            y=tuple(s * v for s, v in zip(sign, self.x, strict=True)),
        )

    def for_direction(self, direction: str) -> PLLRCumulants:
        """Cumulants of the pair taken in ``direction`` (``"P||Q"`` or ``"Q||P"``)."""
        if direction == DIRECTION_PQ:
            return self
        if direction == DIRECTION_QP:
            return self.swapped()
        raise ValueError(
            f"direction must be {DIRECTION_PQ!r} or {DIRECTION_QP!r}, got {direction!r}"
        )


def symmetric_cumulants(x: np.ndarray) -> PLLRCumulants:
    """Build cumulants of a symmetric pair (Y =d -X) from those of X."""
    x = np.asarray(x, dtype=float)
    sign = (-1.0) ** np.arange(1, len(x) + 1)
    return PLLRCumulants(x=tuple(x.tolist()), y=tuple((sign * x).tolist()))


@dataclass(frozen=True)
class Mechanism(ABC):
    r"""A dominating pair (P, Q) described by its PLLR law.

    Subclasses are frozen dataclasses validated in ``__post_init__``. Every mechanism has one
    keyword-only field, ``typed``: the exact decimals a user typed for its parameters
    (``(("eps", "0.1"),)``; recorded by the command line and spec files through
    :meth:`MechanismEntry.build`). Float methods use the binary64 fields; certified methods use
    :meth:`exact_value`, the typed rational where there is one (so ``--eps0 0.1`` certifies
    eps0 = 1/10, not the nearest double). ``typed`` takes part in equality and hashing, so
    caches never mix the two. Class attributes:

    * ``symmetric`` -- Y =d -X, so one pair order suffices;
    * ``lattice`` -- the PLLR has atoms (Edgeworth approximations ignore lattice effects);
    * ``max_order`` -- highest cumulant order available (None = any);
    * ``cgf_closed_form`` -- :meth:`cgf_batch` is a closed form, so new tilts are cheap (no
      quadrature; the saddlepoint accountant then evaluates a few extra tilts near its guess);
    * ``purely_atomic`` -- the PLLR is purely atomic (a two-point law: randomized response,
      ApproxDP), so the composed PLLR is a lattice the saddlepoint's smooth density ignores.

    The contract (every method below except :meth:`_cumulants` has a default; a capability
    that is absent raises :class:`~numeric.errors.NotApplicable`):

    * :meth:`pllr_cumulants` -- cumulants of X = L under P and Y = L under Q (required,
      through :meth:`_cumulants`);
    * :meth:`cgf_batch` -- the CGF :math:`K_Y(t) = \log E_Q e^{tY}` and its derivatives at a
      batch of tilts (the saddlepoint accountant needs it; default: NotApplicable);
    * :meth:`pllr_sup`, :meth:`pllr_inf` -- the essential supremum and infimum of L (default
      +inf, and -sup for symmetric pairs, else -inf);
    * :attr:`poisson_rate` -- the Poisson sampling rate (< 1) of a subsampled mechanism, else
      None (the saddlepoint's "few sampled steps" diagnostic);
    * :attr:`delta_part`, :meth:`exact_family`, :meth:`clt_mu_squared`, :meth:`describe`.
    """

    symmetric: ClassVar[bool] = True
    lattice: ClassVar[bool] = False
    max_order: ClassVar[int | None] = None
    cgf_closed_form: ClassVar[bool] = False
    purely_atomic: ClassVar[bool] = False
    typed: tuple[tuple[str, str], ...] = field(default=(), kw_only=True, repr=False)

    def exact_value(self, name: str) -> Fraction:
        """The exact value of parameter ``name``: the decimal typed for it, else its binary64.

        Args:
            name: A constructor argument (a dataclass field), e.g. ``"sigma"`` or ``"eps"``.

        Returns:
            A :class:`~fractions.Fraction` (exact).

        Raises:
            ValueError: if ``name`` is not a parameter, or the typed decimal does not round to
                the stored float (an inconsistent mechanism).
        """
        value = getattr(self, name, None)
        if name == "typed" or not isinstance(value, int | float):
            raise ValueError(f"{type(self).__name__} has no numeric parameter {name!r}")
        for key, text in self.typed:
            if key == name:
                exact = Fraction(Decimal(text))
                if float(exact) != float(value):
                    raise ValueError(
                        f"typed {name}={text} does not round to the stored {value!r}"
                    )
                return exact
        return Fraction(float(value))

    def with_typed(self, typed: Mapping[str, str]) -> Mechanism:
        """A copy recording the exact decimals ``typed`` (parameter name -> decimal string).

        Raises:
            ValueError: naming the parameter, if a decimal is malformed or does not round to
                the parameter's binary64 value.
        """
        out = []
        for key, text in sorted(typed.items()):
            try:
                exact = Decimal(str(text))
            except InvalidOperation:
                raise ValueError(f"{key} must be a decimal number, got {text!r}") from None
            value = getattr(self, key, None)
            if not isinstance(value, int | float) or not exact.is_finite():
                raise ValueError(f"{key} is not a finite numeric parameter of "
                                 f"{type(self).__name__}")
            if float(exact) != float(value):
                raise ValueError(f"{key}={text} does not round to {value!r}")
            if Fraction(exact) != Fraction(float(value)):  # exact binary64 values need no record
                out.append((key, str(exact)))
        return replace(self, typed=tuple(out))

    @abstractmethod
    def _cumulants(self, order: int) -> PLLRCumulants:
        """Cumulants of orders 1..order (order already validated)."""

    def pllr_cumulants(self, order: int) -> PLLRCumulants:
        """Cumulants ``kappa_1..kappa_order`` of X (under P) and Y (under Q).

        Args:
            order: Highest cumulant order, whole number >= 1.

        Returns:
            A :class:`PLLRCumulants`.

        Raises:
            ValueError: if ``order`` is invalid or above what the mechanism provides.
        """
        from .._validation import check_count

        order = check_count("order", order, minimum=1, maximum=64)
        if self.max_order is not None and order > self.max_order:
            raise ValueError(
                f"order must be <= {self.max_order} for {type(self).__name__}, got {order}"
            )
        return self._cumulants(order)

    def cgf_batch(self, t: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        r"""CGF :math:`K_Y(t) = \log E_Q e^{tY}` of one step's PLLR under Q, and its derivatives.

        For the mechanism's own (P, Q) order; the swapped pair's CGF is :math:`K_Y(-1 - t)`
        (:mod:`numeric.cgf`). The derivatives are the cumulants of the tilted law
        :math:`dQ_t = e^{tY - K_Y(t)} dQ` (Daniels, *Saddlepoint approximations in statistics*,
        Ann. Math. Statist. 25, 1954). Identities: K_Y(0) = K_Y(-1) = 0 (the latter is
        :math:`\log E_P 1`), :math:`K_Y'(0) = \kappa_1(Y)`, :math:`K_Y'(-1) = \kappa_1(X)`.

        Args:
            t: Tilts, a 1-D array of finite floats (any real t where K_Y is finite).
            n: Highest derivative, whole number >= 1.

        Returns:
            ``(K, D)``: K[i] = K_Y(t_i) and D[i, j - 1] = K_Y^{(j)}(t_i), j = 1..n.

        Raises:
            NotApplicable: if the mechanism has no CGF (the default): the saddlepoint method
                does not apply; use aea.
        """
        raise NotApplicable(
            f"{type(self).__name__} has no CGF; the saddlepoint method does not apply; use aea "
            "(method 'aea') for this mechanism"
        )

    @property
    def has_cgf(self) -> bool:
        """True when the class implements :meth:`cgf_batch` (overrides the default)."""
        return type(self).cgf_batch is not Mechanism.cgf_batch

    def pllr_sup(self) -> float:
        """Essential supremum of the PLLR L (delta(eps) = 0 for eps beyond m times it).

        Returns:
            ess sup L; +inf (the default) when L is unbounded above.
        """
        return math.inf

    def pllr_inf(self) -> float:
        """Essential infimum of the PLLR L (its negative bounds the swapped pair's PLLR).

        Returns:
            ess inf L; the default is ``-pllr_sup()`` for symmetric pairs (L =d -L under the
            swap), else -inf.
        """
        return -self.pllr_sup() if self.symmetric else -math.inf

    @property
    def poisson_rate(self) -> float | None:
        """Poisson sampling rate p < 1 of a Poisson-subsampled mechanism, else None.

        The saddlepoint accountant's "one big step" diagnostic counts the expected number of
        sampled steps sum(p m) of compositions made only of such mechanisms.
        """
        return None

    @property
    def delta_part(self) -> float:
        """The f_{0,delta} factor of the mechanism (GDP Eq. 11); 0 except for ApproxDP."""
        return 0.0

    def exact_delta_part(self) -> Fraction:
        """:attr:`delta_part` as an exact rational (the typed decimal where one was recorded)."""
        return Fraction(self.delta_part)

    def exact_family(self) -> tuple[str, float] | None:
        """Key of the exact-composition family this mechanism belongs to, or None.

        Returns ``(family, parameter)``: ``("gaussian", mu^2)`` composes by adding mu^2 (GDP
        Cor. 3.3); ``("pure", eps0)`` is the binomial (KOV) family, exact when every term shares
        eps0.
        """
        return None

    @property
    def has_exact_answer(self) -> bool:
        """True when compositions of this mechanism alone have a closed form (``exact`` method)."""
        return self.exact_family() is not None

    def clt_mu_squared(self) -> float:
        """Per-step contribution to mu^2 in the central-limit (GDP Thm 3.5/3.6) approximation.

        Default: Var_P(X), the limit of 2 KL when the per-step privacy loss is small. Mechanisms
        with a published limit theorem override it.
        """
        return float(self.pllr_cumulants(2).x[1])

    def describe(self) -> str:
        """Short human-readable description."""
        return repr(self)


@dataclass(frozen=True)
class MechanismEntry:
    """Registry entry: how to build a mechanism from CLI flags / spec keys."""

    name: str
    cls: type
    params: dict[str, str]  # spec/CLI key -> constructor argument
    required: tuple[str, ...]
    param_help: dict[str, str] = field(default_factory=dict)  # spec/CLI key -> help text
    examples: tuple[dict[str, float], ...] = ()  # representative parameters (contract tests)

    def build(self, values: dict[str, object]) -> Mechanism:
        """Construct the mechanism from spec/CLI values (keys as in ``params``).

        ``decimal.Decimal`` values (what the command line and spec files read) are passed to the
        constructor as their nearest binary64 and recorded exactly in ``typed``.
        """
        unknown = set(values) - set(self.params)
        if unknown:
            raise ValueError(
                f"unknown parameter(s) {sorted(unknown)} for mechanism {self.name!r}; "
                f"expected {sorted(self.params)}"
            )
        missing = [k for k in self.required if values.get(k) is None]
        if missing:
            flags = ", ".join(f"--{k.replace('_', '-')}" for k in missing)
            raise ValueError(f"mechanism {self.name!r} needs {flags}")
        kwargs = {self.params[k]: _as_number(v) for k, v in values.items() if v is not None}
        mech = self.cls(**kwargs)
        typed = {self.params[k]: str(v) for k, v in values.items() if isinstance(v, Decimal)}
        return mech.with_typed(typed) if typed else mech


def _as_number(value: object) -> object:
    return float(value) if isinstance(value, Decimal) else value


MECHANISMS: dict[str, MechanismEntry] = {}


def register_mechanism(
    name: str, params: dict[str, str], required: tuple[str, ...], *,
    help: Mapping[str, str] | None = None,
    examples: tuple[dict[str, float], ...] = (),
) -> Callable[[type], type]:
    """Class decorator registering a mechanism under ``name`` for the CLI and spec files.

    Args:
        name: The ``--mechanism`` / spec ``type`` name.
        params: Spec/CLI key -> constructor argument (``{"eps0": "eps"}``).
        required: Keys that must be given.
        help: Spec/CLI key -> one line of help for the command line.
        examples: Representative parameter sets (spec keys); the contract tests in
            ``tests/`` run every registered mechanism at each of them.

    Raises:
        ValueError: if ``name`` is taken or ``help``/``examples`` name unknown keys.
    """
    help_map = dict(help or {})
    unknown = set(help_map) - set(params) | {k for ex in examples for k in ex} - set(params)
    if unknown:
        raise ValueError(f"help/examples name unknown parameter(s) {sorted(unknown)}")

    def deco(cls: type) -> type:
        if name in MECHANISMS:
            raise ValueError(f"mechanism {name!r} is already registered")
        MECHANISMS[name] = MechanismEntry(name, cls, dict(params), tuple(required), help_map,
                                          tuple(dict(e) for e in examples))
        cls.registry_name = name
        return cls

    return deco


_CGF_CACHES: list[Callable[[], object]] = []


def register_cgf_cache(cache: Callable[..., object]) -> Callable[..., object]:
    """Decorator: register a mechanism module's CGF cache (any object with ``cache_clear()``,
    e.g. a :func:`functools.lru_cache` function) so that :func:`clear_cgf_caches` empties it.

    Args:
        cache: The cached object; returned unchanged.

    Returns:
        ``cache``.
    """
    _CGF_CACHES.append(cache.cache_clear)
    return cache


def clear_cgf_caches() -> None:
    """Empty every registered mechanism CGF cache (:func:`numeric.cgf.clear_cgf_cache` calls
    this; results never depend on these caches, only the cost of the next query does)."""
    for clear in _CGF_CACHES:
        clear()
